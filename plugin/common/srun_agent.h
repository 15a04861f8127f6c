// The srun-side agent: a small TCP listener that srun's side of the plugin
// runs for the life of a step. slurmstepd reports to it what the user must
// see and what srun's exit code must say: a step that failed to set up on a
// node, or a PMIx_Abort (status and message). Only reporters that present the
// step's secret are heard. Knows nothing of Slurm.
//
// It is also the rendezvous of the step's node servers: each slurmstepd reports (node id, node
// count, its node-transport address) on a connection it keeps open; once every node has
// reported, each gets the full address table on that connection. A TCP address "tcp:*:<port>"
// gets its '*' replaced by the IP the agent sees the node connect from.
#pragma once

#include <netinet/in.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "status.h"

namespace pmixcpp {

struct agent_report {
    // node_done: the step ended on the reporting node after other nodes of the step were lost
    // (message: their names, comma-separated); see mpi_pmixcpp.cc.
    enum class kind : uint16_t { setup_failed = 1, abort = 2, node_done = 3 };
    kind what = kind::setup_failed;
    int32_t status = 1;    // exit code srun should return (non-zero)
    std::string node;      // reporting node
    std::string message;   // shown to the user by srun
};

class srun_agent {
public:
    using report_fn = std::function<void(const agent_report &)>;

    // Listen on an ephemeral TCP port on every interface and serve reports on
    // a thread of its own. `on_report` runs on that thread.
    static Result<std::unique_ptr<srun_agent>> start(report_fn on_report);
    // Allocation requests (alloc_agent.h): `on_alloc` gets the connection (it owns `fd` and answers
    // on it) and the request body, on the agent's thread; it must return at once. Set before any
    // daemon can connect (right after start); without it such connections are closed.
    using alloc_fn = std::function<void(int fd, std::vector<uint8_t> body)>;
    void set_alloc_handler(alloc_fn on_alloc) { _on_alloc = std::move(on_alloc); }
    ~srun_agent();
    srun_agent(const srun_agent &) = delete;
    srun_agent &operator=(const srun_agent &) = delete;

    uint16_t port() const { return _port; }
    const std::string &secret() const { return _secret; }
    // The first non-zero status reported (0 if none): srun's exit code.
    int exit_code() const { return _exit_code.load(); }
    // Stop listening and join the thread (idempotent).
    void stop();

private:
    srun_agent() = default;
    void run();
    bool serve(int fd);  // true: the agent keeps the connection (rendezvous)
    void rendezvous_complete();

    int _listen_fd = -1;
    int _wake_fd[2] = {-1, -1};
    uint16_t _port = 0;
    std::string _secret;
    std::atomic<int> _exit_code{0};
    report_fn _on_report;
    alloc_fn _on_alloc;
    std::thread _thread;
    uint32_t _rdv_nodes = 0;
    std::map<uint32_t, std::pair<int, std::string>> _rdv;  // node id -> (connection, address)
};

// slurmstepd side: deliver one report to the agent at host:port and wait for its
// acknowledgement (bounded by timeout_ms), so that the caller knows srun has it.
Status send_agent_report(const sockaddr_storage &agent_host, uint16_t port, const std::string &secret,
                         const agent_report &report, int timeout_ms = 10000);

// slurmstepd side: report node `node_id` of `nnodes` with its transport `address` and wait for
// everyone's addresses (index = node id). Polls `cancel` so a stopping daemon is not held.
Result<std::vector<std::string>> agent_rendezvous(const sockaddr_storage &agent_host, uint16_t port,
                                                  const std::string &secret, uint32_t node_id, uint32_t nnodes,
                                                  const std::string &address, int timeout_ms,
                                                  const std::atomic<bool> *cancel = nullptr);

// Environment variables srun hands to slurmstepd (removed from the tasks' environment).
inline constexpr const char *kAgentPortEnv = "SLURM_PMIXCPP_AGENT_PORT";
inline constexpr const char *kAgentSecretEnv = "SLURM_PMIXCPP_AGENT_SECRET";

}  // namespace pmixcpp
