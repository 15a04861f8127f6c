# The failure paths and the two-phase answers of a malleable job (docs/malleability.md, "Failure
# behaviour"), with tests/programs/pmix_malleable inside sbatch jobs of 1 node on a cluster of 6:
#  - no free nodes (another job holds the other 5): EXTEND with PMIX_TIMEOUT 4 s ends in
#    PMIX_ERR_TIMEOUT; the same asked in two phases returns PMIX_OPERATION_IN_PROGRESS at once
#    and the outcome (PMIX_ERR_TIMEOUT) comes as the completion event while the program computes;
#    a PMIx_Spawn with pmixcpp.spawn.grow fails with PMIX_ERR_TIMEOUT and defines no process set;
#    afterwards no helper job is left in squeue and the job still has its 1 node
#  - free nodes: two phases, granted (the event names the 2 new nodes, the program computed
#    meanwhile), then released; pmixcpp.spawn.grow of a missing executable fails, the nodes it
#    took go back (scontrol: 1 node), no process set; pmixcpp.spawn.grow of printenv SLURMD_NODENAME runs on
#    the 2 new nodes (one each), the two sets exist until the children have ended, the program
#    gives the nodes back; spawned PMIx processes get PMIX_PROCESS_SET_DEFINE of both sets;
#    EXTEND beyond the partition is refused with Slurm's reason at once
#  - a QOS limit (user nobody, QOS small: MaxTRESPerUser=node=2, contrib/cluster.sh): the grow of a
#    2-node job is refused with the limit's name, no process set, the job keeps its 2 nodes
# Prints the times (the timeout's, the first and second answer's, the roll-back's).
. "$(dirname "$0")/lib.sh"
prog="${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}/libexec/pmixcpp/tests/pmix_malleable"
[ -x "$prog" ] || { fail "$prog not installed"; t_done; exit; }
cluster="$PMIXCPP_SRCDIR/contrib/cluster.sh"
nodes_before=$(sinfo -h -o '%D' 2>/dev/null | head -1)
if [ "${nodes_before:-0}" -lt 6 ]; then
    "$cluster" restart 6 >/dev/null 2>&1 || { fail "cluster did not restart with 6 nodes"; t_done; exit; }
    restored() { "$cluster" restart "${nodes_before:-4}" >/dev/null 2>&1; }
    trap restored EXIT
fi
grep -q permit_job_expansion "$("$cluster" conf-dir)/slurm.conf" || fail "slurm.conf lacks permit_job_expansion"
work=$(mktemp -d /tmp/pmixcpp-mallfail.XXXXXX)
chmod 755 "$work"

# The job's script: the cases given as arguments, each "mode args..." separated by ';', then
# what squeue and scontrol say after each.
cat > "$work/job.sh" <<EOF
#!/bin/bash
IFS=';' read -ra cases <<< "\$1"
for c in "\${cases[@]}"; do
    echo "CASE \$c"
    # leading VAR=value words: the step's environment (e.g. SLURM_PMIXCPP_ALLOCTIMEOUT=3)
    set -- \$c
    vars=()
    while [[ \$1 == *=* ]]; do vars+=("\$1"); shift; done
    env "\${vars[@]}" PMIXCPP_DEBUG=debug srun --mpi=pmixcpp -N1 -n1 $prog "\$@" 2>"$work/err.\$SLURM_JOB_ID.\$(echo \$c | tr ' /' '__')"
    echo "RC \$?"
    echo "HELPERS \$(squeue -h -o '%j' | grep -c '^pmixcpp-')"
    echo "NUMNODES \$(scontrol show job \$SLURM_JOB_ID | sed -n 's/.* NumNodes=\([0-9]*\) .*/\1/p')"
done
EOF
chmod 755 "$work/job.sh"

