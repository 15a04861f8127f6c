#!/bin/bash
# Set up everything on a fresh machine and run a job under srun --mpi=pmixcpp
# on a local four-node Slurm cluster. Run as root.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
export PMIXCPP_PREFIX=${PMIXCPP_PREFIX:-$src/_install}

"$src/contrib/build.sh"

export PMIXCPP_PLUGIN_DIR="$PMIXCPP_PREFIX/lib/slurm"
"$src/contrib/cluster.sh" restart 4
trap '"$src/contrib/cluster.sh" stop' EXIT
eval "$("$src/contrib/cluster.sh" env)"

echo "=== srun --mpi=pmixcpp -N4 --ntasks-per-node=2: each task's PMIx environment"
srun --mpi=pmixcpp -N4 --ntasks-per-node=2 -l \
    bash -c 'echo "node=$SLURMD_NODENAME namespace=$PMIX_NAMESPACE rank=$PMIX_RANK local_rank=$PMIXCPP_LOCAL_RANK server=$PMIXCPP_SERVER_URI"' | sort -n
