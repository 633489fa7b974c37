#!/bin/bash
# bench-persist.sh - what persistence costs (issue 8, Performance).
#
#   tools/bench-persist.sh        (root: runs in private namespaces)
#
# Everything runs in a private network + mount namespace on loopback, nlmd
# (release build) on ports 4045/4046 without rpcbind, load from
# build/release/nlmbench (its own NLM XDR, independent of nlmd's).
#
# 1. Throughput per durability: for none, log and sync, a fresh nlmd; NULL
#    and LOCK+UNLOCK interleaved BENCH_REPS times at 16 TCP clients (and,
#    for sync, 1 and 64).  Printed per point: LOCK+UNLOCK RPCs/s divided by
#    NULL RPCs/s (median, min, max), server CPU per LOCK or UNLOCK call
#    (nlmd's utime+stime over the window / calls), and from nlmd's own
#    counters the commits and disk flushes per second and the requests per
#    flush (group commit: one flush per loop turn, not per request).
# 2. Restart: BENCH_LOCKS locks (default 1,000,000) taken by 64 clients
#    (nlmbench mode hold, durability log), nlmd killed with SIGKILL, then
#    started again: the time from exec to the first LOCK answered, split
#    into open+recovery and load as nlmd logs them, and the store size per
#    lock.
#
# Environment: BENCH_SECS (seconds per point, default 2), BENCH_REPS
# (default 3), BENCH_LOCKS, BENCH_NOBUILD=1, BENCH_DURABILITIES (part 1's,
# default "none log sync"; empty: part 2 only), BENCH_NLMD_OPTS (more
# nlmd options, e.g. --store-cache-mib=16), BENCH_PIN=1 (nlmd on the last
# CPU, nlmbench on the others: bench-lib.sh's bench_pin).  BENCH_LOCKS=0
# skips part 2.  Exit status 1 if any run counted an error.

set -u
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
O=$TOP/build/release
NLMD=$O/nlmd
BENCH=$O/nlmbench
SECS=${BENCH_SECS:-2}
REPS=${BENCH_REPS:-3}
LOCKS=${BENCH_LOCKS:-1000000}

. "$TOP/tools/bench-lib.sh"
bench_reexec bench-persist.sh "$0" "$@"

bench_pin
ip link set lo up
WORK=$(mktemp -d /var/tmp/nlmd-bench-persist.XXXXXX)
PIDS=()
FAILED=0
RESULTS=$WORK/results
: >"$RESULTS"

cleanup() {
	bench_reap 9
	if [ "$FAILED" = 0 ]; then rm -rf "$WORK"; else echo "kept: $WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

now_ms() { date +%s%3N; }

# start_nlmd STATE LOG [flags...]: sets NLMD_PID, waits for "nlmd ready"
start_nlmd() {
	local state=$1 log=$2 i
	shift 2
	"${SRV_PIN[@]}" "$NLMD" -F -s "$state" --nlm-port 4045 --nsm-port 4046 \
	    --no-rpcbind --grace-period=600 ${BENCH_NLMD_OPTS:-} "$@" \
	    >>"$log" 2>&1 &
	NLMD_PID=$!
	PIDS+=("$NLMD_PID")
	for i in $(seq 1 1200); do
		n=$(grep -cs "nlmd ready" "$log")
		[ "${n:-0}" -gt "${READY_BEFORE:-0}" ] && return 0
		kill -0 "$NLMD_PID" 2>/dev/null || break
		sleep 0.05
	done
	echo "nlmd did not start:"; tail "$log"; FAILED=1; exit 1
}

stop_nlmd() {
	kill "$NLMD_PID" 2>/dev/null
	wait "$NLMD_PID" 2>/dev/null
}

bench() {
	local out rc
	out=$("${GEN_PIN[@]}" "$BENCH" -P "$NLMD_PID" -t "$SECS" "$@")
	rc=$?
	echo "$out" >>"$RESULTS"
	[ $rc = 0 ] || { FAILED=1; echo "FAILED (exit $rc): nlmbench $*" >&2; }
	echo "$out"
}

field() {
	echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p" | tr -d '%'
}

stats() {
	sort -g | awk '{ v[NR] = $1 } END {
		if (NR == 0) { print "-"; exit }
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
		printf "%.3f %.3f %.3f", m, v[1], v[NR] }'
}

# nlmd's "store: N commits, M flushed to disk" line at exit
store_counts() {
	sed -n 's/.*store: \([0-9]*\) commits, \([0-9]*\) flushed.*/\1 \2/p' \
	    "$1" | tail -1
}

echo "nlmd persistence benchmark: $(date -u +%FT%TZ), $(nproc) CPUs," \
    "load average $(cut -d' ' -f1-3 /proc/loadavg), ${SECS}s per point," \
    "$REPS reps$PIN_NOTE"
echo "nlmd: $NLMD ($(cd "$TOP" && git rev-parse --short HEAD)); state in" \
    "$WORK ($(df -T "$WORK" | awk 'NR == 2 { print $2 }'))"
T0=$(date +%s)

# ---- 1. throughput per durability ----------------------------------------
echo
echo "== 1. LOCK+UNLOCK vs NULL over TCP, per durability"
printf "%-6s %4s  %-24s %9s %9s %9s %9s %9s\n" durab clients \
    "rpc ratio (med min max)" "lk rpc/s" "us/call" "commit/s" "flush/s" \
    "req/commit"
