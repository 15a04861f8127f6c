# Signals as events (PMIxCppSignalEvents): Slurm tells slurmstepd's plugin nothing of
# `scancel --signal`, so the client library turns the listed signals into local events.
#  1. handlers registered: `scancel --signal=USR1` of a running 2-node step reaches every rank as
#     PMIX_JCTRL_PREEMPT_ALERT carrying the signal number; `scancel --signal=TERM` then arrives
#     as PMIX_ERR_JOB_CANCELED and the ranks finish cleanly (srun exits 0).
#  2. no handler: the signal acts exactly as without pmixcpp (USR1 terminates the tasks, as
#     under --mpi=none).
#  3. `scancel <job>` (Slurm's SIGTERM, SIGKILL after KillWait) reaches the handlers too.
#  5. Slurm's `--signal=USR1@<seconds>` before the time limit reaches the handlers.
#  4. Unmodified OpenMPI (its default event handler aborts the job on any event it sees) with
#     USR1,USR2,TERM enabled: USR1 and TERM end the rank by that signal, exactly as without the
#     key, never through OpenMPI's abort (the events are non-default and nobody registered).
#     One rank: with several, a rank that the signal ends first becomes PMIX_ERR_PROC_ABORTED
#     at the others, which OpenMPI answers with MPI_Abort -- with or without the key (the
#     signal reaches the nodes at different times), so that would test nothing of ours.
. "$(dirname "$0")/lib.sh"
prog="${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}/libexec/pmixcpp/tests/pmix_events"
[ -x "$prog" ] || { fail "$prog not installed"; t_done; exit; }
log=$(mktemp)
work=$(mktemp -d /tmp/pmixcpp-sig.XXXXXX)
trap 'rm -rf "$log" "$work"' EXIT

# wait_lines PATTERN N SECONDS
wait_lines() {
    for _ in $(seq $(($3 * 10))); do [ "$(grep -c -- "$1" "$log")" -ge "$2" ] && return 0; sleep 0.1; done
    return 1
}
# the running step of our single job ("<job>.<step>")
# (retried: under load squeue can fail or time out talking to slurmctld)
current_step() {
    local s
    for _ in $(seq 50); do
        s=$(squeue -h -s -o %i 2>/dev/null | grep -E '^[0-9]+\.[0-9]+$' | head -1)
        [ -n "$s" ] && { echo "$s"; return 0; }
        sleep 0.2
    done
    return 1
}

# 1. USR1 then TERM, handlers registered
: >"$log"  # emptied here too: until the child opens it, the wait would count the last run's lines
SLURM_PMIXCPP_SIGNALEVENTS=USR1,USR2,TERM timeout -k 5 90 \
    srun --mpi=pmixcpp -N2 --ntasks-per-node=2 -w n[1-2] "$prog" signal handler 60 >"$log" 2>&1 &
srun_pid=$!
wait_lines '^READY' 4 30 || fail "handler: ranks not ready"
step=$(current_step)
scancel --signal=USR1 "$step"
wait_lines '^SIGNAL-EVENT.*signal 10 ' 4 10
expect_eq "handler: scancel --signal=USR1 $step reached 4 ranks as PMIX_JCTRL_PREEMPT_ALERT" 4 \
    "$(grep -c '^SIGNAL-EVENT rank [0-9]*: PMIX_JCTRL_PREEMPT_ALERT signal 10 non-default 1' "$log")"
scancel --signal=TERM "$step"
wait "$srun_pid"
rc=$?
grep -E '^(SIGNAL|FAIL)|error' "$log" | sort | head -12 | sed 's/^/    /'
expect_eq "handler: SIGTERM reached 4 ranks as PMIX_ERR_JOB_CANCELED" 4 \
    "$(grep -c '^SIGNAL-EVENT rank [0-9]*: PMIX_ERR_JOB_CANCELED signal 15 non-default 1' "$log")"
expect_eq "handler: the ranks finished cleanly" 4 "$(grep -c '^RESULT-PASS rank' "$log")"
expect_eq "handler: srun exit status" 0 "$rc"

