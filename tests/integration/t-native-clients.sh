# Programs that bring their own OpenPMIx, of another release than the server's, under the PMIx
# server of slurmstepd:
#   pmix3     OpenPMIx's example programs built against OpenPMIx 3.2 (embedded in the source of
#             Debian 12's OpenMPI 4.1)            } contrib/openpmix-clients.sh, in the checkout;
#   pmix5     ... against OpenPMIx 5.0 (Debian 13) } each program loads its own libpmix
#   pmixdev   ... against the development branch's } (DT_RPATH), whatever LD_LIBRARY_PATH says;
#             where only its binary packages can be had (they need a newer C library than
#             Debian 12's), the examples are built and run inside the Debian 13 root
#             (ch-run), loading that OpenPMIx
#   container OpenMPI 5.0.7 + OpenPMIx 5.0.7 of the Debian 13 root, run by the job's user as a
#             Charliecloud container (srun ... ch-run ROOT -- ./mpi_hello; also with the
#             container's own /tmp; MPI-4 sessions with communicators from process sets, which
#             OpenMPI makes with PMIx queries and groups), and the pmix5 vehicle's examples
#             built inside it against its own OpenPMIx
# Each at -N2 -n4 as an unprivileged user, under the anchor (Slurm's mpi/pmix_v4: OpenPMIx 4.2.2
# in slurmstepd) and under mpi/pmixcpp, whose rows need its native route (OpenPMIx's own wire
# protocol): they are skipped, with a note, while its tasks get no PMIX_SERVER_URI41. Prints one
# table. The anchor's verdicts are a baseline (figures, not assertions); asserted are the vehicles
# themselves (built, loading their own library, the container starting as the user) and, once it
# has the native route, every row of pmixcpp.
#   PMIXCPP_NATIVE_MPIS      plugins to run under [pmix_v4 pmixcpp, those srun lists]
#   PMIXCPP_NATIVE_VEHICLES  [pmix3 pmix5 pmixdev container]
#   PMIXCPP_DEBIAN13_ROOT    the container image [/var/cache/pmixcpp/debian13-root]
# The first run builds the OpenPMIx releases (minutes); later runs reuse them.
# integration: run only when named
. "$(dirname "$0")/lib.sh"
id nobody >/dev/null 2>&1 || { echo "  SKIP: no user 'nobody' to run the jobs as"; exit 0; }
as_nobody() { (cd /tmp && runuser -u nobody -- env SLURM_CONF="$SLURM_CONF" "$@"); }
vehicles=${PMIXCPP_NATIVE_VEHICLES:-pmix3 pmix5 pmixdev container}
root=${PMIXCPP_DEBIAN13_ROOT:-/var/cache/pmixcpp/debian13-root}
listed=$(srun --mpi=list 2>&1)
mpis=""
for m in ${PMIXCPP_NATIVE_MPIS:-pmix_v4 pmixcpp}; do
    if printf '%s\n' "$listed" | grep -qw "$m"; then mpis="$mpis $m"; else echo "  SKIP: srun does not list --mpi=$m"; fi
done
work=$(mktemp -d /tmp/pmixcpp-native.XXXXXX)
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
# OpenMPI across virtual nodes of one host: TCP over loopback (TESTBED.md)
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,tcp OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo

# ---- the vehicles
declare -A prefix version
t0=$SECONDS
pmix_vehicles=""
for v in $vehicles; do [ "$v" = container ] || pmix_vehicles="$pmix_vehicles $v"; done
if [ -n "$pmix_vehicles" ]; then
    # shellcheck disable=SC2086
    built=$("$PMIXCPP_SRCDIR/contrib/openpmix-clients.sh" $pmix_vehicles 2>"$work/clients.log")
    while read -r name ver pfx rest; do
        [ -n "$name" ] || continue
        why=$(grep "^openpmix-clients: $name: \|^deb-source: " "$work/clients.log" | tail -n 2 | tr '\n' ' ')
        if [ "$ver" = - ] && [ "$pfx" = unavailable ]; then
            echo "  SKIP: $name: no source of it on this mirror: $why"; continue
        elif [ "$ver" = - ]; then
            fail "$name: no client library built: $why"; continue
        fi
        if [ -f "$pfx/.container-only" ]; then pass "$name: OpenPMIx $ver client library in $pfx $rest"
        else pass "$name: OpenPMIx $ver client library and examples in $pfx $rest"; fi
        prefix[$name]=$pfx version[$name]=$ver
    done <<< "$built"
