# Fault events, one node: a rank killed with SIGKILL becomes PMIX_ERR_PROC_ABORTED and
# PMIX_EVENT_PROC_TERMINATED (naming it) at its local peers within a second; PMIx_Abort tells
# the processes registered for PMIX_ERR_JOB_TERMINATED before the step is killed, and srun still
# shows the abort status and message.
. "$(dirname "$0")/lib.sh"
prog="${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}/libexec/pmixcpp/tests/pmix_events"
[ -x "$prog" ] || { fail "$prog not installed"; t_done; exit; }

# (srun itself exits 137 = 128 + SIGKILL for the killed task; run_srun then says "timed out")
start=$(date +%s)
run_srun 60 --mpi=pmixcpp -N1 -n4 "$prog" kill
took=$(( $(date +%s) - start ))
echo "$out" | grep -E '^(FAIL|RESULT|DYING|KILL-LATENCY)' | sed 's/^/    /'
expect_eq "kill: srun reports the task killed by SIGKILL" 137 "$rc"
[ "$took" -lt 30 ] && pass "kill: step ended (${took}s)" || fail "kill: step took ${took}s"
expect_eq "kill: the 3 surviving ranks passed" 3 "$(echo "$out" | grep -c '^RESULT-PASS rank')"
expect_no_match "kill: no failed check" '^FAIL ' "$out"

start=$(date +%s)
run_srun 60 --mpi=pmixcpp -N1 -n4 "$prog" abort
took=$(( $(date +%s) - start ))
echo "$out" | grep -E 'TOLD|PMIx_Abort|error' | sed 's/^/    /' | head -12
expect_eq "abort: srun exits with the abort status" 42 "$rc"
[ "$took" -lt 25 ] && pass "abort: step ended quickly (${took}s)" || fail "abort: step took ${took}s"
expect_match "abort: message shown by srun" 'PMIx_Abort by slurm\.[0-9]+\.[0-9]+:0: events test abort' "$out"
told=$(echo "$out" | grep -c '^TOLD rank [0-9]*: .*status 42: rank 0 called PMIx_Abort: events test abort')
# the job's end is non-default: a default handler (OpenMPI's aborts with "Unknown error") does not get it
expect_no_match "abort: no default handler got the job's end" '^DEFAULT-HANDLER rank [0-9]*: PMIX_(ERR_JOB_TERMINATED|EVENT_JOB_END)' "$out"
[ "$told" -ge 3 ] && pass "abort: the other ranks were told before being killed ($told ranks)" \
    || fail "abort: only $told ranks were told"
t_done
