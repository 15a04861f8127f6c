// The messages of the job's store beside srun (session_srun.h) between a node server and srun's
// agent: publish / lookup / unpublish of PMIX_RANGE_SESSION data (service session) and the
// rendezvous of PMIx_Connect / Disconnect between the steps of a job (service connect). No I/O;
// both sides include it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "../../agent/proto/agent_proto.h"
#include "status.h"
#include "wire/messages.h"

namespace pmixcpp::session {

inline constexpr uint32_t kSessionMagic = 0x42505850;  // "PXPB"
inline constexpr int kMaxWaitSec = 3600;                 // a PMIX_WAIT lookup without timeout

// Agent request: u32 magic, u8 type (20 publish, 21 lookup, 22 unpublish, 0 rank left), str nspace,
// u32 rank, bytes the client's payload. Reply: the agent's one reply (agent_proto.h).
struct agent_request {
    uint8_t type = 0;
    std::string nspace;
    uint32_t rank = 0;
    std::vector<uint8_t> payload;
};
using agent_reply = agent::reply;
Result<std::vector<uint8_t>> encode_request(const agent_request &r);
bool is_session_body(std::span<const uint8_t> body);
Status decode_request(std::span<const uint8_t> body, agent_request *r);

// The rendezvous of PMIx_Connect / Disconnect between the steps of a job (plugin/server/connect.h):
// node server <-> srun's agent, magic "PXCN". Each node's contribution becomes a file of the
// job's directory; the reply (pieces) is every contribution of every namespace of the set.
inline constexpr uint32_t kConnectMagic = 0x4e435850;
struct rendezvous_request {
    std::string key;                   // "<op>.<set signature>.<sequence>"
    std::string nspace;                // the contributor's namespace
    uint32_t node = 0;                 // its node index in its step
    uint32_t nodes = 0;                // contributions expected from its namespace
    std::vector<std::string> nspaces;  // every namespace of the set
    uint32_t timeout_ms = 0;
    std::vector<uint8_t> contribution;
};
struct rendezvous_piece {
    std::string nspace;
    uint32_t node = 0;
    std::vector<uint8_t> contribution;
};
Result<std::vector<uint8_t>> encode(const rendezvous_request &r);
bool is_rendezvous_body(std::span<const uint8_t> body);
Status decode(std::span<const uint8_t> body, rendezvous_request *r);
Result<std::vector<uint8_t>> encode_pieces(const std::vector<rendezvous_piece> &p);
Status decode_pieces(std::span<const uint8_t> body, std::vector<rendezvous_piece> *p);

}  // namespace pmixcpp::session
