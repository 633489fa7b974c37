#!/bin/sh
# deps.sh - install every Debian package that building, testing and running
# nlmd needs, and nothing else.  Idempotent: does nothing when all is there.
set -eu

PKGS="gcc make libc6-dev pkg-config rpcsvc-proto libtirpc-dev libtirpc-common
libdb5.3-dev db5.3-util libcunit1-dev libnfs-dev rpcbind nfs-common
tshark iproute2 util-linux procps psmisc
qemu-system-x86 busybox-static nfs-ganesha nfs-ganesha-vfs nfs-ganesha-mem cpio xz-utils kmod
e2fsprogs binutils strace
libjansson-dev jq prometheus libmicrohttpd-dev curl time liburing-dev
build-essential debhelper dpkg-dev fakeroot lintian mandoc man-db systemd
clang libclang-rt-dev llvm
python3"

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
	    grep -q 'install ok installed'; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

echo "deps: missing Debian packages:$missing"
if [ "$(id -u)" != 0 ]; then
	echo "deps: not root; run 'sudo make deps' (or install the packages above)" >&2
	exit 1
fi
# Installing rpcbind/nfs-common/ganesha must not start services on the host:
# the tests run their own daemons in private namespaces.
policy=/usr/sbin/policy-rc.d
added_policy=""
if [ ! -e "$policy" ]; then
	printf '#!/bin/sh\nexit 101\n' > "$policy"
	chmod 755 "$policy"
	added_policy=1
fi
export DEBIAN_FRONTEND=noninteractive
rc=0
apt-get update -q || rc=$?
[ $rc = 0 ] && { apt-get install -y -q --no-install-recommends $missing || rc=$?; }
[ -n "$added_policy" ] && rm -f "$policy"
# policy-rc.d kept them from starting now, but the packages also enable
# their units for the next boot: NFS-Ganesha (the comparison and e2e runs)
# would come up with its own NLM and rpc.statd holding 100021 and 100024,
# and nlmd (make run) refuse to start beside them; Prometheus (promtool for
# the metrics checks) would serve on port 9090.  Only what this run
# installed is disabled; the tests start their own copies.
for unit in nfs-ganesha:nfs-ganesha.service nfs-ganesha:nfs-ganesha-lock.service \
    prometheus:prometheus.service; do
	case " $missing " in
	*" ${unit%%:*} "*)
		if [ $rc = 0 ] && command -v systemctl >/dev/null &&
		    systemctl is-enabled --quiet "${unit#*:}" 2>/dev/null; then
			systemctl disable --quiet "${unit#*:}" 2>/dev/null &&
			    echo "deps: disabled ${unit#*:} (installed for the tests only)"
		fi
		;;
	esac
done
exit $rc
