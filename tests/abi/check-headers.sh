#!/bin/sh
# Our public headers must be valid, warning-free C99 and C++ (every
# convenience macro is expanded by headers_c99.c), and the attribute table of
# shared/pmix/pmix_strings.cc must list every attribute key of pmix_common.h.
set -u
top=$(cd "${srcdir:-$(dirname "$0")/../..}" && pwd)
CC=${CC:-cc}
CXX=${CXX:-c++}
inc="-I$top/shared/pmix -I$top/client/include -I$top/client/pmi"
src=$top/tests/abi/headers_c99.c
work=$(mktemp -d "${TMPDIR:-/tmp}/abi-headers.XXXXXX") || exit 99
trap 'rm -rf "$work"' EXIT
status=0

check() {  # description, compiler and flags...
    what=$1; shift
    if "$@" -Wall -Wextra -Werror $inc -c "$src" -o "$work/out.o" 2> "$work/err"; then
        echo "ok: $what"
    else
        echo "FAIL: $what"; head -30 "$work/err"; status=1
    fi
}
check "C99 -pedantic" $CC -std=c99 -pedantic
check "C11 -pedantic" $CC -std=c11 -pedantic
check "GNU C" $CC -std=gnu11
check "C++11" $CXX -std=c++11 -x c++
check "C++20 -pedantic" $CXX -std=c++20 -pedantic -x c++

# Every "pmix..." key macro must be in the name table (and nothing else).
sed -n 's/^#define \(PMIX_[A-Z0-9_]*\) *"pmix[^"]*".*/\1/p' "$top/shared/pmix/pmix_common.h" | sort > "$work/keys"
sed -n 's/^ *PMIXCPP_ATTR(\(PMIX_[A-Z0-9_]*\)),$/\1/p' "$top/shared/pmix/pmix_strings.cc" | sort > "$work/table"
if cmp -s "$work/keys" "$work/table"; then
    echo "ok: attribute table lists all $(wc -l < "$work/keys") keys"
else
    echo "FAIL: attribute table of pmix_strings.cc differs from pmix_common.h (< header, > table):"
    diff "$work/keys" "$work/table"; status=1
fi
exit $status
