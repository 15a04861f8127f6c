# The native listener (OpenPMIx's own clients over TCP on 127.0.0.1) against another user: a job
# of the unprivileged user nobody opens it (SLURM_PMIXCPP_CLIENTLIB=native); a process of the user
# daemon reads the port (any local user can find a listening port) and sends a well-formed
# OpenPMIx handshake for rank 0 of the step, its native credential claiming nobody's uid. The
# kernel names daemon as the socket's owner: the connection is closed unanswered, with one log
# line. A process of nobody itself that is not part of the step (started outside it) tries the same:
# closed unanswered, "not a process of this step". The real rank 0 then connects and the job completes.
# Then hostile group, query and log requests of ranks of a step of nobody's (see the second job).
# Requires: make install, mpicc, cc and the system's OpenPMIx (libpmix-dev), python3, the users
# nobody and daemon.
. "$(dirname "$0")/lib.sh"
: "${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}"
id nobody >/dev/null 2>&1 && id daemon >/dev/null 2>&1 || { echo "  skip: users nobody and daemon needed"; exit 0; }
mpi_build mpi_native || { t_done; exit; }
here=$(cd "$(dirname "$0")" && pwd)
ours_dir="$PMIXCPP_PREFIX/lib/pmixcpp"
shared=$(mktemp -d /tmp/pmixcpp-attack-native.XXXXXX)
chmod 1777 "$shared"
cp "$here/attack_native.py" "$shared/"
chmod 755 "$shared/attack_native.py"

# The job: rank 0 publishes where the server listens, waits for the attack to end (30 s at most),
# then every rank runs MPI on OpenPMIx's library.
cat >"$shared/job.sh" <<JOB
#!/bin/sh
if [ "\$SLURM_PROCID" = 0 ]; then
    echo "\${PMIX_SERVER_URI41##*:} \$PMIX_NAMESPACE \$(id -u) \$(id -g)" >"$shared/uri.tmp"
    mv "$shared/uri.tmp" "$shared/uri"
    i=0; while [ ! -e "$shared/attacked" ] && [ \$i -lt 300 ]; do sleep 0.1; i=\$((i + 1)); done
fi
exec "$work/mpi_native" allreduce
JOB
chmod 755 "$shared/job.sh"
clean_ldp=$(printf '%s' "${LD_LIBRARY_PATH:-}" | tr ':' '\n' | grep -vxF "$ours_dir" | paste -sd: -)
f="$shared/out"
( cd /tmp && runuser -u nobody -- env SLURM_CONF="$SLURM_CONF" LD_LIBRARY_PATH="$clean_ldp" \
    SLURM_PMIXCPP_CLIENTLIB=native OMPI_MCA_btl=self,vader,tcp timeout -k 5 120 \
    srun -J "attacknative$$" --mpi=pmixcpp -N1 -n2 "$shared/job.sh" >"$f" 2>&1; echo "rc=$?" >>"$f" ) &
job=$!
for _ in $(seq 600); do [ -e "$shared/uri" ] && break; sleep 0.1; done
if [ -e "$shared/uri" ]; then
    read -r port nspace juid jgid <"$shared/uri"
    attack=$(cd /tmp && runuser -u daemon -- python3 "$shared/attack_native.py" "$port" "$nspace" 0 "$juid" "$jgid" 2>&1)
    expect_eq "another user's handshake as rank 0 of the step: closed unanswered" REFUSED-SILENTLY "$attack"
    attack=$(cd /tmp && runuser -u nobody -- python3 "$shared/attack_native.py" "$port" "$nspace" 0 "$juid" "$jgid" 2>&1)
    expect_eq "the job user's process outside the step, as rank 0: closed unanswered" REFUSED-SILENTLY "$attack"
else
    fail "the job never published its native listener's port"
fi
touch "$shared/attacked"
wait $job
out=$(cat "$f")
rc=$(echo "$out" | sed -n 's/^rc=//p')
expect_eq "the job completes after the attack: srun status" 0 "$rc"
expect_match "the job's real ranks connected and ran" '^MPI-NATIVE-OK allreduce 2$' "$out"
[ "$rc" = 0 ] || echo "$out" | head -20 | sed 's/^/    /'
sleep 1
daemon_uid=$(id -u daemon)
logs=$(slurmd_logs | grep -F "native listener")
expect_match "the refusal was logged, naming the uid" "refused a connection from local uid $daemon_uid .*uid $daemon_uid is not the job's user" "$logs"
expect_eq "one log line for the refusal" 1 "$(echo "$logs" | grep -F "$nspace" | grep -c "local uid $daemon_uid")"
nobody_uid=$(id -u nobody)
expect_match "the outsider of the job's own user was refused" "refused a connection from local uid $nobody_uid .*pid [0-9]+ is not a process of this step" "$logs"
rm -rf "$shared"

