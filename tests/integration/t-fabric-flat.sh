# Scheduler side on a cluster without a switch topology (no TopologyPlugin, no topology.conf): the
# fabric is flat, one vertex per node of slurm.conf at a uniform cost, not an empty fabric. Checked
# with pmixcpp_info --fabric and with the example scheduler of contrib/examples, built for both
# pmix_fabric_t layouts (fabric.info, and commcost/nverts with -DPMIXCPP_FABRIC_SEED_LAYOUT), on 4
# nodes and again on 3 (the vertices follow slurm.conf).
# Requires: the installed pmixcpp_info, headers and libpmix ($PMIXCPP_PREFIX), cc, make.
. "$(dirname "$0")/lib.sh"

info="${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}/bin/pmixcpp_info"
[ -x "$info" ] || { fail "no pmixcpp_info in $PMIXCPP_PREFIX/bin"; t_done; exit; }
command -v cc >/dev/null 2>&1 && command -v make >/dev/null 2>&1 || { echo "  SKIP: no cc or make"; t_done; exit; }
work=$(mktemp -d /tmp/pmixcpp-fabric-flat.XXXXXX)
cleanup() {
    rm -rf "$work"
    "$PMIXCPP_SRCDIR/contrib/cluster.sh" restart >/dev/null 2>&1 || true
}
trap cleanup EXIT

if make -s -C "$PMIXCPP_SRCDIR/contrib/examples" OUT="$work" PMIXCPP_PREFIX="$PMIXCPP_PREFIX" >"$work/make.out" 2>&1; then
    pass "contrib/examples: fabric_scheduler and fabric_scheduler_seed build"
else
    fail "contrib/examples make: $(cat "$work/make.out")"
fi
expect_match "the seed build links the seed entry point" 'PMIx_server_register_fabric_seed' \
    "$(nm -D --undefined-only "$work/fabric_scheduler_seed" 2>&1)"
expect_no_match "the default build does not" 'PMIx_server_register_fabric_seed' \
    "$(nm -D --undefined-only "$work/fabric_scheduler" 2>&1)"

for nodes in 4 3; do
    "$PMIXCPP_SRCDIR/contrib/cluster.sh" restart "$nodes" >/dev/null 2>&1 || fail "cluster restart with $nodes nodes"
    eval "$("$PMIXCPP_SRCDIR/contrib/cluster.sh" env)"
    etc=$("$PMIXCPP_SRCDIR/contrib/cluster.sh" conf-dir)
    conf_nodes=$(grep -c '^NodeName=' "$etc/slurm.conf")
    expect_eq "$nodes nodes: slurm.conf defines $nodes nodes" "$nodes" "$conf_nodes"
    expect_no_match "$nodes nodes: no TopologyPlugin in slurm.conf" '^TopologyPlugin=topology/tree' "$(cat "$etc/slurm.conf")"
    [ -e "$etc/topology.conf" ] && fail "$nodes nodes: a topology.conf is there"

    out=$(PMIXCPP_FABRIC_POLL=0 timeout 60 "$info" --fabric --check 2>&1); rc=$?
    expect_eq "$nodes nodes: pmixcpp_info --fabric --check exits 0" 0 "$rc"
    expect_match "$nodes nodes: $nodes vertices" "^fabric plane default: $nodes vertices\$" "$out"
    expect_match "$nodes nodes: vertex 0 is n1 on the flat switch" '^vertex 0 node n1 device n1 switch flat$' "$out"
    expect_match "$nodes nodes: vertex/index round trip" "^check vertex/index round trip of $nodes vertices: ok" "$out"
    expect_no_match "$nodes nodes: no failed check" 'FAIL' "$out"
    # uniform: 0 on the diagonal, 2 everywhere else
    uniform=$(printf '%s\n' "$out" | awk -v n="$nodes" '/^ +[0-9]+( +[0-9]+)+$/ && NF == n + 1 {
        r = $1; for (j = 2; j <= NF; ++j) if ($j != (j - 2 == r ? 0 : 2)) bad++; rows++ }
        END { print rows + 0, bad + 0 }')
    expect_eq "$nodes nodes: $nodes rows, every cost 2 off the diagonal" "$nodes 0" "$uniform"

    for p in fabric_scheduler fabric_scheduler_seed; do
        [ -x "$work/$p" ] || continue
        res=$(timeout 60 "$work/$p" 3 2>&1); rc=$?
        expect_eq "$nodes nodes: $p 3 exits 0" 0 "$rc"
        expect_match "$nodes nodes: $p sees $nodes vertices" "^vertices $nodes\$" "$res"
        expect_match "$nodes nodes: $p row 0 is uniform" "^row 0: 0( 2){$((nodes - 1))}\$" "$res"
        expect_match "$nodes nodes: $p places 3 nodes" '^placement: n[0-9] n[0-9] n[0-9]$' "$res"
        expect_match "$nodes nodes: $p placement cost 3 pairs x 2" '^cost 6$' "$res"
        expect_no_match "$nodes nodes: $p reports no error" '^error' "$res"
        printf '%s\n' "$res" | grep -E '^(layout|placement)' | sed "s/^/    $p: /"
    done
    [ -x "$work/fabric_scheduler_seed" ] && [ -x "$work/fabric_scheduler" ] && expect_match \
        "$nodes nodes: the seed build reads commcost/nverts" '^layout seed' "$(timeout 60 "$work/fabric_scheduler_seed" 1 2>&1)"
done
t_done
