// The fence collectives of one step on one node: fences in flight by key, the choice of
// algorithm, messages that arrive before the local part started, completed keys. No I/O: sends go
// through a callback (the node transport in the server), completions through another.
//
// Algorithm choice (PMIxCppFence): tree, ring or direct when forced; `auto` takes the direct
// exchange over at most direct_max_nodes nodes (default 0: on a CPU-bound host its m-1 messages
// per node cost more than the tree's extra hop), the dissemination barrier for a fence without
// data (not collecting, empty local contribution) over at least dissemination_min_nodes nodes,
// the ring over two nodes (a single exchange) and for a collecting fence over >= 3 nodes whose
// local contribution exceeds the ring threshold, the tree otherwise. `dissemination` forced takes
// the barrier for every fence without data and decides the others as auto does. Nodes may
// disagree (contributions differ in size, or settings differ): a node that receives a message of
// another algorithm for a fence it runs joins that algorithm too, with the same contribution, and
// the fence completes by whichever finishes first. Direct, ring and dissemination messages reach
// every node (each node's first message goes to its successor, which then joins), so every node
// joins them and they finish; a tree or direct completion anywhere means every node has joined
// it, so it finishes everywhere: no disagreement can hang a fence. The barrier carries no data:
// a node that started a fence with data and joins another node's barrier (their PMIX_COLLECT_DATA
// differ) completes without the others' contributions if the barrier finishes first; what it
// then lacks it fetches by direct modex, as any key it does not hold.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "engines.h"
#include "plugin_config.h"

namespace pmixcpp::coll {

// The fence algorithm: one type from the setting (PMIxCppFence, shared/plugin_config.h) to here.
using algorithm = ::pmixcpp::fence_algo;

// PMIxCppFence=auto: the node count from which a fence without data takes the dissemination
// barrier instead of the tree (fence_manager.cc says why).
inline constexpr uint32_t kDisseminationMinNodes = 64;

struct manager_options {
    uint32_t self_node = 0;
    uint32_t nnodes = 1;
    algorithm algo = algorithm::automatic;
    uint32_t tree_width = 0;  // 0: by the fence's node count (default_tree_width)
    // Per step node id: its group (leaf switch) for the tree's shape (engines.h); empty = none.
    std::vector<uint32_t> node_groups;
    uint32_t ring_threshold = 65536;
    uint32_t direct_max_nodes = 0;  // auto: direct exchange up to this many nodes
    // auto: the dissemination barrier for fences without data from this many nodes on
    uint32_t dissemination_min_nodes = kDisseminationMinNodes;
    std::function<void(uint32_t node, std::span<const uint8_t> body)> send;  // copies what it keeps
    // The same message to several nodes (a fan-out); unset: `send` for each.
    std::function<void(std::span<const uint32_t> nodes, std::span<const uint8_t> body)> send_to;
    // (instance, contributions of every participating node)
    std::function<void(uint64_t instance, std::vector<node_blob> &&result)> on_done;
};

class fence_manager {
public:
    explicit fence_manager(manager_options opts) : _opts(std::move(opts)) {}

    // Our local part of fence `instance` is complete. `nodes`: the sorted step node ids that
    // host participants (includes us), `signature`: of the participant set.
    void start(uint64_t instance, uint64_t signature, std::vector<uint32_t> nodes, blob local, bool collect);
    // A collective message from node `from` (already authenticated by the transport).
    // Malformed or unexpected messages are logged and dropped.
    void receive(uint32_t from, std::span<const uint8_t> body);
    // Nodes the fence still waits for (step node ids), for the timeout message.
    std::vector<uint32_t> missing(uint64_t instance) const;
    // Forget a fence that failed locally (timeout); its late messages are dropped.
    void cancel(uint64_t instance);
    size_t active() const { return _active.size(); }

private:
    struct fence {
        uint64_t instance = 0;
        std::vector<uint32_t> nodes;
        blob local;
        bool collect = false;
        std::unique_ptr<tree_engine> tree;
        std::unique_ptr<ring_engine> ring;
        std::unique_ptr<direct_engine> direct;
        std::unique_ptr<dissemination_engine> dissemination;
    };
    void run_engine(fence &f, msg_kind kind);  // create + start the engine for a kind
    void deliver(const coll_key &key, uint32_t from, coll_message &&m);
    void apply(const coll_key &key, actions &&a);

    manager_options _opts;
    std::map<uint64_t, uint32_t> _next_seq;  // signature -> next sequence number
    std::map<coll_key, fence> _active;
    std::map<coll_key, std::vector<std::pair<uint32_t, coll_message>>> _early;
    std::set<coll_key> _finished;
};

}  // namespace pmixcpp::coll
