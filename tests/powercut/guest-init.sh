#!/bin/sh
# guest-init.sh - /init of the power-cut guest (busybox sh, PID 1); see
# tests/integration/test_powercut.sh, which boots it and cuts its power
# (kill -9 of qemu) while clients on the host lock and unlock.
#
# Loads the modules (network, virtio disk, ext4), brings up eth0, turns
# the kernel's own write-back off (so that nothing reaches the disk unless
# a program flushes it: what a power cut loses is then everything that
# was not flushed, the worst case a real one can do), mounts the disk at
# /state, prints `nlmd --dump-state' of /state/nlmd (when it exists) and
# runs nlmd on it until the power goes.  Lines for the host, on the
# serial console:
#   PC: STEP <name> ok|FAIL <detail>
#   PC: DUMP BEGIN / the dump / PC: DUMP END rc=<n>
#   PC: START nlmd (then nlmd's own log lines, "nlmd ready" among them)
#   PC: EXIT nlmd rc=<n>       (nlmd stopped on its own: a failure)
#
# Kernel command line: pc.ip=<address/prefix> pc.dur=<durability>
#   [pc.nosync=1: nlmd under /usr/lib/nosync.so, flushes taken away;
#    pc.nosync=2: all but those of nlmd's main thread, the event loop]

PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
exec </dev/console >/dev/console 2>&1
mount -t tmpfs -o mode=755 tmpfs /run
mkdir -p /tmp /run/nlmd

say() { echo "PC: $*"; }
halt() {
	sync
	poweroff -f
	sleep 10
}
die() { say "STEP $1 FAIL $2"; halt; }

IP='' DUR=sync NOSYNC=0
# shellcheck disable=SC2013 # the command line is one line of words
for w in $(cat /proc/cmdline); do
	case $w in
	pc.ip=*) IP=${w#*=} ;;
	pc.dur=*) DUR=${w#*=} ;;
	pc.nosync=*) NOSYNC=${w#*=} ;;
	esac
done

while read -r m args; do
	[ -n "$m" ] || continue
	# shellcheck disable=SC2086 # module parameters, split on purpose
	insmod "/lib/modules/e2e/$m.ko" $args || die modules "insmod $m"
done </etc/e2e/modules
say "STEP modules ok"

ip link set lo up
ip link set eth0 up || die network "no eth0"
ip addr add "$IP" dev eth0 || die network "ip addr add $IP"
say "STEP network ok $IP"

# No write-back but the programs' own flushes: no periodic flusher, no
# expiry, no background threshold within reach, no periodic journal commit.
echo 0 >/proc/sys/vm/dirty_writeback_centisecs
echo 2000000000 >/proc/sys/vm/dirty_expire_centisecs
echo 90 >/proc/sys/vm/dirty_background_ratio
echo 95 >/proc/sys/vm/dirty_ratio
mkdir -p /state
mount -t ext4 -o commit=3600 /dev/vda /state || die disk "mount /dev/vda"
say "STEP disk ok $(grep ' /state ' /proc/mounts)"

# A ThreadSanitizer build of nlmd (NLMD=build/tsan/nlmd): no lock-order
# check, as in tools/test.sh -- Berkeley DB's mutexes, reused for
# unrelated objects in its regions, give reports inside libdb only, and
# any report makes nlmd (--dump-state too) exit 66.  Other builds ignore it.
export TSAN_OPTIONS=detect_deadlocks=0

if [ -d /state/nlmd ]; then
	# What the cut left, for the record (log file numbers and sizes).
	say "FILES $(cd /state/nlmd && ls -l | awk 'NR > 1 { printf "%s:%s ", $NF, $5 }')"
	say "DUMP BEGIN"
	nlmd --dump-state -s /state/nlmd
	say "DUMP END rc=$?"
fi
mkdir -p /state/nlmd

if [ "$NOSYNC" != 0 ]; then
	# ASan wants to be first among the libraries; the shim is first.
	export LD_PRELOAD=/usr/lib/nosync.so
	export ASAN_OPTIONS=verify_asan_link_order=0
	# 2: the event loop's own flushes still go through (nosync.c).
	[ "$NOSYNC" = 2 ] && export NOSYNC_EXCEPT_MAIN=1
fi
say "START nlmd durability=$DUR nosync=$NOSYNC"
nlmd -F -s /state/nlmd --nlm-port 4045 --nsm-port 4046 --no-rpcbind \
    --durability="$DUR" --reclaim-check=strict --grace-period=30 \
    --callback-retry-min-ms=100 --control-socket=/run/nlmd/nlmd.sock
say "EXIT nlmd rc=$?"
halt
