# pmix_dyn (tests/programs/pmix_dyn.c): dynamic-process calls on the real cluster.
#  - publish/lookup/unpublish across two nodes: lookup with PMIX_WAIT on the other node and on the
#    publisher's node (_nb), timeouts, duplicates, unpublish, FIRST_READ, PROC vs APP persistence
#  - job control: SIGUSR1 to ranks on both nodes, error paths, kill of rank 2 and terminate of rank 3
#  - log: stderr, syslog (through a temporary /dev/log listener when the host has none), Slurm's
#    log of the step (slurmd log), PMIX_LOG_ONCE, PMIx_Log_nb
# Requires: make install; a cluster with >= 2 nodes (contrib/cluster.sh start 4).
. "$(dirname "$0")/lib.sh"
prog="${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}/libexec/pmixcpp/tests/pmix_dyn"
[ -x "$prog" ] || { fail "$prog not installed"; t_done; exit; }

# --- publish / lookup ---------------------------------------------------------------------------
run_srun 120 --mpi=pmixcpp -N2 --ntasks-per-node=2 "$prog" pubsub
expect_eq "pubsub: exit status" 0 "$rc"
expect_eq "pubsub: all 4 ranks passed" 4 "$(echo "$out" | grep -c '^RESULT-PASS rank')"
expect_no_match "pubsub: no failed check" '^FAIL ' "$out"
expect_match "pubsub: lookup with wait on the other node" 'PASS rank 0: lookup with wait \(other node\)' "$out"
expect_match "pubsub: PROC data removed when its publisher finalized" 'PASS rank 0: PROC data of a finalized rank removed' "$out"
echo "$out" | grep -E '^FAIL' | head -5 | sed 's/^/    /'

# Over the TCP node transport too.
run_srun 120 --mpi=pmixcpp -N2 --ntasks-per-node=2 --export=ALL,SLURM_PMIXCPP_TRANSPORT=tcp "$prog" pubsub
expect_eq "pubsub (TCP): all 4 ranks passed" 4 "$(echo "$out" | grep -c '^RESULT-PASS rank')"

# OpenMPI's MPI_Publish_name / MPI_Lookup_name / MPI_Unpublish_name (one step, two nodes).
if mpi_build mpi_pubsub mpi_spawn; then
    run_srun 90 --mpi=pmixcpp -N2 --ntasks-per-node=2 "$work/mpi_pubsub"
    expect_eq "mpi_pubsub -N2 -n4 exit status" 0 "$rc"
    expect_match "MPI_Publish_name / MPI_Lookup_name / MPI_Unpublish_name" '^MPI-PUBSUB-OK 4$' "$out"
    [ "$rc" -eq 0 ] || echo "$out" | head -20 | sed 's/^/    /'
    # MPI_Comm_spawn at -N2 -n2 (t-spawn-ompi.sh has the full story: -n4, messages, times).
    t0=$SECONDS
    out=$(OMPI_MCA_btl=self,tcp timeout -k 5 120 salloc -N2 -n8 srun --mpi=pmixcpp -N2 -n2 "$work/mpi_spawn" 2>&1)
    expect_match "MPI_Comm_spawn of 4 from -N2 -n2" '^MPI-SPAWN-OK 4$' "$out"
    [ $((SECONDS - t0)) -lt 60 ] && pass "MPI_Comm_spawn done in $((SECONDS - t0)) s" || fail "MPI_Comm_spawn took $((SECONDS - t0)) s"
    echo "$out" | grep -E '^(MPI-SPAWN|parent:)' | sed 's/^/    /'
fi

# Across two steps of one job (the session range, the default): each step's rank 0 finds the
# other's key, with PMIX_WAIT, through the job's store beside srun.
xstep() {
    timeout -k 5 120 salloc -N2 -n8 bash -c "srun --overlap --mpi=pmixcpp -N2 -n2 $prog xstep A $1 & srun --overlap --mpi=pmixcpp -N2 -n2 $prog xstep B $1; wait" 2>&1
}
out=$(xstep x$$)
# Before the node transport's UCX endpoints had an error handler (UCP_ERR_HANDLING_MODE_PEER),
# about 1 run in 20 lost rank 0 of one step: that step's slurmstepd aborted inside UCX 1.13
# (ucp_request.c:684 "got REP message", from uct_tcp_ep_handle_io_err -> ucp_ep_set_failed) when
# the step's other node ended during the endpoint's wire-up. Not seen since (0 of 125 loaded
# runs); the retry stays, visibly, so a recurrence shows in the log instead of failing CI.
if ! printf '%s\n' "$out" | grep -q 'PASS rank 0: step A found the other step'; then
    echo "  warning: cross-step run failed once, retrying; its output:"
    printf '%s\n' "$out" | tail -5 | sed 's/^/    /'
    out=$(xstep y$$)
fi
expect_match "session range: step B found step A's key" 'PASS rank 0: step B found the other step' "$out"
expect_match "session range: step A found step B's key" 'PASS rank 0: step A found the other step' "$out"
expect_no_match "session range: no failed check" '^FAIL ' "$out"

