// Bodies of the node-to-node messages between the servers of one step (the channel is in the
// node frame, plugin/net/envelope.h): one struct per body, encoded and decoded here, decoded once
// by the receiver before it acts. Decoders check every length and count against the bytes that
// remain and the decode budget (codec.h), and rank lists against the step's size where the
// caller passes it; a failed decode leaves the output unusable but destructible, and the caller
// drops the message with a log line.
#pragma once

#include <pmix_common.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "status.h"
#include "value.h"
#include "wire/codec.h"

namespace pmixcpp::wire {

// Rank data: a node's fence contribution and the data of a direct-modex answer.
//   u32 n, n x (u32 rank, info[])
struct rank_data_entry {
    uint32_t rank = 0;
    InfoArray infos;
};
Status encode_rank_data(Writer &w, const std::vector<rank_data_entry> &entries);
// At most `ntasks` entries, every rank < ntasks.
Status decode_rank_data(std::span<const uint8_t> bytes, uint32_t ntasks, std::vector<rank_data_entry> *out);

// Direct modex (channels dmodex_request / dmodex_reply).
//   request  u32 request id, u32 target rank, str key (empty: all data)
//            [u32 count (1..kMaxDmodexBatch - 1), then count x (u32 target rank, str key)]
//            -- the ranks of one node asked for at once (a batch); a request of one rank has
//            nothing after its key, as before batches existed
//   reply    u32 request id, u32 target rank, i32 status, str message, then rank data (success only)
//            -- a reply answers `target` and carries the data of every rank in it (a batch's
//            ranks that were ready together come in one reply, the others one by one later,
//            each with the batch's id)
inline constexpr uint32_t kMaxDmodexBatch = 1024;  // ranks in one request
struct dmodex_item {
    uint32_t target = 0;
    std::string key;
    bool operator==(const dmodex_item &) const = default;
};
struct dmodex_request {
    uint32_t id = 0;
    uint32_t target = 0;
    std::string key;
    std::vector<dmodex_item> more;  // the batch's other ranks
};
struct dmodex_reply {
    uint32_t id = 0;
    uint32_t target = 0;
    int32_t status = PMIX_SUCCESS;
    std::string message;
    std::vector<rank_data_entry> data;  // only with status PMIX_SUCCESS
};
Status encode(Writer &w, const dmodex_request &m);
Status decode(std::span<const uint8_t> body, dmodex_request *m);
// The reply's head (id .. message); the rank data follows as encoded by encode_rank_data.
Status encode_head(Writer &w, const dmodex_reply &m);
Status decode(std::span<const uint8_t> body, uint32_t ntasks, dmodex_reply *m);

// Lost nodes (channels node_down, node_probe, node_query).
//   node_down   u32 node, u32 origin, u8 width, str reason: `node` is lost, noticed by `origin`;
//               told through a `width`-ary tree rooted at `node` (plugin/server/node_liveness.h)
//   node_probe  u8 1 = ping, 2 = pong
//   node_query  u8 1 = ask, 2 = answer; u32 node; an answer then u8 1 = it said goodbye here
struct node_down_message {
    uint32_t node = 0;
    std::string why;
    uint32_t origin = 0;  // the node that noticed
    uint32_t width = 2;   // the relay tree's fan-out
};
// The relay tree's fan-out on the wire: PMIxCppTreeWidth's range.
inline constexpr uint32_t kMinNodeDownWidth = 2, kMaxNodeDownWidth = 64;
enum class probe_kind : uint8_t { ping = 1, pong = 2 };
struct node_query_message {
    uint8_t kind = 1;
    uint32_t node = 0;
    bool said_goodbye = false;  // answers only
};
Status encode(Writer &w, const node_down_message &m);
// node and origin < nodes and different, width in [kMinNodeDownWidth, kMaxNodeDownWidth].
Status decode(std::span<const uint8_t> body, uint32_t nodes, node_down_message *m);
Status encode(Writer &w, probe_kind m);
Status decode(std::span<const uint8_t> body, probe_kind *m);
Status encode(Writer &w, const node_query_message &m);
Status decode(std::span<const uint8_t> body, node_query_message *m);

// The transports' own channel (link), never handed to the server: u8 1 = hello (a ring
// neighbour greets, so that it is watched), 2 = bye (the step ended normally on the sender).
// idle: the sender closes this connection because it is idle (the cap on open connections,
// plugin/net/conn_lru.h), not because its step ended: the EOF that follows is no loss, and the
// sender connects again when it has something to send.
enum class link_kind : uint8_t { hello = 1, bye = 2, idle = 3 };
Status encode(Writer &w, link_kind m);
Status decode(std::span<const uint8_t> body, link_kind *m);

// Publish/lookup forwarded to node 0 and its answers (plugin/server/dyn.h).
//   request  u8 type, u64 conn, u32 request id, u32 rank, bytes payload (the client's request)
//   reply    u64 conn, u32 request id, i32 status, str message, bytes body
struct pubsub_forward {
    uint8_t type = 0;
    uint64_t conn = 0;
    uint32_t request_id = 0;
    uint32_t rank = 0;
    std::vector<uint8_t> payload;
};
struct pubsub_answer {
    uint64_t conn = 0;
    uint32_t request_id = 0;
    int32_t status = PMIX_SUCCESS;
    std::string message;
    std::vector<uint8_t> body;
};
Status encode(Writer &w, const pubsub_forward &m);
Status decode(std::span<const uint8_t> body, pubsub_forward *m);
Status encode(Writer &w, const pubsub_answer &m);
Status decode(std::span<const uint8_t> body, pubsub_answer *m);

// Job control of ranks on another node: i32 signal, u8 flags (1 terminate, 2 checkpoint),
// u32 n, n x u32 rank. A signal is 1..64; a checkpoint (each rank's own registered method)
// carries signal 0 and no terminate.
struct job_control_forward {
    int32_t signal = 0;
    bool terminate = false;
    std::vector<uint32_t> ranks;
    bool checkpoint = false;
};
Status encode(Writer &w, const job_control_forward &m);
// At most `ntasks` ranks, each < ntasks.
Status decode(std::span<const uint8_t> body, uint32_t ntasks, job_control_forward *m);

// The process table (PMIX_QUERY_PROC_TABLE, plugin/server/proc_table.h):
//   request  u64 id (not 0)
//   reply    u64 id (0: the sender's final rows, unsolicited), u32 n, n x row
//   row      u32 rank, i32 pid (>= 0), u8 state, i32 exit code, str executable (<= 4096 bytes)
// Whether each rank belongs to the sending node is the receiver's check (it knows the map).
inline constexpr size_t kMaxExecutableLen = 4096;
struct proc_row {
    uint32_t rank = 0;
    int32_t pid = 0;
    uint8_t state = 0;  // pmix_proc_state_t
    int32_t exit_code = 0;
    std::string executable;

