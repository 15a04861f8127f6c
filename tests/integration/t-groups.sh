# PMIx groups and process sets (tests/programs/pmix_groups.c) at -N2 -n4 and -N4 -n16: construct
# with a context id and PMIX_GROUP_INFO read back with qualified Gets, a fence over the group's
# name, disjoint groups built at once get different context ids, PMIX_QUERY_NUM_PSETS /
# PSET_NAMES / PSET_MEMBERSHIP (also of mpi://WORLD, mpi://SELF and mpix://SHARED, in any case after
# the scheme) and PMIX_PROCESS_SET_DEFINE, invite/join (accept and decline, with
# PMIX_GROUP_CONSTRUCT_COMPLETE), leave (PMIX_GROUP_LEFT), destruct, the errors of bad calls; a
# member dying while the others construct (PMIX_ERR_PROC_ABORTED at once, not a hang; with
# PMIX_GROUP_NOTIFY_TERMINATION the survivors' group and PMIX_GROUP_MEMBER_FAILED); a group of
# the ranks of two steps of one job (context id, the other step's group info, a fence over the
# group, destruct); a spawned step of two apps has one process set per app; bootstrap mode
# (leaders that know only their number and the members they name, followers with no procs,
# refusals and a timeout). Prints the construct time of a group of every rank next to an empty
# fence over the same ranks at 2, 4 and (with 8 nodes) 8 nodes over TCP (medians; the machine is shared: figures, not assertions).
# Requires: make install; a cluster with >= 4 nodes (8 for the 8-node figure).
. "$(dirname "$0")/lib.sh"
prog="${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}/libexec/pmixcpp/tests/pmix_groups"
[ -x "$prog" ] || { fail "$prog not installed"; t_done; exit; }

run_srun 120 --mpi=pmixcpp -N2 -n4 --ntasks-per-node=2 "$prog"
expect_eq "-N2 -n4: exit status" 0 "$rc"
expect_eq "-N2 -n4: all 4 ranks passed" 4 "$(echo "$out" | grep -c '^RESULT-PASS rank')"
expect_no_match "-N2 -n4: no failed check" '^FAIL ' "$out"
echo "$out" | grep -E '^FAIL' | sed 's/^/    /'
expect_eq "-N2 -n4: PMIX_QUERY_PSET_MEMBERSHIP of the six spellings of the MPI-4 sets, at every rank" 24 \
    "$(echo "$out" | grep -c '^PASS rank [0-9]*: PMIX_QUERY_PSET_MEMBERSHIP of mpix\{0,1\}://[A-Za-z]*: ')"

run_srun 180 --mpi=pmixcpp -N4 -n16 --ntasks-per-node=4 "$prog"
expect_eq "-N4 -n16: exit status" 0 "$rc"
expect_eq "-N4 -n16: all 16 ranks passed" 16 "$(echo "$out" | grep -c '^RESULT-PASS rank')"
expect_no_match "-N4 -n16: no failed check" '^FAIL ' "$out"
echo "$out" | grep -E '^FAIL' | sed 's/^/    /'

# A member dies during construction: the others' construct fails at once (srun would hit its
# limit if it hung), then a construct that tolerates the loss completes with the survivors.
for shape in "2 4 2" "4 16 4"; do
    set -- $shape
    run_srun 120 --mpi=pmixcpp -N"$1" -n"$2" --ntasks-per-node="$3" "$prog" die
    expect_eq "-N$1 -n$2 die: the $(($2 - 1)) survivors passed" $(($2 - 1)) "$(echo "$out" | grep -c '^RESULT-PASS rank')"
    expect_no_match "-N$1 -n$2 die: no failed check" '^FAIL ' "$out"
    echo "$out" | grep -E '^FAIL|dead member' | head -3 | sed 's/^/    /'
done

