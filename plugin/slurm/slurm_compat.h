// The differences of Slurm's MPI plugin interface between the releases the
// plugin builds against (22.05 to 26.05), in one place. Everything else in
// plugin/slurm/ uses the names defined here, never a release's own spelling.
//
//   23.02  slurm_mpi.h moved to src/interfaces/mpi.h; mpi_plugin_client_info_t
//          became mpi_step_info_t, mpi_plugin_task_info_t became mpi_task_info_t
//   23.11  mpi_task_info_t lost its `self` member (not used here)
//   24.05  the List typedef is gone: list_t *; mpi_p_daemon_reconfig is gone
//          (not provided here)
//   23.x   hostlist_t became the struct (handles are hostlist_t *);
//          slurm_kill_job_step() gained a flags argument; job_reason_string()
//          became job_state_reason_string() (src/common/job_state_reason.h);
//          ESLURM_JOB_SETTING_DB_INX is gone
//   23.11  the switch topology became a plugin: slurm_load_topo()'s records
//          moved into the plugin's own data (topo_info_response_msg_t.topo_info)
//   24.x   slurm_get_errno() is gone (it always returned errno)
//   25.11  a plugin's fini() returns void
// Included by slurm_api.h after Slurm's headers; slurm/slurm_version.h gives
// SLURM_VERSION_NUMBER.
#pragma once

#include "slurm/slurm_version.h"

#include <cerrno>
#include <cstdint>
#include <type_traits>

#define PMIXCPP_SLURM_AT_LEAST(major, minor) (SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(major, minor, 0))

#if !PMIXCPP_SLURM_AT_LEAST(22, 5)
#error "pmixcpp needs Slurm 22.05 or newer"
#endif

// What srun's client_prelaunch hook and slurmstepd's per-task hook receive.
#if PMIXCPP_SLURM_AT_LEAST(23, 2)
using slurm_mpi_step_info = mpi_step_info_t;
using slurm_mpi_task_info = mpi_task_info_t;
#else
using slurm_mpi_step_info = mpi_plugin_client_info_t;
using slurm_mpi_task_info = mpi_plugin_task_info_t;
#endif

// A Slurm list (mpi_p_conf_get_printable's result).
#if PMIXCPP_SLURM_AT_LEAST(24, 5)
using slurm_list = list_t *;
#else
using slurm_list = List;
#endif

// fini(): `return fini_result(rc);` is valid for both return types.
#if PMIXCPP_SLURM_AT_LEAST(25, 11)
using slurm_fini_result = void;
inline void fini_result(int) {}
#else
using slurm_fini_result = int;
inline int fini_result(int rc) { return rc; }
#endif

// The layout of slurm_load_topo()'s response (shared/fabric/slurm_topo_layout.h): 2205 = the
// switch records in the message (22.05 - 23.02), 2311 = in topology/tree's plugin data (23.11 -
// 24.11), 0 = a release whose layout pmixcpp does not know (its fabric is not supported).
#if PMIXCPP_SLURM_AT_LEAST(25, 5)
#define PMIXCPP_SLURM_TOPO_LAYOUT 0
#elif PMIXCPP_SLURM_AT_LEAST(23, 11)
#define PMIXCPP_SLURM_TOPO_LAYOUT 2311
#else
#define PMIXCPP_SLURM_TOPO_LAYOUT 2205
#endif

// A hostlist handle, whatever hostlist_create() returns in this release.
using slurm_hostlist = decltype(hostlist_create(nullptr));

// The error of the last failed Slurm API call (Slurm keeps it in errno).
inline int slurm_last_error() { return errno; }

// Describes a job's pending reason.
inline const char *slurm_job_reason_text(enum job_state_reason reason) {
#if PMIXCPP_SLURM_AT_LEAST(23, 2)
    return job_state_reason_string(reason);
#else
    return job_reason_string(reason);
#endif
}

// Signals a job step (no flags where the release takes them).
template <typename Kill>
inline int slurm_signal_step_with(Kill kill, uint32_t job_id, uint32_t step_id, uint16_t sig) {
    if constexpr (std::is_invocable_v<Kill, uint32_t, uint32_t, uint16_t, uint16_t>)
        return kill(job_id, step_id, sig, 0);
    else
        return kill(job_id, step_id, sig);
}
inline int slurm_signal_step(uint32_t job_id, uint32_t step_id, uint16_t sig) {
    return slurm_signal_step_with(&slurm_kill_job_step, job_id, step_id, sig);
}

// Whether an error means "slurmctld keeps no db_index for this job" (22.05 refuses every
// update of a job that was resized once when no slurmdbd runs).
inline bool slurm_error_is_missing_db_index(int err) {
#if PMIXCPP_SLURM_AT_LEAST(23, 2)
    (void)err;
    return false;
#else
    return err == ESLURM_JOB_SETTING_DB_INX;
#endif
}
