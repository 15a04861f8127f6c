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

    node_liveness(std::string nspace, uint32_t self, std::vector<std::string> node_names, node_liveness_ops ops);

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

    // Timer: probes and queries past their deadline.
    void expire(time_point now);
    std::optional<time_point> next_deadline() const;
    size_t probes() const { return _probes.size(); }
    size_t queries() const { return _queries.size(); }

private:
    void settle_queries();
    const std::string &name_of(uint32_t node) const;

    std::string _nspace;
    uint32_t _self;
    std::vector<std::string> _names;
    node_liveness_ops _ops;
    std::vector<bool> _lost;                     // by node
    std::map<uint32_t, time_point> _probes;      // node -> answer deadline
    struct query {
        time_point deadline;
        std::set<uint32_t> waiting;  // nodes whose answer is still due
        std::string why;
    };
    std::map<uint32_t, query> _queries;  // by the node asked about
};

}  // namespace pmixcpp::server
