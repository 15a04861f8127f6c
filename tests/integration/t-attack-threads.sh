# srun's per-request threads are bounded: a job of user nobody on two nodes asks srun's session
# store 2 x 200 lookups at once, each waiting 6 s for a key nobody publishes (each holds a thread of
# srun while it waits; each node's slurmstepd lets 256 through). srun runs at most 256 of them at
# once and answers the rest PMIX_ERR_OUT_OF_RESOURCE at once; its thread count stays bounded, every
# lookup is answered (a few, on a loaded host, with the node side's own timeout), the step's fence
# passes, srun ends with its threads joined, and the next two-node step runs.
# Requires: user nobody; a cluster with >= 2 nodes.
. "$(dirname "$0")/lib.sh"
prog="${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}/libexec/pmixcpp/tests/pmix_attack"
[ -x "$prog" ] || { fail "$prog not installed"; t_done; exit; }
id nobody >/dev/null 2>&1 || { echo "  skip: no user nobody"; exit 0; }
f=$(mktemp); chmod 666 "$f"
trap 'rm -f "$f"' EXIT
( cd /tmp && runuser -u nobody -- env SLURM_CONF="$SLURM_CONF" timeout -k 5 120 \
    srun -J "threads$$" --mpi=pmixcpp -N2 --ntasks-per-node=1 "$prog" srunthreads 200 >"$f" 2>&1; echo "rc=$?" >>"$f" ) &
pid=$!
peak=0 srun_pid=""
while kill -0 $pid 2>/dev/null; do
    [ -z "$srun_pid" ] && srun_pid=$(pgrep -u nobody -o -f "^srun -J threads$$ ")
    if [ -n "$srun_pid" ]; then
        t=$(awk '/^Threads:/ { print $2 }' "/proc/$srun_pid/status" 2>/dev/null)
        [ -n "$t" ] && [ "$t" -gt "$peak" ] && peak=$t
    fi
    sleep 0.05
done
wait $pid
out=$(cat "$f")
echo "$out" | grep -E '^(SRUNTHREADS|FAIL)' | sed 's/^/    /'
echo "    srun's threads at most: $peak"
expect_eq "the step's status" "rc=0" "$(echo "$out" | grep '^rc=')"
expect_eq "both ranks passed (every lookup answered, then a fence)" 2 "$(echo "$out" | grep -c '^RESULT-PASS rank')"
refused=$(echo "$out" | sed -n 's/^SRUNTHREADS rank [0-9]*: [0-9]* asked, \([0-9]*\) refused.*/\1/p' | awk '{ s += $1 } END { print s + 0 }')
waited=$(echo "$out" | sed -n 's/^SRUNTHREADS .* refused (out of resource), \([0-9]*\) timed out.*/\1/p' | awk '{ s += $1 } END { print s + 0 }')
[ "${refused:-0}" -ge 1 ] && pass "srun refused what is over its 256 threads at once ($refused of 400)" ||
    fail "srun refused ${refused:-0} of 400"
[ "${waited:-0}" -le 256 ] && pass "at most 256 waited on srun's threads ($waited)" || fail "${waited:-0} lookups waited"
[ "$peak" -gt 0 ] && [ "$peak" -le 290 ] && pass "srun's thread count stayed bounded ($peak)" || fail "srun had $peak threads"
out=$(cd /tmp && runuser -u nobody -- env SLURM_CONF="$SLURM_CONF" timeout -k 5 120 srun --mpi=pmixcpp -N2 --ntasks-per-node=2 \
      "$PMIXCPP_PREFIX/libexec/pmixcpp/tests/pmix_multinode" 2 2>&1); rc=$?
expect_eq "a step of the same user runs afterwards" 0 "$rc"
t_done
