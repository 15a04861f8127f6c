// The messages between the node servers (slurmstepd) and srun's agent, as typed codecs.
//
// Every request is one frame (shared/wire/frame.h) whose header type is the service it is for
// (`service_id` below); its payload is that service's body, encoded by the service's own codec
// (plugin/services/<service>/<service>_codec.h; the report and rendezvous bodies below). Every
// answer, whatever the service, is one `kReplyFrame` frame whose payload is one `reply` (i32 status, str message, bytes body). The
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

// A service of srun's agent: the frame header's type of a request. The agent serves two of its
// own (kReport, kRendezvous); every other id is a service of the layer above, numbered in one
// enum there (plugin/services/service_ids.h), which the agent carries without knowing it: srun's
// side dispatches it through the service table its services registered in
// (plugin/agent/srun/service_table.h), and both sides ask the layer above's `service_names` what
// to call it in a log line.
using service_id = uint16_t;
inline constexpr service_id kReport = 1;      // a node reports a setup failure, a PMIx_Abort, lost nodes (report below)
inline constexpr service_id kRendezvous = 2;  // a node server's transport address; answered with every node's
inline constexpr service_id kFirstServiceAbove = 3;  // the layer above's ids start here
inline constexpr service_id kMaxServiceId = 63;      // ids are 1..kMaxServiceId
// The type of every answer frame.
inline constexpr uint16_t kReplyFrame = 0x100;

// The layer above's services as the agent sees them: whether an id is one, its name, and which
// of slurmstepd's lanes bounds its calls (plugin/agent/stepd/agent_client.h: a flood of one kind
// of call, allocations that wait for hours or cross-step inboxes, starves no other).
class service_names {
public:
    static constexpr unsigned kLanes = 3;
    // nullptr: no service of the layer above has this id.
    virtual const char *name_of(service_id id) const = 0;
    // 0 .. kLanes - 1.
    virtual unsigned lane_of(service_id id) const = 0;

protected:
    ~service_names() = default;
};

// "report" and "rendezvous" for the agent's own, the layer above's name (`above` may be null),
// else "unknown".
const char *service_name(const service_names *above, service_id id);
// Whether a request frame's type names a service: the agent's own, or one `above` names.
bool is_service(const service_names *above, uint16_t frame_type);

// Largest payload of a request or a reply.
inline constexpr uint32_t kMaxPayload = 16u << 20;
// Calls one connection may have in flight at once, on either side (the slurmstepd's own lanes
// hold fewer: agent_client.h); srun answers one more PMIX_ERR_OUT_OF_RESOURCE at once.
inline constexpr uint32_t kMaxCallsPerConnection = 1024;

// The one answer of every service.
struct reply {
    int32_t status = 0;
    std::string message;
    std::vector<uint8_t> body;
};
Result<std::vector<uint8_t>> encode_reply(const reply &r);
Status decode_reply(std::span<const uint8_t> bytes, reply *r);

// Whole frames, ready to send; `id` numbers the call (the reply carries the request's).
Result<std::vector<uint8_t>> request_frame(service_id s, std::span<const uint8_t> body, uint32_t id = 1);
Result<std::vector<uint8_t>> reply_frame(const reply &r, uint32_t id = 1);
// A reply already encoded (encode_reply), e.g. one relayed from another srun.
Result<std::vector<uint8_t>> reply_frame_of(std::span<const uint8_t> encoded_reply, uint32_t id);

// kReport: slurmstepd tells srun what the user must see and what srun's exit code must
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

// kRendezvous: u32 node id, u32 node count, str address. Answered, once every node
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
