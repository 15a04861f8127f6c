# A malleable MPI-4 sessions program with an unmodified OpenMPI 5 (contrib/examples/malleable.c,
# docs/malleability.md): an sbatch job of 2 nodes runs it at -N2 -n2; rank 0 grows the job by 2
# nodes (PMIx_Allocation_request EXTEND), the old processes MPI_Comm_spawn 2 new ones onto exactly
# those nodes; the server defines the spawn's two process sets (the new processes; old + new) and
# tells the old processes (PMIX_PROCESS_SET_DEFINE); old and new processes see both sets through
# MPI_Session_get_num_psets / get_nth_pset with the right member counts, and make ONE
# communicator of old + new with MPI_Comm_create_from_group (an allreduce over it). squeue (from
# inside the job, every 0.2 s) shows one job of 2, then 4, then 2 nodes.
# Then the shrink: the new processes leave, the server deletes both sets when their step has ended
# (PMIX_PROCESS_SET_DELETE to the old processes), rank 0 gives exactly the grown nodes back
# (PMIX_ALLOC_RELEASE), the sets are no longer listed, and the old processes go on with a new
# communicator of mpi://WORLD; sacct has the job's records at 2 and 4 nodes (RESIZING) and its
# end on 2 (COMPLETED), and the new processes' step on the grown nodes.
# Prints MALLEABLE-MS (EXTEND, spawn, communicator, total) and MALLEABLE-SHRINK-MS (until the
# delete event, RELEASE, communicator, total). Skipped (passes with a note) where
# OpenMPI is older than 5. Requires: 4 idle nodes, permit_job_expansion (contrib/cluster.sh).
. "$(dirname "$0")/lib.sh"
: "${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}"
major=$(ompi_info --version 2>/dev/null | sed -n 's/^Open MPI v\([0-9]*\)\..*/\1/p')
if [ -z "$major" ] || [ "$major" -lt 5 ]; then
    echo "  SKIP: OpenMPI ${major:-?} installed; the sessions program needs OpenMPI 5 (the Debian 13 stack)"
    t_done; exit
fi
idle=$(sinfo -h -t idle -o '%D' 2>/dev/null | head -1)
[ "${idle:-0}" -ge 4 ] || { fail "needs 4 idle nodes, have ${idle:-0}"; t_done; exit; }
work=$(mktemp -d /tmp/pmixcpp-mall.XXXXXX)
trap 'rm -rf "$work"' EXIT
# shellcheck disable=SC2046
if mpicc -O1 -o "$work/malleable" "$PMIXCPP_SRCDIR/contrib/examples/malleable.c" \
        $(pkg-config --cflags --libs pmix 2>/dev/null || echo -lpmix) 2>"$work/cc.err"; then
    pass "mpicc contrib/examples/malleable.c"
else
    fail "mpicc malleable.c: $(cat "$work/cc.err")"; t_done; exit
fi
chmod 755 "$work" "$work/malleable"
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,tcp OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo

cat > "$work/job.sbatch" <<EOS
#!/bin/bash
#SBATCH --exclusive -t 10
echo "JOB \$SLURM_JOB_ID NODES \$SLURM_JOB_NODELIST"
# the job's node count as squeue shows it, every 0.2 s, while the program runs
( while :; do squeue -h -j \$SLURM_JOB_ID -o '%D'; sleep 0.2; done > $work/counts 2>/dev/null ) &
watch=\$!
# slurmdbd keys a job's records by id and submit time, which a resize sets to the second it
# happens: a grow in the job's first second would replace the record of its first size, and a
# shrink in the grow's second that of the grown size (the program works 1.2 s at 4 nodes)
sleep 1
srun --mpi=pmixcpp -N2 -n2 $work/malleable 2 1.2
echo "SRUN_RC \$?"
sleep 1
kill \$watch
echo "SQUEUE-COUNTS \$(uniq $work/counts | tr '\\n' ' ')"
squeue -h -o 'SQUEUE %i %j %D %T'
scontrol show job \$SLURM_JOB_ID | grep -E " NodeList=| NumNodes="
EOS
t0=$SECONDS
start=$(date +%Y-%m-%dT%H:%M:%S)
jid=$(cd "$work" && sbatch --parsable -N2 -o "$work/out" "$work/job.sbatch")
for _ in $(seq 150); do squeue -h -j "$jid" 2>/dev/null | grep -q . || break; sleep 1; done
out=$(cat "$work/out" 2>/dev/null)
echo "$out" | grep -E '^(GROWN|SHRUNK|PSET|UNION|MALLEABLE|SQUEUE|JOB)' | sed 's/^/    /'

