#!/bin/bash
# test_restart.sh - nlmd across crashes and restarts, under load.
#
#   bash tests/integration/test_restart.sh                   (build/debug)
#   NLMD=build/asan/nlmd BUILD=asan bash tests/integration/test_restart.sh
#   CYCLES=10 DURABILITIES=log bash tests/integration/test_restart.sh
#   (tools/bench-restart.sh runs it with RST_BENCH=1: timings, no capture)
#
# Two hosts, each a network namespace with its own rpcbind:
#
#   server  (the namespace lib.sh creates)   client  (netns "rstcli")
#   rpcbind, nlmd, dumpcap on veth-rs        rpcbind, crashdrv: 16 NLM v4
#   10.98.0.1             <-- veth -->       clients + callback receiver
#                                            10.98.0.2
#
# For each durability (DURABILITIES, default "sync log"; sync is nlmd's
# default and is not given): nlmd starts on a fresh state directory
# (reclaim-check=strict, grace-period=20 s, callback-retry-min-ms=100);
# crashdrv starts its load, reading commands from a FIFO; after ~1.5 s,
# CYCLES times (default 3): "down" to crashdrv, nlmd killed (kill -9 on
# odd cycles, SIGTERM on even ones) while requests are in flight, "ok
# down" awaited (crashdrv has written what each client may hold:
# model.N), `nlmd --dump-state', nlmd restarted on the same state, "nlmd
# ready", "up"
# (crashdrv checks every client's locks and shares through reclaims, see
# tests/restart/verify.c), ~1 s of load.  Then "quit", nlmd stopped
# (SIGTERM) and dumped once more.  Checked here:
#   - crashdrv's checks (its PASS/FAIL lines), its exit status and summary;
#   - every dump against crashdrv's model: the store holds exactly what the
#     clients were told (a lock or share they were told about is stored,
#     one they gave up is not; uncertain ones either way);
#   - epochs: +1 per start (the "nlmd ready" lines and the dumps agree);
#   - fencing tokens: a lock granted after a restart has a token above the
#     previous dump's token-high-water; token-high-water never decreases
#     and covers every stored token; every stored record is of the epoch
#     of the instance that stored it (grace left nothing older);
#   - the log: "grace period over (nothing left to reclaim)" after every
#     restart; exit status 0 on SIGTERM; no sanitizer report;
#   - the capture around each restart, decoded by tshark (an independent
#     reading of our traffic): the reclaims carry nlm.reclaim == 1,
#     DENIED_GRACE_PERIOD replies decode as nlm.stat == 4, GRANTED_MSG and
#     GRANTED_RES are there, nothing is malformed.
#
# Output: crashdrv's lines prefixed with [durability], this script's
# PASS/FAIL lines, per-cycle restart times, "crashdrv: N passed, M failed"
# (all runs) and the lib.sh summary "test_restart: N passed, M failed".
# Exit status as lib.sh: 0, 1 on failure, 77 when skipped.

. "$(dirname "$0")/lib.sh"

BUILD=${BUILD:-debug}
if [ -z "${ITEST_INSIDE:-}" ] && [ "$(id -u)" = 0 ] &&
    ! unshare --net --mount true 2>/dev/null; then
	echo "SKIP: cannot create network and mount namespaces"
	exit 77
fi
if [ -z "${ITEST_INSIDE:-}" ] && [ -z "${ITEST_NO_BUILD:-}" ]; then
	# -f: works whether or not GNUmakefile includes the fragment yet.
	make -s -C "$ITEST_TOP" -f GNUmakefile -f tests/restart/module.mk \
	    BUILD="$BUILD" restart-itest-bins ||
	    { echo "FATAL: cannot build tests/restart"; exit 1; }
fi
itest_enter "$@"

T0=$SECONDS
W=$ITEST_WORK
DRV=${CRASHDRV:-$ITEST_TOP/build/$BUILD/tests/restart/crashdrv}
NS=rstcli
SRV=10.98.0.1
CLI=10.98.0.2
NLM_PORT=4045
NSM_PORT=4046
CYCLES=${CYCLES:-3}
DURABILITIES=${DURABILITIES:-sync log}
BENCH=${RST_BENCH:-0}
CAPTURE=${RST_CAPTURE:-$((1 - BENCH))}
# RST_NLMD_EXTRA: more flags, after these (the last one wins), e.g. to
# see the checks fail against --reclaim-check=off or --durability=none.
# shellcheck disable=SC2206
NLMD_FLAGS=(-d --reclaim-check=strict --grace-period=20
    --callback-retry-min-ms=100 ${RST_NLMD_EXTRA:-})
