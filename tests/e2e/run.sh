#!/bin/bash
# run.sh - the Linux-client end-to-end test: a Debian kernel booted under
# qemu (TCG) mounts NFSv3 from NFS-Ganesha and takes fcntl locks, which
# travel as NLMv4 to the lock server under test.  See tests/e2e/README.md.
#
# HOW IT WORKS
#   host (outer part)       builds the artefacts into $E2E_WORK (kernel
#                           fetched once with apt-get download and cached,
#                           locktest, fake-nlm, initramfs), creates a private
#                           network namespace and runs the inner part in it
#                           under a timeout; tears it all down on any exit.
#   namespace (inner part)  run.sh __inside, in a private mount namespace
#                           with tmpfs over /run and /var/lib/nfs: tap device
#                           10.77.0.1/24 and fd77::1/64, tshark, rpcbind, the
#                           lock server, Ganesha; then one qemu boot per boot
#                           mode (E2E_MODES), then the capture analysis.
#   guest                   guest-init.sh as /init: 10.77.0.2 (and fd77::2),
#                           rpcbind, rpc.statd, two mounts, locktest,
#                           poweroff.
#   IPv6                    mode locks-v6: the same boot, mounting
#                           [fd77::1] with proto=tcp6, so that the kernel's
#                           NLM calls and nlmd's callbacks go over IPv6;
#                           a few scenarios (E2E_SCENARIOS_V6).
#   server restarts         modes restart-kill and restart-term: while the
#                           guest holds locks and waits, the host stops the
#                           lock server (SIGKILL, or SIGTERM and wait) and
#                           starts it again on the same state directory,
#                           twice per boot; the capture and nlmd's log then
#                           show SM_NOTIFY, the reclaims and the end of grace.
# Every check is one line "PASS|FAIL <name>: <detail>" in $E2E_WORK/checks
# (a boot that cannot run here: "SKIP <mode>: <why>"); the last line
# printed is "e2e: N passed, M failed" (", K skipped" when K > 0).
#
# Exit status: 0 all passed, 1 a check failed, 77 skipped (cannot run here:
# not root, no qemu, no network namespace...).
#
# Environment (all optional):
#   E2E_SERVER     nlmd (default) | ganesha-nlm | fake
#   NLMD           nlmd binary (default build/debug/nlmd)
#   NLMD_ARGS      extra nlmd arguments (e.g. to switch callbacks off)
#   E2E_NLMD_DEBUG 1 (default): run nlmd with -d
#   E2E_MODES      boot modes, in order (default "locks locks-v6
#                  restart-kill restart-term"; "locks" with ganesha-nlm)
#   E2E_SCENARIOS  locktest scenarios for the locks boot (default "all")
#   E2E_SCENARIOS_V6  those of the locks-v6 boot (default "grant conflict
#                  getlk wakeup")
#   E2E_WORK       work directory (default build/e2e); kept after the run
#   E2E_CACHE      kernel cache (default $E2E_WORK/cache)
#   E2E_KMETA      kernel meta package (default linux-image-amd64)
#   E2E_GRACE      nlmd's grace-period in the test (default 40 s)
#   E2E_TIMEOUT    limit for the namespace part in seconds (default: 170,
#                  plus the boot limit + 20 per restart mode and for
#                  locks-v6)
#   E2E_BOOT_TIMEOUT  limit for one guest boot (default 150; restart
#                  modes add 2 * (E2E_GRACE + 30) + 60)
#   E2E_SMP, E2E_MEM  guest CPUs (1) and MiB (512)
set -u
umask 022

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
SELF="$HERE/run.sh"

: "${E2E_SERVER:=nlmd}"
: "${NLMD:=$REPO/build/debug/nlmd}"
: "${NLMD_ARGS:=}"
: "${E2E_NLMD_DEBUG:=1}"
: "${E2E_GRACE:=40}"
if [ -z "${E2E_MODES:-}" ]; then
	case $E2E_SERVER in
	# Ganesha's own NLM sends no callback to an IPv6 client (README).
	ganesha-nlm) E2E_MODES=locks ;;
	*) E2E_MODES="locks locks-v6 restart-kill restart-term" ;;
	esac
fi
: "${E2E_SCENARIOS:=all}"
: "${E2E_SCENARIOS_V6:=grant conflict getlk wakeup}"
: "${E2E_WORK:=$REPO/build/e2e}"
: "${E2E_CACHE:=$E2E_WORK/cache}"
: "${E2E_KMETA:=linux-image-amd64}"
: "${E2E_BOOT_TIMEOUT:=150}"
if [ -z "${E2E_TIMEOUT:-}" ]; then
	E2E_TIMEOUT=170
	for m in $E2E_MODES; do
		case $m in
		restart-*) E2E_TIMEOUT=$((E2E_TIMEOUT + E2E_BOOT_TIMEOUT + 2 * (E2E_GRACE + 30) + 80)) ;;
		locks-v6) E2E_TIMEOUT=$((E2E_TIMEOUT + E2E_BOOT_TIMEOUT + 20)) ;;
		esac
	done
fi
: "${E2E_SMP:=1}"
: "${E2E_MEM:=512}"
: "${E2E_T0:=$(date +%s%N)}"
export E2E_SERVER NLMD NLMD_ARGS E2E_NLMD_DEBUG E2E_MODES E2E_SCENARIOS \
    E2E_SCENARIOS_V6 \
    E2E_WORK E2E_CACHE E2E_KMETA E2E_TIMEOUT E2E_BOOT_TIMEOUT E2E_SMP \
    E2E_MEM E2E_T0 E2E_GRACE
# nlmd reads no nfs.conf here (not the host's /etc/nfs.conf) unless told.
export NLMD_NFS_CONF=${NLMD_NFS_CONF-}

# The private network: the host end of the tap, the guest, the ports.
SRV_IP=10.77.0.1
SRV_IP2=10.77.0.3	# the server's second address (restart-kill: mount O)
GUEST_IP=10.77.0.2
# IPv6 (mode locks-v6): a unique local prefix on the same tap.
SRV_IP6=fd77::1
GUEST_IP6=fd77::2
TAP=e2etap0
NLM_PORT=32803
NSM_PORT=32765
STATD_OUT_PORT=32766
MNT_PORT=20048
GUEST_LOCKD_PORT=4045
W=$E2E_WORK
KDIR=$E2E_CACHE/$E2E_KMETA
EXPORT=$W/export
CAP=$W/e2e.pcapng
# RPC on ephemeral ports needs the heuristics first; the DNS one then
# claims an RPC datagram whose xid happens to look like DNS flags, and so
# does RTCP's (its check is a version of 2 in the first byte's top bits
# and a packet type of 200-204 in the second: xids 0x80c8.... to
# 0xbfcc...., some 1 in 200; a fresh-clone CI run of 2026-11-28 failed
# wire/malformed on nlmd's GETPORT call to the guest, its reply and the
# GRANTED_MSG after it, all "Malformed Packet: RTCP").
TSHARK_OPTS=(-n -o tcp.try_heuristic_first:TRUE -o udp.try_heuristic_first:TRUE
    --disable-heuristic dns_udp --disable-heuristic rtcp_udp)

# ---- output -------------------------------------------------------------

elapsed() {
	local ms=$((($(date +%s%N) - E2E_T0) / 1000000))
	printf '%d.%d' $((ms / 1000)) $((ms % 1000 / 100))
}

say() {
	local line
	line="[$(elapsed)s] $*"
	printf '%s\n' "$line"
	[ -d "$W" ] && printf '%s\n' "$line" >>"$W/e2e.log"
	return 0
}

# check PASS|FAIL <name> <detail>: record and print one check.
check() {
	printf '%s %s: %s\n' "$1" "$2" "$3" >>"$W/checks"
	say "$1 $2: $3"
}

skip() {
	echo "SKIP: $*"
	echo "e2e: 0 passed, 0 failed (skipped)"
	exit 77
}

fatal() {
	say "ERROR: $*"
	echo "e2e: 0 passed, 1 failed"
	exit 1
}

# ---- preflight (host) ---------------------------------------------------

