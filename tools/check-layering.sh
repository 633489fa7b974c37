#!/bin/sh
# check-layering.sh - enforce DESIGN.md's module boundaries on #include lines.
#
#  - lockcore/ includes only the C library and its own headers;
#  - only db/ includes Berkeley DB (<db.h>);
#  - only rpc/, nlm/ and nsm/ include the rpcgen-generated headers (tests/
#    and bench/ are clients and may too);
#  - common/ includes no project module but itself.
# Prints every violation; exits 1 if there is any.
set -u
cd "$(dirname "$0")/.."
bad=0
fail() { echo "layering: $*"; bad=1; }

std='assert.h|ctype.h|errno.h|inttypes.h|limits.h|stdalign.h|stdarg.h|stdbool.h|stddef.h|stdint.h|stdio.h|stdlib.h|string.h'
for f in lockcore/*.[ch]; do
	grep -n '^[[:space:]]*#[[:space:]]*include' "$f" | while IFS= read -r line; do
		hdr=$(printf '%s' "$line" | sed -E 's/.*include[[:space:]]*[<"]([^>"]+)[>"].*/\1/')
		case "$line" in
		*'<'*)	printf '%s\n' "$hdr" | grep -Eqx "$std" ||
			    echo "layering: $f: lockcore may include only the C library: $line" ;;
		*)	case "$hdr" in */*) hdr=/nonexistent ;; esac
			[ -f "lockcore/$hdr" ] ||
			    echo "layering: $f: lockcore includes outside itself: $line" ;;
		esac
	done
done | grep . && bad=1

# Outside a git checkout (a source tarball, the Debian package build) every
# source file but the build output, named like git names them.
sources() {
	git ls-files '*.c' '*.h' 2>/dev/null ||
	    find . -path ./build -prune -o -name '*.[ch]' -print | sed 's|^\./||'
}

for f in $(sources); do
	case "$f" in db/*) continue ;; esac
	grep -Hn '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]db\.h[>"]' "$f" &&
	    fail "$f: only db/ may include Berkeley DB"
done

for f in $(sources); do
	case "$f" in rpc/*|nlm/*|nsm/*|tests/*|bench/*) continue ;; esac
	grep -Hn '#[[:space:]]*include[[:space:]]*"rpc/\(nlm_prot\|sm_inter\)' "$f" &&
	    fail "$f: generated RPC types are for rpc/, nlm/, nsm/ only"
done

for f in common/*.[ch]; do
	grep -Hn '#[[:space:]]*include[[:space:]]*"\(rpc\|nlm\|nsm\|lockcore\|db\)/\|#[[:space:]]*include[[:space:]]*"\(lockcore\|nlm\|nsm\|store\|rpcsrv\|rpcout\|rpcreg\)\.h"' "$f" &&
	    fail "$f: common/ knows no protocol module"
done

[ $bad = 0 ] && echo "layering: ok"
exit $bad
