# Debian's unmodified OpenMPI at -N4 -n64 on pmixcpp, over the UCX node transport and over TCP:
# hello, allreduce + point-to-point ring, alltoall + token ring; then an sbatch job that runs
# several srun steps one after another and at once.
. "$(dirname "$0")/lib.sh"
: "${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}"
mpi_build mpi_hello mpi_allreduce mpi_alltoall || { t_done; exit; }

for transport in ucx tcp; do
    for p in mpi_hello:MPI-HELLO-OK mpi_allreduce:MPI-ALLREDUCE-OK mpi_alltoall:MPI-ALLTOALL-OK; do
        prog=${p%%:*}; tag=${p#*:}
        SLURM_PMIXCPP_TRANSPORT=$transport OMPI_MCA_btl=self,tcp \
            run_srun 180 --mpi=pmixcpp -N4 --ntasks-per-node=16 "$work/$prog"
        expect_eq "$prog -N4 -n64 ($transport): exit status" 0 "$rc"
        expect_match "$prog -N4 -n64 ($transport)" "^$tag 64\$" "$out"
        [ "$rc" -eq 0 ] || echo "$out" | tail -8 | sed 's/^/    /'
    done
done

# sbatch: steps in sequence, then three steps at once on disjoint nodes
cat > "$work/job.sh" <<JOB
#!/bin/bash
export OMPI_MCA_btl=self,tcp
srun --mpi=pmixcpp -N2 -n8 --ntasks-per-node=4 $work/mpi_allreduce || exit 11
srun --mpi=pmixcpp -N4 -n8 --ntasks-per-node=2 $work/mpi_alltoall || exit 12
srun --mpi=pmixcpp -N1 -n4 -w \$(scontrol show hostnames \$SLURM_JOB_NODELIST | sed -n 1p) $work/mpi_allreduce > $work/c1.out &
srun --mpi=pmixcpp -N1 -n4 -w \$(scontrol show hostnames \$SLURM_JOB_NODELIST | sed -n 2p) $work/mpi_alltoall > $work/c2.out &
srun --mpi=pmixcpp -N2 -n4 -w \$(scontrol show hostnames \$SLURM_JOB_NODELIST | sed -n 3,4p | paste -sd,) $work/mpi_hello > $work/c3.out &
wait %1 || exit 21; wait %2 || exit 22; wait %3 || exit 23
JOB
chmod +x "$work/job.sh"
job=$(sbatch --parsable -N4 --ntasks-per-node=4 -o "$work/job.out" "$work/job.sh")
for i in $(seq 240); do
    state=$(scontrol show job "$job" 2>/dev/null | sed -n 's/.*JobState=\([A-Z]*\).*/\1/p')
    case "$state" in COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL) break ;; esac
    sleep 0.5
done
expect_eq "sbatch job with sequential and concurrent steps" COMPLETED "$state"
expect_match "first sequential step" '^MPI-ALLREDUCE-OK 8$' "$(cat "$work/job.out")"
expect_match "second sequential step" '^MPI-ALLTOALL-OK 8$' "$(cat "$work/job.out")"
expect_match "concurrent step 1" '^MPI-ALLREDUCE-OK 4$' "$(cat "$work/c1.out" 2>/dev/null)"
expect_match "concurrent step 2" '^MPI-ALLTOALL-OK 4$' "$(cat "$work/c2.out" 2>/dev/null)"
expect_match "concurrent step 3" '^MPI-HELLO-OK 4$' "$(cat "$work/c3.out" 2>/dev/null)"
[ "$state" = COMPLETED ] || cat "$work/job.out" | tail -20 | sed 's/^/    /'
t_done