# shellcheck disable=SC2034  # used in an eval'd check
SANITIZER_RE='AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|ThreadSanitizer|runtime error:'
# crashdrv may be a sanitizer build too; its leaks are not nlmd's.
DRV_ENV=(env ASAN_OPTIONS=detect_leaks=0)

need=(ip rpcbind rpcinfo mkfifo)
[ "$CAPTURE" = 1 ] && need+=(dumpcap mergecap tshark)
for t in "${need[@]}"; do
	command -v "$t" >/dev/null ||
	    { echo "SKIP: $t not installed"; exit 77; }
done
[ -x "$NLMD" ] || { echo "FATAL: $NLMD missing"; exit 1; }
[ -x "$DRV" ] || { echo "FATAL: $DRV missing"; exit 1; }

# crashdrv's commands go to fd 9, a FIFO it reads as stdin.
DRV_OPEN=0
rst_cleanup() {
	exec 9>&-
	itest_cleanup
	ip netns del $NS 2>/dev/null
}
trap rst_cleanup EXIT

# ---- helpers ---------------------------------------------------------------

# wait_exit PID SECONDS: reap it; its status in WAIT_RC.  1 on timeout.
# (stderr: bash reports a child killed by a signal when it reaps it.)
wait_exit() {
	local end=$((SECONDS + $2))
	WAIT_RC=
	while itest_alive "$1"; do
		[ $SECONDS -ge $end ] && return 1
		sleep 0.02
	done
	wait "$1"
	WAIT_RC=$?
	itest_forget "$1"
} 2>/dev/null


# A log timestamp (HH:MM:SS.mmm, local time, today) in epoch ms.
log_ms() {
	local ms
	ms=$(date -d "$(date +%F) $1" +%s%3N 2>/dev/null) || return 1
	# A line from just before midnight, read just after it.
	[ "$ms" -gt "$(($(date +%s%3N) + 60000))" ] && ms=$((ms - 86400000))
	echo "$ms"
}

# ---- the two hosts ---------------------------------------------------------

itest_start_rpcbind
ip netns add $NS || { echo "FATAL: ip netns add"; exit 1; }
ip link add veth-rs type veth peer name veth-rc netns $NS
ip addr add $SRV/24 dev veth-rs
ip link set veth-rs up
ip -n $NS addr add $CLI/24 dev veth-rc
ip -n $NS link set veth-rc up
ip -n $NS link set lo up

CLIRUN=$W/clirun
mkdir -p "$CLIRUN/rpcbind"
# Run a command on the client host (its netns, its /run).  Every step
# execs, so in the background ("${ON_CLI[@]}" cmd &) $! is the command
# itself; never background the function `cli': $! would be a subshell,
# and killing it would leave the command running.
ON_CLI=(ip netns exec "$NS" unshare --mount --propagation private
    sh -c 'mount --bind "$0" /run && exec "$@"' "$CLIRUN")
cli() {
	"${ON_CLI[@]}" "$@"
}
"${ON_CLI[@]}" rpcbind -f -w >"$W/rpcbind-cli.log" 2>&1 &
ITEST_PIDS+=($!)
itest_wait cli rpcinfo -p 127.0.0.1 ||
    { echo "FATAL: client rpcbind did not start"; exit 1; }
# The route, and the server's rpcbind, seen from the client host.
itest_wait cli rpcinfo -p $SRV ||
    { echo "FATAL: no route between the namespaces"; exit 1; }

# ---- capture ---------------------------------------------------------------

# Only around each restart (from before `down' until shortly after `ok
# up'): the load alone fills ~20k packets a second, more than tshark can
# decode in the time this test has.  dumpcap starts in milliseconds.
CAPS=()
CAP_PID=
cap_start() {
	[ "$CAPTURE" = 1 ] || return 0
	CAP_FILE=$W/cap.$1.pcapng
	dumpcap -q -i veth-rs -w "$CAP_FILE" >"$CAP_FILE.log" 2>&1 9>&- &
	CAP_PID=$!
	ITEST_PIDS+=("$CAP_PID")
	itest_wait grep -q "Capturing on" "$CAP_FILE.log" ||
	    echo "capture $1 did not start"
}

