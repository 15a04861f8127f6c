# Root's UCX never takes the user's choices: a job user (nobody) asks for shared-memory transports
# and devices through its environment (SLURM_PMIXCPP_UCXTLS / _UCXDEVICES, directly and through
# --export): refused by srun and by slurmstepd, naming the key. Then the administrator's mpi.conf
# lists shared-memory transports itself (PMIxCppUcxTls=posix,sysv,cma,tcp): a two-node UCX step of
# nobody runs, and no slurmstepd of it maps a shared-memory segment (SYSV or /dev/shm), whatever
# was configured.
# Requires: root (the users); user nobody; UCX installed (else the UCX part is skipped).
. "$(dirname "$0")/lib.sh"
prog="${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}/libexec/pmixcpp/tests/pmix_multinode"
[ -x "$prog" ] || { fail "$prog not installed"; t_done; exit; }
id nobody >/dev/null 2>&1 || { echo "  skip: no user nobody"; exit 0; }
as_nobody() { (cd /tmp && runuser -u nobody -- env SLURM_CONF="$SLURM_CONF" "$@"); }

# 1. The user's environment: refused, before launch (srun) and at step start (slurmstepd).
for var in SLURM_PMIXCPP_UCXTLS=posix,sysv,self SLURM_PMIXCPP_UCXDEVICES=lo; do
    name=${var%%=*}
    out=$(as_nobody env "$var" SLURM_PMIXCPP_TRANSPORT=ucx timeout -k 5 60 srun --mpi=pmixcpp -N2 --ntasks-per-node=1 true 2>&1); rc=$?
    [ "$rc" -ne 0 ] && pass "srun refuses $name (rc=$rc)" || fail "srun accepted $name"
    expect_match "srun names the key" "$name refused: PMIxCppUcx(Tls|Devices) decides what root's UCX transport opens" "$out"
    out=$(as_nobody timeout -k 5 60 srun --mpi=pmixcpp --export=ALL,"$var",SLURM_PMIXCPP_TRANSPORT=ucx -N2 --ntasks-per-node=1 true 2>&1); rc=$?
    [ "$rc" -ne 0 ] && pass "slurmstepd refuses an exported $name (rc=$rc)" || fail "the step ran with the user's $name"
    expect_match "the refusal reaches srun, naming the key" "step setup failed: .*$name refused" "$out"
done

# 2. The administrator asks for shared memory: root's UCX still opens none.
command -v ucx_info >/dev/null 2>&1 || { echo "  skip: UCX not installed"; t_done; exit; }
cluster_restart_with "PMIxCppUcxTls=posix,sysv,cma,tcp
PMIxCppDebug=1" || fail "cluster restart with PMIxCppUcxTls"
eval "$("$PMIXCPP_SRCDIR/contrib/cluster.sh" env)"
flag=$(mktemp -u /tmp/pmixcpp-ucx-go.XXXXXX)
outf=$(mktemp); chmod 666 "$outf"
trap 'rm -f "$flag" "$outf"' EXIT
(as_nobody env SLURM_PMIXCPP_TRANSPORT=ucx timeout -k 5 120 srun --mpi=pmixcpp -J "ucx-$$" -N2 --ntasks-per-node=2 \
    bash -c "for i in \$(seq 300); do [ -e $flag ] && break; sleep 0.1; done; exec $prog 2" > "$outf" 2>&1; echo "rc=$?" >> "$outf") &
launcher=$!
pids=""
for i in $(seq 200); do
    job=$(squeue -h -n "ucx-$$" -o %i 2>/dev/null | head -1)
    [ -n "$job" ] && pids=$(pgrep -f "^slurmstepd: \[$job\.0\]")
    [ "$(echo "$pids" | grep -c .)" -ge 2 ] && break
    sleep 0.1
done
[ "$(echo "$pids" | grep -c .)" -ge 2 ] && pass "the UCX step runs on two slurmstepds ($(echo $pids))" || fail "no two slurmstepds of job '$job'"
touch "$flag"
shm=""
while kill -0 "$launcher" 2>/dev/null; do
    for p in $pids; do
        shm+=$(grep -E 'SYSV|/dev/shm/|ucx_posix|ucx_shm' "/proc/$p/maps" 2>/dev/null | sed "s/^/$p: /")
    done
    sleep 0.1
done
wait "$launcher"
out=$(cat "$outf")
expect_eq "the step passes (UCX over TCP)" "rc=0" "$(echo "$out" | grep '^rc=')"
expect_eq "all 4 ranks passed their fences" 4 "$(echo "$out" | grep -c '^RESULT-PASS rank')"
expect_eq "no slurmstepd of the step mapped a shared-memory segment" "" "$shm"
expect_no_match "the step did not fall back to TCP" "UCX node transport unavailable" "$(slurmd_logs | grep -F "[$job.0]")"

# 3. Shared memory only: root's UCX has nothing left; the step says why and runs over TCP.
cluster_restart_with "PMIxCppUcxTls=posix,sysv
PMIxCppDebug=1" || fail "cluster restart with PMIxCppUcxTls=posix,sysv"
eval "$("$PMIXCPP_SRCDIR/contrib/cluster.sh" env)"
out=$(as_nobody env SLURM_PMIXCPP_TRANSPORT=ucx timeout -k 5 60 srun --mpi=pmixcpp -N2 --ntasks-per-node=1 "$prog" 2 2>&1); rc=$?
sleep 0.5
expect_match "slurmstepd says shared memory is never used" "UCX node transport unavailable \(ucx transport: PMIxCppUcxTls=posix,sysv leaves root's UCX no transport.*\); using TCP" "$(slurmd_logs)"
expect_eq "the step runs over TCP instead" 0 "$rc"
cluster_restart_with "" || fail "cluster restart with an empty mpi.conf"
t_done
