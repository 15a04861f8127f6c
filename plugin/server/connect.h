// PMIx_Connect / PMIx_Disconnect, and PMIx_Fence over procs of several namespaces (OpenMPI's
// MPI_Comm_disconnect), between the steps of one job. No I/O here: the node's server hands the
// requests in; `connect_ops` carries a node's contribution to the job's rendezvous beside srun
// (plugin/services/sessions/session_srun.h, "Connect" in shared/PROTOCOL.md) and back.
//
// One collective = (operation, the participant set, a sequence number per set). The set is
// canonical: a namespace listed with all of its ranks is the namespace as PMIX_RANK_WILDCARD,
// so parties that write it either way meet (sizes of other namespaces: asked once of srun's
// side, where each step's srun registered its size). Each node's server waits until all of its local participants entered, then sends
// one contribution; the rendezvous completes once every node of every namespace in the set has
// contributed. A connect's contribution carries its namespace's job data and the data of its
// local participants (twice: as seen from the same node and from another node); the receiver
// keeps the other namespaces' data (`foreign_data`) to answer Gets and hands it to its clients.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "../services/sessions/session_codec.h"
#include "fence_tracker.h"
#include "kvs.h"
#include "../common/step_info.h"
#include "wire/group_messages.h"
#include "wire/messages.h"

namespace pmixcpp::server {

using session::rendezvous_request;
using session::rendezvous_piece;

enum class connect_op : uint8_t { connect = 1, disconnect = 2, fence = 3, group = 4 };

// Each step's srun publishes its namespace's size in the job's store (session range, owner
// rank 0 of the step, PMIX_UINT32) under this prefix + the namespace.
inline constexpr const char *kNamespaceSizeKey = "pmixcpp.nsize.";
// That publication, as a request of the job's store (session::job_store::handle).
Result<session::agent_request> namespace_size_record(const std::string &nspace, uint32_t ntasks);
const char *to_string(connect_op op);

struct connect_ops {
    using reply_fn = std::function<void(uint64_t conn, uint32_t request_id, pmix_status_t status,
                                        const std::string &message, std::span<const uint8_t> body)>;
    reply_fn reply;
    // Carry an encoded rendezvous request to srun's side; `done` runs on the loop thread. Empty =
    // no srun agent: only our own namespace can take part.
    using done_fn = std::function<void(int status, const std::string &message, std::vector<uint8_t> body)>;
    std::function<void(std::vector<uint8_t> body, int timeout_ms, done_fn done)> rendezvous;
    // Data of one of our ranks (PMIX_RANK_WILDCARD = job level) as seen under `rel`.
    std::function<Result<InfoArray>(uint32_t rank, relation rel)> data_of;
    // Direct modex of another step's proc (plugin/services/xstep/xstep_codec.h): carry an encoded xstep get to
    // srun's side; `done` runs on the loop thread, its body the proc's data (info[]). Empty = a
    // Get of another namespace is answered from what the connect brought only.
    std::function<void(std::vector<uint8_t> body, int timeout_ms, done_fn done)> xstep;
    // The number of processes of another namespace of the job (as its srun registered it),
    // nullopt if unknown; `done` runs on the loop thread. Empty: only sizes learnt otherwise.
    using size_fn = std::function<void(std::optional<uint32_t> size)>;
    std::function<void(const std::string &nspace, size_fn done)> ns_size;
};

// connect_ops::ns_size over the job's store beside srun: a lookup of kNamespaceSizeKey + the
// namespace, asked in the name of `own_nspace` through `job_store` (a call of srun's store
// service, session_codec.h; its `done` on the loop thread).
using job_store_fn = std::function<void(std::vector<uint8_t> body, int timeout_ms, connect_ops::done_fn done)>;
std::function<void(const std::string &nspace, connect_ops::size_fn done)> namespace_size_lookup(std::string own_nspace,
                                                                                                job_store_fn job_store);

class connect_service {
public:
    connect_service(const step_info &step, std::vector<uint32_t> node_of, connect_ops ops,
                    uint32_t default_timeout_sec);

    // A connect / disconnect / multi-namespace fence frame of a local client (a fence_request);
    // a malformed one is answered PMIX_ERR_UNPACK_FAILURE.
    void on_frame(uint64_t conn, uint32_t rank, uint32_t request_id, connect_op op, std::span<const uint8_t> payload);
    // The same, decoded.
    void on_request(uint64_t conn, uint32_t rank, uint32_t request_id, connect_op op,
                    const std::vector<pmix_proc_t> &procs, const InfoArray &infos);

