#!/bin/bash
# Build and install pmixcpp from this checkout, installing its Debian
# dependencies first. Used by the README's commands, the tests and CI.
#
#   PMIXCPP_BUILD_DIR  out-of-tree build directory (default <src>/_build)
#   PMIXCPP_PREFIX     install prefix (default <src>/_install); the plugin goes
#                      to <prefix>/lib/slurm, which the local cluster puts first
#                      in its PluginDir
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${PMIXCPP_BUILD_DIR:-$src/_build}
prefix=${PMIXCPP_PREFIX:-$src/_install}

"$src/contrib/install-deps.sh"

cd "$src"
if [ ! -x configure ] || [ configure.ac -nt configure ] || [ -n "$(find . -name Makefile.inc -newer configure -o -name Makefile.am -newer configure | head -1)" ]; then
    ./autogen.sh
fi
mkdir -p "$build"
cd "$build"
if [ ! -f Makefile ] || [ "$src/configure" -nt Makefile ]; then
    "$src/configure" --prefix="$prefix" --with-plugindir="$prefix/lib/slurm" ${PMIXCPP_CONFIGURE_FLAGS:-}
fi
make -j"$(nproc)"
make install >/dev/null
echo "build: installed into $prefix (plugin in $prefix/lib/slurm)"