preflight() {
	local missing="" c pkg
	[ "$(id -u)" = 0 ] ||
	    skip "needs root (network namespace, tap device, mounts)"
	for c in qemu-system-x86_64:qemu-system-x86 tshark:tshark \
	    ganesha.nfsd:nfs-ganesha rpcbind:rpcbind rpcinfo:rpcbind \
	    rpc.statd:nfs-common mount.nfs:nfs-common sm-notify:nfs-common \
	    cpio:cpio xz:xz-utils ip:iproute2 gcc:gcc unshare:util-linux \
	    timeout:coreutils flock:util-linux modinfo:kmod readelf:binutils \
	    dpkg-deb:dpkg apt-get:apt pkg-config:pkg-config; do
		command -v "${c%%:*}" >/dev/null 2>&1 || missing="$missing ${c#*:}"
	done
	[ -e /usr/lib/x86_64-linux-gnu/ganesha/libfsalvfs.so ] ||
	    missing="$missing nfs-ganesha-vfs"
	if ! command -v busybox >/dev/null 2>&1 ||
	    ldd "$(command -v busybox)" >/dev/null 2>&1; then
		missing="$missing busybox-static"
	fi
	[ -e /usr/lib/x86_64-linux-gnu/libc.a ] || missing="$missing libc6-dev"
	pkg-config --exists libtirpc 2>/dev/null || missing="$missing libtirpc-dev"
	if [ -n "$missing" ]; then
		pkg=$(echo "$missing" | tr ' ' '\n' | sort -u | tr '\n' ' ')
		skip "missing packages:${pkg% } (run 'make deps' as root)"
	fi
	[ -c /dev/net/tun ] || skip "no /dev/net/tun (tap devices unavailable)"
	case $E2E_SERVER in
	nlmd)
		NLMD=$(realpath -q "$NLMD" || echo "$NLMD")
		export NLMD
		[ -x "$NLMD" ] || fatal "nlmd not found at $NLMD (run 'make' first, or set NLMD=)"
		;;
	ganesha-nlm | fake) ;;
	*) fatal "E2E_SERVER must be nlmd, ganesha-nlm or fake, not '$E2E_SERVER'" ;;
	esac
}

# ---- build (host) -------------------------------------------------------

# The kernel, its modules (set "nfs") and copy_dyn: vmlib.sh.
. "$HERE/vmlib.sh"

build_progs() {
	mkdir -p "$W/bin"
	gcc -static -O2 -std=c11 -Wall -Wextra -Werror -o "$W/bin/locktest" \
	    "$HERE/locktest.c" || return 1
	# shellcheck disable=SC2046 # pkg-config output is a list of flags
	gcc -O2 -std=c11 -Wall -Wextra -Werror $(pkg-config --cflags libtirpc) \
	    -o "$W/bin/fake-nlm" "$HERE/fake-nlm.c" \
	    $(pkg-config --libs libtirpc) || return 1
}

build_initramfs() {
	local r=$W/initramfs a uid_statd uid_rpc
	rm -rf "$r"
	vm_rootfs "$r" mnt/a mnt/b var/lib/nfs/sm var/lib/nfs/sm.bak root ||
	    return 1
	ln -s ../run "$r/var/run"	# not "run": that loops (pitfall 7)
	for a in /usr/sbin/rpcbind /usr/sbin/rpc.statd /usr/sbin/sm-notify \
	    /usr/sbin/mount.nfs; do
		copy_dyn "$r" "$a" /usr/sbin || return 1
	done
	copy_dyn "$r" /usr/bin/rpcinfo /usr/bin || return 1
	cp "$W/bin/locktest" "$r/usr/bin/"
	vm_copy_modules "$r" nfs || return 1
	cp "$HERE/guest-init.sh" "$r/init"
	chmod 755 "$r/init"
	for a in netconfig rpc services protocols bindresvport.blacklist; do
		[ -e "/etc/$a" ] && cp "/etc/$a" "$r/etc/"
	done
	uid_statd=$(id -u statd 2>/dev/null || echo 0)
	uid_rpc=$(id -u _rpc 2>/dev/null || echo 0)
	cat >"$r/etc/passwd" <<-EOF
	root:x:0:0:root:/root:/bin/sh
	_rpc:x:$uid_rpc:65534::/run/rpcbind:/usr/sbin/nologin
	statd:x:$uid_statd:65534::/var/lib/nfs:/usr/sbin/nologin
	EOF
	printf 'root:x:0:\nnogroup:x:65534:\n' >"$r/etc/group"
	hosts_file >"$r/etc/hosts"
	printf 'passwd: files\ngroup: files\nhosts: files\nrpc: files\nservices: files\nprotocols: files\n' \
	    >"$r/etc/nsswitch.conf"
	echo nlmguest >"$r/etc/hostname"
	ln -s /proc/mounts "$r/etc/mtab"
	chown -R "$uid_statd" "$r/var/lib/nfs"
	(cd "$r" && find . | cpio -o -H newc --quiet) >"$W/initrd.img" || return 1
}

# The machine's own name resolves here too: Ganesha looks it up at start,
# and a name missing from /etc/hosts became a DNS query to 127.0.0.1:53
# (nothing listens) that tshark's heuristics could then misread.
hosts_file() {
	printf '127.0.0.1\tlocalhost %s\n::1\tlocalhost\n%s\tnlmserver\n%s\tnlmguest\n' \
	    "$(hostname)" "$SRV_IP" "$GUEST_IP"
	printf '%s\tnlmserver6\n%s\tnlmguest6\n' "$SRV_IP6" "$GUEST_IP6"
}

build_all() {
	# Runs with different work directories may share the kernel cache.
	exec 8>"$E2E_CACHE/.lock"
	flock -w 300 8 || return 1
	vm_fetch_kernel || return 1
	exec 8>&-
	build_progs || return 1
	build_initramfs || return 1
	say "built: locktest, fake-nlm, initramfs $(($(stat -c %s "$W/initrd.img") / 1048576)) MiB"
}

# ---- inside the namespace -----------------------------------------------

PIDS=()

PID_tshark=""
PID_server=""
PID_ganesha=""

# spawn <name> <logfile> cmd...: start a daemon, remember its pid in
# PID_<name> (tshark, server, ganesha, rpcbind).  With SPAWN_APPEND=1 the
# log is appended to (a restarted server).
spawn() {
	local name=$1 log=$2
	shift 2
	if [ "${SPAWN_APPEND:-0}" = 1 ]; then
		"$@" >>"$log" 2>&1 &
	else
		"$@" >"$log" 2>&1 &
	fi
	PIDS+=("$!")
	printf -v "PID_$name" '%s' "$!"
}

stop_pid() {
	local pid=$1 i
	kill -0 "$pid" 2>/dev/null || return 0
	kill -TERM "$pid" 2>/dev/null
	for i in $(seq 50); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null
}

wait_for() {
	local t=$1 end
	shift
	end=$(($(date +%s) + t))
	until "$@" >/dev/null 2>&1; do
		[ "$(date +%s)" -ge "$end" ] && return 1
		sleep 0.1
	done
}

# registered PROG VERS NETID...: all listed netids registered with rpcbind.
registered() {
	local prog=$1 vers=$2 n
	shift 2
	for n in "$@"; do
		rpcinfo 127.0.0.1 2>/dev/null |
		    awk -v p="$prog" -v v="$vers" -v n="$n" \
		    '$1 == p && $2 == v && $3 == n { f = 1 } END { exit !f }' ||
		    return 1
	done
}

inside_cleanup() {
	local i
	trap - EXIT INT TERM
	for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do
		if [ "${PIDS[i]}" = "${PID_tshark:-}" ]; then
			kill -INT "${PIDS[i]}" 2>/dev/null
		fi
		stop_pid "${PIDS[i]}"
	done
}

setup_namespace() {
	mount -t tmpfs -o mode=755 tmpfs /run || return 1
	mkdir -p /run/rpcbind /run/ganesha /var/lib/nfs
	mount -t tmpfs -o mode=755 tmpfs /var/lib/nfs || return 1
	mkdir -p /var/lib/nfs/sm /var/lib/nfs/sm.bak /var/lib/nfs/ganesha
	chown statd /var/lib/nfs/sm /var/lib/nfs/sm.bak 2>/dev/null
	hosts_file >"$W/hosts"
	: >"$W/resolv.conf"
	mount --bind "$W/hosts" /etc/hosts || return 1
	mount --bind "$W/resolv.conf" /etc/resolv.conf || return 1
	ip link set lo up || return 1
	ip tuntap add dev "$TAP" mode tap || return 1
	ip addr add "$SRV_IP/24" dev "$TAP" || return 1
	ip addr add "$SRV_IP2/24" dev "$TAP" || return 1
	# IPv6 for locks-v6, without duplicate address detection: usable at
	# once, not "tentative" until the link is up and DAD is done.  A
	# kernel without IPv6 skips that boot (inside()).
	IPV6_ERR=""
	if [ ! -e /proc/net/if_inet6 ]; then
		IPV6_ERR="this kernel has no IPv6 (no /proc/net/if_inet6)"
	elif ! IPV6_ERR=$(ip addr add "$SRV_IP6/64" dev "$TAP" nodad 2>&1); then
		IPV6_ERR="ip addr add $SRV_IP6/64 dev $TAP: ${IPV6_ERR:-failed}"
	else
		IPV6_ERR=""
	fi
	ip link set "$TAP" up || return 1
}

start_capture() {
	# NFS itself is not ours to judge; DNS is not RPC (see rpc_malformed).
	spawn tshark "$W/tshark.log" tshark -i any -n -q -w "$CAP" \
	    -f "not port 2049 and not port 53"
	wait_for 20 grep -q "Capturing on" "$W/tshark.log"
}

