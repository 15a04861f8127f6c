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

// What a body is for; the transport does not look inside.
// `link` is the transports' own (hello/goodbye between two servers; never handed up);
// `node_down` carries "node X is lost" from the node that noticed to the others; `node_probe`
// asks a node that a collective timed out on whether its server still answers; `node_query`
// asks the live nodes whether a node that refused us said goodbye to them (dead or finished?).
enum class channel : uint16_t {
    coll = 1, dmodex_request = 2, dmodex_reply = 3, event = 4, link = 5, node_down = 6, node_probe = 7,
    node_query = 8
};
// Dynamic-process channels (plugin/server/dyn.h), numbered apart from the core ones.
inline constexpr uint16_t kChannelPubsubRequest = 16;  // a publish/lookup/unpublish for node 0
inline constexpr uint16_t kChannelPubsubReply = 17;    // node 0's answer
inline constexpr uint16_t kChannelJobControl = 18;     // signal ranks of the receiving node
// Group bootstrap (plugin/server/groups.h).
inline constexpr uint16_t kChannelGroupBootstrap = 19;        // a member's entry, for node 0
inline constexpr uint16_t kChannelGroupBootstrapResult = 20;  // node 0's answer to a member node
// The step's process table (plugin/server/proc_table.h).
inline constexpr uint16_t kChannelProcTableRequest = 21;  // "your ranks' pids and states"
inline constexpr uint16_t kChannelProcTableReply = 22;    // the answer, or a node's final rows
// A spawn's process sets (plugin/server/groups.h), from the spawner's node to the step's others.
inline constexpr uint16_t kChannelSpawnPsets = 23;
const char *to_string(channel c);

struct step_identity {
    std::string nspace;
};

struct envelope {
    uint32_t src_node = 0;
    uint16_t chan = 0;
    std::vector<uint8_t> body;
};

// A complete frame (header + payload), ready to send.
Result<std::vector<uint8_t>> encode_node_frame(const step_identity &id, uint32_t src_node, channel chan,
                                               std::span<const uint8_t> body);

// Check and decode the payload of a kNodeFrameType frame: envelope version, right namespace,
// source node < nnodes, known channel, nothing trailing.
Status decode_node_payload(std::span<const uint8_t> payload, const step_identity &id, uint32_t nnodes,
                           envelope *out);

// A whole frame in one buffer (UCX active messages carry exactly one).
Status decode_node_frame(std::span<const uint8_t> frame, const step_identity &id, uint32_t nnodes, envelope *out);

}  // namespace pmixcpp::net
