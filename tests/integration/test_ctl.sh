#!/bin/bash
# test_ctl.sh - the operator's view: nlmctl status (tables, --json),
# metrics, release, grace end, and the control socket's defences.
#
#   bash tests/integration/test_ctl.sh                        (build/debug)
#   NLMD=build/asan/nlmd BUILD=asan bash tests/integration/test_ctl.sh
#
# nlmd in lib.sh's namespace (10.96.0.1) with synchronous GRANTED
# callbacks; a client namespace (10.96.0.2, its own rpcbind) runs a
# scripted workload from nsmpeer (five hosts: three locks, one denied,
# one blocked waiter, one TEST) and the callback receiver; then:
#   - status, status --json (checked with jq) and metrics (checked with
#     promtool) report exactly what the workload did; GET /metrics over
#     HTTP (metrics-address) serves the same text (404/405 otherwise);
#   - --host and --fh filters;
#   - release --dry-run changes nothing; release --owner frees the lock and
#     the waiter behind it gets its GRANTED callback; release --host and
#     --fh;
#   - a caller that is not root is refused (file mode, and peer credentials
#     when the socket is opened to everyone);
#   - garbage, an oversized request and an unknown command get an error
#     and nlmd stays up;
#   - output into a full disk is a failure (exit 1);
#   - a 19-digit offset is a JSON number;
#   - a 500-byte host name keeps the table's columns, and so do names
#     with spaces, control characters, an empty name and "-" (escaped;
#     JSON keeps them as sent, and stays valid for one not UTF-8);
#   - a request of 4096 bytes is sent whole (one more: usage error);
#   - after a restart: status shows grace, `grace end' ends it (logged);
#   - metrics-address with port 0: the log names the port it got;
#   - a large table (nlmbench: 4 hosts x 50,000 locks, 5,000 under TSan):
#     the dump of one file, a dry run by address, and `grace end' after a
#     kill -9 answering only once all is dropped and durable.

. "$(dirname "$0")/lib.sh"

BUILD=${BUILD:-debug}
if [ -z "${ITEST_INSIDE:-}" ] && [ "$(id -u)" = 0 ] &&
    ! unshare --net --mount true 2>/dev/null; then
	echo "SKIP: cannot create network and mount namespaces"
	exit 77
fi
if [ -z "${ITEST_INSIDE:-}" ] && [ -z "${ITEST_NO_BUILD:-}" ]; then
	make -s -C "$ITEST_TOP" BUILD="$BUILD" all nsm-itest-bins \
	    "build/$BUILD/nlmbench" ||
	    { echo "FATAL: cannot build"; exit 1; }
fi
itest_enter "$@"

W=$ITEST_WORK
CTL=${NLMCTL:-$ITEST_TOP/build/$BUILD/nlmctl}
PEER0=$ITEST_TOP/build/$BUILD/tests/nsm/nsmpeer
SOCK=/run/nlmd/nlmd.sock
for t in jq promtool setpriv rpcbind; do
	command -v "$t" >/dev/null ||
	    { echo "SKIP: $t not installed (make deps)"; exit 77; }
done
[ -x "$CTL" ] && [ -x "$PEER0" ] || { echo "FATAL: binaries missing"; exit 1; }
PEER=$(itest_tool nsmpeer "$PEER0")
CTL=$(itest_tool nlmctl "$CTL")
chmod 755 "$W"

hex() { printf '%s' "$1" | od -An -tx1 | tr -d ' \n'; }
# jqcheck DESCRIPTION FILTER [nlmctl args...]: the JSON satisfies FILTER.
jqcheck() {
	local what=$1 f=$2
	shift 2
	"$CTL" --json "$@" >"$W/out.json" 2>&1
	rcheck "$what" jq -e "$f" "$W/out.json"
}

SRV=10.96.0.1
CLI=10.96.0.2
NS=ctlcli-$$
trap 'itest_cleanup; ip netns del $NS 2>/dev/null' EXIT
itest_start_rpcbind
itest_client_host $NS $SRV $CLI ct$$
itest_start_nlmd -d --callbacks=sync --grace-period=60 \
    --metrics-address=127.0.0.1:9464 --max-name-length=1024
cli() { "${ON_CLI[@]}" "$PEER" "$@"; }

# ---- an idle server ------------------------------------------------------------

