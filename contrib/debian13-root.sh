#!/bin/bash
# A Debian 13 (trixie) root on this host: Slurm 24.11 (with mpi/pmix_v5), munge,
# slurmdbd and MariaDB (the local cluster's accounting),
# OpenMPI 5, OpenPMIx 5 (libpmix-dev), MPICH, mpi4py, the build tools and
# pmixcpp's build dependencies.  Built once with debootstrap from the Debian
# archive this machine's apt already uses, then cached.  The second test bed:
# contrib/cluster.sh runs its cluster inside it when PMIXCPP_CHROOT names it.
#
# usage: contrib/debian13-root.sh build | path | mount | umount | run CMD... | shell
#   build       bootstrap the root unless it is cached (about a minute), print its path; a
#               cached root is checked first: upgraded to what the archive serves now, and
#               the files of its packages verified against dpkg's sums
#   path        print the root's path (exit 1 if it is not built)
#   mount       mount proc, sys, dev, dev/pts, bind /tmp and this checkout at the same path
#   umount      undo mount, unless a process still runs inside the root
#   run CMD...  build if needed, mount, run CMD inside the root in the current directory
#               (the checkout and /tmp are the same paths there), then umount if unused
#   shell       run an interactive shell inside the root
#
# Environment:
#   PMIXCPP_DEBIAN13_ROOT  where the root lives [/var/cache/pmixcpp/debian13-root]
#   PMIXCPP_DEBIAN_MIRROR  archive to bootstrap from [the first Debian URI in the apt sources]
#   PMIXCPP_DEBIAN13_SUITE suite [trixie]
set -eu

PROG=debian13-root.sh
CONTRIB_DIR=$(cd "$(dirname "$0")" && pwd)
SRC_DIR=$(cd "$CONTRIB_DIR/.." && pwd)
ROOT=${PMIXCPP_DEBIAN13_ROOT:-/var/cache/pmixcpp/debian13-root}
ROOT=${ROOT%/}
SUITE=${PMIXCPP_DEBIAN13_SUITE:-trixie}
STAMP=$ROOT/.pmixcpp-root-ready

# Inside the root: the stack under test plus pmixcpp's build dependencies
# (contrib/install-deps.sh lists the same for Debian 12).
PACKAGES="
slurmctld slurmd slurm-client slurm-wlm-basic-plugins munge libmunge-dev
slurmdbd mariadb-server mariadb-client
openmpi-bin libopenmpi-dev libpmix-dev mpich libmpich-dev python3-mpi4py
g++ make autoconf automake libtool pkg-config dpkg-dev git
libevent-dev libssl-dev libhwloc-dev hwloc libucx-dev ucx-utils libgtest-dev libslurm-dev
libsodium-dev
hyperfine procps python3 file
"

say() { echo "$PROG: $*" >&2; }
die() { echo "$PROG: error: $*" >&2; exit 1; }

need_root() { [ "$(id -u)" = 0 ] || die "must run as root (debootstrap, mount, chroot)"; }

# The first Debian archive URI of this machine's apt sources (deb822 or one-line).
apt_mirror() {
    local f uri
    if [ -n "${PMIXCPP_DEBIAN_MIRROR:-}" ]; then echo "$PMIXCPP_DEBIAN_MIRROR"; return; fi
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -r "$f" ] || continue
        uri=$(awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($i !~ /security/) { print $i; exit } }' "$f")
        if [ -n "$uri" ] && grep -q '^Suites:.*\(bookworm\|trixie\|stable\|sid\)' "$f"; then
            echo "$uri"; return
        fi
    done
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -r "$f" ] || continue
        uri=$(awk '$1 == "deb" && $0 !~ /security/ {
                     for (i = 2; i <= NF; i++) if ($i ~ /^(https?|file):/) { print $i; exit } }' "$f")
        if [ -n "$uri" ]; then echo "$uri"; return; fi
    done
    die "no Debian archive found in the apt sources; set PMIXCPP_DEBIAN_MIRROR"
}

# ---------------------------------------------------------------- mounts
# Each entry: target inside the root, then how to mount it.
mount_list() {
    echo "/proc proc"
    echo "/sys sysfs"
    echo "/dev bind:/dev"
    echo "/dev/pts bind:/dev/pts"
    echo "/tmp bind:/tmp"
    echo "$SRC_DIR bind:$SRC_DIR"
}

