// What the server asks of the resource manager that hosts it (implemented by the Slurm glue).
// Calls come on the server's loop thread and must return quickly (queue slow work).
#pragma once

#include <pmix_common.h>
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "../services/service_ids.h"
#include "status.h"

namespace pmixcpp::server {

class server_host {
public:
    virtual ~server_host() = default;

    // PMIx_Abort from `rank`: terminate the procs (empty = the whole namespace) and report
    // `message` where the administrator and user see it. Return success once the request is
    // accepted (the client is released then); a failure is reported to the client.
    virtual Status abort(const std::string &nspace, uint32_t rank, int status, const std::string &message,
                         const std::vector<pmix_proc_t> &procs) = 0;

    // PMIx_Log from `rank`: forward one message to the resource manager's log.
    virtual void log(const std::string &nspace, uint32_t rank, const std::string &channel,
                     const std::string &message) = 0;

    // What the resource manager knows of local task `rank`: its pid (0 = not started or not
    // known), whether it has exited, and then its wait status (as waitpid reports it). For the
    // process table (proc_table.h). By default nothing is known.
    struct task_status {
        pid_t pid = 0;
        bool exited = false;
        int wait_status = 0;
    };
    virtual task_status task(uint32_t rank) const {
        (void)rank;
        return {};
    }
};

// The server's one port to srun's side (plugin/agent/): a request of service `s` (its body
// encoded by the service's codec), answered with the agent's one reply. Returns at once; `done`
// (status, message, reply body) runs on another thread. Implemented by slurmstepd's agent
// client (plugin/slurm/server_ports.h).
class agent_port {
public:
    using done_fn = std::function<void(int status, const std::string &message, std::vector<uint8_t> body)>;
    virtual ~agent_port() = default;
    virtual void call(services::service s, std::vector<uint8_t> body, int timeout_ms, done_fn done) = 0;
};

}  // namespace pmixcpp::server
