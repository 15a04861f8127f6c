#!/bin/bash
# Build Debian packages of pmixcpp from this source tree, for the Slurm version
# installed on this machine, and check them with lintian.
#
# usage: contrib/build-debs.sh [OUTDIR]      (default <src>/_build/debs)
#   PMIXCPP_DEB_CHECK=1   also run `make check` inside the package build
#
# Packages (contrib/debian/control):
#   slurm-mpi-pmixcpp  the plugin, in Debian's Slurm PluginDir
#                      (/usr/lib/<triplet>/slurm-wlm); depends on exactly the
#                      installed slurm-wlm-basic-plugins version, because it is
#                      compiled against that version's internal headers
#   libpmixcpp2        the client library libpmix.so.2, in the private directory
#                      /usr/lib/<triplet>/pmixcpp (never replaces OpenPMIx's)
#   libpmixcpp-dev     headers in /usr/include/pmixcpp, pmixcpp.pc
#   pmixcpp-info       pmixcpp_info and its man page
#
# Copies the tree (git's files when it is a git checkout, else everything but
# _build and _install) and contrib/debian as debian/ into a scratch directory,
# runs dpkg-buildpackage there, then lintian (exit 1 on a lintian error), and
# copies the .deb files to OUTDIR. Run as root on a fresh machine: installs the
# build dependencies (contrib/install-deps.sh) and the Slurm source
# (contrib/fetch-slurm-source.sh) first.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$src/_build/debs}

say() { echo "build-debs: $*"; }
die() { echo "build-debs: error: $*" >&2; exit 1; }

if [ "$(id -u)" = 0 ]; then
    "$src/contrib/install-deps.sh"
fi
for t in dpkg-buildpackage dh lintian; do
    command -v "$t" >/dev/null || die "$t is missing: run contrib/install-deps.sh as root"
done

slurm_src=$(sh "$src/contrib/fetch-slurm-source.sh" | tail -n 1) || die "no Slurm source (contrib/fetch-slurm-source.sh)"
version=$(sed -n 's/^AC_INIT(\[pmixcpp\], *\[\([^]]*\)\].*/\1/p' "$src/configure.ac")
[ -n "$version" ] || die "cannot read the version from configure.ac"
slurm_version=$(dpkg-query -W -f='${Version}' slurm-wlm-basic-plugins)

work=$(mktemp -d /tmp/pmixcpp-debs.XXXXXX)
trap 'rm -rf "$work"' EXIT
tree="$work/pmixcpp-$version"
mkdir -p "$tree"
if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    # tracked and new (not ignored) files, as they are in the working tree
    git -C "$src" ls-files -z --cached --others --exclude-standard |
        (cd "$src" && xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh) |
        tar -C "$src" --null -T - -cf - | tar -C "$tree" -xf -
else
    tar -C "$src" --exclude=./_build --exclude=./_install --exclude=./.git -cf - . | tar -C "$tree" -xf -
fi
cp -r "$src/contrib/debian" "$tree/debian"
cat > "$tree/debian/changelog" <<EOF
pmixcpp ($version) unstable; urgency=medium

  * Built from the source tree by contrib/build-debs.sh,
    for Slurm $slurm_version.

 -- pmixcpp developers <dev@pmixcpp.org>  $(date -R)
EOF

opts="${DEB_BUILD_OPTIONS:-} parallel=$(nproc)"
[ "${PMIXCPP_DEB_CHECK:-0}" = 1 ] || opts="$opts nocheck"
say "building pmixcpp $version for Slurm $slurm_version in $tree (log: $work/build.log)"
if ! (cd "$tree" && DEB_BUILD_OPTIONS="$opts" PMIXCPP_SLURM_SOURCE="$slurm_src" \
        dpkg-buildpackage -us -uc > "$work/build.log" 2>&1); then
    tail -n 60 "$work/build.log"
    die "dpkg-buildpackage failed"
fi

changes=$(ls "$work"/pmixcpp_"${version}"_*.changes)
say "lintian $(basename "$changes")"
lintian_rc=0
lintian --fail-on error --info "$changes" || lintian_rc=$?

mkdir -p "$out"
rm -f "$out"/*.deb
cp "$work"/*.deb "$out/"
for d in "$out"/*.deb; do
    say "$(basename "$d"): $(dpkg-deb -f "$d" Depends | tr -s ' ')"
done
[ "$lintian_rc" = 0 ] || die "lintian reported errors (above)"
say "packages in $out"
