#!/bin/bash
# test.sh - what `make test` runs, in order:
#   1. build (debug and asan) and the unit tests of both builds
#   2. the layering check
#   2b. the libFuzzer harnesses (tests/fuzz/), 20 s each after replaying
#      their committed inputs
#   3. the integration tests (daemon in private namespaces), against the
#      ASan/UBSan build so memory errors in the server fail the run
#   4. the Linux-client end-to-end test (skipped, with the reason, when
#      qemu or namespaces are not usable)
# Every step is counted; the last line is "test: N passed, M failed".
set -u
cd "$(dirname "$0")/.."
JOBS=${JOBS:-2}
pass=0
fail=0
failed=()

step() {
	local name=$1; shift
	local t0=$SECONDS
	echo "=== $name"
	"$@"
	local rc=$?
	if [ $rc = 0 ]; then
		pass=$((pass + 1))
		echo "=== $name: ok ($((SECONDS - t0)) s)"
	elif [ $rc = 77 ]; then
		echo "=== $name: SKIPPED ($((SECONDS - t0)) s)"
	else
		fail=$((fail + 1))
		failed+=("$name")
		echo "=== $name: FAILED ($((SECONDS - t0)) s)"
	fi
}

unit() {
	local b=$1 t rc=0
	make -s -j"$JOBS" BUILD="$b" all unit-tests || return 1
	for t in build/"$b"/tests/test-*; do
		[ -x "$t" ] || continue
		echo "--- $t"
		"$t" || rc=1
	done
	return $rc
}

fuzz() {
	make -s -j"$JOBS" fuzz-bins || return 1
	tests/fuzz/run.sh short
}

step "build+unit (debug)" unit debug
step "build+unit (asan)" unit asan
step "layering" tools/check-layering.sh
step "fuzz (libFuzzer, ASan+UBSan, ${FUZZ_SHORT:-20} s each)" fuzz
for t in tests/integration/test_*.sh; do
	[ -e "$t" ] || continue
	step "integration $(basename "$t" .sh) (asan nlmd)" \
	    env NLMD="$PWD/build/asan/nlmd" BUILD=asan bash "$t"
done
if [ -x tests/e2e/run.sh ]; then
	step "e2e (Linux client in qemu, asan nlmd)" \
	    env NLMD="$PWD/build/asan/nlmd" tests/e2e/run.sh
fi
[ ${#failed[@]} -gt 0 ] && printf 'failed: %s\n' "${failed[@]}"
echo "test: $pass passed, $fail failed"
[ $fail = 0 ]
