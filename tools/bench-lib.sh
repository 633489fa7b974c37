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
