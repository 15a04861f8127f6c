#!/bin/sh
# Unpack the Debian source package of the *installed* Slurm inside the checkout and configure it
# so that its config.h exists; the plugin compiles against those internal headers.
#
# usage: contrib/fetch-slurm-source.sh
#   PMIXCPP_SLURM_SRC_DIR   where the configured trees live [<checkout>/_deps]
#   PMIXCPP_DOWNLOAD_CACHE  the checked download cache of contrib/deb-source.sh
#
# The configured tree is a build output: it lives in the checkout, one per Slurm version, and a
# second run there prints it without fetching. Outside the checkout only the downloaded files
# are kept, and contrib/deb-source.sh checks them against the archive before each use.
# The last line of stdout is the source directory.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
deps=${PMIXCPP_SLURM_SRC_DIR:-$(dirname "$here")/_deps}

die() { echo "fetch-slurm-source: $*" >&2; exit 1; }

version=$(dpkg-query -W -f='${Version}' slurm-wlm-basic-plugins 2>/dev/null) ||
    die "Slurm is not installed (apt-get install slurm-wlm-basic-plugins slurmd slurmctld slurm-client)"
[ -n "$version" ] || die "cannot read the installed Slurm version"

dest="$deps/slurm-$version"
if [ -f "$dest/.pmixcpp-configured" ]; then
    echo "$dest/src"
    exit 0
fi

mkdir -p "$deps" || die "cannot make $deps"
rm -rf "$dest.tmp"
sh "$here/deb-source.sh" "slurm-wlm=$version" "$dest.tmp" >/dev/null ||
    die "cannot obtain the source of Slurm $version"
[ -f "$dest.tmp/src/configure" ] || die "unpacked source has no configure script"

echo "fetch-slurm-source: configuring Slurm $version source (config.h only)" >&2
( cd "$dest.tmp/src" && ./configure --quiet --prefix=/usr --sysconfdir=/etc/slurm \
      --enable-multiple-slurmd >"$dest.tmp/configure.log" 2>&1 ) ||
    die "configure of the Slurm source failed, see $dest.tmp/configure.log"
[ -f "$dest.tmp/src/config.h" ] || die "configure did not produce config.h"

touch "$dest.tmp/.pmixcpp-configured"
rm -rf "$dest"
mv "$dest.tmp" "$dest"
echo "$dest/src"