# With --locks the three arrays are there, empty or not, in their order
# (they were left out while empty: nlmctl(8)'s own example, jq
# '.locks[].host_name', failed on an idle server, "cannot iterate over
# null"; and their order was that of the first record of each kind).
jqcheck "--json status --locks, nothing held: locks, shares, waiters all []" \
    '(keys_unsorted) == ["version", "server", "grace", "totals", "hosts",
     "locks", "shares", "waiters"] and .locks == [] and .shares == [] and
     .waiters == []' status --locks
jqcheck "--json status without --locks: no record arrays" \
    '(keys_unsorted) == ["version", "server", "grace", "totals", "hosts"]' \
    status

# ---- the workload ------------------------------------------------------------

"${ON_CLI[@]}" "$PEER" cbrecv 60 >"$W/cbrecv.log" 2>&1 &
CB_PID=$!
ITEST_PIDS+=($CB_PID)
itest_wait grep -q ready "$W/cbrecv.log"
rcheck "alice locks f1 [0,10)" cli lock $SRV alice f1 0 10 3
rcheck "bob locks f1 [20,10)" cli lock $SRV bob f1 20 10 3
rcheck "carol locks f2 to EOF" cli lock $SRV carol f2 0 0 3
cli lock $SRV erin f1 5 1 3 >"$W/erin.log"
check "erin's conflicting lock is denied" test $? = 1
cli lock $SRV dave f1 0 5 3 block >"$W/dave.log"
check "dave's blocking lock is queued" test $? = 3
cli test $SRV x f1 0 1 >/dev/null
check "a TEST sees the holder" test $? = 1

# ---- status ------------------------------------------------------------------

rcheck "nlmctl status runs" "$CTL" status
"$CTL" status --locks >"$W/status.txt" 2>&1
rcheck "status: totals line (5 hosts, 2 files, 3 locks, 1 waiter)" \
    grep -E "^totals: 5 host\(s\), 2 file\(s\), 3 lock\(s\), 0 share\(s\), 1 waiter\(s\)" \
    "$W/status.txt"
rcheck "status --locks: dave's request queued" \
    awk '$1 == "waiter" && $2 == "dave" && /queued for/ {f = 1} END {exit !f}' \
    "$W/status.txt"
rcheck "status --locks: three lock rows" \
    awk '$1 == "lock" {n++} END {exit n != 3}' "$W/status.txt"
jqcheck "--json: totals, hosts, locks, waiters as the workload made them" \
    '.version == 1 and .totals.locks == 3 and .totals.waiters == 1 and
     .totals.hosts == 5 and (.hosts | length) == 5 and (.locks | length) == 3
     and (.waiters | length) == 1 and .waiters[0].host_name == "dave" and
     .waiters[0].start == 0 and .waiters[0].len == 5 and
     ([.hosts[] | select(.name == "alice")][0].locks == 1) and
     ([.hosts[] | select(.name == "dave")][0].waiters == 1) and
     .server.epoch == 1 and .grace.active == 0' status --locks
jqcheck "--json: no share held, yet \"shares\" is there, in its place" \
    '(keys_unsorted) == ["version", "server", "grace", "totals", "hosts",
     "locks", "shares", "waiters"] and .shares == []' status --locks
jqcheck "--json: every lock has owner, range, mode, token and epoch" \
    '[.locks[] | select((.oh | type) == "string" and
      (.fh | type) == "string" and (.start | type) == "number" and
      .mode == "exclusive" and .token > 0 and .epoch == 1)] | length == 3' \
    status --locks
jqcheck "--host bob: bob only" \
    '(.hosts | length) == 1 and (.locks | length) == 1 and
     .locks[0].host_name == "bob" and .locks[0].start == 20' \
    status --locks --host bob
jqcheck "--fh f2: carol's lock only" \
    '(.locks | length) == 1 and .locks[0].host_name == "carol" and
     .locks[0].len == 0' status --locks --fh "$(hex f2)"

# ---- metrics -----------------------------------------------------------------

"$CTL" metrics >"$W/metrics.txt" 2>&1
rcheck "promtool check metrics: clean" \
    sh -c "promtool check metrics <'$W/metrics.txt'"
