# MPI_Comm_spawn with Debian's unmodified OpenMPI: parents `srun -N2 -n4` spawn 4 children (a new
# step of the job) that exchange messages with the parents over the intercommunicator and join
# an MPI_Allreduce over the merged communicator, then everyone disconnects and exits cleanly.
# MPI_Comm_spawn_multiple of two commands: each child sees its command's MPI_APPNUM.
# Also PMIx_Spawn + PMIx_Connect of 4 children (tests/programs/pmix_connect.c "spawn") with
# PMIX_EVENT_JOB_END at the spawner when the children's step ends. Prints the time of a spawn of
# 4 and of 32 processes next to a plain srun of the same program inside the job (no assertion
# on times beyond liveness bounds: the machine is shared).
# Requires: make install; a cluster with >= 2 nodes and >= 20 CPUs per node; mpicc.
. "$(dirname "$0")/lib.sh"
: "${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}"
prog="$PMIXCPP_PREFIX/libexec/pmixcpp/tests/pmix_connect"
[ -x "$prog" ] || { fail "$prog not installed"; t_done; exit; }

# --- PMIx level ---------------------------------------------------------------------------------
for n in 4 32; do
    out=$(timeout -k 5 120 salloc -N2 -n$((n + 4)) srun --mpi=pmixcpp -N2 -n4 "$prog" spawn $n 2>&1)
    expect_eq "PMIx spawn $n: parents and children passed" $((n + 4)) "$(echo "$out" | grep -c '^RESULT-PASS rank')"
    expect_no_match "PMIx spawn $n: no failed check" '^FAIL ' "$out"
    expect_match "PMIx spawn $n: PMIX_EVENT_JOB_END at the spawner" "PASS rank 0: PMIX_EVENT_JOB_END for slurm\.[0-9]+\.[0-9]+ \(affected slurm" "$out"
    echo "$out" | grep -E '^(SPAWN-CONNECT-MS|FAIL)' | head -5 | sed 's/^/    /'
done

mpi_build mpi_spawn mpi_hello mpi_spawn_multiple || { t_done; exit; }

# --- Goal: -N2 -n4 spawns 4, over TCP and over the default transports ---------------------------
for btl in self,tcp default; do
    if [ "$btl" = default ]; then unset OMPI_MCA_btl; else export OMPI_MCA_btl=$btl; fi
    t0=$SECONDS
    out=$(timeout -k 5 150 salloc -N2 -n8 srun --mpi=pmixcpp -N2 -n4 "$work/mpi_spawn" 4 2>&1)
    rc=$?
    expect_eq "mpi_spawn (btl $btl): exit status" 0 "$rc"
    expect_match "mpi_spawn (btl $btl): MPI_Comm_spawn of 4 works" '^MPI-SPAWN-OK 4$' "$out"
    expect_match "mpi_spawn (btl $btl): parents and children in one allreduce" '^parent: allreduce over parents\+children = 8, messages right$' "$out"
    expect_eq "mpi_spawn (btl $btl): every child got its parent's message" 4 "$(echo "$out" | grep -c '^child [0-3] of 4: token right, allreduce 8$')"
    expect_no_match "mpi_spawn (btl $btl): no error from srun or OpenMPI" '(srun: error|Job step aborted|ORTE_ERROR|PMIX ERROR|MPI_ABORT)' "$out"
    [ $((SECONDS - t0)) -lt 120 ] && pass "mpi_spawn done in $((SECONDS - t0)) s" || fail "mpi_spawn took $((SECONDS - t0)) s"
    printf '%s\n' "$out" | grep -q 'MPI-SPAWN-OK' || printf '%s\n' "$out" | tail -15 | sed 's/^/    /'
done

# --- MPI_Comm_spawn_multiple: two commands (2 + 3 processes) in one call, one Slurm step -------
out=$(OMPI_MCA_btl=self,tcp timeout -k 5 150 salloc -N2 -n9 srun --mpi=pmixcpp -N2 -n4 "$work/mpi_spawn_multiple" 2>&1)
expect_match "MPI_Comm_spawn_multiple of 2 commands works" '^MPI-SPAWN-MULTIPLE-OK 5$' "$out"
expect_eq "MPI_Comm_spawn_multiple: every child has its command's MPI_APPNUM and argv" 5 \
    "$(echo "$out" | grep -cE '^parent: child [0-4]: appnum [01], argv matches, host any -> right$')"
expect_no_match "MPI_Comm_spawn_multiple: no error from srun or OpenMPI" '(srun: error|Job step aborted|ORTE_ERROR|PMIX ERROR|MPI_ABORT)' "$out"
printf '%s\n' "$out" | grep -q 'MPI-SPAWN-MULTIPLE-OK' || printf '%s\n' "$out" | tail -15 | sed 's/^/    /'
# ... and with MPI_Info "host" per command: each command's processes on its own node
out=$(OMPI_MCA_btl=self,tcp timeout -k 5 150 salloc -N2 -n9 bash -c '
    hosts=($(scontrol show hostnames "$SLURM_JOB_NODELIST"))
    srun --mpi=pmixcpp -N2 -n4 '"$work/mpi_spawn_multiple"' "${hosts[1]}" "${hosts[0]}"' 2>&1)
expect_match "MPI_Comm_spawn_multiple with a host per command works" '^MPI-SPAWN-MULTIPLE-OK 5$' "$out"
expect_eq "MPI_Comm_spawn_multiple: every child runs on its command's host" 5 \
    "$(echo "$out" | grep -cE "^parent: child [0-4]: appnum [01], argv matches, host its command's -> right$")"
printf '%s\n' "$out" | grep -q 'MPI-SPAWN-MULTIPLE-OK' || printf '%s\n' "$out" | tail -15 | sed 's/^/    /'

# --- Times: spawn of 4 and 32 next to a plain srun of the same processes in the job ---------------
export OMPI_MCA_btl=self,tcp
for n in 4 32; do
    out=$(timeout -k 5 300 salloc -N2 -n$((n + 4)) bash -c "srun --mpi=pmixcpp -N2 -n4 $work/mpi_spawn $n; \
        t0=\$(date +%s%N); srun --mpi=pmixcpp -n$n $work/mpi_hello >/dev/null 2>&1; echo PLAIN-SRUN-MS $n \$(( (\$(date +%s%N) - t0) / 1000000 ))" 2>&1)
    expect_match "mpi_spawn of $n" "^MPI-SPAWN-OK $n$" "$out"
    echo "$out" | grep -E '^(SPAWN-MS|PLAIN-SRUN-MS)' | sed 's/^/    /'
done
unset OMPI_MCA_btl
t_done
