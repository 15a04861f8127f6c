# Event load, one node, 4 ranks: 100k events from one client to every local rank are
# all delivered and slurmstepd's memory stays bounded (max RSS compared with a 10k-event run);
# then the event round-trip latency (rank 0 -> rank 1 -> rank 0) and notify -> ack; then abuse of
# the event API (10000 handlers, unknown references, bad ranges and procs): errors, no crash.
. "$(dirname "$0")/lib.sh"
prog="${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}/libexec/pmixcpp/tests/pmix_events"
[ -x "$prog" ] || { fail "$prog not installed"; t_done; exit; }

# run the flood, sampling the largest slurmstepd RSS (kB) meanwhile into $maxrss
flood() {
    local n=$1 f name="evflood$$" jid="" m=0 r; f=$(mktemp)
    ( timeout -k 5 240 srun -J "$name" --mpi=pmixcpp -N1 -n4 "$prog" flood "$n" >"$f" 2>&1; echo "rc=$?" >>"$f" ) &
    local pid=$!
    while kill -0 $pid 2>/dev/null; do
        # only this step's slurmstepd (other clusters may run on the same host)
        [ -z "$jid" ] && jid=$(squeue -h -n "$name" -o %i 2>/dev/null | head -1)
        if [ -n "$jid" ]; then
            r=$(ps -eo rss=,args= | awk -v s="slurmstepd: [$jid.0]" 'index($0, s) { print $1 }' | sort -n | tail -1)
            [ -n "$r" ] && [ "$r" -gt "$m" ] && m=$r
        fi
        sleep 0.1
    done
    wait $pid
    out=$(cat "$f"); rm -f "$f"
    rc=$(echo "$out" | sed -n 's/^rc=//p')
    maxrss=$m
}

flood 10000
rss_small=$maxrss
echo "$out" | grep -E '^(FAIL|FLOOD)' | sed 's/^/    /'
expect_eq "flood 10k: all ranks passed" 4 "$(echo "$out" | grep -c '^RESULT-PASS rank')"
flood 100000
rss_big=$maxrss
echo "$out" | grep -E '^(FAIL|FLOOD)' | sed 's/^/    /'
expect_eq "flood 100k: srun status" 0 "$rc"
expect_eq "flood 100k: all ranks got every event" 4 "$(echo "$out" | grep -c '^RESULT-PASS rank')"
echo "    slurmstepd max RSS: ${rss_small} kB (10k events), ${rss_big} kB (100k events)"
[ "$rss_big" -gt 0 ] && pass "slurmstepd of the step sampled" || fail "could not find the step's slurmstepd"
[ $((rss_big - rss_small)) -lt 32768 ] && pass "slurmstepd memory bounded (+$(( (rss_big - rss_small) / 1024 )) MB for 10x the events)" \
    || fail "slurmstepd RSS grew by $(( (rss_big - rss_small) / 1024 )) MB"

run_srun 120 --mpi=pmixcpp -N1 -n2 "$prog" latency 2000
echo "$out" | grep -E '^(FAIL|LATENCY)' | sed 's/^/    /'
expect_eq "latency: both ranks passed" 2 "$(echo "$out" | grep -c '^RESULT-PASS rank')"
run_srun 120 --mpi=pmixcpp -N1 -n4 "$prog" abuse
echo "$out" | grep -E '^FAIL' | head -5 | sed 's/^/    /'
expect_eq "abuse: srun exit status" 0 "$rc"
expect_eq "abuse: every rank passed" 4 "$(echo "$out" | grep -c '^RESULT-PASS rank')"
t_done
