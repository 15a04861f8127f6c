#!/bin/bash
# How much of this host's CPU a step's processes get while it runs fences: the simulator's
# host preset gives the step all of its shared CPUs (cpu_share 1); on a host with other work
# the step gets less. Runs `pmix_bench` (tests/bench/pmix_bench.c, as built by model.sh) at
# NODES x 1 and samples, over a window in the middle of the run, the CPU time of the step's
# slurmstepd and benchmark processes (/proc/<pid>/stat) and the whole machine's (/proc/stat).
#
# usage: tests/sim/cpushare.sh NODES [FENCES]     (a running cluster, SLURM_CONF set; run
#        tests/bench/model.sh once first: it builds $PMIXCPP_CLUSTER_DIR/pmix_bench_model)
# prints: step_cpus <CPUs the step used> machine_busy_cpus <all users> of <CPUs>
set -euo pipefail
n=${1:?nodes}
fences=${2:-20000}
bin=${PMIXCPP_CLUSTER_DIR:-/tmp/pmixcpp-cluster}/pmix_bench_model
[ -x "$bin" ] || { echo "cpushare: $bin missing (run tests/bench/model.sh once)" >&2; exit 2; }
hz=$(getconf CLK_TCK)
step_ticks() {
    local t=0 f line rest
    for f in /proc/[0-9]*/stat; do
        { read -r line < "$f"; } 2>/dev/null || continue
        case $line in
        *"(slurmstepd)"* | *"(pmix_bench_mode)"*)
            rest=${line##*) }
            set -- $rest
            t=$((t + ${12} + ${13})) ;;
        esac
    done
    echo "$t"
}
machine() { local _c u ni s id io irq sirq st; read -r _c u ni s id io irq sirq st _ < /proc/stat; echo "$((u + ni + s + irq + sirq + st)) $((u + ni + s + id + io + irq + sirq + st))"; }
SLURM_PMIXCPP_TRANSPORT=${SLURM_PMIXCPP_TRANSPORT:-tcp} srun --mpi=pmixcpp -N"$n" -n"$n" --ntasks-per-node=1 \
    "$bin" 100 "$fences" 0 > /dev/null 2>&1 &
job=$!
sleep 2
a1=$(step_ticks); read -r b1 t1 < <(machine); s1=$(date +%s.%N)
sleep 3
a2=$(step_ticks); read -r b2 t2 < <(machine); s2=$(date +%s.%N)
if ! kill -0 "$job" 2>/dev/null || [ "$a2" -le "$a1" ]; then
    echo "cpushare: the step ended inside the window; more FENCES" >&2
    exit 1
fi
wait "$job" || true
awk -v a1="$a1" -v a2="$a2" -v s1="$s1" -v s2="$s2" -v b1="$b1" -v b2="$b2" -v t1="$t1" -v t2="$t2" -v hz="$hz" \
    'BEGIN { w = s2 - s1; printf "step_cpus %.2f machine_busy_cpus %.2f of %.2f\n", (a2 - a1) / hz / w, (b2 - b1) / hz / w, (t2 - t1) / hz / w }'
