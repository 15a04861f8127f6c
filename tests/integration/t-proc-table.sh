# PMIx_Query_info(PMIX_QUERY_PROC_TABLE) across nodes (tests/programs/pmix_ptable.c): rank 0
# compares every row with what each rank published (getpid(), its node), remote nodes included,
# in the v4.1 PMIX_QUERY_RESULTS form; then ranks end with exit status 10 + rank (one per node
# live, and a whole node whose part of the step ends) and rank 0 sees TERM_NON_ZERO and each exit
# code while the others are still RUNNING. Over UCX (default) and TCP. And a node whose slurmstepd
# is stopped: the query ends after its PMIX_TIMEOUT with partial success, that node's ranks
# COMM_FAILED.
# Requires: make install; a cluster with >= 3 nodes.
. "$(dirname "$0")/lib.sh"
prog="${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}/libexec/pmixcpp/tests/pmix_ptable"
[ -x "$prog" ] || { fail "$prog not installed"; t_done; exit; }

run_srun 120 --mpi=pmixcpp -N3 --ntasks-per-node=2 "$prog"
expect_eq "-N3 x2: exit status" 0 "$rc"
expect_eq "-N3 x2: rank 0 checked every row" 1 "$(echo "$out" | grep -c '^RESULT-PASS rank 0')"
expect_match "-N3 x2: the 4 ranks on other nodes have their real pids" '^REMOTE-PIDS 4 of 4$' "$out"
expect_no_match "-N3 x2: no row with pid 0" '^PTABLE rank [0-9]+ pid 0 ' "$out"
expect_eq "-N3 x2: rows on 3 hosts" 3 "$(echo "$out" | grep '^PTABLE rank' | awk '{print $7}' | sort -u | wc -l)"
expect_no_match "-N3 x2: no failed check" '^FAIL ' "$out"
echo "$out" | grep -E '^(FAIL|PTABLE rank)' | head -8 | sed 's/^/    /'

for transport in ucx tcp; do
    SLURM_PMIXCPP_TRANSPORT=$transport run_srun 120 --mpi=pmixcpp -N3 --ntasks-per-node=2 "$prog" exit
    # ranks 1, 3 (local rank 1), 4 and 5 (the last node) end with 10 + rank: srun reports that
    expect_match "$transport: srun reports the ranks' exit status" '^(1[0-9]|[2-9][0-9])$' "$rc"
    expect_eq "$transport: 4 ranks left early" 4 "$(echo "$out" | grep -c '^LEAVING rank')"
    expect_match "$transport: rank 0 saw the 4 ended ranks" '^ENDED-RANKS 4$' "$out"
    expect_match "$transport: rank 3 (node 2, live): TERM_NON_ZERO, exit 13" \
        '^PTABLE-AFTER rank 3 pid [1-9][0-9]* host [^ ]+ state [^ ]*TERM_NON_ZERO exit 13$' "$out"
    expect_match "$transport: rank 5 (the last node, ended): exit 15" '^PTABLE-AFTER rank 5 pid [1-9][0-9]* host [^ ]+ state [^ ]*TERM_NON_ZERO exit 15$' "$out"
    expect_match "$transport: rank 2 still runs" '^PTABLE-AFTER rank 2 pid [1-9][0-9]* host [^ ]+ state [^ ]*RUNNING exit 0$' "$out"
    expect_eq "$transport: the ranks left passed" 2 "$(echo "$out" | grep -c '^RESULT-PASS rank [02]')"
    expect_no_match "$transport: no failed check" '^FAIL ' "$out"
    echo "$out" | grep -E '^(FAIL|PTABLE-AFTER)' | head -8 | sed 's/^/    /'
done
# A node that does not answer: its slurmstepd stopped (SIGSTOP) while rank 0 asks with a 3 s
# timeout; resumed afterwards.
log="$PMIXCPP_CLUSTER_DIR.ptable-silent.log"
flag="$PMIXCPP_CLUSTER_DIR.ptable-silent.go"
rm -f "$log" "$flag"
SLURM_PMIXCPP_DEBUG=1 timeout -k 5 120 srun --mpi=pmixcpp -N3 --ntasks-per-node=2 "$prog" silent "$flag" > "$log" 2>&1 &
spid=$!
for _ in $(seq 300); do grep -q '^STEPD ' "$log" 2>/dev/null && break; sleep 0.1; done
stepd=$(awk '/^STEPD /{print $2; exit}' "$log")
if [ -n "$stepd" ] && grep -q slurmstepd "/proc/$stepd/comm" 2>/dev/null; then
    kill -STOP "$stepd"
    touch "$flag"
    for _ in $(seq 300); do grep -q '^QUERY-DONE' "$log" && break; sleep 0.1; done
    kill -CONT "$stepd"
else
    fail "silent node: no slurmstepd pid from rank 2 ($stepd)"
    touch "$flag"
fi
wait $spid
rc=$?
out=$(cat "$log")
rm -f "$log" "$flag"
expect_eq "silent node: exit status" 0 "$rc"
expect_match "silent node: partial success after the 3 s timeout" '^QUERY-DONE PMIX_QUERY_PARTIAL_SUCCESS after [3-9]\.[0-9] s$' "$out"
expect_match "silent node: its ranks pid 0, COMM_FAILED" '^PTABLE-SILENT rank 2 node 1 pid 0 state PMIX_PROC_STATE_COMM_FAILED$' "$out"
expect_match "silent node: the others intact" '^PTABLE-SILENT rank 4 node 2 pid [1-9][0-9]* state PMIX_PROC_STATE_RUNNING$' "$out"
expect_eq "silent node: every rank passed" 6 "$(echo "$out" | grep -c '^RESULT-PASS rank')"
expect_match "silent node: the log names the node" 'process table: node n2: no answer within 3000 ms' \
    "$(grep -h 'process table' "$PMIXCPP_CLUSTER_DIR"/log/slurmd.*.log 2>/dev/null | tail -3)"
echo "$out" | grep -E '^(FAIL|QUERY-DONE)' | head -8 | sed 's/^/    /'
expect_eq "no step left" "" "$(steps_left 10)"
t_done
