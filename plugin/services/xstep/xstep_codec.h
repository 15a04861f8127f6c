// Messages between the steps of one job, after (or without) PMIx_Connect: direct modex of a
// proc of another step, events whose range reaches other steps, and PMIx_Job_control of another
// step's procs (shared/PROTOCOL.md, "Between the steps of a job").
// The messages (magic "PXXS"): agent calls of the node servers, calls between the sruns of the
// job, the items of an inbox reply. No I/O; both sides include it. The routes: xstep_srun.h.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "status.h"

namespace pmixcpp::xstep {

inline constexpr uint32_t kMagic = 0x53585850;  // "PXXS"
inline constexpr uint32_t kMaxQueued = 4096;     // messages waiting for one node's inbox
inline constexpr int kInboxCallMs = 3600 * 1000;  // one inbox call; re-issued when it ends

enum class op : uint8_t { get = 1, event = 2, inbox = 3, answer = 4, jobctl = 5 };
// The key of a get of a step's job data (rank PMIX_RANK_WILDCARD): what a spawner's server
// gives an OpenPMIx client in its spawn reply.
inline constexpr char kJobdataKey[] = "pmixcpp.xstep.jobdata";
const char *to_string(op o);

// Body of an agent call (and of a message between sruns): u32 magic, u8 op, then
//   get:    str nspace, u32 rank, str key (empty = all), str requester nspace, str requester node,
//           u32 timeout_ms; rank PMIX_RANK_WILDCARD with key kJobdataKey: the step's job data
//           (node 0 of the step answers at once, data = wire::encode_jobdata of its entries)
//   event:  u32 n, n x str nspace (0 = every other running step of the job), bytes the encoded
//           wire::event_notification
//   inbox:  u32 node (the caller's node index in its step)
//   answer: u64 id (of the inbox item), i32 status, str message, bytes data (encoded info[])
//   jobctl: str nspace (the target step), i32 signal, u8 terminate (SIGTERM, SIGKILL after the
//           grace), u32 n, n x u32 rank (0 = every rank of the step)
// Every call is answered with the agent's one reply (agent::reply: i32 status, str message, bytes body).
struct message {
    op what = op::get;
    std::string nspace;  // get: the target's
    uint32_t rank = 0;
    std::string key;
    std::string from_nspace, from_node;
    uint32_t timeout_ms = 0;
    std::vector<std::string> nspaces;  // event
    std::vector<uint8_t> payload;      // event: the notification; answer: the data
    uint32_t node = 0;                 // inbox
    uint64_t id = 0;                   // answer
    std::vector<uint32_t> ranks;       // jobctl (empty = all)
    int32_t signal = 0;                // jobctl
    bool terminate = false;            // jobctl
    int32_t status = 0;
    std::string text;
};
Result<std::vector<uint8_t>> encode(const message &m);
bool is_xstep_body(std::span<const uint8_t> body);
Status decode(std::span<const uint8_t> body, message *m);

// The body of an inbox call's reply: u32 n, n x (u64 id, bytes an encoded get or event message).
struct inbox_item {
    uint64_t id = 0;
    std::vector<uint8_t> body;
};
Result<std::vector<uint8_t>> encode_items(const std::vector<inbox_item> &items);
Status decode_items(std::span<const uint8_t> body, std::vector<inbox_item> *items);

}  // namespace pmixcpp::xstep
