// The node server's ports to srun's side: plugin/server/host.h agent_port (spawn, the job's
// store, connect, fabric, cross-step) and plugin/server/alloc.h alloc_host, both calls of
// slurmstepd's one agent client (agent_client.h). Answers reach the server from the client's
// worker threads, as the ports ask.
#pragma once

#include "../server/alloc.h"
#include "../server/host.h"
#include "../server/server.h"
#include "../agent/stepd/agent_client.h"

namespace pmixcpp::agent {

class server_ports : public server::agent_port, public server::alloc_host {
public:
    explicit server_ports(client &c) : _client(c) {}
    // Set options.agent and options.alloc to this.
    void wire(server::server_options &options);

    void call(services::service s, std::vector<uint8_t> body, int timeout_ms, done_fn done) override;
    // Allocation requests may wait long in Slurm: pmix.timeout (+ a margin for the bridge to
    // answer first), else a week. The answer is the bridge's (alloc_request.h).
    void forward_alloc(std::vector<uint8_t> request, int timeout_sec, reply_fn done) override;

private:
    client &_client;
};

}  // namespace pmixcpp::agent