ns='slurm\.[0-9]+\.[0-9]+'
expect_match "the job started on 2 nodes" '^JOB [0-9]+ NODES n' "$out"
expect_match "EXTEND by 2 nodes" '^GROWN 2 node\(s\): ' "$out"
expect_eq "both old processes got PMIX_PROCESS_SET_DEFINE of the union (4 members)" 2 \
    "$(echo "$out" | grep -cE "^PSET-EVENT old [01]: pmixcpp://union/$ns 4 members$")"
expect_eq "both old processes got PMIX_PROCESS_SET_DEFINE of the new processes (2 members)" 2 \
    "$(echo "$out" | grep -cE "^PSET-EVENT old [01]: pmixcpp://spawned/$ns 2 members$")"
expect_eq "both new processes got PMIX_PROCESS_SET_DEFINE of their union and their own set" 4 \
    "$(echo "$out" | grep -cE "^PSET-EVENT new [01]: pmixcpp://(union/$ns 4|spawned/$ns 2) members$")"
expect_eq "old processes: MPI_Session_get_nth_pset lists both sets, members as defined" 2 \
    "$(echo "$out" | grep -cE "^PSETS old [01]: [0-9]+ sets, union pmixcpp://union/$ns 4 members, spawned pmixcpp://spawned/$ns 2 members$")"
expect_eq "new processes: the same two sets" 2 \
    "$(echo "$out" | grep -cE "^PSETS new [01]: [0-9]+ sets, union pmixcpp://union/$ns 4 members, spawned pmixcpp://spawned/$ns 2 members$")"
uold=$(echo "$out" | sed -n 's/^PSETS old 0: .* union \([^ ]*\) .*/\1/p' | head -1)
unew=$(echo "$out" | sed -n 's/^PSETS new 0: .* union \([^ ]*\) .*/\1/p' | head -1)
expect_eq "old and new name the same union set" "$uold" "$unew"
expect_eq "one communicator of 4 over old and new (allreduce of ranks = 6)" 4 \
    "$(echo "$out" | grep -cE '^UNION (old|new) [01] on n[0-9]+: rank [0-3] of 4, allreduce 6$')"
expect_eq "the union's ranks are 0..3, old processes first" "old0 old1 new2 new3" \
    "$(echo "$out" | sed -n 's/^UNION \(old\|new\) [01] on [^:]*: rank \([0-3]\) .*/\1\2/p' | sort -k1.4n | tr '\n' ' ' | sed 's/ $//')"
expect_match "malleable program: every check held" '^MALLEABLE-OK 4$' "$out"
expect_match "srun status 0" '^SRUN_RC 0$' "$out"
expect_no_match "no failure or error" '(MALLEABLE-FAIL|srun: error|Job step aborted|PMIX ERROR|MPI_ABORT|PMIx Event Notification)' "$out"
added=$(echo "$out" | sed -n 's/^GROWN [0-9]* node(s): \([^;]*\);.*/\1/p')
if [ -n "$added" ]; then
    expect_eq "the new processes ran on the new nodes" "$(scontrol show hostnames "$added" | sort | tr '\n' ' ')" \
        "$(echo "$out" | sed -n 's/^UNION new [01] on \([^:]*\):.*/\1/p' | sort | tr '\n' ' ')"
else
    fail "no GROWN line"
fi

