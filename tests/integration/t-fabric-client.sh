# PMIx_Fabric_register / _update / _deregister in application processes under srun --mpi=pmixcpp:
# the matrix comes through the step's server from srun's side (Slurm's switch topology, loaded
# once per srun). Topology: two leaf switches (n1 n2 | n3 n4) under one spine. Also: the same
# matrix as the scheduler API (pmixcpp_info --fabric), PMIX_ERR_NOT_AVAILABLE without topology.
# Then PMIX_FABRIC_UPDATED in application processes after a topology change (contrib/cluster.sh reconfigure).
# Requires: make install (pmix_fabric test program, pmixcpp_info).
. "$(dirname "$0")/lib.sh"
prog="${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}/libexec/pmixcpp/tests/pmix_fabric"
info="$PMIXCPP_PREFIX/bin/pmixcpp_info"
[ -x "$prog" ] || { fail "$prog not installed"; t_done; exit; }

# Without a switch topology (the cluster run.sh started): a clear status, no hang.
run_srun 60 --mpi=pmixcpp -N1 -n1 "$prog" none
expect_eq "no topology: exit status" 0 "$rc"
expect_match "no topology: PMIX_ERR_NOT_AVAILABLE" '^PASS rank 0: PMIx_Fabric_register\(&f, NULL, 0\) -> PMIX_ERR_NOT_AVAILABLE' "$out"

topo="$PMIXCPP_CLUSTER_DIR.topology.conf"
printf 'SwitchName=s1 Nodes=n[1-2]\nSwitchName=s2 Nodes=n[3-4]\nSwitchName=spine Switches=s[1-2]\n' > "$topo"
PMIXCPP_SLURM_CONF_EXTRA="TopologyPlugin=topology/tree" PMIXCPP_TOPOLOGY_CONF="$topo" \
    "$PMIXCPP_SRCDIR/contrib/cluster.sh" restart 4 >/dev/null 2>&1 || fail "cluster restart with topology/tree"
eval "$("$PMIXCPP_SRCDIR/contrib/cluster.sh" env)"

run_srun 120 --mpi=pmixcpp -N4 --ntasks-per-node=2 "$prog"
expect_eq "pmix_fabric exit status" 0 "$rc"
expect_eq "all 8 ranks passed" 8 "$(echo "$out" | grep -c '^RESULT-PASS rank')"
expect_no_match "no failed check" '^FAIL ' "$out"
expect_match "4 vertices" '^rank 0 fabric: 4 vertices$' "$out"
expect_match "row n1: 0, same switch 2, across the spine 4" '^rank 0 cost 0: 0 2 4 4$' "$out"
expect_match "row n2" '^rank 0 cost 1: 2 0 4 4$' "$out"
expect_match "row n3" '^rank 0 cost 2: 4 4 0 2$' "$out"
expect_match "row n4" '^rank 0 cost 3: 4 4 2 0$' "$out"
expect_eq "every rank got the same matrix" 1 \
    "$(echo "$out" | grep '^rank [0-9]* cost' | sed 's/^rank [0-9]* //' | sort | uniq -c | awk '{print $1}' | sort -u | wc -l)"

# The scheduler API's matrix over the same topology (pmixcpp_info --fabric prints "  i  c0 c1 ...").
sched=$(PMIXCPP_FABRIC_POLL=0 timeout 60 "$info" --fabric 2>&1 | grep -E '^ +[0-9]+( +[0-9]+){4}$' |
        awk '{printf "cost %s:", $1; for (i = 2; i <= NF; i++) printf " %s", $i; printf "\n"}')
client=$(echo "$out" | grep '^rank 0 cost' | sed 's/^rank 0 //')
expect_eq "same matrix as the scheduler API" "$sched" "$client"
echo "$out" | grep -E '^(FAIL|RESULT)' | sed 's/^/    /'

# pmixcpp_info --fabric --step: the same through the tool, as a process of a step.
run_srun 60 --mpi=pmixcpp -N1 -n1 "$info" --fabric --step
expect_eq "pmixcpp_info --fabric --step exit status" 0 "$rc"
expect_match "pmixcpp_info --fabric --step: 4 vertices" '^fabric plane default: 4 vertices$' "$out"
expect_match "pmixcpp_info --fabric --step: row n3" '^ +2 +4 +4 +0 +2$' "$out"

