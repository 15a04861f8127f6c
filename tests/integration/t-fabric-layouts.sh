# The two pmix_fabric_t layouts a scheduler may be written to, on a topology/tree cluster:
#  - the PMIx standard v4.0 scheduler chapter's (fabric.commcost[i][j], fabric.nverts), compiled
#    against pmixcpp's pmix_server.h with -DPMIXCPP_FABRIC_SEED_LAYOUT
#  - OpenPMIx's (fabric.info / ninfo), compiled against Debian's OpenPMIx headers: 4.2.2 on
#    Debian 12, 5.0.7 on Debian 13 (whose pmix_fabric_t is the same struct)
# The same program source (tests/programs/sched_fabric.c) in both forms, both linked to pmixcpp's
# libpmix.so.2: same size of the struct, the same matrix after PMIx_server_register_fabric, and
# after PMIX_FABRIC_UPDATED (a changed topology.conf, contrib/cluster.sh reconfigure).
# Requires: cc, the installed headers and library ($PMIXCPP_PREFIX), libpmix-dev; 4 nodes.
. "$(dirname "$0")/lib.sh"
command -v cc >/dev/null 2>&1 || { echo "  SKIP: no C compiler"; t_done; exit; }
src="$PMIXCPP_SRCDIR/tests/programs/sched_fabric.c"
ourlib="${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}/lib/pmixcpp"
work=$(mktemp -d /tmp/pmixcpp-fabric-layouts.XXXXXX)
topo="$PMIXCPP_CLUSTER_DIR.topology.conf"
cleanup() {
    rm -rf "$work" "$topo"
    "$PMIXCPP_SRCDIR/contrib/cluster.sh" restart >/dev/null 2>&1 || true
}
trap cleanup EXIT

if cc -O1 -Wall -DPMIXCPP_FABRIC_SEED_LAYOUT -I"$PMIXCPP_PREFIX/include" -o "$work/seed" "$src" \
      -L"$ourlib" -Wl,-rpath,"$ourlib" -lpmix -lpthread 2>"$work/seed.err"; then
    pass "the seed-layout scheduler compiles against pmixcpp's pmix_server.h"
else
    fail "seed layout: $(cat "$work/seed.err")"
fi
sys_cflags=$(pkg-config --cflags pmix 2>/dev/null)
sys_version=$(pkg-config --modversion pmix 2>/dev/null)
if [ -z "$sys_cflags" ]; then
    echo "  SKIP: no OpenPMIx headers (libpmix-dev) for the OpenPMIx-layout program"
else
    # shellcheck disable=SC2086
    if cc -O1 -Wall $sys_cflags -o "$work/sys" "$src" -L"$ourlib" -Wl,-rpath,"$ourlib" -lpmix -lpthread \
          2>"$work/sys.err"; then
        pass "the OpenPMIx-layout scheduler compiles against OpenPMIx $sys_version's pmix_server.h"
    else
        fail "OpenPMIx $sys_version layout: $(cat "$work/sys.err")"
    fi
    expect_match "the OpenPMIx-layout program runs on pmixcpp's libpmix" "$ourlib/libpmix.so" "$(ldd "$work/sys" 2>&1)"
fi
expect_match "the seed-layout program links the seed entry point" 'PMIx_server_register_fabric_seed' \
    "$(nm -D --undefined-only "$work/seed" 2>&1)"

printf 'SwitchName=s1 Nodes=n[1-2]\nSwitchName=s2 Nodes=n[3-4]\nSwitchName=spine Switches=s[1-2]\n' > "$topo"
PMIXCPP_SLURM_CONF_EXTRA="TopologyPlugin=topology/tree" PMIXCPP_TOPOLOGY_CONF="$topo" \
    "$PMIXCPP_SRCDIR/contrib/cluster.sh" restart 4 >/dev/null 2>&1 || fail "cluster restart with topology/tree"
eval "$("$PMIXCPP_SRCDIR/contrib/cluster.sh" env)"
etc=$("$PMIXCPP_SRCDIR/contrib/cluster.sh" conf-dir)

progs=""
for p in seed sys; do [ -x "$work/$p" ] && progs="$progs $p"; done
for p in $progs; do
    PMIXCPP_FABRIC_POLL=1 timeout 90 "$work/$p" 60 > "$work/$p.out" 2>&1 &
    eval "pid_$p=\$!"
done
for p in $progs; do
    for _ in $(seq 100); do grep -q '^waiting' "$work/$p.out" && break; sleep 0.1; done
done
printf 'SwitchName=s1 Nodes=n[1-2]\nSwitchName=s2 Nodes=n3\nSwitchName=spine Switches=s[1-2]\n' > "$etc/topology.conf"
"$PMIXCPP_SRCDIR/contrib/cluster.sh" reconfigure >/dev/null 2>&1 || fail "cluster.sh reconfigure (slurmctld rereads topology.conf)"
for p in $progs; do
    eval "wait \$pid_$p"
    expect_eq "$p: exit status" 0 "$?"
    out=$(cat "$work/$p.out")
    echo "$out" | grep -E '^(FAIL|RESULT)' | sed "s/^/    $p: /"
    expect_eq "$p: sizeof(pmix_fabric_t)" "sizeof(pmix_fabric_t) 40" "$(echo "$out" | grep '^sizeof')"
    expect_match "$p: 4 vertices after registration" '^registered layout [^ ]+: 4 vertices$' "$out"
    expect_match "$p: row n1 (same switch 2, across the spine 4)" '^row 0 (n1|\?): 0 2 4 4$' "$out"
    expect_match "$p: row n4" '^row 3 (n4|\?): 4 4 2 0$' "$out"
    expect_match "$p: 3 vertices after PMIX_FABRIC_UPDATED" '^updated layout [^ ]+: 3 vertices$' "$out"
    expect_match "$p: the updated row n3" '^row 2 (n3|\?): 4 4 0$' "$out"
    expect_match "$p: passed" '^RESULT-PASS' "$out"
    [ "$p" = sys ] && expect_match "sys: built with OpenPMIx $sys_version's struct" \
        "^registered layout openpmix-${sys_version%%[!0-9.]*}: " "$out"
done
numbers() { grep '^row' "$1" 2>/dev/null | sed 's/^row \([0-9]*\) [^:]*:/\1:/'; }
if [ -x "$work/seed" ] && [ -x "$work/sys" ]; then
    expect_eq "both layouts saw the same matrices" "$(numbers "$work/seed.out")" "$(numbers "$work/sys.out")"
fi
t_done
