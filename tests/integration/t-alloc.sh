# Allocation requests bridged to slurmctld, and queries. Needs 6 nodes (the job uses
# 2 and grows into idle ones) and SchedulerParameters=permit_job_expansion (cluster.sh sets it):
# a smaller cluster is restarted with 6 nodes and restored at the end.
#  - self-queries, and the allocation status / time remaining that come from srun's side
#  - an sbatch job grows by 2 nodes with EXTEND (scontrol confirms), its own node cannot be
#    released, a NEW allocation gets its own job id and is given back, a pending NEW is
#    cancelled, a request beyond the partition and bad attributes are refused
#  - an sbatch job of 4 nodes releases 2 with a lease, takes them back with REACQUIRE and releases
#    one again (the cluster runs slurmdbd, as sites do)
#  - EXTEND with PMIX_ALLOC_TIME: granted for root (an operator), refused for user nobody with
#    Slurm's reason, and slurmctld saw nobody's uid (the request ran with the user's credential)
#  - the PMIx allocation proposal's example (new allocation, completion event, polling), on one
#    node and with the event crossing nodes
#  - slurmctld stopped (SIGSTOP) during a request: PMIX_ERR_UNREACH, no hang
. "$(dirname "$0")/lib.sh"
prog="${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}/libexec/pmixcpp/tests/pmix_alloc"
[ -x "$prog" ] || { fail "$prog not installed"; t_done; exit; }
cluster="$PMIXCPP_SRCDIR/contrib/cluster.sh"

nodes_before=$(sinfo -h -o '%D' 2>/dev/null | head -1)
if [ "${nodes_before:-0}" -lt 6 ]; then
    "$cluster" restart 6 >/dev/null 2>&1 || { fail "cluster did not restart with 6 nodes"; t_done; exit; }
    restored() { "$cluster" restart "${nodes_before:-4}" >/dev/null 2>&1; }
    trap restored EXIT
fi
grep -q permit_job_expansion "$("$cluster" conf-dir)/slurm.conf" || fail "slurm.conf lacks permit_job_expansion"

work=$(mktemp -d /tmp/pmixcpp-alloc.XXXXXX)
chmod 755 "$work"
cat > "$work/job.sbatch" <<EOF
#!/bin/bash
#SBATCH --exclusive -t 20
echo "JOB \$SLURM_JOB_ID NODES \$SLURM_JOB_NODELIST"
srun --mpi=pmixcpp -N1 -n1 $prog "\$1"
echo "SRUN_RC \$?"
scontrol show job \$SLURM_JOB_ID | grep -E " NodeList=|NumNodes=|TimeLimit="
EOF
chmod 644 "$work/job.sbatch"

# run_job NODES MODE [user]: sbatch the job and wait for it; output in $out
run_job() {
    local n=$1 mode=$2 user=${3:-}
    local o="$work/$mode.out" jid
    if [ -n "$user" ]; then
        o="/tmp/pmixcpp-alloc-$mode.$$.out"
        jid=$(cd /tmp && runuser -u "$user" -- env SLURM_CONF="$SLURM_CONF" sbatch --parsable -N"$n" -o "$o" "$work/job.sbatch" "$mode")
    else
        jid=$(cd "$work" && sbatch --parsable -N"$n" -o "$o" "$work/job.sbatch" "$mode")
    fi
    for _ in $(seq 120); do squeue -h -j "$jid" 2>/dev/null | grep -q . || break; sleep 1; done
    out=$(cat "$o" 2>/dev/null)
    [ -n "$user" ] && rm -f "$o"
    echo "$out" | grep -E '^(FAIL|RESULT|NODELIST|ALLOC|REFUSED|TIMING|SECOND|JOB)' | sed 's/^/    /'
}

# 1. Queries
run_srun 60 --mpi=pmixcpp -N2 --ntasks-per-node=2 "$prog" queries
echo "$out" | grep -E '^(FAIL|RESULT)' | sed 's/^/    /'
expect_eq "queries: srun status" 0 "$rc"
expect_eq "queries: all 4 ranks passed" 4 "$(echo "$out" | grep -c '^RESULT-PASS rank')"

# 2. Grow
run_job 2 grow
expect_match "grow: every check passed" '^RESULT-PASS rank 0' "$out"
expect_match "grow: EXTEND added 2 nodes" '^NODELIST added n\[[0-9]+-[0-9]+\]|^NODELIST added n[0-9]+,n[0-9]+' "$out"
expect_match "grow: scontrol shows the job on 4 nodes" 'NumNodes=4 ' "$out"
expect_match "grow: the node list seen by the program is Slurm's" \
    "NodeList=$(echo "$out" | sed -n 's/^NODELIST extended //p' | sed 's/[][]/\\&/g')\$" "$out"
new_job=$(echo "$out" | sed -n 's/^ALLOC new [^ ]* \([0-9]*\) .*/\1/p')
[ -n "$new_job" ] && expect_match "grow: the NEW allocation was job $new_job, given back" \
    'JobState=(CANCELLED|COMPLETED)' "$(scontrol show job "$new_job" 2>&1)"
expect_match "grow: refusal with Slurm's reason" '^REFUSED .*slurmctld' "$out"

