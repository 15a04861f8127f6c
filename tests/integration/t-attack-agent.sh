# Frames from srun's agent are untrusted input to root (plugin/agent/stepd/agent_link.h). The
# job's user (nobody) runs srun with an LD_PRELOAD shim it built itself (agent_shim.c) that bends
# every reply of srun's services on its way to the slurmstepd: a reply to a call never made, a
# request's frame type, a broken magic, a header claiming 1 GiB. Each time the slurmstepd closes
# the connection with a clear line, the call fails with an error at once (PMIx_Publish or
# PMIx_Lookup returns an error; no hang), the next call opens a new connection, the slurmstepd
# stays up (the step ends with the program's own exit code) and the node serves a clean step
# afterwards. With every reply sent twice, the late duplicates are ignored and every call passes.
# Requires: make install; a cluster; root; cc; user nobody.
. "$(dirname "$0")/lib.sh"
here="$(cd "$(dirname "$0")" && pwd)"
[ "$(id -u)" = 0 ] || { echo "  skip: needs root (the users)"; exit 0; }
command -v cc >/dev/null || { echo "  skip: no cc"; exit 0; }
id nobody >/dev/null 2>&1 || { echo "  skip: no user nobody"; exit 0; }
as_nobody() { runuser -u nobody -- env SLURM_CONF="$SLURM_CONF" "$@"; }
prefix=${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}

work=$(mktemp -d /tmp/pmixcpp-agent-attack.XXXXXX)
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
cp "$here/agent_shim.c" "$work/" && chmod 644 "$work/agent_shim.c"
mkdir "$work/user" && chown nobody "$work/user"
if ! cc -O2 -o "$work/rtt" "$PMIXCPP_SRCDIR/tests/bench/pmix_agent_rtt.c" -I"$prefix/include" -L"$prefix/lib" \
    -Wl,-rpath,"$prefix/lib" -lpmix 2> "$work/cc.err"; then
    fail "the test program did not build: $(cat "$work/cc.err")"; t_done; exit
fi
chmod 755 "$work/rtt"
if ! as_nobody cc -shared -fPIC -O2 -o "$work/user/shim.so" "$work/agent_shim.c" -ldl 2> "$work/cc.err"; then
    fail "the shim did not build: $(cat "$work/cc.err")"; t_done; exit
fi
pass "the job's user built an LD_PRELOAD shim for its srun"

rounds=3
bend_case() {  # mode expected-reason
    local mode=$1 reason=$2 t0=$SECONDS out rc mark lines
    mark=$(log_mark)
    out=$(cd /tmp && as_nobody env LD_PRELOAD="$work/user/shim.so" PMIXCPP_SHIM_MODE="$mode" \
        timeout -k 5 90 srun --mpi=pmixcpp -J "agent-$mode" -N1 -n1 "$work/rtt" "$rounds" 0 2>&1)
    rc=$?
    local took=$((SECONDS - t0))
    expect_match "$mode: the shim bent srun's replies" "agent-shim: $mode" "$out"
    expect_eq "$mode: every publish/lookup failed with an error" "$rounds" "$(echo "$out" | grep -c '^FAIL publish/lookup')"
    expect_eq "$mode: the program ended on its own (exit 1, not a timeout or a signal)" 1 "$rc"
    [ "$took" -lt 45 ] && pass "$mode: no hang (${took}s for $rounds rounds)" || fail "$mode: took ${took}s"
    lines=$(logs_since "$mark" | grep -cE "srun agent: closing the connection: .*($reason)")
    [ "$lines" -ge "$rounds" ] &&
        pass "$mode: the slurmstepd closed the connection, saying why ($lines lines): $(logs_since "$mark" | grep -E "srun agent: closing the connection" | tail -1 | sed 's/.*mpi\/pmixcpp: //' | cut -c1-200)" ||
        fail "$mode: $lines 'srun agent: closing the connection: ... $reason' lines in the slurmd log (expected >= $rounds)"
    expect_eq "$mode: no step left behind" "" "$(steps_left 10)"
}
bend_case badid 'never made on this connection'
bend_case type 'type 4 where a reply belongs'
bend_case garbage 'malformed frame'
bend_case huge 'malformed frame'

# Every reply twice: the second is a late answer to a call already answered, ignored.
mark=$(log_mark)
out=$(cd /tmp && as_nobody env LD_PRELOAD="$work/user/shim.so" PMIXCPP_SHIM_MODE=dup \
    timeout -k 5 90 srun --mpi=pmixcpp -J agent-dup -N1 -n1 "$work/rtt" "$rounds" 0 2>&1)
rc=$?
expect_match "dup: the shim sent replies twice" 'agent-shim: dup' "$out"
expect_eq "dup: every publish/lookup passed" "$rounds" "$(echo "$out" | grep -c '^RTT-PUBLOOK-MS')"
expect_eq "dup: exit status" 0 "$rc"
expect_eq "dup: the connection was kept" 0 "$(logs_since "$mark" | grep -c 'srun agent: closing the connection')"

# The same node, a clean step.
out=$(cd /tmp && as_nobody timeout -k 5 90 srun --mpi=pmixcpp -J agent-clean -N1 -n1 "$work/rtt" "$rounds" 0 2>&1)
rc=$?
expect_eq "clean step after the attacks: exit status" 0 "$rc"
expect_eq "clean step: every publish/lookup passed" "$rounds" "$(echo "$out" | grep -c '^RTT-PUBLOOK-MS')"
[ "$rc" -eq 0 ] || echo "$out" | tail -5 | sed 's/^/    /'
t_done