cap_stop() {
	[ -n "$CAP_PID" ] || return 0
	kill -INT "$CAP_PID" 2>/dev/null
	wait_exit "$CAP_PID" 10 || { kill -9 "$CAP_PID"; wait_exit "$CAP_PID" 5; }
	CAPS+=("$CAP_FILE")
	CAP_PID=
}

# ---- nlmd and crashdrv -----------------------------------------------------

# Start nlmd on $STATE (durability $1: sync is the default, not given);
# T_EXEC, T_READY in epoch ms.
start_nlmd() {
	local before line dflag=()
	[ "$1" = sync ] || dflag=(--durability="$1")
	before=$(itest_count "$NLMD_LOG" "nlmd ready")
	T_EXEC=$(date +%s%3N)
	# 9>&-: only this script holds the FIFO's write end (so crashdrv
	# reads EOF, and quits, if the script dies).
	"$NLMD" -F -s "$STATE" --nlm-port $NLM_PORT --nsm-port $NSM_PORT \
	    "${dflag[@]}" "${NLMD_FLAGS[@]}" >>"$NLMD_LOG" 2>&1 9>&- &
	NLMD_PID=$!
	ITEST_PIDS+=("$NLMD_PID")
	# The bench measures the first answer: crashdrv asks from the start.
	[ "$BENCH" = 1 ] && [ "$DRV_OPEN" = 1 ] && drv_send up
	itest_wait_lines "$NLMD_LOG" "nlmd ready" "$before" 60 "$NLMD_PID" || return 1
	line=$(grep "nlmd ready" "$NLMD_LOG" | tail -1)
	T_READY=$(log_ms "${line%% *}")
}

drv_send() {
	echo "$1" >&9
}

start_driver() {
	local dir=$W/drv.$1
	mkdir -p "$dir"
	DOUT=$dir/out
	rm -f "$W/drv.fifo"
	mkfifo "$W/drv.fifo"
	# Read-write: opening never blocks, and crashdrv sees EOF only
	# when this end closes.
	exec 9<>"$W/drv.fifo"
	DRV_OPEN=1
	"${ON_CLI[@]}" "${DRV_ENV[@]}" "$DRV" --srv $SRV --cli $CLI \
	    --port $NLM_PORT \
	    --dir "$dir" --timeout-ms 1000 ${RST_SEED:+--seed $RST_SEED} \
	    <"$W/drv.fifo" >"$DOUT" 2>"$dir/err" 9>&- &
	DRV_PID=$!
	ITEST_PIDS+=("$DRV_PID")
	itest_wait_lines "$DOUT" '^ok start' 0 20 "$DRV_PID"
}

# `nlmd --dump-state' into $1.
dump_state() {
	timeout 60 "$NLMD" --dump-state -s "$STATE" >"$1" 2>>"$1.err" &&
	    grep -q '^epoch [0-9]' "$1"
}

# ---- one cycle -------------------------------------------------------------

GRACE_RE='grace period over|no grace period'

# The part of the log written since line $LOGMARK.
log_since() {
	tail -n +$((LOGMARK + 1)) "$NLMD_LOG"
}

# Grace after this restart ended because nothing was left to reclaim (or
# there was none: then the dump before it held nothing).
grace_ended_early() {
	local l
	l=$(log_since | grep -E "$GRACE_RE" | head -1)
	echo "${l:-no grace line in the log}"
	case "$l" in
	*"grace period over (nothing left to reclaim)"*) return 0 ;;
	*"no grace period: nothing to reclaim"*)
		! grep -qE '^(lock|share) ' "$1" ;;
	*) return 1 ;;
	esac
}

