# A malleable MPI-4 sessions program with an unmodified OpenMPI 5 (contrib/examples/malleable.c,
# docs/malleability.md): an sbatch job of 2 nodes runs it at -N2 -n2 with the grow steps 2,4.
# Step 1: rank 0 grows the job by 2 nodes (PMIx_Allocation_request EXTEND), the 2 processes
# MPI_Comm_spawn 2 new ones onto exactly those nodes; step 2: the 4 processes (two steps of the
# job) grow it by 4 more and spawn 4 onto those: 8 processes on 8 nodes. At each step the server
# defines the spawn's two process sets (the new processes; every process of the job's steps, the
# new ones last) and tells every member (PMIX_PROCESS_SET_DEFINE); every process sees both sets
# through MPI_Session_get_num_psets / get_nth_pset with the right member counts, and all make ONE
# communicator with MPI_Comm_create_from_group (an allreduce over it, ranks in the set's order).
# Then the shrink: all new processes leave, the server deletes the sets when their steps have
# ended (PMIX_PROCESS_SET_DELETE), rank 0 gives exactly the 6 grown nodes back (PMIX_ALLOC_RELEASE),
# no set is listed any more, and the 2 original processes go on with a communicator of
# mpi://WORLD. squeue (from inside the job, every 0.2 s) shows the job on exactly the nodes the
# program was told at each step (2, 4, 8, 2); sacct has one record per size with those nodes
# (RESIZING 2, 4, 8; COMPLETED 2) and the new processes' steps on the nodes added.
# Prints MALLEABLE-MS per grow (EXTEND, launch, wire-up, communicator, allreduce, total) and
# MALLEABLE-SHRINK-MS. Skipped (passes with a note) where OpenMPI is older than 5. Needs 8 nodes
# (a smaller cluster is restarted with 8 and restored at the end) and permit_job_expansion.
. "$(dirname "$0")/lib.sh"
: "${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}"
major=$(ompi_info --version 2>/dev/null | sed -n 's/^Open MPI v\([0-9]*\)\..*/\1/p')
if [ -z "$major" ] || [ "$major" -lt 5 ]; then
    echo "  SKIP: OpenMPI ${major:-?} installed; the sessions program needs OpenMPI 5 (the Debian 13 stack)"
    t_done; exit
fi
cluster="$PMIXCPP_SRCDIR/contrib/cluster.sh"
work=$(mktemp -d /tmp/pmixcpp-mall.XXXXXX)
nodes_before=$(sinfo -h -o '%D' 2>/dev/null | head -1)
if [ "${nodes_before:-0}" -lt 8 ]; then
    "$cluster" restart 8 >/dev/null 2>&1 || { fail "cluster did not restart with 8 nodes"; rm -rf "$work"; t_done; exit; }
    restored() { rm -rf "$work"; "$cluster" restart "${nodes_before:-4}" >/dev/null 2>&1; }
else
    restored() { rm -rf "$work"; }
fi
trap restored EXIT
idle=$(sinfo -h -t idle -o '%D' 2>/dev/null | head -1)
[ "${idle:-0}" -ge 8 ] || { fail "needs 8 idle nodes, have ${idle:-0}"; t_done; exit; }
# shellcheck disable=SC2046
if mpicc -O1 -Wall -o "$work/malleable" "$PMIXCPP_SRCDIR/contrib/examples/malleable.c" \
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
# the job's nodes as squeue shows them, every 0.2 s, while the program runs
( while :; do squeue -h -j \$SLURM_JOB_ID -o '%D %N'; sleep 0.2; done > $work/counts 2>/dev/null ) &
watch=\$!
# slurmdbd keys a job's records by id and submit time, which a resize sets to the second it
# happens: a resize in the second of the one before replaces that size's record (the job waits
# a second before the first grow, the program works 1.1 s at each grown size)
sleep 1
srun --mpi=pmixcpp -N2 -n2 $work/malleable 2,4 1.1
echo "SRUN_RC \$?"
sleep 1
kill \$watch
uniq $work/counts | sed 's/^/SQUEUE-NODES /'
squeue -h -o 'SQUEUE %i %j %D %T'
scontrol show job \$SLURM_JOB_ID | grep -E " NodeList=| NumNodes="
EOS
t0=$SECONDS
start=$(date +%Y-%m-%dT%H:%M:%S)
jid=$(cd "$work" && sbatch --parsable -N2 -o "$work/out" "$work/job.sbatch")
for _ in $(seq 50); do squeue -h -j "$jid" 2>/dev/null | grep -q . || break; sleep 1; done
took=$((SECONDS - t0))
out=$(cat "$work/out" 2>/dev/null)
echo "$out" | grep -E '^(GROWN|SHRUNK|MALLEABLE|SQUEUE|JOB)' | sed 's/^/    /'
hosts() { scontrol show hostnames "$1" 2>/dev/null | sort | tr '\n' ' ' | sed 's/ $//'; }

