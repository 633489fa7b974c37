#!/bin/bash
# test_nlm.sh - issue 4: the NLM service against a running nlmd.
#
#   bash tests/integration/test_nlm.sh                      (build/debug)
#   NLMD=build/asan/nlmd BUILD=asan bash tests/integration/test_nlm.sh
#
# Two hosts, each a network namespace with its own rpcbind:
#
#   server  (the namespace lib.sh creates)   client  (netns "nlmcli")
#   rpcbind, nlmd, tshark on veth-s          rpcbind, nlmtest (+ its
#   10.99.0.1 and 10.99.0.11   <-- veth -->  callback receiver), libnfs
#   fd00:99::1, fe80::99:1                   10.99.0.2, 10.99.0.3,
#                                            fd00:99::2, fe80::99:2
#
# The client namespace has a /run of its own (a bind-mounted directory,
# shared by every process started there with `cli'), so the receiver in
# nlmtest registers NLM with the client's rpcbind, which is what nlmd asks
# (PMAP GETPORT on the request's source address) before every callback and
# _RES.  Two client addresses make two client hosts; two server addresses
# show that callbacks come from the address the client used.
#
# Steps: libnfs_flows and nlmtest --group main (callbacks=msg), then nlmtest
# for callbacks=sync, off and both (nlmd restarted with a fresh state dir
# each time), then the capture of everything on veth-s is decoded by tshark
# (every NLM call answered, the procedures seen, nothing malformed), then
# nlmd's logs are searched for sanitizer reports.
#
# Then the grace groups (tests/nlm/nlmt_grace.c) and libnfs's reclaim
# flows across kill -9 and SIGTERM restarts of nlmd on one state directory.
#
# Output: the PASS/FAIL lines of the programs and of this script, then
# "nlm: N passed, M failed" (all program-level checks) and the lib.sh
# summary line "test_nlm: N passed, M failed" (script-level checks).

. "$(dirname "$0")/lib.sh"

if [ -z "${ITEST_INSIDE:-}" ] && [ -z "${ITEST_NO_BUILD:-}" ]; then
	make -s -C "$ITEST_TOP" BUILD="${BUILD:-debug}" nlm-itest-bins ||
	    { echo "FATAL: cannot build tests/nlm"; exit 1; }
fi
itest_enter "$@"

T0=$SECONDS
W=$ITEST_WORK
BIN=${NLMT_BIN:-$ITEST_TOP/build/${BUILD:-debug}/tests/nlm}
SRV=10.99.0.1
SRV2=10.99.0.11
CLI1=10.99.0.2
CLI2=10.99.0.3
SRV6=fd00:99::1
SRVLL=fe80::99:1	# link-local, on veth-s (the client sees it on veth-c)
CLILL=fe80::99:2
CLI6=fd00:99::2
NLM_PORT=4045
NSM_PORT=4046
RETRY_MIN=100
RETRY_MAX=800
SANITIZER_RE='AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|ThreadSanitizer|runtime error:'
# The test programs may be sanitizer builds too; their leaks are not ours.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}

for t in tshark ip rpcbind; do
	command -v "$t" >/dev/null ||
	    { echo "SKIP: $t not installed"; exit 77; }
done
[ -x "$BIN/nlmtest" ] && [ -x "$BIN/libnfs_flows" ] ||
    { echo "FATAL: $BIN/nlmtest or libnfs_flows missing"; exit 1; }

# ---- the two hosts ---------------------------------------------------------

itest_start_rpcbind
ip netns add nlmcli || { echo "FATAL: ip netns add"; exit 1; }
ip link add veth-s type veth peer name veth-c netns nlmcli
ip addr add $SRV/24 dev veth-s
ip addr add $SRV2/24 dev veth-s
ip addr add $SRV6/64 dev veth-s nodad
ip addr add $SRVLL/64 dev veth-s nodad
ip link set veth-s up
ip -n nlmcli addr add $CLI1/24 dev veth-c
ip -n nlmcli addr add $CLI2/24 dev veth-c
ip -n nlmcli addr add $CLI6/64 dev veth-c nodad
ip -n nlmcli addr add $CLILL/64 dev veth-c nodad
ip -n nlmcli link set veth-c up
ip -n nlmcli link set lo up

