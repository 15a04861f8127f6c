# The plugin is found and loaded by srun and slurmstepd.
. "$(dirname "$0")/lib.sh"

out=$(srun --mpi=list 2>&1)
expect_match "srun --mpi=list lists pmixcpp" 'pmixcpp' "$out"
expect_match "srun --mpi=list still lists the anchor (pmix_v4 on Slurm 22.05, pmix_v5 on 24.11)" 'pmix_v[45]' "$out"

run_srun 60 --mpi=pmixcpp -N1 -n1 true
expect_eq "a trivial step under --mpi=pmixcpp succeeds" 0 "$rc"

# Only what Slurm looks up is exported.
syms=$(nm -D --defined-only "$PMIXCPP_PLUGIN_DIR/mpi_pmixcpp.so" | awk '$2 ~ /[TDBRV]/ {print $3}' | grep -v '^_' | sort | tr '\n' ' ')
expect_eq "exported symbols" "fini init mpi_p_client_fini mpi_p_client_prelaunch mpi_p_conf_get mpi_p_conf_get_printable mpi_p_conf_options mpi_p_conf_set mpi_p_slurmstepd_prefork mpi_p_slurmstepd_task plugin_id plugin_name plugin_type plugin_version " "$syms"
t_done