metric() { awk -v k="$1" '$1 == k {print $2}' "$W/metrics.txt"; }
# nlmctl(8)'s METRICS section names every family the server exposes, with
# its type (a family added to the code and not to the page fails here).
rcheck "metrics: every family is in nlmctl(8) with its type" \
    awk 'FNR == NR { if ($1 == ".It" && $2 == "Li") doc[$3] = $5; next }
	$1 == "#" && $2 == "TYPE" { n++; if (doc[$3] != $4) {
		print "not in man/nlmctl.8 as a " $4 ": " $3; bad = 1 } }
	END { exit bad || n < 40 }' "$ITEST_TOP/man/nlmctl.8" "$W/metrics.txt"
rcheck "metrics: 5 LOCKs, 1 TEST received" test \
    "$(metric 'nlmd_nlm_requests_total{version="4",procedure="lock"}')" = 5 -a \
    "$(metric 'nlmd_nlm_requests_total{version="4",procedure="test"}')" = 1
rcheck "metrics: LOCK outcomes 3 granted, 1 denied, 1 blocked" test \
    "$(metric 'nlmd_nlm_replies_total{procedure="lock",status="granted"}')" = 3 -a \
    "$(metric 'nlmd_nlm_replies_total{procedure="lock",status="denied"}')" = 1 -a \
    "$(metric 'nlmd_nlm_replies_total{procedure="lock",status="blocked"}')" = 1
rcheck "metrics: gauges 3 locks, 1 waiter, 5 hosts" test \
    "$(metric nlmd_locks)" = 3 -a "$(metric nlmd_waiters)" = 1 -a \
    "$(metric nlmd_hosts)" = 5
rcheck "metrics: the latency histogram counted the 5 LOCKs and the TEST" test \
    "$(metric 'nlmd_nlm_request_duration_seconds_count{procedure="lock"}')" = 5 -a \
    "$(metric 'nlmd_nlm_request_duration_seconds_bucket{procedure="lock",le="+Inf"}')" = 5 -a \
    "$(metric 'nlmd_nlm_request_duration_seconds_count{procedure="test"}')" = 1
# Loop turns by duration: cumulative buckets that never decrease, +Inf
# equal to the count, as many turns as the loop has run at least (one per
# request here, and more), and a sum no longer than the uptime.
rcheck "metrics: the loop turn histogram is cumulative and counts every turn" \
    awk -v up="$(metric nlmd_uptime_seconds)" '
	$1 ~ /^nlmd_loop_turn_seconds_bucket/ { if ($2 < last) bad = 1
		last = $2; if ($1 ~ /le="\+Inf"/) inf = $2; nb++ }
	$1 == "nlmd_loop_turn_seconds_count" { count = $2 }
	$1 == "nlmd_loop_turn_seconds_sum" { sum = $2 }
	END { exit !(nb == 11 && !bad && inf == count && count >= 6 &&
	    sum > 0 && sum <= up + 1) }' "$W/metrics.txt"
curl -sS -D "$W/http.hdr" -o "$W/http.txt" http://127.0.0.1:9464/metrics \
    2>"$W/curl.err"
rcheck "HTTP GET /metrics: 200, text/plain version 0.0.4" \
    sh -c "grep -q '^HTTP/1.1 200' '$W/http.hdr' &&
	grep -qi '^Content-Type: text/plain; version=0.0.4' '$W/http.hdr'"
rcheck "HTTP /metrics: promtool check metrics clean" \
    sh -c "promtool check metrics <'$W/http.txt'"
rcheck "HTTP /metrics says what nlmctl metrics says (uptime and loop turns aside)" \
    bash -c "diff <(grep -v 'uptime\\|_loop_turn' '$W/metrics.txt') <(grep -v 'uptime\\|_loop_turn' '$W/http.txt')"
# One peer holding 16 connections (each reopened as the idle timeout
# closes it) took every place: the scraper at another address got nothing.
# The hog says how many it opened: none opened would make the check below
# pass without testing anything.
python3 -c 'import socket, sys, time
ss = []
for i in range(16):
    try:
        ss.append(socket.create_connection(("127.0.0.1", 9464), timeout=3))
    except OSError as e:
        print("connect:", e, flush=True)
print("opened", len(ss), flush=True)
time.sleep(5)' >"$W/hog.txt" 2>&1 &
HOG=$!
ITEST_PIDS+=($HOG)
itest_wait grep -q '^opened' "$W/hog.txt"
rcheck "HTTP: one address opened 16 connections" \
    sh -c "grep -qx 'opened 16' '$W/hog.txt' || { cat '$W/hog.txt'; exit 1; }"