is_mounted() { mountpoint -q "$1" 2>/dev/null; }

do_mount() {
    local target how
    need_root
    [ -f "$STAMP" ] || die "$ROOT is not built (contrib/$PROG build)"
    while read -r target how; do
        mkdir -p "$ROOT$target"
        is_mounted "$ROOT$target" && continue
        case $how in
            proc) mount -t proc proc "$ROOT$target" ;;
            sysfs) mount -t sysfs sysfs "$ROOT$target" ;;
            bind:*) mount --bind "${how#bind:}" "$ROOT$target" ;;
        esac || die "cannot mount $ROOT$target"
    done < <(mount_list)
    # the root shares the host's network: it resolves names as the host does, the host's own name
    # included (OpenMPI 5's MPI_Get_processor_name is that name; programs look it up)
    cp -L /etc/resolv.conf "$ROOT/etc/resolv.conf" 2>/dev/null || true
    cp -L /etc/hosts "$ROOT/etc/hosts" 2>/dev/null || true
}

# pids of processes whose root directory is the Debian 13 root (ours excepted)
root_users() {
    local d r real
    real=$(readlink -f "$ROOT")
    for d in /proc/[0-9]*; do
        [ "${d#/proc/}" = "$$" ] && continue
        r=$(readlink "$d/root" 2>/dev/null) || continue
        [ "$r" = "$real" ] && echo "${d#/proc/}"
    done
    return 0
}

do_umount() {
    local users target how targets=()
    need_root
    users=$(root_users | tr '\n' ' ')
    if [ -n "${users// /}" ]; then
        say "still in use by pid(s) ${users% }; mounts left in place"
        return 0
    fi
    while read -r target how; do targets=("$target" "${targets[@]}"); done < <(mount_list)
    for target in "${targets[@]}"; do
        is_mounted "$ROOT$target" || continue
        umount "$ROOT$target" 2>/dev/null || umount -l "$ROOT$target" ||
            say "cannot unmount $ROOT$target"
    done
}

# ---------------------------------------------------------------- build
in_root() {
    chroot "$ROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive "$@"
}

# A cached root is a download cache: before each use it is checked against what a bootstrap
# would fetch now. Packages the archive has newer versions of are upgraded (so the stack under
# test is the archive's), and the files of the listed packages must still be those dpkg
# installed (dpkg --verify, configuration files aside).
verify_root() {
    local stale changed
    in_root apt-get update -qq >&2 || { say "apt-get update inside the root failed"; return 1; }
    stale=$(in_root apt-get -s -qq dist-upgrade 2>/dev/null | awk '$1 == "Inst" { print $2 }' | tr '\n' ' ')
    if [ -n "${stale// /}" ]; then
        say "the archive has newer versions of: $stale; upgrading the root"
        in_root apt-get dist-upgrade -y -qq --no-install-recommends >&2 || { say "upgrade failed"; return 1; }
        in_root apt-get clean >&2 || true
    fi
    # shellcheck disable=SC2086
    changed=$(in_root dpkg --verify $PACKAGES 2>&1 | awk '$2 != "c"')
    if [ -n "$changed" ]; then
        say "files of the root differ from their packages:"
        echo "$changed" | head -n 10 | sed 's/^/    /' >&2
        return 1
    fi
    say "cached root checked: packages as the archive serves them, files as installed"
}

