# pmix_multinode (tests/programs/pmix_multinode.c) across nodes: whole-job and subset fences,
# concurrent fences entered in different orders, full modex, direct modex (late commit, new key
# after a collecting fence), with the tree (auto, width 2), the ring and the dissemination barrier
# (its fences without data; the collecting ones take the tree), -N2 to -N4, over UCX (default)
# and TCP.
# Requires: make install; a cluster with >= 4 nodes (contrib/cluster.sh start 4).
. "$(dirname "$0")/lib.sh"
prog="${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}/libexec/pmixcpp/tests/pmix_multinode"
[ -x "$prog" ] || { fail "$prog not installed"; t_done; exit; }

run_case() {  # label nodes ppn rounds env...
    local label=$1 nodes=$2 ppn=$3 rounds=$4; shift 4
    out=$(env "$@" timeout -k 5 180 srun --mpi=pmixcpp -N"$nodes" --ntasks-per-node="$ppn" "$prog" "$rounds" 2>&1)
    rc=$?
    expect_eq "$label: exit status" 0 "$rc"
    expect_eq "$label: all $((nodes * ppn)) ranks passed" $((nodes * ppn)) "$(echo "$out" | grep -c '^RESULT-PASS rank')"
    expect_no_match "$label: no failed check" '^FAIL ' "$out"
    echo "$out" | grep -E '^FAIL' | head -5 | sed 's/^/    /'
}

run_case "-N2 x4 auto" 2 4 2 SLURM_PMIXCPP_FENCE=auto
run_case "-N4 x8 tree width 2" 4 8 3 SLURM_PMIXCPP_FENCE=tree SLURM_PMIXCPP_TREEWIDTH=2
run_case "-N4 x8 ring" 4 8 3 SLURM_PMIXCPP_FENCE=ring
run_case "-N3 x5 auto, ring threshold 0" 3 5 2 SLURM_PMIXCPP_RINGTHRESHOLD=0
run_case "-N3 x5 dissemination" 3 5 2 SLURM_PMIXCPP_FENCE=dissemination
run_case "-N4 x8 dissemination, TCP transport" 4 8 2 SLURM_PMIXCPP_FENCE=dissemination SLURM_PMIXCPP_TRANSPORT=tcp
run_case "-N4 x8 eager connect, node-wide dmodex" 4 8 2 SLURM_PMIXCPP_EAGERCONNECT=yes SLURM_PMIXCPP_DMODEXNODE=yes
run_case "-N4 x8 TCP transport" 4 8 2 SLURM_PMIXCPP_TRANSPORT=tcp
run_case "-N4 x8 UCX (over TCP: root's UCX has no shared memory)" 4 8 2 SLURM_PMIXCPP_TRANSPORT=ucx
run_case "-N4 x32" 4 32 1
t_done