fi
echo "  (vehicles ready after $((SECONDS - t0)) s)"

# the container: the Debian 13 root as a Charliecloud directory image, run by the job's user
if [[ " $vehicles " == *" container "* ]]; then
    if ! command -v ch-run >/dev/null 2>&1; then
        fail "container: ch-run not installed (Debian package charliecloud, contrib/install-deps.sh)"
    elif [ ! -x "$root/usr/bin/mpicc" ] || [ ! -f "$root/.pmixcpp-root-ready" ]; then
        echo "  SKIP: container: no Debian 13 root with OpenMPI at $root (contrib/debian13-root.sh build)"
    else
        ompi=$(as_nobody ch-run "$root" -- ompi_info --version 2>&1 | sed -n 's/^Open MPI v//p')
        pmixv=$(as_nobody ch-run "$root" -- dpkg-query -W -f='${Version}' libpmix-dev 2>&1)
        if [ -n "$ompi" ]; then pass "container: ch-run starts the Debian 13 root as user nobody (OpenMPI $ompi, OpenPMIx $pmixv)"
        else fail "container: ch-run cannot start $root as user nobody: $(as_nobody ch-run "$root" -- true 2>&1 | head -c 300)"; fi
        for p in mpi_hello mpi_allreduce mpi_session mpi_sessions mpi_spawn; do cp "$PMIXCPP_SRCDIR/tests/programs/$p.c" "$work/"; done
        chmod 777 "$work"
        for p in mpi_hello mpi_allreduce mpi_session mpi_sessions mpi_spawn; do
            if err=$(as_nobody ch-run "$root" -- mpicc -O1 -o "$work/$p" "$work/$p.c" 2>&1); then
                pass "container: $p built inside the container with its mpicc"
            else
                fail "container: mpicc $p inside the container: $err"
            fi
        done
        # OpenPMIx's examples (of the 5.0 vehicle's source) against the container's own OpenPMIx
        cprogs=""
        exsrc=${prefix[pmix5]:-}/examples/src
        if [ -f "$exsrc/client.c" ]; then
            mkdir -p "$work/pmix" && cp "$exsrc"/*.c "$exsrc"/*.h "$work/pmix/" && chmod -R a+rwX "$work/pmix"
            for p in hello client client2 dmodex; do
                [ -f "$work/pmix/$p.c" ] || continue
                # shellcheck disable=SC2016
                if err=$(as_nobody ch-run "$root" -- sh -c 'cc -O1 -w -I"$1" -o "$1/$2" "$1/$2.c" $(pkg-config --cflags --libs pmix)' \
                             sh "$work/pmix" "$p" 2>&1); then
                    cprogs="$cprogs pmix_$p"
                else
                    fail "container: OpenPMIx example $p does not build inside the container: $(echo "$err" | head -n 3)"
                fi
            done
        else
            echo "  SKIP: container: no OpenPMIx example sources (the pmix5 vehicle) to build inside it"
        fi
        [ -n "$ompi" ] && [ -x "$work/mpi_hello" ] && { prefix[container]=$root version[container]="OMPI $ompi, OpenPMIx $pmixv"; }
    fi
fi

# vehicles of binary packages only (.container-only): their library and headers are copied
# where the container sees them (/tmp), and OpenPMIx's examples (the sources of a vehicle built
# here, 5.0's first) are built inside the Debian 13 root against them
declare -A in_container
for v in $pmix_vehicles; do
    [ -n "${prefix[$v]:-}" ] && [ -f "${prefix[$v]}/.container-only" ] || continue
    if [ -z "${prefix[container]:-}" ]; then
        echo "  SKIP: $v: $(cat "${prefix[$v]}/.container-only"), and no Debian 13 root to run them in"
        unset "prefix[$v]"; continue
    fi
    exsrc=""
    for o in pmix5 pmix3; do [ -f "${prefix[$o]:-/nonexistent}/examples/src/client.c" ] && { exsrc=${prefix[$o]}/examples/src; break; }; done
    if [ -z "$exsrc" ]; then
        echo "  SKIP: $v: no OpenPMIx example sources (the pmix5 vehicle) to build inside the container"
        unset "prefix[$v]"; continue
    fi
    d=$work/$v
    mkdir -p "$d/examples/src" && cp -a "${prefix[$v]}/include" "${prefix[$v]}/lib" "$d/" &&
        cp "$exsrc"/*.c "$exsrc"/*.h "$d/examples/src/" && chmod -R a+rwX "$d"
    built_any=""
    for p in hello client client2 dmodex; do
        [ -f "$d/examples/src/$p.c" ] || continue
        # shellcheck disable=SC2016
        if err=$(as_nobody ch-run "$root" -- sh -c 'cc -O1 -w -I"$1/examples/src" -I"$1/include" -o "$1/examples/$2" \
                     "$1/examples/src/$2.c" -L"$1/lib" -Wl,--disable-new-dtags -Wl,-rpath,"$1/lib" -lpmix' sh "$d" "$p" 2>&1); then
            built_any=1
        else
            fail "$v: OpenPMIx example $p does not build inside the container against OpenPMIx ${version[$v]}: $(echo "$err" | head -n 3)"
        fi
    done
    [ -n "$built_any" ] && pass "$v: OpenPMIx ${version[$v]}'s examples built inside the Debian 13 root ($(cat "${prefix[$v]}/.container-only"))"
    prefix[$v]=$d in_container[$v]=1
done

# ---- one case: sets verdict (PASS, FAIL: note, HANG)
# pmix examples: srun status 0, no error line of the program's own, and "PMIx_Finalize
# successfully completed" from every rank (from rank 0 only where the example's source prints it
# only there, as 5.0's dmodex.c does)
judge_pmix() {  # prog ntasks source
    local own bad='(fail|error|not supported|not found|unreach|abort)' c want=$2
    [ -f "${3:-}" ] && grep -B3 'PMIx_Finalize successfully completed' "$3" | grep -q '0 == myproc.rank' && want=1
    own=$(printf '%s\n' "$out" | grep -Ev '^(slurmstepd(-[^:]*)?|srun): ')
    c=$(printf '%s\n' "$own" | sed -n 's/.* rank \([0-9]*\): *PMIx_Finalize successfully completed.*/\1/p' | sort -u | wc -l)
    if [ "$rc" -ne 0 ]; then verdict="FAIL: srun status $rc, $(printf '%s\n' "$out" | grep -v '^\s*$' | tail -n 1 | cut -c1-90)"
    elif printf '%s\n' "$own" | grep -Eiq "$bad"; then verdict="FAIL: $(printf '%s\n' "$own" | grep -Eim1 "$bad" | cut -c1-90)"
    elif [ "$c" -ne "$want" ]; then verdict="FAIL: $c of $want ranks finalized"
    else verdict=PASS; fi
}

