// Where the answers to pmixcpp's clients go: the protocol engine's (engine.h), the request
// engine's (requests.h) and the services' (alloc.h, groups.h, fabric_relay.h). The I/O shell
// implements it with the client sockets (server.cc: frames queued and written), a unit test with
// vectors (tests/server/vector_sink.h). Calls come from the loop thread; an implementation only
// queues, it never calls back into an engine.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "fence_tracker.h"
#include "modex_snapshot.h"
#include "status.h"
#include "wire/codec.h"

namespace pmixcpp::server {

class reply_sink {
public:
    virtual ~reply_sink() = default;
    // The reply to request `request_id` of connection `conn`: a status, a message when it failed,
    // and on success the body `body` writes (none: a bare reply). A connection that is gone gets
    // nothing.
    virtual void reply(uint64_t conn, uint32_t request_id, pmix_status_t status, const std::string &message,
                       const std::function<Status(wire::Writer &)> &body = {}) = 0;
    // The fences that completed or failed: each waiter gets its reply (on success with the modex
    // snapshot of the node's data, shared/PROTOCOL.md).
    virtual void fence_outcomes(const std::vector<fence_outcome> &outcomes) = 0;
    // A reply naming the modex snapshot (shared/PROTOCOL.md, "Modex snapshot"): its file's id and
    // segments, with the file's descriptor when the client was not sent that file before (or
    // `resend`) and has few unread; nullptr: none ("", the client asks the server).
    virtual void snapshot(uint64_t conn, uint32_t request_id, const modex_snapshot *snapshot, bool resend) = 0;
    // A failed reply after which the connection is closed (a refused connect).
    virtual void reply_and_close(uint64_t conn, uint32_t request_id, pmix_status_t status,
                                 const std::string &message) = 0;
    // A request that breaks the protocol (a payload that does not decode): its connection is
    // closed with `reason`, nothing more of it is handled.
    virtual void refuse(uint64_t conn, const std::string &reason) = 0;
};

}  // namespace pmixcpp::server
