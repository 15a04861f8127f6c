# MPI-4 sessions under OpenMPI 5 (Debian 13's 5.0.7) at -N2 -n4, one run per case of
# tests/programs/mpi_sessions.c: two sessions finalized in either order or by rank, a session
# finalized and started again three times, communicators from mpi://WORLD, mpi://SELF and
# mpix://SHARED created and freed in a loop, MPI_Session_get_pset_info's "mpi_size". Then the
# same under Slurm's own mpi/pmix_v5 (the anchor), printed side by side (the anchor's results are
# figures, not assertions; after a hang in a pset case the anchor's other pset cases are not
# run). Skipped (passes with a note) where OpenMPI is older than 5.
. "$(dirname "$0")/lib.sh"
: "${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}"
major=$(ompi_info --version 2>/dev/null | sed -n 's/^Open MPI v\([0-9]*\)\..*/\1/p')
if [ -z "$major" ] || [ "$major" -lt 5 ]; then
    echo "  SKIP: OpenMPI ${major:-?} installed; sessions need OpenMPI 5 (the Debian 13 stack)"
    t_done; exit
fi
mpi_build mpi_sessions || { t_done; exit; }
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,tcp OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo

# case_run MPI LIMIT CASE: sets out, rc and verdict (PASS/FAIL/HANG)
case_run() {
    run_srun "$2" --mpi="$1" -N2 -n4 "$work/mpi_sessions" "$3"
    verdict=$([ "$(echo "$out" | grep -c "^MPI-SESSIONS-OK $3\$")" = 4 ] && [ "$rc" = 0 ] && echo PASS || echo FAIL)
    if [ "$verdict" = FAIL ] && { [ "$rc" = 124 ] || [ "$rc" = 137 ]; }; then verdict="HANG (killed after $2 s)"; fi
    # what went wrong, in one line
    why=$(echo "$out" | grep -m1 -E 'MPI-SESSIONS-FAIL|PMIx Event|error|Error' | cut -c1-100)
    return 0
}

cases=(twice-12 twice-21 twice-mix again loop psetinfo)
declare -A ours ourwhy
for c in "${cases[@]}"; do
    case_run pmixcpp 120 "$c"
    ours[$c]=$verdict ourwhy[$c]=$why
    expect_eq "$c under --mpi=pmixcpp" PASS "$verdict"
    [ "$verdict" = PASS ] || echo "$out" | tail -8 | sed 's/^/    /'
    [ "$c" = psetinfo ] && echo "$out" | grep '^PSET-INFO' | sort | uniq -c | sed 's/^/    /'
    expect_no_match "$c: no event reached OpenMPI's default handler" 'PMIx Event Notification' "$out"
done

anchor=$(srun --mpi=list 2>&1 | grep -o 'pmix_v[0-9]*' | sort -V | tail -1)
if [ -z "$anchor" ]; then
    echo "  (no mpi/pmix_vN plugin installed: no anchor column)"
else
    printf '  %-10s %-10s %s\n' "case" "pmixcpp" "$anchor (OpenPMIx in slurmstepd)"
    # Every case but psetinfo makes communicators from psets: where the anchor hung in one, it
    # hangs in the others the same way; they are not run again (each hang costs its whole limit).
    hung=""
    for c in "${cases[@]}"; do
        if [ -n "$hung" ] && [ "$c" != psetinfo ]; then
            printf '  %-10s %-10s %s\n' "$c" "${ours[$c]}" "not run (hung in $hung)"
            continue
        fi
        case_run "$anchor" 40 "$c"
        case $verdict in HANG*) hung=$c ;; esac
        printf '  %-10s %-10s %s\n' "$c" "${ours[$c]}" "$verdict${why:+  ($why)}"
    done
fi
t_done
