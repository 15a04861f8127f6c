#!/bin/bash
# The measured inputs of the cost model (docs/cost-model.md): mpi/pmixcpp alone, small shapes,
# many fences, the median over ranks and runs (a model wants the typical cost, not the slowest
# process of a loaded machine).
#
#   hops     Nx1 for N in BENCH_HOP_NODES (default "1 2 4 8 16 32", capped at the cluster's size):
#            the empty fence and the 1 KiB collecting fence with one task per node
#   bytes    2x1 with BENCH_BYTES per rank (default "1024 16384 262144"): the collecting fence
#   procs    1xP for P in BENCH_PROCS (default "1 8 32"): the fences and PMIx_Init per process
#
# usage: tests/bench/model.sh [hops] [bytes] [procs]      (default: all three)
#   BENCH_RUNS (default 3), BENCH_FENCES (fences per run, default 200),
#   PMIXCPP_PREFIX / PMIXCPP_PLUGIN_DIR as for bench.sh (root's UCX runs over TCP: no shared memory).
# Needs a running cluster (contrib/cluster.sh start 32) with SLURM_CONF set.
# Prints one line per shape and, last, the fitted costs:
#   MODEL rtt_us=.. hop_us=.. byte_ns=.. proc_fence_us=.. proc_init_us=..
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
parts=${*:-"hops bytes procs"}
runs=${BENCH_RUNS:-3}
fences=${BENCH_FENCES:-200}
prefix=${PMIXCPP_PREFIX:-$src/_install}
export PMIXCPP_PLUGIN_DIR=${PMIXCPP_PLUGIN_DIR:-$prefix/lib/slurm}
export BENCH_SAME_KEY=1  # every collecting fence carries the same BYTES per rank
[ -n "${SLURM_CONF:-}" ] || { echo "model: start a cluster first (contrib/cluster.sh start 32; eval \"\$(contrib/cluster.sh env)\")" >&2; exit 2; }
ompix=/usr/lib/x86_64-linux-gnu/pmix2
[ -f "$ompix/include/pmix.h" ] || ompix=/usr/lib/x86_64-linux-gnu/pmix
cluster_dir=${PMIXCPP_CLUSTER_DIR:-/tmp/pmixcpp-cluster}
bin=$cluster_dir/pmix_bench_model
cc -O2 -o "$bin" "$here/pmix_bench.c" -I"$ompix/include" -L"$ompix/lib" -Wl,-rpath,"$ompix/lib" -lpmix
nodes_up=$(sinfo -h -o '%D' -t idle,mix,alloc | awk '{ n += $1 } END { print n + 0 }')

median() { sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
field() { grep -o "$1=[0-9.e+-]*" | cut -d= -f2; }

# run NODES PPN BYTES: prints "fence_empty_us fence_data_us init_us", medians over ranks and runs
run() {
    local nodes=$1 ppn=$2 bytes=$3 out=() r
    local all; all=$(mktemp)
    for r in $(seq "$runs"); do
        timeout 600 srun --mpi=pmixcpp -N"$nodes" -n$((nodes * ppn)) --ntasks-per-node="$ppn" \
            "$bin" 100 "$fences" "$bytes" 2>/dev/null | grep '^BENCH' >> "$all" || true
    done
    for m in fence_empty_us fence_data_us init_us; do out+=("$(field "$m" < "$all" | median)"); done
    rm -f "$all"
    echo "${out[@]}"
}

declare -A E D
for part in $parts; do
    case $part in
    hops)
        for n in ${BENCH_HOP_NODES:-1 2 4 8 16 32}; do
            [ "$n" -le "$nodes_up" ] || { echo "model: $n nodes wanted, $nodes_up up: skipped" >&2; continue; }
            read -r e d i < <(run "$n" 1 1024)
            E[$n]=$e D[$n]=$d
            echo "SHAPE ${n}x1 bytes=1024 fence_empty_us=$e fence_data_us=$d"
        done ;;
    bytes)
        for b in ${BENCH_BYTES:-1024 16384 262144}; do
            read -r e d i < <(run 2 1 "$b")
            echo "SHAPE 2x1 bytes=$b fence_data_us=$d"
            eval "B_$b=$d"
        done ;;
    procs)
        for p in ${BENCH_PROCS:-1 8 32}; do
            read -r e d i < <(run 1 "$p" 1024)
            echo "SHAPE 1x$p bytes=1024 fence_empty_us=$e fence_data_us=$d init_us=$i"
            eval "P_$p=$e"; eval "PI_$p=$i"
        done ;;
    esac
done

# Fits (awk: floating point). rtt: a client's fence on one node; hop: the 2-node exchange is one
# hop each way at once, so fence(2x1) - fence(1x1); byte: the slope of the 2x1 collecting fence
# over the sizes (each node receives one contribution); per process: the slope of 1xP.
fit() { awk "BEGIN { printf \"%.3f\", $1 }"; }
rtt=${E[1]:-nan} hop=nan byte=nan pf=nan pi=nan
[ -n "${E[1]:-}" ] && [ -n "${E[2]:-}" ] && hop=$(fit "${E[2]} - ${E[1]}")
bs=(${BENCH_BYTES:-1024 16384 262144})
lo=${bs[0]} hi=${bs[${#bs[@]}-1]}
eval "blo=\${B_$lo:-} bhi=\${B_$hi:-}"
[ -n "$blo" ] && [ -n "$bhi" ] && [ "$hi" != "$lo" ] && byte=$(fit "($bhi - $blo) * 1000 / ($hi - $lo)")
ps=(${BENCH_PROCS:-1 8 32})
plo=${ps[0]} phi=${ps[${#ps[@]}-1]}
eval "elo=\${P_$plo:-} ehi=\${P_$phi:-} ilo=\${PI_$plo:-} ihi=\${PI_$phi:-}"
[ -n "$elo" ] && [ -n "$ehi" ] && [ "$phi" != "$plo" ] && pf=$(fit "($ehi - $elo) / ($phi - $plo)")
[ -n "$ilo" ] && [ -n "$ihi" ] && [ "$phi" != "$plo" ] && pi=$(fit "($ihi - $ilo) / ($phi - $plo)")
echo "MODEL rtt_us=$rtt hop_us=$hop byte_ns=$byte proc_fence_us=$pf proc_init_us=$pi"
