# A failure inside the plugin fails the step cleanly: an error in the log,
# a non-zero srun exit, no hung or crashed slurmstepd.
. "$(dirname "$0")/lib.sh"

# 1. srun refuses a bad override before launching anything.
run_srun 30 --mpi=pmixcpp --export=ALL,SLURM_PMIXCPP_TIMEOUT=abc -N1 -n1 true
if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ]; then pass "srun fails on SLURM_PMIXCPP_TIMEOUT=abc"; else fail "srun rc=$rc on a bad override"; fi
expect_match "srun names the variable" 'SLURM_PMIXCPP_TIMEOUT.*PMIxCppTimeout=abc is invalid' "$out"

# 2. slurmstepd cannot create the step directory: prefork fails.
before=$(slurmd_logs | wc -l)
run_srun 60 --mpi=pmixcpp --export=ALL,SLURM_PMIXCPP_TMPDIRBASE=/nonexistent/pmixcpp -N2 -n2 --ntasks-per-node=1 true
if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ "$rc" -ne 137 ]; then pass "srun exits non-zero (rc=$rc)"; else fail "srun rc=$rc when prefork fails"; fi
sleep 1
logs=$(slurmd_logs | tail -n +"$before")
expect_match "slurmd log has the plugin's reason" 'mpi/pmixcpp: slurmstepd_prefork: step directory: step directory base /nonexistent/pmixcpp: No such file or directory' "$logs"

# 3. The cluster is healthy afterwards: no stuck step, the next step runs.
sleep 1
expect_eq "no step left running" "" "$(squeue -h -s 2>/dev/null | grep -v '\.extern' | grep -v batch)"
run_srun 60 --mpi=pmixcpp -N2 -n2 --ntasks-per-node=1 true
expect_eq "next step runs fine" 0 "$rc"
t_done