ns='slurm\.[0-9]+\.[0-9]+'
first=$(echo "$out" | sed -n 's/^JOB [0-9]* NODES //p')
expect_eq "the job started on 2 nodes" 2 "$(scontrol show hostnames "$first" 2>/dev/null | wc -l)"
told=("$first")   # the job's nodes as the program was told them at each step
all_added=""
for s in 1 2; do
    k=$(( s == 1 ? 2 : 4 )) n=$(( s == 1 ? 4 : 8 ))
    expect_match "step $s: EXTEND by $k nodes" "^GROWN $s $k node\(s\): " "$out"
    added=$(echo "$out" | sed -n "s/^GROWN $s [0-9]* node(s): \([^;]*\);.*/\1/p")
    told+=("$(echo "$out" | sed -n "s/^GROWN $s [0-9]* node(s): [^;]*; job on //p")")
    all_added="$all_added $(hosts "$added")"
    expect_eq "step $s: the job holds $n nodes, the $k added among them" "$n" "$(scontrol show hostnames "${told[$s]}" 2>/dev/null | wc -l)"
    expect_eq "step $s: one communicator of $n (allreduce of ranks = $((n * (n - 1) / 2)))" "$n" \
        "$(echo "$out" | grep -cE "^UNION $s g[0-2] [0-9]+ on n[0-9]+: rank [0-9]+ of $n, allreduce $((n * (n - 1) / 2))\$")"
    # ranks in the set's order: the original processes, then those of step 1, then step 2's
    expect_eq "step $s: ranks 0..$((n - 1)), the original processes first, the new ones last" \
        "$(seq 0 $((n - 1)) | tr '\n' ' ' | sed 's/ $//')" \
        "$(echo "$out" | sed -n "s/^UNION $s g\([0-2]\) [0-9]* on [^:]*: rank \([0-9]*\) .*/\1 \2/p" | sort -n -k1,1 -k2,2 | awk '{print $2}' | tr '\n' ' ' | sed 's/ $//')"
    expect_eq "step $s: the $k new processes ran on exactly the nodes added" "$(hosts "$added")" \
        "$(echo "$out" | sed -n "s/^UNION $s g$s [0-9]* on \([^:]*\):.*/\1/p" | sort | tr '\n' ' ' | sed 's/ $//')"
    expect_eq "step $s: every one of the $n members got PMIX_PROCESS_SET_DEFINE of the union ($n members)" "$n" \
        "$(echo "$out" | grep -cE "^PSET-EVENT $s g[0-2] [0-9]+: union pmixcpp://union/$ns $n members\$")"
    expect_eq "step $s: the $k new processes got PMIX_PROCESS_SET_DEFINE of their own set" "$k" \
        "$(echo "$out" | grep -cE "^PSET-EVENT $s g$s [0-9]+: spawned pmixcpp://spawned/$ns $k members\$")"
    expect_eq "step $s: every process lists both sets (MPI_Session_get_nth_pset), members as defined" "$n" \
        "$(echo "$out" | grep -cE "^PSETS $s g[0-2] [0-9]+: [0-9]+ sets, union pmixcpp://union/$ns $n members, spawned pmixcpp://spawned/$ns $k members\$")"
    expect_eq "step $s: all name the same union set" 1 \
        "$(echo "$out" | sed -n "s/^PSETS $s .* union \([^ ]*\) .*/\1/p" | sort -u | wc -l)"
    expect_match "step $s: every check held" "^MALLEABLE-OK $s $n\$" "$out"
done
expect_match "srun status 0" '^SRUN_RC 0$' "$out"
expect_no_match "no failure or error" '(MALLEABLE-FAIL|srun: error|Job step aborted|PMIX ERROR|MPI_ABORT|PMIx Event Notification)' "$out"

# the shrink
expect_eq "both original processes got PMIX_PROCESS_SET_DELETE of both unions once the new ones left" 4 \
    "$(echo "$out" | grep -cE "^PSET-DELETED g0 [01]: pmixcpp://union/$ns yes$")"
released=$(echo "$out" | sed -n 's/^SHRUNK released \([^;]*\);.*/\1/p')
expect_eq "RELEASE of exactly the 6 grown nodes" "$(echo $all_added | tr ' ' '\n' | sort | tr '\n' ' ' | sed 's/ $//')" "$(hosts "$released")"
told+=("$(echo "$out" | sed -n 's/^SHRUNK released [^;]*; job on //p')")
expect_eq "after the shrink no pmixcpp set is listed" 2 "$(echo "$out" | grep -cE '^PSETS after g0 [01]: 0 pmixcpp sets$')"
expect_eq "the original processes go on: a communicator of mpi://WORLD, 2 ranks" 2 \
    "$(echo "$out" | grep -cE '^UNION after g0 [01] on n[0-9]+: rank [01] of 2, allreduce 1$')"
expect_match "shrink: every check held" '^MALLEABLE-SHRINK-OK 2$' "$out"
expect_eq "the job is on its first 2 nodes again, as the program was told" "$(hosts "$first")" "$(hosts "${told[3]}")"
expect_match "scontrol after the shrink: the job holds 2 nodes" 'NumNodes=2 ' "$out"
# squeue, polled from inside the job: exactly the nodes the program was told, step by step
seen=$(echo "$out" | sed -n 's/^SQUEUE-NODES [0-9]* //p')
expect_eq "squeue while it ran: the job's nodes were, in turn, those the program was told (2, 4, 8, 2)" \
    "$(for t in "${told[@]}"; do hosts "$t"; echo; done | tr '\n' '|')" \
    "$(echo "$seen" | while read -r l; do hosts "$l"; echo; done | tr '\n' '|')"
expect_eq "squeue: one job, of 2 nodes at the end" "SQUEUE $jid 2 RUNNING" \
    "$(echo "$out" | grep '^SQUEUE ' | awk '{print $1, $2, $4, $5}' | tr '\n' ' ' | sed 's/ $//')"
# Slurm writes one record per size of a resized job under its id (RESIZING, closed at the
# resize; the last one COMPLETED); slurmctld hands them to slurmdbd asynchronously: wait for all
rows() { sacct -n -X -P -S "$start" -o JobID,JobName,State,NNodes,NodeList 2>&1; }
want=("RESIZING|2|${told[0]}" "RESIZING|4|${told[1]}" "RESIZING|8|${told[2]}" "COMPLETED|2|${told[3]}")
for _ in $(seq 20); do
    acct=$(rows)
    n=0
    for w in "${want[@]}"; do echo "$acct" | grep -qxF "$jid|job.sbatch|$w" && n=$((n + 1)); done
    [ "$n" = 4 ] && break
    sleep 1
done
echo "$acct" | sed 's/^/    sacct: /'
for i in 0 1 2 3; do
    expect_match "sacct: the job's record at the program's step $i: ${want[$i]%%|*}, ${want[$i]#*|}" \
        "^$jid\|job.sbatch\|$(printf '%s' "${want[$i]}" | sed 's/[][|]/\\&/g')\$" "$acct"
done
steps=$(sacct -n -P -j "$jid" -o JobID,NNodes,NodeList 2>&1)
echo "$steps" | grep -E "^$jid\.[0-9]+\|" | sed 's/^/    sacct: /'
for s in 1 2; do
    k=$(( s == 1 ? 2 : 4 ))
    added=$(echo "$out" | sed -n "s/^GROWN $s [0-9]* node(s): \([^;]*\);.*/\1/p")
    [ -n "$added" ] && expect_match "sacct: step $s's new processes ran in this job ($jid.$s), on the nodes added" \
        "^$jid\.$s\|$k\|$(printf '%s' "$added" | sed 's/[][]/\\&/g')\$" "$steps"
done
# Slurm's expansion needs a helper job per grow (its nodes go to this one, it ends at once): in
# sacct with no nodes; no other job holds any
expect_eq "sacct: no other job with nodes" "" \
    "$(echo "$acct" | awk -F'|' -v j="$jid" '$1 + 0 > j + 0 && $4 != 0 {print}')"
echo "$out" | grep -E '^MALLEABLE(-SHRINK)?-MS' | sed 's/^/    /'
[ "$took" -lt 40 ] && pass "the job took $took s" || fail "the job took $took s"
echo "$out" | grep -q 'MALLEABLE-OK 2' || echo "$out" | tail -40 | sed 's/^/    /'
t_done
