# mpi.conf keys of the plugin: parsed by the daemons, shown by scontrol, handed
# to slurmstepd; a bad value is refused naming the key.
. "$(dirname "$0")/lib.sh"

cluster_restart_with "PMIxCppTimeout=42
PMIxCppFence=ring
PMIxCppDebug=2
PMIxCppClientLib=no" || fail "cluster restart with a valid mpi.conf"
eval "$("$PMIXCPP_SRCDIR/contrib/cluster.sh" env)"

conf=$(scontrol show config 2>&1)
expect_match "scontrol shows PMIxCppTimeout" '^ *PMIxCppTimeout += 42' "$conf"
expect_match "scontrol shows PMIxCppFence" '^ *PMIxCppFence += ring' "$conf"
expect_match "scontrol shows defaults of unset keys" '^ *PMIxCppTransport += ucx' "$conf"

# The values reach slurmstepd: PMIxCppDebug=2 is passed on to the tasks,
# PMIxCppClientLib=no leaves LD_LIBRARY_PATH alone.
run_srun 60 --mpi=pmixcpp -N1 -n1 --export=ALL,LD_LIBRARY_PATH=/keep bash -c 'echo "DEBUG=${PMIXCPP_DEBUG:-unset} LDP=$LD_LIBRARY_PATH"'
expect_eq "step with mpi.conf succeeds" 0 "$rc"
expect_match "PMIxCppDebug reached slurmstepd" 'DEBUG=info ' "$out"
expect_match "PMIxCppClientLib=no reached slurmstepd" 'LDP=/keep$' "$out"

# A bad value: the daemons refuse to start, naming the key.
if cluster_restart_with "PMIxCppTimeout=soon"; then
    fail "cluster started with PMIxCppTimeout=soon"
else
    pass "cluster refused to start with PMIxCppTimeout=soon"
fi
logs=$(cat "$PMIXCPP_CLUSTER_DIR"/log/*.log 2>/dev/null)
expect_match "the log names the bad key and value" 'mpi/pmixcpp: mpi.conf: PMIxCppTimeout=soon is invalid: expected an integer from 1 to 86400' "$logs"

cluster_restart_with "" || fail "cluster restart with an empty mpi.conf"
t_done
