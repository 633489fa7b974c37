# bench-lib.sh - sourced by the benchmarks that run in private namespaces.
#
# bench_reexec NAME SCRIPT ARGS...: outside (BENCH_INSIDE unset), check for
# root (exit 77 otherwise), build the release nlmd and nlmbench unless
# BENCH_NOBUILD is set (exit 2 if that fails), and run SCRIPT again with
# ARGS in a private network + mount namespace.  Inside, return.
bench_reexec() {
	local name=$1 script=$2
	shift 2
	[ -n "${BENCH_INSIDE:-}" ] && return 0
	if [ "$(id -u)" != 0 ]; then
		echo "$name: needs root (network namespace)" >&2
		exit 77
	fi
	if [ -z "${BENCH_NOBUILD:-}" ]; then
		make -s -C "$TOP" BUILD=release all build/release/nlmbench \
		    >/dev/null || exit 2
	fi
	export BENCH_INSIDE=1
	exec unshare --net --mount --propagation private -- bash "$script" "$@"
}

# bench_pin: with BENCH_PIN set, SRV_PIN=(taskset -c LAST) and
# GEN_PIN=(taskset -c 0-LAST-1), to put in front of the server's and the
# load generator's command lines (both empty otherwise); exit 2 with one
# CPU.  On the 2-CPU development VM this takes the scheduler's placement
# out of the numbers: unpinned, one build's LU/NULL ranged 0.80-1.13 over
# 8 rounds, pinned its CPU per LOCK+UNLOCK call 6.41-6.56 us over 5.
bench_pin() {
	local last
	SRV_PIN=()
	GEN_PIN=()
	PIN_NOTE=
	[ -n "${BENCH_PIN:-}" ] || return 0
	last=$(($(nproc) - 1))
	if [ "$last" -lt 1 ]; then
		echo "BENCH_PIN needs 2 CPUs" >&2
		exit 2
	fi
	SRV_PIN=(taskset -c "$last")
	GEN_PIN=(taskset -c "0-$((last - 1))")
	PIN_NOTE=", pinned (server CPU $last, load generator 0-$((last - 1)))"
}

# bench_reap [SIGNAL]: send SIGNAL (default TERM) to every pid in the
# caller's PIDS array and wait for each (the scripts' cleanup traps).
bench_reap() {
	local p
	for p in "${PIDS[@]}"; do
		kill -"${1:-TERM}" "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
}

# bench_nlmd LOG ARGS...: start $O/nlmd ARGS in the background, its output
# in LOG, its pid in NLMD_PID, and wait (10 s at most) for "nlmd ready";
# exit 1 with LOG's tail when it does not come.
bench_nlmd() {
	local log=$1
	shift
	"$O/nlmd" "$@" >"$log" 2>&1 &
	NLMD_PID=$!
	bench_wait_for 200 grep -qs "nlmd ready" "$log" && return 0
	tail "$log"
	exit 1
}

# bench_wait_for TRIES CMD...: run CMD every 0.05 s until it succeeds
# (status 0) or TRIES tries failed (status 1).
bench_wait_for() {
	local n=$1 i
	shift
	for i in $(seq 1 "$n"); do
		"$@" && return 0
		sleep 0.05
	done
	return 1
}
