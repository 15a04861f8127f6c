#!/bin/bash
# A grow of a running MPI job beside the by-hand alternative, on one cluster (docs/malleability.md,
# "Measured"). Needs OpenMPI 5 (the sessions program: the Debian 13 stack), a running cluster of 8
# idle nodes with permit_job_expansion (contrib/cluster.sh start 8; SLURM_CONF set) and
# PMIXCPP_PREFIX. BENCH_RUNS rounds (default 5), each in turn:
#   grow    an sbatch job of 2 nodes runs contrib/examples/malleable.c with the steps 2,4:
#           2 -> 4 -> 8 nodes and back to 2 (MALLEABLE-MS of each grow: EXTEND, launch, wire-up,
#           communicator, first allreduce; MALLEABLE-SHRINK-MS 8 -> 2)
#   grow1   the same with one step, 2 -> 4 -> 2 (the shrink 4 -> 2)
#   by hand contrib/examples/restart.c: a job of N nodes (2, then 4) writes its state (1 MiB) to
#           a checkpoint file and, as its last command, submits the job of 2N nodes
#           (--dependency=afterany on itself), which reads it and does the same allreduce: the
#           decision to that allreduce, with the checkpoint, the old job's end, the queue and the
#           launch (RESTART-MS)
# Prints every run's line, then medians and ranges in ms.
# usage: tests/bench/malleable-bench.sh
# On the Debian 13 stack (after contrib/test-debian13.sh has built _install13), from the checkout:
#   contrib/debian13-root.sh run bash -c 'export PMIXCPP_PREFIX=$PWD/_install13
#     PMIXCPP_PLUGIN_DIR=$PWD/_install13/lib/slurm; contrib/cluster.sh restart 8 >/dev/null &&
#     eval "$(contrib/cluster.sh env)" && tests/bench/malleable-bench.sh; contrib/cluster.sh stop'
set -uo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
: "${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}"
runs=${BENCH_RUNS:-5}
major=$(ompi_info --version 2>/dev/null | sed -n 's/^Open MPI v\([0-9]*\)\..*/\1/p')
[ "${major:-0}" -ge 5 ] || { echo "malleable-bench: needs OpenMPI 5 (have ${major:-none})"; exit 2; }
idle=$(sinfo -h -t idle -o '%D' 2>/dev/null | head -1)
[ "${idle:-0}" -ge 8 ] || { echo "malleable-bench: needs 8 idle nodes (have ${idle:-0})"; exit 2; }
work=$(mktemp -d /tmp/pmixcpp-mbench.XXXXXX)
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
# shellcheck disable=SC2046
mpicc -O1 -o "$work/malleable" "$src/contrib/examples/malleable.c" $(pkg-config --cflags --libs pmix 2>/dev/null || echo -lpmix) &&
    mpicc -O1 -o "$work/restart" "$src/contrib/examples/restart.c" || { echo "malleable-bench: mpicc failed"; exit 1; }
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,tcp OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
wait_job() { for _ in $(seq 120); do squeue -h -j "$1" 2>/dev/null | grep -q . || return 0; sleep 0.5; done; return 1; }
wait_idle() { for _ in $(seq 60); do [ "$(sinfo -h -t idle -o '%D' | head -1)" = 8 ] && return 0; sleep 0.5; done; }

grow_job() {  # $1: the steps ("2,4" or "2"); output in $work/out.grow
    cat > "$work/grow.sbatch" <<EOS
#!/bin/bash
#SBATCH --exclusive -t 10
sleep 1
srun --mpi=pmixcpp -N2 -n2 $work/malleable $1 1.1
EOS
    rm -f "$work/out.grow"
    local j
    j=$(cd "$work" && sbatch --parsable -N2 -o "$work/out.grow" "$work/grow.sbatch") && wait_job "$j"
}

