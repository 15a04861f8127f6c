// What the server needs to know about its job step, in plain C++ types.
// The Slurm glue fills it from stepd_step_rec_t; nothing here knows Slurm.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace pmixcpp {

struct step_dirs;  // the verified, open step directories (plugin/common/step_env.h)

struct step_info {
    std::string nspace;         // PMIx namespace of the step: "pmixcpp.<job>.<step>"
    uint32_t job_id = 0;
    uint32_t step_id = 0;
    uid_t uid = 0;              // the job's user: the only one allowed to connect
    gid_t gid = 0;

    uint32_t ntasks = 0;        // ranks in the step
    uint32_t node_id = 0;       // this node's index into node_names
    std::vector<std::string> node_names;            // Slurm node names of the step, in step order
    std::vector<std::vector<uint32_t>> node_ranks;  // global ranks on each node, local-rank order
    uint32_t cpus_per_task = 1;
    uint32_t universe_size = 0; // ranks the job could hold (>= ntasks)

    std::string hostname;       // the real host name of this node
    std::string step_root;      // root-owned per-step directory (0711): socket, job data, modex snapshots
    std::string step_dir;       // the user's per-step directory, <step_root>/user (mode 0700, owned by uid)
    std::string server_socket;  // Unix socket path of this node's server, in step_root
    std::shared_ptr<const step_dirs> dirs;  // open descriptors of the directories above
    std::string client_token;   // secret a client presents when it connects
    std::vector<std::string> job_env;  // the step's environment (KEY=VALUE)

    const std::vector<uint32_t> &local_ranks() const { return node_ranks.at(node_id); }
    const std::string &node_name() const { return node_names.at(node_id); }
};

// The namespace name for a Slurm step.
inline std::string make_namespace(uint32_t job_id, uint32_t step_id) {
    return "pmixcpp." + std::to_string(job_id) + "." + std::to_string(step_id);
}

}  // namespace pmixcpp
