// Events in the server: who gets an event, the cache for processes that come later, and the
// events the server generates itself. An engine without I/O: the server shell (server.cc) hands it
// notifications and connection changes, and it answers through `event_ops` (queue a frame to a
// local rank, forward to another node's server).
//
// Routing by range (the notification's pmix_data_range_t):
//   PROC_LOCAL   never reaches the server (the client runs its own handlers); refused.
//   LOCAL        every local rank of this node.
//   NAMESPACE, SESSION, GLOBAL, UNDEF
//                every rank of the step: local ranks here, and forwarded to every other node.
//   CUSTOM       the procs of PMIX_EVENT_CUSTOM_RANGE (a proc or an array of procs; rank
//                PMIX_RANK_WILDCARD = the whole namespace); procs of other namespaces are ignored.
//   RM           for the resource manager: logged, delivered to no process.
// The originator is included when it is in range (its handlers then run from the server's copy).
// Filters a handler registered with (source range, PMIX_EVENT_AFFECTED_PROC(S)) are applied by
// the client (client/event_chain.h).
//
// Cache: every delivered event except those carrying PMIX_EVENT_DO_NOT_CACHE is kept (the last
// `cache_capacity`); a local rank that connects later receives the cached events in its range at
// connect time, and the client replays them to handlers it registers afterwards.
//
// Events the server generates (source: {nspace, PMIX_RANK_UNDEF}, range NAMESPACE):
//   a local rank lost its connection without PMIx_Finalize (killed, crashed, exited):
//     PMIX_ERR_PROC_ABORTED with PMIX_EVENT_AFFECTED_PROC, PMIX_PROC_TERM_STATUS, PMIX_EVENT_TEXT_MESSAGE
//   every abnormal termination of a local rank, and, when the step asked for them
//   (PMIxCppProcTermEvents=all, or PMIX_NOTIFY_PROC_TERMINATION in a spawn), every normal exit
//   after PMIx_Finalize too, as the standard's attribute says (otherwise each exit would be an
//   event to every process of the step: N x N messages at the end of a job):
//     PMIX_EVENT_PROC_TERMINATED with PMIX_EVENT_AFFECTED_PROC, PMIX_PROC_TERM_STATUS and
//     PMIX_EVENT_NON_DEFAULT (so default handlers, e.g. OpenMPI's, which abort, do not see it)
//   another node of the step is lost (its server went away without the goodbye of a normal end,
//   see plugin/net/transport.h), raised by every surviving node for its own ranks (range LOCAL):
//     PMIX_ERR_NODE_DOWN (== PMIX_EVENT_NODE_DOWN) with PMIX_EVENT_AFFECTED_PROCS (the node's
//     ranks), PMIX_HOSTNAME (its Slurm node name), PMIX_NODEID and PMIX_EVENT_TEXT_MESSAGE
//   PMIx_Abort by a local rank, before the host kills the step:
//     PMIX_ERR_JOB_TERMINATED (== PMIX_EVENT_JOB_END) with PMIX_EVENT_AFFECTED_PROC (the namespace,
//     rank PMIX_RANK_WILDCARD), PMIX_JOB_TERM_STATUS (its status), PMIX_EVENT_TEXT_MESSAGE (its
//     message, naming the rank) and PMIX_EVENT_NON_DEFAULT: only handlers registered for the code
//     see it (OpenMPI's default handler would report it as an error of its own and abort)
// A rank's PMIx_Finalize is no termination: PMIX_EVENT_PROC_TERMINATED of a rank that finalized
// comes when its process exits (it may call PMIx_Init again before, and is then connected again).
//
// Cross-node: the engine calls `remote_events::forward_event(node, payload)` for every other
// node in range; the transport delivers the payload to that node's server, which calls
// `event_engine::from_remote(payload)` on its loop thread. Without a `remote_events` (single
// node, or no transport yet) the event reaches this node's processes only.
#pragma once

#include <pmix_common.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "node_channels.h"
#include "status.h"
#include "../common/step_info.h"
#include "wire/messages.h"

