# A parent step that ends while its spawned children still run (tests/programs/pmix_connect.c
# "orphan"): rank 0 spawns 2 children that sleep 300 s and the parents exit at once. As the
# standard asks, the children's step is terminated when the parent step's tasks have all
# ended: the parent's srun says so on stderr and returns within seconds, and no step of the
# child is left. With PMIX_SPAWN_CHILD_SEP=true (children sleeping 6 s) the parent's srun waits
# for them and they end on their own.
# Requires: make install; contrib/cluster.sh start (any size).
. "$(dirname "$0")/lib.sh"
prog="${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}/libexec/pmixcpp/tests/pmix_connect"
[ -x "$prog" ] || { fail "$prog not installed"; t_done; exit; }
tmpf=$(mktemp /tmp/pmixcpp-spawn-end.XXXXXX)
trap 'rm -f "$tmpf"' EXIT

# --- linked children: terminated with the parent step -----------------------------------------
out=$(timeout -k 5 120 salloc -N1 -n3 bash -c "t0=\$(date +%s%N); srun --mpi=pmixcpp -n1 $prog orphan 0 300 >$tmpf 2>&1; \
    rc=\$?; echo SRUN-MS \$(( (\$(date +%s%N) - t0) / 1000000 )) rc \$rc; cat $tmpf; \
    sleep 1; echo STEPS-LEFT \$(squeue -h -s -j \$SLURM_JOB_ID | wc -l)" 2>&1)
expect_match "the parent spawned 2 sleeping children" '^PASS rank 0: PMIx_Spawn of 2 sleeping 300 s -> PMIX_SUCCESS' "$out"
expect_eq "both children started" 2 "$(echo "$out" | grep -c '^SOLO rank [01] ')"
expect_match "a clear line on the parent's srun stderr" 'srun: mpi/pmixcpp: step [0-9]+\.0 ended: terminating its spawned step [0-9]+\.1 \(not spawned with PMIX_SPAWN_CHILD_SEP\)' "$out"
ms=$(echo "$out" | sed -n 's/^SRUN-MS \([0-9]*\) rc .*/\1/p')
[ -n "$ms" ] && [ "$ms" -lt 15000 ] && pass "the parent's srun returned in $ms ms" || fail "the parent's srun took '${ms}' ms"
expect_match "the parent's srun status is its own tasks' (0)" '^SRUN-MS [0-9]+ rc 0$' "$out"
expect_eq "no child finished its sleep" 0 "$(echo "$out" | grep -c '^SOLO-DONE')"
expect_match "squeue -s: no step left" '^STEPS-LEFT 0$' "$out"

# --- PMIX_SPAWN_CHILD_SEP: the parent's srun waits, the children end on their own -------------
out=$(timeout -k 5 120 salloc -N1 -n3 bash -c "t0=\$(date +%s%N); srun --mpi=pmixcpp -n1 $prog orphan 1 6 >$tmpf 2>&1; \
    rc=\$?; echo SRUN-MS \$(( (\$(date +%s%N) - t0) / 1000000 )) rc \$rc; cat $tmpf" 2>&1)
expect_match "spawn with PMIX_SPAWN_CHILD_SEP" '^PASS rank 0: PMIx_Spawn of 2 sleeping 6 s with PMIX_SPAWN_CHILD_SEP -> PMIX_SUCCESS' "$out"
expect_eq "the separated children finished their sleep" 2 "$(echo "$out" | grep -c '^SOLO-DONE rank [01] ')"
expect_no_match "nothing was terminated" 'terminating its spawned step|CANCELLED' "$out"
ms=$(echo "$out" | sed -n 's/^SRUN-MS \([0-9]*\) rc .*/\1/p')
[ -n "$ms" ] && [ "$ms" -ge 5000 ] && pass "the parent's srun waited for them ($ms ms)" || fail "the parent's srun returned after '${ms}' ms"
expect_match "srun status 0" '^SRUN-MS [0-9]+ rc 0$' "$out"
expect_eq "every process passed" 3 "$(echo "$out" | grep -c '^RESULT-PASS rank')"
t_done