ganesha_conf() {
	sed -e "s|@EXPORT@|$EXPORT|" -e "s|@ENABLE_NLM@|$1|" \
	    -e "s|@NLM_PORT@|$NLM_PORT|" -e "s|@MNT_PORT@|$MNT_PORT|" \
	    -e "s|@PLUGINS_DIR@|/usr/lib/x86_64-linux-gnu/ganesha|" \
	    "$HERE/ganesha.conf.in" >"$W/ganesha.conf"
}

# Start the lock server under test (before Ganesha).  start_lock_server
# again: start it once more after a stop (restart_server), appending to its
# log; no check, the caller judges.
start_lock_server() {
	local args=() again=0
	[ "${1:-}" = again ] && again=1
	case $E2E_SERVER in
	nlmd)
		mkdir -p "$W/nlmd-state"
		# Our own (empty) configuration: the host's /etc/nlmd must
		# not change what is tested.
		: >"$W/nlmd.conf"
		args+=(-c "$W/nlmd.conf")
		[ "$E2E_NLMD_DEBUG" = 1 ] && args+=(-d)
		# A short grace period: the restart modes must tell "ended early,
		# all reclaimed" from "ran out", and a failure must not wait long.
		args+=("--grace-period=$E2E_GRACE")
		# shellcheck disable=SC2206 # NLMD_ARGS is a word list
		args+=($NLMD_ARGS)
		SPAWN_APPEND=$again spawn server "$W/nlmd.log" "$NLMD" -F \
		    "${args[@]}" -s "$W/nlmd-state" --nlm-port "$NLM_PORT" \
		    --nsm-port "$NSM_PORT"
		SERVER_LOG=$W/nlmd.log
		;;
	fake)
		SPAWN_APPEND=$again spawn server "$W/fake-nlm.log" \
		    "$W/bin/fake-nlm" -p "$NLM_PORT"
		SERVER_LOG=$W/fake-nlm.log
		;;
	ganesha-nlm)
		# Ganesha's NLM needs a statd for SM_MON; it is the server.
		spawn server "$W/statd.log" rpc.statd -F -L -p "$NSM_PORT" \
		    -o "$STATD_OUT_PORT"
		SERVER_LOG=$W/ganesha.log
		;;
	esac
	[ "$again" = 1 ] && return 0
	if [ "$E2E_SERVER" != ganesha-nlm ]; then
		if wait_for 20 registered 100021 4 tcp; then
			check PASS "server-up" "$E2E_SERVER registered NLM v4/tcp with rpcbind"
		else
			check FAIL "server-up" "$E2E_SERVER did not register NLM v4/tcp within 20 s (log: $SERVER_LOG)"
			return 1
		fi
	fi
}

start_ganesha() {
	local nlm=false
	[ "$E2E_SERVER" = ganesha-nlm ] && nlm=true
	ganesha_conf "$nlm"
	spawn ganesha "$W/ganesha.out" ganesha.nfsd -F -f "$W/ganesha.conf" \
	    -L "$W/ganesha.log" -p /run/ganesha/ganesha.pid -N NIV_EVENT
	if ! wait_for 30 registered 100005 3 tcp ||
	    ! wait_for 10 registered 100003 3 tcp; then
		check FAIL "ganesha-up" "Ganesha did not register NFS and MOUNT v3 (log: $W/ganesha.log)"
		return 1
	fi
	if [ "$nlm" = true ] && ! wait_for 10 registered 100021 4 tcp; then
		check FAIL "server-up" "Ganesha did not register its NLM"
		return 1
	fi
	check PASS "ganesha-up" "Ganesha serves NFSv3 $EXPORT (Enable_NLM = $nlm)"
	[ "$nlm" = true ] && check PASS "server-up" "Ganesha registered its NLM v4/tcp"
	return 0
}

# nlmd registers what the README promises: NLM v1/v3/v4 and NSM v1 on UDP
# and TCP, IPv4 and IPv6.
check_registration() {
	local missing="" v n nets="tcp udp" what="tcp, udp"
	[ "$E2E_SERVER" = nlmd ] || return 0
	if [ -e /proc/net/if_inet6 ]; then
		nets="tcp udp tcp6 udp6"
		what="tcp, udp, tcp6, udp6"
	fi
	for v in 1 3 4; do
		for n in $nets; do
			registered 100021 "$v" "$n" || missing="$missing 100021/v$v/$n"
		done
	done
	for n in $nets; do
		registered 100024 1 "$n" || missing="$missing 100024/v1/$n"
	done
	if [ -z "$missing" ]; then
		check PASS "registration" "100021 v1/v3/v4 and 100024 v1 on $what"
	else
		check FAIL "registration" "not registered:$missing"
	fi
}

# ---- guest boots --------------------------------------------------------

# srv2 MODE: the server's second address, through which a restart boot
# mounts /mnt/o (the holder's lock D), and guest2 MODE the guest's address
# on that path.  restart-kill: 10.77.0.3; restart-term: fd77::1 (IPv6),
# so that SM_NOTIFY, the reclaim and the grace-period answers of D go over
# IPv6; 10.77.0.3 when there is no IPv6 here.
srv2() {
	if [ "$1" = restart-term ] && [ -z "$IPV6_ERR" ]; then
		echo "$SRV_IP6"
	else
		echo "$SRV_IP2"
	fi
}
guest2() {
	if [ "$(srv2 "$1")" = "$SRV_IP6" ]; then
		echo "$GUEST_IP6"
	else
		echo "$GUEST_IP"
	fi
}
# The same as mount.nfs wants it: an IPv6 address in brackets.
srv2_uri() {
	local a
	a=$(srv2 "$1")
	case $a in *:*) echo "[$a]" ;; *) echo "$a" ;; esac
}

qemu_cmd() {
	local mode=$1 initrd=$2 append scen=$E2E_SCENARIOS
	append="console=ttyS0 quiet panic=-1 e2e.mode=$mode"
	case $mode in
	locks-v6)
		# The export through the server's IPv6 address only; the
		# guest keeps its IPv4 address too (a dual-stack client).
		append="$append e2e.srv=[$SRV_IP6] e2e.proto=tcp6"
		append="$append e2e.ip6=$GUEST_IP6/64"
		scen=$E2E_SCENARIOS_V6
		;;
	*) append="$append e2e.srv=$SRV_IP" ;;
	esac
	case $mode in
	restart-*)
		append="$append e2e.srv2=$(srv2_uri "$mode")"
		[ "$(srv2 "$mode")" = "$SRV_IP6" ] &&
		    append="$append e2e.ip6=$GUEST_IP6/64"
		;;
	esac
	append="$append e2e.ip=$GUEST_IP/24 e2e.export=$EXPORT"
	append="$append e2e.scen=$(echo "$scen" | tr ' ' ,)"
	append="$append e2e.gwait=$((E2E_GRACE + 30))"
	# shellcheck disable=SC2054 # commas are part of qemu's arguments
	QEMU=(qemu-system-x86_64 -accel tcg,thread=multi -cpu max
	    -m "$E2E_MEM" -smp "$E2E_SMP" -nodefaults -no-user-config
	    -display none -no-reboot -monitor none
	    -kernel "$KDIR/kernel" -initrd "$initrd" -append "$append"
	    -serial "file:$W/console-$mode.log"
	    -netdev "tap,id=n0,ifname=$TAP,script=no,downscript=no"
	    -device "virtio-net-pci,netdev=n0,romfile=,mac=52:54:00:e2:e0:02")
}

# Show the guest's verdict lines while it runs.
follow_console() {
	local l
	# No tr/sed in the pipe: they would buffer the lines until the end.
	tail --pid="$2" -n +1 -F "$1" 2>/dev/null |
	    while IFS= read -r l; do
		l=${l%$'\r'}
		case $l in
		"LT: PASS "* | "LT: FAIL "* | "LT: wakeup-latency"* | \
		    "LT: info "* | "E2E: WAIT "* | "E2E: dmesg "* | \
		    "E2E: STEP "*FAIL* | "E2E: MODE "* | "E2E: ready"*)
			say "  guest: $l" ;;
		esac
	    done
}

