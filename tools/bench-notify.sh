#!/bin/bash
# bench-notify.sh - how fast nlmd tells N hosts that it restarted, and how
# soon grace ends once they reclaim.
#
#   bash tools/bench-notify.sh [N]        (default 1000; build/debug/nlmd)
#
# A client namespace (10.97.0.2, its own rpcbind, nsmpeer as its status
# monitor) holds one lock for each of N simulated hosts (caller names
# sim0 .. sim<N-1>).  nlmd is killed (SIGKILL) and started again on the
# same state; the script prints, from nlmd's restart (the exec):
#   - when nlmd was ready (listeners open, registered);
#   - when the client's status monitor had all N SM_NOTIFYs, and the rate;
#   - when every host had reclaimed (nsmpeer lockmany ... reclaim, started
#     when the notifications were in), and when grace ended (nlmd's log).
# Not a test: numbers for the issue notes.  Needs root (namespaces).

. "$(dirname "$0")/../tests/integration/lib.sh"

N=${1:-1000}
BUILD=${BUILD:-debug}
if [ -z "${ITEST_INSIDE:-}" ]; then
	make -s -C "$ITEST_TOP" BUILD="$BUILD" all nsm-itest-bins || exit 1
fi
itest_enter "$@"
W=$ITEST_WORK
PEER=$ITEST_TOP/build/$BUILD/tests/nsm/nsmpeer
NS=nbench-$$
SRV=10.97.0.1
CLI=10.97.0.2
trap 'itest_cleanup; ip netns del $NS 2>/dev/null' EXIT

itest_start_rpcbind
ip netns add $NS
ip link add nb$$s type veth peer name nb$$c netns $NS
ip addr add $SRV/24 dev nb$$s
ip link set nb$$s up
ip -n $NS addr add $CLI/24 dev nb$$c
ip -n $NS link set nb$$c up
ip -n $NS link set lo up
mkdir -p "$W/run/rpcbind"
ON=(ip netns exec $NS unshare --mount --propagation private
    sh -c 'mount --bind "$0" /run && exec "$@"' "$W/run")
"${ON[@]}" rpcbind -f -w &
ITEST_PIDS+=($!)
itest_wait "${ON[@]}" rpcinfo -p 127.0.0.1 || { echo "no rpcbind"; exit 1; }

itest_start_nlmd -d --grace-period=90 --max-hosts=$((N + 100)) \
    --max-hosts-per-address=$((N + 100))
"${ON[@]}" "$PEER" lockmany $SRV sim "$N" bench-file
"${ON[@]}" "$PEER" statd "$N" 120 >"$W/statd.log" 2>&1 &
ITEST_PIDS+=($!)
itest_wait grep -q ready "$W/statd.log"

kill -9 "$NLMD_PID"
wait "$NLMD_PID" 2>/dev/null
itest_forget "$NLMD_PID"
t0=$(date +%s%3N)
itest_start_nlmd -d --grace-period=90 --max-hosts=$((N + 100)) \
    --max-hosts-per-address=$((N + 100))
t_ready=$(date +%s%3N)
end=$((SECONDS + 120))
while [ "$(grep -c '^notify' "$W/statd.log")" -lt "$N" ] &&
    [ $SECONDS -lt $end ]; do
	sleep 0.01
done
t_notified=$(date +%s%3N)
got=$(grep -c '^notify' "$W/statd.log")
span=$(awk '/^notify/ {if (f == "") f = $2; l = $2} END {print l - f}' \
    "$W/statd.log")
"${ON[@]}" "$PEER" lockmany $SRV sim "$N" bench-file reclaim
t_reclaimed=$(date +%s%3N)
itest_wait grep -q "grace period over" "$NLMD_LOG"
grace=$(grep "grace period over" "$NLMD_LOG" | tail -1)
echo "hosts: $N"
echo "restart -> nlmd ready: $((t_ready - t0)) ms"
echo "restart -> $got/$N SM_NOTIFY received: $((t_notified - t0)) ms;" \
    "first to last $span ms at the receiver" \
    "($(awk -v n="$got" -v s="$span" 'BEGIN {if (s < 1) s = 1; printf "%.0f", n * 1000 / s}') notifications/s)"
echo "restart -> all $N reclaimed: $((t_reclaimed - t0)) ms"
echo "nlmd: $grace"
echo "nlmd: notifications retransmitted: $(grep -c 'SM_NOTIFY mon_name .*attempt [2-9]' "$NLMD_LOG" || true)"
itest_finish