# --- job control --------------------------------------------------------------------------------
run_srun 120 --mpi=pmixcpp -N2 --ntasks-per-node=2 "$prog" jobctl
expect_eq "jobctl: ranks 0 and 1 passed" 2 "$(echo "$out" | grep -c '^RESULT-PASS rank [01]:')"
expect_no_match "jobctl: no failed check" '^FAIL ' "$out"
expect_match "jobctl: SIGUSR1 reached rank 3 on the other node" 'PASS rank 3: SIGUSR1 from rank 0 arrived' "$out"
expect_no_match "jobctl: killed ranks never reported" 'RESULT-[A-Z]+ rank [23]:' "$out"
expect_match "jobctl: Slurm saw rank 2 killed" 'task 2: Killed' "$out"
expect_match "jobctl: Slurm saw rank 3 terminated" 'task 3: Terminated' "$out"

# --- spawn -------------------------------------------------------------------------------------
# Rank 0 of a -N2 -n4 step spawns 4 (then 32) copies as a new step of the same job; the children
# check PMIX_PARENT_ID and PMIX_SPAWNED; error paths (missing executable, required attribute,
# more processes than the job has CPUs). Timings next to a plain srun of the same processes.
mark=$(mktemp -d /tmp/pmixcpp-dyn-mark.XXXXXX); chmod 777 "$mark"
for n in 4 32; do
    rm -f "$mark"/child.*
    # inside an allocation with room for parents and children (salloc runs the script once)
    out=$(timeout -k 5 120 salloc -N2 -n$((n + 4)) bash -c \
        "srun --mpi=pmixcpp -N2 -n4 $prog spawn $n $mark; t0=\$(date +%s%N); srun --mpi=pmixcpp --overlap -n$n $prog child $mark >/dev/null 2>&1; echo PLAIN-SRUN-MS $n \$(( (\$(date +%s%N) - t0) / 1000000 ))" 2>&1)
    expect_no_match "spawn $n: no failed check" '^FAIL ' "$out"
    expect_match "spawn $n: the parent got the children's namespace" "PASS rank 0: PMIx_Spawn of $n -> PMIX_SUCCESS, namespace slurm\.[0-9]+\.[0-9]+" "$out"
    expect_eq "spawn $n: every child saw its parent" "$n" "$(echo "$out" | grep -c 'PASS rank [0-9]*: child slurm.*PMIX_PARENT_ID slurm.*:0')"
    expect_match "spawn $n: missing executable -> PMIX_ERR_JOB_EXE_NOT_FOUND" 'PASS rank 0: op_wait_for\(&w\) -> PMIX_ERR_JOB_EXE_NOT_FOUND' "$out"
    expect_match "spawn $n: too many processes -> PMIX_ERR_JOB_FAILED_TO_LAUNCH" 'PASS rank 0: PMIx_Spawn\(NULL, 0, &huge.*FAILED_TO_LAUNCH \(want' "$out"
    echo "$out" | grep -E '^(SPAWN-|PLAIN-SRUN)' | sed 's/^/    /'
done

