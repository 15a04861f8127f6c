// Client <-> server messages of shared/PROTOCOL.md: one struct per payload,
// each with encode/decode over the codec. Decoders check every length and
// type; a failed decode leaves the output in a destructible state.
#pragma once

#include <pmix_common.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "status.h"
#include "value.h"
#include "wire/codec.h"
#include "wire/jobdata.h"

namespace pmixcpp::wire {

inline constexpr uint32_t kClientProtocol = 1;
// Frame flag (client <-> server): the frame's first byte was sent with one descriptor
// (SCM_RIGHTS), which belongs to this frame. Only the server sends descriptors (the modex snapshot,
// shared/PROTOCOL.md); the server reads none (a Unix socket read without ancillary space drops
// them).
inline constexpr uint8_t kFrameFlagDescriptor = 0x01;

enum class msg_type : uint16_t {
    connect = 1,
    finalize = 2,
    abort = 3,
    commit = 4,
    fence = 5,
    get = 6,
    job_control = 7,
    log = 8,
    reply = 9,
    notify = 10,  // c->s: PMIx_Notify_event beyond PMIX_RANGE_PROC_LOCAL
    event = 11,   // s->c, unsolicited (request id 0): an event for the client's handlers
    alloc = 12,   // c->s: PMIx_Allocation_request(_nb)
    query = 13,   // c->s: PMIx_Query_info(_nb)
    publish = 20,    // c->s: PMIx_Publish(_nb)
    lookup = 21,     // c->s: PMIx_Lookup(_nb)
    unpublish = 22,  // c->s: PMIx_Unpublish(_nb)
    spawn = 23,      // c->s: PMIx_Spawn(_nb)
    fabric = 24,     // c->s: PMIx_Fabric_register/update(_nb) (plugin/services/fabric/fabric_codec.h)
    xconnect = 25,     // c->s: PMIx_Connect(_nb): payload as fence_request, reply connect_data
    xdisconnect = 26,  // c->s: PMIx_Disconnect(_nb): payload as fence_request
    group = 27,        // c->s: PMIx_Group_*: group_request, reply group_reply (wire/group_messages.h)
    snapshot = 28,     // c->s: no payload; reply: the modex snapshot of the node's data now (PROTOCOL.md), with its descriptor
    monitor = 40,      // c->s: PMIx_Process_monitor(_nb), PMIx_Heartbeat (reply: job_control_reply)
};
const char *to_string(msg_type t);
bool is_request_type(uint16_t t);

struct connect_request {
    uint32_t protocol = kClientProtocol;
    std::string nspace;
    uint32_t rank = PMIX_RANK_UNDEF;
    std::string token;
    uint32_t pid = 0;
};
struct connect_reply {
    std::string jobdata_path;
    uint64_t jobdata_size = 0;
    uint32_t local_rank = 0;
};

struct finalize_request {
    InfoArray infos;
};

struct abort_request {
    int32_t status = 0;
    std::string message;
    std::vector<pmix_proc_t> procs;
};

// Everything Put since the last commit: scopes[i] belongs to infos[i].
struct commit_request {
    std::vector<uint8_t> scopes;
    InfoArray infos;
};

// procs empty = every rank of the caller's namespace.
struct fence_request {
    std::vector<pmix_proc_t> procs;
    InfoArray infos;
};

// key empty = all of the proc's data.
struct get_request {
    pmix_proc_t proc{};
    std::string key;
    InfoArray infos;
};
struct get_reply {
    InfoArray data;  // all data of the proc visible to the requester
};

struct job_control_request {
    std::vector<pmix_proc_t> targets;
    InfoArray infos;
};
struct job_control_reply {
    InfoArray results;
};

// PMIx_Process_monitor: what to monitor (one info: PMIX_MONITOR_HEARTBEAT, PMIX_SEND_HEARTBEAT,
// PMIX_MONITOR_CANCEL, PMIX_MONITOR_FILE), the status to raise when it trips, and the directives.
struct monitor_request {
    InfoArray monitor;
    int32_t error = 0;
    InfoArray directives;
};

struct log_request {
    InfoArray data;
    InfoArray directives;
};

// notify (c->s request) and event (s->c, request id 0): one event notification. `id` is the
// server's sequence number (0 in a request; the server fills it in). range is a
// pmix_data_range_t; custom range and affected procs travel in infos as the standard's keys.
struct event_notification {
    uint64_t id = 0;
    int32_t status = 0;
    pmix_proc_t source{};
    uint8_t range = PMIX_RANGE_UNDEF;
    InfoArray infos;
};

// Every reply payload starts with this; `message` is present only on failure.
struct reply_header {
    pmix_status_t status = PMIX_SUCCESS;
    std::string message;
};

Status encode(Writer &w, const connect_request &m);
Status decode(Reader &r, connect_request *m);
Status encode(Writer &w, const connect_reply &m);
Status decode(Reader &r, connect_reply *m);
Status encode(Writer &w, const finalize_request &m);
Status decode(Reader &r, finalize_request *m);
Status encode(Writer &w, const abort_request &m);
Status decode(Reader &r, abort_request *m);
Status encode(Writer &w, const commit_request &m);
Status decode(Reader &r, commit_request *m);
Status encode(Writer &w, const fence_request &m);
Status decode(Reader &r, fence_request *m);
Status encode(Writer &w, const get_request &m);
Status decode(Reader &r, get_request *m);
Status encode(Writer &w, const get_reply &m);
Status decode(Reader &r, get_reply *m);
Status encode(Writer &w, const job_control_request &m);
Status decode(Reader &r, job_control_request *m);
Status encode(Writer &w, const job_control_reply &m);
Status decode(Reader &r, job_control_reply *m);
Status encode(Writer &w, const monitor_request &m);
Status decode(Reader &r, monitor_request *m);
Status encode(Writer &w, const log_request &m);
Status decode(Reader &r, log_request *m);
Status encode(Writer &w, const event_notification &m);
Status decode(Reader &r, event_notification *m);
Status encode(Writer &w, const reply_header &m);
Status decode(Reader &r, reply_header *m);

// Decode a whole payload: the message must consume every byte. `max_procs` bounds every proc
// list of the message (what the receiving step can hold); the decode budget of codec.h applies.
template <typename M>
Status decode_payload(std::span<const uint8_t> payload, M *m, uint32_t max_procs = kMaxElementCount) {
    Reader r(payload);
    r.limit_procs(max_procs);
    PMIXCPP_RETURN_IF_ERROR(decode(r, m));
    return r.expect_end();
}

// Job data file (PROTOCOL.md "PXJD"): jobdata.h.

// --- allocation requests and queries (PROTOCOL.md: alloc, query) -----------------------------

// PMIx_Allocation_request: the directive (pmix_alloc_directive_t) and the caller's infos, with
// their PMIX_INFO_REQD flags. The reply carries the result infos.
struct alloc_request {
    uint8_t directive = 0;
    InfoArray infos;
};
// PMIx_Query_info: each query is its keys and its qualifiers.
struct query_entry {
    std::vector<std::string> keys;
    InfoArray qualifiers;
};
struct query_request {
    std::vector<query_entry> queries;
};
// Reply of alloc and query: result infos.
struct info_reply {
    InfoArray results;
};

Status encode(Writer &w, const alloc_request &m);
Status decode(Reader &r, alloc_request *m);
Status encode(Writer &w, const query_request &m);
Status decode(Reader &r, query_request *m);
Status encode(Writer &w, const info_reply &m);
Status decode(Reader &r, info_reply *m);

// --- publish / lookup / unpublish (PROTOCOL.md: "Publish and lookup") ------------------------

struct publish_request {
    InfoArray data;        // the (key, value) pairs to publish
    InfoArray directives;  // PMIX_RANGE, PMIX_PERSISTENCE, PMIX_TIMEOUT
};
// keys empty = (unpublish) every key of the caller.
struct lookup_request {
    std::vector<std::string> keys;
    InfoArray directives;  // PMIX_RANGE, PMIX_WAIT, PMIX_TIMEOUT
};
// Reply of lookup: owners[i] published data[i] (key and value).
struct lookup_reply {
    std::vector<pmix_proc_t> owners;
    InfoArray data;
};
using unpublish_request = lookup_request;
// A lookup reply from infos kept encoded (the publish/lookup store holds each published info as
// encode_info wrote it): the bytes of encode(lookup_reply) with owners[i] and data[i].
struct encoded_lookup_entry {
    pmix_proc_t owner{};
    std::span<const uint8_t> info;  // one encode_info
};

Status encode(Writer &w, const publish_request &m);
Status decode(Reader &r, publish_request *m);
Status encode(Writer &w, const lookup_request &m);
Status decode(Reader &r, lookup_request *m);
Status encode(Writer &w, const lookup_reply &m);
Status decode(Reader &r, lookup_reply *m);
// Fails on what the decoder would refuse before a byte of it is read: too many entries, an
// entry with no info bytes.
Status encode_lookup_reply(Writer &w, std::span<const encoded_lookup_entry> entries);

// --- spawn (PROTOCOL.md: "Spawn") ----------------------------------------------------------

struct spawn_app {
    std::string cmd;
    std::vector<std::string> argv;  // argv[0] included
    std::vector<std::string> env;   // KEY=VALUE added to the children's environment
    std::string cwd;
    int32_t maxprocs = 0;
    InfoArray info;
};
struct spawn_request {
    InfoArray job_info;
    std::vector<spawn_app> apps;
};
// Reply of spawn: the children's namespace.
struct spawn_reply {
    std::string nspace;
};

// Reply of xconnect: the data of the other namespaces' procs visible to the caller (rank
// PMIX_RANK_WILDCARD = job-level data of that namespace).
struct connect_data_entry {
    pmix_proc_t proc{};
    InfoArray infos;
};
struct connect_data {
    std::vector<connect_data_entry> entries;
};
Status encode(Writer &w, const connect_data &m);
Status decode(Reader &r, connect_data *m);

Status encode(Writer &w, const spawn_request &m);
Status decode(Reader &r, spawn_request *m);
Status encode(Writer &w, const spawn_reply &m);
Status decode(Reader &r, spawn_reply *m);

}  // namespace pmixcpp::wire
