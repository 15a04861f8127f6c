# PMI-1 and PMI-2 over pmixcpp (client/pmi: libpmi.so.0, libpmi2.so.0 over our libpmix.so.2):
# tests/programs/pmi1_test.c and pmi2_test.c at -N2 -n4 and -N4 -n16 under --mpi=pmixcpp (init,
# job facts, KVS put/commit/barrier and every rank's key got by every rank over two epochs, a key
# whose name has no rank, clique and PMI_process_mapping checked against each other, node
# attributes, universeSize, publish/lookup/unpublish, a bad key and a bad KVS name fail at once),
# the cyclic layout's mapping, PMI_Abort / PMI2_Abort ending the step, PMI2_Job_Spawn and
# PMI_Spawn_multiple of children that read a preput key. Beside them, in one table,
# the same binaries under Slurm's mpi/pmi2 with Slurm's libpmi.so.0 / libpmi2.so.0 (Debian's
# libpmi0, libpmi2-0; LD_LIBRARY_PATH names Slurm's copy first): the anchor's column is a figure,
# not an assertion.
# Requires: make install; a cluster with >= 4 nodes.
. "$(dirname "$0")/lib.sh"
dir="${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}/libexec/pmixcpp/tests"
for p in pmi1_test pmi2_test; do
    [ -x "$dir/$p" ] || { fail "$dir/$p not installed"; t_done; exit; }
done

# The libraries the programs load: ours under --mpi=pmixcpp (the plugin's LD_LIBRARY_PATH).
ldd_out=$(LD_LIBRARY_PATH="$PMIXCPP_PREFIX/lib/pmixcpp" ldd "$dir/pmi2_test" 2>&1)
expect_match "pmi2_test loads our libpmi2.so.0 from lib/pmixcpp" "libpmi2.so.0 => .*/lib/pmixcpp/libpmi2.so.0" "$ldd_out"

# One summary cell of a run: "<ranks passed>/<n> ok, <failed checks> FAIL, barrier <us>, gets <us>"
# (maxima over ranks of the TIME line), then the distinct checks that failed (rank left out).
cell() {
    local n=$1 text=$2
    local passed failed which
    passed=$(printf '%s\n' "$text" | grep -c '^RESULT-PASS rank')
    failed=$(printf '%s\n' "$text" | grep -c '^FAIL ')
    which=$(printf '%s\n' "$text" | sed -n 's/^FAIL rank [-0-9]*: //p' | sed 's/ [0-9][0-9]* wrong)/)/; s/-> .*//; s/[0-9][0-9][0-9][0-9]*//g' |
        cut -c1-40 | sort -u | paste -sd';' -)
    printf '%s\n' "$text" | awk -v p="$passed" -v n="$n" -v f="$failed" '
        /^TIME rank/ { if ($5 > b) b = $5; if ($7 > g) g = $7 }
        END { printf "%d/%d ranks ok, %d FAIL, barrier %d us, gets %d us", p, n, f, b, g }'
    [ -n "$which" ] && printf ' [failed: %s]' "$which"
}

slurm_dir=$(dirname "$(ldconfig -p | awk '/libpmi2.so.0 .*x86-64/ { print $NF; exit }')" 2>/dev/null)
[ -f "$slurm_dir/libpmi2.so.0" ] || slurm_dir=""
have_pmi2=$(srun --mpi=list 2>&1 | grep -c 'pmi2')

rows=()
for shape in "2 4 2" "4 16 4"; do
    set -- $shape
    for p in pmi1_test pmi2_test; do
        run_srun 120 --mpi=pmixcpp -N"$1" -n"$2" --ntasks-per-node="$3" "$dir/$p"
        expect_eq "$p -N$1 -n$2: exit status" 0 "$rc"
        expect_eq "$p -N$1 -n$2: all $2 ranks passed" "$2" "$(echo "$out" | grep -c '^RESULT-PASS rank')"
        expect_no_match "$p -N$1 -n$2: no failed check" '^FAIL ' "$out"
        echo "$out" | grep -E '^FAIL' | head -5 | sed 's/^/    /'
        # pmi1_test reads them once per epoch (the second: overwritten), pmi2_test by name alone and
        # with the source rank given
        expect_eq "$p -N$1 -n$2: every rank read every rank's key" $((2 * $2)) \
            "$(echo "$out" | grep -cE '^PASS rank [0-9]+: (epoch [12]: )?(overwritten and new keys|the keys) of all '"$2"' ranks read back')"
        expect_eq "$p -N$1 -n$2: a key no rank put fails at once on every rank" "$2" \
            "$(echo "$out" | grep -c '^PASS rank [0-9]*: a key no rank put: error')"
        expect_eq "$p -N$1 -n$2: block mapping" "MAPPING (vector,(0,$1,$3))" "$(echo "$out" | grep '^MAPPING' | head -1)"
        ours=$(cell "$2" "$out")
        anchor="(no Slurm libpmi/mpi/pmi2)"
        if [ -n "$slurm_dir" ] && [ "$have_pmi2" -gt 0 ]; then
            aout=$(LD_LIBRARY_PATH="$slurm_dir" timeout -k 5 120 srun --mpi=pmi2 -N"$1" -n"$2" \
                --ntasks-per-node="$3" "$dir/$p" 2>&1)
            anchor=$(cell "$2" "$aout")
            [ -z "$(echo "$aout" | grep '^RESULT-')" ] &&
                anchor="$anchor; $(echo "$aout" | grep -iE 'error' | head -1 | cut -c1-80)"
        fi
        rows+=("$(printf '  %-10s %-8s | %-58s | %s' "$p" "-N$1 -n$2" "$ours" "$anchor")")
    done
