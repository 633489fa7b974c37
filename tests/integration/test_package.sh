#!/bin/bash
# test_package.sh - the manual pages, `make install' and the Debian package.
#
#  - mandoc -T lint finds no warning or error in man/*, man(1) renders
#    them without a groff warning;
#  - the pages keep up with the programs: nlmd.conf(5) and init/nlmd.conf
#    have every key that `nlmd --print-config' prints, with the same
#    default; nlmd(8) every option of `nlmd --help', nlmctl(8) every
#    command and option of `nlmctl --help';
#  - `make install DESTDIR=scratch PREFIX=/usr' puts everything in place;
#  - `make deb' (dpkg-buildpackage -b on a copy of the tree) builds the
#    package without writing into the tree; lintian reports no error;
#  - dpkg installs it into a scratch root whose package database is a copy
#    of this machine's (so its dependencies are checked for real; the
#    maintainer scripts run with DPKG_ROOT: systemd-sysusers creates the
#    nlmd user in the scratch root's /etc/passwd), the installed nlmd
#    --print-config and nlmctl --help run, a remove keeps the conffile and
#    the store in /var/lib/nlmd, and a purge removes it all, the store too.
#
# Starts no daemon and binds no port: no namespaces.  Needs root (dpkg
# --root with maintainer scripts) and the packages `make deps' installs.
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" != 0 ]; then
	echo "SKIP: test_package needs root (dpkg --root runs maintainer scripts)"
	exit 77
fi
for t in mandoc man dpkg-buildpackage dh lintian fakeroot systemd-sysusers; do
	if ! command -v "$t" >/dev/null 2>&1; then
		echo "SKIP: $t is missing (make deps installs it)"
		exit 77
	fi
done

set -u
TOP=$ITEST_TOP
MAN=$TOP/man
NLMCTL=${NLMCTL:-$(dirname "$NLMD")/nlmctl}
ITEST_WORK=${ITEST_WORK:-$(mktemp -d /tmp/nlmd-pkg.XXXXXX)}
trap itest_cleanup EXIT
W=$ITEST_WORK

# ---- manual pages ---------------------------------------------------------

# mandoc's STYLE messages (a cross-reference to a page this machine does
# not have) depend on the machine: warnings and errors only.
check "mandoc -T lint: no warning or error in man/*" \
    mandoc -T lint -W warning "$MAN"/nlmd.8 "$MAN"/nlmd.conf.5 "$MAN"/nlmctl.8

man_clean() {
	local out
	out=$(MANWIDTH=80 LC_ALL=C.UTF-8 man --warnings -l "$1" 2>&1 >/dev/null)
	[ -z "$out" ] || { echo "$1: $out"; return 1; }
}
for p in nlmd.8 nlmd.conf.5 nlmctl.8; do
	check "man --warnings: $p renders without a warning" man_clean "$MAN/$p"
done

# Every key of `nlmd --print-config' (built-in defaults: an empty file and
# no nfs.conf) has an entry `.It Cm KEY No = DEFAULT' in nlmd.conf(5).  A
# line may end in a comment saying where the value came from.
conf_keys_documented() {
	local line key val want n=0 bad=0
	while IFS= read -r line; do
		case "$line" in '#'* | '['*) continue ;; esac
		line=${line%%  [#]*}
		case "$line" in *' = '*) ;; *) continue ;; esac
		key=${line%% = *}
		val=${line#* = }
		if [ -z "$val" ] || [ "$val" = '""' ]; then
			want=".It Cm $key No = Pq empty"
		elif [ "${val#/}" != "$val" ]; then
			want=".It Cm $key No = Pa $val"
		else
			want=".It Cm $key No = $val"
		fi
		n=$((n + 1))
		grep -qxF "$want" "$MAN/nlmd.conf.5" ||
		    { echo "nlmd.conf.5 lacks: $want"; bad=1; }
	done < <(NLMD_NFS_CONF= "$NLMD" -c /dev/null --print-config)
	echo "$n keys"
	[ "$n" -gt 20 ] && [ $bad = 0 ]
}
check "nlmd.conf(5) documents every key with its default" conf_keys_documented

# The packaged /etc/nlmd/nlmd.conf lists every key, commented out, with
# its default.
conf_file_complete() {
	local line key bad=0
	while IFS= read -r line; do
		case "$line" in '#'* | '['*) continue ;; esac
		line=${line%%  [#]*}
		case "$line" in *' = '*) ;; *) continue ;; esac
		grep -qxF "# $line" "$TOP/init/nlmd.conf" ||
		    { echo "init/nlmd.conf lacks: # $line"; bad=1; }
	done < <(NLMD_NFS_CONF= "$NLMD" -c /dev/null --print-config)
	[ $bad = 0 ]
}
check "init/nlmd.conf lists every key with its default" conf_file_complete

