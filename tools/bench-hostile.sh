#!/bin/bash
# bench-hostile.sh - honest clients beside a hostile mix (issue 11's soak).
#
#   bash tools/bench-hostile.sh [SECONDS]    (default 1800; build/release)
#
# nlmd in a private namespace (10.94.0.1); a hostile client namespace
# (10.94.0.2, an rpcbind with no NLM) runs, for SECONDS, in a loop:
# random UDP datagrams and TCP streams, half-sent records held open,
# SHARE floods, caller_name floods, idle connections held open, LOCK_MSGs
# whose answers need look-ups at an address without NLM, blocking LOCKs
# left queued.  Meanwhile 16 honest nlmbench clients (from nlmd's own
# namespace) lock and unlock.  Printed: nlmd's RSS every 10% of the run
# (and the sockets of its port left in FIN_WAIT or TIME_WAIT),
# the honest clients' calls/s, p50/p99 and errors, against a clean run
# of the same length before the hostile mix starts (capped at 30 s), and
# for each window the share of it nlmd's threads spent on a CPU and
# waiting for one (/proc/PID/task/*/schedstat).
# HOSTILE_CPU=F caps the hostile processes at F CPUs (cgroup cpu quota;
# on a 2-core machine they otherwise take the cores nlmd and the honest
# clients share, and the p99 measures the machine, not nlmd).
# HOSTILE_LOW=1 gives them the lowest CPU weight (v2 cpu.weight 1, v1
# cpu.shares 2): they run on what nlmd and the honest clients leave, as
# hosts elsewhere would; with HOSTILE_CPU, both.
# HOSTILE_ONLY="udp-random tcp-random tcp-half shares names msgs waiters
# idle" (any subset) runs only those parts of the mix; HOSTILE_ONLY=burn
# runs two CPU burners instead, sending nothing (with HOSTILE_CPU, the
# control: what the same CPU taken from nlmd's cores does to the p99).
# Not a test (it takes half an hour by default): numbers for the notes.

set -u
SECS=${1:-1800}
BUILD=${BUILD:-release}
TOP=$(cd "$(dirname "$0")/.." && pwd)
O=$TOP/build/$BUILD
if [ -z "${BENCH_INSIDE:-}" ]; then
	make -s -C "$TOP" BUILD="$BUILD" all bench nsm-itest-bins \
	    itest-helpers || exit 1
	export BENCH_INSIDE=1
	exec unshare --net --mount --propagation private -- bash "$0" "$@"
fi
ip link set lo up
mount -t tmpfs tmpfs /run
mkdir -p /run/rpcbind
W=$(mktemp -d /tmp/nlmd-hostile.XXXXXX)
SRV=10.94.0.1
CLI=10.94.0.2
NS=hostile-$$
PIDS=()
CG=
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	ip netns del $NS 2>/dev/null
	if [ -n "$CG" ]; then
		for i in $(seq 50); do	# the killed loops' children exit
			[ -n "$(cat "$CG/cgroup.procs")" ] || break
			xargs -r kill -9 <"$CG/cgroup.procs" 2>/dev/null
			sleep 0.1
		done
		rmdir "$CG" 2>/dev/null
	fi
	rm -rf "$W"
}
trap cleanup EXIT

rpcbind -f -w &
PIDS+=($!)
ip netns add $NS
ip link add ho$$s type veth peer name ho$$c netns $NS
ip addr add $SRV/24 dev ho$$s
ip link set ho$$s up
ip -n $NS addr add $CLI/24 dev ho$$c
ip -n $NS link set ho$$c up
ip -n $NS link set lo up
mkdir -p "$W/clirun/rpcbind"
ON_CLI=(ip netns exec $NS unshare --mount --propagation private
    sh -c 'mount --bind "$0" /run && exec "$@"' "$W/clirun")
"${ON_CLI[@]}" rpcbind -f -w &
PIDS+=($!)
sleep 0.5

# HOSTILE_NLMD_NICE=N runs nlmd at that nice level (the hostile mix runs
# on the same two cores here, where a real attacker's machine would not).
nice -n "${HOSTILE_NLMD_NICE:-0}" \
"$O/nlmd" -F -s "$W/state" --durability=log --control-socket="$W/ctl.sock" \
    >"$W/nlmd.log" 2>&1 &
NLMD=$!
PIDS+=($NLMD)
for i in $(seq 100); do
	grep -qs "nlmd ready" "$W/nlmd.log" && break
	sleep 0.05
