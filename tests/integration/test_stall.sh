#!/bin/bash
# test_stall.sh - a disk that stops answering under durability = sync.
#
#   bash tests/integration/test_stall.sh                     (build/debug)
#   NLMD=build/asan/nlmd BUILD=asan bash tests/integration/test_stall.sh
#
# nlmd's state directory is on an ext4 image mounted in the test's own
# mount namespace; `fsfreeze -f' makes every write and flush to it wait,
# as a hung disk or a stalled SAN path would, until `fsfreeze -u'.  While
# frozen, libnfs (an independent NLM client) asks for a lock, whose commit
# cannot complete, and garbage's tcp-pipeline sends 20,000 NULL calls back
# to back on one connection (their answers wait for that commit too):
#   - nlmd stops reading once more than max-commit-backlog (65536, the
#     least it takes) reply bytes wait: the gauge stays near 64 KiB
#     instead of the 560 KB those answers make, and nlmd's memory stays
#     flat while the client keeps sending;
#   - nlmctl status and metrics still answer, and say so;
#   - no connection is reset; once thawed every call is answered exactly
#     once, libnfs's locks are granted, and nlmd logs the pause's end.
#
# Negative control: STALL_BACKLOG=1073741824 (no pause in reach) fails the
# checks of the pause (the held answers grow to some 560 KB meanwhile).

. "$(dirname "$0")/lib.sh"

BUILD=${BUILD:-debug}
if [ -z "${ITEST_INSIDE:-}" ] && [ "$(id -u)" = 0 ] &&
    ! unshare --net --mount true 2>/dev/null; then
	echo "SKIP: cannot create network and mount namespaces"
	exit 77
fi
if [ -z "${ITEST_INSIDE:-}" ] && [ -z "${ITEST_NO_BUILD:-}" ]; then
	make -s -C "$ITEST_TOP" BUILD="$BUILD" all itest-helpers nlm-itest-bins ||
	    { echo "FATAL: cannot build"; exit 1; }
fi
itest_enter "$@"

W=$ITEST_WORK
CTL=$(itest_tool nlmctl "$ITEST_TOP/build/$BUILD/nlmctl")
GARBAGE=$ITEST_TOP/build/$BUILD/tests/garbage
FLOWS=$ITEST_TOP/build/$BUILD/tests/nlm/libnfs_flows
for t in rpcbind fsfreeze mkfs.ext4 losetup; do
	command -v $t >/dev/null ||
	    { echo "SKIP: $t not installed (make deps)"; exit 77; }
done
[ -x "$FLOWS" ] || { echo "FATAL: no $FLOWS"; exit 1; }

truncate -s 192M "$W/disk.img"	# the region files alone take 75 MiB
mkfs.ext4 -q "$W/disk.img" || { echo "FATAL: mkfs.ext4"; exit 1; }
mkdir -p "$W/mnt"
if ! mount -o loop "$W/disk.img" "$W/mnt" 2>"$W/mount.err"; then
	echo "SKIP: cannot mount a loop device here: $(cat "$W/mount.err")"
	exit 77
fi
# Thawed before anything is killed: a process waiting on a frozen
# filesystem cannot be killed, and the cleanup would wait for ever.  nlmd
# is gone before the unmount, and the unmount before lib.sh removes $W.
stall_cleanup() {
	fsfreeze -u "$W/mnt" 2>/dev/null
	if [ -n "${NLMD_PID:-}" ]; then
		kill -9 "$NLMD_PID" 2>/dev/null
		wait "$NLMD_PID" 2>/dev/null
	fi
	umount "$W/mnt" 2>/dev/null || umount -l "$W/mnt"
	itest_cleanup
}
trap stall_cleanup EXIT

itest_start_rpcbind
STATE=$W/mnt/state itest_start_nlmd --durability=sync \
    --max-commit-backlog="${STALL_BACKLOG:-65536}"

metric() {
	"$CTL" metrics | awk -v m="$1" '$1 == m { print $2; f = 1 }
	    END { if (!f) print "none" }'
}
ctl_field() {
	"$CTL" --json status | grep -o "\"$1\": *[0-9]*" | grep -o '[0-9]*$'
}
rss_kib() {
	awk '$1 == "VmRSS:" { print $2 }' "/proc/$NLMD_PID/status"
}

