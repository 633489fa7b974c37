#!/bin/bash
# bench-restart.sh - how fast nlmd comes back after a crash, under load
# (not run by `make test').
#
#   tools/bench-restart.sh                     20 cycles, build/release
#   CYCLES=5 DURABILITIES=sync tools/bench-restart.sh
#   NLMD=build/debug/nlmd BUILD=debug tools/bench-restart.sh
#
# The crash-and-restart test (tests/integration/test_restart.sh, which
# says what happens in a cycle) with CYCLES=20 against build/release/nlmd,
# in bench mode: crashdrv is told `up' the moment nlmd is exec'd, so the
# time to the first answered LOCK is measured from exec (crashdrv asks
# every 10 ms), not from when this script saw "nlmd ready"; and nothing is
# captured.  Every check of the test still runs.
#
# Prints, per cycle: the signal (SIGKILL on odd cycles, SIGTERM on even
# ones), exec -> "nlmd ready" (from nlmd's log timestamp), exec -> first
# LOCK answered, and the grace period as nlmd logged it (start of grace to
# "grace period over": all 16 clients reclaimed); then averages, maxima
# and totals.  Exit status: the test's.
set -u
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-release}
NLMD=${NLMD:-$PWD/build/$BUILD/nlmd}
make -s BUILD="$BUILD" "build/$BUILD/nlmd" ||
    { echo "FATAL: cannot build nlmd ($BUILD)"; exit 1; }
export BUILD NLMD
export CYCLES=${CYCLES:-20}
export RST_BENCH=1
exec bash tests/integration/test_restart.sh "$@"
