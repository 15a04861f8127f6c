# Debian's OpenMPI (built against OpenPMIx 4.2.2) runs unmodified on our libpmix.so.2:
# MPI_Init/Finalize, a barrier, allreduce and point-to-point over shared memory (vader) and TCP.
# Requires: mpicc (openmpi-bin / libopenmpi-dev); skipped (passes with a note) otherwise.
. "$(dirname "$0")/lib.sh"
: "${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}"
mpi_build mpi_hello mpi_allreduce || { t_done; exit; }

# The task environment puts our library first; check that OpenMPI really loads it.
run_srun 60 --mpi=pmixcpp -N1 -n1 bash -c "LD_DEBUG=libs $work/mpi_hello 2>&1 | grep 'calling init:.*libpmix.so.2'"
expect_match "OpenMPI loads our libpmix.so.2" "calling init: $PMIXCPP_PREFIX/lib(64)?/pmixcpp/libpmix.so.2" "$out"

run_srun 90 --mpi=pmixcpp -N1 -n8 "$work/mpi_hello"
expect_eq "mpi_hello -n8 exit status" 0 "$rc"
expect_match "mpi_hello -n8" '^MPI-HELLO-OK 8$' "$out"
expect_eq "every rank said hello" 8 "$(echo "$out" | grep -c '^hello from rank')"

run_srun 90 --mpi=pmixcpp -N1 -n8 "$work/mpi_allreduce"
expect_eq "mpi_allreduce -n8 (shared memory) exit status" 0 "$rc"
expect_match "mpi_allreduce -n8" '^MPI-ALLREDUCE-OK 8$' "$out"

OMPI_MCA_btl=self,tcp run_srun 90 --mpi=pmixcpp -N1 -n4 "$work/mpi_allreduce"
expect_eq "mpi_allreduce -n4 over tcp exit status" 0 "$rc"
expect_match "mpi_allreduce -n4 over tcp" '^MPI-ALLREDUCE-OK 4$' "$out"
[ "$rc" -eq 0 ] || echo "$out" | head -30 | sed 's/^/    /'
t_done