# boot_guest MODE: one qemu boot.  Hooks a mode may define (host side;
# a '-' in the mode's name is a '_' in the hook's):
#   mode_<m>_initrd  print the initrd to boot (default: the common one)
#   mode_<m>_timeout print the boot's time limit (default E2E_BOOT_TIMEOUT)
#   mode_<m>_host    run while the guest runs (e.g. wait for a console
#                    marker with wait_console, restart the server)
#   mode_<m>_check   turn the console into checks (default: check_guest)
boot_guest() {
	local mode=$1 initrd con qpid fpid rc t0 t0ms fn tmo=$E2E_BOOT_TIMEOUT
	fn=mode_${mode//-/_}
	initrd=$W/initrd.img
	con=$W/console-$mode.log
	declare -F "${fn}_initrd" >/dev/null && initrd=$("${fn}_initrd")
	declare -F "${fn}_timeout" >/dev/null && tmo=$("${fn}_timeout")
	qemu_cmd "$mode" "$initrd"
	printf '%q ' "${QEMU[@]}" >"$W/qemu-cmdline-$mode.txt"
	: >"$con"
	t0=$(date +%s)
	t0ms=$(now_ms)
	say "guest: booting mode $mode"
	timeout -k 5 "$tmo" "${QEMU[@]}" >"$W/qemu-$mode.log" 2>&1 &
	qpid=$!
	follow_console "$con" "$qpid" &
	fpid=$!
	declare -F "${fn}_host" >/dev/null && "${fn}_host" "$con" "$qpid"
	wait "$qpid"
	rc=$?
	wait "$fpid"
	# Each boot's time window, for the capture analysis (ms).
	printf '%s\t%s\t%s\n' "$mode" "$t0ms" "$(now_ms)" >>"$W/boots"
	say "guest: mode $mode ended after $(($(date +%s) - t0)) s (qemu rc=$rc)"
	if declare -F "${fn}_check" >/dev/null; then
		"${fn}_check" "$con" "$rc"
	else
		check_guest "$mode" "$con" "$rc"
	fi
}

# wait_console FILE PATTERN SECONDS: for mode_<m>_host hooks.
wait_console() {
	wait_for "$3" grep -q -- "$2" "$1"
}

# host_flag NAME [TEXT]: answer the guest's wait_host_flag NAME (or
# locktest's wait_flag), with TEXT in the flag (it appears whole: renamed
# into place).
host_flag() {
	printf '%s\n' "${2:-}" >"$EXPORT/.e2e-tmp-$1"
	mv -f "$EXPORT/.e2e-tmp-$1" "$EXPORT/.e2e-flag-$1"
}

console_lines() {
	tr -d '\r' <"$1" | grep -a -E "$2"
}

# The standard verdict of a boot running locktest: check_guest MODE CONSOLE
# QEMU_RC [LIST [SCENARIOS]], LIST the locktest command that lists what the
# boot reports on ("list": the scenarios, SCENARIOS of them, by default
# E2E_SCENARIOS; "list-restart").
check_guest() {
	local mode=$1 con=$2 rc=$3 list=${4:-list} scen=${5:-$E2E_SCENARIOS}
	local steps s line plan name what
	steps=$(console_lines "$con" '^E2E: STEP .* FAIL' | sed 's/^E2E: STEP //')
	if [ -n "$steps" ]; then
		check FAIL "$mode/guest" "guest set-up failed: $steps (console: $con)"
	elif ! console_lines "$con" '^E2E: STEP mount ok' >/dev/null; then
		check FAIL "$mode/guest" "guest never mounted the export (qemu rc=$rc, console: $con)"
	else
		check PASS "$mode/guest" "booted, rpcbind + statd up, export mounted twice ($(console_lines "$con" '^E2E: ready' | sed 's/^E2E: //'))"
	fi
	if [ "$scen" = all ] || [ "$list" != list ]; then
		plan=$("$W/bin/locktest" "$list" | cut -f1)
	else
		plan=$scen
	fi
	for name in $plan; do
		what=$("$W/bin/locktest" "$list" | awk -F'\t' -v n="$name" '$1 == n { print $2 }')
		line=$(console_lines "$con" "^LT: (PASS|FAIL) $name " | head -1)
		case $line in
		"LT: PASS "*)
			check PASS "$mode/$name" "$what ${line#LT: PASS "$name" }"
			;;
		"LT: FAIL "*)
			check FAIL "$mode/$name" "$what ${line#LT: FAIL "$name" }"
			console_lines "$con" "^LT: not ok $name:" | head -8 |
			    while IFS= read -r s; do say "    $s"; done
			;;
		*)
			check FAIL "$mode/$name" "$what: no result (guest hung or died; console: $con)"
			;;
		esac
	done
	console_lines "$con" '^E2E: END' >/dev/null ||
	    check FAIL "$mode/finished" "guest did not finish (qemu rc=$rc: timeout or crash)"
}

# ---- the wire -----------------------------------------------------------

ts() {
	tshark "${TSHARK_OPTS[@]}" -r "$CAP" "$@" 2>/dev/null
}

# ts_tsv FILTER FIELD...: the FIELDs of the frames FILTER selects, one
# line each, tab-separated; the field "src" ("dst") is the source
# (destination) address, IPv4 or IPv6.
ts_tsv() {
	local filter=$1 f pairs=""
	local args=()
	shift
	for f in "$@"; do
		case $f in
		src | dst) args+=(-e "ip.$f" -e "ipv6.$f"); pairs="$pairs 1" ;;
		*) args+=(-e "$f"); pairs="$pairs 0" ;;
		esac
	done
	ts -Y "$filter" -T fields -E separator=/t "${args[@]}" |
	    awk -F'\t' -v pairs="$pairs" '
	    BEGIN { n = split(pairs, p, " ") }
	    {
		out = ""; j = 1
		for (i = 1; i <= n; i++) {
			v = $j
			if (p[i]) { if (v == "") v = $(j + 1); j += 2 } else j++
			out = out (i > 1 ? "\t" : "") v
		}
		print out
	    }'
}

# Frame numbers of malformed frames of RPC traffic in capture $1: frames
# tshark decodes as RPC, and any frame to or from a port an RPC service of
# this test listens on (so an RPC frame too broken to be recognised still
# counts).  Other traffic is not judged: with the heuristics first (needed
# for RPC on ephemeral ports), a datagram of another protocol can be
# claimed by the wrong heuristic and then called malformed (issue 8).
rpc_malformed() {
	local ports="111, $NLM_PORT, $NSM_PORT, $STATD_OUT_PORT, $MNT_PORT, $GUEST_LOCKD_PORT"
	tshark "${TSHARK_OPTS[@]}" -r "$1" -T fields -e frame.number -Y \
	    "_ws.malformed && (rpc || portmap || nlm || stat || udp.port in {$ports} || tcp.port in {$ports})" \
	    2>/dev/null | tr '\n' ' '
}

# The check above must still catch a malformed RPC frame: feed it a
# capture made of a well-formed NLM v4 NULL call and a LOCK call cut short
# in its arguments (both guest -> NLM port), and of the NULL call alone.
malformed_selftest() {
	local d=$W/malformed-selftest bad good
	mkdir -p "$d"
	cat >"$d/null.txt" <<'HEX'
000000 12 34 ab ce 00 00 00 00 00 00 00 02 00 01 86 b5
000010 00 00 00 04 00 00 00 00 00 00 00 00 00 00 00 00
000020 00 00 00 00 00 00 00 00
HEX
	cat >"$d/bad.txt" <<'HEX'
000000 12 34 ab cd 00 00 00 00 00 00 00 02 00 01 86 b5
000010 00 00 00 04 00 00 00 02 00 00 00 00 00 00 00 00
000020 00 00 00 00 00 00 00 00 00 00 00 04 63 6b 69 65
000030 00 00 00 01 00 00 00 01 00 00 00 c8 61 62 63
HEX
	cat "$d/null.txt" "$d/bad.txt" >"$d/both.txt"
	text2pcap -q -4 "$GUEST_IP,$SRV_IP" -u "801,$NLM_PORT" "$d/both.txt" \
	    "$d/both.pcap" >/dev/null 2>&1 &&
	text2pcap -q -4 "$GUEST_IP,$SRV_IP" -u "801,$NLM_PORT" "$d/null.txt" \
	    "$d/null.pcap" >/dev/null 2>&1 || {
		check FAIL "wire/malformed-selftest" "text2pcap failed"
		return
	}
	bad=$(rpc_malformed "$d/both.pcap")
	good=$(rpc_malformed "$d/null.pcap")
	if [ "$bad" = "2 " ] && [ -z "$good" ]; then
		check PASS "wire/malformed-selftest" "a truncated NLM LOCK call is reported malformed, a well-formed NULL call is not"
	else
		check FAIL "wire/malformed-selftest" "want frame 2 of the truncated LOCK reported and nothing for the NULL call; got '$bad' and '$good'"
	fi
}

# booted MODE: the mode's guest was booted (a line of $W/boots).
booted() {
	[ -s "$W/boots" ] && cut -f1 "$W/boots" | grep -qx -- "$1"
}

# scen_has LIST NAME: locktest scenario NAME is in LIST ("all": every one).
scen_has() {
	[ "$1" = all ] || case " $1 " in *" $2 "*) ;; *) return 1 ;; esac
}