# 3. Shrink and reacquire. Which nodes the job holds is Slurm's choice (nodes of the jobs before may
# still be completing); the bridge gives back from the end of the list and never the batch host.
run_job 4 shrink
expect_match "shrink: every check passed" '^RESULT-PASS rank 0' "$out"
hosts() { scontrol show hostnames "$1" 2>/dev/null | tr '\n' ' '; }
first() { scontrol show hostnames "$1" 2>/dev/null | head -n "$2" | tr '\n' ' '; }
job_nodes=$(echo "$out" | sed -n 's/^JOB [0-9]* NODES //p')
kept=$(echo "$out" | sed -n 's/^NODELIST kept //p')
second=$(echo "$out" | sed -n 's/^SECOND_RELEASE PMIX_SUCCESS //p')
[ "$(hosts "$job_nodes" | wc -w)" = 4 ] || fail "shrink: the job's 4 nodes not known ('$job_nodes')"
expect_eq "shrink: 2 nodes released, the first 2 of $job_nodes kept" "$(first "$job_nodes" 2)" "$(hosts "$kept")"
expect_eq "shrink: reacquired, the job's 4 nodes again" "$(hosts "$job_nodes")" \
    "$(hosts "$(echo "$out" | sed -n 's/^NODELIST reacquired //p')")"
expect_eq "shrink: a second RELEASE of the resized job keeps its first 3 nodes" "$(first "$job_nodes" 3)" \
    "$(hosts "$second")"
expect_match "shrink: scontrol shows the 3 nodes left" 'NumNodes=3 ' "$out"
[ -n "$second" ] && expect_match "shrink: scontrol's node list is the program's" \
    "NodeList=$(printf '%s' "$second" | sed 's/[][]/\\&/g')\$" "$out"

# 4. Time: granted for root (operator), refused for an ordinary user with Slurm's reason
run_job 1 time-ok
expect_match "time: root's EXTEND granted" '^RESULT-PASS rank 0' "$out"
expect_match "time: scontrol shows the longer limit" 'TimeLimit=00:30:00' "$out"
if id nobody >/dev/null 2>&1; then
    run_job 1 time-denied nobody
    expect_match "time: nobody's EXTEND refused" '^RESULT-PASS rank 0' "$out"
    expect_match "time: Slurm's reason reached the program" '^REFUSED .*Access/permission denied' "$out"
    expect_match "slurmctld saw the user's uid, not root's" \
        "_slurm_rpc_update_job: JobId=[0-9]+ uid=$(id -u nobody): Access/permission denied" \
        "$(cat "$PMIXCPP_CLUSTER_DIR/log/slurmctld.log")"
else
    echo "  skip: no user 'nobody'"
fi

# 5. The proposal's example
run_srun 120 --mpi=pmixcpp -N2 --ntasks-per-node=2 "$prog" proposal
echo "$out" | grep -E '^(FAIL|RESULT)' | sed 's/^/    /'
expect_eq "proposal: srun status" 0 "$rc"
expect_eq "proposal: all 4 ranks passed" 4 "$(echo "$out" | grep -c '^RESULT-PASS rank')"
# the same with the event crossing nodes (ranks 0 and 1 on different nodes)
run_srun 120 --mpi=pmixcpp -N2 -n4 -m cyclic "$prog" proposal
echo "$out" | grep -E '^(FAIL|RESULT)' | sed 's/^/    /'
expect_eq "proposal across nodes: all 4 ranks passed" 4 "$(echo "$out" | grep -c '^RESULT-PASS rank')"

# 6. slurmctld stops answering (SIGSTOP) while a request is on its way: a clear PMIX_ERR_UNREACH
# with Slurm's text after Slurm's own timeouts, never a hang.
ctld=$(cat "$PMIXCPP_CLUSTER_DIR/pids/slurmctld.pid" 2>/dev/null)
if [ -n "$ctld" ] && kill -0 "$ctld" 2>/dev/null; then
    o="$work/down.out"
    jid=$(cd "$work" && PMIX_ALLOC_WAIT=4 PMIX_ALLOC_EXPECT_UNREACH=1 sbatch --parsable -N1 -o "$o" "$work/job.sbatch" time-denied)
    # stop slurmctld once the step runs (the program waits 4 s before its request)
    for _ in $(seq 200); do squeue -h -s -j "$jid" 2>/dev/null | grep -q "$jid\.0 " && break; sleep 0.1; done
    sleep 0.5
    kill -STOP "$ctld"
    for _ in $(seq 120); do grep -q '^RESULT' "$o" 2>/dev/null && break; sleep 1; done
    kill -CONT "$ctld"
    out=$(cat "$o")
    echo "$out" | grep -E '^(FAIL|RESULT|UNREACH)' | sed 's/^/    /'
    expect_match "slurmctld stopped: the caller gets PMIX_ERR_UNREACH" '^RESULT-PASS rank 0' "$out"
    for _ in $(seq 60); do squeue -h -j "$jid" 2>/dev/null | grep -q . || break; sleep 1; done
fi

expect_eq "no allocation or expansion job left behind" "" "$(squeue -h -o '%j %T' | grep -E '^pmixcpp-(alloc|expand|kept)')"
rm -rf "$work"
t_done
