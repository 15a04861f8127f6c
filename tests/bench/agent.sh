#!/bin/bash
# Round trips through srun's agent as the application sees them (pmix_agent_rtt.c): PMIx_Publish
# then PMIx_Lookup of a fresh key (the job's store beside srun), and PMIx_Spawn of one process.
# BENCH_RUNS runs (default 5) of one step -N2 -n2, each BENCH_ROUNDS publish/lookup rounds
# (default 30) and BENCH_SPAWNS spawns (default 5); prints the median and range of all rounds.
# Two builds side by side in one run: AGENT_BENCH_PLUGINS="label=/path/mpi_pmixcpp.so ..." and
# AGENT_BENCH_LINK=<PluginDir of the cluster>/mpi_pmixcpp.so (a symlink the script points at each
# build in turn, run by run; srun and slurmstepd load the plugin anew for every step).
# usage: tests/bench/agent.sh   (PMIXCPP_PREFIX, a running cluster of >= 2 nodes, SLURM_CONF set)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
prefix=${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}
runs=${BENCH_RUNS:-5}
rounds=${BENCH_ROUNDS:-30}
spawns=${BENCH_SPAWNS:-5}
work=$(mktemp -d /tmp/pmixcpp-agent-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
cc -O2 -o "$work/pmix_agent_rtt" "$here/pmix_agent_rtt.c" -I"$prefix/include" -L"$prefix/lib" \
    -Wl,-rpath,"$prefix/lib" -lpmix || exit 1
chmod 755 "$work"
stats() {  # median [min..max] of the numbers on stdin
    sort -g | awk '{a[NR]=$1} END {if (NR == 0) {print "none"; exit}
        m = (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2
        printf "median %.2f ms [%.2f .. %.2f] (n=%d)\n", m, a[1], a[NR], NR}'
}
plugins=${AGENT_BENCH_PLUGINS:-current=}
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
declare -A pub spawn
for i in $(seq "$runs"); do
    for p in $plugins; do
        label=${p%%=*}
        so=${p#*=}
        [ -n "$so" ] && ln -sfn "$so" "${AGENT_BENCH_LINK:?set AGENT_BENCH_LINK}"
        out=$(timeout -k 5 180 salloc -N2 -n8 srun --mpi=pmixcpp -N2 -n2 "$work/pmix_agent_rtt" "$rounds" "$spawns" 2>&1)
        echo "$out" | grep '^FAIL' | head -3 | sed "s/^/  $label run $i: /"
        pub[$label]+="$(echo "$out" | awk '$1 == "RTT-PUBLOOK-MS" {print $2}') "
        spawn[$label]+="$(echo "$out" | awk '$1 == "RTT-SPAWN-MS" {print $2}') "
    done
done
for p in $plugins; do
    label=${p%%=*}
    printf '%-10s publish+lookup %s\n' "$label" "$(echo ${pub[$label]} | tr ' ' '\n' | grep . | stats)"
    printf '%-10s spawn of 1     %s\n' "$label" "$(echo ${spawn[$label]} | tr ' ' '\n' | grep . | stats)"
done
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
