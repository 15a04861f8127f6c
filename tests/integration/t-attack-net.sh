# Attacks on the step's listeners while a two-node step of user nobody runs: the node transport's
# listener in each slurmstepd (root) and srun's agent. Another user's process (daemon) sends
# garbage, a 4 GiB length header, a node frame without authentication, a forged handshake
# response (the agent: a hello without a slurmstepd credential), 10k idle connections to a node
# listener and 10k to the agent; root replays the bytes of real handshakes it captured on the
# loopback interface when the step started (the agent refuses a credential opened before). Then: the
# slurmstepds' RSS grew by less than 4 MiB, every attack was dropped, the refusal lines are few
# (rate-limited), the flood evicted only its own user's pending connections (fairness by uid), and
# the step's PMIx program (fences across the nodes) passes on every rank.
# With the TCP transport and with UCX (whose own listener gets the garbage; its frames are sealed,
# tests/net covers the replay of a UCX frame).
# Requires: make install; a cluster with >= 2 nodes; root; python3; users nobody and daemon.
. "$(dirname "$0")/lib.sh"
prog="${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}/libexec/pmixcpp/tests/pmix_multinode"
helper="$(cd "$(dirname "$0")" && pwd)/attack_net.py"
[ -x "$prog" ] || { fail "$prog not installed"; t_done; exit; }
[ "$(id -u)" = 0 ] || { echo "  skip: needs root (the sniffer, the users)"; exit 0; }
command -v python3 >/dev/null || { echo "  skip: no python3"; exit 0; }
id nobody >/dev/null 2>&1 && id daemon >/dev/null 2>&1 || { echo "  skip: no user nobody/daemon"; exit 0; }
as_nobody() { runuser -u nobody -- env SLURM_CONF="$SLURM_CONF" "$@"; }
attacker() { runuser -u daemon -- python3 "$helper" "$@"; }

work=$(mktemp -d /tmp/pmixcpp-attack.XXXXXX)
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT

# The slurmstepds of job $1 step 0 of this cluster (their log goes to this cluster's files).
stepd_pids() {
    local p
    for p in $(pgrep -f "^slurmstepd: \[$1\.0\]"); do
        ls -l "/proc/$p/fd" 2>/dev/null | grep -q "$PMIXCPP_CLUSTER_DIR/" && echo "$p"
    done
}
# The srun among the descendants of $1.
srun_below() {
    local p kids
    for p in $(pgrep -P "$1"); do
        [ "$(cat "/proc/$p/comm" 2>/dev/null)" = srun ] && { echo "$p"; return; }
        kids=$(srun_below "$p"); [ -n "$kids" ] && { echo "$kids"; return; }
    done
}
# The port among PID's TCP listeners that answers as a pmixcpp listener of PURPOSE. srun's agent
# answers no hello without a slurmstepd credential: it is the one of srun's listeners bound to a
# node-facing address (Slurm's own listen on every interface).
our_port() {  # pid purpose nspace
    local port a
    if [ "$2" = agent ]; then
        for port in $(python3 "$helper" listeners "$1"); do
            a=$(ss -ltnH "sport = :$port" | awk '{ print $4 }' | head -1)
            case "$a" in 0.0.0.0:*|\*:*|\[::\]:*|"") continue ;; esac
            echo "$port"; return
        done
        return
    fi
    for port in $(python3 "$helper" listeners "$1"); do
        [ "$(attacker probe "$port" "$2" "$3")" = yes ] && { echo "$port"; return; }
    done
}
rss_kb() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0; }