# MPI programs: srun status 0 and rank 0's line of success for the whole world
judge_mpi() {  # regex
    if [ "$rc" = 0 ] && printf '%s\n' "$out" | grep -q "$1"; then verdict=PASS
    else verdict="FAIL: srun status $rc, $(printf '%s\n' "$out" | grep -v '^\s*$' | head -n 1 | cut -c1-90)"; fi
}

# MPI programs that print their line of success on every rank: srun status 0 and n such lines
judge_mpi_all() {  # regex n
    if [ "$rc" = 0 ] && [ "$(printf '%s\n' "$out" | grep -c "$1")" = "$2" ]; then verdict=PASS
    else verdict="FAIL: srun status $rc, $(printf '%s\n' "$out" | grep -v '^\s*$' | grep -v "$1" | head -n 1 | cut -c1-90)"; fi
}

run_case() {  # mpi vehicle prog
    local mpi=$1 veh=$2 prog=$3 n=4 srun_args=(--mpi="$1" -N2 --ntasks-per-node=2) t0=$SECONDS
    case $veh:$prog in
        container:mpi_hello)
            run_srun 90 "${srun_args[@]}" ch-run "$root" -- "$work/mpi_hello"
            judge_mpi "^MPI-HELLO-OK $n\$" ;;
        container:mpi_allreduce)
            run_srun 90 "${srun_args[@]}" ch-run "$root" -- "$work/mpi_allreduce"
            judge_mpi "^MPI-ALLREDUCE-OK $n\$" ;;
        # the container's own /tmp: the server's files (its shared-memory job data) are out of
        # reach, its TCP socket is not; the program is bound in at /srv
        container:mpi_hello_privtmp)
            run_srun 90 "${srun_args[@]}" ch-run --private-tmp -b "$work:/srv" "$root" -- /srv/mpi_hello
            judge_mpi "^MPI-HELLO-OK $n\$" ;;
        # MPI-4 sessions: process sets (PMIx queries) and MPI_Comm_create_from_group (PMIx groups)
        container:mpi_session)
            run_srun 90 "${srun_args[@]}" ch-run "$root" -- "$work/mpi_session"
            judge_mpi_all "^MPI-SESSION-OK\$" "$n" ;;
        container:mpi_sessions_*)
            run_srun 90 "${srun_args[@]}" ch-run "$root" -- "$work/mpi_sessions" "${prog#mpi_sessions_}"
            judge_mpi_all "^MPI-SESSIONS-OK ${prog#mpi_sessions_}\$" "$n" ;;
        # MPI_Comm_spawn of 4 children into the same container (through ch-run), in an
        # allocation of 8 tasks
        container:mpi_spawn)
            out=$(MPI_SPAWN_VIA="ch-run $root --" as_nobody timeout -k 5 120 salloc -N2 -n8 \
                  srun --mpi="$mpi" -N2 -n4 ch-run "$root" -- "$work/mpi_spawn" 4 2>&1)
            rc=$?
            if [ "$rc" = 0 ] && printf '%s\n' "$out" | grep -q '^MPI-SPAWN-OK 4$' &&
               [ "$(printf '%s\n' "$out" | grep -c '^child [0-9]* of 4: token right, allreduce 8$')" = 4 ]; then verdict=PASS
            else verdict="FAIL: status $rc, $(printf '%s\n' "$out" | grep -v '^\s*$' | grep -v '^child\|^parent' | head -n 1 | cut -c1-90)"; fi ;;
        container:pmix_*)
            run_srun 60 "${srun_args[@]}" ch-run "$root" -- "$work/pmix/${prog#pmix_}"
            judge_pmix "${prog#pmix_}" "$n" "$work/pmix/${prog#pmix_}.c" ;;
        *)
            if [ -n "${in_container[$veh]:-}" ]; then
                run_srun 60 "${srun_args[@]}" ch-run "$root" -- "${prefix[$veh]}/examples/$prog"
            else
                run_srun 60 "${srun_args[@]}" "${prefix[$veh]}/examples/$prog"
            fi
            judge_pmix "$prog" "$n" "${prefix[$veh]}/examples/src/$prog.c" ;;
    esac
    # killed by its time limit (not a program that ended on a signal of its own at once)
    { [ "$rc" = 124 ] || [ "$rc" = 137 ]; } && [ $((SECONDS - t0)) -ge 55 ] && verdict="HANG (killed)"
    printf '%s\n' "$out" > "$work/out.$mpi.$veh.$prog"
    return 0
}

