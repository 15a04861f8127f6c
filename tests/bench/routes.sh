#!/bin/bash
# Programs that bring their own OpenPMIx, side by side with pmixcpp's own client library and
# with the anchor, in one run (tests/bench/bench.sh --routes runs this):
#   pmix_v4         Slurm's mpi/pmix_v4 (OpenPMIx 4.2.2 in the server and the client), the
#                   OpenPMIx build of pmix_bench.c
#   pmixcpp-ours    mpi/pmixcpp, pmix_bench.c built against pmixcpp's pmix.h and libpmix (the
#                   step's LD_LIBRARY_PATH route, pmixcpp's Unix-socket protocol)
#   pmixcpp-native  mpi/pmixcpp with SLURM_PMIXCPP_CLIENTLIB=native, the OpenPMIx build (Debian's
#                   libpmix.so.2 speaking OpenPMIx's wire protocol to the step's native listener)
# and the launch of an MPI hello (Debian's OpenMPI, tests/programs/mpi_native.c) on each route.
# Every run is checked to have used the library its route claims: each rank names the
# libpmix.so it mapped (/proc/self/maps); a run where one rank mapped another is a failed run.
# Prints medians over runs of the maximum across ranks, the ratios to pmix_v4 (lower is better
# for pmixcpp) and the host's load average before and after each shape.
#
# usage: tests/bench/routes.sh [layouts]   e.g. "2x4 4x32" (nodes x tasks per node; the default)
#   BENCH_RUNS (default 3), BENCH_ARGS ("GET_ITERS FENCE_ITERS", default "2000 10"),
#   BENCH_ANCHOR (default pmix_v4), PMIXCPP_PREFIX, PMIXCPP_PLUGIN_DIR as for the tests
# Needs a running cluster with SLURM_CONF set (contrib/cluster.sh start), or starts one itself;
# libpmix-dev (OpenPMIx's pmix.h and pkg-config file) and mpicc (libopenmpi-dev).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
layouts=${*:-"2x4 4x32"}
runs=${BENCH_RUNS:-3}
args=${BENCH_ARGS:-"2000 10"}
anchor=${BENCH_ANCHOR:-pmix_v4}
prefix=${PMIXCPP_PREFIX:-$src/_install}
export PMIXCPP_PLUGIN_DIR=${PMIXCPP_PLUGIN_DIR:-$prefix/lib/slurm}
ours_dir="$prefix/lib/pmixcpp"
native_re='^/usr/lib/[^ ]*/pmix2/lib/libpmix\.so'

pkg-config --exists pmix || { echo "routes: libpmix-dev (pkg-config pmix) is needed" >&2; exit 77; }
command -v mpicc >/dev/null || { echo "routes: mpicc (libopenmpi-dev) is needed" >&2; exit 77; }
[ -f "$prefix/include/pmix.h" ] && [ -e "$ours_dir/libpmix.so" ] || {
    echo "routes: pmixcpp's pmix.h and libpmix not installed under $prefix" >&2; exit 77; }

if [ -z "${SLURM_CONF:-}" ]; then
    "$src/contrib/cluster.sh" start >/dev/null
    eval "$("$src/contrib/cluster.sh" env)"
fi
# the binaries must be visible to the tasks (they run as the job's user)
cluster_dir=${PMIXCPP_CLUSTER_DIR:-/tmp/pmixcpp-cluster}
work=$(mktemp -d "$cluster_dir/routes.XXXXXX")
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"

# One source, two builds.
# shellcheck disable=SC2046
cc -O2 -o "$work/pmix_bench.openpmix" "$here/pmix_bench.c" $(pkg-config --cflags pmix) \
    $(pkg-config --libs-only-L pmix) -Wl,-rpath,"$(pkg-config --variable=libdir pmix)" -lpmix
cc -O2 -o "$work/pmix_bench.ours" "$here/pmix_bench.c" -I"$prefix/include" \
    -L"$ours_dir" -Wl,-rpath,"$ours_dir" -lpmix