# nlm_wire SUFFIX GUEST SRV GETLK: the checks wire/nlm-calls<SUFFIX> and
# wire/granted-callbacks<SUFFIX> of the NLM traffic between the guest's
# address GUEST and the server's SRV (IPv4 or IPv6) in capture-nlm.txt;
# GETLK 1: the getlk scenario ran there, so TEST calls are wanted too.
nlm_wire() {
	local sfx=$1 g=$2 s=$3 getlk=$4 calls replies gm gs gres procs
	calls=$(awk -v g="$g" -v s="$s" -v port="$NLM_PORT" \
	    '$2 == g && $3 == s && $4 == port && $5 == 0 && $6 == 4 { c[$7]++ }
	     END { printf "TEST %d LOCK %d CANCEL %d UNLOCK %d", c[1], c[2], c[3], c[4] }' \
	    "$W/capture-nlm.txt")
	replies=$(awk -v g="$g" -v s="$s" \
	    '$2 == s && $3 == g && $5 == 1 && $6 == 4 { c++ } END { print c + 0 }' \
	    "$W/capture-nlm.txt")
	gm=$(awk -v g="$g" -v s="$s" \
	    '$2 == s && $3 == g && $5 == 0 && $7 == 10 { c++ } END { print c + 0 }' \
	    "$W/capture-nlm.txt")
	gs=$(awk -v g="$g" -v s="$s" \
	    '$2 == s && $3 == g && $5 == 0 && $7 == 5 { c++ } END { print c + 0 }' \
	    "$W/capture-nlm.txt")
	gres=$(awk -v g="$g" -v s="$s" \
	    '$2 == g && $3 == s && $5 == 0 && $7 == 15 { c++ } END { print c + 0 }' \
	    "$W/capture-nlm.txt")
	# TEST only when the getlk scenario ran (the scenarios may be a
	# subset): its F_GETLK through mount B is the server's to answer.
	procs=$(echo "$calls" | awk -v getlk="$getlk" \
	    '{ print ($4 > 0 && $8 > 0 && (getlk == 0 || $2 > 0)) }')
	local want="LOCK and UNLOCK"
	[ "$getlk" = 1 ] && want="TEST (the getlk scenario ran), LOCK and UNLOCK"
	if [ "$procs" = 1 ] && [ "$replies" -gt 0 ]; then
		check PASS "wire/nlm-calls$sfx" "NLM v4 calls guest $g -> $s port $NLM_PORT ($calls), $replies replies back"
	else
		check FAIL "wire/nlm-calls$sfx" "want NLM v4 $want from the guest $g to $s port $NLM_PORT and replies; saw $calls, $replies replies"
	fi
	if [ "$gm" -gt 0 ]; then
		check PASS "wire/granted-callbacks$sfx" "$gm GRANTED_MSG callbacks server $s -> guest lockd $g, $gres GRANTED_RES back (sync GRANTED: $gs)"
	else
		check FAIL "wire/granted-callbacks$sfx" "no GRANTED_MSG callback from the server $s to the guest $g (sync GRANTED: $gs)"
	fi
}

# wire/deadlck: the locks boot ran the deadlock scenario (locktest.c), and
# Wireshark's NLM dissector reads the server's answer to the LOCK that
# would close the cycle as a LOCK reply with NLM4_DEADLCK (5).
nlm_wire_deadlck() {
	local n
	booted locks || return 0
	scen_has "$E2E_SCENARIOS" deadlock || return 0
	n=$(ts -Y "ip.src == $SRV_IP && ip.dst == $GUEST_IP && rpc.msgtyp == 1 && nlm.procedure_v4 == 2 && nlm.stat == 5" \
	    -T fields -e frame.number | wc -l)
	if [ "$n" -gt 0 ]; then
		check PASS "wire/deadlck" "$n LOCK replies NLM4_DEADLCK server $SRV_IP -> guest $GUEST_IP (the deadlock scenario)"
	else
		check FAIL "wire/deadlck" "no LOCK reply NLM4_DEADLCK from the server $SRV_IP to the guest $GUEST_IP, though the deadlock scenario ran"
	fi
}

# The locks-v6 boot talked NLM over IPv6 only: in its time window, NLM
# messages between the guest and the server over IPv6 and none over IPv4
# (the guest has its IPv4 address too), and the guest found the server's
# NLM through RPCB GETADDR over IPv6 (netid tcp6, and udp6 for the
# GRANTED_RES).  The server's GETADDR of the guest's lockd (udp6, for the
# callbacks) is counted too; no callback, no look-up (E2E_SERVER=fake).
nlm_wire_v6_only() {
	local t0 t1 res v6 v4 gq sq gn sn
	read -r t0 t1 < <(awk -F'\t' '$1 == "locks-v6" { print $2, $3; exit }' "$W/boots")
	ts -Y 'portmap.procedure_v3 == 3 || portmap.procedure_v4 == 3' -T fields \
	    -E separator=/t -e frame.time_epoch -e ipv6.src -e ipv6.dst \
	    -e rpc.msgtyp -e portmap.rpcb.prog -e portmap.rpcb.netid \
	    >"$W/capture-getaddr-v6.txt"
	res=$(awk -v t0="$t0" -v t1="$t1" -v g4="$GUEST_IP" -v s4="$SRV_IP" \
	    -v g6="$GUEST_IP6" -v s6="$SRV_IP6" '
	function inwin(t) { return t * 1000 >= t0 && t * 1000 < t1 }
	function list(a,   n, l) { for (n in a) l = l (l == "" ? "" : ",") n; return l == "" ? "-" : l }
	# By the name of the file itself: the work directory may hold "nlm".
	FNR == 1 { file = FILENAME; sub(/.*\//, "", file) }
	file == "capture-nlm.txt" {
		if (!inwin($1)) next
		if (($2 == g6 && $3 == s6) || ($2 == s6 && $3 == g6)) v6++
		else if (($2 == g4 && $3 == s4) || ($2 == s4 && $3 == g4)) v4++
		next
	}
	# GETADDR calls for NLM: the guest asking the server, the server
	# asking the guest (for its callbacks).
	$4 == 0 && $5 == 100021 && inwin($1) {
		if ($2 == g6 && $3 == s6) { gq++; gnet[$6] = 1 }
		if ($2 == s6 && $3 == g6) { sq++; snet[$6] = 1 }
	}
	END { printf "%d %d %d %d %s %s\n", v6, v4, gq, sq, list(gnet), list(snet) }' \
	    "$W/capture-nlm.txt" FS='\t' "$W/capture-getaddr-v6.txt")
	read -r v6 v4 gq sq gn sn <<<"$res"
	if [ "${v6:-0}" -gt 0 ] && [ "${v4:-1}" = 0 ] && [ "${gq:-0}" -gt 0 ]; then
		check PASS "wire/ipv6-only" "in the locks-v6 boot: $v6 NLM messages between $GUEST_IP6 and $SRV_IP6, none over IPv4; RPCB GETADDR of NLM over IPv6: $gq by the guest ($gn), $sq by the server ($sn)"
	else
		check FAIL "wire/ipv6-only" "in the locks-v6 boot: ${v6:-?} NLM messages over IPv6 ($GUEST_IP6 <-> $SRV_IP6), ${v4:-?} over IPv4 (want > 0 and 0); RPCB GETADDR of NLM by the guest over IPv6: ${gq:-?} (want > 0)"
	fi
}

analyse_capture() {
	local malformed getlk
	if [ ! -s "$CAP" ]; then
		check FAIL "wire/capture" "no capture in $CAP"
		return
	fi
	ts -Y 'nlm || stat || portmap' >"$W/capture-summary.txt"
	# One line per RPC message: time src dst dstport msgtype version
	# procedure, the addresses IPv4 or IPv6, the port TCP or UDP.
	ts -Y nlm -T fields -E separator=/t -e frame.time_epoch \
	    -e ip.src -e ip.dst -e ipv6.src -e ipv6.dst \
	    -e tcp.dstport -e udp.dstport -e rpc.msgtyp \
	    -e rpc.programversion -e rpc.procedure |
	    awk -F'\t' '{ src = $2 != "" ? $2 : $4; dst = $3 != "" ? $3 : $5
	           port = $6 != "" ? $6 : $7
	           n = split($8, t, ","); split($9, v, ","); split($10, p, ",")
	           for (i = 1; i <= n; i++)
	               print $1, src, dst, port, t[i], v[i], p[i] }' \
	    >"$W/capture-nlm.txt"
	# IPv4: the checks of every boot but locks-v6.
	if cut -f1 "$W/boots" 2>/dev/null | grep -q -vx locks-v6; then
		getlk=0
		booted locks && scen_has "$E2E_SCENARIOS" getlk && getlk=1
		nlm_wire "" "$GUEST_IP" "$SRV_IP" $getlk
	fi
	nlm_wire_deadlck
	if booted locks-v6; then
		getlk=0
		scen_has "$E2E_SCENARIOS_V6" getlk && getlk=1
		nlm_wire -v6 "$GUEST_IP6" "$SRV_IP6" $getlk
		nlm_wire_v6_only
	fi
	malformed_selftest
	malformed=$(rpc_malformed "$CAP")
	if [ -z "$malformed" ]; then
		check PASS "wire/malformed" "no malformed RPC packets among $(ts -Y 'rpc || portmap' -T fields -e frame.number | wc -l) RPC frames ($(ts -T fields -e frame.number | wc -l) captured, $(ts -Y 'ipv6 && (rpc || portmap)' -T fields -e frame.number | wc -l) of the RPC frames over IPv6)"
	else
		check FAIL "wire/malformed" "malformed RPC frames: $malformed(see $W/capture-summary.txt)"
	fi
}

# ---- boot modes (host side) ---------------------------------------------
# A mode is a name in E2E_MODES, a mode_<name>() in guest-init.sh and,
# when needed, the hooks of boot_guest above.  "locks" needs none.

# locks-v6: the scenarios of E2E_SCENARIOS_V6 over IPv6 (qemu_cmd gives
# the guest the server as [fd77::1] and proto=tcp6).  Besides locktest's
# verdicts: both mounts really are IPv6 mounts of that address, as the
# guest's /proc/mounts says (its console line "E2E: mounts").
mode_locks_v6_check() {
	local con=$1 rc=$2 mounts n
	check_guest locks-v6 "$con" "$rc" list "$E2E_SCENARIOS_V6"
	mounts=$(console_lines "$con" '^E2E: mounts: ' | head -1)
	n=$(printf '%s\n' "$mounts" | tr ' ' '\n' |
	    grep -E -- "(^|,)proto=tcp6(,|\$)" |
	    grep -c -E -- "(^|,)addr=$SRV_IP6(,|\$)")
	if [ "$n" -ge 2 ]; then
		check PASS "locks-v6/mounts" "$n NFSv3 mounts of [$SRV_IP6] over tcp6 (${mounts#E2E: mounts: })"
	else
		check FAIL "locks-v6/mounts" "want /mnt/a and /mnt/b mounted from [$SRV_IP6] over tcp6; the guest says: ${mounts:-nothing}"
	fi
}

# ---- server restarts (modes restart-kill and restart-term) --------------
# The guest's half is "locktest restart" (locktest.c, "server restart"):
# it prints "E2E: WAIT <mode>-restart<N>" when the server must go down, and
# waits for the flags <mode>-restarted<N> (the new server is ready) and
# <mode>-grace<N> (its grace period is over).  Each restart is one line of
# $W/restarts for analyse_restarts, which reads the capture once tshark
# has closed it:
#   mode round how t_stop t_spawn t_ready nsm_state grace_start grace_end grace_line
# (times in ms since the epoch; "-" when unknown).

now_ms() {
	echo $(($(date +%s%N) / 1000000))
}

# log_ms LINE: the time at the start of a log line of nlmd (HH:MM:SS.mmm,
# local time, today) in ms since the epoch; "-" when there is none.
log_ms() {
	local t ms
	t=$(printf '%s' "$1" | grep -o -m1 '^[0-9][0-9]:[0-9][0-9]:[0-9][0-9]\.[0-9][0-9][0-9]')
	[ -n "$t" ] || { echo -; return; }
	ms=$(date -d "$(date +%F) $t" +%s%3N) || { echo -; return; }
	# Just after midnight, a line written before it.
	[ "$ms" -gt $(($(now_ms) + 3600000)) ] && ms=$((ms - 86400000))
	echo "$ms"
}

# log_since OFFSET PATTERN: the first line of the server's log after byte
# OFFSET that matches PATTERN (grep -E).
log_since() {
	tail -c +$(($1 + 1)) "$SERVER_LOG" 2>/dev/null | tr -d '\0' |
	    grep -a -m1 -E -- "$2"
}

# marker_or_gone CONSOLE PATTERN QEMU_PID: the guest printed it, or died.
marker_or_gone() {
	grep -q -a -- "$2" "$1" || ! kill -0 "$3" 2>/dev/null
}

# stop_for_restart HOW: stop the server (SIGKILL, or SIGTERM and wait up
# to 30 s); sets STOP_STATUS (its exit status) and STOP_REG (what is still
# registered with rpcbind).  Not in a subshell: it waits for its child.
stop_for_restart() {
	local pid=$PID_server i
	if [ "$1" = kill ]; then
		kill -KILL "$pid" 2>/dev/null
	else
		kill -TERM "$pid" 2>/dev/null
		for i in $(seq 300); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
	fi
	wait "$pid" 2>/dev/null
	STOP_STATUS=$?
	STOP_REG=""
	registered 100021 4 tcp && STOP_REG="$STOP_REG NLM"
	registered 100024 1 tcp && STOP_REG="$STOP_REG NSM"
	return 0
}

# The restarted server said it is ready, or died.
ready_or_dead() {
	log_since "$1" 'nlmd ready' || ! kill -0 "$PID_server" 2>/dev/null
}

# restart_server MODE ROUND HOW: one restart, judged as check MODE/restartN;
# then wait for the end of grace.  The guest hears of both (host_flag).
restart_server() {
	local mode=$1 r=$2 how=$3 name="$1/restart$2" t_stop t_spawn t_ready
	local off st reg ready="" old_epoch epoch state="-" what
	local gline="" gstart="-" gend="-" gl
	old_epoch=$(grep -a 'nlmd ready' "$SERVER_LOG" 2>/dev/null | tail -1 |
	    sed -n 's/.*, epoch \([0-9]*\),.*/\1/p')
	t_stop=$(now_ms)
	stop_for_restart "$how"
	st=$STOP_STATUS
	reg=$STOP_REG
	printf '==== e2e %s: restart %d (%s): stopped, exit status %s ====\n' \
	    "$mode" "$r" "$how" "$st" >>"$SERVER_LOG"
	off=$(stat -c %s "$SERVER_LOG")
	t_spawn=$(now_ms)
	start_lock_server again
	case $E2E_SERVER in
	nlmd)
		wait_for 30 ready_or_dead "$off"
		ready=$(log_since "$off" 'nlmd ready')
		;;
	*)
		wait_for 20 registered 100021 4 tcp && sleep 1 && ready="registered"
		;;
	esac
	t_ready=$(now_ms)
	if [ "$how" = kill ]; then
		what="killed with SIGKILL (status $st)"
	else
		what="stopped with SIGTERM (exit status $st${reg:+, still registered:$reg})"
	fi
	if [ -z "$ready" ] || ! kill -0 "$PID_server" 2>/dev/null; then
		check FAIL "$name" "$E2E_SERVER $what, then did not come up within 30 s (log: $SERVER_LOG)"
	elif [ "$E2E_SERVER" = nlmd ]; then
		epoch=$(printf '%s' "$ready" | sed -n 's/.*, epoch \([0-9]*\),.*/\1/p')
		state=$(printf '%s' "$ready" | sed -n 's/.*NSM state \([0-9]*\).*/\1/p')
		[ -n "$state" ] || state=-
		t_ready=$(log_ms "$ready")
		if { [ "$how" = kill ] && [ "$st" = 137 ]; } ||
		    { [ "$how" = term ] && [ "$st" = 0 ] && [ -z "$reg" ]; } &&
		    [ -n "$epoch" ] && [ "$epoch" -gt "${old_epoch:-0}" ]; then
			check PASS "$name" "nlmd $what, started again on the same state directory: ready $(ms_diff "$t_ready" "$t_spawn") s after the start, epoch ${old_epoch:-?} -> $epoch, NSM state $state"
		else
			check FAIL "$name" "nlmd $what (want $([ "$how" = kill ] && echo 137 || echo '0, unregistered')), started again: epoch ${old_epoch:-?} -> ${epoch:-?}"
		fi
	else
		check PASS "$name" "$E2E_SERVER $what, started again"
	fi
	host_flag "$mode-restarted$r" "$E2E_SERVER restarted ($how): ${ready#* nlmd: }"
	if [ "$E2E_SERVER" = nlmd ]; then
		wait_for $((E2E_GRACE + 20)) grace_done "$off"
		gline=$(log_since "$off" 'grace period over|no grace period')
		gl=$(log_since "$off" 'grace period: ')
		[ -n "$gl" ] && gstart=$(log_ms "$gl")
		[ -n "$gline" ] && gend=$(log_ms "$gline")
		[ -n "$gline" ] || gline="no end of grace in the log within $((E2E_GRACE + 20)) s"
	else
		sleep 2
		gline="$E2E_SERVER: no grace period"
	fi
	say "$mode: restart $r: ${gline#* nlmd: }"
	host_flag "$mode-grace$r" "${gline#* nlmd: }"
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$mode" "$r" "$how" \
	    "$t_stop" "$t_spawn" "$t_ready" "$state" "$gstart" "$gend" \
	    "${gline#* nlmd: }" >>"$W/restarts"
}

grace_done() {
	log_since "$1" 'grace period over|no grace period' ||
	    ! kill -0 "$PID_server" 2>/dev/null
}

# ms_diff A B: (A - B) ms as seconds with 3 decimals; "?" if unknown.
ms_diff() {
	case "$1$2" in *-*|"") echo "?"; return ;; esac
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (a - b) / 1000 }'
}

