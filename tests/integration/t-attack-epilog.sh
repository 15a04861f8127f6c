# The EpilogSlurmctld (contrib/pmixcpp-epilog-slurmctld) runs as SlurmUser and ends the allocation
# jobs a finished job left behind. A job user names jobs so that a raw listing of its jobs holds
# forged lines (job names may contain newlines): "--user=<victim> pmixcpp-alloc.<J>.0.0" (which
# once made the epilog run `scancel --user=<victim>`) and "<victim's job id> pmixcpp-alloc.<J>.0.0".
# Then the user's job J ends. The victim's job must still be there, and the epilog must still end
# the user's real allocation job of J. The jobs run as nobody (attacker) and daemon (victim).
# Requires: root (to act as both users); users nobody and daemon; EpilogSlurmctld set by
# contrib/cluster.sh.
. "$(dirname "$0")/lib.sh"
basic="${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}/libexec/pmixcpp/tests/pmix_basic"
[ "$(id -u)" = 0 ] || { echo "  skip: needs root (two users)"; exit 0; }
id nobody >/dev/null 2>&1 && id daemon >/dev/null 2>&1 || { echo "  skip: no user nobody/daemon"; exit 0; }
grep -q '^EpilogSlurmctld=' "$SLURM_CONF" 2>/dev/null || { echo "  skip: no EpilogSlurmctld in $SLURM_CONF"; exit 0; }
as() { local u=$1; shift; (cd /tmp && runuser -u "$u" -- env SLURM_CONF="$SLURM_CONF" "$@"); }
nl='
'
held() {  # user name -> job id of a held batch job
    as "$1" sbatch --parsable --hold -J "$2" -t 5 -o /dev/null -e /dev/null --wrap 'sleep 300' 2>&1 | tail -1
}
jobs_made=()
trap 'for j in "${jobs_made[@]}"; do scancel "$j" 2>/dev/null; done' EXIT

victim=$(held daemon victim-job)
case $victim in ''|*[!0-9]*) fail "the victim's job was not submitted: $victim"; t_done; exit ;; esac
jobs_made+=("$victim")
ender=$(as nobody sbatch --parsable -J ender -t 5 -o /dev/null -e /dev/null --wrap 'sleep 3' 2>&1 | tail -1)
case $ender in ''|*[!0-9]*) fail "the attacker's job was not submitted: $ender"; t_done; exit ;; esac
jobs_made+=("$ender")

# The hostile names, each a job of the attacker, held so they stay queued.
h_user=$(held nobody "x$nl--user=daemon pmixcpp-alloc.$ender.0.0")
h_id=$(held nobody "x$nl$victim pmixcpp-alloc.$ender.0.0")
h_opt=$(held nobody "x$nl-u daemon pmixcpp-kept.$ender.0.1")
h_tail=$(held nobody "pmixcpp-alloc.$ender.0.2$nl")
real=$(held nobody "pmixcpp-alloc.$ender.0.3")
jobs_made+=("$h_user" "$h_id" "$h_opt" "$h_tail" "$real")
for j in "$h_user" "$h_id" "$h_opt" "$h_tail" "$real"; do
    case $j in ''|*[!0-9]*) fail "a job was not submitted: $j" ;; esac
done
expect_match "a job name may hold a newline (Slurm takes it)" "^x$" "$(squeue -h -j "$h_user" -o %j)"
echo "  victim $victim (daemon), ender $ender, hostile $h_user $h_id $h_opt $h_tail, real $real (nobody)"

# The attacker's job ends; slurmctld runs the epilog.
for i in $(seq 300); do
    [ -z "$(squeue -h -j "$real" -o %i 2>/dev/null)" ] && break
    sleep 0.1
done
sleep 1  # anything else the epilog would do, it has done by now
expect_eq "the epilog ended the user's real allocation job of the ended job" "" "$(squeue -h -j "$real" -o %i 2>/dev/null)"
expect_eq "the victim's job is still queued" "$victim daemon" "$(squeue -h -j "$victim" -o '%i %u' 2>/dev/null)"
expect_eq "daemon's jobs are all still there" 1 "$(squeue -h -u daemon -o %i 2>/dev/null | grep -c .)"
for j in "$h_user" "$h_id" "$h_opt" "$h_tail"; do
    expect_eq "the job with a forged name ($j) was not taken for an allocation job" "$j" "$(squeue -h -j "$j" -o %i 2>/dev/null)"
done

# The cluster still runs steps of the attacker.
out=$(as nobody timeout -k 5 60 srun --mpi=pmixcpp -N1 -n2 "$basic" 2>&1); rc=$?
expect_eq "a step of the same user runs afterwards" 0 "$rc"
t_done
