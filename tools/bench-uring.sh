#!/bin/bash
# bench-uring.sh - would io_uring lower the floor? (issue 12, item 4)
#
#   tools/bench-uring.sh        (root: runs in a private network namespace)
#
# The do-nothing echo server of make bench-compare (bench/echosrv.c: epoll,
# per wake-up one receive and one send per connection) against the same
# server over io_uring (echosrv -U: a multishot receive per connection
# into provided buffers; a wake-up's sends and the wait for the next
# completions in one io_uring_enter, so no system call per call), over
# TCP on loopback, loaded by nlmbench.  If io_uring's floor is clearly
# lower, nlmd's TCP path has that much to gain from it; if not, it has
# nothing to gain, since nlmd already reads every complete record a
# wake-up brings and sends each connection's replies of a turn at once.
#
# Points interleaved, BENCH_REPS rounds of: for each client count and mode
# (NULL, LOCK+UNLOCK), each server for BENCH_SECS.  Printed per point:
# calls/s and the server's CPU per call (utime+stime from /proc over the
# window, divided by the calls), median (min-max) over the rounds, the load
# generator's CPU, and the io_uring server's CPU per call divided by the
# epoll one's (median of the rounds' ratios).
#
# Environment: BENCH_SECS (default 3), BENCH_REPS (default 5),
# BENCH_CLIENTS (default "16 64"), BENCH_BUILD (default release),
# BENCH_NOBUILD=1.  Exit status 1 if a run counted an error or a server
# failed; 77 when io_uring is unavailable here (said loudly).

set -u
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$TOP/tools/bench-lib.sh"	# bench_reap
BUILD=${BENCH_BUILD:-release}
O=$TOP/build/$BUILD
SECS=${BENCH_SECS:-3}
REPS=${BENCH_REPS:-5}
CLIENTS=${BENCH_CLIENTS:-16 64}

if [ -z "${BENCH_INSIDE:-}" ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "bench-uring.sh: needs root (network namespace)" >&2
		exit 77
	fi
	if [ -z "${BENCH_NOBUILD:-}" ]; then
		make -s -C "$TOP" BUILD="$BUILD" "build/$BUILD/echosrv" \
		    "build/$BUILD/nlmbench" >/dev/null || exit 2
	fi
	export BENCH_INSIDE=1
	exec unshare --net --mount --propagation private -- bash "$0" "$@"
fi

ip link set lo up
W=$(mktemp -d /var/tmp/nlmd-bench-uring.XXXXXX)
PIDS=()
FAILED=0
cleanup() {
	bench_reap
	rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# start NAME PORT [flags]: the server's pid in SRV_PID once it is ready
start() {
	local name=$1 port=$2 i
	shift 2
	"$O/echosrv" -p "$port" "$@" >"$W/$name.log" 2>&1 &
	SRV_PID=$!
	PIDS+=("$SRV_PID")
	for i in $(seq 1 100); do
		grep -qs "echosrv ready" "$W/$name.log" && return 0
		if ! kill -0 "$SRV_PID" 2>/dev/null; then
			wait "$SRV_PID"
			return $?
		fi
		sleep 0.05
	done
	return 1
}

cputicks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

start epoll 4047 || { echo "echosrv did not start:"; cat "$W/epoll.log"
	exit 1; }
EPOLL=$SRV_PID
start uring 4048 -U
rc=$?
if [ $rc = 3 ]; then
	echo "SKIP (loudly): $(cat "$W/uring.log")"
	exit 77
elif [ $rc != 0 ]; then
	echo "echosrv -U did not start:"; cat "$W/uring.log"
	exit 1
fi
URING=$SRV_PID
HZ=$(getconf CLK_TCK)

echo "io_uring floor benchmark: $(date -u +%FT%TZ), $(nproc) CPUs, kernel" \
    "$(uname -r), load average $(cut -d' ' -f1-3 /proc/loadavg);" \
    "${SECS}s per point, $REPS rounds; echosrv $BUILD" \
    "($(cd "$TOP" && git rev-parse --short HEAD))"

# One line per run: server clients mode calls/s us/call gen% errors
: >"$W/runs"
for r in $(seq 1 "$REPS"); do
	for c in $CLIENTS; do
		for m in null lockunlock; do
			for s in "epoll $EPOLL 4047" "uring $URING 4048"; do
				set -- $s
				t0=$(cputicks "$2")
				out=$("$O/nlmbench" -p "$3" -c "$c" -t "$SECS" \
				    -w 0 -m "$m" -P "$2")
				rc=$?
				t1=$(cputicks "$2")
				calls=$(echo "$out" | sed -n 's/.* rpc_s=\([0-9]*\).*/\1/p')
				gen=$(echo "$out" | sed -n 's/.* gen_cpu=\([0-9]*\)%.*/\1/p')
				err=$(echo "$out" | sed -n 's/.* errors=\([0-9]*\).*/\1/p')
				if [ $rc != 0 ] || [ -z "$calls" ] ||
				    [ "${err:-1}" != 0 ] || [ "$calls" = 0 ]; then
					echo "FAILED: $1 $c $m: $out"
					FAILED=1
					continue
				fi
				echo "$1 $c $m $calls $(awk -v t=$((t1 - t0)) \
				    -v hz="$HZ" -v n="$calls" -v s="$SECS" \
				    'BEGIN { printf "%.3f", t / hz * 1e6 / (n * s) }') \
				    $gen $err $r" >>"$W/runs"
			done
		done
	done
done

echo
printf "%-7s %-10s  %-22s %-22s %-17s %-17s %-17s %s\n" clients mode \
    "epoll calls/s" "io_uring calls/s" "epoll us/call" "io_uring us/call" \
    "io_uring/epoll" "gen% e/u"
for c in $CLIENTS; do
	for m in null lockunlock; do
		awk -v c="$c" -v m="$m" '
		function stat(a, n, f,   i, j, t, med) {
			for (i = 2; i <= n; i++)
				for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
					t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
				}
			med = n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
			return sprintf(f " (" f "-" f ")", med, a[1], a[n])
		}
		$2 == c && $3 == m {
			if ($1 == "epoll") {
				ec[++ne] = $4; eu[ne] = $5; eg += $6; er[$8] = $5
			} else {
				uc[++nu] = $4; uu[nu] = $5; ug += $6; ur[$8] = $5
			}
		}
		END {
			if (ne == 0 || nu == 0) { print c, m, "no runs"; exit }
			for (k in er) if (k in ur) rt[++nr] = ur[k] / er[k]
			rs = nr ? stat(rt, nr, "%.2f") : "-"
			printf "%-7s %-10s  %-22s %-22s %-17s %-17s %s  %.0f/%.0f\n",
			    c, m, stat(ec, ne, "%d"), stat(uc, nu, "%d"),
			    stat(eu, ne, "%.2f"), stat(uu, nu, "%.2f"), rs,
			    eg / ne, ug / nu
		}' "$W/runs"
	done
done

# Both servers stop cleanly (under ASan: no leak, no error at exit).
for s in "epoll $EPOLL" "uring $URING"; do
	set -- $s
	kill "$2"
	wait "$2"
	rc=$?
	if [ $rc != 0 ]; then
		echo "FAILED: echosrv ($1) exited $rc:"
		cat "$W/$1.log"
		FAILED=1
	else
		echo "$1: $(grep -o "answered .*" "$W/$1.log")"
	fi
done
PIDS=()
exit $FAILED
