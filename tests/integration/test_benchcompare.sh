#!/bin/bash
# test_benchcompare.sh - the comparison benchmark still works, and nlmd
# hands memory back after a peak.
#
#   1. tools/bench-compare.sh, shrunk to seconds (0.3 s points, 1 and 16
#      clients, 320 held locks): the echo server, nlmd and NFS-Ganesha's
#      NLM (FSAL MEM, with rpc.statd) all start, every point runs with no
#      error (Ganesha answers GRANTED only for the real NFSv3 handles
#      nlmbench got over MOUNT + CREATE: a made-up handle is refused; the
#      echo server GRANTs LOCK and UNLOCK blindly, the floor), and the
#      ratio table has a number for every server and transport.
#   2. 20,000 locks taken and released (nlmbench hold, 16 clients): nlmd
#      logs that it handed free memory back and counts it in the metric
#      nlmd_memory_trims_total.
#   3. tools/bench-queue.sh with 300 waiters: every waiter of both shapes
#      is granted (the shared release makes all 300 grantable at once and
#      nlmd grants them 8 a turn: without the turns that follow, the
#      run would stop at 8), beside 16 clients with no error; the waiters'
#      threads run under SCHED_IDLE (bench-queue's default).
#   4. tools/bench-uring.sh, shrunk (one 0.3 s round at 16 clients): the
#      echo server over epoll and over io_uring (echosrv -U) both answer
#      every NULL and LOCK+UNLOCK call with no error, the table has both
#      servers' numbers, and both stop cleanly (under ASan: nothing leaked,
#      connections still open at SIGTERM included).
#
# Needs root; Ganesha's FSAL MEM comes from make deps (nfs-ganesha-mem).
. "$(dirname "$0")/lib.sh"
itest_enter "$@"

B=${BUILD:-asan}
W=$ITEST_WORK
if ! make -s -C "$ITEST_TOP" BUILD="$B" "build/$B/nlmbench" \
    "build/$B/echosrv" "build/$B/nlmctl" >"$W/make.log" 2>&1; then
	echo "FATAL: building nlmbench/echosrv failed:"; cat "$W/make.log"
	exit 1
fi

# ---- 1. bench-compare, smoke -------------------------------------------------

if [ ! -e /usr/lib/x86_64-linux-gnu/ganesha/libfsalmem.so ]; then
	echo "SKIP (loudly): NFS-Ganesha's FSAL MEM is missing: make deps" \
	    "installs nfs-ganesha-mem"
	check "nfs-ganesha-mem installed" false
else
	BENCH_BUILD=$B BENCH_SECS=0.3 BENCH_CLIENTS="1 16" BENCH_HELD=320 \
	    BENCH_REPS=2 BENCH_MD="$W/compare.md" \
	    BENCH_HELD_GANESHA=320 BENCH_MEM_HELD=3200 BENCH_MEM_WAIT=2 \
	    bash "$ITEST_TOP/tools/bench-compare.sh" >"$W/compare.out" 2>&1
	rc=$?
	sed -e 's/^/    /' "$W/compare.out"
	check "bench-compare exits 0" [ "$rc" = 0 ]
	# Rows: server mode proto clients calls/s p50 p99 srv_us gen_us gen% errs
	awk '$1 ~ /^(echo|nlmd|ganesha)$/ && $3 ~ /^(tcp|udp)$/' \
	    "$W/compare.out" >"$W/rows"
	# Two repetitions of every point.
	for s in echo:16 nlmd:28 ganesha:28; do
		check "${s%%:*}: ${s#*:} points" \
		    [ "$(awk -v s="${s%%:*}" '$1 == s' "$W/rows" | wc -l)" = \
		    "${s#*:}" ]
	done
	check "every point: calls answered, no error" \
	    awk '$5 <= 0 || $11 != 0 { bad = 1 } END { exit bad || NR == 0 }' \
	    "$W/rows"
	check "ganesha locked by real handles (LOCK+UNLOCK points answered)" \
	    awk '$1 == "ganesha" && $2 == "lockunlock" && $5 > 0 { n++ }
	    END { exit n != 8 }' "$W/rows"
	check "markdown: one row per point (the median run)" \
	    [ "$(grep -c '^| \(echo\|nlmd\|ganesha\) |' "$W/compare.md")" = 36 ]
	check "memory line for nlmd and ganesha" \
	    [ "$(grep -c '^# \(nlmd\|ganesha\) memory: .* bytes per lock' \
	    "$W/compare.out")" = 2 ]
	check "ratio table: numbers for nlmd and ganesha, both transports" \
	    awk '$3 ~ /^(nlmd|ganesha)$/ && $4 ~ /^[0-9.]+$/ &&
	    $5 ~ /^[0-9.]+$/ && $8 ~ /^[0-9.]+$/ && $9 ~ /^[0-9.]+$/ { n++ }
	    END { exit n != 8 }' "$W/compare.out"
	# The floor of a LOCK+UNLOCK: the echo server GRANTs them blindly.
	check "ratio table: the echo server's LOCK+UNLOCK rows" \
	    awk '$3 == "echo" && $4 == "1.00" && $5 ~ /^[0-9.]+$/ &&
	    $8 ~ /^[0-9.]+$/ && $9 == "1.00" { n++ } END { exit n != 4 }' \
	    "$W/compare.out"
	check "ratio table: least-greatest over the two repetitions" \
	    awk '/least-greatest/ { t = 1 } t && $3 == "nlmd" &&
	    $5 ~ /^[0-9.]+-[0-9.]+$/ { n++ } END { exit n != 4 }' \
	    "$W/compare.out"
