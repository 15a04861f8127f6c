#!/bin/bash
# Side by side: Slurm's own PMIx plugin (the anchor, OpenPMIx: mpi/pmix_v4 on
# Debian 12, mpi/pmix_v5 on Debian 13) and mpi/pmixcpp, same cluster, same
# binary, same run. Prints medians over runs of the maximum across ranks, and
# the ratio pmixcpp/anchor (lower is better for pmixcpp).
#
# usage: tests/bench/bench.sh [layouts] e.g. "1x8 1x64" (nodes x tasks per node)
#   BENCH_RUNS (default 5), BENCH_ARGS ("GET_ITERS FENCE_ITERS", default "20000 10"),
#   BENCH_ANCHOR (default: pmix_v5 if srun offers it, else pmix_v4),
#   PMIXCPP_PREFIX, PMIXCPP_PLUGIN_DIR as for the tests
#        tests/bench/bench.sh --routes [layouts]: the three client routes side by side
#   (pmix_v4, pmixcpp with its own libpmix, pmixcpp serving OpenPMIx's libpmix): routes.sh
# Needs a running cluster (contrib/cluster.sh start) with SLURM_CONF set, or
# starts one itself.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ "${1:-}" = --routes ]; then shift; exec "$here/routes.sh" "$@"; fi
src=$(cd "$here/../.." && pwd)
layouts=${*:-"1x8 1x64"}
runs=${BENCH_RUNS:-5}
prefix=${PMIXCPP_PREFIX:-$src/_install}
export PMIXCPP_PLUGIN_DIR=${PMIXCPP_PLUGIN_DIR:-$prefix/lib/slurm}
# Root's UCX never uses shared memory (SECURITY.md), so between the virtual nodes of one host it
# runs over TCP, as the anchor does.
work=$(mktemp -d /tmp/pmixcpp-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT

# One binary, built against OpenPMIx's pmix.h: under pmixcpp it runs on our
# libpmix.so.2 (the plugin puts it first in LD_LIBRARY_PATH).
ompix=/usr/lib/x86_64-linux-gnu/pmix2
[ -f "$ompix/include/pmix.h" ] || { echo "bench: libpmix-dev (OpenPMIx) is needed for the anchor" >&2; exit 77; }
cc -O2 -o "$work/pmix_bench" "$here/pmix_bench.c" -I"$ompix/include" -L"$ompix/lib" -Wl,-rpath,"$ompix/lib" -lpmix

if [ -z "${SLURM_CONF:-}" ]; then
    "$src/contrib/cluster.sh" start >/dev/null
    eval "$("$src/contrib/cluster.sh" env)"
fi
# the binary must be visible to the tasks
cluster_dir=${PMIXCPP_CLUSTER_DIR:-/tmp/pmixcpp-cluster}
cp "$work/pmix_bench" "$cluster_dir/pmix_bench" 2>/dev/null || cp "$work/pmix_bench" /tmp/pmix_bench.$$
bin="$cluster_dir/pmix_bench"; [ -x "$bin" ] || bin=/tmp/pmix_bench.$$

anchor=${BENCH_ANCHOR:-}
if [ -z "$anchor" ]; then
    if srun --mpi=list 2>&1 | grep -q pmix_v5; then anchor=pmix_v5; else anchor=pmix_v4; fi
fi

median() { sort -g | awk '{a[NR]=$1} END {if (NR == 0) print "nan"; else if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

metrics="launch_ms wall_ms init_us get_ns fence_data_us fence_empty_us barrier_us empty_fence_left_early peer_get_us peer_get_mean_us peer_get_cpu_us barrier_get_mean_us dmodex_get_us fini_us stepd_hwm_kb"
for layout in $layouts; do
    nodes=${layout%x*}; ppn=${layout#*x}; n=$((nodes * ppn))
    # launch overhead: srun wall of Init/Fence/Finalize minus `--mpi=none /bin/true` of the same
    # shape; the three are run in turn, round after round, so that a change of the host's load
    # weighs on all three alike
    wall() {  # mpi, program...: wall ms of one srun
        local mpi=$1; shift
        local t0=$(date +%s%N)
        timeout 300 srun --mpi=$mpi -N"$nodes" -n"$n" --ntasks-per-node="$ppn" "$@" >/dev/null 2>&1
        echo $(( ($(date +%s%N) - t0) / 1000000 ))
    }
    : > "$work/walls.$layout"
    for r in $(seq "$runs"); do
        echo "none $(wall none /bin/true)" >> "$work/walls.$layout"
        for mpi in $anchor pmixcpp; do echo "$mpi $(wall $mpi "$bin" ift)" >> "$work/walls.$layout"; done
    done
    floor=$(awk '$1 == "none" { print $2 }' "$work/walls.$layout" | median)
    for mpi in $anchor pmixcpp; do
        launch=$(awk -v m=$mpi '$1 == m { print $2 }' "$work/walls.$layout" | median)
        echo "launch_ms=$(awk -v a="$launch" -v b="$floor" 'BEGIN { print a - b }')" > "$work/$mpi.$layout.launch"
    done
    for mpi in $anchor pmixcpp; do
        : > "$work/$mpi.$layout"
        for r in $(seq "$runs"); do
            t0=$(date +%s%N)
            out=$(OMPI_MCA_btl=self,tcp timeout 300 srun --mpi=$mpi -N"$nodes" -n"$n" --ntasks-per-node="$ppn" "$bin" ${BENCH_ARGS:-} 2>&1) || {
                echo "bench: $mpi $layout run $r failed:"; echo "$out" | tail -5; continue; }
            t1=$(date +%s%N)
            echo "$out" | grep '^BENCH' | awk -v wall="$(( (t1 - t0) / 1000000 ))" '
                { for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] + 0;
                      if (!(kv[1] in m) || v[kv[1]] > m[kv[1]]) m[kv[1]] = v[kv[1]] } }
                END { printf "wall_ms=%s", wall; for (k in m) if (k != "rank" && k != "size") printf " %s=%s", k, m[k]; print "" }' >> "$work/$mpi.$layout"
        done
    done
    for mpi in $anchor pmixcpp; do cat "$work/$mpi.$layout.launch" >> "$work/$mpi.$layout"; done
    echo
    echo "== ${nodes} node(s) x ${ppn} tasks: median of $runs runs, max across ranks (launch: srun floor ${floor} ms subtracted)"
    printf '%-22s %14s %14s %8s\n' metric $anchor pmixcpp ratio
    for m in $metrics; do
        a=$(grep -o "$m=[0-9.e+-]*" "$work/$anchor.$layout" | cut -d= -f2 | median)
        b=$(grep -o "$m=[0-9.e+-]*" "$work/pmixcpp.$layout" | cut -d= -f2 | median)
        ratio=$(awk -v a="$a" -v b="$b" 'BEGIN { if (a > 0 && b == b) printf "%.2f", b / a; else print "-" }')
        [ "$m" = empty_fence_left_early ] && ratio=-
        printf '%-22s %14s %14s %8s\n' "$m" "$a" "$b" "$ratio"
    done
    for mpi in $anchor pmixcpp; do
        early=$(grep -o "empty_fence_left_early=[0-9]*" "$work/$mpi.$layout" | cut -d= -f2 | sort -n | tail -1)
        [ "${early:-0}" = 1 ] || continue
        echo "note: under $mpi an empty PMIx_Fence returned before rank 0 (50 ms late) entered it:" \
            "it is not a barrier there, so fence_empty_us is no barrier's cost; barrier_us (a collecting fence" \
            "with nothing to collect) is"
    done
done
