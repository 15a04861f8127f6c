# The spawn's process sets (docs/malleability.md) come from the step's environment
# (PMIXCPP_SPAWN_PARENT, PMIXCPP_SPAWN_PARENT_SIZE), which is the user's: a job of the
# unprivileged user nobody forges them. A parent in another job, a size beyond 65536, a size that
# is no number, or the step as its own parent define no set (slurmstepd logs why and goes on); a
# claim naming a step of the user's own job defines the two sets, which only name processes. The
# same for the running spawned steps a union names (PMIXCPP_SPAWN_PEERS): another job's step, sizes
# beyond 65536 in all, a size that is no number, the parent as a peer define no set; the user's
# own job's steps define the union with them.
# tests/programs/pmix_alloc.c "psets" lists the server's sets (PMIX_QUERY_PSET_NAMES,
# PMIX_QUERY_PSET_MEMBERSHIP).
# The grow asked through a spawned app's environment (PMIXCPP_SPAWN_GROW, for MPI_Comm_spawn's
# MPI_Info "env") is the user's too: nobody's malformed values (0, beyond 65536, negative, words,
# trailing junk, empty, 23 digits, two different values, with PMIX_HOST, beside the attribute) are
# each PMIX_ERR_BAD_PARAM before Slurm is asked; the job keeps its node and no set is defined
# (tests/programs/pmix_malleable.c "bad-env").
. "$(dirname "$0")/lib.sh"
prog="${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}/libexec/pmixcpp/tests/pmix_alloc"
mall="$PMIXCPP_PREFIX/libexec/pmixcpp/tests/pmix_malleable"
[ -x "$prog" ] || { fail "$prog not installed"; t_done; exit; }
id nobody >/dev/null 2>&1 || { echo "  skip: no user 'nobody'"; exit 0; }
work=$(mktemp -d /tmp/pmixcpp-mallatk.XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 777 "$work"

cat > "$work/job.sh" <<EOS
#!/bin/bash
run() { echo "CASE \$1"; PMIXCPP_SPAWN_PARENT=\$2 PMIXCPP_SPAWN_PARENT_SIZE=\$3 PMIXCPP_SPAWN_PEERS=\${4:-} srun --mpi=pmixcpp -n1 $prog psets; echo "RC \$1 \$?"; }
run other-job slurm.\$((SLURM_JOB_ID + 1000)).0:0 4
run oversize slurm.\$SLURM_JOB_ID.0:0 65537
run garbage slurm.\$SLURM_JOB_ID.0:0 4x
run huge slurm.\$SLURM_JOB_ID.0:0 99999999999999999999
run own-job slurm.\$SLURM_JOB_ID.0:0 3
run peers-other-job slurm.\$SLURM_JOB_ID.0:0 3 slurm.\$((SLURM_JOB_ID + 1000)).1:2
run peers-oversize slurm.\$SLURM_JOB_ID.0:0 3 slurm.\$SLURM_JOB_ID.1:40000,slurm.\$SLURM_JOB_ID.2:40000
run peers-garbage slurm.\$SLURM_JOB_ID.0:0 3 slurm.\$SLURM_JOB_ID.1:2x
run peers-parent slurm.\$SLURM_JOB_ID.0:0 3 slurm.\$SLURM_JOB_ID.0:3
run peers-own-job slurm.\$SLURM_JOB_ID.0:0 3 slurm.\$SLURM_JOB_ID.1:2
echo "CASE bad-env"
srun --mpi=pmixcpp -n1 $mall bad-env
echo "RC bad-env \$?"
echo "NUMNODES \$(scontrol show job \$SLURM_JOB_ID | sed -n 's/.* NumNodes=\([0-9]*\) .*/\1/p')"
echo "HELPERS \$(squeue -h -o '%j' | grep -c '^pmixcpp-')"
EOS
chmod 755 "$work/job.sh"
jid=$(cd "$work" && runuser -u nobody -- env SLURM_CONF="$SLURM_CONF" sbatch --parsable -N1 -t 5 -o "$work/out" "$work/job.sh")
[ -n "$jid" ] || { fail "sbatch as nobody"; t_done; exit; }
for _ in $(seq 120); do squeue -h -j "$jid" 2>/dev/null | grep -q . || break; sleep 1; done
out=$(cat "$work/out" 2>/dev/null)
echo "$out" | sed 's/^/    /'
# the sets one case's step defined
sets_of() { echo "$out" | awk -v c="$1" '/^CASE /{cur=$2} cur==c && /^PSET /{print $2, $3}' | grep '^pmixcpp://' | sort | tr '\n' ' ' | sed 's/ $//'; }
for c in other-job oversize garbage huge peers-other-job peers-oversize peers-garbage peers-parent; do
    expect_eq "$c: no set defined" "" "$(sets_of "$c")"
    expect_match "$c: the step ran to its end" "^RC $c 0\$" "$out"
done
own=$(echo "$out" | awk '/^CASE own-job/{f=1} f && /^PSET pmixcpp:\/\/union\//{print $2; exit}')
ns=${own#pmixcpp://union/}
expect_eq "own-job: the two sets, naming the claimed parent's 3 and its own 1" \
    "pmixcpp://spawned/$ns 1 pmixcpp://union/$ns 4" "$(sets_of own-job)"
expect_match "own-job: the step ran to its end" '^RC own-job 0$' "$out"
own=$(echo "$out" | awk '/^CASE peers-own-job/{f=1} f && /^PSET pmixcpp:\/\/union\//{print $2; exit}')
ns=${own#pmixcpp://union/}
expect_eq "peers-own-job: the union names the claimed parent's 3, the claimed peer's 2 and its own 1" \
    "pmixcpp://spawned/$ns 1 pmixcpp://union/$ns 6" "$(sets_of peers-own-job)"
for w in zero 70000 negative word trailing empty huge twice with-host with-attribute; do
    expect_match "bad-env: nobody's $w is PMIX_ERR_BAD_PARAM" "^BAD-ENV $w PMIX_ERR_BAD_PARAM\$" "$out"
done
expect_match "bad-env: no set defined by them" '^PSETS 0$' "$out"
expect_match "bad-env: the job still has its 1 node" '^NUMNODES 1$' "$out"
expect_match "bad-env: nothing left in Slurm" '^HELPERS 0$' "$out"
t_done
