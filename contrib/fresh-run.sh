#!/bin/bash
# The README's test command as a new machine runs it: clone this checkout's HEAD into a new
# directory, remove everything earlier runs left outside a checkout, then run CI's command
# (CI=true .ci/run) in the clone and report its time. Run as root.
#
# usage: contrib/fresh-run.sh [--keep-downloads] [--dry-run] [DIR]
#   DIR               where to clone (default: a new /tmp/pmixcpp-fresh.XXXXXX)
#   --keep-downloads  keep the checked download cache (/var/cache/pmixcpp: source packages and
#                     the Debian 13 root, both checked against the archive before use);
#                     without it nothing at all is kept
#   --dry-run         only list what would be removed
#
# What is removed: the local clusters' state and anything of ours in /tmp and /var/tmp
# (/tmp/pmixcpp-*, /var/tmp/pmixcpp-*), the configured Slurm sources and unpacked suites that
# older versions kept in /var/cache/pmixcpp, and (unless --keep-downloads) the rest of
# /var/cache/pmixcpp. Debian packages stay installed: contrib/install-deps.sh installs them
# on a new machine, and is idempotent. Clusters still running are stopped first.
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
keep=0 dry=0 dir=""
for a in "$@"; do
    case $a in
        --keep-downloads) keep=1 ;;
        --dry-run) dry=1 ;;
        -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "fresh-run: unknown option $a" >&2; exit 2 ;;
        *) dir=$a ;;
    esac
done
[ "$(id -u)" = 0 ] || { echo "fresh-run: run as root" >&2; exit 2; }

say() { echo "fresh-run: $*"; }

# every local cluster of ours (contrib/cluster.sh state directories) is stopped by its own script
for st in /tmp/pmixcpp-cluster*; do
    [ -f "$st/etc/slurm.conf" ] || continue
    say "stopping the cluster of $st"
    [ $dry = 1 ] || PMIXCPP_CLUSTER_DIR=$st "$src/contrib/cluster.sh" stop >/dev/null 2>&1 || true
done
root=/var/cache/pmixcpp/debian13-root
if [ -d "$root" ] && [ $keep = 0 ]; then
    say "unmounting $root"
    [ $dry = 1 ] || "$src/contrib/debian13-root.sh" umount >/dev/null 2>&1 || true
    if awk -v r="$root/" 'index($2 "/", r) == 1 { f = 1 } END { exit !f }' /proc/mounts; then
        echo "fresh-run: something still runs inside $root (mounted); stop it first" >&2; exit 1
    fi
fi

victims=()
for p in /tmp/pmixcpp-* /var/tmp/pmixcpp-*; do [ -e "$p" ] && victims+=("$p"); done
if [ -d /var/cache/pmixcpp ]; then
    if [ $keep = 1 ]; then
        for p in /var/cache/pmixcpp/*; do
            case ${p##*/} in downloads|debian13-root) ;; *) victims+=("$p") ;; esac
        done
    else
        victims+=(/var/cache/pmixcpp)
    fi
fi
for p in "${victims[@]}"; do
    say "removing $p"
    [ $dry = 1 ] || rm -rf --one-file-system "$p"
done
[ $dry = 1 ] && exit 0

[ -n "$dir" ] || dir=$(mktemp -d /tmp/pmixcpp-fresh.XXXXXX)
[ -z "$(ls -A "$dir" 2>/dev/null)" ] || { echo "fresh-run: $dir is not empty" >&2; exit 2; }
git clone -q "$src" "$dir" || { echo "fresh-run: git clone failed" >&2; exit 1; }
chmod 755 "$dir"
say "clone of $(git -C "$dir" log -1 --format='%h %s' | cut -c1-70) in $dir"
t0=$(date +%s)
( cd "$dir" && CI=true bash .ci/run </dev/null )
rc=$?
t=$(( $(date +%s) - t0 ))
say "CI=true .ci/run exited $rc after $t s ($((t / 60)) min $((t % 60)) s) in $dir"
exit $rc
