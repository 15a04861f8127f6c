# pmix_fence (tests/programs/pmix_fence.c) on 8 local ranks: every rank must report RESULT-PASS.
# Requires: make install (PMIXCPP_PREFIX/libexec/pmixcpp/tests/pmix_fence).
. "$(dirname "$0")/lib.sh"
prog="${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}/libexec/pmixcpp/tests/pmix_fence"
[ -x "$prog" ] || { fail "$prog not installed"; t_done; exit; }

run_srun 120 --mpi=pmixcpp -N1 -n8 "$prog"
expect_eq "pmix_fence exit status" 0 "$rc"
expect_eq "all 8 ranks passed" 8 "$(echo "$out" | grep -c '^RESULT-PASS rank')"
expect_no_match "no failed check" '^FAIL ' "$out"
echo "$out" | grep -E '^(FAIL|RESULT)' | sed 's/^/    /'
t_done
