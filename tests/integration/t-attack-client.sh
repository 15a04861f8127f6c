# A hostile client of the step's server, run as the unprivileged user nobody (slurmstepd is
# root): (a) rank 0 floods requests and never reads a reply: the server disconnects it with one
# log line, slurmstepd's memory stays bounded, the other ranks complete; (b) rank 0 sends hostile
# frames (garbage, oversized frames, huge counts and lengths, deep nesting, a message over the
# decode budget, unknown types): each connection is closed with a log line, slurmstepd never
# crashes, the other ranks complete; then it sends the server descriptors with a request: the server
# answers and keeps none of them (root holds no object of the user's); then it takes the modex
# snapshot's memory file as a client does and tries every way to change it, all refused (the seals);
# then 65 Gets of the node's topology at once, before it is made: each answered (with it, or
# refused past 16 waiting), and no more than that queued.
# tests/programs/pmix_attack.c
# speaks the wire protocol itself.
. "$(dirname "$0")/lib.sh"
prog="${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}/libexec/pmixcpp/tests/pmix_attack"
[ -x "$prog" ] || { fail "$prog not installed"; t_done; exit; }
id nobody >/dev/null 2>&1 || { echo "  skip: no user 'nobody'"; exit 0; }

# attack MODE: srun -n4 as nobody; the largest RSS (kB) of the step's slurmstepd in $maxrss,
# srun's output in $out, its status in $rc, the job id in $jid
attack() {
    local name="attack$$$1" m=0 r f; f=$(mktemp); chmod 666 "$f"
    jid=""
    ( cd /tmp && runuser -u nobody -- env SLURM_CONF="$SLURM_CONF" timeout -k 5 240 \
        srun -J "$name" --mpi=pmixcpp -N1 -n4 "$prog" "$1" 40 >"$f" 2>&1; echo "rc=$?" >>"$f" ) &
    local pid=$!
    while kill -0 $pid 2>/dev/null; do
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

# the slurmd log lines of the last attack's step
step_logs() { slurmd_logs | grep -F "[$jid.0]"; }

# (a) flood without reading
attack flood
echo "$out" | grep -E '^(FAIL|DISCONNECTED|STILL)' | sed 's/^/    /'
expect_eq "flood: srun status" 0 "$rc"
expect_eq "flood: every rank passed" 4 "$(echo "$out" | grep -c '^RESULT-PASS rank')"
expect_match "flood: rank 0 was disconnected" '^DISCONNECTED after [0-9]+ requests' "$out"
sleep 1
logs=$(step_logs)
expect_match "flood: the server logged why" "mpi/pmixcpp: .*rank 0 \(pid [0-9]+\) .*closed by the server: it does not read its replies \([0-9]+ bytes, [0-9]+ replies queued\)" "$logs"
expect_eq "flood: one log line about rank 0" 1 "$(echo "$logs" | grep -c 'rank 0 (pid')"
echo "    slurmstepd max RSS during the flood: $((maxrss / 1024)) MiB"
[ "$maxrss" -gt 0 ] && pass "slurmstepd of the step sampled" || fail "could not find the step's slurmstepd"
[ "$maxrss" -lt $((400 * 1024)) ] && pass "slurmstepd memory bounded (< 400 MiB: 64 MiB backlog limit)" \
    || fail "slurmstepd grew to $((maxrss / 1024)) MiB"
st=$(sacct -n -X -j "$jid" -o State 2>/dev/null | head -1 | tr -d ' ')
[ -z "$st" ] || expect_eq "flood: job state" COMPLETED "$st"

# (b) hostile frames
attack hostile
echo "$out" | grep -E '^(FAIL|HOSTILE|DESCRIPTORS|SNAPSHOT-FILE|TOPOLOGY)' | sed 's/^/    /'
expect_eq "hostile: srun status" 0 "$rc"
expect_eq "hostile: every rank passed" 4 "$(echo "$out" | grep -c '^RESULT-PASS rank')"
expect_eq "hostile: every hostile input refused" 16 "$(echo "$out" | grep -c '^PASS rank 0: HOSTILE .* ok: refused')"
expect_match "descriptors sent to the server: answered" '^PASS rank 0: DESCRIPTORS ok: the server answered' "$out"
expect_match "descriptors sent to the server: none kept by root" '^PASS rank 0: DESCRIPTORS ok: the server kept none' "$out"
expect_match "the snapshot's memory file: every way to change it refused" '^PASS rank 0: SNAPSHOT-FILE ok: ([0-9]+) of \1 ways' "$out"
expect_match "Gets of the node's topology at once: each answered, with it or refused" '^PASS rank 0: TOPOLOGY ok: each Get answered' "$out"
echo "    slurmstepd max RSS during the hostile inputs: $((maxrss / 1024)) MiB"
[ "$maxrss" -lt $((400 * 1024)) ] && pass "slurmstepd memory bounded (< 400 MiB)" || fail "slurmstepd grew to $((maxrss / 1024)) MiB"
sleep 1
logs=$(step_logs)
expect_match "hostile: garbage logged" "closing the connection of pid [0-9]+ before connect: malformed frame: bad frame magic" "$logs"
expect_match "hostile: oversized frame logged" "malformed frame: frame payload of [0-9]+ bytes exceeds limit" "$logs"
expect_match "hostile: huge count logged" "malformed commit payload: commit: count 4294967295 exceeds the limit" "$logs"
expect_match "hostile: nesting logged" "malformed log payload: .*nested deeper than 16" "$logs"
expect_match "hostile: decode budget logged" "malformed finalize payload: .*exceed the decode budget" "$logs"
expect_match "hostile: 2^32 procs logged" "malformed fence payload: fence procs: procs: count 4294967280 exceeds the limit" "$logs"
expect_match "hostile: 4 GiB byte object logged" "malformed commit payload: .*byte object: .*need 4294967280 bytes" "$logs"
expect_eq "hostile: one log line per hostile connection" 16 "$(echo "$logs" | grep -cE 'closing the connection of pid|rank 0 \(pid [0-9]+\) lost its connection')"
expect_no_match "no slurmstepd crash" "(Segmentation fault|core dumped|AddressSanitizer|terminate called|[Aa]borted|internal error)" "$(slurmd_logs)"
t_done
