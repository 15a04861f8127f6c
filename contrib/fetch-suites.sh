#!/bin/sh
# Fetch the public test suites the conformance runner uses, from Debian's
# source packages of the installed (or candidate) versions:
#   pmix    OpenPMIx examples/ and test/simple/ client programs
#   mpich   MPICH test/mpi (init, spawn, comm) and util/mtest.c
#   mpi4py  mpi4py's test/ directory
#
# usage: contrib/fetch-suites.sh
#   PMIXCPP_SUITES_CACHE  cache directory (default /var/cache/pmixcpp/suites)
#
# Each package is unpacked once per version into $cache/<pkg>-<version>/src;
# a later run reuses it.  Prints one line per suite: "<pkg> <source dir>".
#   PMIXCPP_SUITES_FALLBACK  a directory of sources of another release, laid out like the
#                            cache (<pkg>-<version>/src): used for a package whose installed
#                            version's source the mirror does not have, with a note on stderr
# deb-src is enabled the way contrib/fetch-slurm-source.sh does it.
set -eu

cache=${PMIXCPP_SUITES_CACHE:-/var/cache/pmixcpp/suites}

die() { echo "fetch-suites: $*" >&2; exit 1; }

# version of the source package: installed binary package first, else the candidate
pkg_version() {  # <source pkg> <binary pkg>
    v=$(dpkg-query -W -f='${Version}' "$2" 2>/dev/null || true)
    [ -n "$v" ] || v=$(apt-cache policy "$2" 2>/dev/null | awk '/Candidate:/ { print $2 }')
    [ -n "$v" ] && [ "$v" != "(none)" ] || die "no version of $2 known to apt"
    # binary NMU suffix (+bN) is not part of the source version
    echo "$v" | sed 's/+b[0-9]*$//'
}

enable_deb_src() {
    apt-get source --print-uris "$1" >/dev/null 2>&1 && return 0
    [ "$(id -u)" = 0 ] || die "deb-src is not enabled and we are not root"
    if [ -f /etc/apt/sources.list.d/debian.sources ]; then
        sed -e 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources \
            > /etc/apt/sources.list.d/pmixcpp-deb-src.sources
    elif [ -f /etc/apt/sources.list ]; then
        grep '^deb ' /etc/apt/sources.list | sed 's/^deb /deb-src /' \
            > /etc/apt/sources.list.d/pmixcpp-deb-src.list
    else
        die "no apt source list found to derive deb-src from"
    fi
    apt-get update -qq >&2 || die "apt-get update failed"
}

fetch() {  # <source pkg> <binary pkg>   (run in a subshell: die exits it)
    version=$(pkg_version "$1" "$2")
    dest="$cache/$1-$version"
    if [ ! -f "$dest/.pmixcpp-unpacked" ]; then
        [ "$(id -u)" = 0 ] || [ -w "$cache" ] 2>/dev/null || mkdir -p "$cache" 2>/dev/null ||
            die "cannot write $cache (run as root, or set PMIXCPP_SUITES_CACHE)"
        enable_deb_src "$1"
        command -v dpkg-source >/dev/null 2>&1 || die "dpkg-source missing: apt-get install dpkg-dev"
        rm -rf "$dest.tmp"
        mkdir -p "$dest.tmp"
        ( cd "$dest.tmp" && apt-get source -qq "$1=$version" >&2 ) ||
            die "apt-get source $1=$version failed"
        srcdir=$(find "$dest.tmp" -mindepth 1 -maxdepth 1 -type d | head -n 1)
        [ -n "$srcdir" ] || die "apt-get source $1 unpacked nothing"
        mv "$srcdir" "$dest.tmp/src"
        rm -f "$dest.tmp"/*.dsc "$dest.tmp"/*.tar.* 2>/dev/null || true
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
