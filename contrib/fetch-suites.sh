#!/bin/sh
# Fetch the public test suites the conformance runner uses, from Debian's
# source packages of the installed (or candidate) versions:
#   pmix    OpenPMIx examples/ and test/simple/ client programs
#   mpich   MPICH test/mpi (init, spawn, comm) and util/mtest.c
#   mpi4py  mpi4py's test/ directory
#
# usage: contrib/fetch-suites.sh
#   PMIXCPP_SUITES_DIR      where they are unpacked [<checkout>/_deps/suites]
#   PMIXCPP_DOWNLOAD_CACHE  the checked download cache of contrib/deb-source.sh
#
# Each package is unpacked once per version into $dir/<pkg>-<version>/src, inside the
# checkout; a later run there reuses it. Outside the checkout only the downloaded files are
# kept, checked against the archive before each use (contrib/deb-source.sh).
# Prints one line per suite: "<pkg> <source dir>".
#   PMIXCPP_SUITES_FALLBACK  a directory of sources of another release, laid out like the
#                            cache (<pkg>-<version>/src): used for a package whose installed
#                            version's source the mirror does not have, with a note on stderr
set -eu

here=$(cd "$(dirname "$0")" && pwd)
cache=${PMIXCPP_SUITES_DIR:-$(dirname "$here")/_deps/suites}

die() { echo "fetch-suites: $*" >&2; exit 1; }

# version of the source package: installed binary package first, else the candidate
pkg_version() {  # <source pkg> <binary pkg>
    v=$(dpkg-query -W -f='${Version}' "$2" 2>/dev/null || true)
    [ -n "$v" ] || v=$(apt-cache policy "$2" 2>/dev/null | awk '/Candidate:/ { print $2 }')
    [ -n "$v" ] && [ "$v" != "(none)" ] || die "no version of $2 known to apt"
    # binary NMU suffix (+bN) is not part of the source version
    echo "$v" | sed 's/+b[0-9]*$//'
}

fetch() {  # <source pkg> <binary pkg>   (run in a subshell: die exits it)
    version=$(pkg_version "$1" "$2")
    dest="$cache/$1-$version"
    if [ ! -f "$dest/.pmixcpp-unpacked" ]; then
        mkdir -p "$cache" || die "cannot make $cache"
        rm -rf "$dest.tmp"
        sh "$here/deb-source.sh" "$1=$version" "$dest.tmp" >/dev/null ||
            die "no source of $1 $version here"
        touch "$dest.tmp/.pmixcpp-unpacked"
        rm -rf "$dest"
        mv "$dest.tmp" "$dest"
    fi
    echo "$1 $dest/src"
}

# fetch, else the newest source of that package in PMIXCPP_SUITES_FALLBACK
fetch_or_fallback() {  # <source pkg> <binary pkg>
    (fetch "$1" "$2") && return 0
    fb=${PMIXCPP_SUITES_FALLBACK:-}
    [ -n "$fb" ] || return 1
    d=$(ls -d "$fb/$1"-*/src 2>/dev/null | sort -V | tail -n 1)
    [ -n "$d" ] || return 1
    echo "fetch-suites: $1: the installed version's source is not on this mirror; using $(basename "$(dirname "$d")") from $fb" >&2
    echo "$1 $d"
}

mkdir -p "$cache" 2>/dev/null || true
status=0
# Debian 13 renamed libpmix2 to libpmix2t64 (64-bit time_t); libpmix-dev names both
fetch_or_fallback pmix libpmix-dev || status=1
fetch_or_fallback mpich mpich || status=1
# mpi4py's upstream tarball is missing from some bookworm mirrors: report it
# (the runner then marks the mpi4py suite SKIP) instead of failing everything.
if ! (fetch mpi4py python3-mpi4py); then
    echo "fetch-suites: mpi4py source not available from this mirror; its suite will be skipped" >&2
fi
exit $status
