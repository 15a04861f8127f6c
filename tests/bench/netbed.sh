#!/bin/bash
# The loopback cluster and the network-namespace bed (contrib/cluster.sh with PMIXCPP_NETNS=1:
# each node's slurmd, slurmstepd and tasks in a namespace of their own, veth pairs to a bridge)
# side by side in one run: the cost model's inputs (tests/bench/model.sh: the per-hop cost h =
# empty fence 2x1 - 1x1, the Nx1 fences, b and p) and the fences beside the anchor
# (tests/bench/bench.sh), with the TCP transport and with UCX (over TCP: root's UCX opens no
# shared memory), and the one-way wire
# latency of each bed (tests/sim/sim_measure: loopback, or namespace n1 -> n2).
#
# usage: tests/bench/netbed.sh [ROUNDS]      (default 1; the beds alternate within a round)
#   NETBED_NODES (32), NETBED_LAYOUTS (bench.sh's shapes, "8x1 16x1 32x1 8x4 16x4 32x4"),
#   NETBED_TRANSPORTS ("tcp ucx"), NETBED_BENCH_TRANSPORTS (those of them bench.sh runs with too;
#   default all; "" for none), NETBED_MODEL_PARTS (model.sh's parts, default all), NETBED_BEDS
#   ("loopback netns"), NETBED_SUMMARY_ONLY (1: no runs, the summary of NETBED_OUT's logs), NETBED_OUT (the directory the
#   logs go to; default a new /tmp/netbed.XXXXXX), BENCH_RUNS (3), BENCH_ARGS ("2000 100"),
#   and the cluster's variables (PMIXCPP_CLUSTER_DIR, ports, PMIXCPP_PREFIX ...). The cluster is
#   (re)started for each bed without accounting and stopped at the end.
# Prints one summary line per bed and transport:
#   NETBED bed=.. transport=.. wire_oneway_us=.. c_us=.. h_us=.. empty_Nx1_us=.. (model.sh, medians)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
rounds=${1:-1}
nodes=${NETBED_NODES:-32}
layouts=${NETBED_LAYOUTS:-"8x1 16x1 32x1 8x4 16x4 32x4"}
transports=${NETBED_TRANSPORTS:-"tcp ucx"}
bench_transports=${NETBED_BENCH_TRANSPORTS-$transports}
beds=${NETBED_BEDS:-"loopback netns"}
out=${NETBED_OUT:-$(mktemp -d /tmp/netbed.XXXXXX)}
mkdir -p "$out"
export BENCH_RUNS=${BENCH_RUNS:-3} BENCH_ARGS=${BENCH_ARGS:-"2000 100"} PMIXCPP_ACCOUNTING=none
build=${PMIXCPP_BUILD_DIR:-$src/_build}
nice -n 5 make -C "$build" -s tests/sim/sim_measure >/dev/null
cluster=$src/contrib/cluster.sh
trap '"$cluster" stop >/dev/null 2>&1 || true' EXIT
echo "netbed: logs in $out"

[ -n "${NETBED_SUMMARY_ONLY:-}" ] && rounds=0   # only the summary of the logs already in NETBED_OUT
for round in $(seq "$rounds"); do
    for bed in $beds; do
        case $bed in loopback) export PMIXCPP_NETNS=0 ;; netns) export PMIXCPP_NETNS=1 ;; *) echo "netbed: bed $bed?" >&2; exit 2 ;; esac
        "$cluster" restart "$nodes" | grep -E '^cluster.sh: (netns|running)' | tee -a "$out/cluster.$bed"
        eval "$("$cluster" env)"
        lat_args=()
        rec=${PMIXCPP_CLUSTER_DIR:-/tmp/pmixcpp-cluster}/netns.list
        if [ "$bed" = netns ]; then
            ns1=$(awk '$1 == "ns" { print $2; exit }' "$rec") ns2=$(awk '$1 == "ns" { if (++k == 2) { print $2; exit } }' "$rec")
            lat_args=(--netns "$ns1" "$ns2" "$(ip -n "$ns2" -4 -o addr show scope global | awk '{ print $4 }' | cut -d/ -f1)")
        fi
        "$build/tests/sim/sim_measure" "${lat_args[@]}" | tee -a "$out/wire.$bed"
        for t in $transports; do
            echo "LOAD round=$round bed=$bed transport=$t $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/load"
            # shellcheck disable=SC2086
            SLURM_PMIXCPP_TRANSPORT=$t "$here/model.sh" ${NETBED_MODEL_PARTS:-} | tee -a "$out/model.$bed.$t" ||
                echo "netbed: model.sh failed ($bed, $t)"
            case " $bench_transports " in *" $t "*) ;; *) continue ;; esac
            # shellcheck disable=SC2086
            SLURM_PMIXCPP_TRANSPORT=$t "$here/bench.sh" $layouts | tee -a "$out/bench.$bed.$t" ||
                echo "netbed: bench.sh failed ($bed, $t)"
        done
    done
done
"$cluster" stop >/dev/null

set +e +o pipefail   # the summary: a shape not run gives nan
med() { sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
for bed in $beds; do
    for t in $transports; do
        f=$out/model.$bed.$t
        [ -s "$f" ] || continue
        shape() { grep "^SHAPE $1 bytes=1024 fence_empty" "$f" | grep -o 'fence_empty_us=[0-9.e+-]*' | cut -d= -f2 | med; }
        c=$(shape 1x1) e2=$(shape 2x1)
        line="NETBED bed=$bed transport=$t wire_oneway_us=$(grep -o 'oneway_us [0-9.]*' "$out/wire.$bed" | cut -d' ' -f2 | med)"
        line="$line c_us=$c h_us=$(awk "BEGIN { print $e2 - $c }")"
        for n in 4 8 16 32; do line="$line empty_${n}x1_us=$(shape "${n}x1")"; done
        echo "$line"
    done
done | tee "$out/summary"
