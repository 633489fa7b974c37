#!/bin/bash
# bench-nlm.sh - nlmd throughput/latency benchmark (issue 4, Performance)
# and the black-hole callback benchmark (issue 4, Tests).
#
#   tools/bench-nlm.sh            (root: runs in private namespaces)
#
# Everything runs inside a private network + mount namespace: loopback only
# (127.0.0.1 for nlmd and the load clients, 127.0.0.2 for the black-holed
# client), nlmd on ports 4045/4046 without rpcbind.
#
# 1. Matrix: nlmbench modes null, test, lockunlock, contended, hold for
#    1, 4, 16 and 64 clients over TCP and UDP against one release nlmd.
# 2. Ratios the issue asks for, measured in this run, NULL and LOCK+UNLOCK
#    interleaved BENCH_REPS times at 16 and 1 clients over TCP.  Printed
#    both ways: LOCK+UNLOCK pairs/s / NULL ops/s (a pair is two RPCs, so
#    this is bounded by ~0.5 when the transport is the limit) and
#    LOCK+UNLOCK RPCs/s / NULL RPCs/s (the cost of the lock work per RPC).
# 3. Generator check: NULL at 16 clients from one nlmbench process vs two
#    processes of 8 clients; if one generator were the limit, two would be
#    faster.
# 4. Black hole: a second nlmd with callbacks retried every
#    BENCH_BH_RETRY_MS; 16 clients run lockunlock with and without a
#    client at 127.0.0.2 holding a pending grant whose NLM port (variant
#    nlm) or whose rpcbind (variant rpcbind) drops everything; BENCH_REPS
#    rounds each, p99 medians and their ratio (target <= 1.2).
#
# Environment: BENCH_SECS (seconds per point, default 2), BENCH_REPS
# (default 3), BENCH_HOLD (locks held per client in mode hold, default
# 100), BENCH_BH_RETRY_MS (default 10), BENCH_NOBUILD=1 (use the binaries
# as they are).  Exit status 1 if any run counted an error.

set -u
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$TOP/tools/bench-lib.sh"	# bench_reap, bench_wait_for
O=$TOP/build/release
NLMD=$O/nlmd
BENCH=$O/nlmbench
SECS=${BENCH_SECS:-2}
REPS=${BENCH_REPS:-3}
HOLD=${BENCH_HOLD:-100}
BH_RETRY=${BENCH_BH_RETRY_MS:-10}