# Every option `--help' lists (-X and --long) is in a list entry of the page:
# `.It ... Fl X' / `.It ... Fl -long'.
options_documented() {
	local page=$1 help=$2 o bad=0 n=0
	# "[-Fdh]" is -F, -d and -h.
	for o in $(grep -oE -- '(^|[ [,|])--?[A-Za-z][A-Za-z-]*' <<<"$help" |
	    sed -E 's/^[ [,|]//; /^-[A-Za-z]{2,}$/{ s/^-//; s/(.)/-\1\n/g; }' |
	    grep . | sort -u); do
		case "$o" in --KEY|--key) continue ;; esac
		grep -qE "^\.It .*Fl ${o#-}( |\$)" "$page" ||
		    { echo "$(basename "$page") lacks option $o"; bad=1; }
		n=$((n + 1))
	done
	# Some options at all: an empty help passed before.
	[ $n -gt 0 ] || { echo "no option found in the help"; bad=1; }
	[ $bad = 0 ]
}
NLMD_HELP=$("$NLMD" --help | sed '/^Every setting/,$d')
# Help comes whatever the configuration files say (before, a broken or
# missing -c file made `nlmd --help' exit 2 with the file's error).
printf '[nlmd\n' >"$W/broken.conf"
check "nlmd --help with a broken configuration file: usage, exit 0" \
    sh -c "'$NLMD' -c '$W/broken.conf' --help | grep -q '^usage: nlmd'"
check "nlmd(8) documents every option of nlmd --help" \
    options_documented "$MAN/nlmd.8" "$NLMD_HELP"

check "nlmctl is built beside nlmd" test -x "$NLMCTL"
NLMCTL_HELP=$("$NLMCTL" --help 2>&1)
check "nlmctl --help exits 0" "$NLMCTL" --help
check "nlmctl(8) documents every option of nlmctl --help" \
    options_documented "$MAN/nlmctl.8" "$NLMCTL_HELP"
ctl_commands_documented() {
	local c bad=0
	for c in status release grace metrics; do
		grep -qw "$c" <<<"$NLMCTL_HELP" ||
		    { echo "nlmctl --help lacks $c"; bad=1; }
		grep -qE "^\.(It )?Cm $c" "$MAN/nlmctl.8" ||
		    { echo "nlmctl.8 lacks $c"; bad=1; }
	done
	[ $bad = 0 ]
}
check "nlmctl(8) and --help name every command" ctl_commands_documented

# ---- make install ---------------------------------------------------------

check "make install DESTDIR=... PREFIX=/usr" \
    make -s -C "$TOP" install DESTDIR="$W/inst" PREFIX=/usr
installed() {
	local f bad=0
	for f in usr/sbin/nlmd usr/lib/systemd/system/nlmd.service \
	    usr/lib/sysusers.d/nlmd.conf etc/nlmd/nlmd.conf \
	    usr/share/man/man8/nlmd.8 usr/share/man/man8/nlmctl.8 \
	    usr/share/man/man5/nlmd.conf.5 usr/share/doc/nlmd/README.md \
	    usr/bin/nlmctl; do
		[ -s "$1/$f" ] || { echo "missing: $f"; bad=1; }
	done
	[ $bad = 0 ]
}
check "make install: binaries, unit, sysusers, config, man pages, README" \
    installed "$W/inst"
check "make install: the unit's paths follow PREFIX" bash -c \
    "grep -q '^ExecStart=/usr/sbin/nlmd ' '$W/inst/usr/lib/systemd/system/nlmd.service' &&
     ! grep -q /usr/local '$W/inst/usr/lib/systemd/system/nlmd.service'"
check "make install: the sysusers entry creates user nlmd" \
    grep -qE '^u[[:space:]]+nlmd[[:space:]]' "$W/inst/usr/lib/sysusers.d/nlmd.conf"

# ---- the Debian package ---------------------------------------------------

# Every path under the tree but build/ and .git/, with its size and
# modification time: a file written, added or touched shows; so does one
# removed.  Not `git status`, which outside a git checkout (a tarball)
# printed nothing before and after, and so passed whatever make deb did.
tree_state() {
	find "$TOP" \( -path "$TOP/build" -o -path "$TOP/.git" \) -prune -o \
	    -printf '%P %s %T@\n' | LC_ALL=C sort
}
tree_state >"$W/tree.before"
t0=$SECONDS
check "make deb: dpkg-buildpackage -b -us -uc" bash -c \
    "make -C '$TOP' deb DEBDIR='$W/deb' >'$W/deb.log' 2>&1 || { tail -30 '$W/deb.log'; exit 1; }"
