// Per-step node setup that does not need Slurm: the private step directory,
// the client token, and the environment every task of the step receives.
#pragma once

#include "step_info.h"
#include "plugin_config.h"
#include "safe_fs.h"
#include "status.h"

#include <string>
#include <utility>
#include <vector>

namespace pmixcpp {

using env_list = std::vector<std::pair<std::string, std::string>>;

// The step's directories, open and verified (safe_fs.h has the layout).
struct step_dirs {
    safe_fs::dir base;   // the administrator's base (TmpFS or PMIxCppTmpDirBase)
    safe_fs::dir root;   // <base>/pmixcpp.<job>.<step>.<random>, root-owned, 0711
    safe_fs::dir user;   // <root>/user, the job user's, 0700
    std::string root_name;
};

// Create the step's directories below `base` (an administrator's directory: owned by root, not
// writable by others unless sticky): the root-owned step root with an unpredictable name, and in
// it the user's directory, handed to the job's user only once complete (the process directories
// in it are the tasks' own: make_proc_dir). Fills step.step_root, step.step_dir, step.server_socket and step.dirs.
// Fails with a clear message (and leaves nothing behind) when the base is missing, not trusted,
// or the socket path would be too long.
Status prepare_step_dir(step_info &step, const std::string &base);

// Remove what prepare_step_dir created, and whatever the job put in its directory, without
// following any link and without removing or entering anything the job's user does not own
// (best effort; logs a warning naming what was kept).
void remove_step_dir(const step_info &step);

// The process directory of `rank` (PMIX_PROCDIR): <step_dir>/rank.<rank>.
std::string proc_dir_name(uint32_t rank);
std::string proc_dir(const step_info &step, uint32_t rank);

// Make the process directory of `rank`, 0700, as the job's user, in the user's step directory.
// Called in the task, by Slurm's task hook (mpi_p_slurmstepd_task), which runs in the forked
// task after Slurm set its real, effective and saved ids to the job's user and before exec: so
// the directory is there before the program starts, and nothing here runs as root in a
// directory the user can write (refused unless the effective uid is the job's). An existing
// entry of that name is accepted only if it is a directory of the user's (not a link to one:
// opened O_NOFOLLOW), and then made 0700; anything else is a clear error, and the task does not
// start.
Status make_proc_dir(const step_info &step, uint32_t rank);

// A fresh random secret, hex encoded (from getrandom()).
Result<std::string> random_token(size_t bytes = 16);

// Variables shared by all tasks of the step on this node.
// `client_libdir` is where our libpmix.so.2 is installed.
env_list step_task_env(const step_info &step, const plugin_config &cfg, const std::string &client_libdir,
                       const std::string &current_ld_library_path);

// What OpenPMIx clients need to find the server's native listener (plugin/native, PMIxCppClientLib
// native or both): the URIs of every protocol version up to 4.1 (not 5.1/6.1, so newer clients speak
// v41), gds hash, psec native, non-described buffers, the server version and the node's name as
// the job data spells it. The server's nspace in the URIs has no '.' (a 3.x client splits there).
env_list native_task_env(const step_info &step, uint16_t port);

// Variables of one task.
env_list task_env(const step_info &step, uint32_t global_rank, uint32_t local_rank);

}  // namespace pmixcpp
