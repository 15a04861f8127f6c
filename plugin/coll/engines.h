// Fence collective engines: no I/O. Each engine runs one fence instance among the nodes that
// host its participants (`nodes`, sorted step node ids). It is fed the local contribution
// (start) and the peers' messages (receive) and answers with actions: messages to send and,
// once complete, every participating node's contribution (the tree leaves out empty ones: a
// node that contributed nothing is simply absent from its messages and its result).
//
//  tree_engine  k-ary tree rooted at nodes[0]: fan-in of contributions, fan-out of the union.
//               2 * depth message hops; best for small payloads.
//  ring_engine  ring allgather: each node passes on what it received from its predecessor;
//               m-1 hops of one contribution each; best for large payloads (no root hot spot).
//  direct_engine  every node sends its contribution to every other node: one message hop,
//               m-1 messages out and in per node; best for few nodes.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "coll_message.h"

namespace pmixcpp::coll {

struct send_action {
    uint32_t node = 0;
    coll_message msg;
    // More nodes the same message goes to (a tree's fan-out): one copy of the data and one
    // encoding for all of them, where a copy per child made the fan-out of a large modex cost
    // the root (children + 1) times the job's data at once.
    std::vector<uint32_t> also;
};
// Every destination of `s` (s.node first, then s.also).
std::vector<uint32_t> destinations(const send_action &s);

struct actions {
    std::vector<send_action> sends;
    bool done = false;
    std::vector<node_blob> result;  // when done: one blob per participating node (tree: per non-empty one)
};

enum class engine_state { waiting, started, done };
const char *to_string(engine_state s);

// The shape of a tree fence over `nodes` (sorted step node ids), rooted at nodes[0].
//  - no groups: a k-ary heap by position (node i's parent is node (i-1)/k);
//  - groups (group_of[step node id], e.g. the node's leaf switch from Slurm's topology): the
//    nodes of one group form a subtree (a k-ary heap of the group's nodes, rooted at its first
//    node), and the group roots form a k-ary heap in order of first appearance, so a fence
//    crosses between groups 2 * (groups - 1) times. Not for a tree the flat heap makes one level
//    deep (nodes <= k + 1: every node one hop from the root), where grouping could only add a
//    level, and a level is a software hop (tens of microseconds), a switch crossing far less.
//    A group_of shorter than the largest node id is ignored (no groups).
struct tree_links {
    uint32_t parent = UINT32_MAX;  // UINT32_MAX: the root
    std::vector<uint32_t> children;
};
tree_links tree_links_of(const std::vector<uint32_t> &nodes, uint32_t self, uint32_t width,
                         const std::vector<uint32_t> &group_of = {});
// PMIxCppTreeWidth=auto: the fan-out for a tree over `nodes` nodes (the rule and the simulator's
// table behind it: docs/simulator.md, "Tree width").
uint32_t default_tree_width(size_t nodes);
// `width` as configured (0: auto) for a tree over `nodes` nodes.
inline uint32_t tree_width_for(uint32_t width, size_t nodes) { return width ? width : default_tree_width(nodes); }
// Whether a tree over `nodes` nodes of fan-out `width` follows node groups when it has them.
inline bool tree_follows_groups(size_t nodes, uint32_t width) { return nodes > size_t(width) + 1; }

class tree_engine {
public:
    tree_engine(coll_key key, std::vector<uint32_t> nodes, uint32_t self_node, uint32_t width,
                const std::vector<uint32_t> &group_of = {});
    void start(blob local, actions &out);
    // Fails for a message this engine cannot take (wrong kind or sender, duplicate).
    Status receive(uint32_t from, coll_message &&m, actions &out);
    std::vector<uint32_t> missing() const;  // nodes we still wait for
    engine_state state() const { return _state; }

    uint32_t parent() const;                 // step node id; only for a non-root
    std::vector<uint32_t> children() const;  // step node ids

private:
    void maybe_up(actions &out);
    void finish(std::vector<node_blob> all, actions &out);

    coll_key _key;
    std::vector<uint32_t> _nodes;
    uint32_t _self;
    tree_links _links;
    engine_state _state = engine_state::waiting;
    bool _sent_up = false;
    std::set<uint32_t> _children_heard;
    std::vector<node_blob> _gathered;
};

// The ring's order: `nodes` as given, or with node groups (as for the tree, e.g. leaf switches)
// the nodes of each group next to each other, groups in order of first appearance, members in
// node order, so a lap crosses between groups once per group instead of at every interleaved
// neighbour. A group_of shorter than the largest node id is ignored.
std::vector<uint32_t> ring_order_of(const std::vector<uint32_t> &nodes, const std::vector<uint32_t> &group_of);

class ring_engine {
public:
    ring_engine(coll_key key, std::vector<uint32_t> nodes, uint32_t self_node,
                const std::vector<uint32_t> &group_of = {});
    void start(blob local, actions &out);
    Status receive(uint32_t from, coll_message &&m, actions &out);
    std::vector<uint32_t> missing() const;
    engine_state state() const { return _state; }

private:
    void maybe_done(actions &out);

    coll_key _key;
    std::vector<uint32_t> _nodes;
    uint32_t _self;
    uint32_t _next = 0, _prev = 0;
    engine_state _state = engine_state::waiting;
    std::map<uint32_t, blob> _have;  // origin node -> data
};

class direct_engine {
public:
    direct_engine(coll_key key, std::vector<uint32_t> nodes, uint32_t self_node);
    void start(blob local, actions &out);
    // Takes one blob, from its origin node, once.
    Status receive(uint32_t from, coll_message &&m, actions &out);
    std::vector<uint32_t> missing() const;
    engine_state state() const { return _state; }

private:
    void maybe_done(actions &out);

    coll_key _key;
    std::vector<uint32_t> _nodes;
    uint32_t _self;
    engine_state _state = engine_state::waiting;
    std::map<uint32_t, blob> _have;  // origin node -> data (also what came before start)
};

}  // namespace pmixcpp::coll
