// The srun-side agent: a small TCP listener that srun's side of the plugin runs for the life of
// a step, the far end of plugin/agent/stepd/agent_client.h. Each request names its service in
// its frame header (plugin/agent/proto/agent_proto.h); the agent serves two itself and hands the
// others to the service table (service_table.h). Its own: the reports of slurmstepd, what the
// user must see and what srun's exit code must say (a step that failed to set up on a node, a
// PMIx_Abort: status and message), and the address rendezvous (below). Knows nothing of Slurm.
//
// Every connection opens with the handshake of plugin/net/handshake.h (purpose agent): the hello
// carries a slurmstepd credential (plugin/net/identity.h) that `keys` opens: signed by root or
// SlurmUser for this step, never seen before, readable by the job's user only; the key inside
// keys the handshake, so the slurmstepd knows it talks to a process of the job's user that could
// open it, and the agent that the caller is this step's slurmstepd. Until then the agent
// reads only the handshake's bytes, into a fixed buffer; unauthenticated connections are bounded
// (plugin/net/listener_guard.h: caps, a 3 s deadline, rate-limited refusal lines, a pause when
// accept() runs out of descriptors). It listens on the addresses the step's nodes reach srun at
// (start()), not on every interface. One thread serves every connection with poll(): a slow or
// silent peer holds nobody else up.
//
// An authenticated connection carries a slurmstepd's calls for as long as it keeps it open
// (plugin/agent/stepd/agent_link.h): each request frame's id numbers its call; the handler gets
// the call's responder (plugin/agent/proto/responder.h) and answers from a thread of its own
// whenever it is done, while the loop reads the next requests. At most kMaxCallsPerConnection
// calls in flight per connection (one more is answered PMIX_ERR_OUT_OF_RESOURCE); a frame begun
// must be complete within 5 s.
//
// It is also the rendezvous of the step's node servers: each slurmstepd reports (node id, node
// count, its node-transport address) on a connection it keeps open; once every node has
// reported, each gets the full table on that connection. The addresses are signed node records
// (plugin/net/identity.h) the agent cannot read or change: it relays them as they came.
#pragma once

#include <netinet/in.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "../../net/handshake.h"
#include "../../net/listener_guard.h"
#include "../proto/agent_proto.h"
#include "service_table.h"
#include "status.h"

namespace pmixcpp::wire {
struct Frame;
}

namespace pmixcpp {

class srun_agent {
public:
    using report_fn = std::function<void(const agent::report &)>;

    // Listen on an ephemeral TCP port, on each address of `bind_addresses` (the same port on
    // all; IPv4 or IPv6 literals; empty: every interface), and serve on a thread of its own.
    // `on_report` runs on that thread.
    // `keys` opens the credential of each connection's hello (net::open_agent_credential).
    static Result<std::unique_ptr<srun_agent>> start(report_fn on_report, net::auth::key_source keys,
                                                     std::vector<std::string> bind_addresses = {});
    // The services requests are dispatched to: fill it right after start (service_table.h).
    agent::service_table &services() { return _services; }
    ~srun_agent();
    srun_agent(const srun_agent &) = delete;
    srun_agent &operator=(const srun_agent &) = delete;

    uint16_t port() const { return _port; }
    // The first non-zero status reported (0 if none): srun's exit code.
    int exit_code() const { return _exit_code.load(); }
    // Stop listening and join the thread (idempotent).
    void stop();

    struct conn;  // one accepted connection (srun_agent.cc)

private:
    srun_agent();
    Status listen_on(const std::vector<std::string> &bind_addresses);
    void run();
    void accept_batch();
    void serve(uint64_t id);  // readable
    void serve_waiting_handshakes();  // connections not yet authenticated that have bytes to read
    // A complete frame on an authenticated connection. True: the connection was handed on
    // (rendezvous, a service) or closed; false: keep reading.
    bool handle_frame(conn &c, const wire::Frame &f);
    void drop(uint64_t id, bool close_fd = true);
    void rendezvous_complete();

    std::vector<int> _listen_fds;
    int _wake_fd[2] = {-1, -1};
    uint16_t _port = 0;
    net::auth::key_source _keys;  // the agent handshake's
    std::atomic<int> _exit_code{0};
    report_fn _on_report;
    agent::service_table _services;
    std::thread _thread;
    uint32_t _rdv_nodes = 0;
    std::map<uint32_t, std::pair<std::shared_ptr<agent::connection_out>, std::string>> _rdv;  // node id -> (connection, address)
    std::map<uint64_t, std::unique_ptr<conn>> _conns;
    uint64_t _next_conn = 1;
    net::listener_guard _guard;
    std::optional<std::chrono::steady_clock::time_point> _accept_paused_until;
};

// Environment variables srun hands to slurmstepd (removed from the tasks' environment).
inline constexpr const char *kAgentPortEnv = "SLURM_PMIXCPP_AGENT_PORT";

}  // namespace pmixcpp
