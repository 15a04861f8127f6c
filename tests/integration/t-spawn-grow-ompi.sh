# A malleable MPI job with Debian's unmodified OpenMPI: an sbatch script of 2 nodes runs
# tests/programs/mpi_grow.c (-N2 -n2) whose rank 0 grows the job by 2 nodes with
# PMIx_Allocation_request(EXTEND); the parents then MPI_Comm_spawn 2 children onto exactly the
# nodes obtained (MPI_Info "host"), exchange messages with them over the intercommunicator, join
# an MPI_Allreduce over the merged communicator and disconnect; everyone exits 0. The children
# report their Slurm node name, which must be the new nodes; scontrol shows the grown job.
# Prints GROW-SPAWN-MS (the EXTEND call until the first message from a child).
# Requires: make install; contrib/cluster.sh start 4 (4 idle nodes, permit_job_expansion); mpicc.
. "$(dirname "$0")/lib.sh"
: "${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}"
idle=$(sinfo -h -t idle -o '%D' 2>/dev/null | head -1)
[ "${idle:-0}" -ge 4 ] || { fail "needs 4 idle nodes, have ${idle:-0}"; t_done; exit; }
mpi_build mpi_grow || { t_done; exit; }

for btl in self,tcp default; do
    cat > "$work/job.sbatch" <<EOS
#!/bin/bash
#SBATCH --exclusive -t 10
echo "JOB \$SLURM_JOB_ID NODES \$SLURM_JOB_NODELIST"
$( [ "$btl" = default ] && echo "unset OMPI_MCA_btl" || echo "export OMPI_MCA_btl=$btl" )
srun --mpi=pmixcpp -N2 -n2 $work/mpi_grow 2
echo "SRUN_RC \$?"
scontrol show job \$SLURM_JOB_ID | grep -E " NodeList=| NumNodes="
EOS
    rm -f "$work/out"
    t0=$SECONDS
    jid=$(cd "$work" && sbatch --parsable -N2 -o "$work/out" "$work/job.sbatch")
    for _ in $(seq 150); do squeue -h -j "$jid" 2>/dev/null | grep -q . || break; sleep 1; done
    out=$(cat "$work/out" 2>/dev/null)
    expect_match "btl $btl: the job started on 2 nodes" '^JOB [0-9]+ NODES n' "$out"
    expect_match "btl $btl: EXTEND by 2 nodes" '^PASS rank 0: EXTEND by 2 node\(s\) -> PMIX_SUCCESS' "$out"
    expect_match "btl $btl: MPI_Comm_spawn onto the nodes obtained" '^PASS rank 0: MPI_Comm_spawn of 2 onto .* -> 0$' "$out"
    expect_match "btl $btl: parents and children in one allreduce" '^parent: allreduce over parents\+children = 4, tokens right$' "$out"
    expect_match "btl $btl: MPI grow + spawn complete" '^MPI-GROW-OK 2$' "$out"
    expect_eq "btl $btl: both children got their token" 2 "$(echo "$out" | grep -c '^child [01] of 2 on n[0-9]*: token right, allreduce 4$')"
    expect_match "btl $btl: srun status 0" '^SRUN_RC 0$' "$out"
    expect_no_match "btl $btl: no failure or error" '(^FAIL|srun: error|Job step aborted|ORTE_ERROR|PMIX ERROR|MPI_ABORT)' "$out"
    added=$(echo "$out" | sed -n 's/^GROWN-ONTO //p' | head -1)
    if [ -n "$added" ]; then
        new_nodes=$(scontrol show hostnames "$added" | sort | tr '\n' ' ')
        child_nodes=$(echo "$out" | sed -n 's/^CHILD [0-9]* ON //p' | sort | tr '\n' ' ')
        expect_eq "btl $btl: the children ran on the new nodes" "$new_nodes" "$child_nodes"
        parent_nodes=$(echo "$out" | sed -n 's/^JOB [0-9]* NODES //p')
        for n in $(scontrol show hostnames "$added"); do
            scontrol show hostnames "$parent_nodes" | grep -qx "$n" && fail "btl $btl: new node $n was already in the job"
        done
    else
        fail "btl $btl: no GROWN-ONTO line"
    fi
    expect_match "btl $btl: scontrol: the job holds 4 nodes" 'NumNodes=4 ' "$out"
    [ $((SECONDS - t0)) -lt 140 ] && pass "btl $btl: done in $((SECONDS - t0)) s" || fail "btl $btl: took $((SECONDS - t0)) s"
    echo "$out" | grep -E '^(GROW-SPAWN-MS|GROWN|CHILD|JOB)' | sed 's/^/    /'
    echo "$out" | grep -q MPI-GROW-OK || echo "$out" | tail -25 | sed 's/^/    /'
done
t_done