# Bootstrap mode: the members learn the membership from the leaders (PMIX_GROUP_BOOTSTRAP,
# PMIX_GROUP_ADD_MEMBERS); every member of a group gets the same context id and membership.
for shape in "2 4 2" "4 16 4"; do
    set -- $shape
    run_srun 120 --mpi=pmixcpp -N"$1" -n"$2" --ntasks-per-node="$3" "$prog" bootstrap
    expect_eq "-N$1 -n$2 bootstrap: exit status" 0 "$rc"
    expect_eq "-N$1 -n$2 bootstrap: all $2 ranks passed" "$2" "$(echo "$out" | grep -c '^RESULT-PASS rank')"
    expect_no_match "-N$1 -n$2 bootstrap: no failed check" '^FAIL ' "$out"
    expect_eq "-N$1 -n$2 bootstrap: g.boot has $2 members on every rank" "$2" "$(echo "$out" | grep -c "^BOOT rank [0-9]* cid [1-9][0-9]* members $2\$")"
    expect_eq "-N$1 -n$2 bootstrap: one context id for g.boot" 1 "$(echo "$out" | awk '/^BOOT rank/ && NF == 7 { print $5 }' | sort -u | wc -l)"
    expect_eq "-N$1 -n$2 bootstrap: the pair has 2 members and one context id" "1 2" \
        "$(echo "$out" | awk '/^BOOT rank.* pair$/ { c[$5]++; n++ } END { print length(c), n }')"
    expect_eq "-N$1 -n$2 bootstrap: g.add has $2 members on every rank" "$2" "$(echo "$out" | grep -c "^BOOT rank [0-9]* cid [1-9][0-9]* members $2 add\$")"
    echo "$out" | grep -E '^FAIL' | head -5 | sed 's/^/    /'
done

# Across the steps of one job: step A (-N2 -n2 on n1,n2) and step B (-N2 -n4 on n3,n4) build
# one group of all their ranks through the job's rendezvous beside srun.
xout=$(timeout -k 5 120 salloc -w "n[1-4]" -N4 -n8 --ntasks-per-node=2 bash -c \
    "srun --overlap --mpi=pmixcpp -w n1,n2 -N2 -n2 $prog xstep A g$$ & \
     srun --overlap --mpi=pmixcpp -w n3,n4 -N2 -n4 --ntasks-per-node=2 $prog xstep B g$$; wait" 2>&1)
expect_eq "across steps: all 6 ranks of both steps passed" 6 "$(echo "$xout" | grep -c '^RESULT-PASS rank')"
expect_no_match "across steps: no failed check" '^FAIL ' "$xout"
echo "$xout" | grep -E '^FAIL|construct across' | head -2 | sed 's/^/    /'

# A spawned step of two apps (1 + 2 processes) defines one process set per app.
mark=$(mktemp -d /tmp/pmixcpp-groups-mark.XXXXXX); chmod 777 "$mark"
sout=$(timeout -k 5 120 salloc -N2 -n8 srun --mpi=pmixcpp -N2 -n2 "$prog" spawnpsets "$mark" 2>&1)
expect_match "spawned apps: the children saw <nspace>.app0 and .app1" 'PASS rank 0: the 3 children saw one process set per app' "$sout"
expect_no_match "spawned apps: no failed check" '^FAIL ' "$sout"
rm -rf "$mark"

# Construction time vs node count: one collective, like a fence.
nodes=$(sinfo -h -o '%D' 2>/dev/null | head -1)
echo "  group construct of every rank (4 per node, TCP between nodes), medians of 30; max over ranks:"
for n in 2 4 8; do
    [ "${nodes:-0}" -ge "$n" ] || { echo "    $n nodes: skipped (cluster has ${nodes:-0})"; continue; }
    bout=$(SLURM_PMIXCPP_TRANSPORT=tcp timeout -k 5 120 srun --mpi=pmixcpp -N$n -n$((4 * n)) --ntasks-per-node=4 "$prog" bench 30 2>&1)
    expect_eq "bench at $n nodes: all ranks passed" $((4 * n)) "$(echo "$bout" | grep -c '^RESULT-PASS rank')"
    echo "$bout" | awk -v n=$n '/^TIME/{ if ($5 > c) c = $5; if ($9 > f) f = $9 }
        END { printf "    %d nodes: construct %d us, empty fence %d us\n", n, c, f }'
done

# (a step whose rank died may still be completing for a moment)
for i in $(seq 1 20); do [ -z "$(squeue -h 2>/dev/null)" ] && break; sleep 0.5; done
expect_eq "no job left behind" "" "$(squeue -h 2>/dev/null)"
t_done