# the shrink
expect_eq "both old processes got PMIX_PROCESS_SET_DELETE of the union once the new ones left" 2 \
    "$(echo "$out" | grep -cE "^PSET-DELETED old [01]: pmixcpp://union/$ns yes$")"
expect_match "RELEASE of exactly the grown nodes" "^SHRUNK released $(printf '%s' "$added" | sed 's/[][]/\\&/g'); job on n" "$out"
expect_eq "after the shrink the sets are gone (MPI_Session_get_nth_pset)" 2 \
    "$(echo "$out" | grep -cE '^PSETS old [01]: [0-9]+ sets, union - -1 members, spawned - -1 members$')"
expect_eq "the old processes go on: a communicator of mpi://WORLD, 2 ranks" 2 \
    "$(echo "$out" | grep -cE '^UNION after [01] on n[0-9]+: rank [01] of 2, allreduce 1$')"
expect_match "shrink: every check held" '^MALLEABLE-SHRINK-OK 2$' "$out"
expect_match "scontrol after the shrink: the job holds 2 nodes" 'NumNodes=2 ' "$out"
expect_eq "squeue while it ran: 2 nodes, then 4, then 2" "2 4 2" \
    "$(echo "$out" | sed -n 's/^SQUEUE-COUNTS //p' | sed 's/ *$//')"
expect_eq "squeue: one job, of 2 nodes at the end" "SQUEUE $jid 2 RUNNING" \
    "$(echo "$out" | grep '^SQUEUE ' | awk '{print $1, $2, $4, $5}' | tr '\n' ' ' | sed 's/ $//')"
# Slurm writes one record per size of a resized job under its id (RESIZING, closed at the
# resize; the last one COMPLETED); slurmctld hands them to slurmdbd asynchronously: wait for all
rows() { sacct -n -X -P -S "$start" -o JobID,JobName,State,NNodes 2>&1; }
for _ in $(seq 30); do
    acct=$(rows)
    n=0
    for want in "RESIZING|2" "RESIZING|4" "COMPLETED|2"; do echo "$acct" | grep -qxF "$jid|job.sbatch|$want" && n=$((n + 1)); done
    [ "$n" = 3 ] && break
    sleep 1
done
echo "$acct" | sed 's/^/    sacct: /'
expect_match "sacct: the job's record before the grow (RESIZING, 2 nodes)" "^$jid\|job.sbatch\|RESIZING\|2\$" "$acct"
expect_match "sacct: the grown job's record (RESIZING, 4 nodes)" "^$jid\|job.sbatch\|RESIZING\|4\$" "$acct"
expect_match "sacct: the job completed on 2 nodes" "^$jid\|job.sbatch\|COMPLETED\|2\$" "$acct"
steps=$(sacct -n -P -j "$jid" -o JobID,NNodes,NodeList 2>&1)
echo "$steps" | grep -E "^$jid\.[0-9]+\|" | sed 's/^/    sacct: /'
[ -n "$added" ] && expect_match "sacct: the new processes' step ran in this job, on the grown nodes" \
    "^$jid\.1\|2\|$(printf '%s' "$added" | sed 's/[][]/\\&/g')\$" "$steps"
# Slurm's expansion needs a helper job (its nodes go to this one, it ends at once): it is in
# sacct with no nodes; no other job holds any (of those submitted since: an earlier test's job
# that ended in the second this one started is in sacct's window too)
expect_eq "sacct: no other job with nodes" "" \
    "$(echo "$acct" | awk -F'|' -v j="$jid" '$1 + 0 > j + 0 && $4 != 0 {print}')"
echo "$out" | grep -E '^MALLEABLE(-SHRINK)?-MS' | sed 's/^/    /'
[ $((SECONDS - t0)) -lt 140 ] && pass "done in $((SECONDS - t0)) s" || fail "took $((SECONDS - t0)) s"
echo "$out" | grep -q MALLEABLE-OK || echo "$out" | tail -30 | sed 's/^/    /'
t_done
