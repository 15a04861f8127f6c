# pmix_reinit (tests/programs/pmix_reinit.c) at -N2 -n4: nested PMIx_Init/PMIx_Finalize (only the
# last Finalize ends the process's use of the server), PMIx_Init again after the last Finalize
# (same namespace and rank; data and fences work again), and odd ranks that finalize and come
# back while the even ranks wait in a fence over every rank (the fence completes).
# Requires: make install (PMIXCPP_PREFIX/libexec/pmixcpp/tests/pmix_reinit).
. "$(dirname "$0")/lib.sh"
prog="${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}/libexec/pmixcpp/tests/pmix_reinit"
[ -x "$prog" ] || { fail "$prog not installed"; t_done; exit; }

run_srun 120 --mpi=pmixcpp -N2 -n4 "$prog"
expect_eq "pmix_reinit exit status" 0 "$rc"
expect_eq "all 4 ranks passed" 4 "$(echo "$out" | grep -c '^RESULT-PASS rank')"
expect_no_match "no failed check" '^FAIL ' "$out"
expect_eq "every rank came back three times and once more staggered" 4 \
    "$(echo "$out" | grep -c '^PASS rank [0-9]*: again 2: same proc')"
echo "$out" | grep -E '^(FAIL|RESULT)' | sed 's/^/    /'

# Attack, as the unprivileged user nobody: a child process of rank 1, with its environment and
# token, claims rank 1 after rank 1 finalized: refused while rank 1's process runs (one log line),
# and rank 1 itself then connects again.
if id nobody >/dev/null 2>&1; then
    f=$(mktemp); chmod 666 "$f"
    t0=$(date '+%Y-%m-%dT%H:%M:%S')
    ( cd /tmp && runuser -u nobody -- env SLURM_CONF="$SLURM_CONF" timeout -k 5 120 \
        srun --mpi=pmixcpp -N2 -n4 "$prog" impostor >"$f" 2>&1; echo "rc=$?" >>"$f" )
    out=$(cat "$f"); rm -f "$f"
    expect_match "impostor: the step ends normally" '^rc=0$' "$out"
    expect_eq "impostor: all 4 ranks passed" 4 "$(echo "$out" | grep -c '^RESULT-PASS rank')"
    expect_match "impostor: the child's fence as rank 1 failed" '^IMPOSTOR rank 1 .*-> PMIX_ERR_(LOST_CONNECTION|NO_PERMISSIONS)' "$out"
    expect_match "impostor: refused with a log line" 'refusing client pid [0-9]+ .*claiming rank 1: rank 1 finalized in pid [0-9]+, which still runs' \
        "$(slurmd_logs | awk -v t="$t0" 'substr($1, 2) >= t')"
else
    echo "  skip: no user 'nobody' for the impostor"
fi
t_done
