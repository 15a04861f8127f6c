// PMIx_Publish / PMIx_Lookup / PMIx_Unpublish data of one step, kept by the step's node-0 server
// (the other nodes' servers forward their clients' requests there over the node transport).
// No I/O: the server feeds requests in and sends out the answers this engine returns.
//
// Visibility by the publisher's range: PMIX_RANGE_PROC_LOCAL = the publisher alone, LOCAL = ranks
// on the publisher's node, every other range = every rank of the step. Lifetime by persistence:
// PROC (the default) = until the publisher finalizes or dies, FIRST_READ = until a lookup returns
// it, APP / SESSION / INDEF = until the step ends (the store lives in the node-0 server).
#pragma once

#include <pmix_common.h>

#include <cstdint>
#include <list>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "fence_tracker.h"  // server_clock
#include "status.h"

namespace pmixcpp::server {

// Who asked: a client of some node's server, answered through that node.
struct pubsub_requester {
    uint32_t node = 0;
    uint64_t conn = 0;
    uint32_t request_id = 0;
    uint32_t rank = 0;
};

struct pubsub_entry {
    std::string key;
    uint32_t owner = 0;       // publishing rank
    uint32_t owner_node = 0;
    uint8_t range = PMIX_RANGE_SESSION;
    uint8_t persistence = PMIX_PERSIST_PROC;
    std::vector<uint8_t> info;  // the published pmix_info_t, codec-encoded
};

// One answer to a lookup: its requester, status and the entries found (in the order asked).
struct lookup_answer {
    pubsub_requester to;
    pmix_status_t status = PMIX_SUCCESS;
    std::string message;
    std::vector<pubsub_entry> found;
};

// Bounds, so that no client can grow slurmstepd's memory without end.
inline constexpr size_t kPubsubMaxBytes = 64u << 20;  // published info bytes
inline constexpr size_t kPubsubMaxWaiters = 16384;     // lookups waiting for data

class pubsub_store {
public:
    // Publish `entries` (all or none): PMIX_ERR_DUPLICATE_KEY if a key is already published and
    // visible to the publisher. Returns the lookups that the new data completes.
    Result<std::vector<lookup_answer>> publish(std::vector<pubsub_entry> entries);

    // Look up `keys` for `who` (on node `who.node`). wait_for: 0 = answer now; n > 0 = wait until n
    // of the keys are found (or the deadline: PMIX_ERR_TIMEOUT). Returns the answer when it is ready
    // (PMIX_ERR_OUT_OF_RESOURCE at once when kPubsubMaxWaiters lookups already wait).
    std::optional<lookup_answer> lookup(const pubsub_requester &who, std::vector<std::string> keys, size_t wait_for,
                                        std::optional<server_clock::time_point> deadline);

    // Remove `keys` (empty = all) that `rank` published; the number removed.
    size_t unpublish(uint32_t rank, const std::vector<std::string> &keys);

    // The rank finalized or died: its PMIX_PERSIST_PROC data goes.
    size_t rank_left(uint32_t rank);

    std::vector<lookup_answer> expire(server_clock::time_point now);
    std::optional<server_clock::time_point> next_deadline() const;
    size_t size() const { return _entries.size(); }
    size_t waiting() const { return _waiters.size(); }

private:
    struct waiter {
        pubsub_requester who;
        std::vector<std::string> keys;
        size_t wait_for = 0;
        std::optional<server_clock::time_point> deadline;
    };
    bool visible(const pubsub_entry &e, const pubsub_requester &who) const;
    std::vector<pubsub_entry> collect(const pubsub_requester &who, const std::vector<std::string> &keys);

    std::multimap<std::string, pubsub_entry> _entries;  // by key
    std::list<waiter> _waiters;
    size_t _bytes = 0;
};

}  // namespace pmixcpp::server