wait_job_gone() { for _ in $(seq "$2"); do squeue -h -j "$1" 2>/dev/null | grep -q . || return 0; sleep 1; done; return 1; }
# run_job USER CASES sbatch-args... : output in $out
run_job() {
    local user=$1 cases=$2; shift 2
    local o="$work/out.$RANDOM"
    touch "$o"; chmod 666 "$o"
    if [ -n "$user" ]; then
        chmod 777 "$work"
        jid=$(cd /tmp && runuser -u "$user" -- env SLURM_CONF="$SLURM_CONF" sbatch --parsable -t 10 -o "$o" "$@" "$work/job.sh" "$cases")
    else
        jid=$(cd "$work" && sbatch --parsable -t 10 -o "$o" "$@" "$work/job.sh" "$cases")
    fi
    wait_job_gone "$jid" 240 || fail "job $jid still queued after 240 s"
    out=$(cat "$o")
    echo "$out" | grep -vE '^(PASS|PSETS 0)' | sed 's/^/    /'
}
# the lines of one case of $out
case_out() { echo "$out" | awk -v c="$1" '/^CASE /{cur=substr($0, 6)} cur==c {print}'; }

# 1. No free nodes: a job of user root holds the other 5
blocker=$(sbatch --parsable -N5 --exclusive -t 10 -o /dev/null --wrap 'sleep 600')
for _ in $(seq 30); do [ "$(squeue -h -j "$blocker" -o %T)" = RUNNING ] && break; sleep 1; done
expect_eq "the other 5 nodes are held" RUNNING "$(squeue -h -j "$blocker" -o %T)"
run_job "" "extend 2 4;two-phase 2 4;grow-spawn 2 4 /usr/bin/printenv SLURMD_NODENAME;SLURM_PMIXCPP_ALLOCTIMEOUT=3 extend 2 0;SLURM_PMIXCPP_ALLOCTIMEOUT=3 new 2 0 0" -N1 --exclusive
# The job's time limit while a grow waits: root shortens it to 3 minutes (the pending helper job's
# limit is lowered to the 2 whole minutes left), then to 1 minute (under 60 s left): the
# pending request is refused and its helper job cancelled at once, long before its own timeout.
o="$work/out.limit"
touch "$o"
jid_limit=$(cd "$work" && sbatch --parsable -t 10 -o "$o" -N1 --exclusive "$work/job.sh" "extend 2 0")
pend=""
for _ in $(seq 60); do
    pend=$(squeue -h -u root -t PD -o '%j' | grep -c "^pmixcpp-expand\.$jid_limit\.")
    [ "$pend" -ge 1 ] && break
    sleep 0.5
done
expect_eq "time limit: the grow is pending in Slurm" 1 "$pend"
# First root shortens the job to 3 minutes: the pending helper job's limit follows it (lowered to
# the job's whole minutes left, 2) within the bridge's next checks, and the grow stays pending.
helper=$(squeue -h -u root -t PD -o '%i %j' | awk -v j="$jid_limit" 'index($2, "pmixcpp-expand." j ".") == 1 {print $1; exit}')
limit_before=$(squeue -h -j "$helper" -o %l 2>/dev/null)
scontrol update JobId="$jid_limit" TimeLimit=3
limit_after=""
for _ in $(seq 50); do
    limit_after=$(squeue -h -j "$helper" -o %l 2>/dev/null)
    [ "$limit_after" = "2:00" ] && break
    sleep 0.1
done
expect_eq "time limit: a pending grow's Slurm job follows the job's shorter limit ($limit_before, job now 3 min)" "2:00" "$limit_after"
expect_eq "time limit: the grow is still pending" PENDING "$(squeue -h -j "$helper" -o %T 2>/dev/null)"
t_limit=$(date +%s%N)
scontrol update JobId="$jid_limit" TimeLimit=1
# how long until the helper job is gone from Slurm
for _ in $(seq 100); do
    squeue -h -u root -o '%j' | grep -q "^pmixcpp-expand\.$jid_limit\." || break
    sleep 0.1
