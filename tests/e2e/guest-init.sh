#!/bin/sh
# guest-init.sh - /init of the e2e guest (busybox sh, PID 1).
#
# Brings up the network, rpcbind and rpc.statd, mounts the export twice
# (/mnt/a, and /mnt/b with nosharecache so the client keeps separate inodes
# and lock tables) and, given a second server address, once more through
# it (/mnt/o), runs the boot mode named on the kernel command line and
# powers off.  Everything it says goes to the serial console, which run.sh
# reads:
#   E2E: <progress>           informational
#   E2E: STEP <name> ok|FAIL  a set-up step (run.sh turns FAILs into checks)
#   LT: ...                   locktest's lines (see locktest.c)
#   E2E: MODE <mode> rc=<n>   the boot mode finished
#   E2E: END                  the last line before poweroff
#
#   E2E: WAIT <marker>        the host must act now (run.sh's mode hook)
#
# Kernel command line: e2e.mode=<mode> e2e.srv=<server ip>
#   [e2e.srv2=<the server's second ip, IPv6 in brackets>]
#   e2e.ip=<guest ip/prefix> [e2e.ip6=<guest IPv6 address/prefix>]
#   [e2e.proto=<mount's proto=, default tcp>]
#   e2e.export=<path> [e2e.scen=a,b,c]
#   [e2e.gwait=<seconds to wait for the host's end-of-grace word>]
# An IPv6 server address comes in brackets (e2e.srv=[fd77::1]), as
# mount.nfs wants it, with e2e.proto=tcp6: with proto=tcp, mount.nfs
# resolves the server as IPv4 only and refuses an IPv6 address.
#
# Adding a boot mode: write mode_<name>() below (it runs after the mounts;
# a '-' in the mode's name is a '_' in the function's) and list <name> in
# E2E_MODES for run.sh; see tests/e2e/README.md.

PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
exec </dev/console >/dev/console 2>&1
mount -t tmpfs -o mode=755 tmpfs /run
mkdir -p /run/rpcbind /tmp /dev/pts

log() { echo "E2E: $*"; }
step() { log "STEP $1 $2${3:+ $3}"; }
end() {
	log "END"
	sync
	poweroff -f
	sleep 10
}
die() { step "$1" FAIL "$2"; end; }

