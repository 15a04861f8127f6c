// The messages between the node servers (slurmstepd) and srun's agent, as typed codecs.
//
// Every request is one frame (shared/wire/frame.h) whose header type is the service it is for
// (`service` below); its payload is that service's body, encoded by the service's own codec
// (plugin/common/*: spawn_request.h, session_store.h, xstep.h, fabric_request.h, alloc_request.h,
// and the report and rendezvous bodies below). Every answer, whatever the service, is one
// `kReplyFrame` frame whose payload is one `reply` (i32 status, str message, bytes body). The
// frame header's id numbers the call: a reply carries its request's id, so one connection holds
// several calls at once, answered in any order (plugin/agent/stepd/agent_link.h). The
// connection is authenticated first (plugin/net/handshake.h, purpose agent); srun and
// slurmstepd are always the same build, so the numbering needs no compatibility beyond it.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "status.h"

namespace pmixcpp::agent {

// The services of srun's agent: the frame header's type of a request.
enum class service : uint16_t {
    report = 1,        // a node reports a setup failure, a PMIx_Abort, lost nodes (report below)
    rendezvous = 2,    // a node server's transport address; answered with every node's
    alloc = 3,         // PMIx_Allocation_request / queries (alloc_request.h, alloc_bridge.h)
    spawn = 4,         // PMIx_Spawn (spawn_request.h)
    spawn_watch = 5,   // the end of a spawned step (spawn_request.h encode_watch)
    session = 6,       // the job's store: publish / lookup / unpublish (session_store.h)
    connect = 7,       // PMIx_Connect's rendezvous between steps (session_store.h)
    fabric = 8,        // PMIx_Fabric_register / update (fabric_request.h)
    fabric_watch = 9,  // fabric updates (fabric_request.h encode_watch)
    xstep = 10,        // messages between the job's steps (xstep.h)
};
inline constexpr uint16_t kServiceCount = 11;  // ids are below this
// The type of every answer frame.
inline constexpr uint16_t kReplyFrame = 0x100;
// Largest payload of a request or a reply.
inline constexpr uint32_t kMaxPayload = 16u << 20;
// Calls one connection may have in flight at once, on either side (the slurmstepd's own lanes
// hold fewer: agent_client.h); srun answers one more PMIX_ERR_OUT_OF_RESOURCE at once.
inline constexpr uint32_t kMaxCallsPerConnection = 1024;

const char *to_string(service s);
// The service a request frame's type names; nullopt for anything else.
std::optional<service> service_of(uint16_t frame_type);

// The one answer of every service.
struct reply {
    int32_t status = 0;
    std::string message;
    std::vector<uint8_t> body;
};
Result<std::vector<uint8_t>> encode_reply(const reply &r);
Status decode_reply(std::span<const uint8_t> bytes, reply *r);

// Whole frames, ready to send; `id` numbers the call (the reply carries the request's).
Result<std::vector<uint8_t>> request_frame(service s, std::span<const uint8_t> body, uint32_t id = 1);
Result<std::vector<uint8_t>> reply_frame(const reply &r, uint32_t id = 1);
// A reply already encoded (encode_reply), e.g. one relayed from another srun.
Result<std::vector<uint8_t>> reply_frame_of(std::span<const uint8_t> encoded_reply, uint32_t id);

// service::report: slurmstepd tells srun what the user must see and what srun's exit code must
// say. Body: u16 kind, i32 status, str node, str message. Answered with an empty reply.
struct report {
    // node_done: the step ended on the reporting node after other nodes of the step were lost
    // (message: their names, comma-separated).
    enum class kind : uint16_t { setup_failed = 1, abort = 2, node_done = 3 };
    kind what = kind::setup_failed;
    int32_t status = 1;    // exit code srun should return (non-zero)
    std::string node;      // reporting node
    std::string message;   // shown to the user by srun
};
inline constexpr uint32_t kMaxReport = 1u << 16;
Result<std::vector<uint8_t>> encode_report(const report &r);  // the message is cut to kMaxReport / 2
// A status of 0 becomes 1 (a report always fails the step).
Status decode_report(std::span<const uint8_t> body, report *r);

// service::rendezvous: u32 node id, u32 node count, str address. Answered, once every node
// reported, with a reply whose body is the table: u32 count, count x str address.
struct rendezvous_request {
    uint32_t node = 0;
    uint32_t nnodes = 0;
    std::string address;
};
inline constexpr size_t kMaxAddress = 1u << 16;
Result<std::vector<uint8_t>> encode_rendezvous(const rendezvous_request &r);
// Also refuses nnodes 0 and node >= nnodes.
Status decode_rendezvous(std::span<const uint8_t> body, rendezvous_request *r);
Result<std::vector<uint8_t>> encode_table(const std::vector<std::string> &addresses);
// `expected`: the node count the caller reported (anything else is refused).
Status decode_table(std::span<const uint8_t> body, uint32_t expected, std::vector<std::string> *addresses);

}  // namespace pmixcpp::agent
