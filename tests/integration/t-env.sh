# Every task gets the variables the plugin computes for its step: namespace,
# rank, server address and token, with real per-step, per-node values.
. "$(dirname "$0")/lib.sh"

run_srun 60 --mpi=pmixcpp -N2 -n4 --ntasks-per-node=2 -l \
    bash -c 'echo "NS=$PMIX_NAMESPACE RANK=$PMIX_RANK LRANK=$PMIXCPP_LOCAL_RANK JOB=$SLURM_JOB_ID STEP=$SLURM_STEP_ID NODE=$SLURMD_NODENAME URI=$PMIXCPP_SERVER_URI TOKEN=$PMIXCPP_CLIENT_TOKEN DIR=$PMIXCPP_STEP_DIR"; test -d "$PMIXCPP_STEP_DIR" && echo "DIR_OK $(stat -c %a:%u "$PMIXCPP_STEP_DIR")"'
expect_eq "srun -N2 -n4 exit status" 0 "$rc"
echo "$out" | sed 's/^/    /'

lines=$(echo "$out" | grep ' NS=')
expect_eq "four tasks reported" 4 "$(echo "$lines" | wc -l)"
job=$(echo "$lines" | head -1 | sed 's/.*JOB=\([0-9]*\).*/\1/')
step=$(echo "$lines" | head -1 | sed 's/.*STEP=\([0-9]*\).*/\1/')
uid=$(id -u)
for r in 0 1 2 3; do
    line=$(echo "$lines" | grep "^ *$r: ")
    expect_match "rank $r namespace" "NS=slurm\.$job\.$step " "$line"
    expect_match "rank $r PMIX_RANK" "RANK=$r " "$line"
    node=$(echo "$line" | sed 's/.*NODE=\([^ ]*\).*/\1/')
    expect_match "rank $r server socket in the root-owned step root in its node's TmpFS" "URI=unix:$PMIXCPP_CLUSTER_DIR/tmp/$node/pmixcpp\.$job\.$step\.[A-Za-z0-9]{6}/server\.sock " "$line"
    expect_match "rank $r step directory is the user's part of the same root" "URI=unix:([^ ]*)/server\.sock .*DIR=\1/user$" "$line"
    expect_match "rank $r token" "TOKEN=[0-9a-f]{32} " "$line"
done
expect_eq "local ranks 0,1 on each node" "0 0 1 1" "$(echo "$lines" | sed 's/.*LRANK=\([0-9]*\).*/\1/' | sort | tr '\n' ' ' | sed 's/ $//')"
expect_eq "two distinct nodes" 2 "$(echo "$lines" | sed 's/.*NODE=\([^ ]*\).*/\1/' | sort -u | wc -l)"
expect_eq "two distinct tokens (one per node)" 2 "$(echo "$lines" | sed 's/.*TOKEN=\([^ ]*\).*/\1/' | sort -u | wc -l)"
expect_eq "step directory exists, mode 700, owned by the user" 4 "$(echo "$out" | grep -c "DIR_OK 700:$uid")"

# srun's agent secret is for the step's daemons, not for the tasks.
run_srun 60 --mpi=pmixcpp -N1 -n1 bash -c 'echo "AGENT=${SLURM_PMIXCPP_AGENT_SECRET:-hidden}:${SLURM_PMIXCPP_AGENT_PORT:-hidden}"'
expect_eq "the tasks do not see srun's agent secret" "AGENT=hidden:hidden" "$out"

# The step directory is removed when the step ends.
dir=$(echo "$lines" | head -1 | sed 's/.*DIR=\([^ ]*\).*/\1/')
if wait_gone "$dir" 15; then pass "step directory removed after the step"; else fail "step directory $dir left behind"; fi
t_done
