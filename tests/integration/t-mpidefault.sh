# MpiDefault=pmixcpp in slurm.conf: plain srun uses the plugin.
. "$(dirname "$0")/lib.sh"

cluster_restart_with "" pmixcpp || fail "cluster restart with MpiDefault=pmixcpp"
eval "$("$PMIXCPP_SRCDIR/contrib/cluster.sh" env)"
expect_match "slurm.conf has MpiDefault=pmixcpp" 'MpiDefault += pmixcpp' "$(scontrol show config)"
run_srun 60 -N1 -n2 bash -c 'echo "NS=$PMIX_NAMESPACE RANK=$PMIX_RANK TYPE=$SLURM_MPI_TYPE"'
expect_eq "plain srun exit status" 0 "$rc"
expect_match "plain srun gets a pmixcpp namespace" 'NS=slurm\.[0-9]+\.[0-9]+ RANK=[01] TYPE=pmixcpp' "$out"

cluster_restart_with "" || fail "cluster restart back to MpiDefault=none"
t_done
