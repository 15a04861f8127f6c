# A job user attacks the root-owned server through the file system, the settings and its own
# processes; the job runs as user nobody, the targets belong to root. Each attack checks that the
# target is untouched and that the step still does its work.
. "$(dirname "$0")/lib.sh"
prog="${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}/libexec/pmixcpp/tests/pmix_attack_files"
basic="$PMIXCPP_PREFIX/libexec/pmixcpp/tests/pmix_basic"
[ -x "$prog" ] || { fail "$prog not installed"; t_done; exit; }
id nobody >/dev/null 2>&1 || { echo "  skip: no user 'nobody'"; exit 0; }
as_nobody() { runuser -u nobody -- env SLURM_CONF="$SLURM_CONF" "$@"; }

# Root's things the job must not reach: a file (as /etc/shadow would be) and a directory.
victim=$(mktemp /var/tmp/pmixcpp-victim.XXXXXX); echo precious > "$victim"; chmod 600 "$victim"
vdir=$(mktemp -d /var/tmp/pmixcpp-victimdir.XXXXXX); echo precious > "$vdir/file"; chmod 755 "$vdir"
fingerprint() { stat -c '%U:%G %a %s %Y' "$1"; md5sum < "$1"; }
before=$(fingerprint "$victim")
evil=$(mktemp -d /tmp/pmixcpp-evil.XXXXXX); chmod 777 "$evil"
report=$(mktemp -d /tmp/pmixcpp-report.XXXXXX); chmod 777 "$report"
trap 'rm -rf "$victim" "$vdir" "$evil" "$report"' EXIT

# 1. Links planted for every name the server writes, before and during collecting fences, in the
#    user's step directory and (attempted) in the step root; a clean-up registration outside the
#    step directory (absolute, through '..', through a planted link).
script='
root=$(dirname "$PMIXCPP_STEP_DIR")
names="jobdata server.sock modex.1 modex.1.tmp modex.2 modex.2.tmp modex.3 modex.3.tmp user rank.$PMIX_RANK"
plant() { for n in $names; do ln -sfT "'"$victim"'" "$PMIXCPP_STEP_DIR/$n" 2>/dev/null; ln -sT "'"$victim"'" "$root/$n" 2>/dev/null && echo "PLANTED-IN-ROOT $n"; done; }
plant
touch "$root/x" 2>/dev/null && echo "WROTE-IN-ROOT"
[ -L "$PMIXCPP_STEP_DIR/via" ] || ln -s "'"$vdir"'" "$PMIXCPP_STEP_DIR/via" 2>/dev/null
stat -c "LAYOUT root %U %a" "$root"; stat -c "LAYOUT user %U %a" "$PMIXCPP_STEP_DIR"; stat -c "LAYOUT jobdata %U %a" "$root/jobdata"
( for i in $(seq 40); do plant; sleep 0.05; done ) &
"'"$prog"'" cleanup "'"$vdir"'" "$PMIXCPP_STEP_DIR/../../../../../../..'"$vdir"'" "$PMIXCPP_STEP_DIR/via" "$PMIXCPP_STEP_DIR/via/file" "$root"
rc=$?
wait
echo "STEPDIR $SLURMD_NODENAME $root" >> "'"$report"'/dirs"
exit $rc'
out=$(cd /tmp && as_nobody timeout -k 5 120 srun --mpi=pmixcpp -N2 --ntasks-per-node=2 bash -c "$script" 2>&1); rc=$?
expect_eq "the attacked step still completes" 0 "$rc"
expect_eq "every rank's collecting fence worked" 4 "$(echo "$out" | grep -c 'RESULT-PASS')"
expect_no_match "nothing could be put in the root-owned step root" 'PLANTED-IN-ROOT|WROTE-IN-ROOT' "$out"
expect_eq "the step root is root's, 0711" 4 "$(echo "$out" | grep -c 'LAYOUT root root 711')"
expect_eq "the user's step directory is the user's, 0700" 4 "$(echo "$out" | grep -c 'LAYOUT user nobody 700')"
expect_eq "job data is the user's, read-only" 4 "$(echo "$out" | grep -c 'LAYOUT jobdata nobody 400')"
expect_eq "the root-owned file is untouched" "$before" "$(fingerprint "$victim")"
expect_match "clean-up of an absolute outside path refused" "CLEANUP $vdir PMIX_ERR_NO_PERMISSIONS" "$out"
expect_match "clean-up through '..' refused" "CLEANUP .*/\.\./.*$vdir PMIX_ERR_NO_PERMISSIONS" "$out"
expect_match "clean-up of the step root refused" "CLEANUP /.*/pmixcpp\.[0-9]+\.[0-9]+\.[A-Za-z0-9]{6} PMIX_ERR_NO_PERMISSIONS" "$out"
expect_eq "root's directory behind a planted link survives the clean-up" precious "$(cat "$vdir/file" 2>&1)"
for d in $(awk '{print $3}' "$report/dirs" 2>/dev/null); do
    wait_gone "$d" 20 && pass "step root $d removed at the end" || fail "step root $d left behind"
