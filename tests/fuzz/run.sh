#!/bin/bash
# run.sh - run the libFuzzer harnesses of tests/fuzz/ (built by
# `make fuzz-bins' into build/fuzz/fuzz/).
#
#   tests/fuzz/run.sh short   what `make test' runs: replay every committed
#                             seed and crash regression, then fuzz each
#                             harness FUZZ_SHORT seconds (default 20)
#   tests/fuzz/run.sh long    what `make fuzz' runs: the same with
#                             FUZZ_SECONDS (default 600) per harness
#
# Harnesses run side by side (FUZZ_JOBS at a time, default one per CPU),
# each with its committed corpus
# (tests/fuzz/corpus/<h>/, read only) and a working corpus in
# build/fuzz/corpus/<h>/ that new inputs go to and later runs start from.
# A crash (or leak, timeout, sanitizer report) fails the run; the input is
# kept in build/fuzz/crash/<h>/ and its path printed with the report.  To
# keep it as a regression, fix the bug and copy the file to
# tests/fuzz/regress/<h>/.  The last line of each harness's log (the
# numbers: executions, coverage, corpus) is printed; the whole log is in
# build/fuzz/<h>.log.  The last line is "fuzz: N passed, M failed"
# (harnesses).
set -u
cd "$(dirname "$0")/../.."
mode=${1:-short}
case $mode in
short)	secs=${FUZZ_SHORT:-20} ;;
long)	secs=${FUZZ_SECONDS:-600} ;;
*)	echo "usage: $0 short|long" >&2; exit 2 ;;
esac
B=build/fuzz
harnesses=${FUZZ_HARNESSES:-"nlmxdr recmark dispatch ctl"}
rc=0
npass=0
nfail=0

one() {
	local h=$1 bin log work crash inputs t0 r stats runs
	bin=$B/fuzz/fuzz-$h
	log=$B/$h.log
	work=$B/corpus/$h
	crash=$B/crash/$h
	if [ ! -x "$bin" ]; then
		echo "fuzz $h: $bin missing (make fuzz-bins)"
		return 1
	fi
	mkdir -p "$work" "$crash"

	# 1. Every committed input, crash regressions included, once.
	inputs=()
	for d in tests/fuzz/corpus/$h tests/fuzz/regress/$h; do
		[ -d "$d" ] && inputs+=("$d"/*)
	done
	if [ ${#inputs[@]} -gt 0 ] && ! "$bin" -runs=0 "${inputs[@]}" \
	    > "$log.replay" 2>&1; then
		echo "fuzz $h: FAILED replaying the committed inputs:"
		grep -E 'Running: |ERROR|SUMMARY|fuzz_[a-z]+: ' "$log.replay" |
		    tail -n 5
		echo "fuzz $h: log in $log.replay"
		return 1
	fi
	echo "fuzz $h: replayed ${#inputs[@]} committed inputs: ok"

	# 2. Fuzz for $secs seconds, from both corpora.
	t0=$SECONDS
	"$bin" -max_total_time="$secs" -timeout=25 -rss_limit_mb=2048 \
	    -max_len=8192 -print_final_stats=1 \
	    -artifact_prefix="$crash/" "$work" "tests/fuzz/corpus/$h" \
	    > "$log" 2>&1
	r=$?
	stats=$(grep -E '^#[0-9]+.*(DONE|pulse|NEW|REDUCE|INITED)' "$log" |
	    tail -n 1)
	if [ $r != 0 ]; then
		echo "fuzz $h: FAILED after $((SECONDS - t0)) s (exit $r):"
		grep -E 'ERROR|SUMMARY|fuzz_[a-z]+: |#[0-9]+ 0x.* in ' "$log" |
		    head -n 12
		grep -E 'Test unit written to' "$log" |
		    sed "s/^.*written to /fuzz $h: crash input kept in /"
		echo "fuzz $h: log in $log"
		return 1
	fi
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	echo "fuzz $h: ok, $((SECONDS - t0)) s, $runs runs; $stats"
	return 0
}

# The harnesses run side by side, FUZZ_JOBS at a time (default: one per
# CPU; each is one process), each one's lines printed once it is done, in
# the order of $harnesses.
jobs_max=${FUZZ_JOBS:-$(nproc)}
mkdir -p "$B"
for h in $harnesses; do
	while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do
		wait -n
	done
	rm -f "$B/$h.rc"
	{ one "$h"; echo $? >"$B/$h.rc"; } >"$B/$h.out" 2>&1 &
done
wait
for h in $harnesses; do
	cat "$B/$h.out"
	if [ "$(cat "$B/$h.rc" 2>/dev/null)" = 0 ]; then
		npass=$((npass + 1))
	else
		rc=1
		nfail=$((nfail + 1))
	fi
done
# One test per harness, in the form tools/test.sh counts.
echo "fuzz: $npass passed, $nfail failed"
exit $rc
