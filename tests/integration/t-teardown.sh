# A normal end is quiet: steps of 32 nodes (2 ranks each) whose every rank reads every other rank's
# data (direct modex to every node) and gets an event end with no error line on any node, no lost
# node and no NODE_DOWN, over the UCX node transport and over TCP. Ten steps per transport; a
# false node loss at teardown used to show in about one step of thirty (UCX: "Endpoint timeout").
# Then five steps per transport whose tasks (`true`) end before the nodes know each other.
# The cluster is restarted with 32 nodes if it has fewer, and restored at the end.
# PMIXCPP_TEARDOWN_STEPS=100 runs the long version (about 5 min for UCX, 2.5 min for TCP here).
. "$(dirname "$0")/lib.sh"
prog="${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}/libexec/pmixcpp/tests/pmix_apps"
[ -x "$prog" ] || { fail "$prog not installed"; t_done; exit; }
cluster="$PMIXCPP_SRCDIR/contrib/cluster.sh"
steps=${PMIXCPP_TEARDOWN_STEPS:-10}

nodes_before=$(sinfo -h -o '%D' 2>/dev/null | head -1)
if [ "${nodes_before:-0}" -lt 32 ]; then
    "$cluster" restart 32 >/dev/null 2>&1 || { fail "cluster did not restart with 32 nodes"; t_done; exit; }
    restored() { "$cluster" restart "${nodes_before:-4}" >/dev/null 2>&1; }
    trap restored EXIT
fi

# log_lines: the slurmd logs' (and daemons' stderr) total line count, to read only what follows
logs() { cat "$PMIXCPP_CLUSTER_DIR"/log/slurmd.*.log "$PMIXCPP_CLUSTER_DIR"/log/slurmd.*.out 2>/dev/null; }
for transport in ucx tcp; do
    start=$(logs | wc -l)
    ok=0; bad_out=""
    for i in $(seq 1 "$steps"); do
        SLURM_PMIXCPP_TRANSPORT=$transport run_srun 120 --mpi=pmixcpp -N32 --ntasks-per-node=2 "$prog"
        if [ "$rc" -eq 0 ] && [ "$(printf '%s\n' "$out" | grep -c '^RESULT-PASS rank')" -eq 64 ] &&
            ! printf '%s\n' "$out" | grep -Eqi 'error|lost|unreachable|NODE_DOWN'; then
            ok=$((ok + 1))
        else
            bad_out=$(printf '%s\n' "$out" | grep -v '^PASS' | head -10)
        fi
    done
    expect_eq "$transport: $steps steps of 32 nodes ended normally, quietly, every rank passed" "$steps" "$ok"
    [ -n "$bad_out" ] && printf '%s\n' "$bad_out" | sed 's/^/    /'
    # Tasks that never use PMIx and end at once: nodes finish while the others still learn their
    # addresses, greet them or are in their handshakes. A normal end all the same: no line at all.
    quick_ok=0; bad_out=""
    for i in $(seq 1 5); do
        SLURM_PMIXCPP_TRANSPORT=$transport run_srun 60 --mpi=pmixcpp -N32 --ntasks-per-node=2 true
        out=$(printf '%s\n' "$out" | grep -Ev '^srun: job [0-9]+ (queued and waiting for|has been allocated) resources$')
        if [ "$rc" -eq 0 ] && [ -z "$out" ]; then quick_ok=$((quick_ok + 1)); else bad_out=$(printf '%s\n' "$out" | head -10); fi
    done
    expect_eq "$transport: 5 steps of 32 nodes whose tasks end at once ended with status 0 and no line" 5 "$quick_ok"
    [ -n "$bad_out" ] && printf '%s\n' "$bad_out" | sed 's/^/    /'
    errors=$(logs | tail -n +"$((start + 1))" | grep -Ei 'error|lost|unreachable|Endpoint timeout' | grep -v 'Replayed credential')
    expect_eq "$transport: error lines in the slurmd logs" 0 "$(printf '%s' "$errors" | grep -c .)"
    [ -n "$errors" ] && printf '%s\n' "$errors" | head -10 | cut -c1-240 | sed 's/^/    /'
done
expect_eq "no step left running" "" "$(steps_left 30)"
t_done
