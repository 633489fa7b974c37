# lib.sh - shared helpers for integration tests (sourced, bash).
#
# Every test script re-executes itself inside a private network namespace
# and a private mount namespace (`itest_enter'), so the rpcbind it starts,
# its /run/rpcbind.sock and everything nlmd registers are invisible to the
# host and vanish with the namespace.  Only loopback exists in there.
#
#   . tests/integration/lib.sh
#   itest_enter "$@"           # re-exec in fresh namespaces (no-op inside)
#   itest_start_rpcbind
#   itest_start_nlmd [nlmd flags...]   # sets NLMD_PID, NLMD_LOG, STATE
#   check "description" command...    # one PASS/FAIL line
#   itest_finish                       # summary line, exit status
#
# Environment: NLMD (path of the binary, default build/debug/nlmd),
# ITEST_WORK (scratch dir, default a mktemp dir, kept on failure),
# NLMD_NFS_CONF (the nfs.conf nlmd reads; exported empty: none).

ITEST_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
NLMD=${NLMD:-$ITEST_TOP/build/debug/nlmd}
# The tests never depend on the machine's /etc/nfs.conf: nlmd reads none
# unless a test names one (NLMD_NFS_CONF=FILE).
export NLMD_NFS_CONF=${NLMD_NFS_CONF-}
ITEST_PASS=0
ITEST_FAIL=0
ITEST_PIDS=()

itest_enter() {
	if [ -z "${ITEST_INSIDE:-}" ]; then
		if [ "$(id -u)" != 0 ]; then
			echo "SKIP: integration tests need root (namespaces)"
			exit 77
		fi
		export ITEST_INSIDE=1
		exec unshare --net --mount --propagation private -- \
		    bash "$0" "$@"
	fi
	set -u
	ip link set lo up
	mount -t tmpfs tmpfs /run
	mkdir -p /run/rpcbind
	ITEST_WORK=${ITEST_WORK:-$(mktemp -d /tmp/nlmd-itest.XXXXXX)}
	mkdir -p "$ITEST_WORK"
	trap itest_cleanup EXIT
	trap 'exit 130' INT TERM
}

itest_cleanup() {
	local p
	for p in "${ITEST_PIDS[@]}"; do
		kill "$p" 2>/dev/null
	done
	sleep 0.1
	for p in "${ITEST_PIDS[@]}"; do
		kill -9 "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	if [ "$ITEST_FAIL" = 0 ] && [ -z "${ITEST_KEEP:-}" ]; then
		rm -rf "$ITEST_WORK"
	else
		echo "kept: $ITEST_WORK"
	fi
}

# Wait until `cmd...' succeeds (max ~5 s).
itest_wait() {
	local i
	for i in $(seq 1 100); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.05
	done
	return 1
}

# itest_count FILE ERE: lines of FILE matching ERE (0 if none or no file;
# binary-safe, so a guest's serial console can be read too).
itest_count() {
	local n
	n=$(grep -acE -- "$2" "$1" 2>/dev/null)
	echo "${n:-0}"
}

# Running (not a zombie)?
itest_alive() {
	local s
	s=$(ps -o stat= -p "$1" 2>/dev/null) && [ "${s:0:1}" != Z ]
}

# itest_wait_lines FILE ERE N SECONDS [PID]: until more than N lines
# match; 1 on timeout, or as soon as PID (the writer) is gone.
itest_wait_lines() {
	local end=$((SECONDS + $4))
	while [ "$(itest_count "$1" "$2")" -le "$3" ]; do
		[ $SECONDS -ge $end ] && return 1
		[ -n "${5:-}" ] && ! itest_alive "$5" && return 1
		sleep 0.02
	done
}

itest_start_rpcbind() {
	rpcbind -f -w &
	ITEST_PIDS+=($!)
	itest_wait rpcinfo -p 127.0.0.1 ||
	    { echo "FATAL: rpcbind did not start"; exit 1; }
}

# Start nlmd in the foreground with a fresh state dir; extra flags appended.
# The wait for it to be ready ends when it is, when it exits, or after 60
# s: a start that loads a large store (test_ctl's 40,000 locks after a
# kill -9: 1.1 s under ASan on a loaded machine, more under TSan) went
# past the 5 s of itest_wait on a slow machine.
itest_start_nlmd() {
	STATE=${STATE:-$ITEST_WORK/state}
	NLMD_LOG=$ITEST_WORK/nlmd.log
	# The log is appended to across restarts: wait for a new ready line.
	local before
	before=$(itest_count "$NLMD_LOG" "nlmd ready")
	"$NLMD" -F -s "$STATE" --nlm-port "${NLM_PORT:-4045}" \
	    --nsm-port "${NSM_PORT:-32765}" "$@" >>"$NLMD_LOG" 2>&1 &
	NLMD_PID=$!
	ITEST_PIDS+=($NLMD_PID)
	if ! itest_wait_lines "$NLMD_LOG" "nlmd ready" "$before" 60 \
	    "$NLMD_PID"; then
		echo "FATAL: nlmd did not start:"; cat "$NLMD_LOG"; exit 1
	fi
}

