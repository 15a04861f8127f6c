# Job control a process asks for itself, and process monitoring (tests/programs/pmix_jctrl.c),
# across two nodes:
#  1. checkpoint methods: even ranks by SIGUSR2, odd ranks by the PMIX_JCTRL_CHECKPOINT event;
#     rank 0's PMIX_JOB_CTRL_CHECKPOINT reaches each rank by its own method, once (the forward to
#     the other node included); bad methods, an unknown rank, file monitoring: clear errors.
#  2. heartbeat monitors: the one rank that stops beating is reported to every rank, once, with
#     the monitor's id; cancel works.
#  3. the time-limit alert (srun -t 1, alert 57 s before the end) uses each rank's method.
#  4. OpenPMIx's own jctrl/simpjctrl programs are in the conformance suite.
. "$(dirname "$0")/lib.sh"
prog="${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}/libexec/pmixcpp/tests/pmix_jctrl"
[ -x "$prog" ] || { fail "$prog not installed"; t_done; exit; }

run_srun 60 --mpi=pmixcpp -N2 --ntasks-per-node=2 "$prog" checkpoint
expect_eq "checkpoint: exit status" 0 "$rc"
expect_eq "checkpoint: all 4 ranks passed" 4 "$(echo "$out" | grep -c '^RESULT-PASS rank')"
expect_eq "checkpoint: 2 ranks told by signal only" 2 "$(echo "$out" | grep -c 'checkpoint by signal: signal 1 event 0')"
expect_eq "checkpoint: 2 ranks told by event only" 2 "$(echo "$out" | grep -c 'checkpoint by event: signal 0 event 1')"
expect_no_match "checkpoint: no failed check" '^FAIL ' "$out"

run_srun 60 --mpi=pmixcpp -N2 --ntasks-per-node=2 "$prog" heartbeat
expect_eq "heartbeat: exit status" 0 "$rc"
expect_eq "heartbeat: all 4 ranks passed" 4 "$(echo "$out" | grep -c '^RESULT-PASS rank')"
expect_eq "heartbeat: every rank got one alert about rank 3" 4 \
    "$(echo "$out" | grep -c 'heartbeat alerts 1 about rank 3 (monitor beat-test)')"
expect_no_match "heartbeat: no failed check" '^FAIL ' "$out"

SLURM_PMIXCPP_TIMELIMITALERT=57 run_srun 60 --mpi=pmixcpp -t 1 -N2 --ntasks-per-node=2 "$prog" timelimit 20
expect_eq "time limit: exit status" 0 "$rc"
expect_eq "time limit: every rank checkpointed by its event" 4 "$(echo "$out" | grep -c 'time-limit checkpoint events 1')"
echo "$out" | grep -E '^(FAIL|RESULT)' | sed 's/^/    /'
t_done