attack_case() {  # transport
    local tr=$1 flag="$work/go.$1" cap="$work/capture.$1.json" outf="$work/out.$1" rcf="$work/rc.$1"
    echo "  -- transport $tr"
    # Root watches the loopback interface while the step starts: it records real handshakes.
    python3 "$helper" sniff "$cap" 12 > "$work/sniff.$tr" 2>&1 &
    local sniffer=$!
    sleep 0.5
    # The step: each task waits for the go (bounded), then runs fences across both nodes.
    (cd /tmp && as_nobody env SLURM_PMIXCPP_TRANSPORT="$tr" timeout -k 5 150 srun --mpi=pmixcpp -J "attack-$tr" \
        -N2 --ntasks-per-node=2 bash -c "for i in \$(seq 900); do [ -e $flag ] && break; sleep 0.1; done; exec $prog 2" \
        > "$outf" 2>&1; echo $? > "$rcf") &
    local launcher=$!
    local job="" pids="" i
    for i in $(seq 200); do
        job=$(squeue -h -n "attack-$tr" -o %i 2>/dev/null | head -1)
        [ -n "$job" ] && pids=$(stepd_pids "$job")
        [ "$(echo "$pids" | grep -c .)" -ge 2 ] && break
        sleep 0.1
    done
    [ "$(echo "$pids" | grep -c .)" -ge 2 ] && pass "$tr: the step runs on two slurmstepds ($(echo $pids))" ||
        { fail "$tr: no two slurmstepds for job '$job'"; touch "$flag"; wait "$launcher"; return; }
    local ns="slurm.$job.0" srun_pid agent_port node_port p
    srun_pid=$(srun_below "$launcher")
    for i in $(seq 50); do
        agent_port=$(our_port "$srun_pid" agent "")
        [ -n "$agent_port" ] && break; sleep 0.2
    done
    [ -n "$agent_port" ] && pass "$tr: found srun's agent listening on port $agent_port" || fail "$tr: no agent port"
    local first=$(echo "$pids" | head -1)
    node_port=$(our_port "$first" node "$ns")
    if [ "$tr" = tcp ]; then
        [ -n "$node_port" ] && pass "$tr: found the node listener of slurmstepd $first on port $node_port" ||
            fail "$tr: no node listener"
        expect_eq "$tr: the node listener is bound to the node's address, not every interface" "" \
            "$(ss -ltnH "sport = :$node_port" | awk '{ print $4 }' | grep -E '^(0\.0\.0\.0|\*|\[::\]):' )"
    fi
    expect_eq "$tr: the agent is bound to the address the nodes reach srun at" "" \
        "$(ss -ltnH "sport = :$agent_port" | awk '{ print $4 }' | grep -E '^(0\.0\.0\.0|\*|\[::\]):')"
    wait "$sniffer"
    pass "$tr: sniffer: $(cat "$work/sniff.$tr")"
    chmod 644 "$cap" 2>/dev/null

    declare -A before
    for p in $pids; do before[$p]=$(rss_kb "$p"); done

    # Single hostile connections, then the replays of the captured handshakes.
    local report=""
    if [ -n "$node_port" ]; then
        report+=$(attacker attack "$node_port" node "$ns" "$cap" 2>&1)$'\n'
    else  # UCX: its own listeners get the garbage and the 4 GiB header
        for p in $(python3 "$helper" listeners "$first"); do
            report+=$(attacker attack "$p" node "$ns" 2>&1 | grep -E '^(garbage|4GiB)' | sed 's/^/ucx listener: /')$'\n'
        done
    fi
    [ -n "$agent_port" ] && report+=$(attacker attack "$agent_port" agent "" "$cap" 2>&1)$'\n'
    echo "$report" | grep -v '^$' | sed 's/^/    /'
    expect_eq "$tr: every hostile connection was dropped" "" "$(echo "$report" | grep -E 'KEPT|Error|Traceback')"
    if [ "$tr" = tcp ]; then
        expect_match "$tr: a captured node handshake was replayed and dropped" '^replay of .* dropped' \
            "$(attacker attack "$node_port" node "$ns" "$cap" 2>&1 | grep replay)"
    fi
    expect_match "$tr: a captured agent handshake was replayed and dropped" '^replay of .* dropped' "$report"

    # Floods of idle connections, at the same time. What they cost is counted in descriptors the
    # listeners hold: at most the per-address cap of unauthenticated connections (64), whatever
    # the flood.
    # (The flood's tail waits in the kernel's accept queue and SYN retries, not in our processes.)
    local fds0_stepd fds0_srun peak_stepd=0 peak_srun=0 n floods=()
    nfds() { ls "/proc/$1/fd" 2>/dev/null | wc -l; }
    fds0_stepd=$(nfds "$first"); fds0_srun=$(nfds "$srun_pid")
    [ -n "$node_port" ] && { attacker flood "$node_port" 10000 12 > "$work/flood-node.$tr" 2>&1 & floods+=($!); }
    [ -n "$agent_port" ] && { attacker flood "$agent_port" 10000 12 > "$work/flood-agent.$tr" 2>&1 & floods+=($!); }
    while kill -0 "${floods[@]}" 2>/dev/null; do
        n=$(nfds "$first"); [ "$n" -gt "$peak_stepd" ] && peak_stepd=$n
        n=$(nfds "$srun_pid"); [ "$n" -gt "$peak_srun" ] && peak_srun=$n
        sleep 0.1
    done
    wait "${floods[@]}"
    echo "    node listener flood: $(cat "$work/flood-node.$tr" 2>/dev/null); agent flood: $(cat "$work/flood-agent.$tr")"
    [ -n "$node_port" ] && expect_match "$tr: 10k idle connections to the node listener, which dropped some" \
        '^opened 10000 connected [0-9]+ dropped [1-9]' "$(cat "$work/flood-node.$tr")"
    expect_match "$tr: 10k idle connections to the agent, which dropped some" '^opened 10000 connected [0-9]+ dropped [1-9]' \
        "$(cat "$work/flood-agent.$tr")"
    [ $((peak_stepd - fds0_stepd)) -le 80 ] && pass "$tr: slurmstepd $first held at most $((peak_stepd - fds0_stepd)) more descriptors" ||
        fail "$tr: slurmstepd $first held $((peak_stepd - fds0_stepd)) more descriptors during the flood"
    [ $((peak_srun - fds0_srun)) -le 80 ] && pass "$tr: srun held at most $((peak_srun - fds0_srun)) more descriptors" ||
        fail "$tr: srun held $((peak_srun - fds0_srun)) more descriptors during the flood"
    sleep 4  # past the 3 s deadline of whatever is left
    [ "$(nfds "$first")" -le $((fds0_stepd + 2)) ] && pass "$tr: slurmstepd $first is back to its descriptors" ||
        fail "$tr: slurmstepd $first holds $(nfds "$first") descriptors, $fds0_stepd before the flood"
    for p in $pids; do
        local grow=$(( $(rss_kb "$p") - ${before[$p]} ))
        [ "$grow" -lt 4096 ] && pass "$tr: slurmstepd $p RSS grew by $grow KiB (< 4 MiB)" ||
            fail "$tr: slurmstepd $p RSS grew by $grow KiB"
    done

    # The step goes on as if nothing happened.
    touch "$flag"
    wait "$launcher"
    local out rc
    out=$(cat "$outf"); rc=$(cat "$rcf")
    expect_eq "$tr: the step's exit status" 0 "$rc"
    expect_eq "$tr: all 4 ranks passed their fences" 4 "$(echo "$out" | grep -c '^RESULT-PASS rank')"
    local lines min=0
    [ "$tr" = tcp ] && min=3
    lines=$(slurmd_logs | grep -c "($ns): refused a connection")
    [ "$lines" -ge $min ] && [ "$lines" -le 60 ] && pass "$tr: the slurmstepds logged $lines refusal lines (rate-limited)" ||
        fail "$tr: $lines refusal lines in the slurmd logs (expected $min..60)"
    [ "$tr" = tcp ] && expect_match "$tr: suppressed refusals are summed up" "\($ns\): [0-9]+ more connection\(s\) refused" "$(slurmd_logs)"
    # Fairness: the flood is daemon's (a local uid), the step's own connections are root's (the
    # slurmstepds) and nobody's: the listeners name the flooder, and never evict the others.
    local all="$(slurmd_logs | grep -F "($ns)"; echo "$out")"
    # (With UCX only the agent listens, and its few logged lines per window may all be the single
    # attacks above: the names are checked on the TCP run.)
    [ "$tr" = tcp ] && expect_match "$tr: refusals name the flooding user, not an address" "refused a connection from local uid $(id -u daemon) \(127\.0\.0\.1\)" "$all"
    # (The per-peer cap drops a peer's own oldest for its newest: on a loaded one-host cluster the
    # slurmstepds, all uid 0, may reach it with their own retried agent calls. What the flood must
    # never cause is the other cap's eviction of another user's handshake.)
    expect_no_match "$tr: no pending handshake of another user was evicted" "refused a connection from local uid ($(id -u nobody)|0) .*too many unauthenticated connections \(the oldest of the peer holding the most" "$all"
    lines=$(echo "$out" | grep -c "srun agent: refused a connection")
    [ "$lines" -ge 1 ] && [ "$lines" -le 60 ] && pass "$tr: srun's agent logged $lines refusal lines (rate-limited)" ||
        fail "$tr: $lines refusal lines from srun's agent (expected 1..60)"
}

attack_case tcp
attack_case ucx
t_done
