#!/bin/bash
# The orders in which mpi/pmix_v4 loses data here (TESTBED.md), N times each, under both
# plugins: (1) a direct-modex Get of a new key from a peer on another node after a collecting
# fence; (2) the same with the tree fence forced (SLURM_PMIX_FENCE=tree / SLURM_PMIXCPP_FENCE=tree).
# usage: tests/bench/reliability.sh [runs=50] [nodes=4] [tasks per node=4]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
runs=${1:-50}; nodes=${2:-4}; ppn=${3:-4}
ompix=/usr/lib/x86_64-linux-gnu/pmix2
[ -f "$ompix/include/pmix.h" ] || { echo "reliability: libpmix-dev (OpenPMIx) is needed for the anchor" >&2; exit 77; }
if [ -z "${SLURM_CONF:-}" ]; then
    "$src/contrib/cluster.sh" start >/dev/null
    eval "$("$src/contrib/cluster.sh" env)"
fi
bin="$PMIXCPP_CLUSTER_DIR/pmix_newkey"
cc -O2 -o "$bin" "$here/pmix_newkey.c" -I"$ompix/include" -L"$ompix/lib" -Wl,-rpath,"$ompix/lib" -lpmix || exit 1

printf '%-44s %10s %10s\n' "case ($runs runs, ${nodes}x$ppn, all ranks right)" pmix_v4 pmixcpp
declare -A good
for fence in default tree; do
    for mpi in pmix_v4 pmixcpp; do
        good[$fence.$mpi.COLLECT]=0; good[$fence.$mpi.NEWKEY]=0
        for r in $(seq "$runs"); do
            env=()
            [ "$fence" = tree ] && env=(SLURM_PMIX_FENCE=tree SLURM_PMIXCPP_FENCE=tree)
            out=$(env "${env[@]}" timeout 120 srun --mpi=$mpi -N"$nodes" -n$((nodes * ppn)) --ntasks-per-node="$ppn" "$bin" 2>/dev/null)
            for what in COLLECT NEWKEY; do
                [ "$(echo "$out" | grep -c "^$what-OK")" -eq $((nodes * ppn)) ] && good[$fence.$mpi.$what]=$((good[$fence.$mpi.$what] + 1))
            done
        done
    done
    printf '%-44s %10s %10s\n' "collecting fence, all data ($fence fence)" "${good[$fence.pmix_v4.COLLECT]}/$runs" "${good[$fence.pmixcpp.COLLECT]}/$runs"
    printf '%-44s %10s %10s\n' "then a new key by direct modex ($fence fence)" "${good[$fence.pmix_v4.NEWKEY]}/$runs" "${good[$fence.pmixcpp.NEWKEY]}/$runs"
done
