#!/bin/bash
# bench-ctl-hosts.sh - what `nlmctl status` costs with many client hosts:
# how long the dump takes and the longest turn of nlmd's event loop
# (nlmd_loop_turn_max_seconds) before and after it.
#
#   bash tools/bench-ctl-hosts.sh [HOSTS]    (default 100000; build/release)
#
# In tests/integration/lib.sh's namespaces: nlmd (durability log, limits
# raised), a client host whose nsmpeer locks one byte each under HOSTS
# caller_names (HOSTS hosts), then three `nlmctl --json status` runs.
# Not a test: numbers for the notes.  Needs root (namespaces).

N=${1:-100000}
BUILD=${BUILD:-release}
TOP=$(cd "$(dirname "$0")/.." && pwd)
export NLMD=${NLMD:-$TOP/build/$BUILD/nlmd}
. "$TOP/tests/integration/lib.sh"
if [ -z "${ITEST_INSIDE:-}" ]; then
	make -s -C "$TOP" BUILD="$BUILD" all nsm-itest-bins || exit 1
fi
itest_enter "$@"
PEER=$(itest_tool nsmpeer "$TOP/build/$BUILD/tests/nsm/nsmpeer")
CTL=$(itest_tool nlmctl "$TOP/build/$BUILD/nlmctl")
SRV=10.95.0.1
CLI=10.95.0.2
NS=bhcli-$$
trap 'itest_cleanup; ip netns del $NS 2>/dev/null' EXIT
itest_start_rpcbind
itest_client_host $NS $SRV $CLI bh$$
itest_start_nlmd --durability=log --max-hosts-per-address=10000000 \
    --max-hosts=10000000
metric() { "$CTL" metrics | awk -v k="$1" '$1 == k {print $2}'; }
"${ON_CLI[@]}" "$PEER" lockmany $SRV h "$N" f-hosts | tail -1
echo "hosts: $(metric nlmd_hosts); longest turn so far:" \
    "$(metric nlmd_loop_turn_max_seconds) s"
for i in 1 2 3; do
	t=$(date +%s%3N)
	n=$("$CTL" --json status | grep -c '"idle_ms"')
	echo "status $i: $n host lines in $(( $(date +%s%3N) - t )) ms;" \
	    "longest turn so far: $(metric nlmd_loop_turn_max_seconds) s"
done