# Cycle $2 of durability $1: down, kill, dump, restart, up.  Sets
# CYCLE_ERR to the failed step (empty: all done).
cycle() {
	local dur=$1 i=$2 sig=KILL want=137 t_first t_grace graces
	[ $((i % 2)) = 0 ] && { sig=TERM; want=0; }
	CYCLE_ERR=
	itest_alive "$NLMD_PID" || { CYCLE_ERR="nlmd died during the load"; return; }
	cap_start "$dur.$i"
	drv_send down
	kill -$sig "$NLMD_PID"
	wait_exit "$NLMD_PID" 30 ||
	    { CYCLE_ERR="nlmd did not exit on SIG$sig"; return; }
	[ "$WAIT_RC" = "$want" ] || EXIT_BAD+=("cycle $i: SIG$sig -> $WAIT_RC")
	itest_wait_lines "$DOUT" '^ok down$' $((i - 1)) 60 "$DRV_PID" ||
	    { CYCLE_ERR="crashdrv did not answer down"; return; }
	dump_state "$W/dump.$dur.$i" ||
	    { CYCLE_ERR="nlmd --dump-state failed"; return; }
	LOGMARK=$(wc -l <"$NLMD_LOG")
	graces=$(itest_count "$NLMD_LOG" "$GRACE_RE")
	start_nlmd "$dur" || { CYCLE_ERR="nlmd did not restart"; return; }
	[ "$BENCH" = 1 ] || drv_send up
	itest_wait_lines "$DOUT" '^ok up$' $((i - 1)) 120 "$DRV_PID" ||
	    { CYCLE_ERR="crashdrv did not finish up"; return; }
	# Logged in the turn that ended grace; allow for a slow writer.
	itest_wait_lines "$NLMD_LOG" "$GRACE_RE" "$graces" 5 "$NLMD_PID"
	sleep 0.3	# some load after the restart, callbacks among it
	cap_stop
	t_first=$(sed -nE "s/^# cycle $i: first LOCK answered .* at \
([0-9]+) .*/\\1/p" "$DOUT" | tail -1)
	t_grace=$(log_since | sed -nE \
	    's/.*grace period over .* after ([0-9]+) ms.*/\1/p' | head -1)
	TIMES+=("$i SIG$sig $((T_READY - T_EXEC)) \
$((${t_first:-0} - T_EXEC)) $t_grace")
}

# ---- checks on the dumps -----------------------------------------------------

# model_vs_dump MODEL DUMP: the store holds what the clients were told.
model_vs_dump() {
	awk -f "$ITEST_TOP/tests/restart/model_vs_dump.awk" "$2" "$1"
}

# A dump's "epoch" / "token-high-water" value.
dump_val() {
	sed -n "s/^$2 //p" "$1"
}

# The epochs of the "nlmd ready" lines, in order.
ready_epochs() {
	sed -nE 's/.*nlmd ready:.* epoch ([0-9]+),.*/\1/p' "$NLMD_LOG"
}

