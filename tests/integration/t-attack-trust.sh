# The trust root of a step's node links is Slurm's munge, not srun (SECURITY.md, plugin/net/identity.h).
# The job's user (nobody) runs srun with an LD_PRELOAD shim it built itself, which rewrites the
# address table srun's agent relays to the slurmstepds (root): one record changed, two records
# swapped, the table's frame cut short. Each time root must refuse: the step fails, promptly (no
# hang), and each slurmstepd says why in one line. Then, with the shim only recording what passes
# through srun, the user tries everything it knows against a slurmstepd's node listener: munge
# cannot open a record for it (the node keys are root's), hellos keyed by every guess from the
# records and the namespace, a MAC'd node frame without a handshake, impossible node ids: all
# dropped, and the same step's fences across the nodes pass.
# Requires: make install; a cluster with >= 2 nodes; root; cc; python3; users nobody (job) and munge's unmunge.
. "$(dirname "$0")/lib.sh"
prog="${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}/libexec/pmixcpp/tests/pmix_multinode"
here="$(cd "$(dirname "$0")" && pwd)"
[ -x "$prog" ] || { fail "$prog not installed"; t_done; exit; }
[ "$(id -u)" = 0 ] || { echo "  skip: needs root (the users)"; exit 0; }
command -v cc >/dev/null && command -v python3 >/dev/null || { echo "  skip: no cc or python3"; exit 0; }
id nobody >/dev/null 2>&1 || { echo "  skip: no user nobody"; exit 0; }
as_nobody() { runuser -u nobody -- env SLURM_CONF="$SLURM_CONF" "$@"; }
# The route whose table passes through srun (the directory route's records never do).
export SLURM_PMIXCPP_WIREUP=srun

work=$(mktemp -d /tmp/pmixcpp-trust.XXXXXX)
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
cp "$here/trust_shim.c" "$here/attack_net.py" "$work/"
chmod 644 "$work/trust_shim.c" "$work/attack_net.py"
mkdir "$work/user" && chown nobody "$work/user"
# The user builds its shim itself.
if ! as_nobody cc -shared -fPIC -O2 -o "$work/user/shim.so" "$work/trust_shim.c" -ldl 2> "$work/cc.err"; then
    fail "the shim did not build: $(cat "$work/cc.err")"; t_done; exit
fi
pass "the job's user built an LD_PRELOAD shim for its srun"
socket=$(sed -n 's/^AuthInfo=.*socket=\([^,]*\).*/\1/p' "$SLURM_CONF" | head -1)

# --- (a) the table rewritten on its way through srun: root refuses ------------------------------
rewrite_case() {  # mode transport expected-reason
    local mode=$1 tr=$2 reason=$3 t0=$SECONDS out rc lines before
    before=$(slurmd_logs | grep -cE "node address exchange failed .*($reason)")
    out=$(cd /tmp && as_nobody env LD_PRELOAD="$work/user/shim.so" PMIXCPP_SHIM_MODE="$mode" \
        SLURM_PMIXCPP_TRANSPORT="$tr" timeout -k 5 90 srun --mpi=pmixcpp -J "trust-$mode" -N2 --ntasks-per-node=2 \
        "$prog" 2 2>&1)
    rc=$?
    local took=$((SECONDS - t0))
    echo "$out" | grep -E 'trust-shim|error' | head -5 | sed 's/^/    /'
    expect_match "$mode/$tr: the shim rewrote the table in srun" 'trust-shim: ' "$out"
    [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] && pass "$mode/$tr: the step failed (exit $rc) in ${took}s" ||
        fail "$mode/$tr: srun exit $rc after ${took}s (expected a failure, not a timeout)"
    [ "$took" -lt 60 ] && pass "$mode/$tr: no hang (${took}s)" || fail "$mode/$tr: took ${took}s"
    expect_eq "$mode/$tr: no rank passed a fence across the nodes" 0 "$(echo "$out" | grep -c '^RESULT-PASS rank')"
    lines=$(( $(slurmd_logs | grep -cE "node address exchange failed .*($reason)") - before ))
    [ "$lines" -ge 1 ] && [ "$lines" -le 2 ] &&
        pass "$mode/$tr: each slurmstepd said why in one line ($lines): $(slurmd_logs | grep -E "node address exchange failed .*($reason)" | tail -1 | sed 's/.*mpi\/pmixcpp: //' | cut -c1-220)" ||
        fail "$mode/$tr: no 'node address exchange failed ... $reason' line in the slurmd logs"
    expect_eq "$mode/$tr: no step left behind" "" "$(steps_left 10)"
}
rewrite_case flip tcp 'credential refused by munge'
rewrite_case swap tcp 'in the slot of node'
rewrite_case flip ucx 'credential refused by munge'
rewrite_case truncate tcp 'closed|rendezvous'