# PMIx_Fabric_update after a topology change with n4 gone from the topology: a 3x3 matrix.
flag="$PMIXCPP_CLUSTER_DIR.fabric-update.flag"
ulog="$PMIXCPP_CLUSTER_DIR.fabric-update.log"
rm -f "$flag"
: > "$ulog"
timeout -k 5 150 srun --mpi=pmixcpp -N2 --ntasks-per-node=1 "$prog" update "$flag" > "$ulog" 2>&1 &
job=$!
for i in $(seq 1 300); do [ "$(grep -c 'before update' "$ulog")" -ge 2 ] && break; sleep 0.1; done
etc=$("$PMIXCPP_SRCDIR/contrib/cluster.sh" conf-dir)
printf 'SwitchName=s1 Nodes=n[1-2]\nSwitchName=s2 Nodes=n3\nSwitchName=spine Switches=s[1-2]\n' > "$etc/topology.conf"
"$PMIXCPP_SRCDIR/contrib/cluster.sh" reconfigure >/dev/null 2>&1 || fail "cluster.sh reconfigure (slurmctld rereads topology.conf)"
sleep 1
touch "$flag"
wait $job
expect_eq "update step exit status" 0 "$?"
uout=$(cat "$ulog")
expect_match "before the update: 4 vertices" '^rank 0 before update: 4 vertices$' "$uout"
expect_match "after the update: 3 vertices" '^rank 0 after update: 3 vertices$' "$uout"
expect_match "updated row n3: across the spine 4, itself 0" '^rank 0 updated cost 2: 4 4 0$' "$uout"
expect_eq "both ranks passed the update" 2 "$(echo "$uout" | grep -c '^RESULT-PASS rank')"
rm -f "$flag" "$ulog"

# PMIX_FABRIC_UPDATED: a process that registered a fabric and a handler gets the event when
# slurmctld's topology changes (srun polls it every PMIxCppFabricPoll s once a fabric is
# registered); its fabric keeps the old matrix until PMIx_Fabric_update, which shows the new one.
: > "$ulog"
timeout -k 5 150 env SLURM_PMIXCPP_FABRICPOLL=1 srun --mpi=pmixcpp -N2 --ntasks-per-node=1 "$prog" event > "$ulog" 2>&1 &
job=$!
for i in $(seq 1 300); do [ "$(grep -c 'before update' "$ulog")" -ge 2 ] && break; sleep 0.1; done
expect_match "event: before, 3 vertices" '^rank 0 before update: 3 vertices$' "$(cat "$ulog")"
printf 'SwitchName=s1 Nodes=n1\nSwitchName=s2 Nodes=n[2-4]\nSwitchName=spine Switches=s[1-2]\n' > "$etc/topology.conf"
t0=$(date +%s.%N)
"$PMIXCPP_SRCDIR/contrib/cluster.sh" reconfigure >/dev/null 2>&1 || fail "cluster.sh reconfigure (slurmctld rereads topology.conf)"
wait $job
expect_eq "event step exit status" 0 "$?"
uout=$(cat "$ulog")
echo "$uout" | grep -E '^(FAIL|RESULT)' | sed 's/^/    /'
awk -v t="$t0" -v e="$(date +%s.%N)" 'BEGIN { printf "    reconfigure -> both ranks updated and done: %.1f s\n", e - t }'
expect_eq "event: both ranks got PMIX_FABRIC_UPDATED" 2 "$(echo "$uout" | grep -c '^rank [01] got PMIX_FABRIC_UPDATED$')"
expect_match "event: after the update, 4 vertices" '^rank 0 after update: 4 vertices$' "$uout"
expect_match "event: updated row n2: across the spine 4, itself 0, same switch 2" '^rank 1 updated cost 1: 4 0 2 2$' "$uout"
expect_eq "event: both ranks passed" 2 "$(echo "$uout" | grep -c '^RESULT-PASS rank')"
rm -f "$ulog"

"$PMIXCPP_SRCDIR/contrib/cluster.sh" restart >/dev/null 2>&1 || fail "cluster restart without topology"
rm -f "$topo"
t_done
