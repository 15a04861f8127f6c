# Programs that bring their own OpenPMIx: Debian's OpenMPI 4.1 on Debian's OpenPMIx 4.2
# (libpmix.so.2 of the libpmix2 package), pmixcpp's client library NOT on the path, served by the
# step's server over OpenPMIx's own wire protocol (the native listener, PMIxCppClientLib native):
# hello and allreduce at -N2 -n4 and -N4 -n16, every rank showing the libpmix it mapped
# (/proc/self/maps) and the allreduce checked; allreduce also without a collecting fence (direct modex). The same programs under --mpi=pmix_v4 (Slurm's
# own plugin, the anchor) with both times printed (figures, not assertions). Then the default
# (both): half the ranks on pmixcpp's library, half on OpenPMIx's, in one namespace and one fence.
# MPI_Comm_spawn on OpenPMIx's library (tests/programs/mpi_spawn.c): -N2 -n4 parents spawn 4
# children, -N4 -n16 spawn 16 (a new step, itself served natively), messages over the
# intercommunicator, an allreduce over the merged communicator, disconnect; every child's line
# counted. The anchor (pmix_v4) as a figure only: Slurm's plugin has no spawn. With OpenMPI 5:
# MPI-4 sessions (process sets and MPI_Comm_create_from_group: PMIx queries and groups).
# Requires: make install, mpicc (libopenmpi-dev) and libpmix2; a cluster with >= 4 nodes and
# >= 8 CPUs per node.
. "$(dirname "$0")/lib.sh"
: "${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}"
major=$(ompi_info --version 2>/dev/null | sed -n 's/^Open MPI v\([0-9]*\)\..*/\1/p')
sessions=""
[ -n "$major" ] && [ "$major" -ge 5 ] && sessions="mpi_session mpi_sessions"
# shellcheck disable=SC2086
mpi_build mpi_native mpi_spawn $sessions || { t_done; exit; }
ours_dir="$PMIXCPP_PREFIX/lib/pmixcpp"

# check_libs WHAT N EXPECT(ours|native|mixed): every rank named its library, of the expected kind
check_libs() {
    local what=$1 n=$2 kind=$3 libs nours nnative
    libs=$(echo "$out" | sed -n 's/^LIBPMIX [0-9]* //p')
    expect_eq "$what: every rank named its libpmix" "$n" "$(echo "$out" | grep -c '^LIBPMIX ')"
    nours=$(echo "$libs" | grep -c "^$ours_dir/")
    nnative=$(echo "$libs" | grep -cE '^/usr/lib/[^ ]*/pmix2/lib/libpmix\.so')
    case $kind in
    native) expect_eq "$what: ranks on Debian's OpenPMIx (/usr/lib/*/pmix2/lib/libpmix.so*)" "$n" "$nnative" ;;
    ours) expect_eq "$what: ranks on pmixcpp's libpmix ($ours_dir)" "$n" "$nours" ;;
    mixed)
        expect_eq "$what: ranks on pmixcpp's libpmix" "$((n / 2))" "$nours"
        expect_eq "$what: ranks on Debian's OpenPMIx" "$((n / 2))" "$nnative" ;;
    esac
    [ "$((nours + nnative))" -eq "$n" ] || echo "$libs" | sort | uniq -c | sed 's/^/    /'
}

# timed MPI ARGS...: run_srun with its wall time in $secs
timed() {
    local t0 t1
    t0=$(date +%s.%N)
    run_srun "${timed_limit:-180}" "$@"
    t1=$(date +%s.%N)
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
}