done
limit_ms=$(( ($(date +%s%N) - t_limit) / 1000000 ))
wait_job_gone "$jid_limit" 90 || fail "job $jid_limit still queued after 90 s"
scancel "$blocker"
c=$(case_out "extend 2 4")
expect_match "no free nodes: EXTEND (PMIX_TIMEOUT 4) ends in PMIX_ERR_TIMEOUT with the reason" \
    '^EXTEND rc PMIX_ERR_TIMEOUT ms [0-9]+ added - all - msg .*still pending in Slurm after 4 s' "$c"
ms=$(echo "$c" | sed -n 's/^EXTEND rc [^ ]* ms \([0-9]*\).*/\1/p')
[ -n "$ms" ] && [ "$ms" -ge 3900 ] && [ "$ms" -le 9000 ] && pass "no free nodes: answered after $ms ms (4 s asked)" \
    || fail "no free nodes: answered after ${ms:-?} ms"
expect_match "no free nodes: no helper job left in squeue, the job has its 1 node" '^HELPERS 0$' "$c"
expect_match "no free nodes: scontrol NumNodes=1" '^NUMNODES 1$' "$c"
c=$(case_out "two-phase 2 4")
expect_match "two phases: the call returns PMIX_OPERATION_IN_PROGRESS with a request id" \
    '^FIRST rc PMIX_OPERATION_IN_PROGRESS reqid pmixcpp\.req\.0\.[0-9]+ ms' "$c"
first=$(echo "$c" | sed -n 's/^FIRST .* ms \([0-9.]*\)$/\1/p')
reqid=$(echo "$c" | sed -n 's/^FIRST .* reqid \([^ ]*\) .*/\1/p')
expect_match "two phases, no free nodes: the event carries PMIX_ERR_TIMEOUT, the request id and the reason" \
    "^EVENT status PMIX_ERR_TIMEOUT reqid $reqid added - all - ms [0-9]+ work [1-9][0-9]* msg .*still pending" "$c"
expect_match "two phases, no free nodes: nothing left, 1 node" '^HELPERS 0$' "$c"
expect_match "two phases, no free nodes: NumNodes=1" '^NUMNODES 1$' "$c"
for w in extend new; do
    if [ $w = extend ]; then c=$(case_out "SLURM_PMIXCPP_ALLOCTIMEOUT=3 extend 2 0"); else c=$(case_out "SLURM_PMIXCPP_ALLOCTIMEOUT=3 new 2 0 0"); fi
    W=$(echo $w | tr a-z A-Z)
    expect_match "no free nodes, $W without PMIX_TIMEOUT: PMIX_ERR_TIMEOUT after PMIxCppAllocTimeout, which the reason names" \
        "^$W rc PMIX_ERR_TIMEOUT ms [0-9]+ .*msg .*still pending in Slurm after 3 s.*no PMIX_TIMEOUT, so PMIxCppAllocTimeout=3 s applied" "$c"
    dms=$(echo "$c" | sed -n "s/^$W rc [^ ]* ms \([0-9]*\).*/\1/p")
    [ -n "$dms" ] && [ "$dms" -ge 2900 ] && [ "$dms" -le 8000 ] && pass "$W without PMIX_TIMEOUT: answered after $dms ms (PMIxCppAllocTimeout 3 s)" \
        || fail "$W without PMIX_TIMEOUT: answered after ${dms:-?} ms"
    expect_match "no free nodes, $W without PMIX_TIMEOUT: its pending job was cancelled in Slurm" '^HELPERS 0$' "$c"
    expect_match "no free nodes, $W without PMIX_TIMEOUT: NumNodes=1" '^NUMNODES 1$' "$c"
