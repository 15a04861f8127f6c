// The protocol engine of the node's data path: a client's commit, fence and Get, without I/O.
// The I/O shell (server.cc) hands it each request as it came off the socket (the connection, the
// rank it connected as, the request id, the payload); the engine decodes it, decides, and answers
// through a reply_sink (reply_sink.h): the shell's writes to the sockets, a unit test's vectors
// (tests/server/test_protocol_engine.cc). What is not its own it asks through `engine_routes`:
// another namespace's data or fence, the node's topology, direct modex to another node.
//
// It owns the Gets waiting for a local rank's commit; it works on the node's key-value store and
// fence tracker, which the shell owns (the remote-fence backend and the snapshot use them too).
// Loop thread only. Re-entrancy (README.md): the engine never calls back into itself through a
// route; a route that completes something later posts it to the loop.
#pragma once

#include <pmix_common.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "fence_tracker.h"
#include "get_waits.h"
#include "kvs.h"
#include "rank_store.h"
#include "reply_sink.h"
#include "status.h"
#include "value.h"

namespace pmixcpp::server {

// What one client may have waiting (SECURITY.md, "Decoders and queues"): beyond it the request
// fails at once with PMIX_ERR_OUT_OF_RESOURCE.
constexpr size_t kMaxWaitingGets = 4096;       // Gets waiting for data (here and in direct modex)
constexpr size_t kMaxFencesInFlight = 1024;    // fences entered and not complete

// pmix.timeout in seconds; absent or <= 0 = no deadline.
std::optional<server_clock::time_point> info_deadline(const InfoArray &infos);

struct engine_config {
    std::string nspace;
    uint32_t ntasks = 0;
    std::vector<std::string> node_names;  // by node id
    std::vector<uint32_t> node_of;        // by rank: its node
    std::vector<uint32_t> local_ranks;    // this node's ranks
    uint32_t max_procs = 0;               // most procs a request may name
    bool multinode = false;               // fences span nodes: their deadline is capped
    uint32_t remote_timeout_sec = 300;    // the cap of a multi-node fence
};

// What the engine asks of the rest of the server. Every one is required.
struct engine_routes {
    // A Get of a proc of another namespace (what PMIx_Connect brought, another step's data).
    std::function<void(uint64_t conn, uint32_t request_id, const pmix_proc_t &proc, const std::string &key,
                       const InfoArray &infos)>
        foreign_get;
    // A fence naming procs of other namespaces (the job's rendezvous); `payload` as it came.
    std::function<void(uint64_t conn, uint32_t rank, uint32_t request_id, std::span<const uint8_t> payload)>
        foreign_fence;
    // A Get of PMIX_LOCAL_TOPO (made by a thread when first asked for).
    std::function<void(const get_waiter &w)> topology;
    // Whether Gets can go to other nodes: success, or why not (PMIX_ERR_NOT_SUPPORTED: the step
    // has no node transport; another code: it failed, with the reason as the message).
    std::function<Status()> remote_state;
    // Whether `node` is lost.
    std::function<bool(uint32_t node)> node_lost;
    // A Get of another node's rank that the store does not hold (direct modex), and how many Gets
    // of a connection wait there.
    std::function<void(get_waiter w)> remote_get;
    std::function<size_t(uint64_t conn)> remote_waiting;
    // "died" or "finalized" for a local rank that will never commit again, else empty.
    std::function<std::string(uint32_t rank)> gone;
    // A local rank committed (after its reply and the local Gets it answered): direct modex and
    // the other steps' requests waiting for it.
    std::function<void(uint32_t rank)> committed;
};

// A request's sender as the shell knows it.
struct client_ref {
    uint64_t conn = 0;
    uint32_t rank = PMIX_RANK_UNDEF;
    size_t *fences = nullptr;  // its fences in flight: counted up here, down when their replies go
    int pid = 0;               // the process that connected (SO_PEERCRED), for log lines
    unsigned uid = 0;
};

class protocol_engine {
public:
    // `kvs`, `store`, `fences` and `sink` must outlive the engine.
    protocol_engine(engine_config config, engine_routes routes, kv_store &kvs, const kvs_rank_store &store,
                    fence_tracker &fences, reply_sink &sink);

    // Requests (shared/PROTOCOL.md). A payload that does not decode: sink.refuse().
    void commit(const client_ref &c, uint32_t request_id, std::span<const uint8_t> payload);
    void fence(const client_ref &c, uint32_t request_id, std::span<const uint8_t> payload);
    void get(const client_ref &c, uint32_t request_id, std::span<const uint8_t> payload);

    // A Get whose data the store holds now: its reply with the data (from direct modex and the
    // topology too), or a failed one.
    void answer(const get_waiter &w);
    void fail(const get_waiter &w, pmix_status_t status, const std::string &message);

    // A local rank finalized or died: the Gets waiting for its data fail.
    void rank_left(uint32_t rank, bool died);
    // A connection closed: its waiting Gets are forgotten.
    void drop_connection(uint64_t conn) { _gets.drop_connection(conn); }
    // Timer: waiting Gets past their deadline fail with PMIX_ERR_TIMEOUT.
    void expire(server_clock::time_point now);
    std::optional<server_clock::time_point> next_deadline() const { return _gets.next_deadline(); }
    size_t waiting() const { return _gets.size(); }

private:
    bool is_local(uint32_t rank) const { return rank < _local.size() && _local[rank]; }
    bool room_for_get(const get_waiter &w);
    std::optional<server_clock::time_point> remote_deadline(std::optional<server_clock::time_point> asked) const;

    engine_config _cfg;
    engine_routes _routes;
    kv_store &_kvs;
    const kvs_rank_store &_store;
    fence_tracker &_fences;
    reply_sink &_sink;
    std::vector<bool> _local;  // by rank
    get_waits _gets;           // Gets waiting for a local rank's commit
};

}  // namespace pmixcpp::server