code=$(curl -s -m 3 --interface 127.0.0.2 -o /dev/null -w '%{http_code}' \
    http://127.0.0.1:9464/metrics)
# (libmicrohttpd keeps 4 of them, max per address, and closes the other 12
# at once: tests/ctl/test_httpmetrics.c.)
check "HTTP: 16 connections tried by one address leave a place for another ($code)" \
    test "$code" = 200
kill $HOG 2>/dev/null
wait $HOG 2>/dev/null
itest_forget $HOG
code=$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:9464/other)
check "HTTP: another path is 404 ($code)" test "$code" = 404
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST \
    http://127.0.0.1:9464/metrics)
check "HTTP: POST is 405 ($code)" test "$code" = 405

# ---- release -----------------------------------------------------------------

"$CTL" --dry-run release --host alice >"$W/dry.txt" 2>&1
rcheck "release --dry-run lists alice's lock" \
    grep -q "would release (dry run, nothing changed): 1 lock(s)" "$W/dry.txt"
jqcheck "... and changes nothing" '.totals.locks == 3 and .totals.waiters == 1' \
    status
# The SVID of --owner is a 32-bit number, all of it: one over 32 bits
# named svid 1's lock (4294967297 cut to 1), trailing junk was dropped,
# and no number at all was svid 0.
for bad in 4294967297 1x "" x; do
	"$CTL" --dry-run release --owner "alice:$bad:$(hex oh-alice)" \
	    >"$W/badsvid.txt" 2>&1
	rc=$?
	check "release --owner alice:$bad:...: refused (exit $rc), releases nothing" \
	    bash -c "[ $rc = 1 ] && grep -q 'SVID' '$W/badsvid.txt'"
done
rcheck "release --owner alice:1:oh-alice" \
    "$CTL" release --owner "alice:1:$(hex oh-alice)"
rcheck "the waiter behind it (dave) got its GRANTED callback" \
    sh -c "for i in \$(seq 100); do grep -q '^granted [^ ]* f1 0 5' \
	'$W/cbrecv.log' && exit 0; sleep 0.05; done; exit 1"
jqcheck "after the release: alice holds nothing, dave holds [0,5)" \
    '.totals.locks == 3 and .totals.waiters == 0 and
     ([.locks[] | select(.host_name == "dave" and .start == 0 and
       .len == 5)] | length) == 1 and
     ([.locks[] | select(.host_name == "alice")] | length) == 0' \
    status --locks
rcheck "the release is logged with the operator's uid" \
    grep -q "operator (uid 0, pid [0-9]*): released 1 lock" "$NLMD_LOG"
rcheck "release --fh f2 frees carol's lock" "$CTL" release --fh "$(hex f2)"
rcheck "release --host bob frees bob's" "$CTL" release --host bob
jqcheck "left: dave's lock" '.totals.locks == 1 and .locks[0].host_name == "dave"' \
    status --locks
"$CTL" --json --dry-run release --addr $CLI >"$W/addr.json" 2>&1
rcheck "release --dry-run --addr $CLI names dave's lock, the one left there" \
    jq -e '.dry_run == true and (.released | length) == 1 and
     .released[0].kind == "lock" and .released[0].start == 0 and
     .released[0].len == 5 and .released[0].fh == "6631"' \
    "$W/addr.json"
rcheck "release --addr of an address that is no IP address: exit 1" \
    sh -c "! '$CTL' release --addr not-an-address"
"$CTL" release --host nobody-here >"$W/nohost.txt" 2>&1
check "release of an unknown host: exit 1" test $? = 1
"$CTL" release --host a --fh 00 >/dev/null 2>&1
check "release with two selectors: usage error (2)" test $? = 2

# ---- who may ask -------------------------------------------------------------

setpriv --reuid=65534 --regid=65534 --clear-groups "$CTL" status \
    >"$W/nobody1.txt" 2>&1
check "a non-root caller cannot open the socket (mode 0600): exit 1" test $? = 1
rcheck "... and is told so" grep -qi "permission denied" "$W/nobody1.txt"
chmod 666 "$SOCK"
setpriv --reuid=65534 --regid=65534 --clear-groups "$CTL" status \
    >"$W/nobody2.txt" 2>&1