    // A group collective whose members span namespaces (groups.h hands it over): one
    // contribution per node to the rendezvous as for a connect, carrying the local members'
    // entries (wire::group_contribution, `candidate` = this node's context-id candidate, 0 =
    // none); the reply is a wire::group_reply of every namespace's members.
    void on_group(uint64_t conn, uint32_t rank, uint32_t request_id, wire::group_request &&req, uint64_t candidate);

    // A Get of another namespace's proc. Answers (reply body = info[]) from what the connect or
    // an earlier direct modex brought, else asks the proc's step (ops.xstep; coalesced per proc
    // and key, the answer kept), or fails it. `infos`: the Get's (PMIX_TIMEOUT, PMIX_OPTIONAL,
    // PMIX_IMMEDIATE).
    void get(uint64_t conn, uint32_t request_id, const pmix_proc_t &proc, const std::string &key,
             const InfoArray &infos);
    uint64_t cache_hits() const { return _cache_hits; }
    bool knows(const std::string &nspace) const { return _foreign.count(nspace) != 0; }

    // A local rank finalized or died: collectives it has not entered fail.
    void rank_left(uint32_t rank);

    void expire(server_clock::time_point now);
    std::optional<server_clock::time_point> next_deadline() const;

    size_t pending() const { return _pending.size(); }

private:
    struct waiter {
        uint64_t conn;
        uint32_t request_id;
        uint32_t rank;
    };
    struct collective {
        connect_op op;
        std::string set;  // canonical participant set
        std::string key;
        std::vector<std::string> nspaces;
        std::set<uint32_t> local;  // our local ranks in the set
        uint32_t nodes = 0;        // our step's nodes with participants
        std::vector<waiter> entered;
        server_clock::time_point deadline;
        int timeout_ms = 0;
        bool sent = false;
    };
    struct foreign_ns {
        std::map<uint32_t, InfoArray> data;  // rank -> infos (PMIX_RANK_WILDCARD = job level)
    };

    // on_request once the set's namespace sizes are known. `tag` distinguishes collectives of
    // one set (a group's name).
    void enter(uint64_t conn, uint32_t rank, uint32_t request_id, connect_op op,
               const std::vector<pmix_proc_t> &procs, int timeout_ms, const std::string &tag = {});
    // A group member's entry, until its collective completes: by (conn, request id).
    struct group_entry {
        uint8_t state = 0;
        InfoArray infos;
        uint64_t candidate = 0;
    };
    std::map<std::pair<uint64_t, uint32_t>, group_entry> _group_entries;
    Result<std::vector<uint8_t>> group_reply_body(const std::vector<rendezvous_piece> &pieces) const;
    // A namespace's size: ours, learnt from a connect, or asked of srun's side (0: unknown for
    // good); nullopt: not asked yet.
    std::optional<uint32_t> size_of(const std::string &nspace) const;
    // Run `fn` once srun's side answered the size of `nspace` (_ops.ns_size, which must be set);
    // asked once however many wait.
    void when_size_known(const std::string &nspace, std::function<void()> fn);
    void start(uint64_t id);
    void finish(uint64_t id, int status, const std::string &message, std::vector<uint8_t> body);
    void fail(collective &c, pmix_status_t status, const std::string &message);
    Result<std::vector<uint8_t>> contribution(const collective &c) const;
    Status absorb(const std::vector<rendezvous_piece> &pieces);
    Result<std::vector<uint8_t>> reply_body(const collective &c) const;

    step_info _step;
    std::vector<uint32_t> _node_of;
    connect_ops _ops;
    uint32_t _default_timeout_sec;
    uint64_t _next_id = 1;
    std::map<uint64_t, collective> _pending;
    std::map<std::string, uint32_t> _sequence;  // "<op>.<set>" -> collectives started
    std::map<std::string, foreign_ns> _foreign;
    // Cross-step direct modex in flight: "<nspace>:<rank>:<key>" -> the Gets waiting for it.
    void xget_done(const std::string &id, const std::string &nspace, uint32_t rank, const std::string &key, int status,
                   const std::string &message, std::vector<uint8_t> body);
    std::map<std::string, std::vector<std::pair<uint64_t, uint32_t>>> _xgets;
    uint64_t _cache_hits = 0;
    std::map<std::string, uint32_t> _sizes;  // namespace -> its size as srun registered it (0: unknown)
    std::map<std::string, std::vector<std::function<void()>>> _size_waiters;  // asked, not answered yet
};

}  // namespace pmixcpp::server
