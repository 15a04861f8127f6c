# Heterogeneous job steps (srun A : B) and --multi-prog: one namespace over every component, ranks
# in component order, one app per component (or per --multi-prog line) with PMIX_APPNUM,
# PMIX_APP_SIZE, PMIX_APP_RANK, PMIX_APPLDR, PMIX_APP_ARGV, PMIX_JOB_NUM_APPS; fences, direct
# modex, events, abort, spawn and allocation requests across the components; OpenMPI's
# MPI_COMM_WORLD and MPI_APPNUM over the step; the same from an sbatch het job. (Slurm 22.05 never puts two components of one het job on a
# node; the shared-node layout is covered by tests/server/test_jobdata.cc.)
# Requires: make install; mpicc for the OpenMPI part; a cluster with >= 4 nodes.
. "$(dirname "$0")/lib.sh"
dir="${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}/libexec/pmixcpp/tests"
prog="$dir/pmix_apps"
[ -x "$prog" ] || { fail "$prog not installed"; t_done; exit; }

# apps_line RANK: the APPS line of that rank, without the host and argv fields
apps_line() { printf '%s\n' "$out" | grep "^APPS rank=$1 " | sed 's/ host=.*//'; }

# 1. Two components on disjoint nodes: 2 ranks on one node, 3 on two more.
run_srun 60 --mpi=pmixcpp -N1 -n2 "$prog" : -N2 -n3 "$prog" arg1
expect_eq "het step: exit status" 0 "$rc"
expect_eq "het step: every rank passed" 5 "$(printf '%s\n' "$out" | grep -c '^RESULT-PASS rank')"
expect_no_match "het step: no failed check" '^FAIL ' "$out"
expect_eq "het step: rank 0" "APPS rank=0 size=5 napps=2 appnum=0 appsize=2 apprank=0 appldr=0 lrank=0 nodeid=0 nnodes=3 lsize=2 lpeers=0,1" "$(apps_line 0)"
expect_eq "het step: rank 1" "APPS rank=1 size=5 napps=2 appnum=0 appsize=2 apprank=1 appldr=0 lrank=1 nodeid=0 nnodes=3 lsize=2 lpeers=0,1" "$(apps_line 1)"
expect_match "het step: rank 2 is the second app's leader" "^APPS rank=2 size=5 napps=2 appnum=1 appsize=3 apprank=0 appldr=2 lrank=0 nodeid=[12] nnodes=3 lsize=(1|2) " "$out"
expect_match "het step: rank 4 is the second app's rank 2" "^APPS rank=4 size=5 napps=2 appnum=1 appsize=3 apprank=2 appldr=2 lrank=[01] nodeid=[12] nnodes=3 " "$out"
expect_match "het step: the first app's argv" "^APPS rank=0 .* argv=$prog\$" "$out"
expect_match "het step: the second app's argv" "^APPS rank=3 .* argv=$prog arg1\$" "$out"
[ "$rc" -eq 0 ] || printf '%s\n' "$out" | grep -v '^PASS' | head -20 | sed 's/^/    /'

# 2. Three components.
run_srun 60 --mpi=pmixcpp -N1 -n1 "$prog" : -N1 -n2 "$prog" : -N1 -n1 "$prog"
expect_eq "three components: exit status" 0 "$rc"
expect_eq "three components: every rank passed" 4 "$(printf '%s\n' "$out" | grep -c '^RESULT-PASS rank')"
expect_match "three components: rank 3 is app 2" "^APPS rank=3 size=4 napps=3 appnum=2 appsize=1 apprank=0 appldr=3 " "$out"

# 3. --multi-prog: every line an app (ranks 0 and 3 run the first line, the others the second).
printf '# two apps\n0,3 %s\n* %s a b\n' "$prog" "$prog" > "/tmp/pmixcpp-het-mp.$$"
run_srun 60 --mpi=pmixcpp -N2 -n5 --multi-prog "/tmp/pmixcpp-het-mp.$$"
rm -f "/tmp/pmixcpp-het-mp.$$"
expect_eq "multi-prog: exit status" 0 "$rc"
expect_eq "multi-prog: every rank passed" 5 "$(printf '%s\n' "$out" | grep -c '^RESULT-PASS rank')"
expect_match "multi-prog: rank 3 in app 0" "^APPS rank=3 size=5 napps=2 appnum=0 appsize=2 apprank=1 appldr=0 " "$out"
expect_match "multi-prog: rank 4 in app 1" "^APPS rank=4 size=5 napps=2 appnum=1 appsize=3 apprank=2 appldr=1 .* argv=$prog a b\$" "$out"

