#!/bin/bash
# test.sh - what `make test` runs, in order:
#   1. build (debug and asan) and the unit tests of both builds; the
#      store's tests again under ThreadSanitizer (tsan)
#   2. the layering check
#   2b. the libFuzzer harnesses (tests/fuzz/), 20 s each after replaying
#      their committed inputs
#   3. the integration tests (daemon in private namespaces), against the
#      ASan/UBSan build so memory errors in the server fail the run; the
#      restart, control and NLM tests once more against the TSan build
#   4. the Linux-client end-to-end test (skipped, with the reason, when
#      qemu or namespaces are not usable), and its negative control: the
#      locks boot against a server that grants everything must fail
# Every step is counted, and so is every test inside it: the CUnit
# summaries of the unit-test binaries (every binary the build made:
# build/*/tests/test-*) and the "NAME: N passed, M failed" lines of the
# integration and end-to-end scripts; a step that reports no count counts
# as one test.  Skips are counted apart, never as passes: a step that
# exits 77, CUnit's inactive tests, the tests a binary reports with
# "skipped at run time: N" (CUnit counted those as passed) and the K of a
# script's "NAME: N passed, M failed, K skipped".  The last lines are
# what was skipped and why ("skipped: ..."), then "steps: N passed, M
# failed, K skipped" and "test: N passed, M failed, K skipped" (tests).
# No step runs longer than TEST_STEP_TIMEOUT seconds (default 900; the
# longest, the TSan unit step, takes about 140 s here): one that does is
# stopped with everything it started and fails with "FAIL: TIMEOUT", so
# a hung server or guest cannot eat CI's whole time.
set -u
cd "$(dirname "$0")/.."
JOBS=${JOBS:-2}
TEST_STEP_TIMEOUT=${TEST_STEP_TIMEOUT:-900}
pass=0
fail=0
failed=()
skip=0
tpass=0
tfail=0
tskip=0
OUT=$(mktemp)
WHY=$(mktemp)
SKIPS=$(mktemp)
trap 'rm -f "$OUT" "$WHY" "$SKIPS"' EXIT

# What a failed step's output says of its failures, for the digest at the
# end (CI shows only the tail of a run): CUnit's "Suite S, Test T had
# failures:" and the assertions under it, the scripts' "FAIL..." lines,
# sanitizer reports' first lines; at most 40 lines a step.
failure_lines() {
	awk '
	/had failures:$/ { cu = 1; print; next }
	cu && /^ +[0-9]+\. / { print; next }
	{ cu = 0 }
	/^(\[[0-9.]+s\] )?(FAIL|XPASS)[:\t ]/ { print; next }
	/^(==[0-9]+==ERROR|WARNING: ThreadSanitizer|SUMMARY: [A-Za-z]+Sanitizer)/ { print; next }
	/runtime error:/ { print }' "$1" | head -40
}

