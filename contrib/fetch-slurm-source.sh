#!/bin/sh
# Fetch the Debian source package of the *installed* Slurm and configure it so
# that its config.h exists; the plugin compiles against those internal headers.
#
# usage: contrib/fetch-slurm-source.sh [--print-dir]
#   PMIXCPP_SLURM_SRC_CACHE  cache directory (default /var/cache/pmixcpp)
#
# The result is cached per installed version: a second run prints the cached
# directory without fetching.  The last line of stdout is the source directory.
set -eu

cache=${PMIXCPP_SLURM_SRC_CACHE:-/var/cache/pmixcpp}

die() { echo "fetch-slurm-source: $*" >&2; exit 1; }

version=$(dpkg-query -W -f='${Version}' slurm-wlm-basic-plugins 2>/dev/null) ||
    die "Slurm is not installed (apt-get install slurm-wlm-basic-plugins slurmd slurmctld slurm-client)"
[ -n "$version" ] || die "cannot read the installed Slurm version"

dest="$cache/slurm-$version"
if [ -f "$dest/.pmixcpp-configured" ]; then
    echo "$dest/src"
    exit 0
fi

[ "$(id -u)" = 0 ] || [ -w "$cache" ] 2>/dev/null || [ -w "$(dirname "$cache")" ] ||
    die "cannot write $cache (run as root, or set PMIXCPP_SLURM_SRC_CACHE)"

# deb-src for the same archive as the binary packages
if ! apt-get source --print-uris "slurm-wlm=$version" >/dev/null 2>&1; then
    [ "$(id -u)" = 0 ] || die "deb-src is not enabled and we are not root; enable deb-src for the Slurm archive"
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
fi
command -v dpkg-source >/dev/null 2>&1 || {
    [ "$(id -u)" = 0 ] || die "dpkg-source missing: apt-get install dpkg-dev"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends dpkg-dev >&2
}

rm -rf "$dest.tmp"
mkdir -p "$dest.tmp"
if ! ( cd "$dest.tmp" && apt-get source -qq "slurm-wlm=$version" >&2 ); then
    # Some mirrors hold the upstream tarball of a stable update but not its
    # Debian files: the upstream source has every header the plugin needs.
    echo "fetch-slurm-source: apt-get source failed; trying the upstream tarball alone" >&2
    uri=$(apt-get source --print-uris "slurm-wlm=$version" 2>/dev/null |
          awk -F"'" '$2 ~ /\.orig\.tar\./ { split($3, f, " "); print $2, f[1], f[3]; exit }')
    [ -n "$uri" ] || die "apt-get source slurm-wlm=$version failed (no upstream tarball listed)"
    set -- $uri
    /usr/lib/apt/apt-helper download-file "$1" "$dest.tmp/$2" "$3" >&2 ||
        die "apt-get source slurm-wlm=$version failed, and so did the download of $1"
    tar -C "$dest.tmp" -xf "$dest.tmp/$2" || die "cannot unpack $2"
fi
srcdir=$(find "$dest.tmp" -mindepth 1 -maxdepth 1 -type d | head -n 1)
[ -f "$srcdir/configure" ] || die "unpacked source has no configure script"
mv "$srcdir" "$dest.tmp/src"

echo "fetch-slurm-source: configuring Slurm $version source (config.h only)" >&2
( cd "$dest.tmp/src" && ./configure --quiet --prefix=/usr --sysconfdir=/etc/slurm \
      --enable-multiple-slurmd >"$dest.tmp/configure.log" 2>&1 ) ||
    die "configure of the Slurm source failed, see $dest.tmp/configure.log"
[ -f "$dest.tmp/src/config.h" ] || die "configure did not produce config.h"

touch "$dest.tmp/.pmixcpp-configured"
rm -rf "$dest"
mv "$dest.tmp" "$dest"
echo "$dest/src"
