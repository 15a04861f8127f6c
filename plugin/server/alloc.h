// Allocation requests and queries in the server (PROTOCOL.md: alloc, query).
//
// PMIx_Allocation_request: the infos are checked here (plugin/services/alloc/alloc_codec.h: a bad type
// or value is PMIX_ERR_BAD_PARAM, a required attribute Slurm cannot honour PMIX_ERR_NOT_SUPPORTED)
// before anything leaves the node; then the request goes, encoded, to the host's `alloc_host`,
// which carries it to the srun-side bridge (plugin/slurm/alloc_bridge.h). The bridge talks to
// slurmctld from srun, so with the user's own credential: this server never asks slurmctld for
// anything. The answer comes back on any thread; the service hops onto the loop thread, replies
// to the caller and delivers PMIX_NOTIFY_ALLOC_COMPLETE (source: the requester, range NAMESPACE,
// infos: the result infos with PMIX_ALLOC_ID, PMIX_ALLOC_REQ_ID if the caller named the request,
// pmixcpp.alloc.status, on failure PMIX_EVENT_TEXT_MESSAGE, and PMIX_EVENT_NON_DEFAULT: a
// default handler, e.g. OpenMPI's which aborts on any event, does not see it). The loop never
// waits: many requests may be outstanding; a pending one is answered when Slurm grants it,
// refuses it or it is cancelled.
//
// PMIx_Query_info: answered here for what the step knows of itself:
//   PMIX_QUERY_NAMESPACES (string: the step's namespace), PMIX_QUERY_JOB_STATUS (PMIX_STATUS
//   PMIX_SUCCESS while the step runs; qualifier PMIX_NSPACE), PMIX_QUERY_LOCAL_PROC_TABLE (data
//   array of pmix_proc_info_t: this node's ranks), PMIX_QUERY_PROC_TABLE (every rank of the step:
//   each node's rows gathered over the node transport, proc_table.h; pid, hostname, executable,
//   state, exit code; a node that does not answer within PMIX_TIMEOUT, default
//   kProcTableTimeoutSec, leaves its ranks at PMIX_PROC_STATE_COMM_FAILED and the status
//   PMIX_QUERY_PARTIAL_SUCCESS with the node named in the message), PMIX_QUERY_SPAWN_SUPPORT and
//   PMIX_QUERY_DEBUG_SUPPORT (string: the supported attributes, empty: neither is supported),
//   PMIX_QUERY_NUM_PSETS (size_t) and PMIX_QUERY_PSET_NAMES (string, comma-separated: the step's
//   per-app sets and the groups), PMIX_QUERY_PSET_MEMBERSHIP (qualifier PMIX_PSET_NAME; data array
//   of PMIX_PROC) of those and of mpi://WORLD, mpi://SELF (the asking rank) and mpix://SHARED (its
//   node's ranks), whose part after the scheme matches without regard to case as OpenMPI's does
//   (these three are not counted or named: OpenMPI adds them itself), PMIX_QUERY_SUPPORTED_KEYS.
// Asked of the bridge: PMIX_QUERY_ALLOC_STATUS (qualifier PMIX_ALLOC_ID or PMIX_ALLOC_REQ_ID, else
// every request of the caller; string, a line per request) and PMIX_TIME_REMAINING (uint32
// seconds, from slurmctld with the user's credential).
// Results (PMIx v4.1): one PMIX_QUERY_RESULTS info per pmix_query_t that got an answer, a data
// array of pmix_info_t: PMIX_QUERY_QUALIFIERS (the query's qualifiers) first if it had any, then
// one (key, value) info per answered key; after those, the same answers again as a flat list of
// (key, value) infos, the form of clients written before v4.1. Status: PMIX_SUCCESS when every key
// was answered, PMIX_QUERY_PARTIAL_SUCCESS when some were (or the process table misses a node),
// PMIX_ERR_NOT_FOUND when none was.
#pragma once

#include <pmix_common.h>
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "proc_table.h"
#include "status.h"
#include "../common/step_info.h"
#include "value.h"
#include "wire/messages.h"