for dur in ${BENCH_DURABILITIES-none log sync}; do
	clients="16"
	[ "$dur" = sync ] && clients="1 16 64"
	for c in $clients; do
		state=$WORK/tp-$dur-$c
		log=$WORK/tp-$dur-$c.log
		READY_BEFORE=0 start_nlmd "$state" "$log" --durability="$dur"
		: >"$WORK/r"
		for r in $(seq 1 "$REPS"); do
			n=$(bench -m null -c "$c")
			l=$(bench -m lockunlock -c "$c")
			echo "$(field rpc_s "$n") $(field rpc_s "$l") $(field srv_cpu "$l")" >>"$WORK/r"
		done
		stop_nlmd
		read -r commits flushes <<<"$(store_counts "$log")"
		ratio=$(awk '$1 > 0 { print $2 / $1 }' "$WORK/r" | stats)
		lk=$(awk '{ print $2 }' "$WORK/r" | stats | cut -d' ' -f1)
		cpu=$(awk '$2 > 0 { print $3 / 100 / $2 * 1e6 }' "$WORK/r" |
		    stats | cut -d' ' -f1)
		# Commits happen only in the LOCK+UNLOCK windows.
		win=$(awk -v s="$SECS" -v r="$REPS" 'BEGIN { print s * r }')
		printf "%-6s %4s  %-24s %9.0f %9.1f %9.0f %9.0f %9s\n" "$dur" "$c" \
		    "$ratio" "$lk" "$cpu" "$(awk -v x="${commits:-0}" -v w="$win" \
		    'BEGIN { print x / w }')" "$(awk -v x="${flushes:-0}" \
		    -v w="$win" 'BEGIN { print x / w }')" "$(awk \
		    -v c="${commits:-0}" -v l="$lk" -v w="$win" 'BEGIN {
		    if (c > 0) printf "%.1f", l * w / c; else print "-" }')"
	done
done

# ---- 2. restart with many stored locks -------------------------------------
if [ "$LOCKS" = 0 ]; then
	echo
	echo "total errors: $(awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^errors=/) {
	    sub("errors=", "", $i); s += $i } } END { print s + 0 }' "$RESULTS")"
	exit $FAILED
fi
echo
echo "== 2. restart with $LOCKS stored locks (durability log, SIGKILL)"
state=$WORK/restart
log=$WORK/restart.log
READY_BEFORE=0 start_nlmd "$state" "$log" --durability=log
per=$(( (LOCKS + 63) / 64 ))
t=$(now_ms)
out=$("$BENCH" -P "$NLMD_PID" -t 0.1 -m hold -K -c 64 -k "$per")
echo "$out" >>"$RESULTS"
echo "took $((64 * per)) locks in $(( ($(now_ms) - t) / 1000 )) s" \
    "(nlmd $(ps -o rss= -p "$NLMD_PID" | awk '{ printf "%.0f", $1 / 1024 }') MiB RSS)"
kill -9 "$NLMD_PID"
wait "$NLMD_PID" 2>/dev/null
du_b=$(du -sb "$state" | cut -f1)
logs_b=$(du -cb "$state"/log.* 2>/dev/null | tail -1 | cut -f1)
echo "state directory $(awk -v b="$du_b" 'BEGIN { printf "%.0f MiB", b / 1048576 }')" \
    "($(awk -v b="$du_b" -v n="$((64 * per))" 'BEGIN { printf "%.0f", b / n }') bytes per lock;" \
    "of which log files $(awk -v b="${logs_b:-0}" 'BEGIN { printf "%.0f MiB", b / 1048576 }'))"
for run in 1 2 3; do
	READY_BEFORE=$(grep -c "nlmd ready" "$log")
	t=$(now_ms)
	READY_BEFORE=$READY_BEFORE start_nlmd "$state" "$log" --durability=log
	tr=$(( $(now_ms) - t ))
	first=$("$BENCH" -t 0.1 -m lockunlock -c 1)
	tf=$(( $(now_ms) - t ))
	openms=$(sed -n 's/.*opened and recovered in \([0-9]*\) ms.*/\1/p' "$log" | tail -1)
	recms=$(sed -n 's/.*environment and recovery \([0-9]*\) ms.*/\1/p' "$log" | tail -1)
	foldms=$(sed -n 's/.*journal fold \([0-9]*\) ms.*/\1/p' "$log" | tail -1)
	loadms=$(sed -n 's/.*loaded .* in \([0-9]*\) ms$/\1/p' "$log" | tail -1)
	echo "restart $run: ready after ${tr} ms (store open ${openms} ms:" \
	    "environment and recovery ${recms} ms, journal fold ${foldms} ms;" \
	    "load ${loadms} ms); LOCK answered (p50 $(field p50_us "$first") us)" \
	    "by ${tf} ms including the load generator's start;" \
	    "$(grep -o "loaded [0-9]* hosts, [0-9]* locks" "$log" | tail -1)"
	kill -9 "$NLMD_PID"
	wait "$NLMD_PID" 2>/dev/null
done

echo
errs=$(awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^errors=/) {
	sub("errors=", "", $i); s += $i } } END { print s + 0 }' "$RESULTS")
echo "total errors: $errs; wall time $(($(date +%s) - T0)) s"
[ "$errs" = 0 ] || FAILED=1
exit $FAILED