# The job's environment without pmixcpp's library directory.
clean_ldp=$(printf '%s' "${LD_LIBRARY_PATH:-}" | tr ':' '\n' | grep -vxF "$ours_dir" | paste -sd: -)
figures=""
for shape in 2:4 4:16; do
    nodes=${shape%:*}; n=${shape#*:}
    for mode in hello allreduce; do
        LD_LIBRARY_PATH="$clean_ldp" SLURM_PMIXCPP_CLIENTLIB=native OMPI_MCA_btl=self,vader,tcp \
            timed --mpi=pmixcpp -N"$nodes" -n"$n" "$work/mpi_native" "$mode"
        native_secs=$secs
        expect_eq "native $mode -N$nodes -n$n: exit status" 0 "$rc"
        expect_match "native $mode -N$nodes -n$n" "^MPI-NATIVE-OK $mode $n\$" "$out"
        check_libs "native $mode -N$nodes -n$n" "$n" native
        [ "$rc" -eq 0 ] || echo "$out" | grep -v '^LIBPMIX' | head -20 | sed 's/^/    /'
        # The anchor: a figure, not an assertion (Slurm's own plugin, not what is tested here).
        LD_LIBRARY_PATH="$clean_ldp" OMPI_MCA_btl=self,vader,tcp \
            timed_limit=60 timed --mpi=pmix_v4 -N"$nodes" -n"$n" "$work/mpi_native" "$mode"
        anchor="${secs} s"
        echo "$out" | grep -q "^MPI-NATIVE-OK $mode $n\$" && [ "$rc" -eq 0 ] || anchor="failed (status $rc after ${secs} s)"
        figures="$figures
    $mode -N$nodes -n$n: pmixcpp native ${native_secs} s, pmix_v4 $anchor"
    done
done
echo "    srun wall times (2 CPUs shared by every node of the test cluster):$figures"

# OpenMPI's modex without a collecting fence (async modex): every peer's data is a Get the server
# answers by direct modex from the peer's node.
LD_LIBRARY_PATH="$clean_ldp" SLURM_PMIXCPP_CLIENTLIB=native OMPI_MCA_btl=self,vader,tcp \
    OMPI_MCA_pmix_base_async_modex=1 OMPI_MCA_pmix_base_collect_data=0 \
    run_srun 180 --mpi=pmixcpp -N4 -n8 "$work/mpi_native" allreduce
expect_eq "native allreduce -N4 -n8, direct modex: exit status" 0 "$rc"
expect_match "native allreduce -N4 -n8, direct modex" '^MPI-NATIVE-OK allreduce 8$' "$out"
check_libs "native allreduce -N4 -n8, direct modex" 8 native
[ "$rc" -eq 0 ] || echo "$out" | grep -v '^LIBPMIX' | head -20 | sed 's/^/    /'

# MPI_Abort on OpenPMIx's library: PMIx_Abort reaches the server, the step ends at once.
t0=$SECONDS
LD_LIBRARY_PATH="$clean_ldp" SLURM_PMIXCPP_CLIENTLIB=native OMPI_MCA_btl=self,vader,tcp \
    run_srun 120 --mpi=pmixcpp -N2 -n4 "$work/mpi_native" abort
[ "$rc" -ne 0 ] && pass "native MPI_Abort: srun fails (status $rc)" || fail "native MPI_Abort: srun exited 0"
[ $((SECONDS - t0)) -lt 60 ] && pass "native MPI_Abort: the step ended in $((SECONDS - t0)) s" || fail "native MPI_Abort took $((SECONDS - t0)) s"
sleep 1
expect_match "native MPI_Abort: the server logged the abort" "rank 3 \(pid [0-9]+\) called PMIx_Abort\(status 3" "$(slurmd_logs)"

# MPI-4 sessions on OpenPMIx's library (OpenMPI 5 only): process sets through PMIx queries,
# MPI_Comm_create_from_group through PMIx groups (construct with a context id, destruct), two
# sessions finalized in turn, psets in a loop (tests/programs/mpi_session.c, mpi_sessions.c).
if [ -n "$sessions" ]; then
    LD_LIBRARY_PATH="$clean_ldp" SLURM_PMIXCPP_CLIENTLIB=native OMPI_MCA_btl=self,tcp \
        run_srun 120 --mpi=pmixcpp -N2 -n4 "$work/mpi_session"
    expect_eq "native sessions: exit status" 0 "$rc"
    expect_eq "native sessions: communicators from mpi://WORLD and mpi://SELF on every rank" 4 \
        "$(echo "$out" | grep -c '^MPI-SESSION-OK$')"
    [ "$rc" -eq 0 ] || echo "$out" | tail -8 | sed 's/^/    /'
    for c in twice-12 loop psetinfo; do
        LD_LIBRARY_PATH="$clean_ldp" SLURM_PMIXCPP_CLIENTLIB=native OMPI_MCA_btl=self,tcp \
            run_srun 120 --mpi=pmixcpp -N2 -n4 "$work/mpi_sessions" "$c"
        expect_eq "native sessions $c: every rank" 4 "$(echo "$out" | grep -c "^MPI-SESSIONS-OK $c\$")"
        [ "$rc" -eq 0 ] || echo "$out" | tail -8 | sed 's/^/    /'
    done
else
    echo "  (OpenMPI ${major:-?}: no MPI-4 sessions before OpenMPI 5)"
fi

# MPI_Comm_spawn with OpenPMIx's library on both sides: SPAWNNB (the app's OMPI_PARENT_PORT into
# the children's environment), PUBLISHNB/LOOKUPNB, CONNECTNB (the other job's data), Gets and
# fences across the two namespaces, DISCONNECTNB.
spawn_figures=""
for shape in 2:4:4 4:16:16; do
    nodes=${shape%%:*}; rest=${shape#*:}; n=${rest%:*}; kids=${rest#*:}
    t0=$(date +%s.%N)
    out=$(LD_LIBRARY_PATH="$clean_ldp" SLURM_PMIXCPP_CLIENTLIB=native OMPI_MCA_btl=self,tcp \
        timeout -k 5 240 salloc -N"$nodes" -n$((n + kids)) srun --mpi=pmixcpp -N"$nodes" -n"$n" "$work/mpi_spawn" "$kids" 2>&1)
    rc=$?
    secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
    what="native MPI_Comm_spawn of $kids from -N$nodes -n$n"
    expect_eq "$what: exit status" 0 "$rc"
    expect_match "$what" "^MPI-SPAWN-OK $kids\$" "$out"
    expect_match "$what: parents and children in one allreduce" "^parent: allreduce over parents\+children = $((n + kids)), messages right\$" "$out"
    expect_eq "$what: every child ran and got its parent's message" "$kids" "$(echo "$out" | grep -c "^child [0-9]* of $kids: token right, allreduce $((n + kids))\$")"
    expect_no_match "$what: no error from srun or OpenMPI" '(srun: error|Job step aborted|ORTE_ERROR|PMIX ERROR|MPI_ABORT)' "$out"
    [ "$rc" -eq 0 ] || echo "$out" | tail -20 | sed 's/^/    /'
    out=$(LD_LIBRARY_PATH="$clean_ldp" OMPI_MCA_btl=self,tcp \
        timeout -k 5 15 salloc -N"$nodes" -n$((n + kids)) srun --mpi=pmix_v4 -N"$nodes" -n"$n" "$work/mpi_spawn" "$kids" 2>&1)
    arc=$?
    if echo "$out" | grep -q "^MPI-SPAWN-OK $kids\$" && [ "$arc" -eq 0 ]; then anchor="works"
    elif [ "$arc" -eq 124 ]; then anchor="no answer (killed after 15 s)"
    else anchor="fails (status $arc)"; fi
    spawn_figures="$spawn_figures
    spawn of $kids from -N$nodes -n$n: pmixcpp native ${secs} s; pmix_v4 $anchor"
done
echo "    MPI_Comm_spawn wall times (salloc + srun):$spawn_figures"

# The default (both): odd ranks drop pmixcpp's library directory from their path (a wrapper), so
# they load OpenPMIx's; even ranks keep it. One namespace, one fence, one allreduce.
wrap="$work/half-native.sh"
cat >"$wrap" <<WRAP
#!/bin/sh
if [ \$((SLURM_PROCID % 2)) -eq 1 ]; then
    LD_LIBRARY_PATH=\$(printf '%s' "\$LD_LIBRARY_PATH" | tr ':' '\n' | grep -vxF "$ours_dir" | paste -sd: -)
    export LD_LIBRARY_PATH
fi
exec "\$@"
WRAP
chmod 755 "$wrap"
OMPI_MCA_btl=self,vader,tcp run_srun 180 --mpi=pmixcpp -N2 -n4 "$wrap" "$work/mpi_native" allreduce
expect_eq "both kinds in one step, allreduce -N2 -n4: exit status" 0 "$rc"
expect_match "both kinds in one step" '^MPI-NATIVE-OK allreduce 4$' "$out"
check_libs "both kinds in one step" 4 mixed
[ "$rc" -eq 0 ] || echo "$out" | grep -v '^LIBPMIX' | head -20 | sed 's/^/    /'

# A job may only narrow what mpi.conf allows: with PMIxCppClientLib=ours, asking for native fails.
# (mpi.conf's default is both; narrowing to ours leaves the OpenPMIx ranks without a server.)
SLURM_PMIXCPP_CLIENTLIB=ours run_srun 60 --mpi=pmixcpp -N1 -n1 sh -c 'echo "URI=${PMIX_SERVER_URI41:-none}"'
expect_eq "SLURM_PMIXCPP_CLIENTLIB=ours: exit status" 0 "$rc"
expect_match "SLURM_PMIXCPP_CLIENTLIB=ours: no native listener in the task's environment" '^URI=none$' "$out"
t_done