namespace pmixcpp::server {

// Cross-node delivery of events, implemented by the node transport (plugin/net) on the loop thread.
class remote_events {
public:
    virtual ~remote_events() = default;
    // Deliver `payload` (an encoded wire::event_notification) to the server of `node`; it calls
    // event_engine::from_remote(payload) there. Best effort.
    virtual void forward_event(uint32_t node, std::span<const uint8_t> payload) = 0;
};

struct event_ops {
    // Queue an encoded event frame for local rank `rank`. false: not delivered (rank not connected,
    // or its connection's backlog is full: the event is dropped for it).
    std::function<bool(uint32_t rank, std::span<const uint8_t> frame)> send_to_rank;
    // nullptr: no other node is reached.
    remote_events *remote = nullptr;
};

struct event_targets {
    std::vector<uint32_t> local_ranks;  // sorted, unique
    std::vector<uint32_t> nodes;        // other nodes to forward to, sorted, unique
};

struct event_stats {
    uint64_t routed = 0;       // events routed (from clients, other nodes, or generated)
    uint64_t delivered = 0;    // frames queued to local ranks
    uint64_t dropped = 0;      // not queued: rank not connected or backlog full
    uint64_t forwarded = 0;    // payloads handed to the transport
    uint64_t replayed = 0;     // cached events sent at connect
};

// Does a client's event reach the other steps of the job (plugin/services/xstep/xstep_codec.h)? SESSION and
// GLOBAL: every other running step (`nspaces` left empty); CUSTOM: the other namespaces that
// PMIX_EVENT_CUSTOM_RANGE names (into `nspaces`). LOCAL, NAMESPACE, UNDEF, RM: no. There, each
// node's server delivers it to its own ranks in range, as an event from another node of ours.
bool reaches_other_steps(const wire::event_notification &ev, const std::string &own_nspace,
                         std::vector<std::string> *nspaces);

class event_engine {
public:
    event_engine(const step_info &step, event_ops ops, size_t cache_capacity = 256);

    // PMIx_Notify_event of local rank `rank` (range beyond PROC_LOCAL). The answer is the reply's status.
    Status notify_from_client(uint32_t rank, wire::event_notification &&ev);
    // An event forwarded by another node's server.
    Status from_remote(std::span<const uint8_t> payload);
    // The event channel's handler into the table: from_remote, a bad event logged and dropped.
    Status add_channels(node_channels &table);
    // Local rank `rank` connected: send it the cached events in its range it has not had.
    void rank_connected(uint32_t rank);
    // Local rank `rank` is gone: `finalized` = it called PMIx_Finalize first.
    void rank_terminated(uint32_t rank, bool finalized);
    // Also raise PMIX_EVENT_PROC_TERMINATED for finalized ranks (default: abnormal exits only).
    void set_normal_termination_events(bool on) { _normal_termination = on; }
    // Local rank `rank` called PMIx_Abort: tell every process before the host kills the step.
    void job_aborting(uint32_t rank, int status, const std::string &message);
    // The job reaches its time limit in `seconds_left`: PMIX_JCTRL_PREEMPT_ALERT to this node's
    // processes (every node raises its own), cached for handlers registered later.
    void time_limit_alert(uint32_t seconds_left);
    // Node `node` of the step is lost (`why` for the text message): PMIX_ERR_NODE_DOWN to this
    // node's processes, cached for handlers registered later.
    void node_down(uint32_t node, const std::string &why);
    // Slurm's switch topology changed (plugin/services/fabric/fabric_codec.h, watch): PMIX_FABRIC_UPDATED
    // with PMIX_FABRIC_PLANE to this node's processes; their fabrics show the change once they
    // call PMIx_Fabric_update.
    void fabric_updated(const std::string &plane);
    // Local rank `rank` is asked to checkpoint by the event it registered (jctrl.h): `code` to it
    // alone, with PMIX_EVENT_AFFECTED_PROC and `why` as the text message.
    void checkpoint_requested(uint32_t rank, pmix_status_t code, const std::string &why);
    // A heartbeat monitor of local rank `rank` tripped (jctrl.h): `code` about the rank, to the
    // namespace, with PMIX_MONITOR_ID.
    void monitor_tripped(uint32_t rank, pmix_status_t code, const std::string &id, uint32_t silent_sec);

    // Routing decision alone (no side effects). from_remote: never forward again.
    Result<event_targets> route(const wire::event_notification &ev, bool from_remote) const;

    const event_stats &stats() const { return _stats; }
    size_t cached() const { return _cache.size(); }

private:
    struct cached_event {
        uint64_t id = 0;
        std::vector<uint8_t> frame;
        std::vector<uint32_t> pending;  // local ranks in range that have not received it
    };
    Status deliver(wire::event_notification &ev, bool from_remote);
    void generate(pmix_status_t status, uint32_t affected_rank, std::vector<pmix_info_t> extra, bool non_default);
    // An event of this server (source {our namespace, PMIX_RANK_UNDEF}); the infos' ownership moves in.
    Status raise(pmix_status_t status, pmix_data_range_t range, std::vector<pmix_info_t> infos);
    bool in_step(const pmix_proc_t &p) const;
    bool local(uint32_t rank) const { return rank < _node_of.size() && _node_of[rank] == _step.node_id; }

    step_info _step;
    event_ops _ops;
    size_t _capacity;
    bool _normal_termination = false;
    std::vector<uint32_t> _node_of;
    uint64_t _next_id = 1;
    std::deque<cached_event> _cache;
    event_stats _stats;
};

}  // namespace pmixcpp::server
