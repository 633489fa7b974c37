#!/bin/bash
# bench-release.sh - what releasing one host's many locks costs the other
# clients: the longest turn of nlmd's event loop
# (nlmd_loop_turn_max_seconds) and the other clients' latency while one
# host's locks go at once.
#
#   bash tools/bench-release.sh [LOCKS]    (default 200000; build/release)
#
# In a private network namespace: nlmd (durability log, limits raised),
# one nlmbench client (host held-0) takes LOCKS locks and keeps them;
# then 4 other clients lock and unlock for 4 s while, 1 s in, the host
# sends FREE_ALL (with BENCH_HOW=ctl it is released by `nlmctl release
# --host held-0` instead).  Prints the longest turn
# before and after, how long the release took and the clients' p99 and
# max latency.  Not a test: numbers for the notes.  Needs root
# (namespaces).
set -u
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
O=$TOP/build/release
N=${1:-200000}

. "$TOP/tools/bench-lib.sh"
bench_reexec bench-release.sh "$0" "$@"

ip link set lo up
WORK=$(mktemp -d /var/tmp/nlmd-bench-release.XXXXXX)
export NLMCTL_SOCKET=$WORK/ctl.sock
NLMD_PID=
cleanup() {
	[ -n "$NLMD_PID" ] && kill -9 "$NLMD_PID" 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

bench_nlmd "$WORK/log" -F -s "$WORK/state" --nlm-port 4045 --nsm-port 4046 \
    --no-rpcbind --durability=log --control-socket="$NLMCTL_SOCKET" \
    --max-locks=100000000 --max-locks-per-host=100000000
metric() { "$O/nlmctl" metrics | awk -v k="$1" '$1 == k {print $2}'; }

"$O/nlmbench" -p 4045 -P "$NLMD_PID" -n held -m hold -c 1 -k "$N" -K -t 0.1 |
    tr ' ' '\n' | grep -E '^(held|setup_s|errors)='
echo "locks: $(metric nlmd_locks); longest turn so far:" \
    "$(metric nlmd_loop_turn_max_seconds) s"
"$O/nlmbench" -p 4045 -P "$NLMD_PID" -m lockunlock -c 4 -w 0 -t 1 |
    tr ' ' '\n' | grep -E '^(ops_s|p50_us|p99_us|max_us)=' | paste -sd' ' |
    sed 's/^/before the release: /'
echo "longest turn so far: $(metric nlmd_loop_turn_max_seconds) s"
"$O/nlmbench" -p 4045 -P "$NLMD_PID" -m lockunlock -c 4 -w 0 -t 4 \
    >"$WORK/during" &
B=$!
sleep 1
if [ "${BENCH_HOW:-free_all}" = ctl ]; then
	t=$(date +%s%3N)
	"$O/nlmctl" release --host held-0 | tail -1
	echo "release answered in $(( $(date +%s%3N) - t )) ms"
else
	# NLM v4 FREE_ALL (procedure 23) {name "held-0", state 5}, AUTH_NONE,
	# one datagram from 127.0.0.1 (held-0's address).
	printf '\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x02\x00\x01\x86\xb5\x00\x00\x00\x04\x00\x00\x00\x17\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x06held-0\x00\x00\x00\x00\x00\x05' \
	    >/dev/udp/127.0.0.1/4045
	t=$(date +%s%3N)
	# The 4 other clients hold at most 4 at any time.
	while [ "$(metric nlmd_locks)" -gt 4 ] &&
	    [ $(( $(date +%s%3N) - t )) -lt 5000 ]; do
		sleep 0.01
	done
	echo "FREE_ALL sent: $(metric nlmd_locks) locks left after" \
	    "$(( $(date +%s%3N) - t )) ms; releases in pieces:" \
	    "$(metric nlmd_host_releases_in_pieces_total)"
fi
wait $B
tr ' ' '\n' <"$WORK/during" | grep -E '^(ops_s|p50_us|p99_us|max_us)=' |
    paste -sd' ' | sed 's/^/during the release: /'
echo "locks: $(metric nlmd_locks); longest turn so far:" \
    "$(metric nlmd_loop_turn_max_seconds) s"