check "socket opened to all: nlmd checks the peer and refuses (exit 1)" \
    test $? = 1
rcheck "... saying why" grep -q "nlmd: permission denied" "$W/nobody2.txt"
rcheck "... and logs it" grep -q "control socket: uid 65534 .* refused" \
    "$NLMD_LOG"
chmod 600 "$SOCK"

# ---- bad requests ------------------------------------------------------------

printf 'hello\n' | "$PEER" ctlraw "$SOCK" >"$W/bad1.txt" 2>&1
rcheck "garbage: an error answer" grep -q "^nlmctl 1 error not a control request" \
    "$W/bad1.txt"
head -c 6000 /dev/zero | tr '\0' 'x' | "$PEER" ctlraw "$SOCK" >"$W/bad2.txt" 2>&1
rcheck "oversized request: an error answer" grep -q "^nlmctl 1 error request longer" \
    "$W/bad2.txt"
printf 'nlmctl 1 frobnicate\n' | "$PEER" ctlraw "$SOCK" >"$W/bad3.txt" 2>&1
rcheck "unknown command: an error answer" grep -q "unknown command" "$W/bad3.txt"
printf 'nlmctl 2 status\n' | "$PEER" ctlraw "$SOCK" >"$W/bad4.txt" 2>&1
rcheck "another protocol version: an error answer" grep -q "not supported" \
    "$W/bad4.txt"
printf 'nlmctl 1 release host=%%zz\n' | "$PEER" ctlraw "$SOCK" >"$W/bad5.txt" 2>&1
rcheck "a bad escape: an error answer" grep -q "bad argument" "$W/bad5.txt"
rcheck "nlmd is still up and answers" "$CTL" status

# ---- long names, big numbers, short requests, a full disk ---------------------

A=$(head -c 4074 /dev/zero | tr '\0' a)
"$CTL" status --host "$A" >"$W/req4096.txt" 2>&1
check "a request of 4096 bytes (what nlmd reads at most) is sent: exit 0" \
    test $? = 0
rcheck "... without a sanitizer report" \
    sh -c "! grep -q Sanitizer '$W/req4096.txt'"
"$CTL" status --host "${A}a" >"$W/req4097.txt" 2>&1
check "one byte more: argument too long (exit 2)" test $? = 2

LONG=$(printf 'h%.0s' $(seq 500))
rcheck "a host with a 500-byte name locks f3 [7, EOF)" cli lock $SRV "$LONG" f3 7 0 3
"$CTL" status --locks --fh "$(hex f3)" >"$W/long.txt" 2>&1
rcheck "status --locks: the long name moves no column (start, len, mode, epoch)" \
    awk -v n="$LONG" '$1 == "lock" && $2 == n { f = $6 == 7 &&
	$7 == "to-eof" && $8 == "exclusive" && $10 == 1 && NF == 10 }
	END { exit !f }' "$W/long.txt"
rcheck "release the long-named host" "$CTL" release --host "$LONG"

# A caller_name is the client's choice: a space, nothing at all, or "-",
# what the tables print for "none".  Each is one field of the tables
# (ctl_vis(): a\040b, "-" for the empty name, \055 for "-"), so rows
# split on white space keep their columns; JSON keeps the names as sent.
# (A space moved every column after the name; the empty name left the
# HOST column blank.)
off=0
for n in "two words" "" "-"; do
	rcheck "a host named '$n' locks f5 [$off, +1)" \
	    cli lock $SRV "$n" f5 $off 1 3
	off=$((off + 2))
done
"$CTL" status --locks --fh "$(hex f5)" >"$W/names.txt" 2>&1
rcheck "status: every host row has its 12 columns" \
    awk '$1 ~ /^[0-9]+$/ { n++; if (NF != 12) bad = 1 }
	END { exit !(n >= 3 && !bad) }' "$W/names.txt"
rcheck "status: the three names, each one field, escaped" \
    awk '$1 ~ /^[0-9]+$/ && $3 == "'$CLI'" {
	if ($2 == "two\\040words") a = 1; if ($2 == "-") b = 1
	if ($2 == "\\055") c = 1 } END { exit !(a && b && c) }' "$W/names.txt"
rcheck "status --locks: their three lock rows, columns in place" \
    awk '$1 == "lock" { n++; if (NF != 10 || $7 != 1 ||
	$8 != "exclusive" || $10 != 1) bad = 1
	h[$2] = 1 } END { exit !(n == 3 && !bad && ("two\\040words" in h) &&
	("-" in h) && ("\\055" in h)) }' "$W/names.txt"