# The tests a step's output reports: "passed failed skipped" (0 0 0:
# none).  CUnit's summary row is "tests TOTAL RAN PASSED FAILED INACTIVE".
count_tests() {
	awk '
	/^ *tests +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+/ { p += $4; f += $5; s += $6 }
	/^skipped at run time: [0-9]+$/ { p -= $5; s += $5 }
	/^[A-Za-z0-9_ ()-]+: [0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?$/ {
		sub(/.*: /, ""); p += $1; f += $3; s += $5 }
	END { print p + 0, f + 0, s + 0 }' "$1"
}

# Why a step skipped what it skipped: its first SKIP lines (at most 3).
skip_lines() {
	grep -E '^(\[[0-9.]+s\] )? *SKIP[: (]' "$1" | head -3
}

step() {
	local name=$1; shift
	local t0=$SECONDS p f s
	echo "=== $name"
	# timeout(1) runs the step in a process group of its own and signals
	# the whole group, so a script's servers and qemu go with it (their
	# EXIT traps run on the TERM; KILL 30 s later).  Steps are shell
	# functions or commands: a bash that sees this script's functions
	# runs either.  Nothing here reads the terminal: stdin is /dev/null.
	timeout -k 30 "$TEST_STEP_TIMEOUT" bash -c '"$@"' step "$@" \
	    </dev/null 2>&1 | tee "$OUT"
	local rc=${PIPESTATUS[0]}
	if [ $rc = 124 ] || [ $rc = 137 ]; then
		echo "FAIL: TIMEOUT: $name still running after" \
		    "$TEST_STEP_TIMEOUT s (TEST_STEP_TIMEOUT), stopped" |
		    tee -a "$OUT"
		rc=1
	fi
	read -r p f s <<<"$(count_tests "$OUT")"
	if [ "$p" = 0 ] && [ "$f" = 0 ] && [ "$s" = 0 ]; then
		[ $rc = 0 ] && p=1
		[ $rc != 0 ] && [ $rc != 77 ] && f=1
	elif [ $rc != 0 ] && [ $rc != 77 ] && [ "$f" = 0 ]; then
		f=1	# it failed without saying which test: one
	fi
	tpass=$((tpass + p))
	tfail=$((tfail + f))
	tskip=$((tskip + s))
	if [ "$s" != 0 ] && [ $rc != 77 ]; then
		echo "skipped: $s test(s) of $name:"
		skip_lines "$OUT" | sed -e 's/^ */    /'
	fi >>"$SKIPS"
	if [ $rc = 0 ]; then
		pass=$((pass + 1))
		echo "=== $name: ok ($((SECONDS - t0)) s)"
	elif [ $rc = 77 ]; then
		skip=$((skip + 1))
		echo "=== $name: SKIPPED ($((SECONDS - t0)) s)"
		{ echo "skipped: the whole step $name:"
		  skip_lines "$OUT" | sed -e 's/^ */    /'; } >>"$SKIPS"
	else
		fail=$((fail + 1))
		failed+=("$name")
		echo "=== $name: FAILED ($((SECONDS - t0)) s)"
		{ echo "--- $name"; failure_lines "$OUT"; } >>"$WHY"
	fi
}

# Every unit-test binary of build b -- the three long ones side by side,
# then the others one after the other.  test-store spends most of its
# minute waiting for disk syncs and its threads, test-lockcore is
# computation only (no timer, no clock it judges: 35 s of CPU in the
# debug build), test-service waits on its sockets (a turn's datagrams,
# TS_WAIT_MS at most; it judges the loop's fake clock, but for one test
# of accept pauses with windows of 200-500 ms).
# Measured on two CPUs (debug): store and lockcore side by side 58 s,
# then service 23 s; all three side by side 57 s (asan: 75 s); every
# test passed in six runs of two test-service runs beside a busy CPU.
# Each one's output is printed once all three are done, in turn.
unit() {
	local b=$1 t rc=0 name out long="test-store test-lockcore test-service"
	local -a pids=() outs=()
	make -s -j"$JOBS" BUILD="$b" all unit-tests || return 1
	for name in $long; do
		t=build/$b/tests/$name
		[ -x "$t" ] || continue
		out=$(mktemp)
		"$t" >"$out" 2>&1 &
		pids+=($!)
		outs+=("$t:$out")
	done
	for t in "${!pids[@]}"; do
		wait "${pids[$t]}" || rc=1
	done
	for t in "${outs[@]}"; do
		echo "--- ${t%%:*} (beside the other long ones)"
		cat "${t#*:}"
		rm -f "${t#*:}"
	done
	for t in build/"$b"/tests/test-*; do
		[ -x "$t" ] || continue
		case " $long " in
		*" ${t##*/} "*) continue ;;
		esac
		echo "--- $t"
		"$t" || rc=1
	done
	return $rc
}

# The store's threads (committer, compactor, checkpoints) under
# ThreadSanitizer.  Its lock-order check is off: Berkeley DB's mutexes live
# in its regions and are reused for unrelated objects, and TSan, seeing
# them as pthread mutexes, reports cycles among those uses (some 145,000
# reports in one run, every one inside libdb).  Address randomisation is
# off for the run (setarch -R): gcc 12's TSan refuses the high-entropy
# mappings of newer kernels.  tsan_run CMD...: CMD so.
tsan_run() {
	TSAN_OPTIONS="detect_deadlocks=0 ${TSAN_OPTIONS:-}" \
	    setarch "$(uname -m)" -R "$@"
}

# Four tests are left to the debug and ASan runs: each fills log files
# (16 MiB) one small turn at a time, 23-40 s apiece under TSan (110 s of
# about 210 s for the whole binary), and what they check is the files
# left on disk, not how the threads meet (the committer, compactor and
# checkpoint thread run in every other test here too).
TSAN_SKIP="run in the debug and asan steps, log files filled one turn at"
TSAN_SKIP="$TSAN_SKIP a time (23-40 s each under TSan): idle after a fold"
TSAN_SKIP="$TSAN_SKIP; killed after the folded position moved"
TSAN_SKIP="$TSAN_SKIP; durability log; durability sync"

tsan() {
	make -s -j"$JOBS" BUILD=tsan build/tsan/tests/test-store || return 1
	NLMD_TEST_SKIP=$TSAN_SKIP tsan_run build/tsan/tests/test-store
}