# 4. An sbatch het job: one het step over both components (srun --het-group=0,1).
jobout="/tmp/pmixcpp-het-batch.$$.out"
cat > "/tmp/pmixcpp-het-batch.$$.sh" <<EOS
#!/bin/bash
#SBATCH -N1 -n2
#SBATCH hetjob
#SBATCH -N1 -n1
srun --mpi=pmixcpp --het-group=0,1 $prog
EOS
jid=$(sbatch --parsable -o "$jobout" "/tmp/pmixcpp-het-batch.$$.sh" 2>&1)
for _ in $(seq 1 600); do
    [ -z "$(squeue -h -j "${jid%%+*}" 2>/dev/null)" ] && break
    sleep 0.1
done
out=$(cat "$jobout" 2>/dev/null)
rm -f "/tmp/pmixcpp-het-batch.$$.sh" "$jobout"
expect_eq "sbatch het job: every rank passed" 3 "$(printf '%s\n' "$out" | grep -c '^RESULT-PASS rank')"
expect_match "sbatch het job: rank 2 is app 1" "^APPS rank=2 size=3 napps=2 appnum=1 appsize=1 apprank=0 appldr=2 " "$out"

# 5. OpenMPI: MPI_COMM_WORLD over both components, MPI_APPNUM per rank.
if mpi_build mpi_het; then
    OMPI_MCA_btl=self,tcp run_srun 60 --mpi=pmixcpp -N1 -n2 "$work/mpi_het" : -N2 -n3 "$work/mpi_het"
    expect_eq "OpenMPI het step: exit status" 0 "$rc"
    expect_match "OpenMPI het step: allreduce over 5 ranks, MPI_APPNUM per rank" '^MPI-HET-OK 5 appnums=0,0,1,1,1$' "$out"
    [ "$rc" -eq 0 ] || printf '%s\n' "$out" | head -20 | sed 's/^/    /'
fi
# 6. PMIx_Abort in one component ends every component (rank 1 is the second component's first).
abort="$dir/pmix_abort"
run_srun 60 --mpi=pmixcpp -N1 -n1 "$abort" : -N1 -n3 "$abort"
expect_eq "abort in a het step: srun exits with the abort status" 7 "$rc"
expect_no_match "abort in a het step: no rank finished its sleep" 'RESULT-PASS' "$out"

# 7. Spawn and allocation requests from a het step: a spawn into the leader's allocation (children
#    and parents connect), a NEW allocation whose completion event reaches the other component.
out=$(timeout -k 5 90 salloc -N1 -n4 : -N1 -n2 srun --mpi=pmixcpp -n2 "$dir/pmix_connect" spawn 2 : -n2 "$dir/pmix_connect" spawn 2 2>&1)
expect_eq "spawn from a het step: parents and children passed" 6 "$(printf '%s\n' "$out" | grep -c '^RESULT-PASS rank')"
expect_no_match "spawn from a het step: no failed check" '^FAIL ' "$out"
run_srun 90 --mpi=pmixcpp -N1 -n1 "$dir/pmix_alloc" proposal : -N1 -n3 "$dir/pmix_alloc" proposal
expect_eq "allocation request from a het step: every rank passed" 4 "$(printf '%s\n' "$out" | grep -c '^RESULT-PASS rank')"
expect_match "allocation request from a het step: the completion event crossed the components" '^PASS rank 1: rank 1: PMIX_NOTIFY_ALLOC_COMPLETE arrived' "$out"
for _ in $(seq 1 100); do [ -z "$(squeue -h 2>/dev/null)" ] && break; sleep 0.1; done  # (completing)
expect_eq "no job left" "" "$(squeue -h 2>/dev/null)"
t_done