if [ -z "${BENCH_INSIDE:-}" ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "bench-nlm.sh: needs root (network namespace)" >&2
		exit 77
	fi
	if [ -z "${BENCH_NOBUILD:-}" ]; then
		cd "$TOP" || exit 2
		make -s BUILD=release all >/dev/null || exit 2
		if grep -q 'nlmbench.mk' GNUmakefile; then
			make -s BUILD=release build/release/nlmbench >/dev/null || exit 2
		else
			make -s -f GNUmakefile -f bench/nlmbench.mk \
			    BUILD=release build/release/nlmbench >/dev/null || exit 2
		fi
	fi
	export BENCH_INSIDE=1
	exec unshare --net --mount --propagation private -- bash "$0" "$@"
fi

ip link set lo up
WORK=$(mktemp -d /tmp/nlmd-bench.XXXXXX)
PIDS=()
FAILED=0
RESULTS=$WORK/results

cleanup() {
	bench_reap
	if [ "$FAILED" = 0 ]; then rm -rf "$WORK"; else echo "kept: $WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# start_nlmd NAME [flags...]: sets NLMD_PID
start_nlmd() {
	local name=$1
	shift
	"$NLMD" -F -s "$WORK/$name" --nlm-port 4045 --nsm-port 4046 \
	    --no-rpcbind "$@" >"$WORK/$name.log" 2>&1 &
	NLMD_PID=$!
	PIDS+=("$NLMD_PID")
	bench_wait_for 100 grep -q "nlmd ready" "$WORK/$name.log" && return 0
	echo "nlmd did not start:"; cat "$WORK/$name.log"; exit 1
}

stop_nlmd() {
	kill "$NLMD_PID" 2>/dev/null
	wait "$NLMD_PID" 2>/dev/null
}

# bench ARGS...: one nlmbench run, its line appended to $RESULTS
bench() {
	local out
	out=$("$BENCH" -P "$NLMD_PID" -t "$SECS" "$@")
	local rc=$?
	[ -n "$out" ] && echo "$out" >>"$RESULTS"
	if [ $rc != 0 ]; then
		touch "$WORK/failed"
		echo "FAILED (exit $rc): nlmbench $*" >&2
	fi
	echo "$out"
}

# field KEY LINE: the value of key=value in LINE
field() {
	echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p" | tr -d '%'
}

row() {
	local l=$1
	printf "%-10s %-4s %4s %10s %8s %8s %10s %5s %5s %6s\n" \
	    "$(field mode "$l")" "$(field proto "$l")" "$(field clients "$l")" \
	    "$(field ops_s "$l")" "$(field p50_us "$l")" "$(field p99_us "$l")" \
	    "$(field rpc_s "$l")" "$(field gen_cpu "$l")" \
	    "$(field srv_cpu "$l")" "$(field errors "$l")"
}

header() {
	printf "%-10s %-4s %4s %10s %8s %8s %10s %5s %5s %6s\n" mode proto \
	    clients ops/s p50_us p99_us rpc/s gen% srv% errors
}

# stats of numbers on stdin: "median min max"
stats() {
	sort -g | awk '{ v[NR] = $1 } END {
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
		printf "%.3f %.3f %.3f", m, v[1], v[NR] }'
}

echo "nlmd benchmark: $(date -u +%FT%TZ), $(nproc) CPUs, load average" \
    "$(cut -d' ' -f1-3 /proc/loadavg), ${SECS}s per point, $REPS reps"
echo "nlmd: $NLMD ($(cd "$TOP" && git rev-parse --short HEAD))"
T0=$(date +%s)

# ---- 1. matrix -----------------------------------------------------------
start_nlmd main
echo
echo "== 1. matrix (one nlmd, pid $NLMD_PID; hold: $HOLD locks held per client)"
header
for mode in null test lockunlock contended hold; do
	for proto in tcp udp; do
		for c in 1 4 16 64; do
			flags=(-m "$mode" -c "$c" -k "$HOLD")
			[ "$proto" = udp ] && flags+=(-u)
			row "$(bench "${flags[@]}")"
		done
	done
done

# ---- 2. ratios -------------------------------------------------------------
echo
echo "== 2. LOCK+UNLOCK vs NULL, TCP, interleaved, $REPS reps"
header
: >"$WORK/ratios"
for c in 16 1; do
	for r in $(seq 1 "$REPS"); do
		n=$(bench -m null -c "$c")
		l=$(bench -m lockunlock -c "$c")
		row "$n"; row "$l"
		awk -v c="$c" -v n="$(field ops_s "$n")" \
		    -v p="$(field ops_s "$l")" -v q="$(field rpc_s "$l")" \
		    'BEGIN { if (n > 0) printf "%s %.3f %.3f\n", c, p / n, q / n }' \
		    >>"$WORK/ratios"
	done
done
echo
printf "%-8s %-34s %-34s\n" clients "pairs/s / NULL ops/s (med min max)" \
    "LOCK+UNLOCK rpc/s / NULL (med min max)"
for c in 16 1; do
	[ "$c" = 16 ] && target=0.9 || target=0.8
	p=$(awk -v c="$c" '$1 == c { print $2 }' "$WORK/ratios" | stats)
	q=$(awk -v c="$c" '$1 == c { print $3 }' "$WORK/ratios" | stats)
	printf "%-8s %-34s %-34s target >= %s\n" "$c" "$p" "$q" "$target"
done

# ---- 3. generator check ----------------------------------------------------
echo
echo "== 3. generator check: NULL, 16 TCP clients, one process vs two of 8"
one=$(bench -m null -c 16)
"$BENCH" -P "$NLMD_PID" -t "$SECS" -m null -c 8 >"$WORK/g1" &
g1=$!
"$BENCH" -P "$NLMD_PID" -t "$SECS" -m null -c 8 >"$WORK/g2"
wait $g1
two=$(cat "$WORK/g1" "$WORK/g2" | awk '{ for (i = 1; i <= NF; i++)
	if ($i ~ /^ops_s=/) { sub("ops_s=", "", $i); s += $i } }
	END { printf "%.0f", s }')
srv2=$(field srv_cpu "$(cat "$WORK/g2")")
echo "one generator: $(field ops_s "$one") ops/s (gen $(field gen_cpu "$one")%," \
    "nlmd $(field srv_cpu "$one")%);" \
    "two generators: $two ops/s (nlmd ${srv2}%)"
stop_nlmd

# ---- 4. black hole -----------------------------------------------------------
echo
echo "== 4. black hole: 16 TCP clients lockunlock, with/without a client at" \
    "127.0.0.2 holding a pending grant (callbacks every ${BH_RETRY} ms)"
# A fresh nlmd for each kind: after the first, nlmd knows 127.0.0.2's
# NLM port, and the rpcbind kind would wait in vain for a look-up.
for kind in nlm rpcbind; do
	start_nlmd "bh-$kind" --callback-retry-min-ms="$BH_RETRY" \
	    --callback-retry-max-ms="$BH_RETRY"
	flags=(-m blackhole -c 16 -r "$REPS" -b 127.0.0.2)
	[ "$kind" = rpcbind ] && flags+=(-R)
	bench "${flags[@]}" | while read -r l; do
		case $l in
		mode=*) row "$l" | sed "s/\$/  $(echo "$l" |
		    grep -o 'blackhole=[a-z]*')/" ;;
		*) echo "$l" ;;
		esac
	done
	grep -h "callback\|rpcbind" "$WORK/bh-$kind.log" | tail -3
	stop_nlmd
done

echo
errs=$(awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^errors=/) {
	sub("errors=", "", $i); s += $i } } END { print s + 0 }' "$RESULTS")
echo "total errors: $errs; wall time $(($(date +%s) - T0)) s"
[ "$errs" = 0 ] && [ ! -e "$WORK/failed" ] || FAILED=1
exit $FAILED