# Unfrozen first: 20,000 calls answered at once, no pause.
rcheck "20,000 pipelined NULL calls answered (disk answering)" \
    "$GARBAGE" tcp-pipeline 127.0.0.1 4045 100021 4 20000 30
check "no pause while commits complete" test "$(metric nlmd_input_paused_total)" = 0

fsfreeze -f "$W/mnt" || { echo "FATAL: fsfreeze -f"; exit 1; }
frozen_at=$SECONDS
# Its LOCKs wait for as long as the disk stays frozen: the checks below,
# some ten nlmctl runs, 1-2 s here under ASan, more on a loaded machine.
# libnfs_flows gives up on a call after 5 s unless told otherwise (with
# the freeze 5 s longer, "libnfs's locks granted" failed with nlmd right).
"$FLOWS" 127.0.0.1 hold 120 >"$W/flows.out" 2>&1 &
FLOWS_PID=$!
ITEST_PIDS+=($FLOWS_PID)
stalled() {
	awk -v s="$(metric nlmd_store_commit_stall_seconds)" \
	    'BEGIN { exit !(s > 0) }'
}
check "libnfs's LOCK waits for its commit" itest_wait stalled
"$GARBAGE" tcp-pipeline 127.0.0.1 4045 100021 4 20000 60 \
    >"$W/pipe.out" 2>&1 &
PIPE_PID=$!
ITEST_PIDS+=($PIPE_PID)
paused() { [ "$(ctl_field input_paused_ms)" -gt 0 ]; }
check "reading stops: status shows input-paused-ms" itest_wait paused
check "nlmctl status names the pause" \
    grep -q "requests: not read for" <("$CTL" status)
held=$(metric nlmd_replies_held_bytes)
echo "    held while paused: $held bytes"
check "answers held stay near max-commit-backlog (65536 + a turn)" \
    test "$held" -gt 32768 -a "$held" -le $((65536 + 16 * 28 + 200))
check "the pause is counted once" test "$(metric nlmd_input_paused_total)" = 1
r0=$(rss_kib)
sleep 0.5
r1=$(rss_kib)
echo "    nlmd RSS while paused: ${r0} KiB, 0.5 s later ${r1} KiB"
check "memory flat while the client keeps sending" \
    test $((r1 - r0)) -lt 1024
check "the held answers did not grow meanwhile" \
    test "$(metric nlmd_replies_held_bytes)" = "$held"
check "the pipelining client is still waiting, not cut off" \
    itest_alive "$PIPE_PID"
check "no connection reset for the server's delay" \
    test "$(metric 'nlmd_tcp_connections_total{event="closed_slow"}')" = 0
# Still running: its LOCKs unanswered (answered before their commit, it
# would have taken both locks and exited).  This used to time the script
# only.
check "libnfs is still waiting, $((SECONDS - frozen_at)) s into the freeze" \
    itest_alive "$FLOWS_PID"

fsfreeze -u "$W/mnt"
wait "$PIPE_PID"; pipe_rc=$?
itest_forget "$PIPE_PID"
wait "$FLOWS_PID"; flows_rc=$?
itest_forget "$FLOWS_PID"
rcheck "thawed: every pipelined call answered once" \
    sh -c "cat '$W/pipe.out'; exit $pipe_rc"
rcheck "thawed: libnfs's locks granted" \
    sh -c "cat '$W/flows.out'; exit $flows_rc"
check "reading again: input-paused-ms is 0" test "$(ctl_field input_paused_ms)" = 0
check "the pause's length is counted" awk -v s="$(metric \
    nlmd_input_paused_seconds_total)" 'BEGIN { exit !(s > 0) }'
check "nlmd logged the pause and its end" sh -c \
    "grep -q 'not reading requests until' '$NLMD_LOG' &&
     grep -q 'reading requests again after' '$NLMD_LOG'"
rcheck "20,000 more answered after the pause" \
    "$GARBAGE" tcp-pipeline 127.0.0.1 4045 100021 4 20000 30
check "nlmd still running" itest_alive "$NLMD_PID"
itest_stop_nlmd
check "no sanitizer report" itest_no_sanitizer "$NLMD_LOG"
itest_finish
