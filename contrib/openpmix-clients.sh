#!/bin/bash
# OpenPMIx client libraries of other releases than the installed one, and OpenPMIx's own example
# programs built against each: the vehicles that show whether a PMIx server serves programs that
# bring their own OpenPMIx (tests/integration/t-native-clients.sh). Everything comes from Debian
# source packages (contrib/deb-source.sh) and is built inside the checkout.
#
# usage: contrib/openpmix-clients.sh [VEHICLE...]      (default: all of them)
#   pmix3   OpenPMIx 3.2, embedded in the source of Debian 12's OpenMPI 4.1
#           (opal/mca/pmix/pmix3x/pmix), configured and built alone
#   pmix5   OpenPMIx 5.0, Debian 13's pmix source package
#   pmixdev the development branch's pmix source package (sid; experimental if newer)
#           (pmix5, pmixdev: where the mirror lacks the pmix package's files, the OpenPMIx
#           embedded in the same suite's OpenMPI source, 3rd-party/openpmix; pmixdev, where
#           the mirror has neither source, the suite's binary packages libpmix2t64 and
#           libpmix-dev as apt downloads them, checked against its signed index: they need a
#           newer C library than Debian 12's, so their examples are built and run inside the
#           Debian 13 root (PREFIX holds .container-only and no examples/)
#   PMIXCPP_CLIENTS_DIR     where sources are unpacked and built [<checkout>/_build/clients]
#   PMIXCPP_DOWNLOAD_CACHE  the checked download cache of contrib/deb-source.sh
#   PMIXCPP_BUILD_NICE      nice level of the builds [10]
#
# Idempotent: a vehicle whose source version is built already is not built again.
# Prints one line per vehicle: "NAME VERSION PREFIX (from ...)": PREFIX/lib holds libpmix.so.2,
# PREFIX/examples the example programs (linked with DT_RPATH to PREFIX/lib, so they load this
# libpmix even when LD_LIBRARY_PATH names another) and PREFIX/examples/src their sources. A
# vehicle that cannot be had here prints "NAME - unavailable" (no source of it on this mirror)
# or "NAME - failed", with the reason on stderr; exit 1 if one asked for by name failed.
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
top=${PMIXCPP_CLIENTS_DIR:-$src/_build/clients}
nice_level=${PMIXCPP_BUILD_NICE:-10}
say() { echo "openpmix-clients: $*" >&2; }

# The examples a client vehicle carries, where its release has them (3.2 lacks some).
EXAMPLES="hello client client2 dmodex dynamic fault pub pubi jctrl log nodeinfo group asyncgroup"

# A private apt configuration listing the sources of other Debian suites (bookworm's apt lists
# only its own): its indexes live in $top/apt/<suites>, apt's signed Sources files as everywhere.
apt_for_suites() {  # suite...
    local d uri f
    d=$top/apt/$(echo "$*" | tr ' ' _)
    uri=$(awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($i !~ /security/) { print $i; exit } }' \
            /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n 1)
    [ -n "$uri" ] || uri=$(awk '$1 == "deb" && $0 !~ /security/ { print $2; exit }' /etc/apt/sources.list 2>/dev/null)
    [ -n "$uri" ] || { say "no Debian archive in the apt sources"; return 1; }
    mkdir -p "$d/lists/partial" "$d/cache/archives/partial" "$d/parts" "$d/prefs"
    : > "$d/sources.list"
    for s in "$@"; do
        echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri $s main" >> "$d/sources.list"
    done
    cat > "$d/apt.conf" <<EOF
Dir::State::Lists "$d/lists";
Dir::Cache "$d/cache";
Dir::Etc::SourceList "$d/sources.list";
Dir::Etc::SourceParts "$d/parts";
Dir::Etc::Preferences "$d/prefs/none";
Dir::Etc::PreferencesParts "$d/prefs";
APT::Get::Only-Source "true";
EOF
    f=$d/updated
    # the indexes are fetched again after a day (apt checks their signatures each time)
    if [ ! -f "$f" ] || [ -n "$(find "$f" -mmin +1440)" ]; then
        APT_CONFIG=$d/apt.conf apt-get update -qq >&2 || { say "apt-get update of $* failed"; return 1; }
        touch "$f"
    fi
    echo "$d/apt.conf"
}