echo "(package built in $((SECONDS - t0)) s)"
tree_unchanged() {
	tree_state | diff "$W/tree.before" -
}
check "make deb wrote nothing into the source tree" tree_unchanged
DEB=$(ls "$W"/deb/nlmd_*.deb 2>/dev/null | head -1)
check "nlmd_*.deb exists" test -n "$DEB"
[ -n "$DEB" ] || itest_finish

lintian_clean() {
	lintian -I --pedantic "$W"/deb/nlmd_*.changes >"$W/lintian.log" 2>&1
	cat "$W/lintian.log"
	! grep -q '^E: ' "$W/lintian.log"
}
check "lintian: no error" lintian_clean
grep -E '^[EW]: ' "$W/lintian.log" | sed 's/^/  lintian: /'

deb_has() {
	local list f bad=0
	list=$(dpkg-deb -c "$DEB" | awk '{ print $6 }')
	for f in ./usr/sbin/nlmd ./lib/systemd/system/nlmd.service \
	    ./usr/lib/sysusers.d/nlmd.conf ./etc/nlmd/nlmd.conf \
	    ./usr/share/man/man8/nlmd.8.gz ./usr/share/man/man8/nlmctl.8.gz \
	    ./usr/share/man/man5/nlmd.conf.5.gz ./usr/share/doc/nlmd/README.md \
	    ./usr/share/doc/nlmd/copyright ./usr/bin/nlmctl; do
		grep -qxF "$f" <<<"$list" || { echo "not in the package: $f"; bad=1; }
	done
	[ $bad = 0 ]
}
check "the package holds binaries, unit, sysusers, config, man pages, README, copyright" \
    deb_has
check "/etc/nlmd/nlmd.conf is a conffile" bash -c \
    "dpkg-deb -I '$DEB' conffiles | grep -qx /etc/nlmd/nlmd.conf"
# A unit named in Requires= that is not installed fails the start ("Unit
# ... not found"): its package must be a dependency, not a recommendation
# (apt --no-install-recommends, dpkg -i install none).
requires_depended() {
	local deps u pkg bad=0
	deps=$(dpkg-deb -f "$DEB" Depends | tr ',|' '\n\n' |
	    sed -E 's/^ *([^ (]+).*/\1/')
	for u in $(sed -n 's/^Requires=//p' "$TOP/init/nlmd.service"); do
		pkg=$(dpkg -S "/lib/systemd/system/$u" 2>/dev/null |
		    cut -d: -f1 | head -1)
		[ -n "$pkg" ] || { echo "$u: no package here has it"; bad=1; continue; }
		echo "Requires=$u: package $pkg"
		grep -qxF "$pkg" <<<"$deps" ||
		    { echo "$pkg (for $u) is not in Depends: $deps"; bad=1; }
	done
	[ $bad = 0 ]
}
check "the unit's Requires= units come from packages in Depends" \
    requires_depended

# ---- the maintainer scripts on a host that runs systemd ------------------

# dpkg --root (below) sets DPKG_ROOT, under which the scripts leave the
# service alone.  Here they run as dpkg runs them on a real host: under a
# private /run that has /run/systemd/system, with systemctl,
# deb-systemd-invoke, deb-systemd-helper and systemd-sysusers replaced by
# stubs that only log their arguments (nothing on this machine changes).
MS=$W/maint
mkdir -p "$MS/ctl" "$MS/bin"
dpkg-deb -e "$DEB" "$MS/ctl"
for t in systemctl deb-systemd-invoke deb-systemd-helper systemd-sysusers; do
	printf '#!/bin/sh\necho "%s $*" >>"%s/calls"\n' "$t" "$MS" >"$MS/bin/$t"
	chmod 755 "$MS/bin/$t"