restart_host() {
	local how=$1 mode=$2 con=$3 qpid=$4 r
	for r in 1 2; do
		wait_for 180 marker_or_gone "$con" "E2E: WAIT $mode-restart$r" "$qpid"
		if ! grep -q -a -- "E2E: WAIT $mode-restart$r" "$con"; then
			say "$mode: the guest did not ask for restart $r"
			return
		fi
		say "$mode: restart $r of $E2E_SERVER ($how)"
		restart_server "$mode" "$r" "$how"
	done
}

restart_timeout() {
	echo $((E2E_BOOT_TIMEOUT + 2 * (E2E_GRACE + 30) + 60))
}

mode_restart_kill_host() { restart_host kill restart-kill "$@"; }
mode_restart_term_host() { restart_host term restart-term "$@"; }
mode_restart_kill_timeout() { restart_timeout; }
mode_restart_term_timeout() { restart_timeout; }
mode_restart_kill_check() { check_guest restart-kill "$1" "$2" list-restart; }
mode_restart_term_check() { check_guest restart-term "$1" "$2" list-restart; }

# What the capture and nlmd's log say about each restart of $W/restarts:
# the SM_NOTIFY to the guest's statd, the guest's reclaims, the end of
# grace, and (restart 2, when the guest's statd was paused) the LOCK
# refused with DENIED_GRACE_PERIOD.  Prints the timings as E2E-NUMBERS.
analyse_restarts() {
	local mode r how t_stop t_spawn t_ready state gstart gend gline
	local t_end want k res v what detail lines
	[ -s "$W/restarts" ] || return 0
	# SM_NOTIFY (NSM v1 proc 6) calls and replies.
	ts_tsv 'stat.procedure_v1 == 6' frame.time_epoch src dst rpc.msgtyp \
	    rpc.xid stat.mon_id.name stat.state >"$W/capture-notify.txt"
	# NLM v4 LOCK calls with reclaim set, and every LOCK reply.
	ts_tsv 'nlm.procedure_v4 == 2 && rpc.msgtyp == 0 && nlm.reclaim == 1' \
	    frame.time_epoch src rpc.xid nlm.reclaim nlm.lock.svid \
	    nlm.lock.l_offset64 nlm.lock.l_len64 nlm.exclusive \
	    >"$W/capture-reclaims.txt"
	ts_tsv 'nlm.procedure_v4 == 2 && rpc.msgtyp == 1' frame.time_epoch dst \
	    rpc.xid nlm.stat >"$W/capture-lock-replies.txt"
	# GRANTED_MSG and GRANTED callbacks.
	ts_tsv 'rpc.msgtyp == 0 && (nlm.procedure_v4 == 10 || nlm.procedure_v4 == 5)' \
	    frame.time_epoch src dst >"$W/capture-granted.txt"
	mapfile -t lines <"$W/restarts"
	for ((k = 0; k < ${#lines[@]}; k++)); do
		IFS=$'\t' read -r mode r how t_stop t_spawn t_ready state gstart \
		    gend gline <<<"${lines[k]}"
		# This restart's traffic: until the next one's stop.
		t_end=99999999999999
		[ $((k + 1)) -lt ${#lines[@]} ] && t_end=$(cut -f4 <<<"${lines[k + 1]}")
		# Restart 1: the holder's A, B, C and D; restart 2: A, B and D
		# (D through the second address).
		want=4
		[ "$r" = 2 ] && want=3
		res=$(awk -F'\t' -v t0="$t_spawn" -v t1="$t_end" -v g="$GUEST_IP" \
		    -v s="$SRV_IP" -v s2="$(srv2 "$mode")" -v g2="$(guest2 "$mode")" \
		    -v st="$state" -v gend="$gend" -v want="$want" \
		    -v r="$r" -v how="$how" -v grace="$E2E_GRACE" \
		    -v gline="$gline" -v gstart="$gstart" -v tready="$t_ready" \
		    -f - "$W/capture-notify.txt" "$W/capture-reclaims.txt" \
		    "$W/capture-lock-replies.txt" "$W/capture-granted.txt" <<'AWK'
function ms(t) { return t * 1000 }
function sec(x) { return sprintf("%.3f", x / 1000) }
function inwin(t) { return ms(t) >= t0 && ms(t) < t1 }
# nlmd logs whole ms: within 2 ms the end of grace came in the same turn.
function gap(a, b) { d = a - b; return (d > -2 && d < 0) ? 0 : sprintf("%.0f", d) }
# By the file's own name: $W's path may hold "notify" or "replies" too.
FNR == 1 { file = FILENAME; sub(/.*\//, "", file) }
file == "capture-notify.txt" {
	if (!inwin($1)) next
	if ($4 == 0 && $2 == s && $3 == g) {
		ncall++
		if (!tnotify) tnotify = ms($1)
		if ($6 == s && $7 == st) { good++; okxid[$5] = 1 }
		else bad = bad sprintf(" mon_name=%s state=%s", $6, $7)
	} else if ($4 == 0 && $2 == s2 && $3 == g2) {
		ncall2++
		if ($6 == s2 && $7 == st) { good2++; okxid2[$5] = 1 }
		else bad2 = bad2 sprintf(" mon_name=%s state=%s", $6, $7)
	} else if ($4 == 1 && $2 == g && ($5 in okxid)) {
		answered++
		if (!tans) tans = ms($1)
	} else if ($4 == 1 && $2 == g2 && ($5 in okxid2)) {
		answered2++
	}
	next
}
file == "capture-reclaims.txt" {
	if (!inwin($1) || ($2 != g && $2 != g2)) next
	n = split($4, v, ",")
	c = 0
	for (i = 1; i <= n; i++) if (v[i] == "1" || v[i] == "True") c++
	nrec += c
	if (!tfirst) tfirst = ms($1)
	tlast = ms($1)
	nx = split($3, x, ",")
	for (i = 1; i <= nx; i++) recxid[x[i]] = 1
	next
}
file == "capture-granted.txt" {
	if (inwin($1) && $2 == s && $3 == g && gend != "-" && ms($1) >= gend) {
		ngranted++
		if (!tgranted) tgranted = ms($1)
	}
	next
}
file == "capture-lock-replies.txt" {
	if (!inwin($1) || ($2 != g && $2 != g2)) next
	nx = split($3, x, ","); ns = split($4, y, ",")
	for (i = 1; i <= nx && nx == ns; i++) {
		if (x[i] in recxid) { recans++; if (y[i] != 0) recbad = recbad " " y[i] }
		if (y[i] == 4 && (gend == "-" || ms($1) <= gend + 1000)) {
			ngr++
			if (!tgr) tgr = ms($1)
		}
	}
}
END {
	# notify
	if (good > 0 && answered > 0)
		printf "PASS\tnotify\t%d SM_NOTIFY %s -> %s statd (mon_name %s, state %s), the first %s s after the start, answered %s s after the start\n", \
		    ncall, s, g, s, st, sec(tnotify - t0), sec(tans - t0)
	else if (ncall == 0)
		printf "FAIL\tnotify\tno SM_NOTIFY from %s to the guest's statd after the restart\n", s
	else
		printf "FAIL\tnotify\t%d SM_NOTIFY to the guest, %d with mon_name %s and state %s, %d answered;%s\n", \
		    ncall, good, s, st, answered + 0, bad
	# The guest mounted through the second address too (mount O): it
	# monitors that name separately and must be told under it.
	if (good2 > 0 && answered2 > 0)
		printf "PASS\tnotify-second\t%d SM_NOTIFY %s -> %s statd (mon_name %s, state %s), answered\n", \
		    ncall2, s2, g2, s2, st
	else if (ncall2 == 0)
		printf "FAIL\tnotify-second\tno SM_NOTIFY from %s (the second address the guest mounted through) to the guest's statd after the restart\n", s2
	else
		printf "FAIL\tnotify-second\t%d SM_NOTIFY from %s to the guest, %d with mon_name %s and state %s, %d answered;%s\n", \
		    ncall2, s2, good2, s2, st, answered2 + 0, bad2
	# reclaim
	if (nrec == want && recans == nrec && recbad == "")
		printf "PASS\treclaim\t%d LOCK reclaim=1 from the guest (want %d), all granted; the first %s s, the last %s s after the start\n", \
		    nrec, want, sec(tfirst - t0), sec(tlast - t0)
	else if (nrec == 0)
		printf "FAIL\treclaim\tno LOCK with reclaim=1 from the guest after the restart (want %d)\n", want
	else
		printf "FAIL\treclaim\t%d LOCK reclaim=1 from the guest (want %d), %d replies seen, not granted:%s\n", \
		    nrec, want, recans + 0, (recbad == "" ? " none" : recbad)
	# grace end
	gms = gline; sub(/.* after /, "", gms); sub(/ ms.*/, "", gms)
	if (gline !~ /grace period over \(nothing left to reclaim\)/)
		printf "FAIL\tgrace-end\tgrace did not end early: log: %s\n", gline
	else if (gms + 0 >= grace * 1000)
		printf "FAIL\tgrace-end\tgrace ended after %s ms, not before the %d s deadline: %s\n", gms, grace, gline
	else if (nrec > 0 && gend != "-" && tlast > gend + 2)
		printf "FAIL\tgrace-end\tgrace ended (log: %s s after the start) before the last reclaim (capture: %s s)\n", sec(gend - t0), sec(tlast - t0)
	else if (nrec == 0)
		printf "FAIL\tgrace-end\tlog: %s, but the capture shows no reclaim\n", gline
	else
		printf "PASS\tgrace-end\tnlmd: %s (deadline %d s); it ended %s s after the start, %s ms after the last reclaim reached the server\n", \
		    gline, grace, sec(gend - t0), gap(gend, tlast)
	# The waiter of this round (W1, W2) is granted by a callback.
	if (ngranted > 0)
		printf "PASS\tgranted\t%d GRANTED_MSG/GRANTED callbacks %s -> %s after the end of grace, the first %s s after the start: the waiter was woken by the server\n", ngranted, s, g, sec(tgranted - t0)
	else
		printf "FAIL\tgranted\tno GRANTED_MSG or GRANTED callback to the guest after the end of grace: the waiter was not granted by the server (at best by the client\047s 30 s re-poll)\n"
	if (r == 2) {
		if (ngr > 0)
			printf "PASS\tgrace-denied\t%d LOCK from the guest answered DENIED_GRACE_PERIOD in grace, the first %s s after the start: the waiter asked in grace\n", ngr, sec(tgr - t0)
		else
			printf "FAIL\tgrace-denied\tno LOCK answered DENIED_GRACE_PERIOD during grace: the waiter did not ask in grace (or grace did not hold it back)\n"
	}
	printf "NUMBERS\t%s\tstart->ready %s s, start->SM_NOTIFY %s s, start->first reclaim %s s, start->last reclaim %s s, start->grace end %s s (%s), last reclaim->grace end %s ms, SM_NOTIFY answered %s s after the start\n", \
	    how, (tready == "-" ? "?" : sec(tready - t0)), (tnotify ? sec(tnotify - t0) : "?"), \
	    (tfirst ? sec(tfirst - t0) : "?"), (tlast ? sec(tlast - t0) : "?"), \
	    (gend == "-" ? "?" : sec(gend - t0)), gline, \
	    (tlast && gend != "-" ? gap(gend, tlast) : "?"), (tans ? sec(tans - t0) : "?")
}
AWK
)
		while IFS=$'\t' read -r v what detail; do
			case $v in
			PASS | FAIL) check "$v" "$mode/$what$r" "$detail" ;;
			NUMBERS)
				if [ "$r" = 1 ]; then
					say "E2E-NUMBERS: $mode restart 1 ($what, guest left alone): $detail"
				else
					say "E2E-NUMBERS: $mode restart 2 ($what, guest's statd paused by the test, so the reclaim waits for it): $detail"
				fi
				;;
			esac
		done <<<"$res"
	done
}

inside() {
	local mode
	trap inside_cleanup EXIT
	trap 'exit 143' TERM
	trap 'exit 130' INT
	setup_namespace || { check FAIL "namespace" "set-up failed"; return 1; }
	start_capture || check FAIL "wire/capture" "tshark did not start (log: $W/tshark.log)"
	spawn rpcbind "$W/rpcbind.log" rpcbind -f -w
	wait_for 10 rpcinfo -p 127.0.0.1 || { check FAIL "rpcbind" "rpcbind did not start"; return 1; }
	say "namespace: tap $TAP $SRV_IP, rpcbind, tshark up"
	start_lock_server || return 1
	start_ganesha || return 1
	check_registration
	for mode in $E2E_MODES; do
		case $mode in
		restart-*)
			if [ "$E2E_SERVER" = ganesha-nlm ]; then
				check FAIL "$mode" "server restarts are tested with nlmd (or fake), not ganesha-nlm"
				continue
			fi
			[ "$mode" = restart-term ] && [ -n "$IPV6_ERR" ] &&
			    say "$mode: no IPv6 here ($IPV6_ERR): mount O through $SRV_IP2"
			;;
		locks-v6)
			if [ -n "$IPV6_ERR" ]; then
				say "SKIP: $mode: no IPv6 here: $IPV6_ERR"
				printf 'SKIP %s: %s\n' "$mode" "$IPV6_ERR" >>"$W/checks"
				continue
			fi
			;;
		esac
		boot_guest "$mode"
	done
	if kill -0 "$PID_server" 2>/dev/null; then
		check PASS "server-alive" "$E2E_SERVER still running after the guest boots"
	else
		check FAIL "server-alive" "$E2E_SERVER died during the run (log: $SERVER_LOG)"
	fi
	stop_pid "$PID_ganesha"
	stop_pid "$PID_server"
	if [ "$E2E_SERVER" = nlmd ]; then
		wait "$PID_server"
		local st=$?
		if [ "$st" = 0 ] && ! registered 100021 4 tcp && ! registered 100024 1 tcp; then
			check PASS "server-stop" "nlmd exited 0 on SIGTERM and unregistered"
		else
			check FAIL "server-stop" "nlmd on SIGTERM: exit status $st, still registered: $(registered 100021 4 tcp && echo NLM) $(registered 100024 1 tcp && echo NSM)"
		fi
	fi
	kill -INT "$PID_tshark" 2>/dev/null
	wait "$PID_tshark" 2>/dev/null
	analyse_capture
	analyse_restarts
	# Reached the end (main() fails a part that died on the way).
	: >"$W/inside.done"
}

# ---- host side ----------------------------------------------------------

NS=""
INNER=""

outer_cleanup() {
	local p i
	trap - EXIT INT TERM
	[ -n "$INNER" ] && kill -TERM "$INNER" 2>/dev/null
	if [ -n "$NS" ]; then
		for i in 1 2 3 4 5 6 7 8 9 10; do
			p=$(ip netns pids "$NS" 2>/dev/null)
			[ -z "$p" ] && break
			# shellcheck disable=SC2086 # a list of pids
			kill -TERM $p 2>/dev/null
			sleep 0.3
		done
		p=$(ip netns pids "$NS" 2>/dev/null)
		# shellcheck disable=SC2086
		[ -n "$p" ] && kill -KILL $p 2>/dev/null
		ip netns del "$NS" 2>/dev/null
	fi
	[ -n "$INNER" ] && wait "$INNER" 2>/dev/null
	return 0
}

interrupted() {
	check FAIL "interrupted" "$1 during the run"
	outer_cleanup
	summary
	exit "$2"
}

summary() {
	local pass fail log
	case $E2E_SERVER in
	nlmd) log=nlmd.log ;;
	fake) log=fake-nlm.log ;;
	*) log="ganesha.log, statd.log" ;;
	esac
	local skip skipped=
	pass=$(grep -c '^PASS ' "$W/checks" 2>/dev/null)
	fail=$(grep -c '^FAIL ' "$W/checks" 2>/dev/null)
	skip=$(grep -c '^SKIP ' "$W/checks" 2>/dev/null)
	[ "${skip:-0}" = 0 ] || skipped=", $skip skipped"
	say "server $E2E_SERVER, $(elapsed) s in all"
	if [ "${fail:-0}" != 0 ] || [ "${pass:-0}" = 0 ]; then
		say "FAILED: kept $W (e2e.log, checks, console-*.log, $log, e2e.pcapng, capture-summary.txt)"
	fi
	echo "e2e: ${pass:-0} passed, ${fail:-0} failed$skipped"
	[ "${fail:-0}" = 0 ] && [ "${pass:-0}" != 0 ]
}

