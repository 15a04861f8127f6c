# Two steps of one job on different nodes talk after PMIx_Connect (tests/programs/pmix_xstep.c):
# step A (-N2 -n2 on n1,n2) and step B (-N2 -n4 on n3,n4) connect; B Gets keys A committed after
# the connect without a fence (direct modex across namespaces, through the steps' sruns); a
# second rank of a B node is answered from what its node server kept (shown by the server's debug
# log); a key nobody commits times out; a namespace that is no step of the job is NOT_FOUND at
# once; events of range SESSION reach every rank of B with A's source, CUSTOM naming B:1 only
# that rank, NAMESPACE none of B; once A ended, B's Gets of A's
# procs fail at once with PMIX_ERR_NOT_FOUND. Prints the latency of a cross-step direct-modex Get
# and event next to the same within one step across nodes (medians of the rounds; machine shared).
# Requires: make install; a cluster with >= 4 nodes (contrib/cluster.sh start 4).
. "$(dirname "$0")/lib.sh"
prog="${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}/libexec/pmixcpp/tests/pmix_xstep"
[ -x "$prog" ] || { fail "$prog not installed"; t_done; exit; }

# The servers' debug lines (which Gets were answered locally) need SlurmdDebug=debug.
PMIXCPP_SLURM_DEBUG=debug "$PMIXCPP_SRCDIR/contrib/cluster.sh" restart 4 >/dev/null 2>&1 || fail "cluster restart (debug)"
eval "$("$PMIXCPP_SRCDIR/contrib/cluster.sh" env)"
logs="$PMIXCPP_CLUSTER_DIR/log"
declare -A mark
for n in n1 n2 n3 n4; do mark[$n]=$(cat "$logs/slurmd.$n.log" 2>/dev/null | wc -l); done
new_log() { tail -n +"$((${mark[$1]} + 1))" "$logs/slurmd.$1.log" 2>/dev/null; }

rounds=15
t0=$SECONDS
out=$(SLURM_PMIXCPP_DEBUG=4 SLURM_PMIXCPP_TRANSPORT=tcp timeout -k 5 180 salloc -N4 -n8 --ntasks-per-node=2 bash -c \
    "srun --overlap --mpi=pmixcpp -w n1,n2 -N2 -n2 $prog A x$$ $rounds & \
     srun --overlap --mpi=pmixcpp -w n3,n4 -N2 -n4 --ntasks-per-node=2 $prog B x$$ $rounds; wait" 2>&1)
elapsed=$((SECONDS - t0))
expect_eq "all 6 ranks of both steps passed" 6 "$(echo "$out" | grep -c '^RESULT-PASS rank')"
expect_no_match "no failed check" '^FAIL ' "$out"
a_ns=$(echo "$out" | sed -n 's/.*committed after the connect.*/&/p' | grep -o 'ranks of slurm\.[0-9.]*' | head -1 | sed 's/ranks of //')
[ -n "$a_ns" ] && pass "step A is $a_ns" || fail "no namespace of step A in the output"
expect_eq "direct modex across namespaces: a key committed after the connect, no fence (first rank of each B node)" 2 \
    "$(echo "$out" | grep -c 'PASS rank [0-9]*: first rank of the node: Get of the key each of the 2 ranks of .* committed after the connect -> right value')"
expect_eq "... and the second rank of each B node" 2 \
    "$(echo "$out" | grep -c 'PASS rank [0-9]*: second rank of the node: Get of the key each of the 2 ranks of .* committed after the connect -> right value')"
expect_eq "a key nobody commits -> PMIX_ERR_TIMEOUT within the Get's timeout" 4 \
    "$(echo "$out" | grep -c 'PASS rank [0-9]*: Get of a key nobody commits, PMIX_TIMEOUT 2 -> PMIX_ERR_TIMEOUT')"
expect_eq "a Get of a namespace that is no step of the job -> PMIX_ERR_NOT_FOUND at once" 4 \
    "$(echo "$out" | grep -c 'PASS rank [0-9]*: Get of a proc of a namespace that is no step of the job -> PMIX_ERR_NOT_FOUND')"
expect_eq "range SESSION: every rank of B ran its handler once" 4 "$(echo "$out" | grep -c 'PASS rank [0-9]*: range SESSION from .*want 1')"
expect_eq "range CUSTOM naming B:1: only that rank" 4 "$(echo "$out" | grep -c "PASS rank [0-9]*: range CUSTOM naming slurm")"
expect_match "... B:1 ran it" 'PASS rank 1: range CUSTOM naming slurm[0-9.]*:1: handler ran 1 time\(s\) \(want 1\)' "$out"
expect_eq "range NAMESPACE: none of B" 4 "$(echo "$out" | grep -c "PASS rank [0-9]*: range NAMESPACE of .* here (want 0)")"
expect_eq "the source of every event is A:0" 6 "$(echo "$out" | grep -c 'PASS rank [0-9]*: every event.s source was')"
expect_match "a Get of a proc of a finished step fails cleanly" 'PASS rank 0: Get of a proc of slurm[0-9.]* after it finished -> PMIX_ERR_NOT_FOUND' "$out"
expect_match "a Get of a proc of an ended step -> PMIX_ERR_NOT_FOUND at once" 'PASS rank 0: Get of a proc of the ended step slurm[0-9.]* -> PMIX_ERR_NOT_FOUND in [0-9]+ ms' "$out"
[ $elapsed -lt 120 ] && pass "done in $elapsed s" || fail "took $elapsed s"
echo "$out" | grep -E '^FAIL' | head -5 | sed 's/^/    /'

# The servers of B's nodes: each asked A's step once for late.0 (its first rank's Get), and
# answered its second rank from what it kept.
for n in n3 n4; do
    log=$(new_log $n)
    expect_eq "$n: one direct modex of late.0 from A's step" 1 \
        "$(echo "$log" | grep -c "get of late.0 of $a_ns:0: direct modex from its step")"
    got=$(echo "$log" | grep -c "get of late.0 of $a_ns:0 answered from the data of the other step held here")
    [ "$got" -ge 1 ] && pass "$n: the second Get of late.0 was answered by the node's server from what it kept ($got)" \
        || fail "$n: no Get of late.0 answered from the kept data"
done
# A's nodes answered B's direct modex requests as for another node of their own step.
expect_match "n1 answered a cross-step get" "cross-step get of late.0 of rank 0 answered" "$(new_log n1)"
expect_eq "no cross-step message dropped" 0 "$(for n in n1 n2 n3 n4; do new_log $n; done | grep -c 'dropped a message of another step\|cross-step message(s) for node')"

# Latency: medians over the rounds (one host, 2 cores, shared with other builds).
median() { sort -n | awk '{a[NR]=$1} END {if (NR) printf "%.2f (min %.2f)", (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2, a[1]; else print "-"}'; }
for what in GET EVENT; do
    same=$(echo "$out" | awk -v k="XS-$what-MS" '$1 == k && $2 == "same" {print $3}' | median)
    cross=$(echo "$out" | awk -v k="XS-$what-MS" '$1 == k && $2 == "cross" {print $3}' | median)
    echo "    $what latency (median of $rounds rounds, ms): same step across nodes $same, other step $cross"
done
"$PMIXCPP_SRCDIR/contrib/cluster.sh" restart >/dev/null 2>&1 || fail "cluster restart (default log level)"
t_done