CLIRUN=$W/clirun
mkdir -p "$CLIRUN/rpcbind"
# Run a command on the client host (its netns, its /run).
cli() {
	ip netns exec nlmcli unshare --mount --propagation private \
	    sh -c 'mount --bind "$0" /run && exec "$@"' "$CLIRUN" "$@"
}
# Every exec keeps the pid: $! is rpcbind itself.
ip netns exec nlmcli unshare --mount --propagation private \
    sh -c 'mount --bind "$0" /run && exec rpcbind -f -w' "$CLIRUN" \
    >"$W/rpcbind-cli.log" 2>&1 &
ITEST_PIDS+=($!)
itest_wait cli rpcinfo -p 127.0.0.1 ||
    { echo "FATAL: client rpcbind did not start"; exit 1; }
# Both addresses up (no DAD on IPv4, but the link takes a moment).
itest_wait cli ping -c1 -W1 $SRV || true

# ---- capture ---------------------------------------------------------------

tshark -i veth-s -w "$W/nlm.pcapng" -q >"$W/tshark.log" 2>&1 &
TSHARK_PID=$!
ITEST_PIDS+=($TSHARK_PID)
itest_wait grep -q "Capturing on" "$W/tshark.log" ||
    { echo "FATAL: tshark did not start"; cat "$W/tshark.log"; exit 1; }

# ---- the programs ----------------------------------------------------------

GROUP_SUMMARIES=()

# run_prog LABEL LOG command...: run on the client host, show its lines.
run_prog() {
	local label=$1 log=$2 rc
	shift 2
	cli "$@" >"$log" 2>&1
	rc=$?
	sed "s/^/[$label] /" "$log"
	GROUP_SUMMARIES+=("$(grep -E '^(nlm|libnfs): [0-9]+ passed' "$log" |
	    tail -1)")
	check "$label: exits 0 with its summary line" \
	    test "$rc" = 0 -a -n "${GROUP_SUMMARIES[-1]}"
}

nlmtest() {
	local g=$1
	shift
	run_prog "$g" "$W/nlmtest.$g.log" "$BIN/nlmtest" --group "$g" \
	    --srv $SRV --srv2 $SRV2 --cli $CLI1 --cli $CLI2 \
	    --srv6 $SRV6 --cli6 $CLI6 --srvll "$SRVLL%veth-c" \
	    --clill "$CLILL%veth-c" "$@"
}

NLMD_RUN=0
start_nlmd_group() {
	NLMD_RUN=$((NLMD_RUN + 1))
	STATE=$W/state.$NLMD_RUN
	itest_start_nlmd -d "$@"
}

stop_nlmd() {
	itest_stop_nlmd
	itest_forget "$NLMD_PID"
}

start_nlmd_group --callbacks=msg --callback-retry-min-ms=$RETRY_MIN \
    --callback-retry-max-ms=$RETRY_MAX --max-locks-per-host=50
check "nlmd registered nlockmgr on the server's rpcbind" \
    itest_wait cli rpcinfo -T udp $SRV 100021 4
# libnfs first: no NLM is registered on the client host yet, so nlmd's
# callback for libnfs's blocked lock finds no port and sends nothing (after
# nlmtest, nlmd's port cache would still name the receiver's closed port).
run_prog libnfs "$W/libnfs.log" "$BIN/libnfs_flows" $SRV
nlmtest main --retry-min $RETRY_MIN --retry-max $RETRY_MAX
# nlmtest's link-local host reached fe80::99:1 over UDP and TCP: one server
# address, its interface with it (a UDP request's local address lacked
# it, and the host had the address twice).
CTL=$(itest_tool nlmctl "$ITEST_TOP/build/${BUILD:-debug}/nlmctl")
"$CTL" status >"$W/status.ll" 2>&1
ll_local=$(awk '$2 == "hostll" {print $4}' "$W/status.ll")
check "nlmctl status: the link-local host used $SRVLL%veth-s, once ($ll_local)" \
    test "$ll_local" = "$SRVLL%veth-s"