do_build() {
    local mirror tmp
    need_root
    # `run` of a root that is there uses it as it is: `build` checks it (contrib/test-debian13.sh
    # builds first, once per run of the suite)
    if [ -f "$STAMP" ] && [ "${1:-}" = --no-verify ]; then echo "$ROOT"; return 0; fi
    if [ -f "$STAMP" ]; then
        # a root built from an older package list gets what the list has gained since
        local missing
        # shellcheck disable=SC2086
        missing=$(chroot "$ROOT" dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' $PACKAGES 2>/dev/null |
                  awk '$2 != "ii" { print $1 }' | tr '\n' ' ')
        for p in $PACKAGES; do
            chroot "$ROOT" dpkg-query -W "$p" >/dev/null 2>&1 || missing="$missing $p"
        done
        do_mount
        if [ -n "${missing// /}" ]; then
            say "installing into the root:$missing"
            # shellcheck disable=SC2086
            in_root apt-get install -y -qq --no-install-recommends $missing >&2 ||
                { do_umount; die "installing$missing failed"; }
        fi
        verify_root || { do_umount; die "the cached root at $ROOT is not what the archive serves; remove it to bootstrap it anew"; }
        do_umount
        echo "$ROOT"; return 0
    fi
    command -v debootstrap >/dev/null 2>&1 || {
        say "installing debootstrap"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >&2 ||
            die "cannot install debootstrap"
    }
    mirror=$(apt_mirror)
    if [ ! -f "$ROOT/.pmixcpp-bootstrapped" ]; then
        say "bootstrapping Debian $SUITE from $mirror into $ROOT"
        # a half-bootstrapped root from an interrupted run is discarded (mounts first)
        if [ -d "$ROOT" ]; then
            do_umount_force
            if awk -v r="$(readlink -f "$ROOT")/" 'index($2 "/", r) == 1 { f = 1 } END { exit !f }' /proc/mounts; then
                die "something is still mounted under $ROOT; not removing it"
            fi
            rm -rf --one-file-system "$ROOT"
        fi
        mkdir -p "$(dirname "$ROOT")"
        debootstrap --variant=minbase "$SUITE" "$ROOT" "$mirror" >&2 || die "debootstrap failed"
        touch "$ROOT/.pmixcpp-bootstrapped"
    fi

    # apt inside: the same archive, with deb-src (apt-get source slurm-wlm) and
    # the development branch's sources for compile checks against the newest Slurm
    cat > "$ROOT/etc/apt/sources.list" <<EOF
deb $mirror $SUITE main
deb-src $mirror $SUITE main
deb-src $mirror sid main
EOF
    # a mirror snapshot may carry a development-branch Release past its Valid-Until
    echo 'Acquire::Check-Valid-Until "false";' > "$ROOT/etc/apt/apt.conf.d/99pmixcpp"
    # no daemon of a package starts inside the root (the cluster runs its own)
    printf '#!/bin/sh\nexit 101\n' > "$ROOT/usr/sbin/policy-rc.d"
    chmod 755 "$ROOT/usr/sbin/policy-rc.d"
    touch "$STAMP"     # do_mount requires it; removed again on failure
    do_mount
    # shellcheck disable=SC2086
    if ! chroot "$ROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
            sh -c "apt-get update -qq && apt-get install -y -qq --no-install-recommends $(echo $PACKAGES)" >&2; then
        do_umount_force; die "installing the packages inside the root failed"
    fi
    chroot "$ROOT" apt-get clean >&2 || true
    echo "$SUITE $(date -u +%Y-%m-%dT%H:%M:%SZ) $mirror" > "$STAMP"
    do_umount
    say "ready: $(chroot "$ROOT" dpkg-query -W -f='slurm ${Version}' slurmd 2>/dev/null)," \
        "$(chroot "$ROOT" dpkg-query -W -f='openmpi ${Version}' openmpi-bin 2>/dev/null)," \
        "$(chroot "$ROOT" dpkg-query -W -f='pmix ${Version}' libpmix-dev 2>/dev/null)"
    echo "$ROOT"
}

do_umount_force() { [ -d "$ROOT" ] || return 0; touch "$STAMP"; do_umount; rm -f "$STAMP"; }

do_run() {
    local rc=0 cwd
    [ $# -gt 0 ] || die "run: no command"
    do_build --no-verify >/dev/null
    do_mount
    cwd=$(pwd)
    case $cwd in "$SRC_DIR"|"$SRC_DIR"/*|/tmp|/tmp/*) ;; *) cwd=$SRC_DIR ;; esac
    chroot "$ROOT" /usr/bin/env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        PMIXCPP_IN_CHROOT="$ROOT" /bin/sh -c 'cd "$0" && exec "$@"' "$cwd" "$@" || rc=$?
    do_umount
    return $rc
}

cmd=${1:-}
[ $# -gt 0 ] && shift
case $cmd in
    build) do_build ;;
    path) [ -f "$STAMP" ] || exit 1; echo "$ROOT" ;;
    mount) do_mount ;;
    umount) do_umount ;;
    run) do_run "$@" ;;
    shell) do_run /bin/bash ;;
    -h|--help|help) sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//' ;;
    *) sed -n '8,8p' "$0" | sed 's/^# //' >&2; exit 2 ;;
esac
