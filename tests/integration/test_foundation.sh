#!/bin/bash
# test_foundation.sh - issue 2: nlmd registers with rpcbind and answers on
# every program, version and transport; refuses a second instance on its
# state directory; reads its configuration as documented; survives
# malformed input on every port; unregisters and exits 0 on SIGTERM/SIGINT.
#
# Run as root (it re-executes itself in private namespaces, see lib.sh):
#   bash tests/integration/test_foundation.sh
#   NLMD=build/asan/nlmd BUILD=asan bash tests/integration/test_foundation.sh
#
# Every expectation below was checked against what the Debian 12 tools
# actually print (rpcbind 1.2.6, libtirpc 1.3.3 rpcinfo).  Two facts shape
# the checks:
#  - this rpcinfo ignores `-n PORT' for -t/-u and always asks rpcbind, so
#    without rpcbind we call nlmd through tests/integration/garbage.c (raw
#    sockets) and libnfs_null.c (libnfs) instead;
#  - `rpcinfo -m' prints rpcbind's statistics; the udp6/tcp6 netids appear
#    in its RPCB_GETADDR table once clients looked our programs up over
#    IPv6, which is what we assert.
#
# The packet sender is seeded from GARBAGE_SEED (default: per process;
# the seed in use is printed in checks.log).

. "$(dirname "$0")/lib.sh"

# Build the helpers before entering the namespaces (same BUILD as nlmd).
if [ -z "${ITEST_INSIDE:-}" ] && [ -z "${ITEST_NO_BUILD:-}" ]; then
	make -s -C "$ITEST_TOP" -f GNUmakefile -f tests/integration/module.mk \
	    BUILD="${BUILD:-debug}" itest-helpers ||
	    { echo "FATAL: cannot build the test helpers"; exit 1; }
fi
itest_enter "$@"

T0=$SECONDS
HELPERS=${ITEST_HELPERS:-$ITEST_TOP/build/${BUILD:-debug}/tests}
GARBAGE=$HELPERS/garbage
LIBNFS_NULL=$HELPERS/libnfs_null
# Not the defaults (4045, 32765): proves the configured ports are used.
NLM_PORT=40045
NSM_PORT=40662
HOSTS="127.0.0.1 ::1"
NLM=100021
NSM=100024
# "prog:vers" of every service we offer.
SERVICES="$NLM:1 $NLM:3 $NLM:4 $NSM:1"
# The main daemon's record limit comes from its config file.
MAXREC=16384
SANITIZER_RE='ERROR: AddressSanitizer|ERROR: LeakSanitizer|WARNING: ThreadSanitizer|runtime error|SUMMARY: UndefinedBehaviorSanitizer'

for h in "$GARBAGE" "$LIBNFS_NULL" "$NLMD"; do
	[ -x "$h" ] || { echo "FATAL: $h missing (make?)"; exit 1; }
done

# ---- helpers ------------------------------------------------------------

# out_has REGEX CMD...: CMD's stdout+stderr matches the extended REGEX.
out_has() {
	local re=$1 out; shift
	out=$("$@" 2>&1)
	echo "\$ $* =>"; echo "$out"
	grep -Eq -- "$re" <<<"$out"
}

# status_and_msg RC REGEX CMD...: exit status is RC, output matches REGEX.
status_and_msg() {
	local want=$1 re=$2 out rc; shift 2
	out=$("$@" 2>&1); rc=$?
	echo "\$ $* => $rc"; echo "$out"
	[ "$rc" = "$want" ] && grep -Eq -- "$re" <<<"$out"
}

# Port to rpcbind universal-address suffix: 40045 -> .156.109
uaddr_port() { echo ".$(($1 / 256)).$(($1 % 256))"; }

port_of() { [ "$1" = "$NLM" ] && echo "$NLM_PORT" || echo "$NSM_PORT"; }