jqcheck "--json: the names as the clients sent them" \
    '([.locks[].host_name] | sort) == ["", "-", "two words"] and
     ([.hosts[] | select(.name == "two words" or .name == "" or
       .name == "-")] | length) == 3' status --locks --fh "$(hex f5)"
for n in "two words" "" "-"; do
	rcheck "release the host named '$n'" "$CTL" release --host "$n"
done

# What nlmd relays is escaped whatever it is: a fake nlmd answers with a
# name holding a newline (it began a row of its own, a forged host) and
# one that is not UTF-8 (json_string() refused it: the key went missing
# from the JSON).
cat >"$W/fakectl.py" <<'PY'
import os, socket, sys
body = [
 "server\tversion=0\tpid=1\tepoch=1\tnsm-state=1\tstarted=1\tuptime=5"
 "\tdurability=sync\tcommit-stall-ms=0",
 "host\tid=1\tname=a%0A9%20evil%0910.9.9.9%1B[0m\taddr=10.0.0.1\tlocal=-"
 "\tnsm-state=3\tlocks=1\tshares=0\twaiters=0\treclaimable=0\tcallbacks=0"
 "\tnotify-since=0\tidle-ms=1000",
 "host\tid=2\tname=%FFbad\taddr=10.0.0.2\tlocal=-\tnsm-state=3\tlocks=0"
 "\tshares=0\twaiters=0\treclaimable=0\tcallbacks=0\tnotify-since=0"
 "\tidle-ms=1000",
 "lock\thost=1\tsvid=1\toh=00\tfh=66\tstart=0\tlen=1\tmode=exclusive"
 "\ttoken=1\tepoch=1\treclaimable=0",
]
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen(4)
print("ready", flush=True)
for _ in range(2):
    c, _a = s.accept()
    c.recv(4096)
    c.sendall(("nlmctl 1 ok\n" + "".join(l + "\n" for l in body) +
        "nlmctl 1 end %d\n" % len(body)).encode())
    c.close()
PY
python3 "$W/fakectl.py" "$W/fake.sock" >"$W/fakectl.log" 2>&1 &
FAKE_PID=$!
ITEST_PIDS+=($FAKE_PID)
itest_wait grep -q ready "$W/fakectl.log"
"$CTL" -s "$W/fake.sock" status --locks >"$W/fake.txt" 2>&1
rcheck "a name with a newline: two host rows of 12 columns, one lock row" \
    awk '$1 ~ /^[0-9]+$/ { n++; if (NF != 12) bad = 1 } $1 == "lock" { l++ }
	END { exit !(n == 2 && l == 1 && !bad && NR == 8) }' "$W/fake.txt"
rcheck "... shown escaped, the control characters too" \
    grep -q '^1 *a\\0129\\040evil\\01110\.9\.9\.9\\033\[0m ' "$W/fake.txt"
rcheck "... and nothing but printable text and newlines" \
    sh -c "! LC_ALL=C grep -q '[^[:print:]]' '$W/fake.txt'"
"$CTL" -s "$W/fake.sock" --json status --locks >"$W/fake.json" 2>&1
rcheck "--json: valid, the names there: as sent, or escaped when not UTF-8" \
    jq -e '.hosts[0].name == "a\n9 evil\t10.9.9.9\u001b[0m" and
     .hosts[1].name == "\\377bad" and
     .locks[0].host_name == "a\n9 evil\t10.9.9.9\u001b[0m"' "$W/fake.json"
wait $FAKE_PID 2>/dev/null
itest_forget $FAKE_PID

rcheck "frank locks f4 at 10^18 (19 digits)" \
    cli lock $SRV frank f4 1000000000000000000 9223372036854775 3
jqcheck "--json: a 19-digit start is a number, like every start" \
    '[.locks[] | select(.host_name == "frank")][0] |
     (.start | type) == "number" and .start == 1000000000000000000' \
    status --locks --host frank
rcheck "release frank" "$CTL" release --host frank

"$CTL" status --locks >/dev/full 2>"$W/full1.txt"
check "status into a full disk: exit 1" test $? = 1
"$CTL" --json status >/dev/full 2>"$W/full2.txt"
check "status --json into a full disk: exit 1" test $? = 1
"$CTL" metrics >/dev/full 2>"$W/full3.txt"
check "metrics into a full disk: exit 1" test $? = 1

