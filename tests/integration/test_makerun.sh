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

# run.sh stops its nlmd first and its rpcbind only once nlmd has exited:
# nlmd takes its registrations back at its stop, and libtirpc, finding
# rpcbind's Unix socket gone (a stopping rpcbind removes it first),
# falls back to loopback TCP, whose address cache leaks (libtirpc
# 1.3.3): the ASan nlmd above reported it in 1 of many runs.  A stand-in
# nlmd that takes 0.3 s to stop asks rpcbind at the end of it.
cat >"$ITEST_WORK/slow-nlmd" <<'STANDIN'
#!/bin/bash
stop() {
	sleep 0.3
	if rpcinfo -p 127.0.0.1 >/dev/null 2>&1; then
		echo "stand-in: rpcbind up at the end of the stop"
	else
		echo "stand-in: rpcbind gone before the end of the stop"
	fi
	exit 0
}
trap stop TERM
echo "stand-in: nlmd ready"
while :; do sleep 0.05; done
STANDIN
chmod +x "$ITEST_WORK/slow-nlmd"
RUNLOG3=$ITEST_WORK/run3.log
NLMD_STATE=$ITEST_WORK/standinstate "$TOP/tools/run.sh" "$ITEST_WORK/slow-nlmd" \
    >"$RUNLOG3" 2>&1 &
RUN_PID=$!
ITEST_PIDS+=($RUN_PID)
itest_wait grep -q "stand-in: nlmd ready" "$RUNLOG3"
kill -TERM "$RUN_PID"
wait "$RUN_PID" 2>/dev/null
itest_forget "$RUN_PID"
cat "$RUNLOG3" >>"$ITEST_WORK/checks.log"
check "run.sh stops rpcbind only after nlmd has stopped" \
    grep -q "stand-in: rpcbind up at the end of the stop" "$RUNLOG3"
check "... and then stops it" bash -c \
    '! rpcinfo -p 127.0.0.1 >/dev/null 2>&1'

# ---- a host whose rpcbind runs, with another status monitor -----------
# On an NFS client (nfs-common) rpc.statd holds status (100024), and the
# kernel's lockd nlockmgr: `make run' must not take their registrations
# over (nlmd, as root, removes what is registered before it registers),
# nor leave them gone when it stops.  A registration whose server is gone
# (an nlmd killed with -9) is no one's: run.sh goes on, nlmd replaces it.
# A live nlockmgr (another nlmd here) stops a second nlmd too, and the
# message names NFS-Ganesha's own NLM among what it may be.
if command -v rpc.statd >/dev/null; then
	mkdir -p "$ITEST_WORK/nfs/sm" "$ITEST_WORK/nfs/sm.bak"
	mount --bind "$ITEST_WORK/nfs" /var/lib/nfs
	rpcbind -f -w &
	ITEST_PIDS+=($!)
	itest_wait rpcinfo -p 127.0.0.1
	rpc.statd -F -L >"$ITEST_WORK/statd.log" 2>&1 &
	STATD_PID=$!
	ITEST_PIDS+=($STATD_PID)
	itest_wait sh -c 'rpcinfo -p 127.0.0.1 | grep -q status'
	statd_port() {
		rpcinfo -p 127.0.0.1 | awk '$1 == 100024 && $3 == "tcp" {print $4}'
	}
	STATD_PORT=$(statd_port)
	RUNLOG2=$ITEST_WORK/run2.log
	NLMD_STATE=$ITEST_WORK/runstate "$TOP/tools/run.sh" "$NLMD" \
	    >"$RUNLOG2" 2>&1 &
	RUN_PID=$!
	ITEST_PIDS+=($RUN_PID)
	# Either it refuses at once, or it runs: give it the time to register.
	itest_wait bash -c "! kill -0 $RUN_PID 2>/dev/null ||
	    grep -q 'nlmd ready' '$RUNLOG2'"
	STATD_DURING=$(statd_port)
	kill -TERM "$RUN_PID" 2>/dev/null
	wait "$RUN_PID" 2>/dev/null
	itest_forget "$RUN_PID"
	check "rpc.statd registered: run.sh leaves status to it ($STATD_PORT, while it ran: ${STATD_DURING:-none})" \
	    test -n "$STATD_PORT" -a "$STATD_DURING" = "$STATD_PORT"
	check "... and says why nlmd does not start" \
	    grep -q "status (100024 v1) is registered with rpcbind by a server that answers" "$RUNLOG2"
	check "... rpc.statd's registration is still there afterwards" \
	    test "$(statd_port)" = "$STATD_PORT"
	# nlmd itself, started without run.sh, refuses as well: as root it
	# would remove rpc.statd's registration before registering its own.
	timeout 30 "$NLMD" -F -s "$ITEST_WORK/directstate" --control-socket= \
	    >"$ITEST_WORK/direct.log" 2>&1
	DRC=$?
	cat "$ITEST_WORK/direct.log" >>"$ITEST_WORK/checks.log"
	check "nlmd itself, rpc.statd registered and answering: exit 1 ($DRC), says so" \
	    bash -c "[ $DRC = 1 ] && grep -q 'status (100024 v1) is registered with rpcbind by a server that answers (.*): rpc.statd, or another nlmd' '$ITEST_WORK/direct.log'"
	check "... and rpc.statd keeps its registration" \
	    test "$(statd_port)" = "$STATD_PORT"
	# A stale one: rpc.statd killed, its registration left behind.
	kill -9 "$STATD_PID"
	wait "$STATD_PID" 2>/dev/null
	itest_forget "$STATD_PID"
	NLMD_STATE=$ITEST_WORK/runstate "$TOP/tools/run.sh" "$NLMD" \
	    >"$RUNLOG2" 2>&1 &
	RUN_PID=$!
	ITEST_PIDS+=($RUN_PID)
	check "a stale status registration (its server gone): run.sh starts nlmd, which takes it" \
	    itest_wait bash -c "rpcinfo -p 127.0.0.1 |
	        awk '\$1 == 100024 && \$4 == 32765 {f = 1} END {exit !f}'"
	# nlockmgr held by a server that answers (this nlmd): the refusal
	# names what it may be.  Beside NFS-Ganesha that is most often
	# Ganesha's own NLM, on unless Enable_NLM = false (and the package
	# make deps installs starts it at boot); the message named only the
	# kernel's lockd.
	timeout 30 "$NLMD" -F -s "$ITEST_WORK/secondstate" --control-socket= \
	    --nlm-port=4145 --nsm-port=32865 >"$ITEST_WORK/second.log" 2>&1
	DRC=$?
	cat "$ITEST_WORK/second.log" >>"$ITEST_WORK/checks.log"
	check "nlockmgr registered and answering: exit 1 ($DRC), names Ganesha's NLM and Enable_NLM among the suspects" \
	    bash -c "[ $DRC = 1 ] && grep -q 'nlockmgr (100021 v4) is registered with rpcbind by a server that answers (.*): .*NFS-Ganesha.*Enable_NLM = false.*, or another nlmd' '$ITEST_WORK/second.log'"
	kill -TERM "$RUN_PID" 2>/dev/null
	wait "$RUN_PID" 2>/dev/null
	itest_forget "$RUN_PID"
	check "... and nlmd stopped cleanly" grep -q "nlmd: stopped" "$RUNLOG2"
	umount /var/lib/nfs
else
	check "rpc.statd (nfs-common, from make deps) is installed" false
fi
itest_finish
