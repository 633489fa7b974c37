#!/bin/bash
# check-unit-syscalls.sh - do the system calls nlmd makes under load all
# pass init/nlmd.service's SystemCallFilter (@system-service)?
#
#   bash tools/check-unit-syscalls.sh        (root; strace, build/release)
#   BUILD=debug bash tools/check-unit-syscalls.sh   (what make test runs)
#
# In a private network namespace (unshare -n), nlmd runs under strace -f:
# durability sync, 16 TCP and 16 UDP clients locking and unlocking, a
# contended load, 20,000 locks held and released, nlmctl status (tables,
# JSON), metrics, SIGHUP, kill -9 with locks held; then durability log
# on the same store (recovery, load, grace end), a load, SIGTERM.  The
# system calls seen are compared with the expansion of @system-service
# (systemd-analyze syscall-filter); any outside it is printed and the
# exit status is 1.  Not covered: rpcbind registration (--no-rpcbind),
# the privilege drop, an SM_NOTIFY that reaches a client (the load
# generator's host names do not resolve).
set -u
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
O=$TOP/build/${BUILD:-release}
if [ -z "${CUS_INSIDE:-}" ]; then
	make -s -C "$TOP" BUILD="${BUILD:-release}" all \
	    "build/${BUILD:-release}/nlmbench" || exit 1
	exec env CUS_INSIDE=1 unshare -n bash "$0" "$@"
fi
W=$(mktemp -d /tmp/nlmd-unitsc.XXXXXX)
trap 'pkill -9 -f "nlmd -F -s $W/state" 2>/dev/null; rm -rf "$W"' EXIT
ip link set lo up
export NLMCTL_SOCKET=$W/ctl.sock
npid() { pgrep -f "^$O/nlmd -F -s $W/state"; }
start() {
	strace -f -qq -o "$W/st.$1" "$O/nlmd" -F -s "$W/state" \
	    --nlm-port 4045 --nsm-port 4046 --no-rpcbind --durability="$2" \
	    --control-socket="$NLMCTL_SOCKET" \
	    --metrics-address=127.0.0.1:9464 >"$W/log.$1" 2>&1 &
	SPID=$!
	for _ in $(seq 100); do
		grep -qs "nlmd ready" "$W/log.$1" && return 0
		sleep 0.1
	done
	echo "nlmd did not start:"; tail -5 "$W/log.$1"; exit 1
}
B() { "$O/nlmbench" -p 4045 "$@" >/dev/null; }
start 1 sync
B -t 2 -m lockunlock -c 16
B -t 2 -m lockunlock -c 16 -u
B -t 2 -m contended -c 8
B -t 1 -m hold -c 4 -k 20000
"$O/nlmctl" status --locks >/dev/null
"$O/nlmctl" --json status --locks >/dev/null
"$O/nlmctl" metrics >/dev/null
curl -sf http://127.0.0.1:9464/metrics >/dev/null ||
    { echo "the metrics endpoint did not answer"; exit 1; }
kill -HUP "$(npid)"; sleep 1
B -t 1 -m hold -c 4 -k 5000 -K 2>/dev/null &
BP=$!
sleep 3
kill -9 "$(npid)"; { wait "$SPID"; } 2>/dev/null; kill "$BP" 2>/dev/null; wait "$BP" 2>/dev/null
start 2 log
"$O/nlmctl" status >/dev/null
"$O/nlmctl" grace end >/dev/null 2>&1
B -t 2 -m lockunlock -c 16
kill -TERM "$(npid)"; wait "$SPID"
grep -q "stopped" "$W/log.2" || { echo "nlmd did not stop cleanly"; exit 1; }
sed -n 's/^[0-9]* *\([a-z_0-9]*\)(.*/\1/p' "$W"/st.* | sort -u >"$W/used"
sc() { systemd-analyze syscall-filter "$1" 2>/dev/null | sed 1d |
    sed 's/^ *//' | grep -v '^#' | grep -v '^$'; }
expand() {
	local x
	for x in $(sc "$1"); do
		case $x in @*) expand "$x" ;; *) echo "$x" ;; esac
	done
}
F=${CUS_FILTER:-@system-service}	# another set, to see the check fail
expand "$F" | sort -u >"$W/allowed"
[ -s "$W/allowed" ] || { echo "systemd-analyze gave no set for $F"; exit 1; }
out=$(comm -23 "$W/used" "$W/allowed")
echo "nlmd made $(wc -l <"$W/used") distinct system calls;" \
    "$F allows $(wc -l <"$W/allowed")"
if [ -n "$out" ]; then
	echo "outside $F:"; echo "$out"; exit 1
fi
echo "all inside $F"