# ---- grace -------------------------------------------------------------------

"$CTL" grace end >"$W/grace0.txt" 2>&1
check "grace end outside grace: exit 1" test $? = 1
itest_stop_nlmd
# The stored host records, as nlmd --dump-state lists them: the names one
# field each, as in nlmctl's tables (a space split the name in two).
"$NLMD" --dump-state -s "$STATE" >"$W/dump.txt" 2>&1
check "--dump-state: the three names, each one field, escaped" \
    awk '$1 == "host" { for (i = 2; i <= NF; i++) if ($i ~ /^name=/) {
	if ($i == "name=two\\040words" && $(i + 1) ~ /^addr=/) a = 1
	if ($i == "name=-") b = 1; if ($i == "name=\\055") c = 1 } }
	END { exit !(a && b && c) }' "$W/dump.txt"
itest_forget "$NLMD_PID"
itest_start_nlmd -d --callbacks=sync --grace-period=60 \
    --metrics-address=:9464 --max-name-length=1024
# ":PORT" is every address, IPv6 and IPv4 (before: IPv4 only).
rcheck "metrics-address :9464 answers on 127.0.0.1" \
    curl -sSf -o /dev/null http://127.0.0.1:9464/metrics
if ip -6 addr show dev lo 2>/dev/null | grep -q '::1'; then
	rcheck "... and on [::1]" curl -sSf -o /dev/null http://[::1]:9464/metrics
else
	itest_skip "metrics-address :9464 on [::1]" \
	    "no IPv6 on the namespace's loopback"
fi
jqcheck "after a restart: in grace, dave's lock to reclaim" \
    '.grace.active == 1 and .grace.locks == 1 and .grace.hosts == 1 and
     .grace.remaining_ms > 0 and .server.epoch == 2 and
     .locks[0].reclaimable == 1' status --locks
rcheck "grace end: says what it dropped" \
    sh -c "'$CTL' grace end | grep -qx 'grace ended by the operator: 1 \
lock(s) and 0 share(s) not reclaimed, dropped'"
jqcheck "grace is over, ended by the operator, one lock dropped" \
    '.grace.active == 0 and .grace.how == "ended by the operator" and
     .grace.dropped == 1 and .totals.locks == 0' status
rcheck "... logged" grep -q "operator (uid 0, pid [0-9]*): ending grace now" \
    "$NLMD_LOG"
itest_stop_nlmd
# An explicit address is that address only: ':PORT' is dual stack, but
# '[::]:PORT' is IPv6's any address, as before (it came to take IPv4 too).
if ip -6 addr show dev lo 2>/dev/null | grep -q '::1'; then
	itest_start_nlmd --metrics-address='[::]:9464'
	rcheck "metrics-address [::]:9464 answers on [::1]" \
	    curl -sSf -o /dev/null 'http://[::1]:9464/metrics'
	rcheck "... and not on 127.0.0.1 (IPv6 only, as written)" \
	    sh -c '! curl -sS -o /dev/null http://127.0.0.1:9464/metrics'
	# ':PORT' with IPv6's port taken: refused, not IPv4 only in silence
	# (the fallback is for a host without IPv6).
	timeout 10 "$NLMD" -F -s "$W/state-v6taken" --nlm-port 4046 \
	    --nsm-port 32766 --no-rpcbind --control-socket="$W/v6taken.sock" \
	    --metrics-address=:9464 >"$W/v6taken.log" 2>&1
	V6RC=$?
	rcheck "a second nlmd with :9464, IPv6's [::]:9464 taken: exits 1" \
	    sh -c "test $V6RC = 1 && grep -q 'cannot listen' '$W/v6taken.log' ||
	    { echo exit $V6RC; cat '$W/v6taken.log'; false; }"
	itest_stop_nlmd
else
	itest_skip "metrics-address [::]:9464" \
	    "no IPv6 on the namespace's loopback"
