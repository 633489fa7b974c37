#!/bin/bash
# bench-ctl-queue.sh - what `nlmctl status --locks' of a file with a long
# queue of blocked LOCKs does to the other clients and to nlmd's loop.
#
#   bash tools/bench-ctl-queue.sh [N]     (default 100000; build/release)
#
# In a private network namespace: nlmd (durability log, no rpcbind,
# limits raised to N); nlmbench -m queue -K queues N blocking LOCKs of N
# owners from 127.0.0.2 on one file behind a lock of another host and
# keeps them queued.  Then: the time of three dumps of that file
# (nlmctl status --locks --fh), and 5 s of 16 clients doing LOCK+UNLOCK
# on their own files, first alone, then while dumps of the file run
# nonstop; their p50, p99 and longest call, and nlmd's longest loop turn
# (nlmd_loop_turn_max_seconds) after the queue was filled and after the
# dumps.  Not a test: numbers for the issue notes.  Needs root.

set -u
N=${1:-100000}
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
O=$TOP/build/release
. "$TOP/tools/bench-lib.sh"
bench_reexec bench-ctl-queue.sh "$0" "$@"

ip link set lo up
WORK=$(mktemp -d /var/tmp/nlmd-bench-ctlq.XXXXXX)
export NLMCTL_SOCKET=$WORK/ctl.sock
NLMD_PID=
QPID=
cleanup() {
	[ -n "$QPID" ] && kill -9 "$QPID" 2>/dev/null
	[ -n "$NLMD_PID" ] && kill -9 "$NLMD_PID" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

lim=$((N + 1000))
bench_nlmd "$WORK/log" -F -s "$WORK/state" --nlm-port 4045 --nsm-port 4046 \
    --no-rpcbind --durability=log --control-socket="$NLMCTL_SOCKET" \
    --max-waiters=$lim --max-waiters-per-host=$lim --max-locks-per-host=$lim
metric() { "$O/nlmctl" metrics | awk -v k="$1" '$1 == k {print $2}'; }
field() { tr ' ' '\n' <<<"$2" | sed -n "s/^$1=//p"; }

echo "nlmd status-dump-of-a-queue benchmark: $(date -u +%FT%TZ), $(nproc)" \
    "CPUs; nlmd $(cd "$TOP" && git rev-parse --short HEAD); $N waiters"
"$O/nlmbench" -p 4045 -m queue -k "$N" -K -b 127.0.0.2 -N idle \
    >"$WORK/queue" 2>&1 &
QPID=$!
for i in $(seq 1 1200); do
	grep -qs "kept (-K)" "$WORK/queue" && break
	kill -0 "$QPID" 2>/dev/null || break
	sleep 0.1
done
grep -qs "kept (-K)" "$WORK/queue" || { cat "$WORK/queue"; exit 1; }
FH=$(sed -n 's/.* queued on \([^ ]*\) in .*/\1/p' "$WORK/queue")
FHX=$(printf '%s' "$FH" | od -An -tx1 | tr -d ' \n')
echo "$(grep -o "queued on .*" "$WORK/queue" | sed 's/;.*//');" \
    "nlmd waiters: $(metric nlmd_waiters); longest turn so far:" \
    "$(metric nlmd_loop_turn_max_seconds) s"

for i in 1 2 3; do
	t=$(date +%s%3N)
	n=$("$O/nlmctl" status --locks --fh "$FHX" | grep -c '^waiter ')
	echo "dump $i: $n waiter lines in $(( $(date +%s%3N) - t )) ms" \
	    "(nlmctl status --locks --fh, table output)"
done
echo "longest turn so far: $(metric nlmd_loop_turn_max_seconds) s"

alone=$("$O/nlmbench" -p 4045 -t 5 -w 0.5 -m lockunlock -c 16 -n alone)
touch "$WORK/dumping"
( while [ -e "$WORK/dumping" ]; do
	"$O/nlmctl" status --locks --fh "$FHX" >/dev/null
done ) &
DUMPER=$!
with=$("$O/nlmbench" -p 4045 -t 5 -w 0.5 -m lockunlock -c 16 -n with)
rm -f "$WORK/dumping"
wait $DUMPER 2>/dev/null
for k in alone with; do
	r=${!k}
	printf '16 clients LOCK+UNLOCK %-5s p50 %s us, p99 %s us, max %s us,' \
	    "$k:" "$(field p50_us "$r")" "$(field p99_us "$r")" \
	    "$(field max_us "$r")"
	echo " $(field ops_s "$r") pairs/s"
done
echo "p99 ratio (dumping / alone): $(awk -v a="$(field p99_us "$alone")" \
    -v b="$(field p99_us "$with")" 'BEGIN {printf "%.2f", b / a}')"
echo "longest turn after the dumps: $(metric nlmd_loop_turn_max_seconds) s"
