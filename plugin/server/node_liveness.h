// Lost nodes, the step-wide part: which of the step's nodes are lost, the liveness probe, the
// question "did it end normally?" about a node that refused us, and the node-down message that
// tells the others. No I/O: driven by the transport's reports (a peer lost or unreachable,
// plugin/net/liveness.h decides those), by node messages (channels node_down, node_probe,
// node_query; bodies in shared/wire/node_messages.h) and timer ticks; it acts through
// `node_liveness_ops` (send, the transport's view of a peer, and `lost` for the server's part:
// events, fences, Gets).
//
//  probe   a node that a collective timed out on: ping; no pong within kProbeTimeout = lost.
//          A slow application (ranks that never entered) answers, a hung or stopped
//          slurmstepd does not.
//  query   a node that refused us after a loss (net/transport.h): ask every other live node
//          whether it said goodbye there. One "yes": it finished; all "no" (nodes that are lost
//          or left meanwhile count as no), or no answer within kQueryTimeout: it is lost.
//  lost    once per node: the transport forgets it, the others are told (when noticed here),
//          then ops.lost; a probe or query about it ends.
//  told    through a tree, never by the noticer to every node: the `width`-ary tree over the
//          step's nodes rooted at the lost node L (heap order of the node index relative to L:
//          node (L + i) % N's children are (L + i k + 1 .. i k + k) % N). The noticer sends
//          node_down to L's children, each node taking it forwards it to its own children once
//          per lost node (also one that knew already: it noticed the loss itself, or was told by
//          another noticer), and drops any later copy. A child known lost here is skipped by
//          sending to its children instead (recursively). Rooting the tree at L, not at the
//          noticer, makes it one tree for every noticer: the peers of a dead server usually
//          notice it at about the same time (its tree and ring neighbours, direct-modex peers),
//          and one forward per node per lost node then still reaches everyone.
//  relay lost at the same moment: a node that sent L's node-down to a node R (R's message
//          may never have gone on) and later takes R for lost (noticed itself, or told through
//          R's own tree) sends L's node-down to R's children too. No timer: R's loss is noticed
//          by its own neighbours like any other and told through R's tree; fences that need R
//          fail node-down. Until the repair, a node below R learns of L as it would untold (its
//          own link to L breaking, a fence's timeout and its probe).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "fence_tracker.h"  // server_clock
#include "node_channels.h"
#include "wire/node_messages.h"

namespace pmixcpp::server {

struct node_liveness_ops {
    // A node message (an encoded body) on node_down, node_probe or node_query.
    std::function<void(uint32_t node, node_channel chan, std::vector<uint8_t> body)> send;
    // The transport's view: whether `node` said goodbye to us; whether it is alive (neither lost
    // nor left); forget a lost node (its messages are dropped from then on).
    std::function<bool(uint32_t node)> said_goodbye;
    std::function<bool(uint32_t node)> peer_alive;
    std::function<void(uint32_t node)> forget;
    // `node` is lost (once): the server's consequences.
    std::function<void(uint32_t node, const std::string &why)> lost;
};

class node_liveness {
public:
    using time_point = server_clock::time_point;
    static constexpr auto kProbeTimeout = std::chrono::seconds(5);
    static constexpr auto kQueryTimeout = std::chrono::seconds(2);

    // tree_width: the fan-out of the tree losses are told through (the fence's, PMIxCppTreeWidth
    // or coll::default_tree_width; every node of the step uses the same).
    node_liveness(std::string nspace, uint32_t self, std::vector<std::string> node_names, node_liveness_ops ops,
                  uint32_t tree_width);

    bool is_lost(uint32_t node) const { return node < _lost.size() && _lost[node]; }
    std::vector<uint32_t> lost_nodes() const;

    // `node` is lost: noticed here (the transport, a probe, a query: the others are told) or told
    // by another node.
    void node_lost(uint32_t node, const std::string &why, bool noticed_here);
    // The transport: a peer that refused us after a loss (dead or finished?).
    void unreachable(uint32_t node, const std::string &why, time_point now);
    // A collective timed out waiting for these nodes: are their servers still there?
    void probe(const std::vector<uint32_t> &nodes, time_point now);

    // Node messages; add_channels registers these three into the table.
    Status add_channels(node_channels &table);
    void on_node_down(uint32_t from, std::span<const uint8_t> body);
    void on_probe(uint32_t from, std::span<const uint8_t> body);
    void on_query(uint32_t from, std::span<const uint8_t> body);

    // The children of `node` in the `width`-ary tree over `nodes` nodes rooted at `root`.
    static std::vector<uint32_t> tree_children(uint32_t root, uint32_t node, uint32_t width, uint32_t nodes);
    uint32_t tree_width() const { return _width; }

    // Timer: probes and queries past their deadline.
    void expire(time_point now);
    std::optional<time_point> next_deadline() const;
    size_t probes() const { return _probes.size(); }
    size_t queries() const { return _queries.size(); }

private:
    // A lost node's node-down as it is passed on here.
    struct relay {
        wire::node_down_message msg;
        bool forwarded = false;      // to our own children in its tree
        std::vector<uint32_t> sent;  // every node it went to from here
    };
    // Sends r.msg to the live nodes right below `node` in its tree (lost ones skipped to their
    // children; this node's own place: its own children, once).
    void send_below(relay &r, uint32_t node);
    void settle_queries();
    const std::string &name_of(uint32_t node) const;

    std::string _nspace;
    uint32_t _self;
    std::vector<std::string> _names;
    node_liveness_ops _ops;
    uint32_t _width;
    std::vector<bool> _lost;                     // by node
    std::map<uint32_t, relay> _relays;           // by lost node
    std::map<uint32_t, time_point> _probes;      // node -> answer deadline
    struct query {
        time_point deadline;
        std::set<uint32_t> waiting;  // nodes whose answer is still due
        std::string why;
    };
    std::map<uint32_t, query> _queries;  // by the node asked about
};

}  // namespace pmixcpp::server
