#!/bin/sh
# Unpack a Debian source package into a directory of the checkout, from a download cache that is
# checked against the archive every time.
#
# usage: contrib/deb-source.sh SPEC DEST
#   SPEC  what `apt-get source` takes: slurm-wlm=22.05.8-4+deb12u3, slurm-wlm/sid, mpich=4.0.2-3
#   DEST  directory to unpack into (made anew): the source tree becomes DEST/src
#   PMIXCPP_DOWNLOAD_CACHE  where the downloaded files are kept [/var/cache/pmixcpp/downloads]
#
# Only downloads are cached outside the checkout, never anything built from them. Each file the
# archive lists for SPEC (the .dsc, the upstream and Debian tarballs) is taken from the cache only
# if its checksum equals the one in apt's signed Sources index now; otherwise it is downloaded
# again and checked. dpkg-source then checks the tarballs against the .dsc while unpacking.
# A mirror that has the upstream tarball but not the Debian files (seen for stable updates)
# gives the upstream tree alone, with a note on stderr.
# Prints DEST/src on the last line. Exit 1: an error; 77: the archive lists no source for SPEC,
# or the mirror does not have its files (a skip for a compile check, an error elsewhere).
set -eu

say() { echo "deb-source: $*" >&2; }
die() { say "$1"; exit "${2:-1}"; }

[ $# -eq 2 ] || die "usage: contrib/deb-source.sh SPEC DEST"
spec=$1 dest=$2
cache=${PMIXCPP_DOWNLOAD_CACHE:-/var/cache/pmixcpp/downloads}

# deb-src entries for the archive the binary packages come from
enable_deb_src() {
    apt-get source --print-uris "$spec" >/dev/null 2>&1 && return 0
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

# the checksum program for apt's "ALGO:hex"
sum_of() {  # file algo
    case $2 in
        SHA256) sha256sum "$1" ;;
        SHA512) sha512sum "$1" ;;
        SHA1) sha1sum "$1" ;;
        MD5Sum|MD5) md5sum "$1" ;;
        *) die "unknown checksum kind $2" ;;
    esac | cut -d' ' -f1
}

enable_deb_src
command -v dpkg-source >/dev/null 2>&1 || die "dpkg-source missing: apt-get install dpkg-dev"
# lines: 'URI' file size ALGO:hex
uris=$(apt-get source --print-uris "$spec" 2>/dev/null | grep "^'") ||
    die "apt lists no source package for $spec" 77
mkdir -p "$cache" || die "cannot make $cache"

have_dsc="" have_orig="" missing=""
while read -r uri file size hash; do
    uri=${uri#\'} uri=${uri%\'}
    algo=${hash%%:*} want=${hash#*:}
    f=$cache/$file
    if [ -f "$f" ] && [ "$(sum_of "$f" "$algo")" = "$want" ]; then
        :
    else
        [ -f "$f" ] && say "$file in the cache differs from the archive's; fetching it again"
        rm -f "$f" "$f.part"
        if /usr/lib/apt/apt-helper download-file "$uri" "$f.part" "$hash" >/dev/null 2>&1 &&
           [ "$(sum_of "$f.part" "$algo")" = "$want" ]; then
            mv "$f.part" "$f"
        else
            rm -f "$f.part"
            missing="$missing $file"
            continue
        fi
    fi
    case $file in
        *.dsc) have_dsc=$f ;;
        *.orig.tar.*) have_orig=$f ;;
    esac
done <<EOF
$uris
EOF

rm -rf "$dest"
mkdir -p "$dest"
if [ -z "$missing" ] && [ -n "$have_dsc" ]; then
    dpkg-source --no-copy -x "$have_dsc" "$dest/src" >"$dest/unpack.log" 2>&1 ||
        die "dpkg-source could not unpack $have_dsc (see $dest/unpack.log)"
elif [ -n "$have_orig" ]; then
    say "the mirror lacks${missing} of $spec; using the upstream tarball alone"
    tar -C "$dest" -xf "$have_orig" || die "cannot unpack $have_orig"
    top=$(find "$dest" -mindepth 1 -maxdepth 1 -type d | head -n 1)
    [ -n "$top" ] || die "$have_orig holds no directory"
    mv "$top" "$dest/src"
else
    rm -rf "$dest"
    die "the mirror does not have the files of $spec:${missing}" 77
fi
echo "$dest/src"