done
rss() { awk '/^VmRSS/ {print $2}' /proc/$NLMD/status; }
# Sockets of nlmd's port the kernel still holds after a close on nlmd's
# side (FIN_WAIT, TIME_WAIT): state an attacker could make the host keep.
lingering() {
	ss -Htan state fin-wait-1 state fin-wait-2 state time-wait \
	    '( sport = :4045 )' 2>/dev/null | wc -l
}
# sched: nlmd's threads' time on a CPU and waiting for one (ns), and now.
sched() {
	cat /proc/$NLMD/task/*/schedstat 2>/dev/null |
	    awk -v t="$(date +%s%N)" '{ r += $1; w += $2 }
	    END { printf "%.0f %.0f %.0f", r, w, t }'
}
# sched_line LABEL "BEFORE" "AFTER" CALLS_PER_S: where nlmd's time went.
sched_line() {
	awk -v l="$1" -v b="$2" -v a="$3" -v c="$4" 'BEGIN {
	    split(b, x, " "); split(a, y, " "); win = y[3] - x[3]
	    run = y[1] - x[1]; wait = y[2] - x[2]
	    printf "nlmd during %s: on a CPU %.0f%% of the window, waiting " \
	        "for one %.0f%%; %.1f us of CPU per honest call\n", l,
	        100 * run / win, 100 * wait / win,
	        (c > 0 ? run / 1000 / (c * win / 1e9) : 0) }'
}
field() { tr ' ' '\n' <<<"$2" | sed -n "s/^$1=//p"; }
clean_secs=$((SECS < 30 ? SECS : 30))

# clean_window LABEL WHAT: 16 honest clients alone for clean_secs; prints
# their numbers and nlmd's time; the nlmbench line is left in $window.
clean_window() {
	local s0 s1
	s0=$(sched)
	window=$("$O/nlmbench" -a $SRV -t "$clean_secs" -m lockunlock -c 16)
	s1=$(sched)
	echo "$1 ($clean_secs s): $(field rpc_s "$window") calls/s, p50" \
	    "$(field p50_us "$window") us, p99 $(field p99_us "$window") us," \
	    "errors $(field errors "$window"); RSS $(rss) KiB"
	sched_line "$2" "$s0" "$s1" "$(field rpc_s "$window")"
}
clean_window clean "the clean run"
clean=$window

# The hostile mix, each in a loop until the file says stop; with
# HOSTILE_CPU and/or HOSTILE_LOW, in a cgroup (v2, or v1's cpu) with that
# CPU quota and/or the lowest CPU weight.
if [ -n "${HOSTILE_CPU:-}" ] || [ -n "${HOSTILE_LOW:-}" ]; then
	if [ -f /sys/fs/cgroup/cgroup.controllers ] &&
	    grep -qw cpu /sys/fs/cgroup/cgroup.controllers; then
		CG=/sys/fs/cgroup/nlmd-hostile-$$
		mkdir "$CG" || exit 1
		if [ -n "${HOSTILE_CPU:-}" ]; then
			awk -v f="$HOSTILE_CPU" 'BEGIN { printf "%d 100000\n",
			    f * 100000 }' >"$CG/cpu.max" || exit 1
		fi
		if [ -n "${HOSTILE_LOW:-}" ]; then
			echo 1 >"$CG/cpu.weight" || exit 1
		fi
	elif [ -d /sys/fs/cgroup/cpu ]; then
		CG=/sys/fs/cgroup/cpu/nlmd-hostile-$$
		mkdir "$CG" || exit 1
		if [ -n "${HOSTILE_CPU:-}" ]; then
			echo 100000 >"$CG/cpu.cfs_period_us" &&
			    awk -v f="$HOSTILE_CPU" 'BEGIN { printf "%d\n",
			    f * 100000 }' >"$CG/cpu.cfs_quota_us" || exit 1
		fi
		if [ -n "${HOSTILE_LOW:-}" ]; then
			echo 2 >"$CG/cpu.shares" || exit 1
		fi
	fi
	[ -n "$CG" ] && [ -d "$CG" ] ||
	    { echo "bench-hostile.sh: no cgroup cpu controller" >&2; exit 1; }
	echo "hostile processes in $CG:" \
	    "${HOSTILE_CPU:+capped at $HOSTILE_CPU CPUs}" \
	    "${HOSTILE_LOW:+at the lowest CPU weight}"
fi
touch "$W/go"
echo "hostile mix: ${HOSTILE_ONLY:-all of it}"
hostile() {	# hostile NAME cmd...
	local name=$1
	shift
	# HOSTILE_ONLY="name ...": run only these parts of the mix.
	case " ${HOSTILE_ONLY:-$name} " in
	*" $name "*) ;;
	*) return 0 ;;
	esac
	# One namespace entry per part, the loop inside it: entering the
	# namespace for every round (ip netns exec, unshare, a bind mount)
	# costs the kernel more than the round itself, partly in workers
	# outside the cgroup's quota, and measured the machine, not nlmd.
	# HOSTILE_SPAWN=1 restores that (one entry per round).
	if [ -n "${HOSTILE_SPAWN:-}" ]; then
		( [ -n "$CG" ] && echo $BASHPID >"$CG/cgroup.procs"
		  while [ -e "$W/go" ]; do "${ON_CLI[@]}" "$@" \
		      >/dev/null 2>&1; done ) &
	else
		( [ -n "$CG" ] && echo $BASHPID >"$CG/cgroup.procs"
		  exec "${ON_CLI[@]}" sh -c 'while [ -e "$0" ]; do "$@" \
		      >/dev/null 2>&1; done' "$W/go" "$@" ) &
	fi
	PIDS+=($!)
}
G=$O/tests/garbage
P=$O/tests/nsm/nsmpeer
hostile udp-random "$G" udp-random $SRV 4045 500
hostile tcp-random "$G" tcp-random $SRV 4045 20
hostile tcp-half "$G" tcp-half $SRV 4045 100021 4
hostile shares "$P" sharemany $SRV "sh$RANDOM" 200
hostile names "$P" lockmany $SRV "n$RANDOM-" 300 f-names
hostile msgs "$P" lockmsg $SRV msghost 200
hostile waiters "$P" lock $SRV "w$RANDOM" f-names 0 1 3 block
hostile idle bash -c 'for i in $(seq 40); do
	exec {fd}<>/dev/tcp/'$SRV'/4045 || break; done; sleep 20'
# Not part of the mix: HOSTILE_ONLY=burn spins two CPU burners (no
# traffic at all) in the attack's place, the control for what the
# attack's processes take from the 2 cores by merely running.
case " ${HOSTILE_ONLY:-} " in
*" burn "*) hostile burn sh -c 'while :; do :; done'
	hostile burn sh -c 'while :; do :; done' ;;
esac

s2=$(sched)
"$O/nlmbench" -a $SRV -t "$SECS" -m lockunlock -c 16 >"$W/honest.txt" &
BENCH=$!
step=$((SECS / 10 > 0 ? SECS / 10 : 1))
for i in $(seq 1 10); do
	sleep "$step"
	kill -0 $BENCH 2>/dev/null || break
	echo "t=$((i * step)) s: nlmd RSS $(rss) KiB, $(lingering) sockets" \
	    "of port 4045 left in FIN_WAIT or TIME_WAIT"
done
wait $BENCH
s3=$(sched)
rm -f "$W/go"
with=$(cat "$W/honest.txt")
echo "hostile ($SECS s): $(field rpc_s "$with") calls/s, p50" \
    "$(field p50_us "$with") us, p99 $(field p99_us "$with") us," \
    "errors $(field errors "$with"); RSS $(rss) KiB"
sched_line "the attack" "$s2" "$s3" "$(field rpc_s "$with")"
# A second clean window once the attack has stopped: the clean p99 of a
# short window varies by 2-3x between runs here, so the ratio is given
# against both windows and their mean.
for p in "${PIDS[@]}"; do	# the loops and what they run now
	[ "$p" = "$NLMD" ] && continue
	pkill -P "$p" 2>/dev/null
	kill "$p" 2>/dev/null
done
sleep 2
clean_window "clean after" "the clean run after"
after=$window
echo "p99 ratio: $(awk -v a="$(field p99_us "$clean")" \
    -v c="$(field p99_us "$after")" -v b="$(field p99_us "$with")" \
    'BEGIN { printf "%.2f against the clean run before, %.2f against the one after, %.2f against their mean", b / a, b / c, 2 * b / (a + c) }')"
"$O/nlmctl" -s "$W/ctl.sock" metrics >"$W/metrics.txt"
# What the attack made nlmd do, per second of attack (only it sends these).
awk -v s="$SECS" '
/^nlmd_rpc_messages_total\{outcome="garbage"\} / { g = $2 }
/^nlmd_hosts_refused_total / { h = $2 }
/^nlmd_rpcbind_suppressed_total / { r = $2 }
END { printf "attack handled: %.0f garbage messages/s, %.0f LOCKs from refused hosts/s, %.0f rpcbind look-ups suppressed/s\n", g / s, h / s, r / s }' "$W/metrics.txt"
grep -E \
    '^nlmd_(hosts|hosts_refused_total|shares|waiters|tcp_connections|rpcbind_suppressed_total) |tcp_connections_total\{event="refused"\}|rpc_messages_total\{outcome="garbage"\}' \
    "$W/metrics.txt"
