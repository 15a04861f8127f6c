// slurmstepd's one client of srun's agent (plugin/agent/proto/agent_proto.h). Every call of the
// node server (allocation, spawn, the job's store, connect, fabric, cross-step), the address
// rendezvous and the reports go through it:
//  - call_sync(): one request on a connection of its own (connect, authenticate, send, wait for
//    the one reply), bounded by its timeout and by the shutdown gate;
//  - call(): the same on a worker thread, the reply handed to `done` on that thread. Workers are
//    bounded per lane (allocation, spawn and the store, cross-step: kMaxInFlight each; the
//    rendezvous: one): a call beyond that is answered PMIX_ERR_OUT_OF_RESOURCE at once.
//  - shutdown(): the gate. Calls in flight see it within 100 ms and end with
//    PMIX_ERR_JOB_CANCELED ("the step is ending"), new calls are refused
//    (PMIX_ERR_NOT_AVAILABLE), every worker is joined. The same for every service.
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
#include "status.h"
#include "workers.h"

namespace pmixcpp::agent {

class client {
public:
    using done_fn = std::function<void(Result<reply>)>;
    using table_fn = std::function<void(Result<std::vector<std::string>>)>;
    static constexpr size_t kMaxInFlight = 256;  // per lane

    // `credential` makes each call's slurmstepd credential (agent_io.h).
    client(const sockaddr_storage &agent_host, uint16_t port, agent_io::call_credential_fn credential);
    ~client();  // shutdown()
    client(const client &) = delete;
    client &operator=(const client &) = delete;

    // One request, blocking (from a thread of the caller's own, never the server's loop).
    Result<reply> call_sync(service s, std::span<const uint8_t> body, int timeout_ms);
    // One request on a worker; `done` runs on that thread, or at once when refused.
    void call(service s, std::vector<uint8_t> body, int timeout_ms, done_fn done);

    // Deliver a report and wait for srun's acknowledgement (bounded by timeout_ms).
    Status report(const agent::report &r, int timeout_ms = 10000);
    // Report this node's transport address (node `node` of `nnodes`) and hand everyone's
    // (index = node id) to `ready`, on a worker: returns at once.
    void rendezvous(uint32_t node, uint32_t nnodes, std::string address, int timeout_ms, table_fn ready);

    // The gate (idempotent): cancel what is in flight, refuse new calls, join the workers.
    void shutdown();
    bool stopping() const { return _stopping.load(); }
    const std::atomic<bool> *gate() const { return &_stopping; }

private:
    enum lane : size_t { lane_alloc, lane_calls, lane_xstep, lane_rendezvous, lane_count };
    static lane lane_of(service s);
    static const char *what_of(service s);

    sockaddr_storage _host;
    uint16_t _port;
    agent_io::call_credential_fn _credential;
    std::atomic<bool> _stopping{false};
    std::array<std::unique_ptr<bounded_workers>, lane_count> _lanes;
};

// The blocking call itself, for a peer without a client (tests): `cancel` may be null.
Result<reply> call_agent(const sockaddr_storage &agent_host, uint16_t port, const agent_io::call_credential_fn &credential, service s,
                         std::span<const uint8_t> body, int timeout_ms, const std::atomic<bool> *cancel = nullptr);

}  // namespace pmixcpp::agent
