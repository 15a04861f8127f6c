// Dynamic processes for OpenPMIx clients of the native listener (server_native.cc): SPAWNNB,
// PUBLISHNB, LOOKUPNB, UNPUBLISHNB, CONNECTNB and DISCONNECTNB become the server's own requests (the same dyn handlers as pmixcpp's clients: dyn.h, connect.h), and the
// replies of those handlers are re-encoded in OpenPMIx's format (plugin/native/requests_dyn.h).
// A connect's reply carries every other namespace's data as that namespace's job blob (the REQ
// format: job-level keys, one pmix.pblob per rank), which the client's gds/hash stores.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "../native/bfrops.h"
#include "status.h"
#include "wire/messages.h"

namespace pmixcpp::server {

// Is `cmd` one of the commands this file translates?
bool native_dyn_command(uint8_t cmd);

// The request as the server's own (message type and payload); an error = malformed.
struct native_dyn_request {
    wire::msg_type type = wire::msg_type::spawn;
    std::vector<uint8_t> payload;
};
Result<native_dyn_request> native_dyn_decode(uint8_t cmd, native::unpacker &up, size_t max_procs);

// One of our own request messages as a native_dyn_request (also for native_grp.h).
template <typename M>
Result<native_dyn_request> as_request(wire::msg_type type, const M &m) {
    wire::Writer w;
    PMIXCPP_RETURN_IF_ERROR(wire::encode(w, m));
    native_dyn_request r;
    r.type = type;
    r.payload = w.take();
    return r;
}

// The OpenPMIx reply of a successful request from the body of our own reply.
Result<std::vector<uint8_t>> native_dyn_reply(uint8_t cmd, native::int_flavour f, std::span<const uint8_t> body);

// The reply of a successful spawn with the children's job data: `jobdata` is the child step's
// job data as its node-0 server sent it (wire::encode_jobdata, through srun: not trusted),
// checked to be the job data of `nspace` (its job level names it), then given as OpenPMIx's
// server gives a spawned job's data (the job blob of native_jobdata.h, less the addresses of the
// child's own server). An error = malformed, or another namespace's data.
Result<std::vector<uint8_t>> native_spawn_reply(native::int_flavour f, const std::string &nspace,
                                                std::span<const uint8_t> jobdata);

}  // namespace pmixcpp::server