done
f=$(cat "$work"/err.$jid.SLURM_PMIXCPP_ALLOCTIMEOUT=3_extend_2_0 2>/dev/null)
expect_match "EXTEND without PMIX_TIMEOUT: the client's log has the reason" 'PMIX_ERR_TIMEOUT.*PMIxCppAllocTimeout=3 s applied' "$f"
lout=$(cat "$work/out.limit")
echo "$lout" | sed 's/^/    /'
expect_match "time limit shortened while the grow is pending: refused with the reason" \
    '^EXTEND rc PMIX_ERR_OUT_OF_RESOURCE ms [0-9]+ .*msg .*ends in [0-9]+ s \(its time limit, 1 min\).*still pending \(Slurm job [0-9]+, cancelled\)' "$lout"
expect_match "time limit: the pending helper job was cancelled" '^HELPERS 0$' "$lout"
expect_match "time limit: the job still has its 1 node" '^NUMNODES 1$' "$lout"
c=$(case_out "grow-spawn 2 4 /usr/bin/printenv SLURMD_NODENAME")
expect_match "grow-spawn, no free nodes: PMIX_ERR_TIMEOUT" '^SPAWN rc PMIX_ERR_TIMEOUT ' "$c"
expect_match "grow-spawn, no free nodes: no process set defined" '^PSETS 0$' "$c"
expect_match "grow-spawn, no free nodes: nothing left" '^HELPERS 0$' "$c"
expect_match "grow-spawn, no free nodes: NumNodes=1" '^NUMNODES 1$' "$c"
f=$(cat "$work"/err.$jid.grow-spawn_2_4__usr_bin_printenv_SLURMD_NODENAME 2>/dev/null)
expect_match "grow-spawn, no free nodes: the reason in the client's log" \
    'spawn: PMIX_ERR_TIMEOUT pmixcpp.spawn.grow: the job did not grow by 2 node\(s\), nothing was spawned: .*still pending' "$f"
wait_job_gone "$blocker" 30

# 2. Free nodes
run_job "" "two-phase 2 0;grow-spawn 2 0 /nonexistent/prog;grow-spawn 2 0 /usr/bin/printenv SLURMD_NODENAME;grow-spawn 2 0 $prog child-events;extend 10 0" -N1 --exclusive
c=$(case_out "two-phase 2 0")
expect_match "two phases: PMIX_OPERATION_IN_PROGRESS at once" '^FIRST rc PMIX_OPERATION_IN_PROGRESS reqid pmixcpp\.req\.' "$c"
first2=$(echo "$c" | sed -n 's/^FIRST .* ms \([0-9.]*\)$/\1/p')
expect_match "two phases: the event names the 2 new nodes and the job's 3; the program computed meanwhile" \
    '^EVENT status PMIX_SUCCESS reqid pmixcpp\.req\.0\.[0-9]+ added n[^ ]+ all n[^ ]+ ms [0-9]+ work [1-9][0-9]* msg -$' "$c"
added=$(echo "$c" | sed -n 's/^EVENT .* added \([^ ]*\) .*/\1/p')
[ -n "$added" ] && expect_eq "two phases: 2 nodes added" 2 "$(scontrol show hostnames "$added" | wc -l)"
expect_match "two phases: the program gave them back" "^RELEASED rc PMIX_SUCCESS nodes $(printf '%s' "$added" | sed 's/[][]/\\&/g')\$" "$c"
expect_match "two phases: NumNodes=1 after" '^NUMNODES 1$' "$c"
event_ms=$(echo "$c" | sed -n 's/^EVENT .* ms \([0-9]*\) .*/\1/p')
c=$(case_out "grow-spawn 2 0 /nonexistent/prog")
expect_match "grow-spawn of a missing executable: the spawn fails" '^SPAWN rc PMIX_ERR_[A-Z_]+ ' "$c"
rollback_ms=$(echo "$c" | sed -n 's/^SPAWN rc [^ ]* ms \([0-9]*\).*/\1/p')
expect_match "grow-spawn of a missing executable: no process set" '^PSETS 0$' "$c"
expect_match "grow-spawn of a missing executable: the grown nodes went back (NumNodes=1)" '^NUMNODES 1$' "$c"
expect_match "grow-spawn of a missing executable: nothing left" '^HELPERS 0$' "$c"
f=$(cat "$work"/err.$jid.grow-spawn_2_0__nonexistent_prog 2>/dev/null)
expect_match "grow-spawn of a missing executable: the client's log says why and that the grow was rolled back" \
    'spawn: PMIX_ERR_[A-Z_]+ .*nonexistent.*; the grow was rolled back: n[^ ]+ given back to Slurm' "$f"
