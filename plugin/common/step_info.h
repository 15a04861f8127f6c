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
    std::string nspace;         // PMIx namespace of the step: "slurm.<job>.<step>"
    uint32_t job_id = 0;
    uint32_t step_id = 0;
    uid_t uid = 0;              // the job's user: the only one allowed to connect
    gid_t gid = 0;

    uint32_t ntasks = 0;        // ranks in the step
    // The step's servers (one slurmstepd each): a node name appears more than once when the
    // components of a heterogeneous step share that node, each with a server of its own.
    uint32_t node_id = 0;       // this server's index into node_names
    std::vector<std::string> node_names;            // Slurm node name of each server, in step order
    std::vector<std::vector<uint32_t>> node_ranks;  // global ranks of each server, local-rank order
    // The step's apps (heterogeneous components, --multi-prog lines): each rank's app, and each
    // app's command line. Empty: one app (or the spawned apps of the environment, jobdata.h).
    std::vector<uint32_t> app_of_rank;
    std::vector<std::string> app_argv;
    uint32_t cpus_per_task = 1;
    uint32_t universe_size = 0; // ranks the job could hold (>= ntasks)

    std::string hostname;       // the real host name of this node
    std::string step_root;      // root-owned per-step directory (0711): socket, job data
    std::string step_dir;       // the user's per-step directory, <step_root>/user (mode 0700, owned by uid)
    std::string server_socket;  // Unix socket path of this node's server, in step_root
    std::shared_ptr<const step_dirs> dirs;  // open descriptors of the directories above
    std::string client_token;   // secret a client presents when it connects
    std::vector<std::string> job_env;  // the step's environment (KEY=VALUE)

    const std::vector<uint32_t> &local_ranks() const { return node_ranks.at(node_id); }
    const std::string &node_name() const { return node_names.at(node_id); }
};

// PMIX_UNIV_SIZE: the processes the job's allocation can hold, from Slurm's
// SLURM_JOB_CPUS_PER_NODE ("4(x2),2": 4 CPUs on each of two nodes, 2 on a third) divided by the
// CPUs per task; never less than the step's own task count (an unparsable value gives ntasks).
inline uint32_t universe_from_cpus(const std::string &cpus_per_node, uint32_t cpus_per_task, uint32_t ntasks) {
    uint64_t cpus = 0;
    size_t i = 0;
    const size_t n = cpus_per_node.size();
    while (i < n) {
        uint64_t c = 0, times = 1;
        size_t start = i;
        while (i < n && cpus_per_node[i] >= '0' && cpus_per_node[i] <= '9' && c < (1u << 24))
            c = c * 10 + static_cast<uint64_t>(cpus_per_node[i++] - '0');
        if (i == start) return ntasks;
        if (i < n && cpus_per_node[i] == '(') {
            if (cpus_per_node.compare(i, 2, "(x") != 0) return ntasks;
            i += 2;
            times = 0;
            start = i;
            while (i < n && cpus_per_node[i] >= '0' && cpus_per_node[i] <= '9' && times < (1u << 24))
                times = times * 10 + static_cast<uint64_t>(cpus_per_node[i++] - '0');
            if (i == start || i >= n || cpus_per_node[i] != ')') return ntasks;
            ++i;
        }
        cpus += c * times;
        if (i < n && cpus_per_node[i] != ',') return ntasks;
        if (i < n) ++i;
    }
    uint64_t slots = cpus / (cpus_per_task ? cpus_per_task : 1);
    if (slots > UINT32_MAX) slots = UINT32_MAX;
    return slots > ntasks ? static_cast<uint32_t>(slots) : ntasks;
}

// The namespace name for a Slurm step. It must not start with "pmix": applications build keys
// from the namespace ("<nspace>-<rank>-local") and the "pmix" prefix is the standard's own.
inline std::string make_namespace(uint32_t job_id, uint32_t step_id) {
    return "slurm." + std::to_string(job_id) + "." + std::to_string(step_id);
}

}  // namespace pmixcpp
