# Direct modex under the cap on open node connections (PMIxCppNodeConnections): pmix_multinode
# (every rank Gets every other rank's keys, full and direct modex, fences) at -N6 over TCP with
# a cap of 1 and of 2 open connections per server, and over UCX with a cap of 1 endpoint, so
# connections (endpoints) are closed and reopened throughout the run; every rank passes, the
# servers' logs show the idle closes on both sides (the closer and the peer that took the close
# for no loss) and no node lost.
# Requires: make install; a cluster with >= 6 nodes (contrib/cluster.sh start 6).
. "$(dirname "$0")/lib.sh"
prog="${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}/libexec/pmixcpp/tests/pmix_multinode"
[ -x "$prog" ] || { fail "$prog not installed"; t_done; exit; }
# The servers' summary lines (verbose) need SlurmdDebug=verbose or more.
PMIXCPP_SLURM_DEBUG=debug "$PMIXCPP_SRCDIR/contrib/cluster.sh" restart 6 >/dev/null 2>&1 || fail "cluster restart (debug)"
eval "$("$PMIXCPP_SRCDIR/contrib/cluster.sh" env)"

for run in tcp:1 tcp:2 ucx:1; do
    tr=${run%:*} cap=${run#*:}
    mark=$(log_mark)
    out=$(env SLURM_PMIXCPP_DEBUG=3 SLURM_PMIXCPP_TRANSPORT=$tr SLURM_PMIXCPP_NODECONNECTIONS=$cap \
        timeout -k 5 240 srun --mpi=pmixcpp -N6 --ntasks-per-node=4 "$prog" 2 2>&1)
    rc=$?
    cap="$tr $cap"
    expect_eq "cap $cap: exit status" 0 "$rc"
    expect_eq "cap $cap: all 24 ranks passed" 24 "$(echo "$out" | grep -c '^RESULT-PASS rank')"
    expect_no_match "cap $cap: no failed check" '^FAIL ' "$out"
    echo "$out" | grep -E '^FAIL' | head -5 | sed 's/^/    /'
    # Each server's summary comes at its step's end, which can follow srun's by a moment.
    for _ in $(seq 100); do
        new=$(logs_since "$mark")
        [ "$(echo "$new" | grep -c 'our node connections: at most')" -ge 6 ] && break
        sleep 0.2
    done
    # Each server's summary at its end: "... N closed idle and reopened on need; peers closed M ..."
    closes=$(echo "$new" | grep -o '[0-9]* closed idle and reopened' | awk '{s += $1} END {print s + 0}')
    taken=$(echo "$new" | grep -o 'peers closed [0-9]* idle' | awk '{s += $3} END {print s + 0}')
    peak=$(echo "$new" | grep -o 'at most [0-9]* open (cap' | awk '$3 > m {m = $3} END {print m + 0}')
    echo "  cap $cap: $closes idle connections closed, $taken closes seen by their peers, at most $peak open on a server"
    [ "$closes" -gt 0 ] && pass "cap $cap: idle connections were closed and reopened" ||
        fail "cap $cap: no idle connection was closed"
    [ "$taken" -gt 0 ] && pass "cap $cap: the peers took the closes for no loss" ||
        fail "cap $cap: no peer saw an idle close"
    expect_no_match "cap $cap: no node lost" 'transport: node .* lost' "$new"
    expect_eq "cap $cap: every server ran the $tr transport" 6 "$(echo "$new" | grep -c "our node connections: at most" )"
    expect_eq "cap $cap: every summary is the $tr transport's" 6 "$(echo "$new" | grep -c "$tr transport: our node connections: at most")"
done
t_done
