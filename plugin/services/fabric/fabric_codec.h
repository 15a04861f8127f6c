// The messages of PMIx_Fabric_register / _update between a node server and srun's fabric service
// (fabric_srun.h): the request (service fabric), the watch of the topology's generation (service
// fabric_watch), and the step nodes' switch groups srun hands slurmstepd for the tree fence. No
// I/O; both sides include it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "fabric/fabric_wire.h"
#include "status.h"

namespace pmixcpp::fabric {

inline constexpr uint32_t kFabricMagic = 0x42465850;  // "PXFB"

// The client request (shared/fabric/fabric_wire.h).
using sched::decode_client_request;
using sched::encode_client_request;
using sched::fabric_op;
using sched::fabric_request;

// Agent body: u32 magic, then the client request.
Result<std::vector<uint8_t>> encode_agent_request(const fabric_request &r);
// A request or a watch (below).
bool is_fabric_body(std::span<const uint8_t> body);
Status decode_agent_request(std::span<const uint8_t> body, fabric_request *r);
// The agent's reply: agent::reply (i32 status, str message, bytes body); body = the
// encoded wire::info_reply of sched::matrix_to_results, which the server relays as its reply.

// Fabric updates for application processes: after the first successful PMIx_Fabric_register on
// its node, a server watches srun's side: body u32 magic "PXFW", u64 the topology generation it
// knows (0 = none yet). srun answers (agent_reply body: u64 generation) once its generation
// differs (at once for 0); the server then raises PMIX_FABRIC_UPDATED for its local processes
// (unless it knew none yet) and watches again. The generation counts changes of Slurm's switch
// records, which srun polls (slurm_load_topo, as the user) every PMIxCppFabricPoll seconds from
// the first watch on: nothing is polled for a step that never registers a fabric.
inline constexpr uint32_t kFabricWatchMagic = 0x57465850;  // "PXFW"
std::vector<uint8_t> encode_watch(uint64_t known_generation);
bool is_watch_body(std::span<const uint8_t> body);
Status decode_watch(std::span<const uint8_t> body, uint64_t *known_generation);

// The tree fence follows the switch topology (coll/engines.h): srun computes each step node's
// group (its leaf switch, numbered in order of first appearance among the step's nodes; a node
// outside the tree is a group of its own) and hands it to slurmstepd in this variable, run-length
// encoded: "g[*count],..." in step node order, e.g. "0*2,1*2".
inline constexpr const char *kNodeGroupsEnv = "SLURM_PMIXCPP_NODE_GROUPS";
// Empty when the topology has no switch, the tree cannot be built, or every node is in one group.

std::string encode_node_groups(const std::vector<uint32_t> &groups);
// PMIX_ERR_BAD_PARAM unless the text describes exactly `nnodes` groups.
Result<std::vector<uint32_t>> decode_node_groups(const std::string &text, size_t nnodes);

}  // namespace pmixcpp::fabric
