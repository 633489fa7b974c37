#!/bin/bash
# bench-ctl.sh - what `nlmctl status --locks' costs with many locks held:
# how long the dump takes, and what it does to other clients' latency.
#
#   bash tools/bench-ctl.sh [LOCKS]     (default 1000000; build/release)
#
# In a private network namespace: nlmd (durability log, no rpcbind) with
# LOCKS locks held by 64 clients of nlmbench on one shared file (the
# worst case for a dump: one file, one tree).  Then, twice 5 s of
# 16 clients doing LOCK+UNLOCK (nlmbench lockunlock), first alone, then
# while nlmctl dumps every lock again and again; and the time of single
# dumps.  Prints the p50/p99 of both runs and their ratio.  Not a test:
# numbers for the issue notes.  Needs root (namespaces).

set -u
LOCKS=${1:-1000000}
BUILD=${BUILD:-release}
TOP=$(cd "$(dirname "$0")/.." && pwd)
O=$TOP/build/$BUILD
if [ -z "${BENCH_INSIDE:-}" ]; then
	make -s -C "$TOP" BUILD="$BUILD" all bench || exit 1
	export BENCH_INSIDE=1
	exec unshare --net --mount --propagation private -- bash "$0" "$@"
fi
ip link set lo up
mount -t tmpfs tmpfs /run
W=$(mktemp -d /tmp/nlmd-bench-ctl.XXXXXX)
SOCK=$W/ctl.sock
trap 'kill $NLMD_PID 2>/dev/null; wait 2>/dev/null; rm -rf "$W"' EXIT

"$O/nlmd" -F -s "$W/state" --nlm-port 4045 --nsm-port 4046 --no-rpcbind \
    --durability=log --max-locks-per-host=10000000 --control-socket="$SOCK" \
    >"$W/nlmd.log" 2>&1 &
NLMD_PID=$!
for i in $(seq 100); do
	grep -qs "nlmd ready" "$W/nlmd.log" && break
	sleep 0.05
done
per=$(( (LOCKS + 63) / 64 ))
t=$(date +%s%3N)
"$O/nlmbench" -t 0.1 -m hold -K -c 64 -k "$per" >/dev/null ||
    { echo "nlmbench hold failed"; exit 1; }
echo "held $((64 * per)) locks in $(( $(date +%s%3N) - t )) ms; nlmd RSS" \
    "$(ps -o rss= -p "$NLMD_PID" | awk '{printf "%.0f MiB", $1 / 1024}')"

for i in 1 2 3; do
	t=$(date +%s%3N)
	n=$("$O/nlmctl" -s "$SOCK" status --locks | grep -c '^lock ')
	echo "dump $i: $n lock lines in $(( $(date +%s%3N) - t )) ms" \
	    "(nlmctl status --locks, table output)"
done
t=$(date +%s%3N)
c0=$(awk '{print $14 + $15}' /proc/$NLMD_PID/stat)
/usr/bin/time -f "%U %S" -o "$W/time" "$O/nlmctl" -s "$SOCK" status --locks \
    >/dev/null
c1=$(awk '{print $14 + $15}' /proc/$NLMD_PID/stat)
echo "dump to /dev/null: $(( $(date +%s%3N) - t )) ms; nlmd CPU" \
    "$(( (c1 - c0) * 10 )) ms, nlmctl CPU $(awk '{printf "%.0f", ($1 + $2) * 1000}' \
    "$W/time") ms"

field() { tr ' ' '\n' <<<"$2" | sed -n "s/^$1=//p"; }
alone=$("$O/nlmbench" -t 5 -m lockunlock -c 16)
touch "$W/dumping"
( while [ -e "$W/dumping" ]; do
	"$O/nlmctl" -s "$SOCK" status --locks >/dev/null
done ) &
DUMPER=$!
with=$("$O/nlmbench" -t 5 -m lockunlock -c 16)
rm -f "$W/dumping"
wait $DUMPER 2>/dev/null
echo "16 clients LOCK+UNLOCK alone:        p50 $(field p50_us "$alone") us," \
    "p99 $(field p99_us "$alone") us, $(field ops_s "$alone") pairs/s"
echo "16 clients while dumps run nonstop:  p50 $(field p50_us "$with") us," \
    "p99 $(field p99_us "$with") us, $(field ops_s "$with") pairs/s"
echo "p99 ratio: $(awk -v a="$(field p99_us "$alone")" -v b="$(field p99_us "$with")" \
    'BEGIN {printf "%.2f", b / a}')"
