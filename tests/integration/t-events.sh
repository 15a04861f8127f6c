# Event notification on one node, 4 ranks: the handler chain order (all classes and
# positions, results handed on, ACTION_COMPLETE, refused second FIRST/LAST), then delivery and
# non-delivery across the local ranks for each range, the source and affected-proc filters,
# non-default events, and a handler registered after the event (cache replay).
. "$(dirname "$0")/lib.sh"
prog="${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}/libexec/pmixcpp/tests/pmix_events"
[ -x "$prog" ] || { fail "$prog not installed"; t_done; exit; }

run_srun 60 --mpi=pmixcpp -N1 -n2 "$prog" chain
echo "$out" | grep -E '^(FAIL|RESULT)' | sed 's/^/    /'
expect_eq "chain: srun status" 0 "$rc"
expect_eq "chain: both ranks passed" 2 "$(echo "$out" | grep -c '^RESULT-PASS rank')"
expect_match "chain order checked" '^PASS rank 0: chain order for a single-code event' "$out"

run_srun 60 --mpi=pmixcpp -N1 -n4 "$prog" ranges
echo "$out" | grep -E '^(FAIL|RESULT)' | sed 's/^/    /'
expect_eq "ranges: srun status" 0 "$rc"
expect_eq "ranges: all 4 ranks passed" 4 "$(echo "$out" | grep -c '^RESULT-PASS rank')"
expect_no_match "ranges: no failed check" '^FAIL ' "$out"

# Across nodes: ranges over the node transport (LOCAL stays on the sender's node), and a rank
# killed with SIGKILL on one node becomes an event at its peers on the other nodes within a second.
run_srun 60 --mpi=pmixcpp -N2 --ntasks-per-node=2 "$prog" ranges
echo "$out" | grep -E '^(FAIL|RESULT)' | sed 's/^/    /'
expect_eq "ranges -N2: srun status" 0 "$rc"
expect_eq "ranges -N2: all 4 ranks passed" 4 "$(echo "$out" | grep -c '^RESULT-PASS rank')"
run_srun 60 --mpi=pmixcpp -N4 --ntasks-per-node=2 "$prog" kill
expect_eq "kill -N4: the 7 survivors got the events in time" 7 "$(echo "$out" | grep -c '^RESULT-PASS rank')"
expect_no_match "kill -N4: no failed check" '^FAIL ' "$out"
run_srun 60 --mpi=pmixcpp -N2 --ntasks-per-node=1 "$prog" latency
echo "$out" | grep '^LATENCY' | sed 's/^/    /'
expect_eq "latency -N2: both ranks passed" 2 "$(echo "$out" | grep -c '^RESULT-PASS rank')"

# The job's time limit approaching: with -t 1 (60 s) and the alert 57 s before the end, every
# process on every node gets PMIX_JCTRL_PREEMPT_ALERT about 3 s after the start.
SLURM_PMIXCPP_TIMELIMITALERT=57 run_srun 60 --mpi=pmixcpp -t 1 -N2 --ntasks-per-node=2 "$prog" timelimit 20
echo "$out" | grep -E '^(FAIL|ALERT)' | sed 's/^/    /'
expect_eq "time-limit alert: srun status" 0 "$rc"
expect_eq "time-limit alert reached all 4 ranks" 4 "$(echo "$out" | grep -c '^RESULT-PASS rank')"
t_done