MODE=locks SRV='' SRV2='' IP='' IP6='' PROTO=tcp EXPORT='' SCEN=all GWAIT=120
# shellcheck disable=SC2013 # the command line is one line of words
for w in $(cat /proc/cmdline); do
	case $w in
	e2e.mode=*) MODE=${w#*=} ;;
	e2e.srv=*) SRV=${w#*=} ;;
	e2e.srv2=*) SRV2=${w#*=} ;;
	e2e.ip=*) IP=${w#*=} ;;
	e2e.ip6=*) IP6=${w#*=} ;;
	e2e.proto=*) PROTO=${w#*=} ;;
	e2e.export=*) EXPORT=${w#*=} ;;
	e2e.scen=*) SCEN=$(echo "${w#*=}" | tr , ' ') ;;
	e2e.gwait=*) GWAIT=${w#*=} ;;
	esac
done
log "boot mode=$MODE uptime=$(cut -d' ' -f1 /proc/uptime)"

hostname nlmguest

# Modules in dependency order, resolved on the host ("name args..." lines).
while read -r m args; do
	[ -n "$m" ] || continue
	# shellcheck disable=SC2086 # args are module parameters, split on purpose
	insmod "/lib/modules/e2e/$m.ko" $args || die modules "insmod $m"
done </etc/e2e/modules
step modules ok

ip link set lo up
if [ -n "$IP6" ]; then
	# No duplicate address detection (busybox's ip knows no "nodad"):
	# the address is usable at once, not "tentative" for a second or more.
	echo 0 >/proc/sys/net/ipv6/conf/eth0/accept_dad ||
	    die network "no IPv6 on eth0"
fi
ip link set eth0 up || die network "no eth0"
ip addr add "$IP" dev eth0 || die network "ip addr add $IP"
if [ -n "$IP6" ]; then
	ip addr add "$IP6" dev eth0 || die network "ip addr add $IP6"
fi
step network ok "$IP${IP6:+ $IP6}"

rpcbind -w || die rpcbind "rpcbind did not start"
rpc.statd -L || die statd "rpc.statd did not start"
step daemons ok

OPTS=vers=3,proto=$PROTO,hard,timeo=50,retrans=3
mkdir -p /mnt/a /mnt/b
mount.nfs "$SRV:$EXPORT" /mnt/a -o "$OPTS" || die mount "/mnt/a"
mount.nfs "$SRV:$EXPORT" /mnt/b -o "$OPTS,nosharecache" || die mount "/mnt/b"
if [ -n "$SRV2" ]; then
	# The second address may be IPv6 ([fd77::1]): proto=tcp6 then.
	O=$OPTS
	case $SRV2 in \[*) O=$(echo "$OPTS" | sed 's/proto=[a-z0-9]*/proto=tcp6/') ;; esac
	mkdir -p /mnt/o
	mount.nfs "$SRV2:$EXPORT" /mnt/o -o "$O,nosharecache" ||
	    die mount "/mnt/o ($SRV2)"
fi
step mount ok "$(grep -c ' nfs ' /proc/mounts) nfs mounts"
log "ready uptime=$(cut -d' ' -f1 /proc/uptime)"

# ---- boot modes ---------------------------------------------------------

# The lock scenarios of locktest.c.
mode_locks() {
	# shellcheck disable=SC2086 # one word per scenario
	locktest -a /mnt/a -b /mnt/b $SCEN
}

# The same over IPv6: run.sh boots this mode with the server as
# e2e.srv=[fd77::1] and proto=tcp6, so the mounts, and with them the
# kernel's NLM calls to the lock server and its callbacks to our lockd,
# go over IPv6 (e2e.scen: a few scenarios, E2E_SCENARIOS_V6).
mode_locks_v6() {
	log "mounts: $(grep ' nfs ' /proc/mounts | cut -d' ' -f1,2,4 | tr '\n' ' ')"
	mode_locks
}

# Boot modes follow the same shape: do the guest's half here, print
# "E2E: WAIT <marker>" when run.sh must act on the host (its mode hook
# waits for the marker with wait_console), wait for the host's answer with
# wait_host_flag, and leave results as LT: PASS/FAIL lines.

# /mnt/a and /mnt/b cache negative lookups for up to a minute, so the
# host's flags are read through a third mount that does not.
ctl_mount() {
	grep -q ' /mnt/ctl ' /proc/mounts && return 0
	mkdir -p /mnt/ctl
	mount.nfs "$SRV:$EXPORT" /mnt/ctl \
	    -o "$OPTS,nosharecache,noac,lookupcache=none"
}

# wait_host_flag NAME SECONDS: wait until run.sh's host_flag NAME created
# the file on the export.
wait_host_flag() {
	i=0
	ctl_mount || return 1
	while [ ! -e "/mnt/ctl/.e2e-flag-$1" ]; do
		[ "$i" -ge "$(($2 * 10))" ] && return 1
		sleep 0.1
		i=$((i + 1))
	done
}

# Server restarts (restart-kill: SIGKILL, restart-term: SIGTERM; the host
# knows which): the host restarts the lock server twice while locktest
# holds locks and waits, and the kernel must reclaim them when the
# server's SM_NOTIFY reaches our rpc.statd.  locktest stops and continues
# statd itself (its pid: -s) to make sure the server is in grace when the
# second waiter asks.  See "server restart" in locktest.c.
mode_restart() {
	ctl_mount || { step ctl-mount FAIL "/mnt/ctl"; return 1; }
	locktest -a /mnt/a -b /mnt/b ${SRV2:+-o /mnt/o} -c /mnt/ctl \
	    -g "$GWAIT" -s "$(pidof rpc.statd | cut -d' ' -f1)" restart "$MODE"
	rc=$?
	log "statd monitors: $(ls /var/lib/nfs/sm 2>/dev/null | tr '\n' ' ')"
	# What the kernel said about the recovery (reclaims that failed...).
	dmesg | grep -i -E 'lockd|nlm|statd' | sed 's/^/E2E: dmesg /'
	return $rc
}
mode_restart_kill() { mode_restart; }
mode_restart_term() { mode_restart; }

FN=mode_$(echo "$MODE" | tr - _)
if type "$FN" >/dev/null 2>&1; then
	"$FN"
	log "MODE $MODE rc=$?"
else
	step mode FAIL "unknown boot mode $MODE"
fi
log "done uptime=$(cut -d' ' -f1 /proc/uptime)"
end
