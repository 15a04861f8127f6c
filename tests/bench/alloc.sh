#!/bin/bash
# Time of each allocation directive through PMIx_Allocation_request (pmixcpp), side by side with
# the same change made by hand with Slurm's own commands in the same job (what a user or a
# launcher does without PMIx: the anchor, mpi/pmix_v4, has no allocation support and answers
# PMIX_ERR_NOT_SUPPORTED). BENCH_RUNS jobs (default 3), medians in ms.
#   EXTEND 1 node   pmixcpp: PMIX_ALLOC_EXTEND          by hand: salloc --no-shell
#                                                       --dependency=expand:<job> -x <held nodes>,
#                                                       scontrol update NumNodes=0 / NumNodes=ALL
#   RELEASE 1 node  pmixcpp: PMIX_ALLOC_RELEASE         by hand: scontrol update NodeList=<kept>
#   REACQUIRE       pmixcpp: PMIX_ALLOC_REAQUIRE        by hand: as EXTEND, with -w <the node>
#   NEW 1 node      pmixcpp: PMIX_ALLOC_NEW             by hand: salloc --no-shell -N1 (then scancel)
#   refused         pmixcpp: EXTEND beyond the partition  by hand: sbatch of that size (Slurm queues
#                                                       it, PartitionNodeLimit), squeue, scancel
# usage: tests/bench/alloc.sh   (PMIXCPP_PREFIX, a running cluster of 6+ idle nodes, SLURM_CONF set)
set -uo pipefail
prefix=${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}
prog=$prefix/libexec/pmixcpp/tests/pmix_alloc
runs=${BENCH_RUNS:-3}
work=$(mktemp -d /tmp/pmixcpp-bench-alloc.XXXXXX)
chmod 755 "$work"
trap 'rm -rf "$work"; [ -z "${jid:-}" ] || scancel "$jid" 2>/dev/null' EXIT
median() { sort -g | awk '{a[NR]=$1} END {if (NR == 0) print "nan"; else if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

cat > "$work/job.sbatch" <<EOF
#!/bin/bash
#SBATCH -N2 -t 20
ms() { date +%s%3N; }
J=\$SLURM_JOB_ID
srun --mpi=pmixcpp -N1 -n1 $prog cycle
PMIX_ALLOC_SECS=120 srun --mpi=pmixcpp -N1 -n1 $prog new-own
PMIX_ALLOC_DIR=extend PMIX_ALLOC_NODES=9 srun --mpi=pmixcpp -N1 -n1 $prog refuse
# by hand, the same job (it holds 4 nodes now: give 2 back first so that there is room to grow)
held() { squeue -h -j \$J -o %N; }
keep=\$(scontrol show hostnames "\$(held)" | head -2 | paste -sd,)
scontrol update jobid=\$J NodeList=\$keep >/dev/null
t0=\$(ms)
h=\$(salloc --no-shell -N1 -t 20 --dependency=expand:\$J -x "\$(held)" 2>&1 | sed -n 's/.*Granted job allocation \([0-9]*\).*/\1/p')
scontrol update jobid=\$h NumNodes=0 >/dev/null; scancel \$h
scontrol update jobid=\$J NumNodes=ALL >/dev/null
echo "BYHAND extend \$((\$(ms) - t0))"
last=\$(scontrol show hostnames "\$(held)" | tail -1)
keep=\$(scontrol show hostnames "\$(held)" | grep -vx "\$last" | paste -sd,)
t0=\$(ms); scontrol update jobid=\$J NodeList=\$keep >/dev/null; echo "BYHAND release \$((\$(ms) - t0))"
t0=\$(ms)
h=\$(salloc --no-shell -N1 -t 20 --dependency=expand:\$J -w "\$last" 2>&1 | sed -n 's/.*Granted job allocation \([0-9]*\).*/\1/p')
scontrol update jobid=\$h NumNodes=0 >/dev/null; scancel \$h
scontrol update jobid=\$J NumNodes=ALL >/dev/null
echo "BYHAND reacquire \$((\$(ms) - t0))"
t0=\$(ms)
n=\$(salloc --no-shell -N1 -t 2 2>&1 | sed -n 's/.*Granted job allocation \([0-9]*\).*/\1/p')
echo "BYHAND new \$((\$(ms) - t0))"
scancel \$n
# Slurm queues a request beyond the partition (PartitionNodeLimit) instead of refusing it: by hand,
# submit, read the reason, withdraw
t0=\$(ms); r=\$(sbatch --parsable -N9 -t 20 --dependency=expand:\$J --wrap true 2>/dev/null)
[ -n "\$r" ] && squeue -h -j \$r -o %r >/dev/null && scancel \$r; echo "BYHAND refuse \$((\$(ms) - t0))"
EOF

echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$runs"); do
    jid=$(cd "$work" && sbatch --parsable -o "$work/run$r.out" "$work/job.sbatch")
    for _ in $(seq 300); do squeue -h -j "$jid" 2>/dev/null | grep -q . || break; sleep 1; done
    grep -q 'RESULT-FAIL' "$work/run$r.out" && { echo "run $r failed:"; grep -E 'FAIL' "$work/run$r.out"; }
done
cat "$work"/run*.out > "$work/all"
row() { # label pmixcpp-tag byhand-tag
    local a b
    a=$(grep "^TIMING $2 " "$work/all" | awk '{print $3}' | median)
    b=$(grep "^BYHAND $3 " "$work/all" | awk '{print $3}' | median)
    printf '| %-16s | %10s | %10s |\n' "$1" "$a" "$b"
}
echo "| directive        | pmixcpp ms | by hand ms |"
echo "|------------------|-----------:|-----------:|"
row "EXTEND 1 node" grow1 extend
row "EXTEND again" grow2 extend
row "RELEASE 1 node" shrink1 release
row "REACQUIRE" reacquire1 reacquire
row "NEW 1 node" new new
row "refused" refuse refuse
echo "($runs runs; pmixcpp: time the program waited in PMIx_Allocation_request)"
