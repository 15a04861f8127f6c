// PMIx_Spawn between slurmstepd and srun: the request a node server sends to srun's agent
// (service spawn: the parent proc and the client's spawn payload), its reply (the new namespace),
// the watch of a spawned step (service spawn_watch), and the environment the launcher gives the
// child step. No I/O; both sides include it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "../../agent/proto/agent_proto.h"
#include "status.h"
#include "wire/messages.h"

namespace pmixcpp::spawn {

inline constexpr uint32_t kSpawnMagic = 0x50535850;  // "PXSP"
// Set in the child srun's environment by the launcher.
inline constexpr const char *kReportFdEnv = "PMIXCPP_SPAWN_REPORT_FD";
inline constexpr const char *kParentEnv = "PMIXCPP_SPAWN_PARENT";  // "<nspace>:<rank>"
// Set by the parent's server in a spawn of one app: the parent step's size (its process sets
// across both steps, plugin/server/groups.h).
inline constexpr const char *kParentSizeEnv = "PMIXCPP_SPAWN_PARENT_SIZE";
// Set beside it when the parent step has other spawned steps still running: their namespaces
// and sizes, "<nspace>:<size>[,<nspace>:<size>...]" in the order they were spawned (members of
// the union set between the parent and the child, plugin/server/groups.h).
inline constexpr const char *kPeersEnv = "PMIXCPP_SPAWN_PEERS";
// How long the launcher waits for the new step to exist.
inline constexpr int kStepStartTimeoutSec = 120;

struct agent_spawn_request {
    std::string parent_nspace;
    uint32_t parent_rank = 0;
    wire::spawn_request request;
};
struct agent_spawn_reply {
    int32_t status = 0;
    std::string message;
    std::string nspace;
};

// Watch a spawned step (magic "PXSW"): `u32 magic, str child nspace`; answered when that step's
// srun ends, as an agent::reply whose body is `i32 exit code` of the child srun (status
// PMIX_ERR_NOT_FOUND: not a step this srun spawned).
inline constexpr uint32_t kWatchMagic = 0x57535850;
Result<std::vector<uint8_t>> encode_watch(const std::string &child_nspace);
bool is_watch_body(std::span<const uint8_t> body);

Result<std::vector<uint8_t>> encode_request(const agent_spawn_request &r);
bool is_spawn_body(std::span<const uint8_t> body);
Status decode_request(std::span<const uint8_t> body, agent_spawn_request *r);
// The spawn reply as the agent's one reply (agent_proto.h): status, message, body = the nspace.
agent::reply to_reply(const agent_spawn_reply &r);
Status from_reply(const agent::reply &in, agent_spawn_reply *r);

}  // namespace pmixcpp::spawn