# --- (b) everything the user knows, against a node listener: refused, the step still works -------
flag="$work/user/go"
dump="$work/user/records.bin"
(cd /tmp && as_nobody env LD_PRELOAD="$work/user/shim.so" PMIXCPP_SHIM_MODE=dump PMIXCPP_SHIM_DUMP="$dump" \
    SLURM_PMIXCPP_TRANSPORT=tcp timeout -k 5 150 srun --mpi=pmixcpp -J trust-forge -N2 --ntasks-per-node=2 \
    bash -c "for i in \$(seq 900); do [ -e $flag ] && break; sleep 0.1; done; exec $prog 2" \
    > "$work/forge.out" 2>&1; echo $? > "$work/forge.rc") &
launcher=$!
job="" pids=""
for i in $(seq 200); do
    job=$(squeue -h -n trust-forge -o %i 2>/dev/null | head -1)
    if [ -n "$job" ]; then
        pids=""
        for p in $(pgrep -f "^slurmstepd: \[$job\.0\]"); do
            ls -l "/proc/$p/fd" 2>/dev/null | grep -q "$PMIXCPP_CLUSTER_DIR/" && pids="$pids $p"
        done
    fi
    [ "$(echo $pids | wc -w)" -ge 2 ] && [ -s "$dump" ] && break
    sleep 0.1
done
ns="slurm.$job.0"
[ -s "$dump" ] && pass "the user holds what srun relayed ($(stat -c %s "$dump") bytes)" || fail "nothing recorded by the shim"
first=$(echo $pids | awk '{ print $1 }')
port=""
for p in $(python3 "$work/attack_net.py" listeners "$first"); do
    [ "$(runuser -u nobody -- python3 "$work/attack_net.py" probe "$p" node "$ns")" = yes ] && { port=$p; break; }
done
[ -n "$port" ] && pass "slurmstepd $first's node listener is on port $port" || fail "no node listener found"
# munge will not open a record for the user: the node keys inside are root's.
cred=$(grep -ao 'MUNGE:[A-Za-z0-9+/=]*:' "$dump" | head -1)
if [ -n "$cred" ] && command -v unmunge >/dev/null; then
    um=$(printf '%s' "$cred" | runuser -u nobody -- unmunge ${socket:+--socket="$socket"} 2>&1 >/dev/null)
    expect_match "the user cannot open a node record (munge refuses)" 'nauthorized|not authorized|EMUNGE' "$um"
fi
if [ -n "$port" ]; then
    report=$(runuser -u nobody -- python3 "$work/attack_net.py" forge "$port" "$ns" 1 "$dump" 2>&1)
    echo "$report" | sed 's/^/    /'
    expect_match "the user tried keys from what it knows" 'key guess 0' "$report"
    expect_eq "every forged hello and frame was dropped" "" "$(echo "$report" | grep -E 'KEPT|Error|Traceback')"
fi
touch "$flag"
wait "$launcher"
expect_eq "the step's exit status" 0 "$(cat "$work/forge.rc")"
expect_eq "all 4 ranks passed their fences across the nodes" 4 "$(grep -c '^RESULT-PASS rank' "$work/forge.out")"
expect_eq "no step left behind" "" "$(steps_left 10)"
t_done
