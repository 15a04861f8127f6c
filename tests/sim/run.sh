#!/bin/bash
# The step simulator's driver (docs/simulator.md).
#
#   tests/sim/run.sh measure            this host's loopback (and munge, when a cluster's munged
#                                       runs): the inputs of the host preset
#   tests/sim/run.sh validate           the simulator beside the local cluster at 4-32 nodes:
#                                       tests/bench/model.sh measures c, h, b, p (1x1, 2x1, 1xP)
#                                       and the fences at Nx1; the simulator, given only c, h, b,
#                                       p and the loopback, predicts the Nx1 fences; side by side
#   tests/sim/run.sh scale [a,b,..]     the fabric preset at 1k, 4k, 16k and 65k nodes x 128
#
# Environment: PMIXCPP_BUILD_DIR (default <src>/_build, where the simulator is built: make
# tests/sim/pmixcpp_sim), SIM_MODEL_LOG (validate: a model.sh output to use instead of running it),
# SIM_MODEL_RUNS (validate: model.sh runs, default 3; medians over them),
# SIM_ARGS (more simulator options, e.g. "--set recv_us=25"), and for validate the cluster's
# variables as for tests/bench/model.sh (PMIXCPP_CLUSTER_DIR, SLURM_CONF, PMIXCPP_PREFIX). On a
# PMIXCPP_NETNS=1 cluster (contrib/cluster.sh) validate measures the wire between two nodes'
# network namespaces (sim_measure --netns) instead of loopback; SIM_LAT_US gives the one-way
# wire latency instead (e.g. the one tests/bench/netbed.sh measured beside SIM_MODEL_LOG's runs).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=${PMIXCPP_BUILD_DIR:-$src/_build}
what=${1:-}
shift || true

nice -n 5 make -C "$build" -s tests/sim/pmixcpp_sim tests/sim/sim_measure >/dev/null
sim=$build/tests/sim/pmixcpp_sim

munge_socket() {
    local d=${PMIXCPP_CLUSTER_DIR:-/tmp/pmixcpp-cluster}
    [ -S "$d/munge/munge.socket" ] && echo "$d/munge/munge.socket"
    return 0
}

case $what in
measure)
    sock=$(munge_socket)
    if [ -n "$sock" ]; then "$build/tests/sim/sim_measure" "$sock"; else "$build/tests/sim/sim_measure"; fi
    "$sim" codec
    ;;
validate)
    if [ -n "${SIM_MODEL_LOG:-}" ]; then
        log=$SIM_MODEL_LOG
    else
        log=$(mktemp)
        for k in $(seq "${SIM_MODEL_RUNS:-3}"); do
            echo "LOAD before $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$log"
            SLURM_PMIXCPP_TRANSPORT=${SLURM_PMIXCPP_TRANSPORT:-tcp} BENCH_RUNS=${BENCH_RUNS:-5} "$src/tests/bench/model.sh" | tee -a "$log"
        done
    fi
    # Medians over the model.sh runs in the log. Inputs: c = the 1x1 empty fence (both of
    # model.sh's 1x1 runs), h = 2x1 empty - c, p from model.sh's MODEL lines (1xP slope), b the
    # 2x1 collecting fence's slope from 1 KiB to 16 KiB per rank (the sizes a node takes in at
    # 4-32 nodes; model.sh's own b is the slope to 256 KiB).
    med() { sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
    shape() { grep "^SHAPE $1 bytes=1024 fence_empty" "$log" | grep -o "$2=[0-9.e+-]*" | cut -d= -f2 | med; }
    model() { grep '^MODEL' "$log" | grep -o "$1=[0-9.e+-]*" | cut -d= -f2 | med; }
    c=$(shape 1x1 fence_empty_us)
    h=$(awk "BEGIN { print $(shape 2x1 fence_empty_us) - $c }")
    data2x1() { grep "^SHAPE 2x1 bytes=$1 fence_data_us" "$log" | grep -o 'fence_data_us=[0-9.e+-]*' | cut -d= -f2 | med; }
    b=$(awk "BEGIN { print ($(data2x1 16384) - $(data2x1 1024)) * 1000 / (16384 - 1024) }")
    p=$(model proc_fence_us)
    runs=$(grep -c '^MODEL' "$log")
    # the wire: loopback, or on a PMIXCPP_NETNS=1 bed node 1 to node 2 through veth and bridge
    lat_args=() wire="loopback"
    rec=${PMIXCPP_CLUSTER_DIR:-/tmp/pmixcpp-cluster}/netns.list
    if [ -s "$rec" ] && [ "$(grep -c '^ns ' "$rec")" -ge 2 ]; then
        ns1=$(awk '$1 == "ns" { print $2; exit }' "$rec") ns2=$(awk '$1 == "ns" { if (++k == 2) { print $2; exit } }' "$rec")
        addr2=$(ip -n "$ns2" -4 -o addr show scope global | awk '{ print $4 }' | cut -d/ -f1)
        lat_args=(--netns "$ns1" "$ns2" "$addr2") wire="netns $ns1 -> $ns2 ($addr2)"
    fi
    if [ -n "${SIM_LAT_US:-}" ]; then
        lat=$SIM_LAT_US wire="given (SIM_LAT_US)"
    else
        lat=$("$build/tests/sim/sim_measure" "${lat_args[@]}" | grep -o 'oneway_us [0-9.]*' | cut -d' ' -f2)
    fi
    send=$(awk "BEGIN { s = $h - $lat - $p; print (s > 0 ? s : 0) }")
    echo "# inputs, medians of $runs model.sh runs: c=$c us (1x1), h=$h us (2x1 - c), b=$b ns/B (2x1 slope, 1-16 KiB), p=$p us (1xP slope); $wire one-way $lat us (sim_measure)"
    out=$("$sim" validate --preset host --set client_us="$c" --set recv_us="$p" --set proc_us="$p" \
        --set send_us="$send" --set lat_us="$lat" --set store_ns="$b" ${SIM_ARGS:-})
    echo "$out" | grep '^#'
    printf '%6s | %12s %12s %7s | %12s %12s %7s\n' nodes "empty meas" "empty sim" "sim/m" "1KiB meas" "1KiB sim" "sim/m"
    for n in 1 2 4 8 16 32; do
        me=$(shape "${n}x1" fence_empty_us) md=$(shape "${n}x1" fence_data_us)
        [ "$me" != nan ] || continue
        s=$(echo "$out" | grep "^SIM mode=validate nodes=$n ") || continue
        se=$(echo "$s" | grep -o ' fence_empty_us=[0-9.]*' | cut -d= -f2)
        sd=$(echo "$s" | grep -o ' fence_data_us=[0-9.]*' | cut -d= -f2)
        awk -v n="$n" -v me="$me" -v se="$se" -v md="$md" -v sd="$sd" \
            'BEGIN { printf "%6d | %12.0f %12.0f %7.2f | %12.0f %12.0f %7.2f%s\n", n, me, se, se / me, md, sd, sd / md, (n <= 2 ? "  (input)" : "") }'
    done
    ;;
scale)
    nodes=${1:-1024,4096,16384,65536}
    "$sim" scale --nodes "$nodes" ${SIM_ARGS:-}
    ;;
*)
    sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