namespace pmixcpp::server {

// Implemented by the host (the Slurm glue): carry an encoded alloc::agent_request to the
// srun-side bridge and hand back its encoded alloc::agent_reply. Called on the loop thread; must
// return at once. `done` runs exactly once, on any thread (also after a failure to reach srun).
class alloc_host {
public:
    virtual ~alloc_host() = default;
    using reply_fn = std::function<void(Result<std::vector<uint8_t>>)>;
    virtual void forward_alloc(std::vector<uint8_t> request, int timeout_sec, reply_fn done) = 0;
};

struct alloc_ops {
    // Answer request `request_id` of connection `conn` (results only on success).
    std::function<void(uint64_t conn, uint32_t request_id, pmix_status_t status, const std::string &message,
                       InfoArray &&results)>
        reply;
    // Route an event as if local rank `rank` had notified it.
    std::function<void(uint32_t rank, wire::event_notification &&ev)> notify;
    // Run `fn` on the loop thread (thread safe; dropped when the server stops).
    std::function<void(std::function<void()>)> post;
    // This node's rows of the process table (proc_table.h).
    std::function<std::vector<proc_row>()> local_procs;
    // The whole step's process table, gathered from every node within `timeout_sec`; `done` runs
    // once on the loop thread with every rank's row and, if some node did not answer, why.
    // Unset (one node, or no node transport): the table holds what this node knows.
    std::function<void(int timeout_sec, std::function<void(std::vector<proc_row>, std::string silent)> done)>
        gather_procs;
    // The process sets this node knows (groups whose members it serves, the step's own sets):
    // name -> members; groups_only: the groups alone.
    std::function<std::vector<std::pair<std::string, std::vector<pmix_proc_t>>>(bool groups_only)> psets;
};

// The most bytes the answers to one PMIx_Query_info may take (they go into the reply twice, the
// v4.1 form and the flat list): a query whose keys ask for more, e.g. 256 x 256 times the names
// of thousands of groups, is PMIX_ERR_OUT_OF_RESOURCE, answered before the rest is built.
inline constexpr size_t kMaxQueryAnswerBytes = 16u << 20;

// How long PMIx_Query_info(PMIX_QUERY_PROC_TABLE) waits for the other nodes, unless the query
// names a PMIX_TIMEOUT.
inline constexpr int kProcTableTimeoutSec = 10;

// pmixcpp's attribute (PMIX_BOOL) of PMIx_Allocation_request: answer in two phases. The call
// returns at once with PMIX_OPERATION_IN_PROGRESS and PMIX_ALLOC_REQ_ID (the caller's, or one the
// server makes); the outcome comes only as the PMIX_NOTIFY_ALLOC_COMPLETE event (the request's
// results, PMIX_ALLOC_REQ_ID, its status as "pmixcpp.alloc.status"). Not for CANCEL.
inline constexpr const char *kAllocTwoPhase = "pmixcpp.alloc.two_phase";

// How long a request that grows the job waits for Slurm without a PMIX_TIMEOUT of its own, unless
// the administrator sets PMIxCppAllocTimeout.
inline constexpr uint32_t kDefaultAllocTimeoutSec = 120;

class alloc_service {
public:
    // `host` may be nullptr: allocation requests are PMIX_ERR_NOT_SUPPORTED then and the keys the
    // bridge answers stay unanswered. `default_timeout_sec` (PMIxCppAllocTimeout): the
    // PMIX_TIMEOUT given to a NEW, EXTEND or REACQUIRE that names none (0: none given, such a
    // request waits as long as Slurm keeps it pending); the bridge cancels the pending Slurm job
    // at that time and the caller gets PMIX_ERR_TIMEOUT.
    alloc_service(const step_info &step, alloc_host *host, alloc_ops ops,
                  uint32_t default_timeout_sec = kDefaultAllocTimeoutSec);
    ~alloc_service();  // answers arriving later are dropped
    alloc_service(const alloc_service &) = delete;
    alloc_service &operator=(const alloc_service &) = delete;

    void allocate(uint64_t conn, uint32_t request_id, uint32_t rank, wire::alloc_request &&m);
    void query(uint64_t conn, uint32_t request_id, uint32_t rank, wire::query_request &&m);

    // Keys answered locally, without the bridge (for pmixcpp_info and tests).
    static const std::vector<std::string> &local_keys();
    static const std::vector<std::string> &host_keys();

private:
    struct gate;
    struct query_state;
    // `rank`: the asking local rank (mpi://SELF, mpix://SHARED).
    bool answer_locally(const std::string &key, const InfoArray &qualifiers, uint32_t rank,
                        std::vector<pmix_info_t> *out) const;
    void finish_query(const std::shared_ptr<query_state> &q);
    static std::string too_big(size_t bytes);
    void complete_allocation(uint64_t conn, uint32_t request_id, uint32_t rank, uint8_t directive,
                             const std::string &request_name, bool two_phase, uint32_t defaulted_timeout,
                             Result<std::vector<uint8_t>> &&answer);

    step_info _step;
    uint64_t _two_phase_count = 0;  // names of two-phase requests without PMIX_ALLOC_REQ_ID
    uint32_t _default_timeout_sec;
    alloc_host *_host;
    alloc_ops _ops;
    std::vector<uint32_t> _node_of;
    std::shared_ptr<gate> _gate;
};

}  // namespace pmixcpp::server