c=$(case_out "grow-spawn 2 0 /usr/bin/printenv SLURMD_NODENAME")
expect_match "grow-spawn: the spawn succeeds" '^SPAWN rc PMIX_SUCCESS ms [0-9]+ nspace slurm\.' "$c"
growspawn_ms=$(echo "$c" | sed -n 's/^SPAWN rc [^ ]* ms \([0-9]*\).*/\1/p')
ns=$(echo "$c" | sed -n 's/^SPAWN .* nspace \([^ ]*\)$/\1/p')
expect_match "grow-spawn: the new processes' set" "^PSET pmixcpp://spawned/$ns\$" "$c"
expect_match "grow-spawn: the union's set" "^PSET pmixcpp://union/$ns\$" "$c"
grown=$(echo "$c" | sed -n 's/^STATUS .* added=\([^ ]*\).*/\1/p')
expect_match "grow-spawn: the request is listed with the added nodes" '^STATUS .*EXTEND granted .*added=n' "$c"
if [ -n "$grown" ]; then
    expect_eq "grow-spawn: the children ran on exactly the grown nodes" \
        "$(scontrol show hostnames "$grown" | sort | tr '\n' ' ')" \
        "$(echo "$c" | grep -xE 'n[0-9]+' | sort | tr '\n' ' ')"
fi
expect_match "grow-spawn: the sets are deleted when the children have ended" '^PSETS-DELETED yes$' "$c"
expect_match "grow-spawn: the program gave the nodes back" '^RELEASED rc PMIX_SUCCESS nodes n' "$c"
expect_match "grow-spawn: NumNodes=1 after" '^NUMNODES 1$' "$c"
c=$(case_out "grow-spawn 2 0 $prog child-events")
expect_match "grow-spawn of PMIx processes: the spawn succeeds" '^SPAWN rc PMIX_SUCCESS ms [0-9]+ nspace slurm\.' "$c"
ns=$(echo "$c" | sed -n 's/^SPAWN .* nspace \([^ ]*\)$/\1/p')
expect_eq "the new processes got PMIX_PROCESS_SET_DEFINE of their own set (2 members)" 2 \
    "$(echo "$c" | grep -cxE "CHILD-PSET-EVENT [01] pmixcpp://spawned/$ns 2")"
expect_eq "the new processes got PMIX_PROCESS_SET_DEFINE of the union (3 members)" 2 \
    "$(echo "$c" | grep -cxE "CHILD-PSET-EVENT [01] pmixcpp://union/$ns 3")"
expect_match "grow-spawn of PMIx processes: nodes given back" '^RELEASED rc PMIX_SUCCESS nodes n' "$c"
expect_match "grow-spawn of PMIx processes: NumNodes=1 after" '^NUMNODES 1$' "$c"
c=$(case_out "extend 10 0")
expect_match "EXTEND beyond the partition: refused at once with Slurm's reason" \
    '^EXTEND rc PMIX_ERR_OUT_OF_RESOURCE ms [0-9]+ added - all - msg .*(node configuration is not available|Node count|pending for good)' "$c"
expect_match "EXTEND beyond the partition: nothing left" '^HELPERS 0$' "$c"

# The job's time limit: with under a minute left nothing can be added (refused at once, no Slurm
# job made); a NEW allocation's limit never passes the job's end.
run_job "" "pause 2;extend 2 4;new 1 4 0" -N1 --exclusive -t 1
c=$(case_out "extend 2 4")
expect_match "job of 1 minute: EXTEND refused at once, the reason names the time limit" \
    '^EXTEND rc PMIX_ERR_OUT_OF_RESOURCE ms [0-9]+ .*msg .*ends in [0-9]+ s \(its time limit, 1 min\): nothing can be added' "$c"