done
names=$(awk '{print $3}' "$report/dirs" | sed 's/.*\.//' | sort -u | wc -l)
expect_eq "step roots have unpredictable names (one per node)" 2 "$names"

# 2. Settings that steer root: refused from the user's environment, by srun and by slurmstepd.
out=$(cd /tmp && as_nobody env SLURM_PMIXCPP_TMPDIRBASE="$evil" timeout -k 5 60 srun --mpi=pmixcpp -N1 -n1 true 2>&1); rc=$?
[ "$rc" -ne 0 ] && pass "srun refuses SLURM_PMIXCPP_TMPDIRBASE (rc=$rc)" || fail "srun accepted SLURM_PMIXCPP_TMPDIRBASE"
expect_match "srun names the key" 'SLURM_PMIXCPP_TMPDIRBASE refused: PMIxCppTmpDirBase' "$out"
out=$(cd /tmp && as_nobody timeout -k 5 60 srun --mpi=pmixcpp --export=ALL,SLURM_PMIXCPP_TMPDIRBASE="$evil" -N1 -n1 true 2>&1); rc=$?
[ "$rc" -ne 0 ] && pass "slurmstepd refuses an exported SLURM_PMIXCPP_TMPDIRBASE (rc=$rc)" || fail "the step ran with the user's TmpDirBase"
expect_match "the refusal reaches srun, naming the key" 'step setup failed: .*SLURM_PMIXCPP_TMPDIRBASE refused' "$out"
expect_eq "nothing was created in the user's directory" "" "$(ls -A "$evil")"

# 3. A process of the same user, outside the step, with a task's token and address: refused.
info="$report/env"
(cd /tmp && as_nobody timeout 60 srun --mpi=pmixcpp -N1 -n1 bash -c \
    'echo "$PMIX_NAMESPACE $PMIXCPP_SERVER_URI $PMIXCPP_CLIENT_TOKEN" > '"$info"'; sleep 8' >/dev/null 2>&1 &)
for i in $(seq 150); do [ -s "$info" ] && break; sleep 0.1; done
read -r ns uri token < "$info"
[ -n "$token" ] && pass "got a task's token" || fail "the step did not start"
out=$(cd /tmp && as_nobody env PMIX_NAMESPACE="$ns" PMIX_RANK=0 PMIXCPP_SERVER_URI="$uri" PMIXCPP_CLIENT_TOKEN="$token" \
      timeout 20 "$basic" 2>&1); rc=$?
[ "$rc" -ne 0 ] && pass "an impostor of the same user cannot connect (rc=$rc)" || fail "an impostor with the token was accepted"
sleep 0.5
expect_match "the server logged the refusal" "mpi/pmixcpp: $ns: refusing a client \(pid [0-9]+, uid [0-9]+\): not a process of this step" "$(slurmd_logs)"

