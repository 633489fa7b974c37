#!/bin/bash
# bench-ab.sh - two nlmd builds side by side: which one is cheaper per call?
#
#   tools/bench-ab.sh OLD_NLMD [NEW_NLMD]     (root: private namespaces)
#
# On this VM single points of the same build vary by 20-40 %, so a change
# of a few percent shows only when both builds run in the same minutes.
# Both nlmd binaries (NEW_NLMD defaults to this tree's release build) start
# in one private network + mount namespace on loopback (A on ports
# 4045/4046, B on 5045/5046, no rpcbind, each its own state directory),
# and BENCH_REPS rounds (default 10) each run NULL then LOCK+UNLOCK against
# A, then against B (nlmbench of this tree: its own NLM XDR).  Printed per
# round and build: NULL and LOCK+UNLOCK calls/s, their ratio, and the
# server's CPU per call (utime+stime of all of nlmd's threads over
# nlmbench's measuring window / calls); at the end, per build, the median (least-
# greatest) of each.  A worktree of an older commit makes OLD_NLMD:
#   git worktree add /tmp/old REV && make -C /tmp/old BUILD=release all
#
# Environment: BENCH_REPS, BENCH_SECS (per point, default 2),
# BENCH_CLIENTS (default 16), BENCH_UDP=1 (UDP instead of TCP),
# BENCH_AUTH=sys (AUTH_SYS, as the Linux client; default AUTH_NONE),
# BENCH_DURABILITY (default log; BENCH_DURABILITY_A and _B set it per
# build: the same binary twice with none and log prices persistence),
# BENCH_NOBUILD=1, BENCH_PIN=1 (both
# servers on the last CPU, nlmbench on the others: bench-lib.sh's
# bench_pin).  Exit status 1 if a run counted an error.

set -u
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
O=$TOP/build/release
BENCH=$O/nlmbench
REPS=${BENCH_REPS:-10}
SECS=${BENCH_SECS:-2}
CLIENTS=${BENCH_CLIENTS:-16}

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	echo "usage: tools/bench-ab.sh OLD_NLMD [NEW_NLMD]" >&2
	exit 2
fi
. "$TOP/tools/bench-lib.sh"
bench_reexec bench-ab.sh "$0" "$@"

A=$1
B=${2:-$O/nlmd}
for bin in "$A" "$B"; do
	[ -x "$bin" ] || { echo "bench-ab.sh: $bin: not executable" >&2; exit 2; }
done
ip link set lo up
WORK=$(mktemp -d /var/tmp/nlmd-bench-ab.XXXXXX)
PIDS=()
FAILED=0
cleanup() {
	bench_reap 9
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

OPTS=()
PROTO=TCP
bench_pin
[ -n "${BENCH_UDP:-}" ] && { OPTS+=(-u); PROTO=UDP; }
[ "${BENCH_AUTH:-none}" = sys ] && OPTS+=(-A)

DUR_A=${BENCH_DURABILITY_A:-${BENCH_DURABILITY:-log}}
DUR_B=${BENCH_DURABILITY_B:-${BENCH_DURABILITY:-log}}

# start NAME BIN PORT DURABILITY: sets PID_<NAME>
start() {
	local log=$WORK/$1.log
	mkdir -p "$WORK/$1"
	# Each its own control socket: a second nlmd refuses one in use.
	"${SRV_PIN[@]}" "$2" -F -s "$WORK/$1" --nlm-port "$3" --nsm-port $(($3 + 1)) \
	    --no-rpcbind --durability="$4" \
	    --control-socket="$WORK/$1.sock" >"$log" 2>&1 &
	PIDS+=("$!")
	eval "PID_$1=$!"
	bench_wait_for 200 grep -qs "nlmd ready" "$log" && return 0
	echo "bench-ab.sh: $2 did not start:"; tail "$log"; exit 1
}

# point PID PORT MODE: prints "calls/s us-per-call" (nlmbench -P reads
# the server's CPU over its measuring window: all threads, utime+stime)
point() {
	local out n c
	out=$("${GEN_PIN[@]}" "$BENCH" -P "$1" -p "$2" -t "$SECS" -m "$3" -c "$CLIENTS" \
	    "${OPTS[@]}")
	[ $? = 0 ] || { FAILED=1; echo "FAILED: nlmbench -m $3 -p $2" >&2; }
	n=$(echo "$out" | tr ' ' '\n' | sed -n 's/^rpc_s=//p')
	c=$(echo "$out" | tr ' ' '\n' | sed -n 's/^srv_cpu=//p' | tr -d '%')
	awk -v n="${n:-0}" -v c="${c:-0}" 'BEGIN {
		if (n > 0) printf "%d %.2f", n, c / 100 / n * 1e6
		else print "0 0" }'
}

# stats FMT: median (least-greatest) of the numbers on stdin
stats() {
	sort -g | awk -v f="$1" '{ v[NR] = $1 } END {
		if (NR == 0) { print "-"; exit }
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf f " (" f "-" f ")", m, v[1], v[NR] }'
}

start a "$A" 4045 "$DUR_A"
start b "$B" 5045 "$DUR_B"
echo "bench-ab: $(date -u +%FT%TZ), $(nproc) CPUs, load $(cut -d' ' -f1-3 \
    /proc/loadavg); $CLIENTS $PROTO clients," \
    "AUTH_${BENCH_AUTH:-none}, durability A $DUR_A, B $DUR_B," \
    "$REPS rounds of ${SECS} s per point$PIN_NOTE"
echo "A: $A"
echo "B: $B"
printf "%5s %s %9s %9s %7s %8s %8s\n" round build "NULL/s" "LU/s" ratio \
    "NULL us" "LU us"
: >"$WORK/r"
for r in $(seq 1 "$REPS"); do
	for who in a b; do
		eval "pid=\$PID_$who"
		port=4045
		[ "$who" = b ] && port=5045
		read -r nn nu <<<"$(point "$pid" "$port" null)"
		read -r ln lu <<<"$(point "$pid" "$port" lockunlock)"
		ratio=$(awk -v l="$ln" -v n="$nn" 'BEGIN {
		    if (n > 0) printf "%.3f", l / n; else print 0 }')
		printf "%5s %5s %9s %9s %7s %8s %8s\n" "$r" "$who" "$nn" "$ln" \
		    "$ratio" "$nu" "$lu"
		echo "$who $nn $ln $ratio $nu $lu" >>"$WORK/r"
	done
done
echo
echo "medians (least-greatest) over $REPS rounds:"
for who in a b; do
	f() { awk -v w="$who" -v c="$1" '$1 == w { print $c }' "$WORK/r" |
	    stats "$2"; }
	echo "$who: LU/NULL $(f 4 %.3f); CPU per LU call $(f 6 %.2f) us;" \
	    "per NULL call $(f 5 %.2f) us; LU calls/s $(f 3 %.0f)"
done
exit "$FAILED"