# rpcinfo -p lists prog/vers on udp and tcp with the right port, and
# nothing else of ours.
rpcinfo_p_ok() {
	local out s p v n
	out=$(rpcinfo -p 127.0.0.1) || return 1
	echo "$out"
	for s in $SERVICES; do
		p=${s%:*} v=${s#*:}
		for n in udp tcp; do
			awk -v p="$p" -v v="$v" -v n="$n" -v port="$(port_of "$p")" \
			    '$1 == p && $2 == v && $3 == n && $4 == port {f = 1}
			     END {exit !f}' <<<"$out" ||
			    { echo "missing: $p v$v $n"; return 1; }
		done
	done
	[ "$(awk '$1 == 100021 || $1 == 100024' <<<"$out" | wc -l)" = 8 ] ||
	    { echo "unexpected extra registrations"; return 1; }
}

# The full rpcbind dump over IPv6 has every prog/vers on udp, tcp, udp6
# and tcp6 with our port in the universal address.
rpcinfo_dump_ok() {
	local out s p v n
	out=$(rpcinfo ::1) || return 1
	echo "$out"
	for s in $SERVICES; do
		p=${s%:*} v=${s#*:}
		for n in udp tcp udp6 tcp6; do
			awk -v p="$p" -v v="$v" -v n="$n" \
			    -v u="$(uaddr_port "$(port_of "$p")")" \
			    '$1 == p && $2 == v && $3 == n &&
			     substr($4, length($4) - length(u) + 1) == u {f = 1}
			     END {exit !f}' <<<"$out" ||
			    { echo "missing: $p v$v $n"; return 1; }
		done
	done
}

# rpcinfo -s ::1: our two programs with exactly our versions, on all four
# netids.
rpcinfo_s_ok() {
	local out line
	out=$(rpcinfo -s ::1) || return 1
	echo "$out"
	for line in "$NLM 1,3,4 tcp,tcp6,udp,udp6 nlockmgr" \
	    "$NSM 1 tcp,tcp6,udp,udp6 status"; do
		set -- $line
		awk -v p="$1" -v vs="$2" -v ns="$3" -v name="$4" '
		    function sorted(s,   a, n, i, j, t, r) {
			n = split(s, a, ",")
			for (i = 1; i <= n; i++)
				for (j = i + 1; j <= n; j++)
					if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
			r = a[1]
			for (i = 2; i <= n; i++) r = r "," a[i]
			return r
		    }
		    $1 == p && sorted($2) == vs && sorted($3) == ns &&
		    $4 == name {f = 1}
		    END {exit !f}' <<<"$out" ||
		    { echo "bad or missing line for $1"; return 1; }
	done
}

# rpcinfo -m ::1: rpcbind's RPCB_GETADDR table shows our programs looked
# up over udp6 and tcp6 (done by the rpcinfo -T calls before), no failure.
rpcinfo_m_ok() {
	local out name v n s
	out=$(rpcinfo -m ::1) || return 1
	echo "$out"
	for s in nlockmgr:1 nlockmgr:3 nlockmgr:4 status:1; do
		name=${s%:*} v=${s#*:}
		for n in udp6 tcp6; do
			awk -v p="$name" -v v="$v" -v n="$n" \
			    '$1 == p && $2 == v && $3 == n && $4 >= 1 && $5 == 0 \
			     {f = 1} END {exit !f}' <<<"$out" ||
			    { echo "no GETADDR of $name v$v on $n"; return 1; }
		done
	done
}

# Nothing of 100021/100024 is registered (IPv4 portmap view and the full
# rpcbind view over IPv6).
nothing_registered() {
	local out
	out=$(rpcinfo -p 127.0.0.1; rpcinfo ::1) || return 1
	echo "$out"
	! awk '$1 == 100021 || $1 == 100024 {f = 1} END {exit !f}' <<<"$out"
}

# NULL through our raw-socket client on every service, transport, family.
raw_null_all() {
	local h s p v x
	for h in $HOSTS; do
		for s in $SERVICES; do
			p=${s%:*} v=${s#*:}
			for x in -t -u; do
				"$GARBAGE" call $x "$h" "$(port_of "$p")" "$p" "$v" 0 \
				    success || return 1
			done
		done
	done
}

# NULL through rpcinfo (port looked up in rpcbind) on every service over
# udp, tcp, udp6 and tcp6.
rpcinfo_null_all() {
	local s p v
	for s in $SERVICES; do
		p=${s%:*} v=${s#*:}
		out_has "program $p version $v ready and waiting" \
		    rpcinfo -t 127.0.0.1 "$p" "$v" || return 1
		out_has "program $p version $v ready and waiting" \
		    rpcinfo -u 127.0.0.1 "$p" "$v" || return 1
		out_has "program $p version $v ready and waiting" \
		    rpcinfo -T tcp6 ::1 "$p" "$v" || return 1
		out_has "program $p version $v ready and waiting" \
		    rpcinfo -T udp6 ::1 "$p" "$v" || return 1
	done
}

# Stop the current nlmd with signal $1; it must exit 0.
stop_nlmd_with() {
	kill -"$1" "$NLMD_PID"
	wait "$NLMD_PID"
	NLMD_RC=$?
	itest_forget "$NLMD_PID"
	[ "$NLMD_RC" = 0 ]
}

no_sanitizer_report() {
	itest_no_sanitizer "$ITEST_WORK"/nlmd.log*
}

# itest_start_nlmd appends to one log and waits for "nlmd ready" in it, so
# a second start would find the first one's line: give each start a fresh
# log (the old ones stay, as nlmd.log.N, for the sanitizer check).
NLMD_RUN=0
start_nlmd() {
	NLMD_RUN=$((NLMD_RUN + 1))
	[ -e "$ITEST_WORK/nlmd.log" ] &&
	    mv "$ITEST_WORK/nlmd.log" "$ITEST_WORK/nlmd.log.$NLMD_RUN"
	itest_start_nlmd "$@"
}

# ---- 1. configuration, no daemon ------------------------------------------

W=$ITEST_WORK
printf '[nlmd]\nnlm-port = 1111\nbogus-key = 1\n' >"$W/badkey.conf"
printf '[nlmd]\nnsm-port = 99999\n' >"$W/badvalue.conf"
printf '[nlmd]\nnlm-port = 1111\nthis line is not ini\n' >"$W/syntax.conf"
printf '[nlmd]\nrpcbind = perhaps\n' >"$W/badbool.conf"
cat >"$W/main.conf" <<EOF
# nfs.conf dialect: other sections are someone else's.
[general]
pipefs-directory = /run/rpc_pipefs
[nlmd]
nlm-port = 1111
nsm-port = 2222
; the command line wins over the two ports above, not over this:
max-record-size = $MAXREC
EOF

check "bad key in config file: exit 2, names the file and the key" \
    status_and_msg 2 "$W/badkey.conf.*bogus-key" \
    "$NLMD" -F -s "$W/cfgstate" -c "$W/badkey.conf"
check "out-of-range value in config file: exit 2, names file and key" \
    status_and_msg 2 "$W/badvalue.conf.*nsm-port.*99999" \
    "$NLMD" -F -s "$W/cfgstate" -c "$W/badvalue.conf"
check "bad boolean in config file: exit 2, names file and key" \
    status_and_msg 2 "$W/badbool.conf.*rpcbind.*perhaps" \
    "$NLMD" -F -s "$W/cfgstate" -c "$W/badbool.conf"
check "syntax error in config file: exit 2, names file and line" \
    status_and_msg 2 "$W/syntax.conf:3" \
    "$NLMD" -F -s "$W/cfgstate" -c "$W/syntax.conf"
check "missing config file named with -c: exit 2, names it" \
    status_and_msg 2 "$W/nonexistent.conf" \
    "$NLMD" -F -s "$W/cfgstate" -c "$W/nonexistent.conf"
check "bad value on the command line: exit 2, names the key" \
    status_and_msg 2 "max-record-size" \
    "$NLMD" -F -s "$W/cfgstate" --max-record-size=12x
check "unknown command-line option: exit 2 with usage" \
    status_and_msg 2 "usage: nlmd" "$NLMD" --no-such-option=1
check "no daemon started and no state dir created by refused configs" \
    test ! -e "$W/cfgstate"
check "file values apply; command line overrides the file" \
    status_and_msg 0 "nlm-port = 3333" \
    "$NLMD" -c "$W/main.conf" --nlm-port=3333 --print-config
check "file values apply where the command line is silent" \
    status_and_msg 0 "nsm-port = 2222.*max-record-size = $MAXREC" \
    bash -c "'$NLMD' -c '$W/main.conf' --nlm-port=3333 --print-config |
        tr '\n' ' '"
check "-p overrides the file too" \
    status_and_msg 0 "nlm-port = 4444" \
    "$NLMD" -c "$W/main.conf" -p 4444 --print-config
keys_in_help() {
	local help k n=0
	help=$("$NLMD" -h) || return 1
	for k in $("$NLMD" --print-config -c /dev/null | sed -n 's/ = .*//p'); do
		grep -qw -- "$k" <<<"$help" || { echo "-h lacks $k"; return 1; }
		n=$((n + 1))
	done
	# Some keys at all: an empty --print-config passed before.
	[ "$n" -ge 20 ] || { echo "--print-config listed $n keys"; return 1; }
}
check "nlmd -h lists every config key" keys_in_help

# ---- 2. --no-rpcbind, with no rpcbind at all ------------------------------

STATE=$W/state-norpcbind start_nlmd --no-rpcbind
check "--no-rpcbind without rpcbind: starts, says not registered" \
    grep -q "nlmd ready: .*not registered" "$NLMD_LOG"
check "--no-rpcbind without rpcbind: NULL on every service, udp+tcp, v4+v6" \
    raw_null_all
check "--no-rpcbind without rpcbind: libnfs NULL to NLM v4 and NSM v1" \
    bash -c "'$LIBNFS_NULL' 127.0.0.1 nlm4 $NLM_PORT &&
        '$LIBNFS_NULL' ::1 nsm1 $NSM_PORT"
check "--no-rpcbind without rpcbind: SIGTERM, exit 0" stop_nlmd_with TERM

# ---- 3. rpcbind up; --no-rpcbind still registers nothing --------------------

itest_start_rpcbind
STATE=$W/state-norpcbind start_nlmd --no-rpcbind
check "--no-rpcbind with rpcbind running: nothing registered" \
    nothing_registered
check "--no-rpcbind with rpcbind running: answers NULL" raw_null_all
check "--no-rpcbind with rpcbind running: SIGTERM, exit 0" \
    stop_nlmd_with TERM

# ---- 4. the registered daemon -----------------------------------------------

STATE=$W/state start_nlmd -c "$W/main.conf"
FIRST_PID=$NLMD_PID
check "ready line: command-line ports win over the config file" \
    grep -q "nlmd ready: .* on port $NLM_PORT, .* on port $NSM_PORT, udp+tcp, IPv4+IPv6, .*registered with rpcbind" \
    "$NLMD_LOG"
check "rpcinfo -p: 100021 v1,3,4 and 100024 v1 on udp and tcp, our ports" \
    rpcinfo_p_ok
check "rpcinfo ::1 (dump): every version on udp, tcp, udp6, tcp6, our ports" \
    rpcinfo_dump_ok
check "rpcinfo -s ::1: nlockmgr 1,3,4 and status 1 on tcp,tcp6,udp,udp6" \
    rpcinfo_s_ok
check "rpcinfo -l ::1 100021 4: inet6 udp and tcp at ::1, our port" \
    out_has "100021 +4 +inet6/udp/clts +::1$(uaddr_port $NLM_PORT) .*100021 +4 +inet6/tcp/cots_ord +::1$(uaddr_port $NLM_PORT)" \
    bash -c "rpcinfo -l ::1 100021 4 | tr '\n' ' '"
check "rpcinfo -t/-u (IPv4) and -T tcp6/udp6 (::1): NULL on every version" \
    rpcinfo_null_all
check "rpcinfo -m ::1: udp6/tcp6 GETADDR of every version succeeded" \
    rpcinfo_m_ok
for h in 127.0.0.1 ::1; do
	x=-t; [ "$h" = ::1 ] && x="-T tcp6"
	y=-u; [ "$h" = ::1 ] && y="-T udp6"
	check "rpcinfo $x $h 100021 2: version mismatch, low 1 high 4" \
	    status_and_msg 1 "Program/version mismatch; low version = 1, high version = 4" \
	    rpcinfo $x "$h" 100021 2
	check "rpcinfo $y $h 100021 2: version mismatch, low 1 high 4" \
	    status_and_msg 1 "Program/version mismatch; low version = 1, high version = 4" \
	    rpcinfo $y "$h" 100021 2
	check "rpcinfo $y $h 100024 2: version mismatch, low 1 high 1" \
	    status_and_msg 1 "Program/version mismatch; low version = 1, high version = 1" \
	    rpcinfo $y "$h" 100024 2
done
check "libnfs (portmapper lookup): NULL to NLM v4 and NSM v1, IPv4+IPv6" \
    bash -c "'$LIBNFS_NULL' 127.0.0.1 nlm4 && '$LIBNFS_NULL' 127.0.0.1 nsm1 &&
        '$LIBNFS_NULL' ::1 nlm4 && '$LIBNFS_NULL' ::1 nsm1"
check "libnfs (direct port): NULL to NLM v4 and NSM v1, IPv4+IPv6" \
    bash -c "'$LIBNFS_NULL' 127.0.0.1 nlm4 $NLM_PORT &&
        '$LIBNFS_NULL' ::1 nsm1 $NSM_PORT"

# A second nlmd on the same state directory (other ports, so only the
# state directory can stop it).
check "second nlmd on the same state dir: exit 1 with a clear message" \
    status_and_msg 1 "state directory $W/state is in use by another nlmd \(pid $FIRST_PID\); refusing to start" \
    timeout 10 "$NLMD" -F -s "$W/state" --nlm-port 0 --nsm-port 0
check "... the first keeps running" kill -0 "$FIRST_PID"
check "... and is still registered" rpcinfo_p_ok
check "... and still answers NULL on every version" rpcinfo_null_all

# ---- 5. malformed input on every port ------------------------------------------

# Header-level defects, once per transport and family (NLM port).
header_defects() {
	local h=$1 x=$2 p=$NLM_PORT
	"$GARBAGE" call $x "$h" $p 100021 2 0 prog_mismatch:1-4 &&
	"$GARBAGE" call $x "$h" $p 100021 0 0 prog_mismatch:1-4 &&
	"$GARBAGE" call $x "$h" $p 100021 5 0 prog_mismatch:1-4 &&
	"$GARBAGE" call $x "$h" $NSM_PORT 100024 2 0 prog_mismatch:1-1 &&
	"$GARBAGE" call $x "$h" $p 100099 1 0 prog_unavail &&
	"$GARBAGE" call $x "$h" $p 100021 4 99 proc_unavail &&
	"$GARBAGE" call $x "$h" $NSM_PORT 100024 1 99 proc_unavail &&
	"$GARBAGE" call $x -f 6 "$h" $p 100021 4 0 auth_error &&
	"$GARBAGE" call $x -c 401 "$h" $p 100021 4 0 none &&
	"$GARBAGE" call $x -c 4000000000 "$h" $p 100021 4 0 none &&
	"$GARBAGE" call $x -D "$h" $p 100021 4 0 none &&
	"$GARBAGE" call $x -T 512 "$h" $p 100021 4 0 success
}

# Valid header, garbage arguments: GARBAGE_ARGS, for each program.
garbage_args() {
	local h=$1 x=$2
	# NLM4 TEST: cookie length 0x7fffffff; then no args at all; then
	# three stray bytes.
	"$GARBAGE" call $x -a 7fffffff "$h" $NLM_PORT 100021 4 1 garbage_args &&
	"$GARBAGE" call $x "$h" $NLM_PORT 100021 4 2 garbage_args &&
	"$GARBAGE" call $x -A 3 "$h" $NLM_PORT 100021 1 1 garbage_args &&
	"$GARBAGE" call $x -a 00000000 "$h" $NLM_PORT 100021 3 2 garbage_args &&
	# SM_STAT: name length 0xffffffff; SM_MON with nothing after the name.
	"$GARBAGE" call $x -a ffffffff "$h" $NSM_PORT 100024 1 1 garbage_args &&
	"$GARBAGE" call $x -a 0000000161000000 "$h" $NSM_PORT 100024 1 2 \
	    garbage_args
}

for h in $HOSTS; do
	for x in -u -t; do
		t=udp; [ $x = -t ] && t=tcp
		check "$t $h: bad version, program, procedure, credentials, direction" \
		    header_defects "$h" $x
		check "$t $h: valid header with garbage args gets GARBAGE_ARGS" \
		    garbage_args "$h" $x
	done
	check "udp $h: RPC version 3 gets MSG_DENIED RPC_MISMATCH (2-2)" \
	    "$GARBAGE" call -u -r 3 "$h" $NLM_PORT 100021 4 0 rpc_mismatch
	for port in $NLM_PORT $NSM_PORT; do
		p=$NLM v=4; [ $port = $NSM_PORT ] && p=$NSM v=1
		check "udp $h:$port: 300 random datagrams, only RPC_MISMATCH replies" \
		    "$GARBAGE" udp-random "$h" $port 300
		check "tcp $h:$port: 30 random byte streams, no reply" \
		    "$GARBAGE" tcp-random "$h" $port 30
		check "tcp $h:$port: record with a garbage header, no reply" \
		    "$GARBAGE" tcp-garbage-record "$h" $port $p $v
		check "tcp $h:$port: records over max-record-size ($MAXREC) closed; exactly $MAXREC answered" \
		    "$GARBAGE" tcp-oversize "$h" $port $p $v $MAXREC
		check "tcp $h:$port: half-sent record does not stall other clients" \
		    "$GARBAGE" tcp-half "$h" $port $p $v
	done
done
check "after all that: nlmd still running" kill -0 "$FIRST_PID"
check "after all that: NULL on every version (rpcinfo, udp/tcp/udp6/tcp6)" \
    rpcinfo_null_all
check "after all that: NULL on every version (raw, both ports' services)" \
    raw_null_all
check "after all that: still registered" rpcinfo_p_ok
check "oversized records were logged" \
    grep -q "closing connection from .*record over $MAXREC bytes" "$NLMD_LOG"

# ---- 6. shutdown -------------------------------------------------------------

check "SIGTERM: nlmd exits 0" stop_nlmd_with TERM
check "SIGTERM: nothing of 100021/100024 left registered" nothing_registered
check "SIGTERM: 'stopped' logged" grep -q "nlmd: stopped" "$NLMD_LOG"

printf '[nlmd]\nverbose = 2\n' >"$W/hup.conf"
STATE=$W/state start_nlmd -c "$W/hup.conf"
check "restart on the same state dir after a clean stop" rpcinfo_p_ok
# The log level in effect, not the one a log line reports: SM_MON is
# refused with a debug line (verbose > 0) before its reply.
# SM_MON of "a" for "b", NLM v4 procedure 16, a zero priv.
SM_MON_ARGS=00000001610000000000000162000000$(printf '%s' \
    000186b5 00000004 00000010 00000000000000000000000000000000)
sm_mon_debug_lines() {
	"$GARBAGE" call -u -a "$SM_MON_ARGS" 127.0.0.1 $NSM_PORT $NSM 1 2 \
	    success >/dev/null 2>&1 || { echo x; return; }
	grep -c "SM_MON for a (prog 100021)" "$NLMD_LOG"
}
check "verbose = 2: an SM_MON is refused with a debug line" \
    test "$(sm_mon_debug_lines)" = 1
printf '[nlmd]\nverbose = 0\n' >"$W/hup.conf"
kill -HUP "$NLMD_PID"
check "SIGHUP: the file is reread and the log level applied" \
    itest_wait grep -q "SIGHUP: .*hup.conf reread: verbose = 0 now" "$NLMD_LOG"
printf '[nlmd]\nverbose = lots\n' >"$W/hup.conf"
kill -HUP "$NLMD_PID"
check "SIGHUP: a broken file keeps the running configuration" \
    itest_wait grep -q "keeping the running configuration" "$NLMD_LOG"
check "SIGHUP: still answering" rpcinfo_p_ok
# A file that parses but that the next start would refuse (its callback
# retry maximum below its minimum) applies in no part, not even verbose.
printf '[nlmd]\nverbose = 2\ncallback-retry-min-ms = 5000\ncallback-retry-max-ms = 100\n' \
    >"$W/hup.conf"
kill -HUP "$NLMD_PID"
check "SIGHUP: a file the next start would refuse applies in no part (verbose stays 0)" \
    itest_wait grep -q "next start will refuse it; keeping the running configuration (verbose = 0)" "$NLMD_LOG"
check "... in effect: an SM_MON adds no debug line" \
    test "$(sm_mon_debug_lines)" = 1
check "SIGINT: nlmd exits 0" stop_nlmd_with INT
check "SIGINT: nothing of 100021/100024 left registered" nothing_registered

# SIGHUP while nlmd starts (state directory locked, store loading, the
# loop not yet running): held for the loop, which rereads the file,
# instead of ending nlmd (the default action).  100,000 stored locks make
# the load last long enough to be hit.
HUPLOG=$W/hupstart.log
printf '[nlmd]\nverbose = 0\n' >"$W/hup.conf"
hup_nlmd() {
	"$NLMD" -F -s "$W/hupstate" --no-rpcbind --nlm-port=5045 \
	    --nsm-port=5046 --control-socket= -c "$W/hup.conf" \
	    >>"$HUPLOG" 2>&1 &
	HP=$!
	ITEST_PIDS+=($HP)
}
B=${BUILD:-asan}
if make -s -C "$ITEST_TOP" BUILD="$B" "build/$B/nlmbench" \
    >"$W/make-bench.log" 2>&1; then
	hup_nlmd
	itest_wait grep -q "nlmd ready" "$HUPLOG"
	check "startup SIGHUP: 100,000 locks held (nlmbench hold -K)" \
	    "$(itest_tool nlmbench "$ITEST_TOP/build/$B/nlmbench")" \
	    -p 5045 -m hold -c 4 -k 25000 -K -t 1
	kill -TERM "$HP"
	wait "$HP"
	: >"$HUPLOG"
	hup_nlmd
	for _ in $(seq 1000); do
		[ "$(cat "$W/hupstate/nlmd.lock" 2>/dev/null)" = "$HP" ] &&
		    break
		sleep 0.002
	done
	NHUP=0
	while kill -0 "$HP" 2>/dev/null &&
	    ! grep -q "nlmd ready" "$HUPLOG"; do
		kill -HUP "$HP" 2>/dev/null && NHUP=$((NHUP + 1))
		sleep 0.005
	done
	check "SIGHUP while loading 100,000 locks ($NHUP sent): nlmd lives on, ready" \
	    bash -c "[ $NHUP -gt 0 ] && kill -0 $HP && grep -q 'nlmd ready' '$HUPLOG'"
	check "... and rereads the file once its loop runs" \
	    itest_wait grep -q "SIGHUP: .*hup.conf reread" "$HUPLOG"
	kill -TERM "$HP" 2>/dev/null
	wait "$HP" 2>/dev/null
else
	check "startup SIGHUP: building nlmbench ($W/make-bench.log)" false
fi

# --verbose=N is the command line: it wins over the file after SIGHUP too,
# as -d does.
printf '[nlmd]\nverbose = 1\n' >"$W/hup.conf"
STATE=$W/state start_nlmd --no-rpcbind -c "$W/hup.conf" --verbose=2
kill -HUP "$NLMD_PID"
check "SIGHUP: reread, --verbose=2 of the command line kept over the file's 1" \
    itest_wait grep -q "SIGHUP: .*hup.conf reread: verbose = 2 now" "$NLMD_LOG"
check "... SIGTERM, exit 0" stop_nlmd_with TERM

# The command line wins over the file after SIGHUP too, so the reread file
# is checked with it on top: --callback-retry-min-ms=100 under the file's
# maximum of 500 started, and is what the next start would run with.
# (Before, the file was checked alone, against the default minimum of
# 1000: "the next start will refuse it", and verbose was not applied.)
printf '[nlmd]\nverbose = 1\ncallback-retry-max-ms = 500\n' >"$W/hup.conf"
STATE=$W/state start_nlmd --no-rpcbind -c "$W/hup.conf" \
    --callback-retry-min-ms=100
printf '[nlmd]\nverbose = 0\ncallback-retry-max-ms = 500\n' >"$W/hup.conf"
kill -HUP "$NLMD_PID"
check "SIGHUP: the file is checked with the command line over it (min 100 from it, max 500): reread, verbose = 0" \
    itest_wait grep -q "SIGHUP: .*hup.conf reread: verbose = 0 now" "$NLMD_LOG"
check "... SIGTERM, exit 0" stop_nlmd_with TERM

# In the background, with a relative state directory and config file:
# daemon() moves to /, and neither may be looked for there afterwards.
REL=nlmd-itest-rel.$$
mkdir -p "$W/relcwd"
printf '[nlmd]\nverbose = 0\n' >"$W/relcwd/rel.conf"
(cd "$W/relcwd" && "$NLMD" -s "$REL" -c rel.conf --no-rpcbind \
    --nlm-port=0 --nsm-port=0 --control-socket=)
check "background, -s relative: the store is created in that directory" \
    itest_wait test -e "$W/relcwd/$REL/meta.db"
BGPID=$(cat "$W/relcwd/$REL/nlmd.lock" 2>/dev/null)
ITEST_PIDS+=(${BGPID:-})
check "background, -s relative: the daemon runs (pid in the lock file)" \
    kill -0 "${BGPID:-0}"
check "background, -s relative: nothing made in / instead" test ! -e "/$REL"
rm -rf "/$REL"
kill -HUP "${BGPID:-0}" 2>/dev/null
sleep 0.3
check "background, -c relative: still running after SIGHUP (the reread itself goes to syslog)" \
    kill -0 "${BGPID:-0}"
kill -TERM "${BGPID:-0}" 2>/dev/null
check "background: SIGTERM stops it" \
    itest_wait bash -c "! kill -0 ${BGPID:-0}"

# A background start that fails is not a success: the caller waits for
# the daemon to be ready, and gets its failure (before: exit 0 at once,
# the failure in syslog only).  Settings the system judges fail before
# the store opens (no epoch spent).
python3 -c 'import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", 4077)); time.sleep(30)' &
HOLDER=$!
ITEST_PIDS+=($HOLDER)
itest_wait bash -c "ss -Hlun 'sport = :4077' | grep -q ." 
"$NLMD" -s "$W/state-bgfail" --no-rpcbind --nlm-port=0 --nsm-port=4077 \
    --control-socket= >"$W/bgfail.out" 2>&1
BGRC=$?
check "background, NSM port taken: exit status 1 (was 0)" test $BGRC = 1
check "... and said so on the terminal" \
    grep -q "did not start in the background (exit status 1)" "$W/bgfail.out"
BGPID=$(cat "$W/state-bgfail/nlmd.lock" 2>/dev/null)
check "... no daemon left" \
    bash -c "test -z '$BGPID' || ! kill -0 '$BGPID' 2>/dev/null"
kill "$HOLDER" 2>/dev/null
"$NLMD" -s "$W/state-bgaddr" --no-rpcbind --nlm-port=0 --nsm-port=0 \
    --control-socket= --metrics-address=not-an-address >"$W/bgaddr.out" 2>&1
check "background, metrics-address malformed: exit status 2 (a bad value), said so" \
    bash -c "test $? = 2 && grep -q 'not ADDRESS:PORT' '$W/bgaddr.out'"
check "... before the store opened (no epoch spent)" \
    test ! -e "$W/state-bgaddr/meta.db"
"$NLMD" -s "$W/state-bggrp" --no-rpcbind --nlm-port=0 --nsm-port=0 \
    --control-socket="$W/bggrp.sock" --control-group=no-such-group-$$ \
    >"$W/bggrp.out" 2>&1
check "background, control-group unknown: exit status 1, said so" \
    bash -c "test $? = 1 && grep -q 'no such group' '$W/bggrp.out'"

# A state directory others may write is taken, and said so (before:
# silently).
mkdir -p "$W/state-open"
chmod 0777 "$W/state-open"
STATE=$W/state-open start_nlmd --no-rpcbind
check "a state directory of mode 0777: started, with a warning" \
    grep -q "state directory .*state-open is writable by everybody (mode 0777)" \
    "$NLMD_LOG"
check "... SIGTERM, exit 0" stop_nlmd_with TERM

# ---- the NSM state number: from the store's epoch; an old file migrated --

mkdir -p "$W/state-migrate"
echo 41 >"$W/state-migrate/nsm-state"
STATE=$W/state-migrate start_nlmd --no-rpcbind
check "an nsm-state file of an earlier nlmd (41) is migrated: NSM state 43" \
    grep -q "nlmd ready: .*epoch 22, NSM state 43" "$NLMD_LOG"
check "... and removed (the store holds the number now)" \
    test ! -e "$W/state-migrate/nsm-state"
check "... SIGTERM, exit 0" stop_nlmd_with TERM
STATE=$W/state-migrate start_nlmd --no-rpcbind
check "the next start: epoch 23, NSM state 45" \
    grep -q "nlmd ready: .*epoch 23, NSM state 45" "$NLMD_LOG"
check "... SIGTERM, exit 0" stop_nlmd_with TERM
check "nlmd --dump-state of a directory without a store: exit 1, creates none" \
    bash -c "! '$NLMD' --dump-state -s '$W/no-store' 2>/dev/null &&
        test ! -e '$W/no-store'"
check "nlmd --dump-state of the stopped server: epoch 23" \
    bash -c "'$NLMD' --dump-state -s '$W/state-migrate' | grep -qx 'epoch 23'"
STATE=$W/state-migrate start_nlmd --no-rpcbind
dump_refused() {
	local out rc
	out=$("$NLMD" --dump-state -s "$W/state-migrate" 2>&1)
	rc=$?
	echo "exit $rc: $out"
	[ "$rc" = 1 ] && echo "$out" | grep -q "$NLMD_PID" &&
	    ! echo "$out" | grep -q "^epoch"
}
check "nlmd --dump-state while it runs: exit 1, names the owner's pid" \
    dump_refused
check "... SIGTERM, exit 0" stop_nlmd_with TERM

check "no sanitizer report in the nlmd log ($(basename "$NLMD"))" \
    no_sanitizer_report
# Its duration is reported, not checked: a timer says nothing about nlmd
# on a loaded machine (a review run under nice 19 took 70 s).
echo "whole test: $((SECONDS - T0)) s"
[ "$ITEST_XFAIL" = 0 ] || echo "($ITEST_XFAIL known failure(s) marked XFAIL)"
itest_finish
