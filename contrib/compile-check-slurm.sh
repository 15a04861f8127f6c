#!/bin/bash
# Compile check of the Slurm glue (plugin/slurm/*.cc) against the Slurm source of another
# Debian suite than the installed one, e.g. the development branch's Slurm: proves that
# plugin/slurm/slurm_compat.h covers that release. Nothing is linked or installed.
#
# usage: contrib/compile-check-slurm.sh [SUITE]     (default: sid)
#   Runs inside the Debian 13 root (contrib/debian13-root.sh run ...), whose apt lists the
#   sources of trixie and sid; needs a configured build directory of that root
#   (PMIXCPP_BUILD13_DIR, default _build13) for pmixcpp's own config header.
#   PMIXCPP_SLURM_SRC_DIR  where sources are unpacked and configured [<checkout>/_deps]
# Exit 0: compiles; 1: does not; 77: the suite's Slurm source cannot be fetched here.
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
suite=${1:-sid}
if [ -z "${PMIXCPP_IN_CHROOT:-}" ]; then
    exec "$src/contrib/debian13-root.sh" run "$src/contrib/compile-check-slurm.sh" "$@"
fi
build=${PMIXCPP_BUILD13_DIR:-$src/_build13}
deps=${PMIXCPP_SLURM_SRC_DIR:-$src/_deps}
die() { echo "compile-check-slurm: $1" >&2; exit "${2:-1}"; }

[ -f "$build/pmixcpp_config.h" ] || die "no configured build in $build (contrib/test-debian13.sh or build.sh first)"
# the candidate of the suite: ask apt for the suite's source explicitly
uris=$(apt-get source --print-uris "slurm-wlm/$suite" 2>/dev/null | grep "^'") ||
    die "apt knows no slurm-wlm source in $suite" 77
version=$(echo "$uris" | awk -F"'" '$2 ~ /\.dsc$/ { n = split($2, p, "_"); v = p[n]; sub(/\.dsc$/, "", v); print v }' | sed 's/%2b/+/g')
dest=$deps/slurm-$version
if [ ! -f "$dest/.pmixcpp-configured" ]; then
    mkdir -p "$deps"
    "$src/contrib/deb-source.sh" "slurm-wlm/$suite" "$dest.tmp" >/dev/null
    rc=$?
    [ $rc = 0 ] || die "no usable source of slurm-wlm $version ($suite) here" "$rc"
    ( cd "$dest.tmp/src" && ./configure --quiet --prefix=/usr --sysconfdir=/etc/slurm \
          --enable-multiple-slurmd >"$dest.tmp/configure.log" 2>&1 ) ||
        die "configure of Slurm $version failed, see $dest.tmp/configure.log"
    touch "$dest.tmp/.pmixcpp-configured"
    rm -rf "$dest" && mv "$dest.tmp" "$dest"
fi
slurm=$dest/src
echo "compile-check-slurm: plugin/slurm against Slurm $version ($suite)"
rc=0
for f in "$src"/plugin/slurm/*.cc; do
    g++ -std=c++20 -fsyntax-only -Wall -Wextra -Wno-unused-parameter -D_GNU_SOURCE -DHAVE_CONFIG_H \
        -I"$slurm" -I"$build" -I"$src" -I"$src/shared" -I"$src/shared/pmix" -I"$src/client/include" \
        -DPMIXCPP_CLIENT_LIBDIR='"/usr/lib/pmixcpp"' "$f" || { echo "FAIL: $f"; rc=1; }
done
[ $rc = 0 ] && echo "PASS: plugin/slurm compiles against Slurm $version"
exit $rc