expect_match "job of 1 minute: no helper job made" '^HELPERS 0$' "$c"
c=$(case_out "new 1 4 0")
expect_match "job of 1 minute: NEW refused at once" '^NEW rc PMIX_ERR_OUT_OF_RESOURCE ms [0-9]+ .*ends in [0-9]+ s' "$c"
expect_match "job of 1 minute: no allocation job made" '^HELPERS 0$' "$c"
run_job "" "new 1 4 3600" -N1 --exclusive -t 3
c=$(case_out "new 1 4 3600")
expect_match "NEW asking an hour in a job of 3 minutes: granted with at most the job's minutes left" \
    '^NEW rc PMIX_SUCCESS ms [0-9]+ jobid [0-9]+ time (60|120|180) ' "$c"
ends=$(echo "$c" | sed -n 's/^ENDS new \([^ ]*\) job \([^ ]*\)$/\1 \2/p')
if [ -n "$ends" ]; then
    set -- $ends
    [ "$(date -d "$1" +%s)" -le "$(date -d "$2" +%s)" ] && pass "the NEW allocation ends ($1) no later than the job ($2)" \
        || fail "the NEW allocation ends $1, after the job ($2)"
else
    fail "no ENDS line"
fi
expect_match "the NEW allocation was given back" '^RELEASED rc PMIX_SUCCESS' "$c"

# 3. A QOS limit
if id nobody >/dev/null 2>&1 && sacctmgr -n show qos small format=name 2>/dev/null | grep -q small; then
    run_job nobody "grow-spawn 1 0 /usr/bin/printenv SLURMD_NODENAME;bad" -N2 --qos=small
    c=$(case_out "grow-spawn 1 0 /usr/bin/printenv SLURMD_NODENAME")
    expect_match "QOS limit: the grow-spawn is refused (PMIX_ERR_OUT_OF_RESOURCE)" '^SPAWN rc PMIX_ERR_OUT_OF_RESOURCE ' "$c"
    expect_match "QOS limit: no process set" '^PSETS 0$' "$c"
    expect_match "QOS limit: the job keeps its 2 nodes" '^NUMNODES 2$' "$c"
    expect_match "QOS limit: nothing left" '^HELPERS 0$' "$c"
    f=$(cat "$work"/err.$jid.grow-spawn_1_0__usr_bin_printenv_SLURMD_NODENAME 2>/dev/null)
    expect_match "QOS limit: the client's log names the limit" 'spawn: PMIX_ERR_OUT_OF_RESOURCE .*QOSMaxNodePerUserLimit' "$f"
    # nobody's malformed requests: refused before Slurm is asked, nothing grown or defined
    c=$(case_out "bad")
    for w in grow-0 grow-70000 grow-string grow-with-host two-phase-string two-phase-cancel; do
        expect_match "nobody: $w is PMIX_ERR_BAD_PARAM" "^BAD $w PMIX_ERR_BAD_PARAM\$" "$c"
    done
    expect_match "nobody: no set defined by them" '^PSETS 0$' "$c"
    expect_match "nobody: the job still has its 2 nodes" '^NUMNODES 2$' "$c"
    expect_match "nobody: nothing left" '^HELPERS 0$' "$c"
else
    echo "  skip: no user nobody or no QOS small"
fi
echo "    MALLEABLE-FAIL-MS timeout4s ${ms:-?} two-phase-first ${first:-?}/${first2:-?} two-phase-event ${event_ms:-?} rollback ${rollback_ms:-?} grow-spawn ${growspawn_ms:-?} time-limit-cut-to-cancelled ${limit_ms:-?}"
rm -rf "$work"
t_done
