#!/bin/bash
# Set up everything on a fresh machine and run an MPI program under
# srun --mpi=pmixcpp on a local four-node Slurm cluster. Run as root.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
export PMIXCPP_PREFIX=${PMIXCPP_PREFIX:-$src/_install}

"$src/contrib/build.sh"

export PMIXCPP_PLUGIN_DIR="$PMIXCPP_PREFIX/lib/slurm"
"$src/contrib/cluster.sh" restart 4
trap '"$src/contrib/cluster.sh" stop' EXIT
eval "$("$src/contrib/cluster.sh" env)"

# Debian's unmodified OpenMPI; under --mpi=pmixcpp it runs on pmixcpp's libpmix.so.2.
hello="$PMIXCPP_CLUSTER_DIR/mpi_hello"
mpicc -o "$hello" "$PMIXCPP_PREFIX/libexec/pmixcpp/tests/mpi_hello.c"

echo "=== srun --mpi=pmixcpp -N4 --ntasks-per-node=2: the PMIx environment of each task"
srun --mpi=pmixcpp -N4 --ntasks-per-node=2 -l \
    bash -c 'echo "node=$SLURMD_NODENAME namespace=$PMIX_NAMESPACE rank=$PMIX_RANK server=$PMIXCPP_SERVER_URI"' | sort -n

echo "=== srun --mpi=pmixcpp -N4 --ntasks-per-node=2 mpi_hello (Debian's OpenMPI 4.1 on pmixcpp)"
srun --mpi=pmixcpp -N4 --ntasks-per-node=2 "$hello" | sort -k4 -n