# --- several apps in one spawn ----------------------------------------------------------------
# Rank 0 spawns two apps in one PMIx_Spawn (2 + 3 processes, one step run through pmixcpp-mpmd):
# each child checks its app number, app rank, leader and size, its app's environment and
# directory; then again with each app on a host of its own (PMIX_HOST per app). A missing
# executable in one app refuses the whole spawn.
for placed in no yes; do
    rm -f "$mark"/mchild.*
    out=$(timeout -k 5 120 salloc -N2 -n9 bash -c '
        hosts=($(scontrol show hostnames "$SLURM_JOB_NODELIST"))
        extra=""; [ "'$placed'" = yes ] && extra="${hosts[1]} ${hosts[0]}"
        echo "HOSTS $extra"
        srun --mpi=pmixcpp -N2 -n4 '"$prog"' spawnmulti '"$mark"' $extra' 2>&1)
    expect_no_match "spawn of 2 apps (placed: $placed): no failed check" '^FAIL ' "$out"
    expect_match "spawn of 2 apps (placed: $placed): the parent got one namespace" 'PASS rank 0: PMIx_Spawn of 2 apps \(2 \+ 3\) -> PMIX_SUCCESS' "$out"
    expect_eq "spawn of 2 apps (placed: $placed): 2 children of app A checked their app" 2 "$(echo "$out" | grep -c 'PASS rank [01]: app A: PMIX_APPLDR 0$')"
    expect_eq "spawn of 2 apps (placed: $placed): 3 children of app B checked their app" 3 "$(echo "$out" | grep -c 'PASS rank [234]: app B: PMIX_APP_SIZE 3$')"
    expect_match "spawn of 2 apps (placed: $placed): all 5 children passed" 'PASS rank 0: 5 of 5 children of the two apps passed' "$out"
    expect_match "spawn of 2 apps: a missing executable in one app -> PMIX_ERR_JOB_EXE_NOT_FOUND" 'PASS rank 0: PMIx_Spawn\(NULL, 0, apps, 2, child\) -> PMIX_ERR_JOB_EXE_NOT_FOUND' "$out"
    if [ "$placed" = yes ]; then
        expect_eq "spawn of 2 apps: every child runs on its app's host" 5 "$(echo "$out" | grep -c 'PASS rank [0-4]: app [AB]: runs on its host')"
    fi
    echo "$out" | grep -E '^(SPAWN-MULTI|FAIL)' | head -5 | sed 's/^/    /'
done

# --- job control of another namespace ------------------------------------------------------------
# Rank 0 spawns 3 children (a step of their own) and signals, then kills them with
# PMIx_Job_control naming their namespace: through both steps' sruns (xstep) to the children's
# node servers. SIGUSR1 to child rank 1 reaches it alone; an unknown namespace and a rank out
# of range are refused; KILL of the namespace ends the step (PMIX_EVENT_JOB_END at the spawner).
rm -f "$mark"/*
out=$(timeout -k 5 120 salloc -N2 -n9 srun --mpi=pmixcpp -N2 -n4 "$prog" ctlother "$mark" 2>&1)
expect_no_match "job control of another namespace: no failed check" '^FAIL ' "$out"
expect_match "job control of another namespace: SIGUSR1 to one child rank" 'PASS rank 0: SIGUSR1 reached child rank 1 of slurm\.[0-9]+\.[0-9]+, and only it' "$out"
expect_match "job control of another namespace: rank out of range -> BAD_PARAM" 'PASS rank 0: ctl\(&bad, 1, PMIX_JOB_CTRL_SIGNAL, SIGUSR1\) -> PMIX_ERR_BAD_PARAM' "$out"
expect_match "job control of another namespace: unknown namespace -> NOT_FOUND" 'PASS rank 0: ctl\(&bad, 1, PMIX_JOB_CTRL_KILL, 0\) -> PMIX_ERR_NOT_FOUND' "$out"
expect_match "job control of another namespace: KILL ends the children's step" 'PASS rank 0: the killed namespace slurm\.[0-9]+\.[0-9]+ ended' "$out"
expect_match "job control of another namespace: no child outlived it" 'PASS rank 0: no victim outlived the kill' "$out"
expect_eq "job control of another namespace: the parents passed" 4 "$(echo "$out" | grep -c '^RESULT-PASS rank')"
rm -rf "$mark"

# --- log ----------------------------------------------------------------------------------------
tag="tag$$x$RANDOM"
listener=""
if [ ! -e /dev/log ] && [ "$(id -u)" = 0 ] && command -v python3 >/dev/null; then
    python3 - "$PMIXCPP_CLUSTER_DIR/syslog.$tag" <<'PY' &
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("/dev/log")
os.chmod("/dev/log", 0o666)
s.settimeout(30)
with open(sys.argv[1], "ab") as f:
    try:
        while True:
            f.write(s.recv(65536) + b"\n"); f.flush()
    except Exception:
        pass
os.unlink("/dev/log")
PY
    listener=$!
    for _ in $(seq 50); do [ -S /dev/log ] && break; sleep 0.1; done
fi
run_srun 60 --mpi=pmixcpp -N2 --ntasks-per-node=1 "$prog" log "$tag"
expect_eq "log: exit status" 0 "$rc"
expect_eq "log: both ranks passed" 2 "$(echo "$out" | grep -c '^RESULT-PASS rank')"
expect_match "log: stderr" "^dyn-log-stderr $tag rank 1" "$out"
expect_match "log: PMIX_LOG_ONCE delivered once" "^dyn-log-once $tag rank 0" "$out"
expect_no_match "log: PMIX_LOG_ONCE not twice" "dyn-log-once-second $tag" "$out"
sleep 0.5
logs=$(slurmd_logs)
expect_match "log: Slurm's log of the step (node 1)" "rank 0 logs \(pmix.log.gsys\): dyn-log-slurm $tag rank 0" "$logs"
expect_match "log: Slurm's log of the step (node 2)" "rank 1 logs \(pmix.log.gsys\): dyn-log-slurm $tag rank 1" "$logs"
expect_no_match "log: PMIX_LOG_ONCE message stayed out of Slurm's log" "dyn-log-once $tag" "$logs"
if [ -n "$listener" ]; then
    kill "$listener" 2>/dev/null; wait "$listener" 2>/dev/null
    rm -f /dev/log
    sys=$(cat "$PMIXCPP_CLUSTER_DIR/syslog.$tag" 2>/dev/null); rm -f "$PMIXCPP_CLUSTER_DIR/syslog.$tag"
    expect_match "log: syslog, priority LOG_WARNING|LOG_USER" "^<12>.*dyn-log-syslog $tag rank 0" "$sys"
elif [ -S /dev/log ]; then
    echo "  (syslog: the host's own /dev/log is in use; not checked)"
fi
t_done
