# Three lost nodes in a row: on a 5-node step with NOTHING pending (no fence, no Get),
# `kill -9` of the slurmstepd of n2, n3 and n4 at once (and of their tasks, as when the nodes die).
# n3's two ring neighbours die with it, so only the ring closing over the survivors finds it: n1
# and n5 notice n2 and n4, then watch their nearest live neighbours, find n3's server gone and,
# since no live node got a goodbye from it, report it lost too. Both survivors' ranks must get
# one PMIX_ERR_NODE_DOWN for each of the three nodes within a few seconds (the delays are
# printed), srun must end and no slurmstepd of the step be left. Over TCP, over UCX (default
# transports) and over UCX restricted to TCP. Then only n3 is killed and the survivors' nodes end
# at different times: exactly n3 is reported. Needs 5 nodes (run.sh starts 6).
. "$(dirname "$0")/lib.sh"
prog="${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}/libexec/pmixcpp/tests/pmix_events"
[ -x "$prog" ] || { fail "$prog not installed"; t_done; exit; }
nodes=$(sinfo -h -o '%D' 2>/dev/null | head -1)
[ "${nodes:-0}" -ge 5 ] || { fail "needs a cluster of 5 nodes or more (has ${nodes:-0}; PMIXCPP_NODES)"; t_done; exit; }
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# tcp, ucx, ucx-tcp: n2, n3, n4 killed. one-tcp, one-ucx: only n3 killed (its neighbours see it);
# the survivors' nodes then end 0.6 s apart: no other node may be reported (no false loss).
for case in ${PMIXCPP_NODEDOWN3_CASES:-tcp ucx one-tcp one-ucx}; do
    echo "  -- $case"
    victims=n2,n3,n4 nsurv=4
    env=(SLURM_PMIXCPP_TRANSPORT=tcp)
    [ $case = ucx ] && env=(SLURM_PMIXCPP_TRANSPORT=ucx)
    [ $case = one-tcp ] && victims=n3 nsurv=8
    [ $case = one-ucx ] && { victims=n3 nsurv=8; env=(SLURM_PMIXCPP_TRANSPORT=ucx); }
    # the previous case's killed nodes are still completing for a while (longer under load)
    wait_idle 'n[1-5]' 120 || fail "$case: n[1-5] not idle after 120 s: $(sinfo -h -N -n 'n[1-5]' -o '%N %t' | paste -sd' ')"
    start_ready "$log" 10 'n[1-5]' env "${env[@]}" SLURM_PMIXCPP_TIMEOUT=120 timeout -k 5 200 \
        srun --mpi=pmixcpp -N5 --ntasks-per-node=2 -w n[1-5] "$prog" nodesdown 60 "$victims"
    expect_eq "$case: 10 ranks ready" 10 "$(grep -c '^READY' "$log")"
    if [ "$(grep -c '^READY' "$log")" -lt 10 ]; then
        sed 's/^/    /' "$log" | tail -20
        kill "$srun_pid" 2>/dev/null; wait "$srun_pid"
        continue
    fi
    stepds=$(awk '$1 == "READY" { print $7 }' "$log" | while read -r p; do awk '/^PPid:/ { print $2 }' "/proc/$p/status" 2>/dev/null; done | sort -u)
    kill_pids=""
    for v in ${victims//,/ }; do
        pids=$(awk -v v="$v" '$1 == "READY" && $5 == v { print $7 }' "$log")
        stepd=$(awk '/^PPid:/ { print $2 }' "/proc/$(echo "$pids" | head -1)/status" 2>/dev/null)
        case "$(tr '\0' ' ' < "/proc/$stepd/cmdline" 2>/dev/null)" in
            slurmstepd*) kill_pids="$kill_pids $stepd $pids" ;;
            *) fail "$case: no slurmstepd above the ranks of $v" ;;
        esac
    done
    t_kill=$(date +%s.%N)
    kill -9 $kill_pids
    t0=$SECONDS
    wait "$srun_pid"
    rc=$?
    took=$((SECONDS - t0))
    grep -E '^(FAIL|EVENT-AT)|srun: error' "$log" | sort | uniq | head -20 | sed 's/^/    /'
    [ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] && [ "$took" -lt 60 ] && pass "$case: srun ended ${took}s after the kill (exit $rc)" \
        || fail "$case: srun did not end by itself (exit $rc after ${took}s)"
    expect_eq "$case: the $nsurv surviving ranks passed" $nsurv "$(grep -c '^RESULT-PASS rank' "$log")"
    expect_no_match "$case: no failed check" '^FAIL ' "$(cat "$log")"
    for v in ${victims//,/ }; do
        expect_eq "$case: the $nsurv surviving ranks were told about $v" $nsurv "$(awk -v v="$v" '$1 == "EVENT-AT" && $4 == v' "$log" | wc -l)"
        lat=$(awk -v k="$t_kill" -v v="$v" '$1 == "EVENT-AT" && $4 == v { d = $5 - k; if (d > m) m = d } END { printf "%.3f", m }' "$log")
        echo "    NODE_DOWN delay for $v (kill -9 -> last survivor's handler): ${lat} s"
        awk -v l="$lat" 'BEGIN { exit !(l > 0 && l < 5) }' && pass "$case: $v reported within 5 s (${lat} s)" \
            || fail "$case: $v reported after ${lat} s"
    done
    expect_eq "$case: srun names exactly the killed nodes as lost" "$victims" \
        "$(sed -n 's/.*node \(n[0-9]*\) of step .* was lost.*/\1/p' "$log" | sort | paste -sd,)"
    sleep 1
    left=0
    for p in $stepds; do  # (the killed ones may linger as zombies until slurmd reaps them)
        [ -d "/proc/$p" ] && [ "$(awk '{ print $3 }' "/proc/$p/stat" 2>/dev/null)" != Z ] && left=$((left + 1))
    done
    [ "$left" -eq 0 ] && pass "$case: no slurmstepd of the step left" \
        || { fail "$case: $left slurmstepd of the step still running"; ps -o pid,stat,etime,cmd -p "$(echo $stepds | tr ' ' ,)" | sed 's/^/    /'; }
    for _ in $(seq 300); do [ -z "$(squeue -h -w n[1-5] 2>/dev/null)" ] && break; sleep 0.2; done
    [ -z "$(squeue -h -w n[1-5] 2>/dev/null)" ] && pass "$case: the job left n[1-5]" \
        || fail "$case: a job still holds n[1-5]: $(squeue -h -w n[1-5] -o '%i %t')"
done
t_done