    bool operator==(const proc_row &) const = default;
};
struct proc_table_request {
    uint64_t id = 0;
};
struct proc_table_reply {
    uint64_t id = 0;
    std::vector<proc_row> rows;
};
Status encode(Writer &w, const proc_table_request &m);
Status decode(std::span<const uint8_t> body, proc_table_request *m);
// An executable longer than kMaxExecutableLen is sent empty.
Status encode(Writer &w, const proc_table_reply &m);
// At most `max_rows` rows.
Status decode(std::span<const uint8_t> body, uint32_t max_rows, proc_table_reply *m);

// A spawn's process sets (channel kChannelSpawnPsets, plugin/server/groups.h), from the
// spawner's node to the step's others: define them (child_size > 0) or delete them (0).
//   str child nspace (at most PMIX_MAX_NSLEN), u32 child size
struct spawn_psets_message {
    std::string child;
    uint32_t child_size = 0;
};
Status encode(Writer &w, const spawn_psets_message &m);
// A child size above `max_size` is refused.
Status decode(std::span<const uint8_t> body, uint32_t max_size, spawn_psets_message *m);

// One node's contribution to a PMIx_Connect across namespaces (plugin/server/connect.h), carried
// by the rendezvous beside srun:
//   str node name, info[] job-level data, u32 n, n x (u32 rank, info[] for the same node,
//   info[] for other nodes)
struct connect_rank_data {
    uint32_t rank = 0;
    InfoArray same_node;
    InfoArray other_node;
};
struct connect_contribution {
    std::string node;
    InfoArray job;
    std::vector<connect_rank_data> ranks;
};
Status encode(Writer &w, const connect_contribution &m);
// Ranks WILDCARD and UNDEF are refused.
Status decode(std::span<const uint8_t> body, connect_contribution *m);

}  // namespace pmixcpp::wire