check "nlmd logged the request its downgrade cycle dropped (nlmtest main)" \
    grep -q "1 queued lock request dropped: a change of what an owner holds made it close a deadlock cycle" "$NLMD_LOG"
stop_nlmd
# The link-local host as stored: the dump names its interface too (the
# address alone would be any machine's fe80::99:2 on any link).
"$NLMD" --dump-state -s "$STATE" >"$W/dump.ll" 2>&1
check "--dump-state: the link-local host's address is $CLILL%veth-s" \
    awk '$1 == "host" && / name=hostll / {
	for (i = 2; i <= NF; i++) if ($i == "addr='"$CLILL"'%veth-s") f = 1 }
	END { exit !f }' "$W/dump.ll"

start_nlmd_group --callbacks=sync --callback-retry-min-ms=100 \
    --callback-retry-max-ms=200 --callback-give-up=2
nlmtest sync
stop_nlmd

start_nlmd_group --callbacks=off
nlmtest off
stop_nlmd

start_nlmd_group --callbacks=both --callback-retry-min-ms=100 \
    --callback-retry-max-ms=200
nlmtest both
sleep 0.5
stop_nlmd

# ---- grace: restarts over one state directory ------------------------------
# (tests/nlm/nlmt_grace.c says what each group checks.)

GRACE=6
# restart_nlmd SIGNAL [flags]: stop nlmd with SIGNAL, start it again on the
# same state directory.
restart_nlmd() {
	local sig=$1
	shift
	kill "-$sig" "$NLMD_PID" 2>/dev/null
	wait "$NLMD_PID" 2>/dev/null
	itest_forget "$NLMD_PID"
	itest_start_nlmd -d "$@"
}
# The log of the running nlmd: from its store's open on.
log_since_ready() {
	tac "$NLMD_LOG" | sed '/opened and recovered/q' | tac
}

start_nlmd_group --grace-period=$GRACE --reclaim-check=conflict
run_prog libnfs-hold "$W/libnfs-hold.log" "$BIN/libnfs_flows" $SRV hold
nlmtest grace-hold
restart_nlmd KILL --grace-period=$GRACE --reclaim-check=conflict
check "after kill -9: a grace period for the 6 stored locks and 1 share" \
    eval 'log_since_ready | grep -q "grace period: 6 locks and 1 shares to reclaim"'
run_prog libnfs-reclaim "$W/libnfs-reclaim.log" "$BIN/libnfs_flows" $SRV \
    reclaim
nlmtest grace-conflict --grace $GRACE
check "grace ended at the deadline, the unreclaimed lock dropped" \
    eval 'log_since_ready | grep -q "grace period over (deadline) after .*: 1 locks and 0 shares not reclaimed, dropped"'
restart_nlmd KILL --grace-period=60 --reclaim-check=strict
nlmtest grace-strict
check "strict: grace ended early, everything reclaimed" \
    eval 'log_since_ready | grep -q "grace period over (nothing left to reclaim)"'
restart_nlmd TERM --grace-period=60
check "no grace after a clean stop with nothing held" \
    eval 'log_since_ready | grep -q "no grace period: nothing to reclaim"'
nlmtest grace-none
stop_nlmd

# Let the capture catch up with the last packets before it stops.
sleep 1
kill -INT "$TSHARK_PID" 2>/dev/null
wait "$TSHARK_PID" 2>/dev/null
itest_forget "$TSHARK_PID"

# ---- the capture, decoded --------------------------------------------------

TS=(tshark -n -2 -r "$W/nlm.pcapng" -o tcp.try_heuristic_first:TRUE
    -o udp.try_heuristic_first:TRUE --disable-heuristic dns_udp)
"${TS[@]}" -Y 'rpc.program == 100021' -T fields -E separator=/t \
    -e frame.number -e rpc.msgtyp -e rpc.programversion -e rpc.procedure \
    -e rpc.repframe -e rpc.reqframe -e ip.src -e ip.dst -e ipv6.src \
    -e ipv6.dst >"$W/nlm.tsv" \
    2>"$W/tshark-r.log"

