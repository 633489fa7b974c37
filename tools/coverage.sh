#!/bin/bash
# tools/coverage.sh - which lines of nlmd's code the unit tests never run.
#
# Builds build/cov/ (gcc --coverage, -O0), runs the six unit-test binaries
# (a failing one is reported, the rest still run), and prints per source
# file the lines never executed over all of them: "file never/lines %",
# most first.  The annotated sources are left in build/cov/gcov/*.gcov
# ("#####" marks a line never run).  Code that only the integration and
# e2e scripts reach (cmd/nlmd.c, nsm/, rpcreg.c, privdrop.c ...) shows as
# unrun; so does what a test reaches only in a child it kills.
#
#   tools/coverage.sh [FILE...]   FILE: also list its unrun lines (nlm_proc.c)
set -u
cd "$(dirname "$0")/.." || exit 1
O=build/cov
DIRS="rpc nlm nsm lockcore db common ctl cmd"

echo "coverage: building $O (-O0 --coverage)" >&2
if ! nice make -s -j"$(nproc)" BUILD=cov OPT="-O0 --coverage" \
    LDSAN=--coverage all unit-tests >&2; then
	echo "coverage: the build failed" >&2
	exit 1
fi
find "$O" -name '*.gcda' -delete
fail=0
for t in common ctl lockcore nlmxdr store service; do
	echo "coverage: running $O/tests/test-$t" >&2
	if ! "$O/tests/test-$t" >"$O/test-$t.log" 2>&1; then
		echo "coverage: test-$t FAILED (see $O/test-$t.log)" >&2
		fail=1
	fi
done
rm -rf "$O/gcov"
mkdir -p "$O/gcov"
for d in $DIRS; do
	for f in "$d"/*.c; do
		b=$(basename "$f" .c)
		[ -f "$O/$d/$b.gcno" ] || continue
		gcov -o "$O/$d" "$f" >/dev/null 2>&1
	done
done
mv ./*.gcov "$O/gcov/" 2>/dev/null
printf '%-24s %12s %5s\n' "file" "never/lines" "never"
for g in "$O"/gcov/*.c.gcov; do
	src=$(sed -n 's/^ *-: *0:Source://p' "$g" | head -1)
	case " $DIRS " in *" ${src%%/*} "*) ;; *) continue ;; esac
	all=$(grep -cE '^ +(#####|[0-9]+\*?):' "$g")
	never=$(grep -cE '^ +#####:' "$g")
	[ "$all" -gt 0 ] || continue
	echo "$never $all $src"
done | sort -rn | awk '{ printf "%-24s %5d/%-6d %4.0f%%\n", $3, $1, $2,
    100 * $1 / $2 }'
for f in "$@"; do
	g="$O/gcov/$(basename "$f").gcov"
	if [ ! -f "$g" ]; then
		echo "coverage: no $g" >&2
		continue
	fi
	echo
	echo "== $(basename "$f"): lines never run"
	grep -E '^ +#####:' "$g" | sed -E 's/^ +#####: +//'
done
exit $fail
