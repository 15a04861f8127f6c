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

# 2b. The server socket path would not fit a Unix socket address: refused on every node.
long="/tmp/pmixcpp-long-$$/$(printf 'd%.0s' $(seq 1 90))"
mkdir -p "$long"
cluster_restart_with "PMIxCppTmpDirBase=$long"
run_srun 60 --mpi=pmixcpp -N2 -n2 --ntasks-per-node=1 true
expect_eq "srun exits with status 1 when the socket path is too long" 1 "$rc"
expect_match "srun shows the node and the reason" "mpi/pmixcpp: node n[0-9]+: step setup failed: step directory: server socket path below $long would be [0-9]+ bytes, longer than 107; set PMIxCppTmpDirBase to a shorter directory" "$out"
rm -rf "/tmp/pmixcpp-long-$$"
cluster_restart_with ""

# 2c. One node refuses (its step directory base is writable by every user, without the sticky
#     bit) while the other nodes start their tasks: srun names that node and its reason in one
#     line and ends the step at once, although the tasks elsewhere wait in a fence for the
#     missing node (with a timeout far beyond the time limit of the srun).
tmpfs="$PMIXCPP_CLUSTER_DIR/tmp/n2"
prog="${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}/libexec/pmixcpp/tests/pmix_multinode"
refusal="mpi/pmixcpp: node n2: step setup failed: step directory: step directory base: $tmpfs is writable by other users \\(mode 0777\\)"
chmod 0777 "$tmpfs"
SLURM_PMIXCPP_TIMEOUT=600 run_srun 60 --mpi=pmixcpp -w n1,n2 -N2 -n4 --ntasks-per-node=2 "$prog"
expect_eq "one node refuses: srun exits with status 1 before its time limit" 1 "$rc"
expect_match "one node refuses: srun names the node and the reason" "$refusal" "$out"
expect_eq "one node refuses: one line says so" 1 "$(printf '%s\n' "$out" | grep -Ec "step setup failed")"
# the same in a heterogeneous step: the component on the healthy node is ended too
SLURM_PMIXCPP_TIMEOUT=600 run_srun 60 --mpi=pmixcpp -w n1 -N1 -n2 "$prog" : -w n2 -N1 -n2 "$prog"
expect_eq "one node of a het step refuses: srun exits with status 1 before its time limit" 1 "$rc"
expect_match "one node of a het step refuses: srun names the node and the reason" "$refusal" "$out"
chmod 1777 "$tmpfs"

# 3. A bad override that only the step sees (--export) is refused by slurmstepd.
run_srun 60 --mpi=pmixcpp --export=ALL,SLURM_PMIXCPP_FENCE=sideways -N1 -n1 true
expect_eq "srun exits with status 1 on a bad exported override" 1 "$rc"
expect_match "srun shows why" 'PMIxCppFence=sideways is invalid: expected auto, tree, ring, direct or dissemination' "$out"

# 4. The cluster is healthy afterwards: no stuck step, the next step runs.
expect_eq "no step left running" "" "$(steps_left 30)"
run_srun 60 --mpi=pmixcpp -N2 -n2 --ntasks-per-node=1 true
expect_eq "next step runs fine" 0 "$rc"
t_done
