#!/bin/bash
# run.sh - `make run`: start nlmd in the foreground on local state.
#
# State goes to build/run/state (override with NLMD_STATE).  If no rpcbind
# answers on this host, one is started (and stopped again when nlmd exits);
# if one runs and another lock manager or status monitor is registered
# with it and answers, nlmd refuses to start (it would take them over).
# Ports: NLM 4045, NSM 32765 unless NLMD_ARGS says otherwise.
set -u
cd "$(dirname "$0")/.."
nlmd=${1:-build/debug/nlmd}
state=${NLMD_STATE:-$PWD/build/run/state}
rpcbind_pid=""
nlmd_pid=""

if ! rpcinfo -p 127.0.0.1 >/dev/null 2>&1; then
	if [ "$(id -u)" != 0 ]; then
		echo "run: rpcbind is not running and only root can start it" >&2
		exit 1
	fi
	echo "run: rpcbind is not running: starting it"
	mkdir -p /run/rpcbind
	rpcbind -f -w &
	rpcbind_pid=$!
	for i in $(seq 50); do
		rpcinfo -p 127.0.0.1 >/dev/null 2>&1 && break
		sleep 0.1
	done
fi
# Only what this script started is stopped, by pid: nlmd first, and
# rpcbind once nlmd has exited, so that nlmd takes its registrations back
# from a running rpcbind (from one that is stopping, libtirpc finds its
# Unix socket gone and falls back to loopback TCP, whose address cache
# leaks).
cleanup() {
	if [ -n "$nlmd_pid" ]; then
		kill "$nlmd_pid" 2>/dev/null
		wait "$nlmd_pid" 2>/dev/null
	fi
	[ -n "$rpcbind_pid" ] && kill "$rpcbind_pid" 2>/dev/null
	wait 2>/dev/null
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cat <<MSG
run: starting nlmd (state in $state); Ctrl-C stops it.
     Talk to it:  rpcinfo -p 127.0.0.1      (100021 v1,3,4 and 100024 v1)
                  rpcinfo -t 127.0.0.1 nlockmgr 4
                  rpcinfo -u 127.0.0.1 status 1
MSG
"$nlmd" -F -s "$state" ${NLMD_ARGS:-} &
nlmd_pid=$!
wait "$nlmd_pid"
rc=$?
nlmd_pid=""
exit $rc
