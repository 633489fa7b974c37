#!/bin/bash
# test_makerun.sh - `make run`'s script (tools/run.sh) on a host without
# rpcbind: it starts rpcbind, starts nlmd on local state, and rpcinfo then
# shows both programs; stopping nlmd stops the rpcbind it started.
# Runs in private network and mount namespaces (lib.sh).
. "$(dirname "$0")/lib.sh"
itest_enter "$@"

TOP=$ITEST_TOP
RUNLOG=$ITEST_WORK/run.log

registered() {
	local p
	p=$(rpcinfo -p 127.0.0.1 2>/dev/null) || return 1
	for v in 1 3 4; do
		grep -Eq "100021 +$v +tcp" <<<"$p" || return 1
		grep -Eq "100021 +$v +udp" <<<"$p" || return 1
	done
	grep -Eq "100024 +1 +(tcp|udp)" <<<"$p"
}

check "no rpcbind in the fresh namespace" bash -c \
    '! rpcinfo -p 127.0.0.1 >/dev/null 2>&1'
NLMD_STATE=$ITEST_WORK/runstate "$TOP/tools/run.sh" "$NLMD" >"$RUNLOG" 2>&1 &
RUN_PID=$!
ITEST_PIDS+=($RUN_PID)
check "tools/run.sh: rpcinfo -p shows nlockmgr 1,3,4 and status 1" \
    itest_wait registered
check "tools/run.sh says it started rpcbind" \
    grep -q "rpcbind is not running: starting it" "$RUNLOG"
check "tools/run.sh prints how to talk to nlmd" \
    grep -q "rpcinfo -p 127.0.0.1" "$RUNLOG"
check "state went to the local directory" test -e "$ITEST_WORK/runstate/nlmd.lock"
kill -TERM "$RUN_PID"	# run.sh stops its nlmd and its rpcbind
wait "$RUN_PID" 2>/dev/null
itest_forget "$RUN_PID"
check "nlmd stopped cleanly" grep -q "nlmd: stopped" "$RUNLOG"
check "no sanitizer report in run.sh's output (nlmd's log)" \
    itest_no_sanitizer "$RUNLOG"
check "the rpcbind run.sh started is gone with it" bash -c \
    '! rpcinfo -p 127.0.0.1 >/dev/null 2>&1'
itest_finish
