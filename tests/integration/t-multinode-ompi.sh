# Debian's OpenMPI across nodes on pmixcpp: mpi_hello and mpi_allreduce at -N2 and -N4, over TCP
# between nodes (OMPI_MCA_btl=self,tcp) and with vader inside a node (the plugin's per-node dir).
# Requires: make install, mpicc (openmpi-bin / libopenmpi-dev); a cluster with >= 4 nodes.
. "$(dirname "$0")/lib.sh"
: "${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}"
mpi_build mpi_hello mpi_allreduce || { t_done; exit; }

for layout in 2x4 4x4 4x8; do
    nodes=${layout%x*}; ppn=${layout#*x}; n=$((nodes * ppn))
    OMPI_MCA_btl=self,tcp run_srun 120 --mpi=pmixcpp -N"$nodes" --ntasks-per-node="$ppn" "$work/mpi_allreduce"
    expect_eq "mpi_allreduce -N$nodes x$ppn over tcp: exit status" 0 "$rc"
    expect_match "mpi_allreduce -N$nodes x$ppn over tcp" "^MPI-ALLREDUCE-OK $n\$" "$out"
    [ "$rc" -eq 0 ] || echo "$out" | head -20 | sed 's/^/    /'
done
run_srun 120 --mpi=pmixcpp -N2 --ntasks-per-node=4 "$work/mpi_hello"
expect_eq "mpi_hello -N2 x4 (vader inside a node): exit status" 0 "$rc"
expect_match "mpi_hello -N2 x4" '^MPI-HELLO-OK 8$' "$out"
run_srun 120 --mpi=pmixcpp -N4 --ntasks-per-node=4 "$work/mpi_allreduce"
expect_eq "mpi_allreduce -N4 x4 (vader inside a node): exit status" 0 "$rc"
expect_match "mpi_allreduce -N4 x4 (vader inside a node)" '^MPI-ALLREDUCE-OK 16$' "$out"
[ "$rc" -eq 0 ] || echo "$out" | head -20 | sed 's/^/    /'
t_done