# 4. exit() without PMIx_Finalize: the process ends with its own status, no abort.
out=$(cd /tmp && as_nobody timeout -k 5 60 srun --mpi=pmixcpp -N2 --ntasks-per-node=2 "$prog" exit 3 2>&1); rc=$?
expect_eq "srun reports rank 1's exit code" 3 "$rc"
expect_no_match "no abort in the client library" 'terminate called|Aborted|core dumped|signal 6' "$out"
expect_eq "the other ranks finished normally" 3 "$(echo "$out" | grep -c 'RESULT-PASS')"

# 5. A directory the job moves into its step directory, holding another user's private subtree
#    (daemon's 0700 directory with a file in it, and a file of daemon's): the end of the step and a
#    clean-up registration of that subtree keep what daemon owns; the job's own file goes.
if id daemon >/dev/null 2>&1; then
    movein=$(mktemp -d /tmp/pmixcpp-movein.XXXXXX)
    mkdir -p "$movein/theirs/deeper"
    echo precious > "$movein/theirs/deeper/secret"; echo precious > "$movein/their-file"; echo mine > "$movein/mine"
    chown -R daemon:daemon "$movein/theirs" "$movein/their-file"; chmod 700 "$movein/theirs"; chmod 600 "$movein/their-file"
    chown nobody "$movein" "$movein/mine"; chmod 755 "$movein"
    theirs_before=$(stat -c '%U %a' "$movein/theirs"; cat "$movein/theirs/deeper/secret")
    script='mv "'"$movein"'" "$PMIXCPP_STEP_DIR/moved" && echo "MOVED $PMIXCPP_STEP_DIR"
exec "'"$prog"'" cleanup "$PMIXCPP_STEP_DIR/moved/theirs" "$PMIXCPP_STEP_DIR/moved"'
    out=$(cd /tmp && as_nobody timeout -k 5 60 srun --mpi=pmixcpp -N1 -n1 bash -c "$script" 2>&1); rc=$?
    expect_eq "the step with a moved-in directory completes" 0 "$rc"
    expect_match "the job registered the other user's directory for clean-up" "CLEANUP .*/moved/theirs PMIX_SUCCESS" "$out"
    moved="$(echo "$out" | sed -n 's/^MOVED //p')/moved"
    [ "$moved" != /moved ] && pass "the job moved the directory in ($moved)" || fail "the job could not move the directory in: $out"
    for i in $(seq 100); do [ -e "$moved/mine" ] || break; sleep 0.1; done
    expect_eq "the job's own file in it was removed at the end" "" "$(ls "$moved/mine" 2>/dev/null)"
    expect_eq "the other user's private subtree is kept" "$theirs_before" \
        "$(stat -c '%U %a' "$moved/theirs" 2>&1; cat "$moved/theirs/deeper/secret" 2>&1)"
    expect_eq "the other user's file is kept" "daemon precious" "$(stat -c %U "$moved/their-file" 2>&1) $(cat "$moved/their-file" 2>&1)"
    expect_match "slurmstepd says what it kept" "step directory pmixcpp\.[0-9]+\.[0-9]+\.[A-Za-z0-9]{6} not removed: kept 2 entries .* not owned by uid $(id -u nobody)" "$(slurmd_logs)"
    rm -rf "$(dirname "$(dirname "$moved")")"
else
    echo "  skip: no user daemon (moved-in directory)"
fi

# 6. The cluster is healthy: nothing stuck, the next step works.
for i in $(seq 50); do [ -z "$(squeue -h -t R 2>/dev/null)" ] && break; sleep 0.2; done
run_srun 60 --mpi=pmixcpp -N1 -n4 "$basic"
expect_eq "a normal step runs afterwards" 0 "$rc"
t_done