# An integration test with nlmd and the test's own tools (its script
# builds them with BUILD) under ThreadSanitizer, against a real Berkeley
# DB store:
#   test_restart  kill -9 and SIGTERM under 16 clients' load, both
#                 durabilities: the loop, the committer, the compactor and
#                 the checkpoint thread; crashdrv's client and receiver
#                 threads (18 s)
#   test_ctl      the control socket and the metrics endpoint read the
#                 store's counters (store_info) that those threads write
#                 (3 s)
#   test_nlm      nlmtest takes callbacks on a thread of its own
#                 (svc_run) beside its calls; GRANTED, _MSG/_RES and grace
#                 in nlmd (48 s)
tsan_itest() {
	make -s -j"$JOBS" BUILD=tsan build/tsan/nlmd || return 1
	NLMD="$PWD/build/tsan/nlmd" BUILD=tsan \
	    tsan_run bash "tests/integration/$1.sh"
}

# The e2e's negative control: the same locks boot against fake-nlm
# (tests/e2e/fake-nlm.c), a server that answers "granted" to everything
# and calls nothing back.  A suite that passed against it would check
# nothing, so here every scenario must fail on its checks (not for want
# of an answer), and so must wire/granted-callbacks and wire/deadlck,
# while the guest boots and mounts.  run.sh's own output is shown behind
# "| ", so that its summary and FAIL lines are not taken for this step's.
e2e_negative() {
	local w=$PWD/build/e2e-negative rc plan name np=0 nf=0
	E2E_SERVER=fake E2E_MODES=locks E2E_WORK="$w" \
	    E2E_CACHE="$PWD/build/e2e/cache" tests/e2e/run.sh >"$w.log" 2>&1
	rc=$?
	sed -e 's/^/| /' "$w.log"
	if [ $rc = 77 ]; then
		grep -m1 '^SKIP' "$w.log"
		return 77
	fi
	nc() {
		if "$@" >/dev/null 2>&1; then
			echo "ok: $what"; np=$((np + 1))
		else
			echo "FAIL: $what"; nf=$((nf + 1))
		fi
	}
	what="run.sh exits 1 against the fake server (exit $rc)"
	nc test "$rc" = 1
	what="the guest booted and mounted"
	nc grep -q '^PASS locks/guest: ' "$w/checks"
	plan=$(tr -d '\r' <"$w/console-locks.log" 2>/dev/null |
	    sed -n 's/^LT: PLAN //p' | head -1)
	what="locktest planned its scenarios ($(echo $plan | wc -w))"
	nc test "$(echo $plan | wc -w)" -ge 10
	for name in $plan; do
		what="locks/$name fails on its checks"
		nc grep -Eq "^FAIL locks/$name: .*: checks failed$" "$w/checks"
	done
	for name in granted-callbacks deadlck; do
		what="wire/$name fails"
		nc grep -q "^FAIL wire/$name: " "$w/checks"
	done
	echo "e2e negative control: $np passed, $nf failed"
	[ $nf = 0 ]
}

fuzz() {
	make -s -j"$JOBS" fuzz-bins || return 1
	tests/fuzz/run.sh short
}

# What the steps' bash needs of this one.
export JOBS TSAN_SKIP
export -f unit tsan_run tsan tsan_itest e2e_negative fuzz

step "build+unit (debug)" unit debug
step "build+unit (asan)" unit asan
step "unit (tsan: the store's threads)" tsan
step "layering" tools/check-layering.sh
step "system calls inside the unit's filter (debug nlmd under strace)" \
    env BUILD=debug bash tools/check-unit-syscalls.sh
step "fuzz (libFuzzer, ASan+UBSan, ${FUZZ_SHORT:-20} s each)" fuzz
for t in tests/integration/test_*.sh; do
	[ -e "$t" ] || continue
	step "integration $(basename "$t" .sh) (asan nlmd)" \
	    env NLMD="$PWD/build/asan/nlmd" BUILD=asan bash "$t"
done
for t in test_restart test_ctl test_nlm; do
	step "integration $t (tsan nlmd)" tsan_itest "$t"
done
if [ -x tests/e2e/run.sh ]; then
	step "e2e (Linux client in qemu, asan nlmd)" \
	    env NLMD="$PWD/build/asan/nlmd" tests/e2e/run.sh
	step "e2e negative control (a grant-everything server must fail)" \
	    e2e_negative
fi
if [ ${#failed[@]} -gt 0 ]; then
	echo "what the failed steps said of their failures:"
	cat "$WHY"
	printf 'failed: %s\n' "${failed[@]}"
fi
cat "$SKIPS"
echo "steps: $pass passed, $fail failed, $skip skipped"
echo "test: $tpass passed, $tfail failed, $tskip skipped"
[ $fail = 0 ]