mpicc -O1 -o "$work/mpi_hello" "$src/tests/programs/mpi_native.c"
chmod 755 "$work"/*

routes="$anchor pmixcpp-ours pmixcpp-native"
# The job's environment without pmixcpp's library directory (the native route and the anchor).
clean_ldp=$(printf '%s' "${LD_LIBRARY_PATH:-}" | tr ':' '\n' | grep -vxF "$ours_dir" | paste -sd: - || true)
# route_srun ROUTE ARGS...: srun on ROUTE
route_srun() {
    local route=$1; shift
    case $route in
    pmixcpp-ours) env -u SLURM_PMIXCPP_CLIENTLIB timeout 600 srun --mpi=pmixcpp "$@" ;;
    pmixcpp-native) LD_LIBRARY_PATH="$clean_ldp" SLURM_PMIXCPP_CLIENTLIB=native timeout 600 srun --mpi=pmixcpp "$@" ;;
    *) LD_LIBRARY_PATH="$clean_ldp" timeout 600 srun --mpi="$route" "$@" ;;
    esac
}
bench_bin() { [ "$1" = pmixcpp-ours ] && echo "$work/pmix_bench.ours" || echo "$work/pmix_bench.openpmix"; }
# libs_ok ROUTE N LIBS: N libraries named, every one of the route's kind
libs_ok() {
    local route=$1 n=$2 libs=$3 good
    case $route in
    pmixcpp-ours) good=$(printf '%s\n' "$libs" | grep -c "^$ours_dir/libpmix\.so" || true) ;;
    *) good=$(printf '%s\n' "$libs" | grep -cE "$native_re" || true) ;;
    esac
    [ "$(printf '%s\n' "$libs" | grep -c . || true)" -eq "$n" ] && [ "$good" -eq "$n" ]
}
median() { sort -g | awk '{a[NR]=$1} END {if (NR == 0) print "-"; else if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
values() { grep -o "$1=[0-9.e+-]*" "$2" | cut -d= -f2 || true; }  # METRIC FILE
ms_since() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

# OpenMPI's ob1 over TCP: its UCX pml spends ~200 ms per process measuring the clock
# (docs/benchmarks.md), the same under every route, which would hide the launch; and vader's
# segments of two virtual nodes of one host collide under pmix_v4 (ranks crash in vader).
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,tcp
metrics="launch_ms hello_ms wall_ms init_us barrier_us fence_data_us peer_get_us peer_get_cpu_us fence_empty_us empty_fence_left_early get_ns fini_us stepd_hwm_kb"
failed=0
for layout in $layouts; do
    nodes=${layout%x*}; ppn=${layout#*x}; n=$((nodes * ppn))
    shape=(-N"$nodes" -n"$n" --ntasks-per-node="$ppn")
    load_before=$(loadavg)
    : > "$work/floor.$layout"
    for route in $routes; do : > "$work/$route.$layout"; done
    # Round after round, every route in turn, so that a change of the host's load weighs on all.
    for r in $(seq "$runs"); do
        t0=$(date +%s%N)
        timeout 300 srun --mpi=none "${shape[@]}" /bin/true >/dev/null 2>&1 && ms_since "$t0" >> "$work/floor.$layout"
        for route in $routes; do
            # MPI hello: srun's wall time
            t0=$(date +%s%N)
            if out=$(route_srun "$route" "${shape[@]}" "$work/mpi_hello" hello 2>&1) &&
                printf '%s\n' "$out" | grep -qx "MPI-NATIVE-OK hello $n" &&
                libs_ok "$route" "$n" "$(printf '%s\n' "$out" | sed -n 's/^LIBPMIX [0-9]* //p')"; then
                echo "hello_ms=$(ms_since "$t0")" >> "$work/$route.$layout"
            else
                failed=1
                echo "routes: $route $layout MPI hello run $r failed or used another library:" >&2
                printf '%s\n' "$out" | sed -n 's/^LIBPMIX [0-9]* //p' | sort | uniq -c >&2
                printf '%s\n' "$out" | grep -v '^LIBPMIX' | tail -5 >&2
            fi
            # the PMIx benchmark
            t0=$(date +%s%N)
            # shellcheck disable=SC2086
            if out=$(route_srun "$route" "${shape[@]}" "$(bench_bin "$route")" $args 2>&1) &&
                [ "$(printf '%s\n' "$out" | grep -c '^BENCH ' || true)" -eq "$n" ] &&
                libs_ok "$route" "$n" "$(printf '%s\n' "$out" | grep '^BENCH ' | sed 's/.* lib=//')"; then
                printf '%s\n' "$out" | grep '^BENCH ' | awk -v wall="$(ms_since "$t0")" '
                    { for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] == "lib") continue; v = kv[2] + 0;
                          if (!(kv[1] in m) || v > m[kv[1]]) m[kv[1]] = v } }
                    END { printf "wall_ms=%s", wall; for (k in m) if (k != "rank" && k != "size") printf " %s=%s", k, m[k]; print "" }' \
                    >> "$work/$route.$layout"
            else
                failed=1
                echo "routes: $route $layout pmix_bench run $r failed or used another library:" >&2
                printf '%s\n' "$out" | grep '^BENCH ' | sed 's/.* lib=//' | sort | uniq -c >&2
                printf '%s\n' "$out" | grep -v '^BENCH ' | tail -5 >&2
            fi
        done
    done
    floor=$(median < "$work/floor.$layout")
    for route in $routes; do
        grep -o 'hello_ms=[0-9]*' "$work/$route.$layout" | cut -d= -f2 |
            awk -v f="$floor" '{ print "launch_ms=" $1 - f }' >> "$work/$route.$layout" || true
    done
    echo
    echo "== ${nodes} node(s) x ${ppn} tasks: median of $runs runs, max across ranks" \
        "(launch_ms: MPI hello's srun wall minus the srun floor, ${floor} ms)"
    echo "   load average (1/5/15 min) before: $load_before, after: $(loadavg); $(nproc) CPUs"
    printf '%-16s %14s %14s %14s %9s %9s\n' metric "$anchor" pmixcpp-ours pmixcpp-native ours/v4 native/v4
    for m in $metrics; do
        a=$(values "$m" "$work/$anchor.$layout" | median)
        b=$(values "$m" "$work/pmixcpp-ours.$layout" | median)
        c=$(values "$m" "$work/pmixcpp-native.$layout" | median)
        ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b != "-") printf "%.2f", b / a; else print "-" }'; }
        if [ "$m" = empty_fence_left_early ]; then  # 1: that stack's empty fence is no barrier
            printf '%-16s %14s %14s %14s %9s %9s\n' "$m" "$a" "$b" "$c" - -
        else
            printf '%-16s %14s %14s %14s %9s %9s\n' "$m" "$a" "$b" "$c" "$(ratio "$a" "$b")" "$(ratio "$a" "$c")"
        fi
    done
    for route in $routes; do
        echo "   $route: $(grep -c '^wall_ms=' "$work/$route.$layout" || true) PMIx runs and" \
            "$(grep -c '^hello_ms=' "$work/$route.$layout" || true) MPI runs checked on the route's libpmix"
    done
done
exit "$failed"
