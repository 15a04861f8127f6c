#!/bin/bash
# Build and install pmixcpp from this checkout, installing its Debian
# dependencies first. Used by the README's commands, the tests and CI.
#
#   PMIXCPP_BUILD_DIR  out-of-tree build directory (default <src>/_build)
#   PMIXCPP_PREFIX     install prefix (default <src>/_install); the plugin goes
#                      to <prefix>/lib/slurm, which the local cluster puts first
#                      in its PluginDir
#   PMIXCPP_CFLAGS     compiler flags for C and C++ (default: configure's, -g -O2); the test
#                      command builds with -g1 -O2: the same code and optimisation, line tables
#                      for backtraces, and half the compile time of full debug information
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${PMIXCPP_BUILD_DIR:-$src/_build}
prefix=${PMIXCPP_PREFIX:-$src/_install}

"$src/contrib/install-deps.sh"

cd "$src"
# autogen.sh again only when the project's own automake input changed: not for the Makefile.am
# of the source packages unpacked in _deps, nor a build directory's (the Debian 13 lane builds
# from this same tree, beside Debian 12's make; its newer automake must not rewrite the
# Makefile.in that Debian 12's build uses)
newer_input() {
    find . \( -path ./_deps -o -path './_build*' -o -path './_install*' -o -path ./.git \) -prune -o \
        \( -name Makefile.inc -o -name Makefile.am -o -name configure.ac \) -newer configure -print | head -n 1
}
if [ ! -x configure ] || [ -n "$(newer_input)" ]; then
    ./autogen.sh
fi
mkdir -p "$build"
cd "$build"
flags_args=()
if [ -n "${PMIXCPP_CFLAGS:-}" ]; then
    flags_args=("CFLAGS=$PMIXCPP_CFLAGS" "CXXFLAGS=$PMIXCPP_CFLAGS")
fi
# configure again when the flags asked for are not the ones the build directory has
want_flags=${PMIXCPP_CFLAGS:-${CXXFLAGS:--g -O2}}
have_flags=$(sed -n 's/^CXXFLAGS = //p' Makefile 2>/dev/null || true)
if [ ! -f Makefile ] || [ "$src/configure" -nt Makefile ] || [ "$have_flags" != "$want_flags" ]; then
    # shellcheck disable=SC2086
    "$src/configure" --prefix="$prefix" --with-plugindir="$prefix/lib/slurm" ${PMIXCPP_CONFIGURE_FLAGS:-} "${flags_args[@]}"
    [ -z "$have_flags" ] || [ "$have_flags" = "$want_flags" ] || make clean >/dev/null
fi
make -j"$(nproc)"
make install >/dev/null
echo "build: installed into $prefix (plugin in $prefix/lib/slurm)"
