# The tree fence follows Slurm's switch topology: with topology/tree srun hands each node its leaf
# switch and the nodes under one switch form a subtree. Topology: two leaf switches with
# interleaved nodes (s1 = n1 n3, s2 = n2 n4), where the flat k-ary tree (n1 parent of all) would
# cross the spine three times per direction and the topology-aware one once (with a fan-out below
# 3: at 8 the flat tree is one level, which the switches cannot improve). The ring keeps each
# switch's nodes together (n1 n3 n2 n4: the spine twice per lap instead of four times). Checks
# the shapes each slurmstepd reports and that fences (whole-job, subsets, concurrent, modex)
# still pass.
# Requires: make install; a cluster with 4 nodes.
. "$(dirname "$0")/lib.sh"
prog="${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}/libexec/pmixcpp/tests/pmix_multinode"
[ -x "$prog" ] || { fail "$prog not installed"; t_done; exit; }

topo="$PMIXCPP_CLUSTER_DIR.topology.conf"
printf 'SwitchName=s1 Nodes=n1,n3\nSwitchName=s2 Nodes=n2,n4\nSwitchName=spine Switches=s[1-2]\n' > "$topo"
PMIXCPP_SLURM_DEBUG=verbose PMIXCPP_SLURM_CONF_EXTRA="TopologyPlugin=topology/tree" PMIXCPP_TOPOLOGY_CONF="$topo" \
    "$PMIXCPP_SRCDIR/contrib/cluster.sh" restart 4 >/dev/null 2>&1 || fail "cluster restart with topology/tree"
eval "$("$PMIXCPP_SRCDIR/contrib/cluster.sh" env)"
logs="$PMIXCPP_CLUSTER_DIR/log"

declare -A mark
mark_logs() { for n in n1 n2 n3 n4; do mark[$n]=$(cat "$logs/slurmd.$n.log" 2>/dev/null | wc -l); done; }
new_lines() { tail -n +"$((${mark[$1]} + 1))" "$logs/slurmd.$1.log" 2>/dev/null; }
shape_of() { new_lines "$1" | grep -o 'tree fence follows the switches: .*' | tail -1; }
ring_of() { new_lines "$1" | grep -o 'ring fence follows the switches: .*' | tail -1; }

run_case() {  # label rounds env...
    local label=$1 rounds=$2; shift 2
    mark_logs
    out=$(env SLURM_PMIXCPP_DEBUG=3 "$@" timeout -k 5 180 srun --mpi=pmixcpp -N4 --ntasks-per-node=4 "$prog" "$rounds" 2>&1)
    rc=$?
    expect_eq "$label: exit status" 0 "$rc"
    expect_eq "$label: all 16 ranks passed" 16 "$(echo "$out" | grep -c '^RESULT-PASS rank')"
    expect_no_match "$label: no failed check" '^FAIL ' "$out"
    echo "$out" | grep -E '^FAIL' | head -5 | sed 's/^/    /'
}

# Width 8: the flat tree is one level (every node a child of n1); grouping could only add one.
run_case "tree width 8" 3 SLURM_PMIXCPP_FENCE=tree SLURM_PMIXCPP_TREEWIDTH=8
expect_eq "width 8: one-level tree, switches not used" "" "$(shape_of n1)"
expect_match "width 8: the log says why" 'tree fence over 4 nodes is one level \(width 8\)' "$(new_lines n1)"

run_case "tree width 2" 3 SLURM_PMIXCPP_FENCE=tree SLURM_PMIXCPP_TREEWIDTH=2
expect_eq "n1 is the root, n3 (its switch) and n2 (the other switch's first node) its children" \
    "tree fence follows the switches: parent (root), children n3,n2" "$(shape_of n1)"
expect_eq "n3 hangs under n1 (same switch)" "tree fence follows the switches: parent n1, children (none)" "$(shape_of n3)"
expect_eq "n2 hangs under n1 across the spine, n4 under n2" \
    "tree fence follows the switches: parent n1, children n4" "$(shape_of n2)"
expect_eq "n4 hangs under n2 (same switch)" "tree fence follows the switches: parent n2, children (none)" "$(shape_of n4)"

run_case "ring" 3 SLURM_PMIXCPP_FENCE=ring
expect_eq "ring: n1 passes to n3 (same switch), hears from n4" "ring fence follows the switches: previous n4, next n3" "$(ring_of n1)"
expect_eq "ring: n3 passes across the spine to n2" "ring fence follows the switches: previous n1, next n2" "$(ring_of n3)"
expect_eq "ring: n2 passes to n4 (same switch)" "ring fence follows the switches: previous n3, next n4" "$(ring_of n2)"
expect_eq "ring: n4 closes the ring across the spine to n1" "ring fence follows the switches: previous n2, next n1" "$(ring_of n4)"

run_case "auto (ring for large contributions)" 2 SLURM_PMIXCPP_FENCE=auto SLURM_PMIXCPP_RINGTHRESHOLD=0
run_case "PMIxCppTreeTopology=no" 2 SLURM_PMIXCPP_FENCE=tree SLURM_PMIXCPP_TREEWIDTH=2 SLURM_PMIXCPP_TREETOPOLOGY=no
expect_eq "no switch-shaped tree when disabled" "" "$(shape_of n1)"
expect_eq "no switch-ordered ring when disabled" "" "$(ring_of n1)"

"$PMIXCPP_SRCDIR/contrib/cluster.sh" restart >/dev/null 2>&1 || fail "cluster restart without topology"
rm -f "$topo"
t_done
