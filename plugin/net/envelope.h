// The envelope of every node-to-node message: one frame (shared/wire/frame.h) of type
// kNodeFrameType whose payload is
//   u8 envelope version (kEnvelopeVersion), str nspace, u32 source node, u16 channel, bytes body
// No key is in it: a TCP connection opens with the handshake of handshake.h, and every frame
// (TCP and UCX) carries a MAC trailer keyed by the link key of identity.h. The receiver checks the version and the
// namespace before the body reaches anyone; a message that fails a check is dropped by the
// transport with a logged reason. No I/O here: pure encode/decode, fuzzed by
// tests/fuzz/fuzz_node.cc.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "status.h"

namespace pmixcpp::net {

inline constexpr uint16_t kNodeFrameType = 0x100;
inline constexpr uint32_t kMaxNodePayload = 256u << 20;
// 1 carried the secret in clear; 2 has none.
inline constexpr uint8_t kEnvelopeVersion = 2;

// What a body is for is the layer above's business: net carries a channel id and bytes. The ids
// and their handlers belong to the server (plugin/server/node_channels.h, one enum and a
// registration table); net's only own channel is `link` (hello/goodbye between two servers,
// liveness.h), which is never handed up.
using channel_id = uint16_t;
inline constexpr channel_id kLinkChannel = 5;

// The layer above's channels as the transport sees them: whether an id is one (a frame on any
// other id is refused like any malformed frame) and its name for log lines.
class channel_names {
public:
    // nullptr: no channel of the layer above has this id.
    virtual const char *name_of(channel_id id) const = 0;

protected:
    ~channel_names() = default;
};

// "link" for the transports' own channel, the layer above's name, else "unknown".
const char *channel_name(const channel_names *above, channel_id id);

struct step_identity {
    std::string nspace;
};

struct envelope {
    uint32_t src_node = 0;
    uint16_t chan = 0;
    std::vector<uint8_t> body;
};

// A complete frame (header + payload), ready to send.
Result<std::vector<uint8_t>> encode_node_frame(const step_identity &id, uint32_t src_node, channel_id chan,
                                               std::span<const uint8_t> body);

// Check and decode the payload of a kNodeFrameType frame: envelope version, right namespace,
// source node < nnodes, a known channel (kLinkChannel or one `above` names), nothing trailing.
Status decode_node_payload(std::span<const uint8_t> payload, const step_identity &id, uint32_t nnodes,
                           const channel_names *above, envelope *out);

// A whole frame in one buffer (UCX active messages carry exactly one).
Status decode_node_frame(std::span<const uint8_t> frame, const step_identity &id, uint32_t nnodes,
                         const channel_names *above, envelope *out);

}  // namespace pmixcpp::net