# The version of a source package in a suite: "SPEC VERSION" of the newest, from apt's index.
source_version() {  # apt.conf package suite...
    local conf=$1 pkg=$2 s v best="" bests=""; shift 2
    for s in "$@"; do
        v=$(APT_CONFIG=$conf apt-get source --print-uris "$pkg/$s" 2>/dev/null |
            awk -F"'" '$2 ~ /\.dsc$/ { n = split($2, p, "_"); v = p[n]; sub(/\.dsc$/, "", v); print v }' |
            sed 's/%2b/+/g; s/%7e/~/g; s/%7E/~/g')
        [ -n "$v" ] || continue
        if [ -z "$best" ] || dpkg --compare-versions "$v" gt "$best"; then best=$v bests=$s; fi
    done
    [ -n "$best" ] && echo "$pkg/$bests $best"
}

# Unpack SPEC into $top/<name>-<version>/ once; prints the source tree. Exit 77: this mirror
# does not have its files.
unpack() {  # name spec version [apt.conf]
    local d=$top/$1-$3
    if [ ! -f "$d/.unpacked" ]; then
        rm -rf "$d"
        if [ -n "${4:-}" ]; then
            APT_CONFIG=$4 "$src/contrib/deb-source.sh" "$2" "$d.tmp" >/dev/null || return $?
        else
            "$src/contrib/deb-source.sh" "$2" "$d.tmp" >/dev/null || return $?
        fi
        touch "$d.tmp/.unpacked" && mv "$d.tmp" "$d"
    fi
    echo "$d/src"
}

# configure + make install of an OpenPMIx tree into PREFIX (once), then the examples.
build_pmix() {  # name tree prefix configure-args...
    local name=$1 tree=$2 prefix=$3 t0; shift 3
    local b=$prefix.build
    if [ ! -f "$prefix/.built" ]; then
        t0=$(date +%s)
        rm -rf "$b" "$prefix" && mkdir -p "$b"
        if [ ! -x "$tree/configure" ]; then
            say "$name: no configure script in the source; generating it (autogen.pl)"
            ( cd "$tree" && nice -n "$nice_level" ./autogen.pl ) > "$b/autogen.log" 2>&1 ||
                { say "$name: autogen failed, see $b/autogen.log"; return 1; }
        fi
        ( cd "$b" && nice -n "$nice_level" "$tree/configure" --prefix="$prefix" "$@" ) > "$b/configure.log" 2>&1 ||
            { say "$name: configure failed, see $b/configure.log"; return 1; }
        nice -n "$nice_level" make -C "$b" -j2 > "$b/make.log" 2>&1 ||
            { say "$name: make failed, see $b/make.log"; tail -n 20 "$b/make.log" >&2; return 1; }
        make -C "$b" install > "$b/install.log" 2>&1 ||
            { say "$name: make install failed, see $b/install.log"; return 1; }
        echo "$(( $(date +%s) - t0 ))" > "$prefix/.build-seconds"
        touch "$prefix/.built"
        say "$name: built in $(cat "$prefix/.build-seconds") s into $prefix"
    fi
    build_examples "$name" "$tree/examples" "$prefix" "$b"
}

