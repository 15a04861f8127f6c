# A fence that cannot finish across nodes fails after PMIxCppTimeout (SLURM_PMIXCPP_TIMEOUT=5)
# with an error to every waiting client and a log line naming the missing node: one node's
# slurmstepd is stopped (SIGSTOP) while the ranks are in the fence.
# Requires: make install; a cluster with >= 2 nodes.
. "$(dirname "$0")/lib.sh"
prog="${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}/libexec/pmixcpp/tests/pmix_multinode"
[ -x "$prog" ] || { fail "$prog not installed"; t_done; exit; }

# The slurmstepd of a node: the process holding the PMIx server socket under that node's TmpFS
# (found through /proc/net/unix and the socket inodes of the slurmstepd processes).
stepd_of_node() {
    local inode p
    # (the node's TmpFS of this cluster: other clusters on the host have nodes of the same names)
    for inode in $(awk -v d="$PMIXCPP_CLUSTER_DIR/tmp/$1/" 'index($NF, d) && $NF ~ /pmixcpp/ {print $7}' /proc/net/unix); do
        for p in $(pgrep -x slurmstepd); do
            if ls -l "/proc/$p/fd" 2>/dev/null | grep -q "socket:\[$inode\]"; then echo "$p"; return; fi
        done
    done
}

# Rank 1 (on the second node) sleeps before its fence; meanwhile its slurmstepd is stopped.
SLURM_PMIXCPP_TIMEOUT=5 timeout -k 5 90 srun --mpi=pmixcpp -N2 --ntasks-per-node=2 "$prog" timeout > "$PMIXCPP_CLUSTER_DIR/timeout.out" 2>&1 &
srun_pid=$!
stopped=
# The slurmstepd is looked for once (slow on a loaded host: every slurmstepd's descriptors),
# before READY; after READY only the 3 s of the last rank's delay remain to stop it.
pid=
for i in $(seq 200); do
    sleep 0.05
    [ -n "$pid" ] || pid=$(stepd_of_node n2)
    [ -n "$pid" ] || continue
    grep -q '^READY' "$PMIXCPP_CLUSTER_DIR/timeout.out" 2>/dev/null || continue
    kill -STOP "$pid" && stopped=$pid
    break
done
[ -n "$stopped" ] || fail "could not find and stop node n2's slurmstepd"
sleep 8
[ -n "$stopped" ] && kill -CONT "$stopped"
wait "$srun_pid"
out=$(cat "$PMIXCPP_CLUSTER_DIR/timeout.out")
expect_match "rank 0 gets PMIX_ERR_TIMEOUT from the fence" '^TIMEOUT-OK rank 0' "$out"
expect_match "log line names the missing node" 'failed: timed out waiting for other nodes: n2' "$out"
t_done
