# PMIx_Spawn into an allocation obtained through the allocation bridge: rank 0 of a step asks
# for a NEW allocation (1 node, 2 CPUs), then spawns 2 children into it with PMIX_SPAWN_TARGET
# and again with PMIX_ALLOC_ID = the allocation's PMIX_ALLOC_ID (tests/programs/pmix_connect.c
# "alloc-spawn"). The children run as a step of that other Slurm job, know their parent
# (PMIX_PARENT_ID), and PMIX_EVENT_JOB_END reaches the spawner. An allocation the step never
# obtained, or one it gave back: PMIX_ERR_BAD_PARAM. PMIx_Connect across the two jobs is
# refused at once (PMIX_ERR_NOT_FOUND: not a namespace of this job).
# Requires: make install; contrib/cluster.sh start 4 (or more).
. "$(dirname "$0")/lib.sh"
prog="${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}/libexec/pmixcpp/tests/pmix_connect"
[ -x "$prog" ] || { fail "$prog not installed"; t_done; exit; }

out=$(timeout -k 5 120 salloc -N1 -n2 bash -c "echo PARENT-JOB \$SLURM_JOB_ID; srun --mpi=pmixcpp -n1 $prog alloc-spawn; echo SRUN_RC \$?" 2>&1)
parent_job=$(echo "$out" | sed -n 's/^PARENT-JOB //p')
new_job=$(echo "$out" | sed -n 's/^NEW-ALLOC .* JOB //p')
expect_match "a NEW allocation" '^PASS rank 0: NEW allocation -> PMIX_SUCCESS' "$out"
[ -n "$new_job" ] && [ "$new_job" != "$parent_job" ] && pass "the allocation is job $new_job, the spawner's is $parent_job" \
    || fail "allocation job '$new_job' (spawner's job '$parent_job')"
expect_match "spawn with PMIX_SPAWN_TARGET" "^PASS rank 0: PMIx_Spawn of 2 with pmix.spwn.tgt=.* namespace slurm\.$new_job\." "$out"
expect_match "spawn with PMIX_ALLOC_ID" "^PASS rank 0: PMIx_Spawn of 2 with pmix.alloc.id=.* namespace slurm\.$new_job\." "$out"
expect_eq "the 4 children ran in job $new_job and know their parent" 4 \
    "$(echo "$out" | grep -c "^SOLO rank [01] of slurm\.$new_job\.[0-9]* parent slurm\.$parent_job\.0:0 job $new_job ")"
expect_eq "the children ended on their own" 4 "$(echo "$out" | grep -c '^SOLO-DONE rank')"
expect_eq "PMIX_EVENT_JOB_END of both spawns at the spawner" 2 \
    "$(echo "$out" | grep -c '^PASS rank 0: PMIX_EVENT_JOB_END for slurm\.[0-9]*\.[0-9]* (PMIX_JOB_TERM_STATUS PMIX_SUCCESS)')"
expect_match "connect across jobs refused at once (PMIX_ERR_NOT_FOUND)" '^PASS rank 0: PMIx_Connect across two Slurm jobs is refused -> PMIX_ERR_NOT_FOUND' "$out"
expect_eq "unknown and given-back allocations: PMIX_ERR_BAD_PARAM" 2 \
    "$(echo "$out" | grep -c '^PASS rank 0: spawn_solo.* -> PMIX_ERR_BAD_PARAM')"
expect_no_match "no failed check" '^FAIL ' "$out"
expect_eq "every process passed" 5 "$(echo "$out" | grep -c '^RESULT-PASS rank')"
expect_match "srun status" '^SRUN_RC 0$' "$out"
# Given back: ended, or completing (CG: Slurm still cleaning up its node under load)
[ -n "$new_job" ] && expect_match "the allocation was given back" '^(|CG)$' "$(squeue -h -j "$new_job" -o %t 2>/dev/null)"
echo "$out" | grep -E '^(FAIL|NEW-ALLOC|ALLOC-CHILDREN)' | sed 's/^/    /'
t_done
