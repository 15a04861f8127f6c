# The server of a step accepts only the job's user: a process of another user
# (here root, with the right token and namespace) is refused and logged; the
# step directory is private to the user. Jobs run as an unprivileged user.
. "$(dirname "$0")/lib.sh"
prog="${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}/libexec/pmixcpp/tests/pmix_basic"
[ -x "$prog" ] || { fail "$prog not installed"; t_done; exit; }
id nobody >/dev/null 2>&1 || { echo "  skip: no user 'nobody'"; exit 0; }
as_nobody() { runuser -u nobody -- env SLURM_CONF="$SLURM_CONF" "$@"; }

# 1. A real PMIx program runs for an unprivileged user.
out=$(cd /tmp && as_nobody timeout 60 srun --mpi=pmixcpp -N1 -n4 "$prog" 2>&1); rc=$?
expect_eq "pmix_basic as user nobody" 0 "$rc"
expect_eq "every rank passed as nobody" 4 "$(echo "$out" | grep -c 'RESULT-PASS')"

# 2. Root, with nobody's step token, is refused by the server.
info=$(mktemp /tmp/pmixcpp-sec.XXXXXX); chmod 666 "$info"
(cd /tmp && as_nobody timeout 60 srun --mpi=pmixcpp -N1 -n1 bash -c \
    'echo "$PMIX_NAMESPACE $PMIXCPP_SERVER_URI $PMIXCPP_CLIENT_TOKEN $PMIXCPP_STEP_DIR" > '"$info"'; sleep 6' >/dev/null 2>&1 &)
for i in $(seq 100); do [ -s "$info" ] && break; sleep 0.1; done
read -r ns uri token dir < "$info"
[ -n "$token" ] && pass "got the step's address" || fail "the step did not start"
expect_eq "step directory is private to the user" "700 nobody" "$(stat -c '%a %U' "$dir" 2>&1)"
if runuser -u daemon -- ls "$dir" >/dev/null 2>&1; then fail "another user can list the step directory"; else pass "another user cannot enter the step directory"; fi
out=$(PMIX_NAMESPACE=$ns PMIX_RANK=0 PMIXCPP_SERVER_URI=$uri PMIXCPP_CLIENT_TOKEN=$token PMIXCPP_DEBUG=1 timeout 20 "$prog" 2>&1); rc=$?
[ "$rc" -ne 0 ] && pass "root's PMIx_Init against nobody's server fails (rc=$rc)" || fail "root was accepted by nobody's server"
sleep 0.5
expect_match "the server logged the refusal" "mpi/pmixcpp: $ns: refusing a client \(pid [0-9]+, uid 0\): not the job's user" "$(slurmd_logs)"
rm -f "$info"
wait_gone "$dir" 20 || true
t_done
