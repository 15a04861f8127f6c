# Allocation requests on a cluster with accounting (slurmdbd + MariaDB, enforced associations,
# limits and QOS: contrib/cluster.sh's default). Needs 6 nodes; a smaller cluster is restarted
# with 6 and restored at the end.
#  - grow, shrink, reacquire, grow again in one job (sbatch, nodes shared, and a plain srun):
#    scontrol and sacct agree with what the program was told; EXTEND never lands on a held node
#  - NEW belongs to the step: PMIX_JOBID is the Slurm job, it carries a time limit (the job's
#    remaining time, or PMIX_ALLOC_TIME), it is listed, and it ends when the step ends
#  - NEW with pmixcpp.alloc.keep outlives the step and ends with the job (EpilogSlurmctld)
#  - srun killed with SIGKILL: its allocation job is ended by the job's next step, or by the
#    job's end
#  - refusals with Slurm's reason: EXTEND beyond the partition, a partition the user's account
#    may not use (AllowAccounts), a QOS limit from the database (MaxTRESPerUser=node=2)
. "$(dirname "$0")/lib.sh"
prog="${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}/libexec/pmixcpp/tests/pmix_alloc"
[ -x "$prog" ] || { fail "$prog not installed"; t_done; exit; }
cluster="$PMIXCPP_SRCDIR/contrib/cluster.sh"
conf_dir=$("$cluster" conf-dir)
if ! grep -q '^AccountingStorageType=accounting_storage/slurmdbd' "$conf_dir/slurm.conf"; then
    echo "  SKIP: the cluster runs without slurmdbd (PMIXCPP_ACCOUNTING=none)"
    t_done; exit
fi

nodes_before=$(sinfo -h -p debug -o '%D' 2>/dev/null | head -1)
if [ "${nodes_before:-0}" -lt 6 ]; then
    "$cluster" restart 6 >/dev/null 2>&1 || { fail "cluster did not restart with 6 nodes"; t_done; exit; }
    restored() { "$cluster" restart "${nodes_before:-4}" >/dev/null 2>&1; }
    trap restored EXIT
fi

work=$(mktemp -d /tmp/pmixcpp-alloc-acct.XXXXXX)
chmod 755 "$work"

wait_job_gone() { # jobid seconds
    for _ in $(seq "$2"); do squeue -h -j "$1" 2>/dev/null | grep -q . || return 0; sleep 1; done
    return 1
}
job_field() { # jobid Field
    scontrol show job "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -1
}
# sbatch_wait FILE [sbatch args...] -- runs as $as_user if set; output in $out, job id in $jid
sbatch_wait() {
    local script=$1; shift
    local o="$work/$(basename "$script").$RANDOM.out"
    if [ -n "${as_user:-}" ]; then
        touch "$o"; chown "$as_user" "$o"
        jid=$(cd /tmp && runuser -u "$as_user" -- env SLURM_CONF="$SLURM_CONF" sbatch --parsable -o "$o" "$@" "$script")
    else
        jid=$(cd "$work" && sbatch --parsable -o "$o" "$@" "$script")
    fi
    wait_job_gone "$jid" 150 || fail "job $jid still queued after 150 s"
    out=$(cat "$o" 2>/dev/null)
    echo "$out" | grep -E '^(FAIL|RESULT|NODELIST|ALLOC|REFUSED|CYCLE|STATE|LISTED)' | sed 's/^/    /'
}

# 1. grow, shrink, reacquire, grow again in one sbatch job of 2 shared nodes
cat > "$work/cycle.sbatch" <<EOF
#!/bin/bash
#SBATCH -N2 -t 20
srun --mpi=pmixcpp -N1 -n1 $prog cycle
echo "SRUN_RC \$?"
scontrol show job \$SLURM_JOB_ID | grep -E " NodeList=|NumNodes="
EOF
sbatch_wait "$work/cycle.sbatch"
expect_match "cycle (sbatch): every check passed" '^RESULT-PASS rank 0' "$out"
final=$(echo "$out" | sed -n 's/^CYCLE_NODES //p')
expect_match "cycle (sbatch): scontrol shows 4 nodes" 'NumNodes=4 ' "$out"
[ -n "$final" ] && expect_match "cycle (sbatch): scontrol's node list is the program's" \
    "NodeList=$(printf '%s' "$final" | sed 's/[][]/\\&/g')\$" "$out"