fi

# ---- 2. memory handed back ---------------------------------------------------

CTL=$(itest_tool nlmctl "$ITEST_TOP/build/$B/nlmctl")
BENCH=$(itest_tool nlmbench "$ITEST_TOP/build/$B/nlmbench")
itest_start_nlmd --no-rpcbind --durability=log \
    --control-socket="$W/ctl.sock"
"$BENCH" -A -p 4045 -P "$NLMD_PID" -t 0.3 -m hold -c 16 -k 1250 \
    >"$W/hold.out" 2>&1
check "20,000 locks taken and released, no error" \
    grep -q "held=20000 .*errors=0" "$W/hold.out"
trimmed() { grep -q "memory: locks down from .* free memory handed back" \
    "$NLMD_LOG"; }
# The check runs every 2 s.
for i in $(seq 1 50); do trimmed && break; sleep 0.2; done
rcheck "nlmd logged memory handed back" trimmed
"$CTL" -s "$W/ctl.sock" metrics >"$W/metrics.txt" 2>&1
check "metric nlmd_memory_trims_total counts it" \
    grep -q '^nlmd_memory_trims_total [1-9]' "$W/metrics.txt"
itest_stop_nlmd

# ---- 3. long queues, granted over turns --------------------------------------

BENCH_BUILD=$B bash "$ITEST_TOP/tools/bench-queue.sh" 300 >"$W/queue.out" 2>&1
rc=$?
sed -e 's/^/    /' "$W/queue.out"
check "bench-queue exits 0" [ "$rc" = 0 ]
for shape in exclusive-byte shared-ranges; do
	check "$shape: all 300 granted, alone and beside the clients" \
	    [ "$(grep -c "shape=$shape waiters=300 .*grants=300 " \
	    "$W/queue.out")" = 2 ]
	check "$shape: the 16 clients saw no error" \
	    grep -q "shape=$shape waiters=300 beside .*clients_errors=0" \
	    "$W/queue.out"
	check "$shape: the waiters ran under SCHED_IDLE (the default)" \
	    grep -q "shape=$shape waiters=300 beside .*waiters_nice=idle " \
	    "$W/queue.out"
done

# ---- 4. the io_uring floor, smoke --------------------------------------------

BENCH_BUILD=$B BENCH_NOBUILD=1 BENCH_SECS=0.3 BENCH_REPS=1 \
    BENCH_CLIENTS=16 bash "$ITEST_TOP/tools/bench-uring.sh" \
    >"$W/uring.out" 2>&1
rc=$?
sed -e 's/^/    /' "$W/uring.out"
if [ $rc = 77 ]; then
	# The kernel's to give, not make deps': skipped, not failed.
	itest_skip "section 4, io_uring against epoll" \
	    "io_uring is unavailable on this kernel (above)"
else
	check "bench-uring exits 0" [ "$rc" = 0 ]
	for m in null lockunlock; do
		check "bench-uring: $m row with both servers' numbers" \
		    grep -Eq "^16 +$m +[1-9][0-9]* .* [0-9.]+ \([0-9.]+-" \
		    "$W/uring.out"
	done
	check "both echo servers answered calls and stopped cleanly" \
	    [ "$(grep -Ec '^(epoll|uring): answered [1-9]' "$W/uring.out")" \
	    = 2 ]
fi
itest_finish
