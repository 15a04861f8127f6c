# PMIx_Abort: rank 1 of 8 aborts with status 7; the step ends at once with a non-zero status, the
# message is printed, PMIx_Abort returned only after the server had the request, and the ranks
# waiting in a fence are released (or killed), not left hanging.
. "$(dirname "$0")/lib.sh"
prog="${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}/libexec/pmixcpp/tests/pmix_abort"
[ -x "$prog" ] || { fail "$prog not installed"; t_done; exit; }

start=$(date +%s)
run_srun 60 --mpi=pmixcpp -N1 -n8 "$prog"
took=$(( $(date +%s) - start ))
echo "$out" | sed 's/^/    /' | head -20
expect_eq "srun exits with the abort status" 7 "$rc"
[ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] && pass "srun did not time out" || fail "srun timed out"
[ "$took" -lt 25 ] && pass "step ended quickly (${took}s)" || fail "step took ${took}s (the ranks slept instead of being killed)"
expect_match "abort message on stderr" 'PMIx_Abort by slurm\.[0-9]+\.[0-9]+:1: pmix_abort test: rank 1 aborts with status 7' "$out"
expect_no_match "no rank finished its sleep" 'RESULT-PASS' "$out"
t_done
