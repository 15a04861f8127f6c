// Per-step node setup that does not need Slurm: the private step directory,
// the client token, and the environment every task of the step receives.
#pragma once

#include "../server/step_info.h"
#include "config.h"
#include "status.h"

#include <string>
#include <utility>
#include <vector>

namespace pmixcpp {

using env_list = std::vector<std::pair<std::string, std::string>>;

// Create <base>/pmixcpp.<uid>.<job>.<step>, mode 0700, owned by the job's user, and
// fill step.step_dir and step.server_socket. Fails with a clear message when the
// base is missing, not a directory, or the socket path would be too long.
Status prepare_step_dir(step_info &step, const std::string &base);

// Remove what prepare_step_dir created (best effort, logs nothing).
void remove_step_dir(const step_info &step);

// A fresh random secret, hex encoded (from getrandom()).
Result<std::string> random_token(size_t bytes = 16);

// Variables shared by all tasks of the step on this node.
// `client_libdir` is where our libpmix.so.2 is installed.
env_list step_task_env(const step_info &step, const plugin_config &cfg, const std::string &client_libdir,
                       const std::string &current_ld_library_path);

// Variables of one task.
env_list task_env(const step_info &step, uint32_t global_rank, uint32_t local_rank);

}  // namespace pmixcpp
