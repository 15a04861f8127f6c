#!/bin/bash
# Between the steps of one job (tests/programs/pmix_xstep.c): the first, uncached direct-modex Get
# of another step's proc and an event of range SESSION to another step, next to the same within
# one step across nodes; node transport TCP. BENCH_RUNS runs (default 5) of BENCH_ROUNDS rounds
# (default 15); prints the median of the per-run medians. The anchor (mpi/pmix_v4) cannot take
# part: Slurm's plugin cannot connect two steps at all (no PMIx_Connect across steps, no
# PMIx_Spawn), so there is nothing to measure side by side.
# usage: tests/bench/xstep.sh   (PMIXCPP_PREFIX, a running cluster of >= 4 nodes, SLURM_CONF set)
set -uo pipefail
prog=${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}/libexec/pmixcpp/tests/pmix_xstep
runs=${BENCH_RUNS:-5}
rounds=${BENCH_ROUNDS:-15}
median() { sort -g | awk '{a[NR]=$1} END {if (NR == 0) print "nan"; else if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
declare -A per_run
for i in $(seq "$runs"); do
    out=$(SLURM_PMIXCPP_TRANSPORT=tcp timeout -k 5 180 salloc -N4 -n8 --ntasks-per-node=2 bash -c \
        "srun --overlap --mpi=pmixcpp -w n1,n2 -N2 -n2 $prog A bench$$.$i $rounds & \
         srun --overlap --mpi=pmixcpp -w n3,n4 -N2 -n4 --ntasks-per-node=2 $prog B bench$$.$i $rounds; wait" 2>&1)
    for what in GET EVENT; do
        for where in same cross; do
            m=$(echo "$out" | awk -v k="XS-$what-MS" -v w="$where" '$1 == k && $2 == w {print $3}' | median)
            per_run[$what.$where]+="$m "
        done
    done
done
for what in GET EVENT; do
    for where in same cross; do
        v=${per_run[$what.$where]}
        printf '%-6s %-6s median %s ms (per run: %s)\n' "$what" "$where" "$(echo $v | tr ' ' '\n' | median)" "$v"
    done
done
