#!/bin/bash
# bench-queue.sh - long queues of blocked LOCKs (issue 11, item 3).
#
#   tools/bench-queue.sh [N ...]     (root: private namespaces; default
#                                     10000 100000)
#
# For each N and each shape (exclusive on one byte; shared on N distinct
# bytes behind one exclusive lock of them all): a fresh nlmd (release
# build, durability log, limits raised to N) in a private network
# namespace; nlmbench -m queue queues N blocking LOCKs of N owners from
# 127.0.0.2 (where it answers rpcbind itself and reads the GRANTED_MSG
# callbacks), then the holder unlocks and every waiter unlocks as soon as
# it is granted, which passes the byte on.  Meanwhile 16 clients lock and
# unlock private files (lockunlock), and before it the same 16 alone.
# Printed per run: the cost per queued request (wall and nlmd CPU), per
# grant (wall: callback, UNLOCK and next grant; nlmd CPU), the clients'
# p99 with and without the queue, and nlmd's longest loop turn (from its
# exit log line).  Exit status 1 if a run failed.  BENCH_BUILD: the build
# to use (default release; test_benchcompare.sh runs a small N under asan).
# BENCH_WAITERS_NICE (default idle): the nice of the load generator's
# threads that play the N waiters, or idle for SCHED_IDLE.  On a 2-CPU
# machine they compete with nlmd and the 16 clients for the same CPUs;
# under SCHED_IDLE they stand for what they are in a deployment, other
# hosts, and the clients' p99 shows what nlmd's own work for the queue
# costs them.  BENCH_SHAPES: the shapes to run (default "exclusive
# shared").  BENCH_CB_MAX: nlmd's callback-max-per-host (default N +
# 1000: every grant called back at once).  NLMBENCH_WINDOWS=1: the clients' calls/s, p50 and p99 of
# each 1 s window beside the queue, and its phase (queueing, release).
# Nice 19 is not enough: one waiter thread kept a CPU to
# itself while the clients' thread waited 1.5-5 ms at a time for the
# other, beside nlmd (perf sched timehist; nlmbench.c, -N).  0: the
# waiters compete as equals.

set -u
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BENCH_BUILD:-release}
O=$TOP/build/$BUILD
if [ -z "${BENCH_INSIDE:-}" ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "bench-queue.sh: needs root (network namespace)" >&2
		exit 77
	fi
	make -s -C "$TOP" BUILD="$BUILD" all "build/$BUILD/nlmbench" \
	    >/dev/null || exit 2
	export BENCH_INSIDE=1
	exec unshare --net --mount --propagation private -- bash "$0" "$@"
fi
ip link set lo up
W=$(mktemp -d /var/tmp/nlmd-bench-queue.XXXXXX)
NLMD_PID=
FAILED=0
cleanup() {
	[ -n "$NLMD_PID" ] && kill -9 "$NLMD_PID" 2>/dev/null
	rm -rf "$W"
}
trap cleanup EXIT
[ $# -gt 0 ] || set -- 10000 100000

echo "nlmd queue benchmark: $(date -u +%FT%TZ), $(nproc) CPUs, load" \
    "average $(cut -d' ' -f1-3 /proc/loadavg); nlmd $(cd "$TOP" &&
    git rev-parse --short HEAD); waiters at nice ${BENCH_WAITERS_NICE:-idle}"
for n in "$@"; do
	for shape in ${BENCH_SHAPES:-exclusive shared}; do
		log=$W/nlmd-$n-$shape.log
		rm -rf "$W/state"
		lim=$((n + 1000))
		"$O/nlmd" -F -s "$W/state" --nlm-port 4045 --nsm-port 4046 \
		    --no-rpcbind --durability=log --max-waiters=$lim \
		    --max-waiters-per-host=$lim --max-locks-per-host=$lim \
		    --callback-max-per-host="${BENCH_CB_MAX:-$lim}" \
		    >"$log" 2>&1 &
		NLMD_PID=$!
		for i in $(seq 1 100); do
			grep -qs "nlmd ready" "$log" && break
			sleep 0.05
		done
		flag=
		[ $shape = shared ] && flag=-S
		"$O/nlmbench" -P "$NLMD_PID" -m queue -k "$n" $flag -c 16 \
		    -t 2 -b 127.0.0.2 -N "${BENCH_WAITERS_NICE:-idle}" >"$W/out" 2>&1 || FAILED=1
		kill "$NLMD_PID"
		wait "$NLMD_PID" 2>/dev/null
		NLMD_PID=
		grep -v "^mode=lockunlock" "$W/out"
		echo "  nlmd $(grep -o "longest loop turn: .*" "$log")"
	done
done
exit $FAILED
