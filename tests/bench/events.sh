#!/bin/bash
# Event round trip (rank 0 notifies rank 1, whose handler notifies rank 0 back; PMIX_RANGE_CUSTOM,
# so every event goes through the servers) on one node and across two nodes over each node
# transport, BENCH_RUNS runs each (default 5), medians of the per-run medians. The anchor
# (mpi/pmix_v4) cannot take part: Slurm's plugin treats any event a client notifies as an error
# and kills the step (tried here once, its outcome printed).
# usage: tests/bench/events.sh   (PMIXCPP_PREFIX, a running cluster with SLURM_CONF set)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
prefix=${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}
prog=$prefix/libexec/pmixcpp/tests/pmix_events
runs=${BENCH_RUNS:-5}
iters=${BENCH_ITERS:-2000}
median() { sort -g | awk '{a[NR]=$1} END {if (NR == 0) print "nan"; else if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
rtt() { grep -o 'round trip .* median [0-9.]*' | awk '{print $NF}'; }

declare -A cases=(
    ["1 node"]="-N1 -n2 -w n1"
    ["2 nodes, tcp"]="-N2 --ntasks-per-node=1 -w n[1-2] --export=ALL,SLURM_PMIXCPP_TRANSPORT=tcp"
    ["2 nodes, ucx (over TCP)"]="-N2 --ntasks-per-node=1 -w n[1-2] --export=ALL,SLURM_PMIXCPP_TRANSPORT=ucx"
)
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
for name in "1 node" "2 nodes, tcp" "2 nodes, ucx (over TCP)"; do
    vals=()
    for _ in $(seq "$runs"); do
        # shellcheck disable=SC2086
        v=$(timeout 120 srun --mpi=pmixcpp ${cases[$name]} "$prog" latency "$iters" 2>&1 | rtt)
        [ -n "$v" ] && vals+=("$v")
    done
    printf '%-28s event round trip median %s us (%d runs: %s)\n' "$name" \
        "$(printf '%s\n' "${vals[@]}" | median)" "${#vals[@]}" "${vals[*]}"
done
ompix=/usr/lib/x86_64-linux-gnu/pmix2
if [ -f "$ompix/include/pmix.h" ] && [ -n "${PMIXCPP_CLUSTER_DIR:-}" ]; then
    cc -O2 -o "$PMIXCPP_CLUSTER_DIR/pmix_events_ompix" "$here/../programs/pmix_events.c" -I"$here/../programs" \
        -I"$ompix/include" -L"$ompix/lib" -Wl,-rpath,"$ompix/lib" -lpmix -lpthread
    out=$(timeout 60 srun --mpi=pmix_v4 -N1 -n2 -w n1 "$PMIXCPP_CLUSTER_DIR/pmix_events_ompix" latency 100 2>&1)
    echo "mpi/pmix_v4, 1 node: $(echo "$out" | rtt | head -1) $(echo "$out" | grep -m1 -o 'Error handler invoked.*')"
fi
