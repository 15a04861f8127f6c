// The remote-fence backend: the part of a fence whose ranks span nodes. When every local
// participant has entered, the fence tracker hands the fence here (remote_fences::start): this
// node's contribution (what its ranks committed, read through the rank store) goes into a node
// collective of plugin/coll, started through `remote_fence_ops`; the collective's result comes
// back through finish(), the other nodes' data is stored, and the fence's waiters get their
// answer from the fence tracker through the reply sink. A node that is lost, or a node transport
// that fails, fails the fences that need it.
//
// No I/O: the collective, the node transport's state and the lost nodes are the shell's, asked
// through the ops. Loop thread only. Re-entrancy (README.md): the shell posts the collective's
// completion before it calls finish(); describe_missing() runs inside the fence tracker's expiry,
// so the liveness probe it asks for is posted by the shell (ops.probe).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "../coll/coll_message.h"
#include "fence_tracker.h"
#include "kvs.h"
#include "rank_store.h"
#include "reply_sink.h"
#include "status.h"

namespace pmixcpp::server {

struct remote_fence_config {
    std::string nspace;
    uint32_t ntasks = 0;
    uint32_t node_id = 0;                 // this node
    std::vector<std::string> node_names;  // by node id
    std::vector<uint32_t> node_of;        // by rank: its node
};

// What the backend asks of the shell. Every one is required.
struct remote_fence_ops {
    // Whether the node collectives can run: success, or why not (the failure a fence gets).
    std::function<Status()> transport;
    // The node collective of a fence: start it (nodes sorted, this node's blob), forget it.
    std::function<void(uint64_t instance, uint64_t signature, std::vector<uint32_t> nodes, std::vector<uint8_t> blob,
                       bool collect)>
        start_collective;
    std::function<void(uint64_t instance)> cancel_collective;
    // The nodes a collective still waits for.
    std::function<std::vector<uint32_t>(uint64_t instance)> missing;
    // What the node transport adds to a timed-out fence's message ("" when nothing).
    std::function<std::string()> transport_note;
    // Ask whether these nodes' servers are still there (node_liveness::probe); runs later.
    std::function<void(std::vector<uint32_t> nodes)> probe;
    // Whether `node` is lost.
    std::function<bool(uint32_t node)> node_lost;
    // Another node's data of `rank` is in the store now (the Gets waiting in direct modex).
    std::function<void(uint32_t rank)> data_stored;
};

class remote_fence_backend final : public remote_fences {
public:
    // `kvs`, `store`, `fences` and `sink` must outlive the backend; `fences` may be constructed
    // after it (it is used only once a fence starts).
    remote_fence_backend(remote_fence_config config, remote_fence_ops ops, const kv_store &kvs, kvs_rank_store &store,
                         fence_tracker &fences, reply_sink &sink);

    // remote_fences (called by the fence tracker).
    Status start(uint64_t instance, const std::vector<uint32_t> &participants, bool collect) override;
    std::string describe_missing(uint64_t instance) override;
    void cancel(uint64_t instance) override;

    // The node collective of `instance` completed with every node's contribution.
    void finish(uint64_t instance, std::vector<coll::node_blob> &&result);
    // `node` is lost: the fences that need it fail with PMIX_ERR_NODE_DOWN; how many.
    size_t node_lost(uint32_t node, const std::string &text);
    // The node transport cannot work: every fence in flight fails with PMIX_ERR_UNREACH.
    size_t transport_failed(const std::string &text);

    size_t in_flight() const { return _in_flight.size(); }
    // Up to this generation of the store, what the local ranks committed is on every node.
    uint64_t whole_step_base() const { return _whole_step_base; }

private:
    void fail(uint64_t instance, pmix_status_t status, const std::string &text);

    struct fence {
        std::vector<uint32_t> nodes;         // sorted
        uint64_t whole_step_generation = 0;  // a collecting fence of every rank: the generation it sent
    };
    remote_fence_config _cfg;
    remote_fence_ops _ops;
    const kv_store &_kvs;
    kvs_rank_store &_store;
    fence_tracker &_fences;
    reply_sink &_sink;
    std::vector<bool> _local;  // by rank
    std::map<uint64_t, fence> _in_flight;
    // What the local ranks committed up to this generation is on every node: a collecting fence of
    // every rank of the step completed with it.
    uint64_t _whole_step_base = 0;
};

}  // namespace pmixcpp::server
