#include "node_liveness.h"

#include <pmix_common.h>

#include <algorithm>

#include "log.h"

namespace pmixcpp::server {

node_liveness::node_liveness(std::string nspace, uint32_t self, std::vector<std::string> node_names,
                             node_liveness_ops ops, uint32_t tree_width)
    : _nspace(std::move(nspace)),
      _self(self),
      _names(std::move(node_names)),
      _ops(std::move(ops)),
      _width(std::clamp(tree_width, wire::kMinNodeDownWidth, wire::kMaxNodeDownWidth)) {
    _lost.assign(_names.size(), false);
}

std::vector<uint32_t> node_liveness::tree_children(uint32_t root, uint32_t node, uint32_t width, uint32_t nodes) {
    std::vector<uint32_t> out;
    if (nodes == 0 || root >= nodes || node >= nodes) return out;
    const uint64_t first = ((uint64_t(node) + nodes - root) % nodes) * width + 1;
    for (uint64_t i = first; i < first + width && i < nodes; ++i) out.push_back(uint32_t((i + root) % nodes));
    return out;
}

void node_liveness::send_below(relay &r, uint32_t node) {
    std::vector<uint32_t> todo = tree_children(r.msg.node, node, r.msg.width, uint32_t(_lost.size()));
    std::vector<uint32_t> to;
    for (size_t i = 0; i < todo.size(); ++i) {  // todo grows: a subtree at a time, no recursion
        const uint32_t c = todo[i];
        if (c == _self && r.forwarded) continue;
        if (c == _self || _lost[c]) {
            if (c == _self) r.forwarded = true;
            for (uint32_t g : tree_children(r.msg.node, c, r.msg.width, uint32_t(_lost.size()))) todo.push_back(g);
            continue;
        }
        to.push_back(c);
    }
    if (to.empty()) return;
    wire::Writer w;
    if (Status st = wire::encode(w, r.msg); !st.ok()) {
        PMIXCPP_LOG_ERROR("%s: node-down message about node %s not sent: %s", _nspace.c_str(),
                          name_of(r.msg.node).c_str(), st.message().c_str());
        return;
    }
    for (uint32_t c : to) {
        r.sent.push_back(c);
        _ops.send(c, node_channel::node_down, w.data());
    }
}

const std::string &node_liveness::name_of(uint32_t node) const {
    static const std::string unknown = "(unknown)";
    return node < _names.size() ? _names[node] : unknown;
}

std::vector<uint32_t> node_liveness::lost_nodes() const {
    std::vector<uint32_t> out;
    for (uint32_t n = 0; n < _lost.size(); ++n)
        if (_lost[n]) out.push_back(n);
    return out;
}

void node_liveness::node_lost(uint32_t node, const std::string &why, bool noticed_here) {
    if (node >= _lost.size() || node == _self || _lost[node]) return;
    _lost[node] = true;
    _probes.erase(node);
    _queries.erase(node);
    PMIXCPP_LOG_ERROR("%s: node %s is lost: %s", _nspace.c_str(), name_of(node).c_str(), why.c_str());
    _ops.forget(node);
    // What we passed on to it may have gone no further: its children in those trees.
    for (auto &[about, r] : _relays)
        if (std::find(r.sent.begin(), r.sent.end(), node) != r.sent.end()) send_below(r, node);
    if (noticed_here) {
        // The others may have no connection to it: told through its tree, from its children down.
        relay &r = _relays[node];
        r.msg = wire::node_down_message{node, why.substr(0, 1024), _self, _width};
        send_below(r, node);
    }
    _ops.lost(node, why);
    settle_queries();  // its answer is no longer due
}

void node_liveness::unreachable(uint32_t node, const std::string &why, time_point now) {
    if (node >= _lost.size() || node == _self || _lost[node] || _queries.count(node)) return;
    if (_ops.said_goodbye(node)) return;
    query q{now + kQueryTimeout, {}, why};
    wire::Writer w;
    (void)wire::encode(w, wire::node_query_message{1, node, false});
    for (uint32_t n = 0; n < _lost.size(); ++n)
        if (n != _self && n != node && !_lost[n] && _ops.peer_alive(n)) q.waiting.insert(n);
    PMIXCPP_LOG_VERBOSE("%s: node %s is gone (%s); asking %zu nodes whether it ended normally", _nspace.c_str(),
                        name_of(node).c_str(), why.c_str(), q.waiting.size());
    std::vector<uint32_t> ask(q.waiting.begin(), q.waiting.end());
    _queries.emplace(node, std::move(q));
    for (uint32_t n : ask) _ops.send(n, node_channel::node_query, w.data());
    settle_queries();
}

void node_liveness::settle_queries() {
    std::vector<std::pair<uint32_t, std::string>> done;
    for (auto &[node, q] : _queries) {
        std::erase_if(q.waiting, [this](uint32_t n) { return _lost[n] || !_ops.peer_alive(n); });
        if (q.waiting.empty()) done.emplace_back(node, q.why);
    }
    for (const auto &[node, why] : done) {
        _queries.erase(node);
        node_lost(node, "its server is gone (" + why + ") and no live node got its goodbye", true);
    }
}

void node_liveness::on_query(uint32_t from, std::span<const uint8_t> body) {
    wire::node_query_message q;
    Status st = wire::decode(body, &q);
    if (st.ok() && q.node >= _lost.size()) st = Status(PMIX_ERR_BAD_PARAM, "about node " + std::to_string(q.node));
    if (!st.ok()) {
        PMIXCPP_LOG_ERROR("%s: malformed node query from node %u dropped: %s", _nspace.c_str(), from,
                          st.message().c_str());
        return;
    }
    if (q.kind == 1) {
        wire::Writer w;
        (void)wire::encode(w, wire::node_query_message{2, q.node, _ops.said_goodbye(q.node)});
        _ops.send(from, node_channel::node_query, w.data());
        return;
    }
    auto it = _queries.find(q.node);
    if (it == _queries.end()) return;
    if (q.said_goodbye) {
        PMIXCPP_LOG_VERBOSE("%s: node %s ended normally (node %s got its goodbye)", _nspace.c_str(),
                            name_of(q.node).c_str(), name_of(from).c_str());
        _queries.erase(it);
        return;
    }
    it->second.waiting.erase(from);
    settle_queries();
}

Status node_liveness::add_channels(node_channels &table) {
    PMIXCPP_RETURN_IF_ERROR(table.add(node_channel::node_down, "node down",
                                      [this](uint32_t from, std::span<const uint8_t> body) { on_node_down(from, body); }));
    PMIXCPP_RETURN_IF_ERROR(table.add(node_channel::node_probe, "node probe",
                                      [this](uint32_t from, std::span<const uint8_t> body) { on_probe(from, body); }));
    return table.add(node_channel::node_query, "node query",
                     [this](uint32_t from, std::span<const uint8_t> body) { on_query(from, body); });
}

void node_liveness::on_node_down(uint32_t from, std::span<const uint8_t> body) {
    wire::node_down_message m;
    Status st = wire::decode(body, uint32_t(_lost.size()), &m);
    if (st.ok() && m.node == from) st = Status(PMIX_ERR_BAD_PARAM, "about the sender itself");
    if (!st.ok()) {
        PMIXCPP_LOG_ERROR("%s: malformed node-down message from node %u dropped: %s", _nspace.c_str(), from,
                          st.message().c_str());
        return;
    }
    if (m.node == _self) {
        PMIXCPP_LOG_WARNING("%s: node %s believes this node is lost (%s)", _nspace.c_str(), name_of(from).c_str(),
                            m.why.c_str());
        return;
    }
    auto [it, fresh] = _relays.try_emplace(m.node);
    if (fresh) it->second.msg = m;
    if (!_lost[m.node]) {
        std::string how = "noticed by node " + name_of(m.origin);
        if (from != m.origin) how += " (told through node " + name_of(from) + ")";
        node_lost(m.node, how + ": " + m.why, false);
    }
    // Once per lost node, whether it was known here or not: our subtree may wait for it.
    relay &r = _relays[m.node];
    if (r.forwarded) return;
    r.forwarded = true;
    send_below(r, _self);
}

void node_liveness::probe(const std::vector<uint32_t> &nodes, time_point now) {
    wire::Writer w;
    (void)wire::encode(w, wire::probe_kind::ping);
    for (uint32_t n : nodes) {
        if (n >= _lost.size() || n == _self || _lost[n] || _probes.count(n)) continue;
        _probes[n] = now + kProbeTimeout;
        PMIXCPP_LOG_VERBOSE("%s: probing node %s", _nspace.c_str(), name_of(n).c_str());
        _ops.send(n, node_channel::node_probe, w.data());
    }
}

void node_liveness::on_probe(uint32_t from, std::span<const uint8_t> body) {
    wire::probe_kind kind;
    if (Status st = wire::decode(body, &kind); !st.ok()) {
        PMIXCPP_LOG_ERROR("%s: malformed probe from node %u dropped: %s", _nspace.c_str(), from, st.message().c_str());
        return;
    }
    if (kind == wire::probe_kind::pong) {
        if (_probes.erase(from))
            PMIXCPP_LOG_VERBOSE("%s: node %s answered the probe", _nspace.c_str(), name_of(from).c_str());
        return;
    }
    wire::Writer w;
    (void)wire::encode(w, wire::probe_kind::pong);
    _ops.send(from, node_channel::node_probe, w.data());
}

void node_liveness::expire(time_point now) {
    std::vector<uint32_t> silent;
    for (const auto &[node, deadline] : _probes)
        if (deadline <= now) silent.push_back(node);
    for (uint32_t node : silent) {
        _probes.erase(node);
        node_lost(node, "its server did not answer a liveness probe within 5 s after a fence timed out waiting for it",
                  true);
    }
    std::vector<std::pair<uint32_t, std::string>> unanswered;
    for (const auto &[node, q] : _queries)
        if (q.deadline <= now) unanswered.emplace_back(node, q.why);
    for (const auto &[node, why] : unanswered) {
        _queries.erase(node);
        node_lost(node, "its server is gone (" + why + ") and no live node said within 2 s that it ended normally",
                  true);
    }
}

std::optional<node_liveness::time_point> node_liveness::next_deadline() const {
    std::optional<time_point> next;
    for (const auto &[node, deadline] : _probes)
        if (!next || deadline < *next) next = deadline;
    for (const auto &[node, q] : _queries)
        if (!next || q.deadline < *next) next = q.deadline;
    return next;
}

}  // namespace pmixcpp::server