byhand_job() {  # $1 nodes of the first job; output of the second in $work/out.restart
    local n=$1 m=$(($1 * 2))
    cat > "$work/ckpt.sbatch" <<EOS
#!/bin/bash
#SBATCH --exclusive -t 10
srun --mpi=pmixcpp -N$n -n$n $work/restart write $work/ckpt
sbatch --parsable --exclusive -t 10 -N$m --dependency=afterany:\$SLURM_JOB_ID -o $work/out.restart \
    --wrap "srun --mpi=pmixcpp -N$m -n$m $work/restart read $work/ckpt" > $work/second
EOS
    rm -f "$work/out.restart" "$work/out.ckpt" "$work/second" "$work/ckpt"
    local j
    j=$(cd "$work" && sbatch --parsable -N"$n" -o "$work/out.ckpt" "$work/ckpt.sbatch") && wait_job "$j"
    for _ in $(seq 20); do [ -s "$work/second" ] && break; sleep 0.25; done
    wait_job "$(cat "$work/second" 2>/dev/null)"
}

: > "$work/results"
for i in $(seq "$runs"); do
    wait_idle
    grow_job 2,4
    grep -E '^MALLEABLE-(SHRINK-)?MS|MALLEABLE-FAIL' "$work/out.grow" | sed "s/^/run $i grow /" | tee -a "$work/results"
    grep -q '^MALLEABLE-SHRINK-OK 2' "$work/out.grow" || { echo "run $i: the grow job failed:"; tail -20 "$work/out.grow"; }
    wait_idle
    grow_job 2
    grep -E '^MALLEABLE-(SHRINK-)?MS|MALLEABLE-FAIL' "$work/out.grow" | sed "s/^/run $i grow1 /" | tee -a "$work/results"
    for n in 2 4; do
        wait_idle
        byhand_job $n
        grep -E '^CKPT-WRITTEN' "$work/out.ckpt" 2>/dev/null | sed "s/^/run $i byhand $n /" | tee -a "$work/results"
        grep -E '^RESTART-(MS|FAIL)' "$work/out.restart" 2>/dev/null | sed "s/^/run $i byhand $n /" | tee -a "$work/results"
        grep -q RESTART-OK "$work/out.restart" 2>/dev/null || echo "run $i: the by-hand restart $n -> $((n * 2)) failed"
    done
done

# medians: field "name value" pairs after the marker
stat() {  # $1 grep pattern of the lines, $2 the field's name
    grep -E "$1" "$work/results" | sed -n "s/.* $2 \([0-9.]*\).*/\1/p" | sort -g |
        awk '{a[NR]=$1} END {if (NR == 0) {print "-"; exit} m = NR % 2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2;
             printf "%.0f (%.0f-%.0f, %d runs)\n", m, a[1], a[NR], NR}'
}
echo "== grow (request to a usable communicator), median (range) ms, load $(cut -d' ' -f1-3 /proc/loadavg)"
for step in "1 2->4" "2 4->8"; do
    set -- $step
    for f in extend launch wireup comm allreduce total; do
        printf '  %s %-9s %s\n' "$2" "$f" "$(stat "grow MALLEABLE-MS $1 $2 " $f)"
    done
done
echo "== shrink (request to nodes back in Slurm), median (range) ms"
for what in "grow 8->2" "grow1 4->2"; do
    set -- $what
    for f in disconnect delete-event release nodes-back comm total; do
        printf '  %s %-12s %s\n' "$2" "$f" "$(stat " $1 MALLEABLE-SHRINK-MS $2 " $f)"
    done
done
echo "== by hand: checkpoint, new job of twice the nodes, restart (decision to the first allreduce), median (range) ms"
for n in 2 4; do
    printf '  %d->%d %-16s %s\n' $n $((n * 2)) checkpoint "$(stat "byhand $n CKPT-WRITTEN" write)"
    for f in decision-to-main init read allreduce total; do
        printf '  %d->%d %-16s %s\n' $n $((n * 2)) $f "$(stat "byhand $n RESTART-MS" $f)"
    done
done
