// slurmstepd's one client of srun's agent (plugin/agent/proto/agent_proto.h). Every call of the
// node server (allocation, spawn, the job's store, connect, fabric, cross-step), the address
// rendezvous and the reports go through it:
//  - call(): one request on the node's one connection to srun's agent (agent_link.h: opened on
//    first need, authenticated once, many calls at once answered in any order, closed when idle),
//    the reply handed to `done` on the link's I/O thread: `done` must not block. Calls are
//    bounded per lane (the lane of a service its `service_names` gives: allocation, cross-step,
//    every other; kMaxInFlight each): a call beyond that is answered PMIX_ERR_OUT_OF_RESOURCE at
//    once.
//  - call_sync(): the same, waited for (from a thread of the caller's own, never the server's
//    loop nor a `done`).
//  - rendezvous() and report(): a connection of their own each, as before the link (the
//    rendezvous waits on it for every node; a report may come after the gate closed).
//  - shutdown(): the gate. Calls in flight end at once with PMIX_ERR_JOB_CANCELED ("the step is
//    ending"), new calls are refused (PMIX_ERR_NOT_AVAILABLE), the I/O thread is joined.
#pragma once

#include <sys/socket.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "../proto/agent_io.h"
#include "../proto/agent_proto.h"
#include "agent_link.h"
#include "status.h"
#include "../../common/workers.h"

namespace pmixcpp::agent {

class client {
public:
    using done_fn = std::function<void(Result<reply>)>;
    using table_fn = std::function<void(Result<std::vector<std::string>>)>;
    static constexpr size_t kMaxInFlight = 256;  // per lane

    // `credential` makes each connection's slurmstepd credential (agent_io.h); `names` (the
    // layer above's services, may be null: every call in one lane) says each service's lane
    // and its name in errors.
    client(const sockaddr_storage &agent_host, uint16_t port, agent_io::call_credential_fn credential,
           const service_names *names = nullptr, call_link::options link_options = {});
    ~client();  // shutdown()
    client(const client &) = delete;
    client &operator=(const client &) = delete;

    // One request, blocking (from a thread of the caller's own, never the server's loop).
    Result<reply> call_sync(service_id s, std::span<const uint8_t> body, int timeout_ms);
    // One request on the link; `done` runs on its I/O thread (must not block), or at once when
    // refused.
    void call(service_id s, std::vector<uint8_t> body, int timeout_ms, done_fn done);
    // The link's counters (connections opened, idle closes, ...).
    call_link::counters link_stats() const { return _link.stats(); }

    // Deliver a report and wait for srun's acknowledgement (bounded by timeout_ms).
    Status report(const agent::report &r, int timeout_ms = 10000);
    // Report this node's transport address (node `node` of `nnodes`) and hand everyone's
    // (index = node id) to `ready`, on a worker: returns at once.
    void rendezvous(uint32_t node, uint32_t nnodes, std::string address, int timeout_ms, table_fn ready);

    // The gate (idempotent): cancel what is in flight, refuse new calls, join the threads.
    void shutdown();
    bool stopping() const { return _stopping.load(); }
    const std::atomic<bool> *gate() const { return &_stopping; }

private:
    // The layer above's lanes, then one of the agent's own services.
    static constexpr size_t kOwnLane = service_names::kLanes;
    size_t lane_of(service_id s) const;

    const service_names *_names;

    sockaddr_storage _host;
    uint16_t _port;
    agent_io::call_credential_fn _credential;
    std::atomic<bool> _stopping{false};
    std::array<std::atomic<size_t>, kOwnLane + 1> _in_flight{};
    bounded_workers _rendezvous{1};
    call_link _link;
};

// The blocking call itself, for a peer without a client (tests): `cancel` may be null.
Result<reply> call_agent(const sockaddr_storage &agent_host, uint16_t port, const agent_io::call_credential_fn &credential, service_id s,
                         std::span<const uint8_t> body, int timeout_ms, const std::atomic<bool> *cancel = nullptr);

}  // namespace pmixcpp::agent