done
# maint_run SCRIPT ARGS... [-- SCRIPT ARGS...]: dpkg's calls, in order.
maint_run() {
	: >"$MS/calls"
	unshare --mount --propagation private sh -c '
	    mount -t tmpfs tmpfs /run && mkdir -p /run/systemd/system || exit 1
	    bin=$1; ctl=$2; shift 2
	    while [ $# -gt 0 ]; do
		s=$1; shift; args=""
		while [ $# -gt 0 ] && [ "$1" != -- ]; do
			args="$args $1"; shift
		done
		[ $# -gt 0 ] && shift
		[ -e "$ctl/$s" ] || continue
		PATH="$bin:$PATH" sh "$ctl/$s" $args || exit 1
	    done' maint "$MS/bin" "$MS/ctl" "$@"
}
# The service is restarted on the new binary when it ran (try-restart or
# restart), and never stopped without being started again.
upgrade_restarts() {
	local v
	v=$(dpkg-deb -f "$DEB" Version)
	maint_run prerm upgrade "$v" -- preinst upgrade "$v" -- \
	    postrm upgrade "$v" -- postinst configure "$v" || return 1
	cat "$MS/calls"
	awk '/^(deb-systemd-invoke|systemctl) .*stop .*nlmd\.service/ { down = 1 }
	    /^(deb-systemd-invoke|systemctl) .*(try-restart|restart|start) .*nlmd\.service/ {
		down = 0; up = 1 }
	    END { exit down || !up }' "$MS/calls"
}
check "upgrade: a running nlmd is restarted on the new binary, not left stopped" \
    upgrade_restarts
remove_stops() {
	maint_run prerm remove -- postrm remove || return 1
	cat "$MS/calls"
	grep -Eq '^(deb-systemd-invoke|systemctl) .*stop .*nlmd\.service' \
	    "$MS/calls"
}
check "remove: a running nlmd is stopped (its binary is going)" remove_stops

host_state() {
	grep -c '^nlmd:' /etc/passwd
	ls /var/lib/systemd/deb-systemd-helper-enabled 2>/dev/null | grep nlmd
}
host_before=$(host_state)

# A scratch root that believes it has what this machine has installed.
R=$W/root
mkdir -p "$R/var/lib/dpkg/info" "$R/var/lib/dpkg/updates"
cp /var/lib/dpkg/status "$R/var/lib/dpkg/status"
touch "$R/var/lib/dpkg/available"
dpkg_root() {
	dpkg --root="$R" --force-script-chrootless --log="$W/dpkg-root.log" \
	    "$@" >>"$W/dpkg-root.out" 2>&1 ||
	    { grep -v 'files list file' "$W/dpkg-root.out" | tail -20; return 1; }
}
check "dpkg -i into a scratch root (dependencies satisfied, scripts run)" \
    dpkg_root -i "$DEB"
check "dpkg: nlmd is installed there" bash -c \
    "dpkg --root='$R' -s nlmd 2>/dev/null | grep -qx 'Status: install ok installed'"
check "postinst: systemd-sysusers created the nlmd system user" \
    grep -qE '^nlmd:x:[0-9]+:[0-9]+:.*:/usr/sbin/nologin$' "$R/etc/passwd"
check "postinst: the service is not enabled" \
    test ! -e "$R/etc/systemd/system/multi-user.target.wants/nlmd.service"
check "installed nlmd --print-config runs (default state directory)" bash -c \
    "'$R/usr/sbin/nlmd' -c '$R/etc/nlmd/nlmd.conf' --print-config |
     grep -q '^state-directory = /var/lib/nlmd'"
check "installed nlmd --help runs" "$R/usr/sbin/nlmd" --help
check "installed nlmctl --help runs" "$R/usr/bin/nlmctl" --help
check "installed nlmctl --version is the package's version" bash -c \
    "test \"\$('$R/usr/bin/nlmctl' --version)\" = \"nlmctl \$(dpkg-deb -f '$DEB' Version)\""
check "installed nlmctl without nlmd: cannot reach it, exit status 1" bash -c \
    "'$R/usr/bin/nlmctl' -s '$W/no.sock' status; test \$? = 1"
check "installed man pages render" bash -c \
    "man -l '$R/usr/share/man/man8/nlmd.8.gz' | grep -q 'NLMD(8)' &&
     man -l '$R/usr/share/man/man5/nlmd.conf.5.gz' | grep -q 'NLMD.CONF(5)'"
# The store systemd would have made (StateDirectory=): a remove keeps it
# with the conffile, a purge removes both.
mkdir -m 700 "$R/var/lib/nlmd"
echo store >"$R/var/lib/nlmd/meta.db"
check "dpkg --remove keeps the conffile and the store in /var/lib/nlmd" bash -c \
    "dpkg --root='$R' --force-script-chrootless --log=/dev/null --remove nlmd >/dev/null 2>&1 &&
     test ! -e '$R/usr/sbin/nlmd' && test -e '$R/etc/nlmd/nlmd.conf' &&
     test -e '$R/var/lib/nlmd/meta.db'"
check "dpkg --purge removes the package, its conffile and /var/lib/nlmd" bash -c \
    "dpkg --root='$R' --force-script-chrootless --log=/dev/null --purge nlmd >/dev/null 2>&1 &&
     test ! -e '$R/usr/sbin/nlmd' && test ! -e '$R/etc/nlmd/nlmd.conf' &&
     test ! -e '$R/var/lib/nlmd'"
check "this machine's users and unit state were not touched" \
    test "$host_before" = "$(host_state)"
itest_finish
