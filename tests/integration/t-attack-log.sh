# PMIx_Log as an attack on slurmd's log: a job of user nobody logs lines that pretend to be
# slurmstepd's own (embedded newlines, a carriage return, an escape sequence), then 1 GiB of 64 KiB
# messages as fast as it can (tests/programs/pmix_attack.c logflood). The log must grow by a
# bounded amount, the forged lines appear escaped inside the job's own line, slurmstepd stays
# small, and the step's other ranks complete their fences meanwhile.
# Requires: user nobody. PMIXCPP_LOG_FLOOD_MIB (default 1024) sets the flood's size.
. "$(dirname "$0")/lib.sh"
prog="${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}/libexec/pmixcpp/tests/pmix_attack"
[ -x "$prog" ] || { fail "$prog not installed"; t_done; exit; }
id nobody >/dev/null 2>&1 || { echo "  skip: no user nobody"; exit 0; }
mib=${PMIXCPP_LOG_FLOOD_MIB:-1024}

log_bytes() { cat "$PMIXCPP_CLUSTER_DIR"/log/slurmd.*.log 2>/dev/null | wc -c; }
before=$(log_bytes)
name="logflood$$"
f=$(mktemp); chmod 666 "$f"
trap 'rm -f "$f"' EXIT
( cd /tmp && runuser -u nobody -- env SLURM_CONF="$SLURM_CONF" timeout -k 5 900 \
    srun -J "$name" --mpi=pmixcpp -N1 -n4 "$prog" logflood "$mib" >"$f" 2>&1; echo "rc=$?" >>"$f" ) &
pid=$!
maxrss=0 jid=""
while kill -0 $pid 2>/dev/null; do
    [ -z "$jid" ] && jid=$(squeue -h -n "$name" -o %i 2>/dev/null | head -1)
    if [ -n "$jid" ]; then
        r=$(ps -eo rss=,args= | awk -v s="slurmstepd: [$jid.0]" 'index($0, s) { print $1 }' | sort -n | tail -1)
        [ -n "$r" ] && [ "$r" -gt "$maxrss" ] && maxrss=$r
    fi
    sleep 0.2
done
wait $pid
out=$(cat "$f")
sleep 0.5
grown=$(( $(log_bytes) - before ))
echo "$out" | grep -E '^(LOGFLOOD|FAIL)' | sed 's/^/    /'
echo "    slurmd logs grew by $grown bytes; slurmstepd max RSS $((maxrss / 1024)) MiB"
expect_eq "the step's status" "rc=0" "$(echo "$out" | grep '^rc=')"
expect_eq "every rank passed (3 fencing ranks, the flooder answered every time)" 4 "$(echo "$out" | grep -c '^RESULT-PASS rank')"
expect_match "the flood was sent" "^LOGFLOOD $((mib * 1024 * 1024)) bytes in [0-9]+ messages" "$out"
[ "$grown" -lt $((4 * 1024 * 1024)) ] && pass "the log stays bounded (grew by $grown bytes for $mib MiB sent)" ||
    fail "the log grew by $grown bytes"
[ "$maxrss" -gt 0 ] && [ "$maxrss" -lt $((100 * 1024)) ] && pass "slurmstepd stayed small ($((maxrss / 1024)) MiB)" ||
    fail "slurmstepd RSS $((maxrss / 1024)) MiB"
logs=$(slurmd_logs | grep -F "[$jid.0]")
expect_match "the server says how many messages it dropped" "mpi/pmixcpp: slurm\.$jid\.0: [0-9]+ log message\(s\) of [0-9]+ bytes dropped in [0-9]+ s" "$logs"
expect_match "the message after the flood's window was logged" "rank 0 logs \(pmix.log.gsys\): after the flood" "$logs"
forged=$(slurmd_logs | grep -c 'FORGED-BY-THE-JOB')
expect_eq "every forged text is inside the job's own escaped line" "$forged" \
    "$(slurmd_logs | grep -c 'rank 0 logs (pmix.log.gsys): innocent\\nslurmstepd: error: FORGED-BY-THE-JOB step ended\\r\\x1b\[2Kslurmd: FORGED-BY-THE-JOB\\n$')"
[ "$forged" -ge 1 ] && pass "the forged lines were logged ($forged), escaped" || fail "no forged line logged"
expect_no_match "no line of the log begins with the forged text" '^(\[[^]]*\] )*(\[[0-9.]+\] )?(slurmstepd|slurmd): (error: )?FORGED' "$(slurmd_logs)"
lines=$(echo "$logs" | grep -c 'rank 0 logs')
[ "$lines" -le 200 ] && pass "at most a few windows of the job's lines reached the log ($lines)" || fail "$lines lines of the job in the log"
t_done