sleep 2   # slurmctld hands the job's end to slurmdbd asynchronously
acct=$(sacct -n -X -P -j "$jid" -o JobID,State,NNodes,NodeList 2>&1)
echo "$acct" | sed 's/^/    sacct: /'
expect_match "cycle (sbatch): sacct shows the job completed on the 4 nodes" \
    "^$jid\|COMPLETED\|4\|$(printf '%s' "$final" | sed 's/[][]/\\&/g')\$" "$acct"

# the same from a plain srun of 2 nodes (its own allocation, nodes shared)
run_srun 150 --mpi=pmixcpp -N2 --ntasks-per-node=1 -t 20 "$prog" cycle
echo "$out" | grep -E '^(FAIL|RESULT|CYCLE)' | sed 's/^/    /'
expect_eq "cycle (srun): srun status" 0 "$rc"
expect_eq "cycle (srun): both ranks passed" 2 "$(echo "$out" | grep -c '^RESULT-PASS rank')"

# 2. NEW belongs to the step
run_srun 60 --mpi=pmixcpp -N1 -n1 -t 20 "$prog" new-own
echo "$out" | grep -E '^(FAIL|RESULT|ALLOC|LISTED)' | sed 's/^/    /'
expect_match "new (srun): every check passed" '^RESULT-PASS rank 0' "$out"
read -r _ _ new_id new_job _ new_secs <<<"$(echo "$out" | grep '^ALLOC new ' | head -1)"
if [ -n "${new_job:-}" ]; then
    expect_eq "new: PMIX_JOBID names a job called after the request" "pmixcpp-alloc.$new_id" "$(job_field "$new_job" JobName)"
    # ended when the step ended; Slurm may still be cleaning its node up (COMPLETING) for a moment
    for _ in $(seq 20); do [ "$(job_field "$new_job" JobState)" = COMPLETING ] || break; sleep 0.5; done
    expect_match "new: ended with the step" '^(CANCELLED|COMPLETED)' "$(job_field "$new_job" JobState)"
    tl=$(job_field "$new_job" TimeLimit)
    expect_match "new: a time limit within the job's 20 min ($tl)" '^00:(1[0-9]|20|0[0-9]):00$' "$tl"
    expect_eq "new: the time limit told is Slurm's" "$tl" "$(printf '00:%02d:00' $((new_secs / 60)))"
else
    fail "new: no ALLOC line"
fi
# with PMIX_ALLOC_TIME
PMIX_ALLOC_SECS=120 run_srun 60 --mpi=pmixcpp -N1 -n1 -t 20 "$prog" new-own
read -r _ _ _ new_job _ _ <<<"$(echo "$out" | grep '^ALLOC new ' | head -1)"
[ -n "${new_job:-}" ] && expect_eq "new with PMIX_ALLOC_TIME=120: TimeLimit" "00:02:00" "$(job_field "$new_job" TimeLimit)"

# 3. NEW kept beyond the step, ended with the job
cat > "$work/keep.sbatch" <<EOF
#!/bin/bash
#SBATCH -N1 -t 20
srun --mpi=pmixcpp -N1 -n1 $prog new-keep | tee $work/keep.step
j=\$(sed -n 's/^ALLOC new [^ ]* \([0-9]*\) .*/\1/p' $work/keep.step)
echo "STATE after-step \$(squeue -h -j "\$j" -o %T)"
EOF
sbatch_wait "$work/keep.sbatch"
expect_match "keep: every check passed" '^RESULT-PASS rank 0' "$out"
expect_match "keep: still running after the step" '^STATE after-step RUNNING' "$out"
kept=$(echo "$out" | sed -n 's/^ALLOC new [^ ]* \([0-9]*\) .*/\1/p')
if [ -n "$kept" ]; then
    wait_job_gone "$kept" 20
    expect_match "keep: ended with the job (EpilogSlurmctld)" '^CANCELLED' "$(job_field "$kept" JobState)"
fi

