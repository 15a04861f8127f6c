# The native listener (OpenPMIx's own clients over TCP on 127.0.0.1) against another user: a job
# of the unprivileged user nobody opens it (SLURM_PMIXCPP_CLIENTLIB=native); a process of the user
# daemon reads the port (any local user can find a listening port) and sends a well-formed
# OpenPMIx handshake for rank 0 of the step, its native credential claiming nobody's uid. The
# kernel names daemon as the socket's owner: the connection is closed unanswered, with one log
# line. A process of nobody itself that is not part of the step (started outside it) tries the same:
# closed unanswered, "not a process of this step". The real rank 0 then connects and the job completes.
# Requires: make install, mpicc, python3, the users nobody and daemon.
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
t_done
