# A second, small cluster whose nodes each run in a network namespace of their own
# (contrib/cluster.sh with PMIXCPP_NETNS=1: veth pairs to a bridge, node nK at <net>.0.(K+1)):
# every byte between nodes, and between a node and srun or slurmctld, takes the kernel's
# veth/bridge path, and 127.0.0.1 is a different host on each node. Across the namespaces:
# an OpenMPI hello over TCP, pmix_multinode's fences and modex with the TCP transport and with
# UCX over TCP; then stop leaves no namespace, veth or bridge behind.
# Skips where network namespaces cannot be made (not root, no iproute2, a chroot lane).
# Requires: make install; mpicc for the MPI part.
. "$(dirname "$0")/lib.sh"
prog="${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}/libexec/pmixcpp/tests/pmix_multinode"
[ -x "$prog" ] || { fail "$prog not installed"; t_done; exit; }
cluster="$PMIXCPP_SRCDIR/contrib/cluster.sh"

skip() { echo "  SKIP: $*"; exit 0; }
[ "$(id -u)" = 0 ] || skip "not root: no network namespaces"
[ -z "${PMIXCPP_CHROOT:-}${PMIXCPP_IN_CHROOT:-}" ] || skip "the namespace bed runs on the host's stack only (a chroot lane)"
command -v ip >/dev/null 2>&1 && command -v nsenter >/dev/null 2>&1 || skip "no ip or nsenter"
probe=pxcprobe$$
ip netns add "$probe" 2>/dev/null || skip "cannot create a network namespace here"
ip netns del "$probe"

# apart from the suite's cluster in state directory, ports, job ids and subnet
export PMIXCPP_CLUSTER_DIR="$PMIXCPP_CLUSTER_DIR-netns"
export PMIXCPP_SLURMCTLD_PORT=$(( ${PMIXCPP_SLURMCTLD_PORT:-16817} + 7 ))
export PMIXCPP_SLURMD_PORT_BASE=$(( ${PMIXCPP_SLURMD_PORT_BASE:-16900} + 60 ))
export PMIXCPP_FIRST_JOB_ID=$(( ${PMIXCPP_FIRST_JOB_ID:-1} + 900000 ))
export PMIXCPP_ACCOUNTING=none PMIXCPP_NETNS=1 PMIXCPP_NETNS_NET=10.78
prefix=pxc$PMIXCPP_SLURMCTLD_PORT
ours() { ip netns list 2>/dev/null | grep -c "^${prefix}n"; }
# between namespaces there is no common loopback: OpenMPI must not be held to lo
unset OMPI_MCA_btl_tcp_if_include OMPI_MCA_oob_tcp_if_include
main_conf=$SLURM_CONF
trap '"$cluster" stop >/dev/null 2>&1; export SLURM_CONF=$main_conf' EXIT

start_out=$("$cluster" start 4 2>&1)
start_rc=$?
expect_eq "4-node namespace cluster starts" 0 "$start_rc"
[ "$start_rc" = 0 ] || { echo "$start_out" | tail -20 | sed 's/^/    /'; t_done; exit; }
expect_match "start says whether netem adds a delay" '^cluster.sh: netns: 4 namespaces .*(netem delay|no added delay)' "$start_out"
eval "$("$cluster" env)"
expect_eq "4 namespaces made" 4 "$(ours)"

# each task sees its own node's address and no other: the nodes are apart
run_srun 60 -N4 --ntasks-per-node=1 sh -c 'ip -4 -o addr show scope global | awk "{ print \$4 }"'
expect_eq "srun across 4 namespaces: exit status" 0 "$rc"
expect_eq "each node its own address" "10.78.0.2/16 10.78.0.3/16 10.78.0.4/16 10.78.0.5/16" \
    "$(echo "$out" | sort | tr '\n' ' ' | sed 's/ $//')"

for transport in tcp ucx; do
    out=$(SLURM_PMIXCPP_TRANSPORT=$transport timeout -k 5 120 srun --mpi=pmixcpp -N4 --ntasks-per-node=2 "$prog" 1 2>&1)
    rc=$?
    expect_eq "pmix_multinode -N4 x2 across namespaces, $transport transport: exit status" 0 "$rc"
    expect_eq "pmix_multinode -N4 x2, $transport: all 8 ranks passed" 8 "$(echo "$out" | grep -c '^RESULT-PASS rank')"
    [ "$rc" = 0 ] || echo "$out" | tail -10 | sed 's/^/    /'
done

if mpi_build mpi_hello; then
    OMPI_MCA_btl=self,tcp run_srun 120 --mpi=pmixcpp -N4 --ntasks-per-node=2 "$work/mpi_hello"
    expect_eq "mpi_hello -N4 x2 across namespaces (btl tcp): exit status" 0 "$rc"
    expect_match "mpi_hello -N4 x2 across namespaces" '^MPI-HELLO-OK 8$' "$out"
    [ "$rc" = 0 ] || echo "$out" | tail -10 | sed 's/^/    /'
fi

"$cluster" stop >/dev/null 2>&1
expect_eq "stop removes the namespaces" 0 "$(ours)"
expect_eq "stop removes the bridge" no "$(ip link show "${prefix}br" >/dev/null 2>&1 && echo yes || echo no)"
expect_eq "stop removes the veth pairs" 0 "$(ip -o link show 2>/dev/null | grep -c ": ${prefix}v[0-9]")"
t_done
