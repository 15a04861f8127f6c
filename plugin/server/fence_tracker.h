// Fence engine: which fences are in flight, who has entered, when each completes or fails.
// No I/O: the server feeds it events (a rank entered, a rank is gone, time passed) and sends the
// replies of the outcomes it returns. Owned by the loop thread.
//
// A fence is identified by its sorted set of participating ranks. Several fences with distinct
// sets may be in flight; a rank entering a set it already entered (Fence_nb twice) joins the next
// instance of that set, so instances of one set complete in order.
//
// Multi-node hook: when every local participant has entered a fence that also has participants
// on other nodes, the tracker hands it to the remote_fences backend; the backend later calls
// remote_done(). Until the node transport exists the backend refuses (PMIX_ERR_NOT_SUPPORTED).
#pragma once

#include <pmix_common.h>

#include <chrono>
#include <cstdint>
#include <list>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "status.h"

namespace pmixcpp::server {

using server_clock = std::chrono::steady_clock;

// Who is waiting for a fence reply: a client connection and its request id.
struct fence_waiter {
    uint64_t conn = 0;
    uint32_t request_id = 0;
    uint32_t rank = 0;
};

struct fence_outcome {
    uint64_t instance = 0;
    pmix_status_t status = PMIX_SUCCESS;
    std::string message;  // why it failed (empty on success)
    std::vector<fence_waiter> waiters;
};

enum class fence_state { collecting, remote, done };
const char *to_string(fence_state s);

// The multi-node part of a fence. The tracker calls start() once every local participant has
// entered; a non-ok Status fails the fence at once.
class remote_fences {
public:
    virtual ~remote_fences() = default;
    virtual Status start(uint64_t instance, const std::vector<uint32_t> &participants, bool collect) = 0;
    // What the remote part of `instance` still waits for (for the timeout message), and forget it.
    virtual std::string describe_missing(uint64_t /*instance*/) { return {}; }
    virtual void cancel(uint64_t /*instance*/) {}
};

class fence_tracker {
public:
    // ntasks: ranks of the namespace; local_ranks: the ranks served by this node.
    fence_tracker(std::string nspace, uint32_t ntasks, const std::vector<uint32_t> &local_ranks,
                  remote_fences *remote);

    // Normalise a proc set (already restricted to our namespace): sorted, unique; empty or any
    // PMIX_RANK_WILDCARD = every rank. Fails for ranks out of range.
    Result<std::vector<uint32_t>> normalise(const std::vector<uint32_t> &ranks) const;

    // `waiter.rank` enters the fence over `participants` (normalised). Returns the fences that
    // finished as a result (this one, complete or failed, or none).
    std::vector<fence_outcome> enter(const std::vector<uint32_t> &participants, const fence_waiter &waiter,
                                     bool collect, std::optional<server_clock::time_point> deadline);

    // A local rank went away (died: PMIX_ERR_PROC_ABORTED; finalized and its process exited:
    // PMIX_ERR_LOST_CONNECTION).
    // Every pending fence that includes it and that it has not entered fails; later fences
    // including it fail at once until it connects again (rank_back).
    std::vector<fence_outcome> rank_gone(uint32_t rank, pmix_status_t why);
    void rank_back(uint32_t rank);

    // The remote part of `instance` finished.
    std::vector<fence_outcome> remote_done(uint64_t instance, pmix_status_t status, const std::string &message);

    // Fail the fences whose deadline passed (PMIX_ERR_TIMEOUT).
    std::vector<fence_outcome> expire(server_clock::time_point now);
    std::optional<server_clock::time_point> next_deadline() const;

    size_t pending() const { return _instances.size(); }
    // The backend of the remote parts, when it is made after the tracker (before any fence).
    void set_remote(remote_fences *remote) { _remote = remote; }

    // Fail everything (server shutdown).
    std::vector<fence_outcome> fail_all(pmix_status_t status, const std::string &message);

private:
    struct instance {
        uint64_t id = 0;
        std::vector<uint32_t> participants;
        std::vector<uint32_t> local_participants;
        std::set<uint32_t> entered;
        std::vector<fence_waiter> waiters;
        bool collect = false;
        bool has_remote = false;
        fence_state state = fence_state::collecting;
        std::optional<server_clock::time_point> deadline;
    };
    using instance_list = std::list<instance>;

    bool is_local(uint32_t rank) const;
    fence_outcome finish(instance &inst, pmix_status_t status, std::string message);
    // After an entry: complete, hand to remote, or nothing yet.
    void advance(instance &inst, std::vector<fence_outcome> &out);
    void erase_done();
    std::string describe(const instance &inst) const;

    std::string _nspace;
    uint32_t _ntasks;
    std::vector<bool> _local;               // indexed by rank
    std::map<uint32_t, pmix_status_t> _gone;  // local ranks that left, and why
    remote_fences *_remote;
    uint64_t _next_id = 1;
    instance_list _instances;               // in creation order
};

// The backend used until the node transport exists: refuses every multi-node fence.
class no_remote_fences : public remote_fences {
public:
    Status start(uint64_t instance, const std::vector<uint32_t> &participants, bool collect) override;
};

}  // namespace pmixcpp::server