# 2. no handler: USR1 terminates the tasks as it does without pmixcpp
for mpi in none pmixcpp; do
    cmd=("$prog" signal none 30)
    [ $mpi = none ] && cmd=(sleep 30)  # (the PMIx program needs a PMIx server)
    : >"$log"  # emptied here too: until the child opens it, the wait would count the last run's lines
    SLURM_PMIXCPP_SIGNALEVENTS=USR1,USR2,TERM timeout -k 5 60 \
        srun --mpi=$mpi -N2 --ntasks-per-node=2 -w n[1-2] "${cmd[@]}" >"$log" 2>&1 &
    srun_pid=$!
    if [ $mpi = none ]; then sleep 3; else wait_lines '^READY' 4 30; fi
    scancel --signal=USR1 "$(current_step)"
    wait "$srun_pid"
    eval "rc_$mpi=$?"
    eval "msg_$mpi=\"\$(grep -c 'User defined signal 1' \"\$log\")\""
done
echo "    --mpi=none: exit $rc_none, $msg_none tasks 'User defined signal 1'; --mpi=pmixcpp: exit $rc_pmixcpp, $msg_pmixcpp"
expect_eq "no handler: srun's exit status as with --mpi=none" "$rc_none" "$rc_pmixcpp"
expect_eq "no handler: tasks ended by SIGUSR1 as with --mpi=none" "$msg_none" "$msg_pmixcpp"
expect_no_match "no handler: no event delivered" '^SIGNAL-EVENT' "$(cat "$log")"

# 3. scancel of the job: Slurm's SIGTERM becomes PMIX_ERR_JOB_CANCELED
: >"$log"  # emptied here too: until the child opens it, the wait would count the last run's lines
SLURM_PMIXCPP_SIGNALEVENTS=TERM timeout -k 5 90 \
    srun --mpi=pmixcpp -N2 --ntasks-per-node=2 -w n[1-2] "$prog" signal handler 60 >"$log" 2>&1 &
srun_pid=$!
wait_lines '^READY' 4 30 || fail "scancel: ranks not ready"
step=$(current_step)
scancel "${step%.*}"
wait "$srun_pid"
expect_eq "scancel ${step%.*}: SIGTERM reached 4 ranks as PMIX_ERR_JOB_CANCELED" 4 \
    "$(grep -c '^SIGNAL-EVENT rank [0-9]*: PMIX_ERR_JOB_CANCELED signal 15' "$log")"

# 5. srun -t 2 --signal=USR1@80: slurmctld checks time limits every 30 s (PERIODIC_TIMEOUT) and
#    signals once now + 80 + 30 >= end = start + 120, so between 10 and 40 s after the start --
#    never before the tasks installed their handlers (with -t 1 @50 the very first check
#    qualifies, which can come before PMIx_Init, and the default USR1 disposition ends the task)
SLURM_PMIXCPP_SIGNALEVENTS=USR1 timeout -k 5 150 \
    srun --mpi=pmixcpp -t 2 --signal=USR1@80 -N2 --ntasks-per-node=1 -w n[1-2] "$prog" signal handler 100 usr1 \
    >"$log" 2>&1
expect_eq "srun --signal=USR1@80: PMIX_JCTRL_PREEMPT_ALERT (signal 10) at both ranks" 2 \
    "$(grep -c '^SIGNAL-EVENT rank [0-9]*: PMIX_JCTRL_PREEMPT_ALERT signal 10 non-default 1' "$log")"

# 4. OpenMPI
if command -v mpicc >/dev/null 2>&1; then
    cat >"$work/mpi_wait.c" <<'C'
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv) {
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    printf("READY rank %d\n", rank);
    fflush(stdout);
    sleep(30);
    MPI_Finalize();
    return 0;
}
C
    mpicc -o "$work/mpi_wait" "$work/mpi_wait.c" && chmod 755 "$work" "$work/mpi_wait"
    for sig in USR1 TERM; do
        : >"$log"  # emptied here too: until the child opens it, the wait would count the last run's lines
        SLURM_PMIXCPP_SIGNALEVENTS=USR1,USR2,TERM OMPI_MCA_btl=self,tcp timeout -k 5 60 \
            srun --mpi=pmixcpp -N1 -n1 -w n1 "$work/mpi_wait" >"$log" 2>&1 &
        srun_pid=$!
        wait_lines '^READY' 1 30 || fail "openmpi $sig: rank not ready"
        scancel --signal=$sig "$(current_step)"
        wait "$srun_pid"
        rc=$?
        [ $sig = USR1 ] && want=138 || want=143
        expect_eq "openmpi: SIG$sig ends the rank by that signal (srun exit)" "$want" "$rc"
        expect_no_match "openmpi: SIG$sig: no MPI abort" 'MPI_ABORT|ompi_mpi_abort|PMIx_Abort' "$(cat "$log")"
    done
else
    echo "  SKIP: mpicc not installed"
fi
t_done