# the jobs run as user nobody: run_srun's srun through runuser
run_srun() {
    local limit=$1; shift
    out=$(as_nobody timeout -k 5 "$limit" srun "$@" 2>&1)
    rc=$?
}

# a plugin offers OpenPMIx's route when its tasks are told where its server listens for it
native_route() {  # mpi
    run_srun 30 --mpi="$1" -N1 -n1 printenv PMIX_SERVER_URI41
    [ "$rc" = 0 ] && [ -n "$out" ]
}

declare -A result
rows=()
for mpi in $mpis; do
    if ! native_route "$mpi"; then
        echo "  SKIP: --mpi=$mpi: its tasks get no PMIX_SERVER_URI41 (no server for OpenPMIx's own clients): rows not run"
        for veh in $vehicles; do result[$mpi,$veh]="SKIP (no native route)"; done
        continue
    fi
    for veh in $vehicles; do
        [ -n "${prefix[$veh]:-}" ] || { result[$mpi,$veh]="SKIP (vehicle not available)"; continue; }
        if [ "$veh" = container ]; then
            progs="mpi_hello mpi_allreduce mpi_hello_privtmp"
            [ -x "$work/mpi_session" ] && progs="$progs mpi_session"
            [ -x "$work/mpi_sessions" ] && progs="$progs mpi_sessions_twice-12 mpi_sessions_psetinfo"
            [ -x "$work/mpi_spawn" ] && progs="$progs mpi_spawn"
            progs="$progs$cprogs"
        else
            progs=""
            for p in hello client client2 dmodex; do
                # 3.2's dmodex asks for the remote key of rank WILDCARD (its remote branch never
                # sets the peer's rank): "not found" is the right answer, the program is wrong
                [ "$p" = dmodex ] && [ "${version[$veh]%%.*}" = 3 ] && continue
                [ -x "${prefix[$veh]}/examples/$p" ] && progs="$progs $p"
            done
            [ -n "$progs" ] || { fail "$veh: none of hello client client2 dmodex built"; continue; }
            # the program loads its own OpenPMIx in the task's environment
            first=${progs# } first=${first%% *}
            if [ -n "${in_container[$veh]:-}" ]; then
                run_srun 30 --mpi="$mpi" -N1 -n1 ch-run "$root" -- ldd "${prefix[$veh]}/examples/$first"
            else
                run_srun 30 --mpi="$mpi" -N1 -n1 ldd "${prefix[$veh]}/examples/$first"
            fi
            lib=$(printf '%s\n' "$out" | awk '$1 == "libpmix.so.2" { print $3 }')
            expect_eq "$veh under --mpi=$mpi: the program loads its own libpmix" "${prefix[$veh]}/lib/libpmix.so.2" "$lib"
        fi
        for p in $progs; do
            s=$SECONDS
            run_case "$mpi" "$veh" "$p"
            result[$mpi,$veh,$p]="$verdict ($((SECONDS - s)) s)"
            rows+=("$veh $p")
            if [ "$mpi" = pmixcpp ]; then
                expect_eq "$veh $p under --mpi=pmixcpp (native route)" PASS "$verdict"
                [ "$verdict" = PASS ] || tail -n 5 "$work/out.$mpi.$veh.$p" | sed 's/^/    /'
            elif [ "$verdict" != PASS ]; then
                echo "  $veh $p under --mpi=$mpi (anchor, not asserted): $verdict"
                grep -v '^\s*$' "$work/out.$mpi.$veh.$p" | head -n 6 | cut -c1-200 | sed 's/^/    /'
            fi
        done
    done
done

# ---- the table
echo "  vehicle (client release) | program |$(for m in $mpis; do printf ' %s |' "$m"; done)"
printf '%s\n' "${rows[@]}" | awk '!seen[$0]++' | while read -r veh p; do
    line="  $veh (${version[$veh]}) | $p |"
    for m in $mpis; do line="$line ${result[$m,$veh,$p]:-${result[$m,$veh]:-not run}} |"; done
    echo "$line"
done
for veh in $vehicles; do
    printf '%s\n' "${rows[@]}" | grep -q "^$veh " && continue
    line="  $veh (${version[$veh]:-not built}) | - |"
    for m in $mpis; do line="$line ${result[$m,$veh]:-not run} |"; done
    echo "$line"
done
t_done
