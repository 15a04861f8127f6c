# A rank that exits without PMIx_Finalize while the others wait in a fence: the fence fails for
# everybody with an error (not a hang).
. "$(dirname "$0")/lib.sh"
prog="${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}/libexec/pmixcpp/tests/pmix_dead"
[ -x "$prog" ] || { fail "$prog not installed"; t_done; exit; }

run_srun 60 --mpi=pmixcpp -N1 -n8 "$prog"
echo "$out" | grep -E '^(FAIL|RESULT|DYING)' | sed 's/^/    /'
[ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] && pass "no hang" || fail "srun timed out: the fence hung"
expect_eq "the 7 surviving ranks passed" 7 "$(echo "$out" | grep -c '^RESULT-PASS rank')"
expect_no_match "no failed check" '^FAIL ' "$out"
t_done
