#!/bin/sh
# Install every Debian (bookworm) package pmixcpp needs: build tools, libraries,
# a real Slurm 22.05 with munge, the anchor (Slurm's mpi/pmix_v4 + OpenPMIx),
# OpenMPI and benchmark tools.
#
# usage: contrib/install-deps.sh [--stop-services] [--check]
#   --check          only report missing packages (exit 1 if any), install nothing
#   --stop-services  stop and disable the system munge/slurmd/slurmctld services
#                    even if nothing was installed by this run
#
# Idempotent and quick when everything is installed (one dpkg-query call).
# Installing munge/slurmd/slurmctld may auto-start the system daemons; they are
# stopped and disabled afterwards so they never conflict with the private
# cluster of contrib/cluster.sh (which runs its own munged and daemons).
set -eu

PACKAGES="
g++ make autoconf automake libtool pkg-config dpkg-dev clang libclang-rt-14-dev
libevent-dev libhwloc-dev hwloc libucx-dev ucx-utils libgtest-dev libslurm-dev
libsodium-dev libmunge-dev
slurmctld slurmd slurm-client slurm-wlm-basic-plugins munge
slurmdbd mariadb-server mariadb-client
libpmix-dev openmpi-bin libopenmpi-dev python3-mpi4py libpmi0 libpmi2-0
hyperfine procps debootstrap charliecloud gdb
debhelper lintian fakeroot groff-base
"
SERVICE_PACKAGES="munge slurmd slurmctld slurmdbd mariadb-server"
SERVICE_NAMES="munge slurmd slurmctld slurmdbd mariadb"

say() { echo "install-deps: $*" >&2; }
die() { say "error: $*"; exit 1; }

check_only=0
force_stop=0
for arg in "$@"; do
    case $arg in
        --check) check_only=1 ;;
        --stop-services) force_stop=1 ;;
        -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
        *) die "unknown argument '$arg' (see --help)" ;;
    esac
done

# Print the packages of $PACKAGES that are not fully installed.
missing_packages() {
    # dpkg-query exits non-zero when some names are unknown; its stdout still
    # lists the known ones.
    # shellcheck disable=SC2086
    status=$(dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' $PACKAGES 2>/dev/null || true)
    for p in $PACKAGES; do
        if ! printf '%s\n' "$status" | grep -q "^$p ii"; then
            echo "$p"
        fi
    done
}

# Stop a daemon started from a Debian package by its pid file; the pid is only
# trusted if the process really runs the expected binary.
kill_by_pidfile() { # pidfile binary
    [ -r "$1" ] || return 0
    pid=$(head -n1 "$1" 2>/dev/null | tr -cd '0-9')
    [ -n "$pid" ] || return 0
    exe=$(readlink "/proc/$pid/exe" 2>/dev/null || true)
    want=$(readlink -f "$2")     # /usr/sbin/slurmd -> alternatives -> slurmd-wlm
    case $exe in
        "$want"|"$want (deleted)") ;;
        *) return 0 ;;
    esac
    say "stopping system $2 (pid $pid from $1)"
    kill -TERM "$pid" 2>/dev/null || true
    i=0
    while [ -d "/proc/$pid" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
    if [ -d "/proc/$pid" ]; then kill -KILL "$pid" 2>/dev/null || true; fi
}

stop_system_services() {
    if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
        for s in $SERVICE_NAMES; do
            systemctl disable --now "$s" >/dev/null 2>&1 || true
        done
    else
        # no running systemd: the package scripts use the SysV init scripts
        for s in $SERVICE_NAMES; do
            if [ -x "/etc/init.d/$s" ] && command -v update-rc.d >/dev/null 2>&1; then
                update-rc.d "$s" disable >/dev/null 2>&1 || true
            fi
        done
    fi
    # Whatever started them, make sure they are gone (pid files of the packages).
    kill_by_pidfile /run/munge/munged.pid /usr/sbin/munged
    kill_by_pidfile /run/slurmd.pid /usr/sbin/slurmd
    kill_by_pidfile /var/run/slurmd.pid /usr/sbin/slurmd
    kill_by_pidfile /run/slurmctld.pid /usr/sbin/slurmctld
    kill_by_pidfile /var/run/slurmctld.pid /usr/sbin/slurmctld
    kill_by_pidfile /run/slurmdbd.pid /usr/sbin/slurmdbd
    kill_by_pidfile /run/mysqld/mysqld.pid /usr/sbin/mariadbd
}

# Inside the Debian 13 root (contrib/debian13-root.sh) the packages come from
# that script, which installs its own list when it builds the root.
if [ -n "${PMIXCPP_IN_CHROOT:-}" ]; then
    [ $check_only = 1 ] && say "inside $PMIXCPP_IN_CHROOT: packages are installed by contrib/debian13-root.sh"
    exit 0
fi

missing=$(missing_packages | tr '\n' ' ')
missing=${missing% }

if [ -z "$missing" ]; then
    [ $check_only = 1 ] || [ $force_stop = 0 ] || stop_system_services
    [ $check_only = 1 ] && say "all packages installed"
    exit 0
fi

if [ $check_only = 1 ]; then
    say "missing: $missing"
    exit 1
fi

[ "$(id -u)" = 0 ] || die "missing packages ($missing); run as root to install them"

export DEBIAN_FRONTEND=noninteractive
apt_install() {
    apt-get install -y --no-install-recommends \
        -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "$@"
}

# apt-get update only if some package has no install candidate (lists missing
# or stale); otherwise install from the lists we have, and fall back to one
# update if the download fails (e.g. a superseded version).
need_update=0
for p in $missing; do
    cand=$(apt-cache policy "$p" 2>/dev/null | sed -n 's/^ *Candidate: *//p')
    if [ -z "$cand" ] || [ "$cand" = "(none)" ]; then need_update=1; break; fi
done

say "installing: $missing"
updated=0
if [ $need_update = 1 ]; then
    apt-get update || die "apt-get update failed"
    updated=1
fi
# shellcheck disable=SC2086
if ! apt_install $missing; then
    [ $updated = 0 ] || die "apt-get install failed"
    say "install failed; retrying after apt-get update"
    apt-get update || die "apt-get update failed"
    # shellcheck disable=SC2086
    apt_install $missing || die "apt-get install failed"
fi

still=$(missing_packages | tr '\n' ' ')
[ -z "${still% }" ] || die "still missing after install: $still"

# Did this run install a package that ships a daemon?
installed_service=0
for p in $missing; do
    case " $SERVICE_PACKAGES " in *" $p "*) installed_service=1 ;; esac
done
if [ $installed_service = 1 ] || [ $force_stop = 1 ]; then
    stop_system_services
fi
say "done"