main() {
	local rc err
	preflight
	mkdir -p "$W" "$E2E_CACHE" || fatal "cannot create $W"
	# One run per work directory at a time (set E2E_WORK for parallel runs).
	exec 9>"$W/.lock"
	flock -n 9 || fatal "another e2e run is using $W (set E2E_WORK)"
	# Start from an empty work directory, keeping the kernel cache.
	find "$W" -mindepth 1 -maxdepth 1 ! -path "$E2E_CACHE" ! -name .lock \
	    -exec rm -rf {} + 2>/dev/null
	mkdir -p "$EXPORT"
	: >"$W/checks"
	say "e2e: server $E2E_SERVER, modes: $E2E_MODES, work dir $W"
	build_all || fatal "build failed (see above)"
	NS=nlme2e-$$
	trap outer_cleanup EXIT
	trap 'interrupted SIGINT 130' INT
	trap 'interrupted SIGTERM 143' TERM
	if ! err=$(ip netns add "$NS" 2>&1); then
		NS=""
		skip "cannot create a network namespace: $err"
	fi
	rm -f "$W/inside.done"
	timeout -k 10 "$E2E_TIMEOUT" ip netns exec "$NS" \
	    unshare -m --propagation private -- "$SELF" __inside &
	INNER=$!
	wait "$INNER"
	rc=$?
	INNER=""
	if [ "$rc" = 124 ]; then
		check FAIL "timeout" "the namespace part took over $E2E_TIMEOUT s"
	elif [ ! -e "$W/inside.done" ] && ! grep -q '^FAIL ' "$W/checks"; then
		# Killed, or an error of the script: the checks it did not
		# reach must not read as a pass.
		check FAIL "inner" "the namespace part ended early (status $rc) without a failed check"
	fi
	outer_cleanup
	trap - EXIT
	summary
}

if [ "${1:-}" = __inside ]; then
	inside
	exit $?
fi
main "$@"