# 4. srun killed with SIGKILL
cat > "$work/kill.sbatch" <<EOF
#!/bin/bash
#SBATCH -N1 -t 20
srun --mpi=pmixcpp -N1 -n1 $prog new-hold > $work/kill.step 2>&1 &
pid=\$!
for i in \$(seq 300); do grep -q HOLDING $work/kill.step && break; sleep 0.1; done
j=\$(sed -n 's/^ALLOC new [^ ]* \([0-9]*\) .*/\1/p' $work/kill.step)
kill -KILL \$pid
scancel -s KILL \$SLURM_JOB_ID.0
for i in \$(seq 100); do squeue -h -s -j \$SLURM_JOB_ID | grep -q "\$SLURM_JOB_ID\.0 " || break; sleep 0.2; done
echo "STATE after-kill \$(squeue -h -j "\$j" -o %T)"
srun -N1 -n1 --mpi=pmixcpp true
for i in \$(seq 50); do squeue -h -j "\$j" 2>/dev/null | grep -q . || break; sleep 0.2; done
echo "STATE after-next-step \$(scontrol show job "\$j" | grep -o 'JobState=[A-Z]*')"
EOF
sbatch_wait "$work/kill.sbatch"
expect_match "sigkill: the allocation was held when srun died" '^STATE after-kill RUNNING' "$out"
expect_match "sigkill: the job's next step ended it" '^STATE after-next-step JobState=CANCELLED' "$out"
# a plain srun killed with SIGKILL: the job's end (scancel) ends its allocation
o="$work/kill2.out"
srun --mpi=pmixcpp -N1 -n1 -t 20 "$prog" new-hold > "$o" 2>&1 &
pid=$!
for _ in $(seq 300); do grep -q HOLDING "$o" && break; sleep 0.1; done
j=$(sed -n 's/^ALLOC new [^ ]* \([0-9]*\) .*/\1/p' "$o")
owner=$(squeue -h -o '%A %j' | awk '$2 != "pmixcpp-alloc.'"${j:-x}"'" && $2 == "pmix_alloc" {print $1}' | head -1)
kill -KILL $pid; wait $pid 2>/dev/null
if [ -n "$j" ] && [ -n "$owner" ]; then
    # srun's death alone must not end the allocation. Its own job may end first on a loaded
    # machine (its step's tasks gone with srun): then the job's end rightly ends the allocation.
    # The allocation is read first: if its owner still runs after that, it ran when it was read
    # (read the other way round, the owner may end in between and take the allocation along).
    alloc_state=$(squeue -h -j "$j" -o %T)
    owner_state=$(squeue -h -j "$owner" -o %T)
    if [ "$owner_state" = RUNNING ]; then
        expect_eq "sigkill (srun): the allocation outlives srun" RUNNING "$alloc_state"
    else
        echo "    the job of srun already ${owner_state:-ended}: the allocation is ${alloc_state:-gone}"
    fi
    scancel "$owner"
    wait_job_gone "$j" 20
    expect_match "sigkill (srun): the job's end ended it" '^CANCELLED' "$(job_field "$j" JobState)"
else
    fail "sigkill (srun): no allocation ($j) or owner job ($owner): $(cat "$o")"
fi
wait_job_gone "$owner" 20

# 5. Refusals with Slurm's reason
cat > "$work/refuse.sbatch" <<EOF
#!/bin/bash
#SBATCH -t 10
srun --mpi=pmixcpp -N1 -n1 $prog refuse
EOF
chmod 644 "$work"/*.sbatch
PMIX_ALLOC_DIR=extend PMIX_ALLOC_NODES=5 sbatch_wait "$work/refuse.sbatch" -N2 --export=ALL
expect_match "refuse: EXTEND beyond the partition" '^REFUSED PMIX_ERR_OUT_OF_RESOURCE .*(node configuration is not available|Node count)' "$out"
if id nobody >/dev/null 2>&1; then
    as_user=nobody PMIX_ALLOC_DIR=new PMIX_ALLOC_QUEUE=ops sbatch_wait "$work/refuse.sbatch" -N1 --export=ALL
    # Slurm 22.05 says why in the pending reason; 23.02 and newer only say PartitionConfig, and the
    # bridge names the partition's AllowAccounts
    expect_match "refuse: a partition the account may not use" \
        "^REFUSED PMIX_ERR_NO_PERMISSIONS .*account( [^ ]+)? not permitted to use this partition \\(ops allows ops" "$out"
    as_user=nobody PMIX_ALLOC_DIR=extend sbatch_wait "$work/refuse.sbatch" -N2 --qos=small --export=ALL
    expect_match "refuse: the QOS's MaxTRESPerUser node limit" "^REFUSED .*QOSMaxNodePerUserLimit" "$out"
else
    echo "  skip: no user 'nobody'"
fi

expect_eq "no allocation or expansion job left behind" "" "$(squeue -h -o '%j %T' | grep -E '^pmixcpp-(alloc|expand|kept)')"
rm -rf "$work"
t_done