# Dumps in order: +1 per start, agreeing with the ready lines.
epochs_ok() {
	local -a r
	local i e prev=
	mapfile -t r < <(ready_epochs)
	[ "${r[0]}" = 1 ] || { echo "first epoch ${r[0]}, not 1"; return 1; }
	for ((i = 0; i < ${#DUMPS[@]}; i++)); do
		e=$(dump_val "${DUMPS[i]}" epoch)
		echo "${DUMPS[i]##*/}: epoch $e, ready line ${r[i]}"
		[ "$e" = "${r[i]}" ] || return 1
		[ -z "$prev" ] || [ "$e" = $((prev + 1)) ] || return 1
		prev=$e
	done
	[ ${#r[@]} = ${#DUMPS[@]} ]
}

# Each dump: the high-water covers every token, every record is of the
# dump's epoch; against the dump before: the high-water did not go down,
# and locks of a later epoch have tokens above the old high-water.
tokens_ok() {
	local i bad=0 pe=0 ph=0 e h
	for ((i = 0; i < ${#DUMPS[@]}; i++)); do
		e=$(dump_val "${DUMPS[i]}" epoch)
		h=$(dump_val "${DUMPS[i]}" token-high-water)
		awk -v pe="$pe" -v ph="$ph" -v e="$e" -v h="$h" \
		    -v f="${DUMPS[i]##*/}" '
		$1 == "lock" || $1 == "share" {
			for (k in v)
				delete v[k]
			for (j = 2; j <= NF; j++) {
				split($j, kv, "=")
				v[kv[1]] = kv[2]
			}
			if (v["epoch"] + 0 != e + 0) {
				print f ": record of epoch " v["epoch"] \
				    " in epoch " e ": " $0
				bad++
			}
		}
		$1 == "lock" {
			t = v["token"] + 0
			if (t > h + 0) {
				print f ": token " t " above the high-water " h
				bad++
			}
			if (v["epoch"] + 0 > pe + 0 && t <= ph + 0) {
				print f ": token " t " of epoch " v["epoch"] \
				    " not above the previous high-water " ph
				bad++
			}
		}
		END { exit bad > 0 }' "${DUMPS[i]}" || bad=1
		if [ "$h" -lt "$ph" ]; then
			echo "${DUMPS[i]##*/}: high-water $h < previous $ph"
			bad=1
		fi
		echo "${DUMPS[i]##*/}: epoch $e, token-high-water $h"
		pe=$e
		ph=$h
	done
	[ $bad = 0 ]
}

# ---- one run per durability --------------------------------------------------

DRV_SUMMARIES=()
WIRE_RECLAIMS=0
WIRE_GRACE=0
ALL_TIMES=()

run_durability() {
	local dur=$1 i rc models how
	STATE=$W/state.$dur
	NLMD_LOG=$W/nlmd.$dur.log
	LOGMARK=0
	DUMPS=()
	TIMES=()
	EXIT_BAD=()
	if ! start_nlmd "$dur"; then
		check "$dur: nlmd starts" false
		return
	fi
	check "$dur: nlmd says it runs with durability $dur" \
	    grep -q "nlmd ready:.* durability $dur," "$NLMD_LOG"
	if ! start_driver "$dur"; then
		check "$dur: crashdrv starts" false
		cat "$W/drv.$dur/err"
		return
	fi
	sleep 1.5	# the first window of load
	for ((i = 1; i <= CYCLES; i++)); do
		cycle "$dur" "$i"
		how="kill -9"
		[ $((i % 2)) = 0 ] && how=SIGTERM
		check "$dur cycle $i: down, $how, dump-state, restart, \
up${CYCLE_ERR:+ ($CYCLE_ERR)}" test -z "$CYCLE_ERR"
		[ -n "$CYCLE_ERR" ] && break
		DUMPS+=("$W/dump.$dur.$i")
		rcheck "$dur cycle $i: the store held exactly what the clients \
were told" model_vs_dump "$W/drv.$dur/model.$i" "$W/dump.$dur.$i"
		rcheck "$dur cycle $i: grace over (nothing left to reclaim) after \
the restart" grace_ended_early "$W/dump.$dur.$i"
		sleep 0.7	# the rest of the window of load
	done
	cap_stop
	drv_send quit
	wait_exit "$DRV_PID" 60 || { kill -9 "$DRV_PID"; wait_exit "$DRV_PID" 5; }
	rc=$WAIT_RC
	exec 9>&-
	DRV_OPEN=0
	sed -e '/^ok /d' -e "s/^/[$dur] /" "$DOUT"
	DRV_SUMMARIES+=("$(grep -E '^crashdrv: [0-9]+ passed' "$DOUT" | tail -1)")
	check "$dur: crashdrv exits 0 with its summary line" \
	    test "$rc" = 0 -a -n "${DRV_SUMMARIES[-1]}"
	WIRE_RECLAIMS=$((WIRE_RECLAIMS + $(sed -nE \
	    's/^# wire: reclaim-calls=([0-9]+).*/\1/p' "$DOUT" | tail -1)))
	WIRE_GRACE=$((WIRE_GRACE + $(sed -nE \
	    's/^# wire: .*grace-replies=([0-9]+).*/\1/p' "$DOUT" | tail -1)))
	if itest_alive "$NLMD_PID"; then
		kill -TERM "$NLMD_PID"
		wait_exit "$NLMD_PID" 30 || EXIT_BAD+=("final: no exit on SIGTERM")
		[ "$WAIT_RC" = 0 ] || EXIT_BAD+=("final: SIGTERM -> $WAIT_RC")
		models=$(ls "$W/drv.$dur"/model.* 2>/dev/null | wc -l)
		if dump_state "$W/dump.$dur.final"; then
			DUMPS+=("$W/dump.$dur.final")
			rcheck "$dur after quit: the store held exactly what the \
clients were told" model_vs_dump "$W/drv.$dur/model.$models" \
			    "$W/dump.$dur.final"
		else
			check "$dur: nlmd --dump-state after the last stop" false
		fi
	else
		# Died in the last window: no stop, no last dump to check.
		EXIT_BAD+=("final: nlmd was gone before the last SIGTERM")
	fi
	check "$dur: nlmd exits 0 on SIGTERM${EXIT_BAD:+ (${EXIT_BAD[*]})}" \
	    test ${#EXIT_BAD[@]} = 0
	rcheck "$dur: epoch +1 per start (dumps and ready lines agree)" \
	    epochs_ok
	rcheck "$dur: fencing tokens rise across restarts; high-water covers \
every token; records only of the current epoch" tokens_ok
	check "$dur: no sanitizer report from nlmd or crashdrv" eval \
	    'itest_no_sanitizer "$NLMD_LOG" "$W"/dump.$dur.*.err' \
	    '"$W/drv.$dur/err"'
	for i in "${TIMES[@]}"; do
		ALL_TIMES+=("$dur $i")
	done
}

for dur in $DURABILITIES; do
	run_durability "$dur"
done

# ---- restart times ---------------------------------------------------------

asked=
[ "$BENCH" = 1 ] || asked=" (asked once ready was logged)"
echo "restart times (ms): exec -> nlmd ready, exec -> first LOCK" \
    "answered$asked, grace period (start to end, as logged):"
printf '%s\n' "${ALL_TIMES[@]}" | awk '
	NF >= 5 {
		printf "  %-5s cycle %2d %-7s %6d %6d %6s\n", $1, $2, $3, $4, $5,
		    $6 == "" ? "-" : $6
		n++; r += $4; f += $5; if ($4 > mr) mr = $4; if ($5 > mf) mf = $5
	}
	END {
		if (n > 0)
			printf "  %d restarts: ready avg %d max %d ms, first " \
			    "LOCK avg %d max %d ms; total %d ms to ready, %d " \
			    "ms to the first LOCK\n", n, r / n, mr, f / n, mf,
			    r, f
	}'

# ---- the capture, decoded ----------------------------------------------------

if [ "$CAPTURE" = 1 ] && [ ${#CAPS[@]} -gt 0 ]; then
	mergecap -w "$W/restart.pcapng" "${CAPS[@]}"
	# One pass over the capture: call or reply, procedure, reclaim, stat,
	# protocols (a malformed frame has _ws.malformed among them).
	tshark -n -r "$W/restart.pcapng" -o tcp.try_heuristic_first:TRUE \
	    -o udp.try_heuristic_first:TRUE --disable-heuristic dns_udp \
	    -Y 'rpc || _ws.malformed' -T fields -E separator=/t \
	    -e frame.number -e rpc.msgtyp -e nlm.procedure_v4 -e nlm.reclaim \
	    -e nlm.stat -e frame.protocols -e rpc.program -e portmap.prog \
	    -e ip.dst >"$W/nlm.tsv" 2>"$W/tshark-r.log"
	frames() {
		awk -F'\t' "$1 {n++} END {print n + 0}" "$W/nlm.tsv"
	}
	n_reclaim=$(frames '$2 == 0 && $4 == 1')
	n_grace=$(frames '$2 == 1 && $5 == 4')
	n_gmsg=$(frames '$2 == 0 && $3 == 10')
	n_gres=$(frames '$2 == 0 && $3 == 15')
	n_bad=$(frames '$6 ~ /malformed/')
	# Calls to the client host's status monitor, or asking its rpcbind
	# for one (what an SM_NOTIFY after the restart starts with).
	n_nsm=$(frames '$2 == 0 && $9 == "'$CLI'" && ($7 == 100024 ||
	    ($7 == 100000 && $8 == 100024))')
	check "tshark: reclaims on the wire with nlm.reclaim == 1 ($n_reclaim \
frames; crashdrv made $WIRE_RECLAIMS)" \
	    test "$n_reclaim" -gt 0 -a "$n_reclaim" -ge "$WIRE_RECLAIMS"
	check "tshark: DENIED_GRACE_PERIOD replies decode as nlm.stat == 4 \
($n_grace frames; crashdrv got $WIRE_GRACE)" \
	    test "$n_grace" -gt 0 -a "$n_grace" -ge "$WIRE_GRACE"
	check "tshark: GRANTED_MSG ($n_gmsg) and GRANTED_RES ($n_gres) seen" \
	    test "$n_gmsg" -gt 0 -a "$n_gres" -gt 0
	check "tshark: no malformed packet ($n_bad)" test "$n_bad" = 0
	# DESIGN.md, rule 3: a restarted server "notifies every monitored
	# client" (the client host runs no status monitor here: what shows
	# is the look-up for one; tests/integration/test_nsm.sh goes on).
	check "tshark: after a restart nlmd notifies the monitored \
client host (NSM traffic to $CLI: $n_nsm calls)" test "$n_nsm" -gt 0
fi

# ---- summary ---------------------------------------------------------------

np=0
nf=0
for s in "${DRV_SUMMARIES[@]}"; do
	set -- $s
	np=$((np + ${2:-0}))
	nf=$((nf + ${4:-0}))
done
echo "(${SECONDS}s; $((SECONDS - T0))s inside the namespaces)"
echo "crashdrv: $np passed, $nf failed"
itest_finish