# OpenPMIx's example programs of the same tree, against the installed library (DT_RPATH); the
# build directory for those that include the configured header (3.2's dmodex).
build_examples() {  # name examples-dir prefix build-dir
    local ex=$3/examples p ok="" bad=""
    # their sources beside them, for builds elsewhere (in a container, against its own library)
    mkdir -p "$ex/src"
    cp "$2"/*.c "$2"/*.h "$ex/src/" 2>/dev/null
    for p in $EXAMPLES; do
        [ -f "$2/$p.c" ] || continue
        if [ -x "$ex/$p" ] && [ "$ex/$p" -nt "$2/$p.c" ] && [ "$ex/$p" -nt "$3/.built" ]; then ok="$ok $p"; continue; fi
        if nice -n "$nice_level" cc -O1 -w -I"$2" -I"$3/include" -I"$4" -I"$4/include" -I"$2/.." -o "$ex/$p" "$2/$p.c" \
               -L"$3/lib" -Wl,--disable-new-dtags -Wl,-rpath,"$3/lib" -lpmix -lpthread > "$ex/$p.build.log" 2>&1; then
            ok="$ok $p"
        else
            bad="$bad $p"; rm -f "$ex/$p"
        fi
    done
    chmod -R a+rX "$3"
    [ -z "$bad" ] || say "$1: examples that do not build here:$bad (see $ex/*.build.log)"
    [ -n "$ok" ] || { say "$1: no example program built"; return 1; }
}

# the version string OpenPMIx's own VERSION file gives (major.minor.release + greek)
tree_version() {
    awk -F= '$1 == "major" { M = $2 } $1 == "minor" { m = $2 } $1 == "release" { r = $2 } $1 == "greek" { g = $2 }
             END { printf "%s.%s.%s%s\n", M, m, r, g }' "$1/VERSION"
}

COMMON_ARGS=(--disable-debug --enable-silent-rules)

vehicle_pmix3() {
    local v tree prefix rc
    # the OpenMPI 4.1 source of this system's apt (Debian 12: 4.1.4), not a newer suite's
    v=$(apt-cache showsrc openmpi 2>/dev/null | awk '/^Version:/ { print $2 }' | sort -V | grep '^4\.' | tail -n 1)
    [ -n "$v" ] || { say "pmix3: apt lists no OpenMPI 4 source here"; return 77; }
    tree=$(unpack openmpi "openmpi=$v" "$v") || { rc=$?; say "pmix3: no source of openmpi $v"; return $rc; }
    tree=$tree/opal/mca/pmix/pmix3x/pmix
    [ -f "$tree/VERSION" ] || { say "pmix3: openmpi $v carries no embedded OpenPMIx (opal/mca/pmix/pmix3x/pmix)"; return 77; }
    prefix=$top/pmix-$(tree_version "$tree")
    # 3.2 does not search the multiarch library directory by itself
    build_pmix pmix3 "$tree" "$prefix" "${COMMON_ARGS[@]}" --with-libevent=/usr || return 1
    echo "pmix3 $(tree_version "$tree") $prefix (from openmpi $v)"
}

# A suite's pmix source package; where this mirror lacks its files, the OpenPMIx that the same
# suite's OpenMPI source embeds (3rd-party/openpmix).
vehicle_suite() {  # name suite...
    local name=$1 conf sv spec v tree="" prefix from rc; shift
    conf=$(apt_for_suites "$@") || return 1
    if sv=$(source_version "$conf" pmix "$@"); then
        spec=${sv% *} v=${sv#* }
        tree=$(unpack pmix "pmix=$v" "$v" "$conf") && from="pmix $v, $spec" ||
            say "$name: the mirror lacks the source of pmix $v ($spec); trying the OpenPMIx in that suite's OpenMPI"
    else
        say "$name: no pmix source in $*"
    fi
    if [ -z "$tree" ]; then
        sv=$(source_version "$conf" openmpi "$@") || { say "$name: no openmpi source in $*"; return 77; }
        spec=${sv% *} v=${sv#* }
        tree=$(unpack openmpi "openmpi=$v" "$v" "$conf") || { rc=$?; say "$name: no source of openmpi $v ($spec) either"; return $rc; }
        tree=$tree/3rd-party/openpmix
        [ -f "$tree/VERSION" ] || { say "$name: openmpi $v carries no embedded OpenPMIx (3rd-party/openpmix)"; return 77; }
        from="openmpi $v, $spec, 3rd-party/openpmix"
    fi
    prefix=$top/pmix-$(tree_version "$tree")
    build_pmix "$name" "$tree" "$prefix" "${COMMON_ARGS[@]}" --disable-sphinx --disable-man-pages || return 1
    echo "$name $(tree_version "$tree") $prefix (from $from)"
}

# The suites' binary packages of OpenPMIx's client (where no source of it can be had): apt
# downloads libpmix2t64, libpmix-dev and libesmtp6 (which libpmix needs and the Debian 13 root
# lacks) from a private index of the suites, checking each against the signed index; the
# library and headers become PREFIX/lib and PREFIX/include.
vehicle_binary() {  # name suite...
    local name=$1 d uri s v pfx deb inc; shift
    d=$top/apt-bin/$(echo "$*" | tr ' ' _)
    uri=$(awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($i !~ /security/) { print $i; exit } }' \
            /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n 1)
    [ -n "$uri" ] || uri=$(awk '$1 == "deb" && $0 !~ /security/ { print $2; exit }' /etc/apt/sources.list 2>/dev/null)
    [ -n "$uri" ] || { say "$name: no Debian archive in the apt sources"; return 77; }
    mkdir -p "$d/lists/partial" "$d/cache/archives/partial" "$d/parts" "$d/prefs" "$d/debs" || return 1
    : > "$d/sources.list"
    for s in "$@"; do
        echo "deb [arch=amd64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri $s main" >> "$d/sources.list"
    done
    {
        echo "Dir::State::Lists \"$d/lists\";"
        echo "Dir::State::status \"/dev/null\";"
        echo "Dir::Cache \"$d/cache\";"
        echo "Dir::Etc::SourceList \"$d/sources.list\";"
        echo "Dir::Etc::SourceParts \"$d/parts\";"
        echo "Dir::Etc::Preferences \"$d/prefs/none\";"
        echo "Dir::Etc::PreferencesParts \"$d/prefs\";"
        echo "APT::Architecture \"amd64\";"
    } > "$d/apt.conf"
    if [ ! -f "$d/updated" ] || [ -n "$(find "$d/updated" -mmin +1440)" ]; then
        APT_CONFIG=$d/apt.conf apt-get update -qq >&2 || { say "$name: apt-get update of $* (binary) failed"; return 77; }
        touch "$d/updated"
    fi
    v=$(APT_CONFIG=$d/apt.conf apt-cache policy libpmix2t64 2>/dev/null | awk '/Candidate:/ { print $2 }')
    case $v in "" | "(none)") say "$name: no libpmix2t64 in $*"; return 77 ;; esac
    pfx=$top/pmix-bin-$v
    if [ ! -f "$pfx/.built" ]; then
        rm -rf "$pfx" && rm -f "$d/debs"/*.deb && mkdir -p "$pfx/lib" "$pfx/unpacked" || return 1
        (cd "$d/debs" && APT_CONFIG=$d/apt.conf apt-get download -qq "libpmix2t64=$v" "libpmix-dev=$v" libesmtp6) >&2 ||
            { say "$name: apt-get download of libpmix2t64/libpmix-dev $v failed"; return 77; }
        for deb in "$d/debs"/*.deb; do
            dpkg-deb -x "$deb" "$pfx/unpacked" || { say "$name: cannot unpack $deb"; return 1; }
        done
        inc=$(find "$pfx/unpacked" -name pmix.h -path '*include*' | head -n 1)
        [ -n "$inc" ] || { say "$name: libpmix-dev $v has no pmix.h"; return 1; }
        cp -a "$(dirname "$inc")" "$pfx/include" || return 1
        find "$pfx/unpacked" \( -name 'libpmix.so.2.*' -o -name 'libesmtp.so.6*' \) -type f -exec cp -a {} "$pfx/lib/" \;
        find "$pfx/unpacked" -name 'libesmtp.so.6' -type l -exec cp -a {} "$pfx/lib/" \;
        deb=$(cd "$pfx/lib" && ls libpmix.so.2.* 2>/dev/null | head -n 1)
        [ -n "$deb" ] || { say "$name: no libpmix.so.2 in libpmix2t64 $v"; return 1; }
        ln -sf "$deb" "$pfx/lib/libpmix.so.2" && ln -sf libpmix.so.2 "$pfx/lib/libpmix.so"
        rm -rf "$pfx/unpacked"
        # the release as the package names it (7.0.0~rc1-2+b1: 7.0.0rc1; the header has no greek)
        echo "$v" | sed 's/^[0-9]*://; s/-[^-]*$//; s/~//' > "$pfx/.version"
        echo "binary packages libpmix2t64 and libpmix-dev $v: they need glibc >= 2.38" > "$pfx/.container-only"
        chmod -R a+rX "$pfx"
        touch "$pfx/.built"
        say "$name: OpenPMIx $(cat "$pfx/.version") from the binary packages of $* ($v) in $pfx"
    fi
    echo "$name $(cat "$pfx/.version") $pfx (from the binary packages $v of $*; run inside the Debian 13 root)"
}

[ $# -gt 0 ] && named=1 || named=0
[ $# -gt 0 ] || set -- pmix3 pmix5 pmixdev
mkdir -p "$top" || exit 1
rc=0
for veh in "$@"; do
    case $veh in
        pmix3) out=$(vehicle_pmix3) ;;
        pmix5) out=$(vehicle_suite pmix5 trixie) ;;
        pmixdev)
            out=$(vehicle_suite pmixdev sid experimental)
            vrc=$?
            [ -n "$out" ] || [ $vrc != 77 ] || out=$(vehicle_binary pmixdev sid experimental) ;;
        *) say "unknown vehicle $veh"; exit 2 ;;
    esac
    vrc=$?
    if [ -n "$out" ]; then echo "$out"
    elif [ $vrc = 77 ]; then echo "$veh - unavailable"
    else echo "$veh - failed"; [ $named = 1 ] && rc=1; fi
done
exit $rc
