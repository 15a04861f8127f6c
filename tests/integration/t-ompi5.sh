# OpenMPI 5 (Debian 13's 5.0.7, built against OpenPMIx 5) runs unmodified on our libpmix.so.2:
# hello and allreduce at -N2 -n4 and -N4 -n16, MPI_Comm_spawn, MPI-4 sessions with the psets
# mpi://WORLD and mpi://SELF, and communicators from the step's own per-app psets
# (MPI_Comm_create_from_group, MPI_Intercomm_create_from_groups) in a --multi-prog step of two
# apps at -N2 -n4 and -N4 -n16. Then the same programs under Slurm's own mpi/pmix_v5 (OpenPMIx
# 5 in slurmstepd), the anchor, printed side by side in one table (the anchor's results are
# figures, not assertions). Skipped (passes with a note) where OpenMPI is older than 5.
. "$(dirname "$0")/lib.sh"
: "${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}"
major=$(ompi_info --version 2>/dev/null | sed -n 's/^Open MPI v\([0-9]*\)\..*/\1/p')
if [ -z "$major" ] || [ "$major" -lt 5 ]; then
    echo "  SKIP: OpenMPI ${major:-?} installed; this test is for OpenMPI 5 (the Debian 13 stack)"
    t_done; exit
fi
mpi_build mpi_hello mpi_allreduce mpi_spawn mpi_session mpi_groups || { t_done; exit; }
# virtual nodes of one host: TCP over loopback between them (see TESTBED.md)
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,tcp OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo

# A --multi-prog file of two apps (both mpi_groups), the first half of the ranks and the rest.
multiprog() {
    local n=$1 f="$work/multi.$1.conf"
    printf '0-%d %s\n%d-%d %s\n' $((n / 2 - 1)) "$work/mpi_groups" $((n / 2)) $((n - 1)) "$work/mpi_groups" > "$f"
    chmod 644 "$f"
    echo "$f"
}

# case_run MPI LIMIT NAME: run case NAME under --mpi=MPI; sets out, rc and verdict (PASS/FAIL/HANG)
case_run() {
    local mpi=$1 limit=$2 name=$3 shape=${3##* } nodes ppn n
    nodes=${shape%x*} ppn=${shape#*x} n=$((nodes * ppn))
    case $name in
    hello*) run_srun "$limit" --mpi="$mpi" -N"$nodes" --ntasks-per-node="$ppn" "$work/mpi_hello"
        verdict=$(echo "$out" | grep -q "^MPI-HELLO-OK $n\$" && [ "$rc" = 0 ] && echo PASS || echo FAIL) ;;
    allreduce*) run_srun "$limit" --mpi="$mpi" -N"$nodes" --ntasks-per-node="$ppn" "$work/mpi_allreduce"
        verdict=$(echo "$out" | grep -q "^MPI-ALLREDUCE-OK $n\$" && [ "$rc" = 0 ] && echo PASS || echo FAIL) ;;
    spawn*) out=$(timeout -k 5 "$limit" salloc -N2 -n8 srun --mpi="$mpi" -N2 -n2 "$work/mpi_spawn" 2>&1); rc=$?
        verdict=$(echo "$out" | grep -q '^MPI-SPAWN-OK' && [ "$rc" = 0 ] && echo PASS || echo FAIL) ;;
    session*) run_srun "$limit" --mpi="$mpi" -N"$nodes" --ntasks-per-node="$ppn" "$work/mpi_session"
        verdict=$([ "$(echo "$out" | grep -c "^mpi://WORLD size $n sum $n")" = "$n" ] &&
                  [ "$(echo "$out" | grep -c '^mpi://SELF size 1 sum 1')" = "$n" ] && [ "$rc" = 0 ] && echo PASS || echo FAIL) ;;
    groups*) run_srun "$limit" --mpi="$mpi" -N"$nodes" --ntasks-per-node="$ppn" --multi-prog "$(multiprog "$n")"
        verdict=$([ "$(echo "$out" | grep -c '^MPI-GROUPS-OK')" = "$n" ] && [ "$rc" = 0 ] && echo PASS || echo FAIL) ;;
    esac
    if [ "$verdict" = FAIL ] && { [ "$rc" = 124 ] || [ "$rc" = 137 ]; }; then verdict="HANG (killed after ${limit} s)"; fi
    return 0
}

cases=("hello 2x2" "hello 4x4" "allreduce 2x2" "allreduce 4x4" "spawn 2x1" "session 2x2"
       "groups 2x2" "groups 4x4")
declare -A ours
for c in "${cases[@]}"; do
    case_run pmixcpp 120 "$c"
    ours[$c]=$verdict
    expect_eq "$c (nodes x tasks per node) under --mpi=pmixcpp" PASS "$verdict"
    [ "$verdict" = PASS ] || echo "$out" | tail -5 | sed 's/^/    /'
    if [ "${c%% *}" = groups ]; then
        expect_match "$c: the step's per-app psets, MPI_Comm_create_from_group and MPI_Intercomm_create_from_groups" \
            '^APP 1 local [0-9]+ sum [0-9]+ remote [0-9]+ rsum [0-9]+' "$out"
    fi
done

# The anchor: Slurm's own mpi/pmix_v5 (OpenPMIx 5 inside slurmstepd) with the same binaries.
anchor=$(srun --mpi=list 2>&1 | grep -o 'pmix_v[0-9]*' | sort -V | tail -1)
if [ -z "$anchor" ]; then
    echo "  (no mpi/pmix_vN plugin installed: no anchor column)"
else
    printf '  %-16s %-10s %s\n' "program" "pmixcpp" "$anchor (OpenPMIx in slurmstepd)"
    for c in "${cases[@]}"; do
        case_run "$anchor" 40 "$c"
        printf '  %-16s %-10s %s\n' "$c" "${ours[$c]}" "$verdict"
    done
fi
t_done