itest_stop_nlmd() {
	kill "$NLMD_PID" 2>/dev/null
	wait "$NLMD_PID" 2>/dev/null
}

# itest_no_sanitizer FILE...: no sanitizer report in any of the files, each
# of which must exist (grep says 2 for a missing one, which `! grep' took
# for a clean log).  The script's SANITIZER_RE, if it sets one, else:
ITEST_SANITIZER_RE='AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|ThreadSanitizer|runtime error:'
itest_no_sanitizer() {
	local f
	[ $# -gt 0 ] || { echo "itest_no_sanitizer: no file"; return 1; }
	for f in "$@"; do
		[ -f "$f" ] || { echo "itest_no_sanitizer: missing: $f"; return 1; }
	done
	! grep -E "${SANITIZER_RE:-$ITEST_SANITIZER_RE}" "$@"
}

check() {
	local what=$1; shift
	if "$@" >>"$ITEST_WORK/checks.log" 2>&1; then
		echo "PASS: $what"
		ITEST_PASS=$((ITEST_PASS + 1))
	else
		echo "FAIL: $what"
		ITEST_FAIL=$((ITEST_FAIL + 1))
	fi
}

# Like check, but the command's output is shown on failure.
rcheck() {
	local what=$1 out=$ITEST_WORK/check.out ok=true
	shift
	"$@" >"$out" 2>&1 || ok=false
	cat "$out" >>"$ITEST_WORK/checks.log"
	check "$what" $ok
	$ok || sed -e 's/^/    /' "$out" | head -20
}

# itest_tool NAME BINARY: a wrapper $ITEST_WORK/NAME that runs BINARY with
# LeakSanitizer off (the test's own tools may be sanitizer builds; their
# leaks, libtirpc's, are not nlmd's); prints its path.
itest_tool() {
	printf '#!/bin/sh\nASAN_OPTIONS=detect_leaks=0 exec %s "$@"\n' "$2" \
	    >"$ITEST_WORK/$1"
	chmod +x "$ITEST_WORK/$1"
	echo "$ITEST_WORK/$1"
}

# itest_client_host NS SRVADDR CLIADDR IFNAME: a client host -- network
# namespace NS joined to ours by a veth pair (SRVADDR here, CLIADDR there,
# /24), with its own /run and rpcbind.  Sets ON_CLI, the command prefix
# that runs a program there (every step execs: in the background,
# "${ON_CLI[@]}" cmd & makes $! the command itself).  The caller's EXIT
# trap must `ip netns del NS'.
itest_client_host() {
	ip netns add "$1" || { echo "FATAL: ip netns add $1"; exit 1; }
	ip link add "$4s" type veth peer name "$4c" netns "$1"
	ip addr add "$2/24" dev "$4s"
	ip link set "$4s" up
	ip -n "$1" addr add "$3/24" dev "$4c"
	ip -n "$1" link set "$4c" up
	ip -n "$1" link set lo up
	mkdir -p "$ITEST_WORK/run-$1/rpcbind"
	ON_CLI=(ip netns exec "$1" unshare --mount --propagation private
	    sh -c 'mount --bind "$0" /run && exec "$@"' "$ITEST_WORK/run-$1")
	"${ON_CLI[@]}" rpcbind -f -w &
	ITEST_PIDS+=($!)
	itest_wait "${ON_CLI[@]}" rpcinfo -p 127.0.0.1 ||
	    { echo "FATAL: rpcbind on $1 did not start"; exit 1; }
}

# itest_skip WHAT WHY: WHAT (one or more checks) cannot run here; says so
# and counts it, so that the summary line, and make test's, show it.
ITEST_SKIP=0
itest_skip() {
	echo "SKIP: $1: $2"
	ITEST_SKIP=$((ITEST_SKIP + 1))
}

itest_finish() {
	local skipped=
	[ "$ITEST_SKIP" = 0 ] || skipped=", $ITEST_SKIP skipped"
	echo "$(basename "$0" .sh): $ITEST_PASS passed, $ITEST_FAIL failed$skipped"
	[ "$ITEST_FAIL" = 0 ]
	exit $?
}

# A check that is expected to fail because of a known, reported bug.
# Failing prints XFAIL and counts neither way (ITEST_XFAIL); passing prints
# XPASS and counts as a failure, so the marker is removed once it is fixed.
ITEST_XFAIL=0
check_xfail() {
	local what=$1; shift
	if "$@" >>"$ITEST_WORK/checks.log" 2>&1; then
		echo "XPASS: $what (fixed? make it a plain check)"
		ITEST_FAIL=$((ITEST_FAIL + 1))
	else
		echo "XFAIL: $what"
		ITEST_XFAIL=$((ITEST_XFAIL + 1))
	fi
}

# Drop a reaped pid from the cleanup list (so a recycled pid is never
# signalled by itest_cleanup).
itest_forget() {
	local p keep=()
	for p in "${ITEST_PIDS[@]}"; do
		[ "$p" = "$1" ] || keep+=("$p")
	done
	ITEST_PIDS=("${keep[@]}")
}