done

# A cyclic layout: the mapping is one period, and the clique and node attributes follow it.
for p in pmi1_test pmi2_test; do
    run_srun 120 --mpi=pmixcpp -N2 -n4 --ntasks-per-node=2 -m cyclic "$dir/$p"
    expect_eq "$p -N2 -n4 -m cyclic: all 4 ranks passed" 4 "$(echo "$out" | grep -c '^RESULT-PASS rank')"
    expect_eq "$p -N2 -n4 -m cyclic: cyclic mapping" "MAPPING (vector,(0,2,1))" "$(echo "$out" | grep '^MAPPING' | head -1)"
    echo "$out" | grep -E '^FAIL' | head -3 | sed 's/^/    /'
done

# PMI_Abort / PMI2_Abort of rank 1 ends the step (the others wait in a barrier): no hang.
for p in pmi1_test pmi2_test; do
    t0=$SECONDS
    run_srun 60 --mpi=pmixcpp -N2 -n4 --ntasks-per-node=2 "$dir/$p" abort
    expect_eq "$p abort: rank 1 aborted" 1 "$(echo "$out" | grep -c '^ABORTING rank 1')"
    expect_eq "$p abort: the step failed" 1 "$([ "$rc" -ne 0 ] && echo 1 || echo 0)"
    expect_no_match "$p abort: no barrier succeeded after the abort" '^FAIL rank [0-9]*: the barrier after the abort' "$out"
    expect_eq "$p abort: over in under 30 s" 1 "$([ $((SECONDS - t0)) -lt 30 ] && echo 1 || echo 0)"
    expect_match "$p abort: the message is shown" "rank 1 aborts" "$out"
done

# PMI2_Job_Spawn from rank 0 of a -N2 -n2 step: 3 children with a preput key, spawned = 1, a KVS
# of their own (PMIx_Spawn underneath: a new step of the job, so the allocation has room).
mark=$(mktemp -d /tmp/pmixcpp-pmi-spawn.XXXXXX); chmod 777 "$mark"
t0=$SECONDS
sout=$(timeout -k 5 120 salloc -N2 -n8 srun --mpi=pmixcpp -N2 -n2 "$dir/pmi2_test" spawn "$mark" 2>&1)
expect_match "PMI2_Job_Spawn: the parent got the children's job id" '^PASS rank 0: PMI2_Job_Spawn of 3 -> 0, job slurm\.' "$sout"
expect_match "PMI2_Job_Spawn: 3 children spawned, read the preput key, exchanged keys" '^PASS rank 0: 3 of 3 children' "$sout"
echo "$sout" | grep -E '^FAIL|^CHILD' | head -4 | sed 's/^/    /'
echo "  PMI2_Job_Spawn of 3 children until all 3 reported: $((SECONDS - t0)) s (with salloc)"
rm -rf "$mark"
# The same through PMI-1: PMI_Spawn_multiple of 2, the preput key in the children's KVS.
mark=$(mktemp -d /tmp/pmixcpp-pmi-spawn.XXXXXX); chmod 777 "$mark"
sout=$(timeout -k 5 120 salloc -N2 -n8 srun --mpi=pmixcpp -N2 -n2 "$dir/pmi1_test" spawn "$mark" 2>&1)
expect_match "PMI_Spawn_multiple: success at the parent" '^PASS rank 0: PMI_Spawn_multiple of 2 -> 0' "$sout"
expect_match "PMI_Spawn_multiple: 2 children spawned, read the preput key" '^PASS rank 0: 2 of 2 children' "$sout"
echo "$sout" | grep -E '^FAIL|^CHILD' | head -4 | sed 's/^/    /'
rm -rf "$mark"

echo "  PMI programs: pmixcpp (libpmi over libpmix)  |  anchor: srun --mpi=pmi2 with Slurm's libpmi${slurm_dir:+ ($slurm_dir)}"
printf '  %-10s %-8s | %-58s | %s\n' "program" "shape" "pmixcpp" "Slurm mpi/pmi2"
for r in "${rows[@]}"; do echo "$r"; done

for i in $(seq 1 20); do [ -z "$(squeue -h 2>/dev/null)" ] && break; sleep 0.5; done
expect_eq "no job left behind" "" "$(squeue -h 2>/dev/null)"
t_done
