# Scheduler side: the fabric cost matrix from Slurm's topology/tree (read with libslurm's
# slurm_load_topo by pmixcpp_info in scheduler mode), its API statuses, the update protocol on
# a topology change (contrib/cluster.sh reconfigure), and the hwloc inventory against lstopo/hwloc-calc.
# Requires: the installed pmixcpp_info ($PMIXCPP_PREFIX/bin), hwloc (lstopo-no-graphics, hwloc-calc).
. "$(dirname "$0")/lib.sh"

info="${PMIXCPP_PREFIX:-/usr/local}/bin/pmixcpp_info"
[ -x "$info" ] || { fail "no pmixcpp_info in ${PMIXCPP_PREFIX:-/usr/local}/bin"; t_done; exit; }
topo="$PMIXCPP_CLUSTER_DIR.topology.conf"
printf 'SwitchName=s1 Nodes=n[1-2]\nSwitchName=s2 Nodes=n[3-4]\nSwitchName=spine Switches=s[1-2]\n' > "$topo"
PMIXCPP_SLURM_CONF_EXTRA="TopologyPlugin=topology/tree" PMIXCPP_TOPOLOGY_CONF="$topo" \
    "$PMIXCPP_SRCDIR/contrib/cluster.sh" restart 4 >/dev/null 2>&1 || fail "cluster restart with topology/tree"
eval "$("$PMIXCPP_SRCDIR/contrib/cluster.sh" env)"
etc=$("$PMIXCPP_SRCDIR/contrib/cluster.sh" conf-dir)

# Matrix, vertices, statuses.
out=$(PMIXCPP_FABRIC_POLL=0 timeout 60 "$info" --fabric --check 2>&1); rc=$?
expect_eq "pmixcpp_info --fabric --check exits 0" 0 "$rc"
expect_match "4 vertices" '^fabric plane default: 4 vertices$' "$out"
expect_match "vertex 0 is n1 on s1" '^vertex 0 node n1 device n1 switch s1$' "$out"
expect_match "vertex 3 is n4 on s2" '^vertex 3 node n4 device n4 switch s2$' "$out"
expect_match "row n1: same node 0, same switch 2, across the spine 4" '^ +0 +0 +2 +4 +4$' "$out"
expect_match "row n4: across the spine 4, same switch 2" '^ +3 +4 +4 +2 +0$' "$out"
expect_match "vertex/index round trip" '^check vertex/index round trip of 4 vertices: ok' "$out"
expect_match "out-of-range index: BAD_PARAM" '^check vertex out of range: ok \(PMIX_ERR_BAD_PARAM\)' "$out"
expect_match "NULL fabric: BAD_PARAM" '^check vertex info of a NULL fabric: ok' "$out"
expect_match "unknown plane: NOT_FOUND" '^check unknown network plane: ok \(PMIX_ERR_NOT_FOUND\)' "$out"
expect_match "without PMIX_SERVER_SCHEDULER: NOT_SUPPORTED" '^check register without PMIX_SERVER_SCHEDULER: ok' "$out"
expect_match "standard PMIx_Fabric_register reaches the scheduler context" '^check PMIx_Fabric_register in a scheduler process: ok' "$out"
expect_match "standard PMIx_Fabric_deregister frees it" '^check PMIx_Fabric_deregister twice: ok' "$out"
expect_match "only fabric events in a scheduler process" '^check event handler for a non-fabric event in a scheduler process: ok' "$out"
expect_no_match "no failed check" 'FAIL' "$out"

# The whole cluster in one command (srun, one task per node), as JSON, NICs as vertices of
# the matrix (before the reconfigure below drops n4 from the topology).
all=$(timeout 120 "$info" --inventory --cluster --json 2>&1)
expect_eq "cluster inventory has 4 nodes" 4 "$(printf '%s\n' "$all" | grep -o '"pmix.hname": "n[0-9]"' | sort -u | wc -l)"

one=$(timeout 60 "$info" --inventory --node n3 --json 2>&1)
expect_match "one node's inventory (--node n3)" '"pmix.hname": "n3"' "$one"
expect_no_match "only that node" '"pmix.hname": "n[124]"' "$one"

all=$(timeout 120 "$info" --inventory --cluster --fabric 2>&1)
expect_match "with inventories, vertices are the NICs hwloc reports" '^vertex 0 node n1 device eth0 switch s1$|^vertex 0 node n1 device [a-z]' "$all"

# Reconfigure: n4 leaves the topology -> UPDATE_PENDING, then UPDATED, then a 3x3 matrix. The
# watcher registers its handlers with PMIx_Register_event_handler; its pending handler completes
# half a second late, and the matrix must still be the old one then.
log="$PMIXCPP_CLUSTER_DIR.fabric-watch.log"
PMIXCPP_FABRIC_POLL=1 timeout 90 "$info" --fabric --watch 60 --until-update > "$log" 2>&1 &
watcher=$!
sleep 3
printf 'SwitchName=s1 Nodes=n[1-2]\nSwitchName=s2 Nodes=n3\nSwitchName=spine Switches=s[1-2]\n' > "$etc/topology.conf"
"$PMIXCPP_SRCDIR/contrib/cluster.sh" reconfigure >/dev/null 2>&1 || fail "cluster.sh reconfigure (slurmctld rereads topology.conf)"
wait $watcher
expect_eq "watcher saw the update" 0 "$?"
out=$(cat "$log")
events=$(grep '^event' "$log" | tr '\n' ' ')
expect_eq "UPDATE_PENDING then UPDATED" "event PMIX_FABRIC_UPDATE_PENDING event PMIX_FABRIC_UPDATED " "$events"
expect_match "the matrix is untouched until the pending handler completed" '^pending handler completes: matrix still has 4 vertices$' "$out"
expect_eq "pending handler completed before UPDATED" "pending handler completes: matrix still has 4 vertices" \
    "$(grep -A1 '^event PMIX_FABRIC_UPDATE_PENDING' "$log" | tail -1)"
expect_match "new matrix: 3 vertices" '^fabric plane default: 3 vertices$' "$out"
expect_match "new matrix row n3" '^ +2 +4 +4 +0$' "$out"

# Inventory of this node against hwloc's own tools.
inv=$(timeout 60 "$info" --inventory 2>&1)
expect_match "inventory cores = hwloc-calc" "^pmixcpp.inv.cores: $(hwloc-calc --number-of core machine:0)\$" "$inv"
expect_match "inventory PUs = hwloc-calc" "^pmixcpp.inv.pus: $(hwloc-calc --number-of pu machine:0)\$" "$inv"
expect_match "inventory packages = hwloc-calc" "^pmixcpp.inv.packages: $(hwloc-calc --number-of package machine:0)\$" "$inv"
expect_eq "inventory NUMA nodes = hwloc-calc" "$(hwloc-calc --number-of numanode machine:0)" \
    "$(printf '%s\n' "$inv" | grep -c '^ *pmixcpp.inv.numanode:')"
expect_eq "inventory NICs = lstopo" "$(lstopo-no-graphics --whole-io 2>/dev/null | grep -c 'Net \"')" \
    "$(printf '%s\n' "$inv" | grep -c '^ *pmix.fabdev:')"
json=$(timeout 60 "$info" --inventory --json 2>&1)
expect_match "inventory --json is one object" '^\{"pmix.hname": ' "$json"

"$PMIXCPP_SRCDIR/contrib/cluster.sh" restart >/dev/null 2>&1 || fail "cluster restart without topology"
rm -f "$topo" "$log"
t_done