fi
# Port 0: the kernel picks the port, and the log line that says where the
# metrics are must name that one (it said http://127.0.0.1:0/metrics).
STATE=$W/state-port0 itest_start_nlmd --metrics-address=127.0.0.1:0
P0URL=$(sed -n 's|.*metrics at \(http://[^ ]*\).*|\1|p' "$NLMD_LOG" | tail -1)
rcheck "metrics-address 127.0.0.1:0: the log names the port it got ($P0URL)" \
    sh -c "case '$P0URL' in http://127.0.0.1:0/*|'') exit 1;; esac &&
	curl -sSf -o /dev/null '$P0URL'"
itest_stop_nlmd
# ---- a large table -----------------------------------------------------------
# 4 hosts (nlmbench's clients, all at 127.0.0.1) holding K locks each on one
# file: a file's dump comes whole, a dry run by address lists every lock,
# and after a kill -9 `grace end' answers only once every record is
# dropped and that is durable (it used to answer after the first of the
# drain's steps of 4,096: a status right after still showed grace, and a
# crash brought most of the records back).  40,000 locks: ten of the
# drain's steps, 160 of a dump's pieces (250 records); smaller under
# TSan (slow).  (It was 200,000: 41 s of the test's 47 under ASan.)
K=10000
[ "$BUILD" = tsan ] && K=5000
N=$((4 * K))
BENCH=$(itest_tool nlmbench "$ITEST_TOP/build/$BUILD/nlmbench")
STATE=$W/state-big itest_start_nlmd --grace-period=300
rcheck "nlmbench: 4 hosts take $N locks on one file and keep them" \
    sh -c "'$BENCH' -a 127.0.0.1 -p 4045 -c 4 -k $K -m hold -K -t 0.2 \
    -w 0 | grep -qE ' held=$N .* errors=0 '"
FH=$("$CTL" --json status --locks --host bench-0 | jq -r '.locks[0].fh')
jqcheck "status --locks --fh: every one of the file's $N locks, once" \
    "(.locks | length) == $N and ([.locks[] | [.host, .svid, .start]] |
     unique | length) == $N" status --locks --fh "$FH"
jqcheck "release --addr 127.0.0.1 --dry-run: all $N locks listed" \
    "(.released | length) == $N" release --addr 127.0.0.1 --dry-run
jqcheck "... and nothing released" ".totals.locks == $N" status
kill -9 "$NLMD_PID"
wait "$NLMD_PID" 2>/dev/null
STATE=$W/state-big itest_start_nlmd --grace-period=300
jqcheck "after kill -9: in grace, $N locks to reclaim" \
    ".grace.active == 1 and .grace.locks == $N" status
rcheck "grace end: answers once all $N are dropped, and says so" \
    sh -c "'$CTL' grace end | grep -qx 'grace ended by the operator: $N \
lock(s) and 0 share(s) not reclaimed, dropped'"
jqcheck "right after the answer: grace over, all $N dropped" \
    ".grace.active == 0 and .grace.dropped == $N and .grace.locks == 0 and
     .totals.reclaimable_locks == 0" status
kill -9 "$NLMD_PID"
wait "$NLMD_PID" 2>/dev/null
STATE=$W/state-big itest_start_nlmd --grace-period=300
jqcheck "after another kill -9: nothing came back, no grace" \
    '.grace.active == 0 and .grace.how == "no grace at this start" and
     .totals.locks == 0' status

# --timeout: a stopped nlmd (SIGSTOP) takes the connection but answers
# nothing; nlmctl gives up after the time asked, exit 1, and says why.
kill -STOP "$NLMD_PID"
T0=$(date +%s%N)
"$CTL" --timeout 1 status >"$W/timeout.out" 2>&1
TRC=$?
TMS=$((($(date +%s%N) - T0) / 1000000))
kill -CONT "$NLMD_PID"
cat "$W/timeout.out" >>"$ITEST_WORK/checks.log"
check "--timeout 1, nlmd stopped: exit 1 after 1-3 s ($TMS ms), 'no answer'" \
    bash -c "[ $TRC = 1 ] && [ $TMS -ge 900 ] && [ $TMS -le 3000 ] &&
    grep -q 'no answer from nlmd at .* within 1 s' '$W/timeout.out'"
rcheck "--timeout 5, nlmd running again: answered" "$CTL" --timeout 5 status
check "--timeout x: a usage error (exit 2)" \
    bash -c "'$CTL' --timeout x status; [ \$? = 2 ]"
itest_stop_nlmd

rcheck "no sanitizer report" itest_no_sanitizer "$NLMD_LOG"
itest_finish
