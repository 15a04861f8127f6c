// The plan of a spawn (srun side, as the user): the srun command line and environment that start
// the apps of a PMIx_Spawn as a new step of the job, from the apps and their infos. No I/O.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "spawn_codec.h"
#include "status.h"

namespace pmixcpp::spawn {

// What to run: srun's argv (argv[0] = "srun") and the variables to set in its environment (they
// reach the children, srun exporting its environment).
// Several apps become one step whose command is pmixcpp-mpmd (mpmd.h).
struct spawn_plan {
    struct exe_check {
        std::string cmd;   // an app's command, checked before srun runs
        std::string cwd;   // where a relative command is looked for ("" = srun's directory)
        std::string path;  // the PATH it is looked up in ("" = srun's)
    };
    std::vector<std::string> argv;
    std::vector<std::string> env;  // KEY=VALUE
    std::vector<exe_check> exes;   // one per app
    // One host per rank when apps name their own hosts: srun's SLURM_HOSTFILE with
    // --distribution=arbitrary (empty: srun places the ranks).
    std::vector<std::string> rank_hosts;
    uint32_t job_id = 0;           // the Slurm job the step runs in
    bool child_sep = false;        // PMIX_SPAWN_CHILD_SEP: the step outlives its parent step
};
// PMIX_SPAWN_TARGET (or PMIX_ALLOC_ID) of a spawn: the Slurm job of that allocation, or an error
// status (PMIX_ERR_BAD_PARAM for an allocation the caller may not use).
using alloc_resolver = std::function<Result<uint32_t>(const std::string &alloc_id)>;
// Infos of the job apply to every app; an app's own infos (PMIX_WDIR, PMIX_SET_ENVAR,
// PMIX_PREFIX, PMIX_HOST) to that app only. PMIX_ERR_NOT_SUPPORTED: a required attribute Slurm
// cannot honour;
// PMIX_ERR_BAD_PARAM: a malformed one, or a target allocation `resolve` refuses (no resolver:
// every target is refused). Optional unknown attributes are ignored.
Result<spawn_plan> plan_spawn(const agent_spawn_request &r, uint32_t job_id, const alloc_resolver &resolve = {});

// "slurm.<job>.<step>" -> job, step; false for any other name.
bool parse_step_nspace(const std::string &nspace, uint32_t *job, uint32_t *step);

// The command resolved like execvp would (PATH of `path_env`), or PMIX_ERR_JOB_EXE_NOT_FOUND.
Result<std::string> resolve_exe(const std::string &cmd, const std::string &cwd, const std::string &path_env);

}  // namespace pmixcpp::spawn
