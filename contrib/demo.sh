#!/bin/bash
# Set up everything on a fresh Debian 12 machine and run an MPI program under
# srun --mpi=pmixcpp on a local four-node Slurm cluster. Run as root.
#
# Installs the Debian packages pmixcpp needs, builds and installs into ./_install
# (a no-op when that is up to date), starts a real local cluster (munged,
# slurmctld, slurmd n1..n4; contrib/cluster.sh), runs contrib/demo_mpi.c built
# with Debian's mpicc on 4 nodes x 2 tasks, and stops the cluster again.
# Exits 0 only if the job ran and its MPI_Allreduce sum is right.
#
#   PMIXCPP_PREFIX       install prefix (default <src>/_install)
#   PMIXCPP_CLUSTER_DIR, PMIXCPP_SLURMCTLD_PORT, PMIXCPP_SLURMD_PORT_BASE
#                        where the cluster keeps its state and which ports it
#                        uses (contrib/cluster.sh; defaults /tmp/pmixcpp-cluster,
#                        16817, 16900)
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
export PMIXCPP_PREFIX=${PMIXCPP_PREFIX:-$src/_install}
nodes=4
ppn=2

heading() { printf '\n== %s\n' "$*"; }
work=$(mktemp -d /tmp/pmixcpp-demo.XXXXXX)
trap 'rm -rf "$work"' EXIT

heading "Installing the Debian packages pmixcpp needs, building, installing into $PMIXCPP_PREFIX"
echo "(5-10 minutes on a fresh machine, seconds when nothing changed; log: $work/build.log)"
t0=$SECONDS
if ! "$src/contrib/build.sh" > "$work/build.log" 2>&1; then
    tail -n 40 "$work/build.log"
    echo "demo: FAILED - the build failed (above: the end of its log)"
    exit 1
fi
echo "built and installed in $((SECONDS - t0)) s"

heading "Starting a local Slurm cluster: munged, slurmctld and $nodes slurmd (nodes n1..n$nodes) on this host"
export PMIXCPP_PLUGIN_DIR="$PMIXCPP_PREFIX/lib/slurm"
trap '"$src/contrib/cluster.sh" stop >/dev/null 2>&1; rm -rf "$work"' EXIT
"$src/contrib/cluster.sh" restart "$nodes"
eval "$("$src/contrib/cluster.sh" env)"
sinfo --Node --format='%N %T' --noheader | sort -V | tr '\n' ' ' | sed 's/^/nodes: /; s/ $/\n/'

heading "Building the MPI program with Debian's OpenMPI: mpicc contrib/demo_mpi.c"
mpicc -O1 -o "$work/demo_mpi" "$src/contrib/demo_mpi.c"
chmod 755 "$work" "$work/demo_mpi"
echo "built $work/demo_mpi"

heading "Running it: srun --mpi=pmixcpp -N$nodes --ntasks-per-node=$ppn demo_mpi"
echo "(Slurm starts each task through pmixcpp's PMIx server in slurmstepd; OpenMPI's MPI_Init"
echo " talks to it through pmixcpp's libpmix.so.2, which the plugin puts first in LD_LIBRARY_PATH)"
echo
rc=0
out=$(timeout -k 10 180 srun --mpi=pmixcpp -N"$nodes" --ntasks-per-node="$ppn" "$work/demo_mpi" </dev/null 2>&1) || rc=$?
printf '%s\n' "$out" | grep -v '^DEMO-SUM-OK '

echo
want=$((nodes * ppn))
if [ "$rc" -eq 0 ] && printf '%s\n' "$out" | grep -qx "DEMO-SUM-OK $want $nodes"; then
    echo "demo: PASS - $want MPI ranks on $nodes nodes were started by srun --mpi=pmixcpp, found each other through pmixcpp's PMIx server and computed the right sum"
else
    [ "$rc" -ne 0 ] || rc=1
    echo "demo: FAILED - srun exit status $rc; expected $want ranks on $nodes nodes and the right sum (daemon logs: ${PMIXCPP_CLUSTER_DIR:-/tmp/pmixcpp-cluster}/log)"
fi
exit "$rc"