# Calls that got no reply, as "frame vers proc src dst" lines.  The link
# from a call to its reply is rpc.reqframe in the call in tshark 4.0 (and
# rpc.repframe in others): either will do.
unanswered() {
	awk -F'\t' '$2 == 0 && $5 == "" && $6 == "" {print $1, "v" $3,
	    "proc", $4, $7 $9, "->", $8 $10}' "$W/nlm.tsv"
}
nlm_calls() {
	awk -F'\t' '$2 == 0' "$W/nlm.tsv" | wc -l
}
# Every (version, procedure) we exercised appears as a call.
procs_seen() {
	local v p missing=""
	for v in 1 3 4; do
		for p in $(eval echo "\$PROCS_V$v"); do
			awk -F'\t' -v v=$v -v p=$p \
			    '{split($3, a, ","); split($4, b, ",")}
			    $2 == 0 && a[1] == v && b[1] == p {f=1}
			    END {exit !f}' \
			    "$W/nlm.tsv" || missing="$missing v$v/$p"
		done
	done
	echo "missing:$missing"
	[ -z "$missing" ]
}
PROCS_V1="0 1 2 3 4 5 6 7 10 11 12 15"
PROCS_V3="0 1 2 3 4 5 6 9 10 11 14 15 20 21 22 23"
PROCS_V4="0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 20 21 22 23"
malformed() {
	"${TS[@]}" -Y '_ws.malformed' -T fields -e frame.number 2>/dev/null |
	    wc -l
}
no_malformed() {
	local n
	n=$(malformed)
	echo "malformed frames: $n"
	[ "$n" = 0 ]
}
# What tshark names as NLM: the procedure fields of the dissector.
nlm_dissected() {
	local n
	n=$("${TS[@]}" -Y 'nlm.procedure_v4 || nlm.procedure_v3 ||
	    nlm.procedure_v1' -T fields -e frame.number 2>/dev/null | wc -l)
	echo "frames dissected as NLM: $n"
	[ "$n" -gt 100 ]
}
# GRANTED_MSG and _RES calls by nlmd: from a server address to the client.
callbacks_from_server() {
	awk -F'\t' '{split($4, b, ","); p = b[1] + 0}
	    $2 == 0 && p >= 10 && p <= 15 &&
	    ($7 == "'$SRV'" || $7 == "'$SRV2'" || $9 == "'$SRV6'") {n++} END {print n;
	    exit !(n > 10)}' "$W/nlm.tsv"
}

check "capture holds NLM calls ($(nlm_calls))" test "$(nlm_calls)" -gt 200
check "tshark dissects the traffic as NLM" nlm_dissected
check "every NLM call in the capture has a reply" \
    test -z "$(unanswered | tee "$W/unanswered.txt")"
[ -s "$W/unanswered.txt" ] && head -20 "$W/unanswered.txt"
check "every exercised procedure of v1, v3, v4 appears in the capture" \
    procs_seen
check "callbacks and _RES in the capture come from the server addresses" \
    callbacks_from_server
check "no malformed packet in the capture" no_malformed
# Reclaims and grace answers as Wireshark reads them.
tsn() {
	"${TS[@]}" -Y "$1" -T fields -e frame.number 2>/dev/null | wc -l
}
check "tshark sees reclaim LOCKs (nlm.reclaim == 1): $(tsn 'nlm.reclaim == 1')" \
    test "$(tsn 'nlm.reclaim == 1')" -ge 15
check "tshark sees DENIED_GRACE_PERIOD replies (nlm.stat == 4): $(tsn 'nlm.stat == 4')" \
    test "$(tsn 'nlm.stat == 4')" -ge 8

# ---- sanitizers ------------------------------------------------------------

check "no sanitizer report in nlmd's logs" \
    eval 'itest_no_sanitizer "$W"/nlmd.log*'

# ---- summary ---------------------------------------------------------------

np=0
nf=0
for s in "${GROUP_SUMMARIES[@]}"; do
	set -- $s
	np=$((np + ${2:-0}))
	nf=$((nf + ${4:-0}))
done
echo "(${SECONDS}s; $(( SECONDS - T0 ))s inside the namespaces)"
echo "nlm: $np passed, $nf failed"
itest_finish
