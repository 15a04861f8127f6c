// PMIx_Fabric_register/update of the clients: srun's side has the topology and computes the
// matrix (plugin/services/fabric/fabric_codec.h); its answer is relayed to the client as it is. From the
// first successful registration on, one watch at srun's side is always open; a new generation of
// the fabric raises PMIX_FABRIC_UPDATED (ops.updated). No I/O of its own; the loop never waits.
#pragma once

#include <pmix_common.h>

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "../services/service_ids.h"
#include "status.h"

namespace pmixcpp::server {

struct fabric_relay_ops {
    // A request to srun's side (server_options::agent: services fabric and fabric_watch); `done`
    // may run on any thread. Empty:
    // requests are refused with PMIX_ERR_NOT_SUPPORTED.
    using done_fn = std::function<void(int status, const std::string &message, std::vector<uint8_t> body)>;
    std::function<void(services::service service, std::vector<uint8_t> body, int timeout_ms, done_fn done)> request;
    // Run on the loop thread.
    std::function<void(std::function<void()>)> post;
    // The reply to a client's request (body: only with PMIX_SUCCESS).
    std::function<void(uint64_t conn, uint32_t request_id, pmix_status_t status, const std::string &message,
                       std::span<const uint8_t> body)>
        reply;
    // The fabric changed.
    std::function<void()> updated;
};

class fabric_relay {
public:
    fabric_relay(std::string nspace, fabric_relay_ops ops) : _nspace(std::move(nspace)), _ops(std::move(ops)) {}
    // A client's request; fails (and nothing was done) if its payload is malformed.
    Status on_client(uint64_t conn, uint32_t request_id, std::span<const uint8_t> payload);

private:
    void watch();

    std::string _nspace;
    fabric_relay_ops _ops;
    bool _watching = false;
    uint64_t _generation = 0;  // 0 = not known yet
};

}  // namespace pmixcpp::server
