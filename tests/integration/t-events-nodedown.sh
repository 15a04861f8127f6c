# A lost node: on a 4-node step whose ranks wait in event handlers, with a fence and a
# Get of a rank on the victim node pending, `kill -9` of one node's slurmstepd (and of its tasks,
# as when the node dies) becomes PMIX_ERR_NODE_DOWN (PMIX_HOSTNAME = that node, its ranks as the
# affected procs) at every rank of the other nodes within a few seconds, the pending fence and
# Get fail with an error (not the timeout), no other slurmstepd hangs and srun ends.
# Both node transports (PMIxCppTransport=tcp and ucx). Then a slurmstepd that is stopped
# (SIGSTOP: its connections stay open) is found out by the liveness probe after a fence times
# out on it (PMIxCppTimeout=3 s, probe 5 s); it is resumed afterwards and ends normally.
# After each case the step's job must leave the cluster and every node be usable again.
. "$(dirname "$0")/lib.sh"
prog="${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}/libexec/pmixcpp/tests/pmix_events"
[ -x "$prog" ] || { fail "$prog not installed"; t_done; exit; }
victim=n4
log=$(mktemp)
trap 'rm -f "$log"' EXIT

for transport in ${PMIXCPP_NODEDOWN_CASES:-tcp ucx stop}; do
    echo "  -- $transport"
    how=kill timeout=120 limit=5
    [ $transport = stop ] && { transport=tcp how=stopped timeout=3 limit=12; }
    # the previous case's killed node is still completing for a while (longer under load)
    wait_idle 'n[1-4]' 120 || fail "$transport: n[1-4] not idle after 120 s: $(sinfo -h -N -n 'n[1-4]' -o '%N %t' | paste -sd' ')"
    start_ready "$log" 8 'n[1-4]' env SLURM_PMIXCPP_TRANSPORT=$transport SLURM_PMIXCPP_TIMEOUT=$timeout timeout -k 5 200 \
        srun --mpi=pmixcpp -N4 --ntasks-per-node=2 -w n[1-4] "$prog" nodedown 90 "$victim" $how
    expect_eq "$transport: 8 ranks ready" 8 "$(grep -c '^READY' "$log")"
    pids=$(awk -v v="$victim" '$1 == "READY" && $5 == v { print $7 }' "$log")
    first=$(echo "$pids" | head -1)
    stepd=$(awk '/^PPid:/ { print $2 }' "/proc/$first/status" 2>/dev/null)
    case "$(tr '\0' ' ' < "/proc/$stepd/cmdline" 2>/dev/null)" in
        slurmstepd*) pass "$transport: slurmstepd of $victim is pid $stepd" ;;
        *) fail "$transport: no slurmstepd above pid $first"; kill "$srun_pid"; wait "$srun_pid"; continue ;;
    esac
    stepds=$(awk '$1 == "READY" { print $7 }' "$log" | while read -r p; do awk '/^PPid:/ { print $2 }' "/proc/$p/status" 2>/dev/null; done | sort -u)
    sleep 0.5  # the fence and the Get are on their way
    t_kill=$(date +%s.%N)
    if [ $how = kill ]; then kill -9 "$stepd" $pids; else kill -STOP "$stepd" $pids; fi
    t0=$SECONDS
    wait "$srun_pid"
    rc=$?
    took=$((SECONDS - t0))
    grep -E '^(FAIL|TEXT|EVENT-AT|PASS.*pending)|srun: error' "$log" | sort | uniq | head -20 | sed 's/^/    /'
    [ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] && [ "$took" -lt 60 ] && pass "$transport: srun ended ${took}s after the kill (exit $rc)" \
        || fail "$transport: srun did not end by itself (exit $rc after ${took}s)"
    expect_eq "$transport: the 6 ranks on the other nodes passed" 6 "$(grep -c '^RESULT-PASS rank' "$log")"
    expect_no_match "$transport: no failed check" '^FAIL ' "$(cat "$log")"
    lat=$(awk -v k="$t_kill" '$1 == "EVENT-AT" { d = $4 - k; if (d > m) m = d } END { printf "%.3f", m }' "$log")
    echo "    NODE_DOWN latency (kill -9 -> last peer's handler): ${lat} s"
    awk -v l="$lat" -v m=$limit 'BEGIN { exit !(l > 0 && l < m) }' && pass "$transport/$how: every peer told within $limit s (${lat} s)" \
        || fail "$transport/$how: peers told after ${lat} s"
    if [ $how = stopped ]; then  # let it go on: Slurm ends it normally (no dead slurmstepd for slurmd)
        kill -CONT "$stepd" $pids
        stepd_victim=$stepd
        for _ in $(seq 100); do [ -d "/proc/$stepd_victim" ] || break; sleep 0.2; done
        [ -d "/proc/$stepd_victim" ] && fail "stopped: the resumed slurmstepd did not end" \
            || pass "stopped: the resumed slurmstepd ended"
    fi
    # No slurmstepd of the step is left behind on the other nodes.
    sleep 1
    left=0
    for p in $stepds; do  # (the killed one may linger as a zombie until slurmd reaps it)
        [ -d "/proc/$p" ] && [ "$(awk '{ print $3 }' "/proc/$p/stat" 2>/dev/null)" != Z ] && left=$((left + 1))
    done
    [ "$left" -eq 0 ] && pass "$transport: the other nodes' slurmstepd ended" \
        || { fail "$transport: $left slurmstepd of the step still running"; ps -o pid,stat,etime,cmd -p "$(echo $stepds | tr ' ' ,)" | sed 's/^/    /'; }
    for _ in $(seq 150); do [ -z "$(squeue -h -w n4 2>/dev/null)" ] && break; sleep 0.2; done
    [ -z "$(squeue -h -w n4 2>/dev/null)" ] && pass "$transport/$how: the job left $victim" \
        || fail "$transport/$how: a job still holds $victim: $(squeue -h -w n4 -o '%i %t')"
    expect_match "$transport/$how: $victim still usable" '^n4$' "$(timeout 30 srun -N1 -w n4 printenv SLURMD_NODENAME 2>&1)"
done
t_done
