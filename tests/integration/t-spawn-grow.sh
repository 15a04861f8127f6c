# A malleable job: an sbatch script of 2 nodes whose rank 0 grows the job by 2 nodes with
# PMIx_Allocation_request(EXTEND), then PMIx_Spawn's one child on each new node (PMIX_HOST = the
# nodes obtained, required), connects with the children (tests/programs/pmix_connect.c "grow")
# and checks from the connect data that they run on the new nodes; scontrol confirms the job
# holds 4 nodes. Needs 4 idle nodes and SchedulerParameters=permit_job_expansion (cluster.sh
# sets it).
# Requires: make install; contrib/cluster.sh start 4 (or more).
. "$(dirname "$0")/lib.sh"
prog="${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}/libexec/pmixcpp/tests/pmix_connect"
[ -x "$prog" ] || { fail "$prog not installed"; t_done; exit; }
idle=$(sinfo -h -t idle -o '%D' 2>/dev/null | head -1)
[ "${idle:-0}" -ge 4 ] || { fail "needs 4 idle nodes, have ${idle:-0}"; t_done; exit; }

work=$(mktemp -d /tmp/pmixcpp-grow.XXXXXX)
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
cat > "$work/job.sbatch" <<EOS
#!/bin/bash
#SBATCH --exclusive -t 10
echo "JOB \$SLURM_JOB_ID NODES \$SLURM_JOB_NODELIST"
srun --mpi=pmixcpp -N2 -n2 $prog grow 2
echo "SRUN_RC \$?"
scontrol show job \$SLURM_JOB_ID | grep -E " NodeList="
EOS
t0=$SECONDS
jid=$(cd "$work" && sbatch --parsable -N2 -o "$work/out" "$work/job.sbatch")
for _ in $(seq 120); do squeue -h -j "$jid" 2>/dev/null | grep -q . || break; sleep 1; done
out=$(cat "$work/out" 2>/dev/null)
expect_match "the job started on 2 nodes" '^JOB [0-9]+ NODES n' "$out"
expect_match "EXTEND by 2 nodes" 'PASS rank 0: EXTEND by 2 node\(s\) -> PMIX_SUCCESS' "$out"
expect_match "spawn onto the nodes obtained" 'PASS rank 0: PMIx_Spawn of 2 onto .* -> PMIX_SUCCESS' "$out"
expect_no_match "no failed check" '^FAIL ' "$out"
expect_eq "both parents and both children passed" 4 "$(echo "$out" | grep -c '^RESULT-PASS rank')"
expect_match "srun status" '^SRUN_RC 0$' "$out"
added=$(echo "$out" | sed -n 's/^GROWN-ONTO //p' | head -1)
if [ -n "$added" ]; then
    new_nodes=$(scontrol show hostnames "$added" | sort | tr '\n' ' ')
    child_nodes=$(echo "$out" | sed -n 's/^CHILD [0-9]* ON //p' | sort | tr '\n' ' ')
    expect_eq "the children run on the new nodes" "$new_nodes" "$child_nodes"
else
    fail "no GROWN-ONTO line"
fi
expect_match "scontrol: the job holds 4 nodes" 'NodeList=n\[1-4\]' "$out"
[ $((SECONDS - t0)) -lt 100 ] && pass "done in $((SECONDS - t0)) s" || fail "took $((SECONDS - t0)) s"
echo "$out" | grep -E '^(FAIL|GROWN|CHILD|JOB)' | sed 's/^/    /'
t_done