# Hostile requests of ranks of the step itself (the job's user): in a job of 4 on one node, ranks 0
# and 1 are an honest OpenPMIx client (tests/programs/native_group_honest.c, the system's
# OpenPMIx) that constructs the group "honest" and keeps it through the attack; ranks 2 and 3 run
# attack_native_msgs.py, rank 2 speaking OpenPMIx 3.2's fixed-width integers, rank 3 4.2's
# varints: truncated QUERY, LOG, GROUP_CONSTRUCT and GROUP_DESTRUCT requests, counts over the
# caps, wrong data types, destructs of groups they are not in and constructs taking the names of
# others' groups, 4097 GROUP_CONSTRUCTs (the cap is 4096 per connection), connections that leave
# their groups behind until the node's cap (65536), queries of huge keys and of answers that would
# not fit, oversized log messages. Every case gets an error status or
# the close of that connection (the rank connects again); the honest ranks' group, fence and Get
# work afterwards; slurmstepd's memory stays bounded; the step ends normally.
shared=$(mktemp -d /tmp/pmixcpp-attack-native.XXXXXX)
chmod 1777 "$shared"
cp "$here/attack_native_msgs.py" "$shared/"
chmod 755 "$shared/attack_native_msgs.py"
progs="$PMIXCPP_PREFIX/libexec/pmixcpp/tests"
[ -f "$progs/native_group_honest.c" ] || progs="$PMIXCPP_SRCDIR/tests/programs"
# shellcheck disable=SC2046
if cc -O1 -o "$shared/native_group_honest" "$progs/native_group_honest.c" \
        $(pkg-config --cflags --libs pmix) 2>"$shared/cc.err"; then
    pass "cc native_group_honest (the system's OpenPMIx)"
else
    fail "cc native_group_honest: $(cat "$shared/cc.err")"
fi
chmod 755 "$shared/native_group_honest"
cat >"$shared/job.sh" <<JOB
#!/bin/sh
case "\$SLURM_PROCID" in
    0|1) exec "$shared/native_group_honest" "$shared" ;;
    2) exec python3 "$shared/attack_native_msgs.py" fixed "$shared" ;;
    *) exec python3 "$shared/attack_native_msgs.py" flex "$shared" ;;
esac
JOB
chmod 755 "$shared/job.sh"
f="$shared/out"
t0=$SECONDS
( cd /tmp && runuser -u nobody -- env SLURM_CONF="$SLURM_CONF" LD_LIBRARY_PATH="$clean_ldp" \
    SLURM_PMIXCPP_CLIENTLIB=native timeout -k 5 300 \
    srun -J "attacknmsg$$" --mpi=pmixcpp -N1 -n4 "$shared/job.sh" >"$f" 2>&1; echo "rc=$?" >>"$f" ) &
job=$!
for _ in $(seq 2400); do
    [ -e "$shared/done.fixed" ] && [ -e "$shared/done.flex" ] && break
    kill -0 $job 2>/dev/null || break
    sleep 0.1
done
touch "$shared/attacked"
wait $job
out=$(cat "$f")
echo "    (the hostile job took $((SECONDS - t0)) s)"
echo "$out" | grep -E '^(CASE|FLOOD|NODECAP|RSS|TIME|EVENTS|HONEST|ATTACKER)' | sed 's/^/    /'
rc=$(echo "$out" | sed -n 's/^rc=//p')
expect_eq "hostile job: srun status" 0 "$rc"
[ "$rc" = 0 ] || echo "$out" | grep -vE '^(CASE|FLOOD|RSS|TIME|EVENTS|HONEST)' | head -30 | sed 's/^/    /'
for fl in fixed flex; do
    expect_match "$fl integers: every hostile case answered as the rules say" "^ATTACKER $fl done: [0-9]+ ok, 0 unexpected\$" "$out"
    expect_eq "$fl integers: cases that went otherwise" "" "$(echo "$out" | grep "^CASE $fl .*UNEXPECTED")"
    expect_match "$fl integers: the 4097th group construct refused at the cap" "^CASE $fl group flood: the 4097th is refused at the cap: status -29 -> ok\$" "$out"
done
expect_match "the honest ranks kept their group through the attack" '^HONEST 0 membership of honest after the attack: status 0, 2 members \(0 1\)$' "$out"
expect_eq "the honest ranks: group, fence and Get after the attack" 2 "$(echo "$out" | grep -c '^HONEST-OK [01]$')"
sleep 1
logs=$(slurmd_logs)
expect_match "a malformed request closes its connection with a log line naming it" \
    'rank 2 \(pid [0-9]+, OpenPMIx client\) lost its connection without finalizing: malformed OpenPMIx group, query or log request' "$logs"
expect_match "an oversized message closes its connection with a log line" \
    'rank 3 \(pid [0-9]+, OpenPMIx client\) lost its connection without finalizing: malformed OpenPMIx message: message of [0-9]+ bytes exceeds' "$logs"
expect_no_match "slurmstepd did not crash" '(slurmstepd.*(Segmentation|Aborted|core dumped|terminate called)|pmixcpp: .*(caught|uncaught))' "$logs"
rm -rf "$shared"
t_done
