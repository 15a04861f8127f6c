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
#
# WIREUP_CPU=1: also the CPU each step costs the cluster, which other load on the host does not
# change (wall times it does): the cluster's slurmd (with all they start: slurmstepd, slurmd's
# forks, the tasks), munged, slurmctld and srun are each put in a cgroup of their own (cpuacct,
# or cgroup v2's cpu.stat; root), read before and after every step once the step's processes are
# gone; slurmd's own and its reaped children's CPU from /proc/PID/stat (fields 14-17). The
# cluster's slurmd log at debug3 then (the same for every route): slurmd's "Entering
# _rpc_forward_data" lines count the directory route's messages, delivered or not. Prints per
# route the mean CPU per step by part, and the directory route's CPU beyond the static route's
# per message; also the CPUs other users' processes took during the steps. WIREUP_CPU_LOG=FILE
# keeps each step's line (with the wall time's window: forwards in it, the tells' spread).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
shapes=${*:-"16 32"}
runs=${BENCH_RUNS:-5}
prefix=${PMIXCPP_PREFIX:-$src/_install}
export PMIXCPP_PLUGIN_DIR=${PMIXCPP_PLUGIN_DIR:-$prefix/lib/slurm}
export PMIXCPP_CLUSTER_DIR=${PMIXCPP_CLUSTER_DIR:-/tmp/pmixcpp-cluster}  # contrib/cluster.sh's default
work=$(mktemp -d /tmp/pmixcpp-wireup.XXXXXX)
trap '[ -n "${cg:-}" ] && { cg_release; cg_remove; }; rm -rf "$work"' EXIT
inc=$(pkg-config --cflags pmix 2>/dev/null)
gcc -O1 -I"$prefix/include" -o "$work/pmix_bench" "$here/pmix_bench.c" -L"$prefix/lib/pmixcpp" -lpmix -lm \
    -Wl,-rpath,"$prefix/lib/pmixcpp" || { echo "wireup: cannot build pmix_bench" >&2; exit 1; }
chmod 755 "$work" "$work/pmix_bench"
lo=$((${PMIXCPP_SLURMCTLD_PORT:-16817} + 500)); hi=$((lo + 39))
max=0; for n in $shapes; do [ "$n" -gt $max ] && max=$n; done

