# A failure inside the plugin fails the step cleanly: an error in the slurmd
# log and in srun's output, a non-zero srun exit, no hung or crashed slurmstepd.
. "$(dirname "$0")/lib.sh"

# 1. srun refuses a bad override in its own environment before launching anything.
out=$(SLURM_PMIXCPP_TIMEOUT=abc timeout 30 srun --mpi=pmixcpp -N1 -n1 true 2>&1); rc=$?
if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ]; then pass "srun fails on SLURM_PMIXCPP_TIMEOUT=abc (rc=$rc)"; else fail "srun rc=$rc on a bad override"; fi
expect_match "srun names the variable and the key" 'SLURM_PMIXCPP_TIMEOUT \(overrides PMIxCppTimeout\): PMIxCppTimeout=abc is invalid' "$out"

# 2. slurmstepd cannot create the step directory (the administrator's base is missing): prefork
#    fails on every node.
tag="/nonexistent/pmixcpp-$$"
cluster_restart_with "PMIxCppTmpDirBase=$tag"
run_srun 60 --mpi=pmixcpp -N2 -n2 --ntasks-per-node=1 true
expect_eq "srun exits with status 1 when prefork fails" 1 "$rc"
expect_match "srun shows the node and the reason" "mpi/pmixcpp: node n[0-9]+: step setup failed: step directory: step directory base: $tag: No such file or directory" "$out"
expect_match "slurmd log has the plugin's reason" "mpi/pmixcpp: slurmstepd_prefork: step directory: step directory base: $tag: No such file or directory" "$(slurmd_logs)"
cluster_restart_with ""

# 3. A bad override that only the step sees (--export) is refused by slurmstepd.
run_srun 60 --mpi=pmixcpp --export=ALL,SLURM_PMIXCPP_FENCE=sideways -N1 -n1 true
expect_eq "srun exits with status 1 on a bad exported override" 1 "$rc"
expect_match "srun shows why" 'PMIxCppFence=sideways is invalid: expected auto, tree, ring or direct' "$out"

# 4. The cluster is healthy afterwards: no stuck step, the next step runs.
expect_eq "no step left running" "" "$(squeue -h -s 2>/dev/null | grep -v '\.extern' | grep -v batch)"
run_srun 60 --mpi=pmixcpp -N2 -n2 --ntasks-per-node=1 true
expect_eq "next step runs fine" 0 "$rc"
t_done
