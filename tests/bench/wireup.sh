#!/bin/bash
# The wire-up of a multi-node step on each route, side by side in one run: the static route (TCP,
# reserved ports), srun's address rendezvous, and the directory route (PMIxCppWireup=directory).
# The cluster is restarted with reserved ports (MpiParams=ports=), one loopback address per node
# and debug logs; the rendezvous is had with srun --resv-ports=0 (no ports, so no static route).
# Each step is pmix_bench "ift" (Init, Fence, Finalize) at N x 1 over TCP; measured from the
# slurmd logs: from the last node's server start (its "node transport" line) to the last node's
# first fence end ("fence ... complete"). Prints the median (range) per route and shape, and the
# load average.
#
# usage: tests/bench/wireup.sh [nodes...]   (default "16 32"); BENCH_RUNS (default 5)
#   PMIXCPP_PREFIX, PMIXCPP_PLUGIN_DIR, PMIXCPP_CLUSTER_DIR, ports as for the tests
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
shapes=${*:-"16 32"}
runs=${BENCH_RUNS:-5}
prefix=${PMIXCPP_PREFIX:-$src/_install}
export PMIXCPP_PLUGIN_DIR=${PMIXCPP_PLUGIN_DIR:-$prefix/lib/slurm}
export PMIXCPP_CLUSTER_DIR=${PMIXCPP_CLUSTER_DIR:-/tmp/pmixcpp-cluster}  # contrib/cluster.sh's default
work=$(mktemp -d /tmp/pmixcpp-wireup.XXXXXX)
trap 'rm -rf "$work"' EXIT
inc=$(pkg-config --cflags pmix 2>/dev/null)
gcc -O1 -I"$prefix/include" -o "$work/pmix_bench" "$here/pmix_bench.c" -L"$prefix/lib/pmixcpp" -lpmix -lm \
    -Wl,-rpath,"$prefix/lib/pmixcpp" || { echo "wireup: cannot build pmix_bench" >&2; exit 1; }
chmod 755 "$work" "$work/pmix_bench"
lo=$((${PMIXCPP_SLURMCTLD_PORT:-16817} + 500)); hi=$((lo + 39))
max=0; for n in $shapes; do [ "$n" -gt $max ] && max=$n; done

ms_of() { python3 -c 'import sys,datetime
for l in sys.stdin:
    t=l[1:24]; print(int(datetime.datetime.fromisoformat(t).timestamp()*1000))'; }

measure() {  # nodes route -> prints ms or "fail"
    local n=$1 route=$2 marks f start end env=() extra=()
    marks=$(for f in "$PMIXCPP_CLUSTER_DIR"/log/slurmd.*.log; do echo "$f $(wc -l < "$f")"; done)
    case $route in
        static) ;;
        srun) extra=(--resv-ports=0); env=(SLURM_PMIXCPP_WIREUP=srun) ;;
        directory) extra=(--resv-ports=0); env=(SLURM_PMIXCPP_WIREUP=directory) ;;
    esac
    if ! env "${env[@]}" SLURM_PMIXCPP_TRANSPORT=tcp SLURM_PMIXCPP_DEBUG=4 timeout -k 5 120 \
        srun "${extra[@]}" --mpi=pmixcpp -N"$n" --ntasks-per-node=1 "$work/pmix_bench" ift >"$work/out" 2>&1; then
        echo fail; return
    fi
    local logs=$(while read -r f k; do tail -n +$((k + 1)) "$f" | sed "s|^|$f |"; done <<< "$marks")
    start=$(echo "$logs" | grep 'node transport tcp at' | cut -d' ' -f2- | ms_of | sort -n | tail -1)
    end=$(echo "$logs" | grep -E 'fence [0-9]+ of .* complete$' | awk '!seen[$1]++' | cut -d' ' -f2- | ms_of | sort -n | tail -1)
    local nodes_route
    case $route in
        static) nodes_route=$(echo "$logs" | grep -c 'static wire-up: .* nodes at port') ;;
        srun) nodes_route=$(echo "$logs" | grep -c 'signed records of .* nodes verified') ;;
        directory) nodes_route=$(echo "$logs" | grep -c 'directory wire-up: .* neighbours told') ;;
    esac
    if [ -z "$start" ] || [ -z "$end" ] || [ "$nodes_route" -ne "$n" ]; then echo "fail($nodes_route)"; return; fi
    echo $((end - start))
}

PMIXCPP_SLURM_DEBUG=debug PMIXCPP_NODE_ADDRS=distinct PMIXCPP_SLURM_CONF_EXTRA="MpiParams=ports=$lo-$hi" \
    "$src/contrib/cluster.sh" restart "$max" >/dev/null 2>&1 || { echo "wireup: cluster restart failed" >&2; exit 1; }
eval "$("$src/contrib/cluster.sh" env)"
export SLURM_RESV_PORTS=1
median() { sort -n | awk '{a[NR]=$1} END {if (NR==0) {print "-"; exit} m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%d ms (%d-%d)", m, a[1], a[NR]}'; }
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for n in $shapes; do
    declare -A res=()
    for i in $(seq "$runs"); do
        for route in static srun directory; do
            v=$(measure "$n" "$route")
            res[$route]+="$v "
        done
    done
    for route in static srun directory; do
        ok=$(echo ${res[$route]} | tr ' ' '\n' | grep -E '^[0-9]+$')
        bad=$(echo ${res[$route]} | tr ' ' '\n' | grep -vcE '^[0-9]+$|^$')
        printf '%3d x 1  %-10s %s  failed %d  [%s]\n' "$n" "$route" "$(echo "$ok" | median)" "$bad" "${res[$route]}"
    done
    unset res
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
unset SLURM_RESV_PORTS
"$src/contrib/cluster.sh" restart 4 >/dev/null 2>&1