ms_of() { python3 -c 'import sys,datetime
for l in sys.stdin:
    t=l[1:24]; print(int(datetime.datetime.fromisoformat(t).timestamp()*1000))'; }

# WIREUP_CPU: the cgroups, and the CPU (ms) of each part of the cluster at one moment
cg=
cg_setup() {
    local root f
    if [ -w /sys/fs/cgroup/cpuacct/cgroup.procs ]; then root=/sys/fs/cgroup/cpuacct
    elif [ -f /sys/fs/cgroup/cgroup.controllers ] && [ -w /sys/fs/cgroup/cgroup.procs ]; then root=/sys/fs/cgroup
    else echo "wireup: WIREUP_CPU needs a writable cgroup (cpuacct v1, or v2) and root" >&2; exit 1; fi
    cg=$root/pmixcpp-wireup.$$
    mkdir -p "$cg/slurmd" "$cg/munged" "$cg/slurmctld" "$cg/srun" || exit 1
    slurmd_pids=$(cat "$PMIXCPP_CLUSTER_DIR"/pids/slurmd.*.pid | tr -cd '0-9\n')
    for f in $slurmd_pids; do echo "$f" > "$cg/slurmd/cgroup.procs"; done
    tr -cd '0-9' < "$PMIXCPP_CLUSTER_DIR/pids/munged.pid" > "$cg/munged/cgroup.procs"
    tr -cd '0-9' < "$PMIXCPP_CLUSTER_DIR/pids/slurmctld.pid" > "$cg/slurmctld/cgroup.procs"
    cg_root=$root
}
cg_release() {  # the daemons back to the root group (before they stop), the groups removed
    [ -n "$cg" ] || return 0
    local g p
    for g in slurmd munged slurmctld srun; do
        for p in $(cat "$cg/$g/cgroup.procs" 2>/dev/null); do echo "$p" > "$cg_root/cgroup.procs" 2>/dev/null; done
    done
}
cg_remove() { [ -n "$cg" ] && rmdir "$cg"/* "$cg" 2>/dev/null; cg=; }
cg_ms() {  # group -> ms of CPU since it was made
    if [ -r "$cg/$1/cpuacct.usage" ]; then awk '{ printf "%.3f", $1 / 1e6 }' "$cg/$1/cpuacct.usage"
    else awk '$1 == "usage_usec" { printf "%.3f", $2 / 1e3 }' "$cg/$1/cpu.stat"; fi
}
hz=$(getconf CLK_TCK)
slurmd_ms() {  # the slurmd's own CPU, and their reaped children's (fields 14-15, 16-17)
    local p line own=0 kids=0 f
    for p in $slurmd_pids; do
        { read -r line < "/proc/$p/stat"; } 2>/dev/null || continue
        set -- ${line##*) }
        own=$((own + ${12} + ${13})) kids=$((kids + ${14} + ${15}))
    done
    awk -v o="$own" -v k="$kids" -v hz="$hz" 'BEGIN { printf "%.1f %.1f", o * 1000 / hz, k * 1000 / hz }'
}
busy_ms() { local _c u ni s id io irq sirq st; read -r _c u ni s id io irq sirq st _ < /proc/stat
    awk -v b=$((u + ni + s + irq + sirq + st)) -v hz="$hz" 'BEGIN { printf "%.1f", b * 1000 / hz }'; }
cpu_snapshot() {  # slurmd-group munged slurmctld srun slurmd-own slurmd-children machine-busy wall(ms)
    echo "$(cg_ms slurmd) $(cg_ms munged) $(cg_ms slurmctld) $(cg_ms srun) $(slurmd_ms) $(busy_ms) $(date +%s%3N)"
}
step_gone() {  # only the slurmd left in their group: the step's processes ended
    local k=0
    while [ "$(wc -l < "$cg/slurmd/cgroup.procs")" -gt "$(echo "$slurmd_pids" | wc -w)" ] && [ $k -lt 100 ]; do
        sleep 0.1; k=$((k + 1))
    done
}

cpu_summary() {  # nodes: the mean CPU per step by part and route; the directory's per message
    python3 - "$work" "$1" <<'PY'
import sys, statistics as st
work, n = sys.argv[1], int(sys.argv[2])
parts = ["total", "slurmd", "slurmd_children", "stepd_tasks", "munged", "slurmctld", "srun", "forwards",
         "forwards_in_window", "tells_spread", "others_cpus"]
runs = {}
for route in ("static", "srun", "directory"):
    try:
        rows = [dict(kv.split("=") for kv in l.split()) for l in open(f"{work}/cpu.{n}.{route}")]
    except OSError:
        continue
    runs[route] = [{k: float(r[k]) for k in parts} for r in rows]
def mean(route, k): return st.mean(r[k] for r in runs[route])
def sem(route, k):
    v = [r[k] for r in runs[route]]
    return st.stdev(v) / len(v) ** 0.5 if len(v) > 1 else float("nan")
for route, rs in runs.items():
    print(f"CPU nodes={n} route={route} steps={len(rs)} " + " ".join(f"{k}_ms={mean(route, k):.1f}" for k in parts[:7]) +
          f" total_sem_ms={sem(route, 'total'):.1f} forwards={mean(route, 'forwards'):.1f}"
          f" forwards_in_window={mean(route, 'forwards_in_window'):.1f} tells_spread_ms={mean(route, 'tells_spread'):.0f}"
          f" others_cpus={mean(route, 'others_cpus'):.2f}")
if "static" in runs and "directory" in runs:
    fwd = mean("directory", "forwards")
    if fwd > 0:
        d = {k: (mean("directory", k) - mean("static", k)) * 1000 / fwd for k in parts[:7]}
        se = (sem("directory", "total") ** 2 + sem("static", "total") ** 2) ** 0.5 * 1000 / fwd
        med = lambda route, k: st.median(r[k] for r in runs[route])
        per_med = (med("directory", "total") - med("static", "total")) * 1000 / med("directory", "forwards")
        print(f"DIRCOST nodes={n} forwards={fwd:.1f} per_forward_us={d['total']:.0f} sem_us={se:.0f} per_forward_median_us={per_med:.0f} " +
              " ".join(f"{k}_us={d[k]:.0f}" for k in parts[1:7]) +
              f" others_cpus={st.mean([mean(r, 'others_cpus') for r in runs]):.2f}")
PY
}

measure() {  # nodes route -> prints ms or "fail"
    local n=$1 route=$2 marks f start end env=() extra=()
    marks=$(for f in "$PMIXCPP_CLUSTER_DIR"/log/slurmd.*.log; do echo "$f $(wc -l < "$f")"; done)
    case $route in
        static) ;;
        srun) extra=(--resv-ports=0); env=(SLURM_PMIXCPP_WIREUP=srun) ;;
        directory) extra=(--resv-ports=0); env=(SLURM_PMIXCPP_WIREUP=directory) ;;
    esac
    local before= wrap=()
    if [ "$cpu_mode" = 1 ]; then
        before=$(cpu_snapshot)
        wrap=(sh -c 'echo $$ > "$0"; exec "$@"' "$cg/srun/cgroup.procs")
    fi
    if ! env "${env[@]}" SLURM_PMIXCPP_TRANSPORT=tcp SLURM_PMIXCPP_DEBUG=4 timeout -k 5 120 \
        "${wrap[@]}" srun "${extra[@]}" --mpi=pmixcpp -N"$n" --ntasks-per-node=1 "$work/pmix_bench" ift >"$work/out" 2>&1; then
        [ "$cpu_mode" = 1 ] && step_gone
        echo fail; return
    fi
    local after=
    if [ "$cpu_mode" = 1 ]; then
        step_gone
        after=$(cpu_snapshot)
    fi
    local logs=$(while read -r f k; do tail -n +$((k + 1)) "$f" | sed "s|^|$f |"; done <<< "$marks")
    start=$(echo "$logs" | grep 'node transport tcp at' | cut -d' ' -f2- | ms_of | sort -n | tail -1)
    end=$(echo "$logs" | grep -E 'fence [0-9]+ of .* complete$' | awk '!seen[$1]++' | cut -d' ' -f2- | ms_of | sort -n | tail -1)
    if [ "$cpu_mode" = 1 ]; then  # one line: the parts' CPU (ms), forwards (all, and those from the
        # last node's server start to the last first fence end: the measured window), the spread of
        # the tells at start (first to last node), others' CPUs during srun
        local fwd fwd_in told told_spread
        fwd=$(echo "$logs" | grep -c 'Entering _rpc_forward_data')
        fwd_in=$(echo "$logs" | grep 'Entering _rpc_forward_data' | cut -d' ' -f2- | ms_of |
            awk -v s="${start:-0}" -v e="${end:-0}" '$1 >= s && $1 <= e' | wc -l)
        # the directory route's tells at start: first to last node
        told=$(echo "$logs" | grep 'directory wire-up: .* neighbours told' | cut -d' ' -f2- | ms_of | sort -n)
        told_spread=0; [ -n "$told" ] && told_spread=$(( $(echo "$told" | tail -1) - $(echo "$told" | head -1) ))
        echo "$before $after $told_spread $fwd $fwd_in" | awk '{
            slurmd = $9 - $1; munged = $10 - $2; ctld = $11 - $3; srun = $12 - $4
            own = $13 - $5; kids = $14 - $6; step = slurmd - own - kids
            wall = $16 - $8; mine = slurmd + munged + ctld + srun
            others = (wall > 0) ? ($15 - $7 - mine) / wall : 0
            printf "total=%.1f slurmd=%.1f slurmd_children=%.1f stepd_tasks=%.1f munged=%.1f slurmctld=%.1f srun=%.1f forwards=%d forwards_in_window=%d tells_spread=%d others_cpus=%.2f\n",
                   mine, own, kids, step, munged, ctld, srun, $18, $19, $17, others
        }' >> "$work/cpu.$n.$route"
        [ -n "${WIREUP_CPU_LOG:-}" ] && tail -1 "$work/cpu.$n.$route" | sed "s/^/nodes=$n route=$route wall_ms=$(( ${end:-0} - ${start:-0} )) /" >> "$WIREUP_CPU_LOG"
    fi
    local nodes_route
    case $route in
        static) nodes_route=$(echo "$logs" | grep -c 'static wire-up: .* nodes at port') ;;
        srun) nodes_route=$(echo "$logs" | grep -c 'signed records of .* nodes verified') ;;
        directory) nodes_route=$(echo "$logs" | grep -c 'directory wire-up: .* neighbours told') ;;
    esac
    if [ -z "$start" ] || [ -z "$end" ] || [ "$nodes_route" -ne "$n" ]; then echo "fail($nodes_route)"; return; fi
    echo $((end - start))
}

cpu_mode=${WIREUP_CPU:-0}
slurm_debug=debug; [ "$cpu_mode" = 1 ] && slurm_debug=debug3
PMIXCPP_SLURM_DEBUG=$slurm_debug PMIXCPP_NODE_ADDRS=distinct PMIXCPP_SLURM_CONF_EXTRA="MpiParams=ports=$lo-$hi" \
    "$src/contrib/cluster.sh" restart "$max" >/dev/null 2>&1 || { echo "wireup: cluster restart failed" >&2; exit 1; }
eval "$("$src/contrib/cluster.sh" env)"
[ "$cpu_mode" = 1 ] && cg_setup
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
    [ "$cpu_mode" = 1 ] && cpu_summary "$n"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
unset SLURM_RESV_PORTS
cg_release
"$src/contrib/cluster.sh" restart 4 >/dev/null 2>&1
cg_remove
