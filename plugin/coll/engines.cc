#include "engines.h"

#include <algorithm>
#include <map>

namespace pmixcpp::coll {

std::vector<uint32_t> destinations(const send_action &s) {
    std::vector<uint32_t> d;
    d.reserve(1 + s.also.size());
    d.push_back(s.node);
    d.insert(d.end(), s.also.begin(), s.also.end());
    return d;
}

const char *to_string(engine_state s) {
    switch (s) {
    case engine_state::waiting: return "waiting";
    case engine_state::started: return "started";
    case engine_state::done: return "done";
    }
    return "unknown";
}

namespace {
uint32_t index_of(const std::vector<uint32_t> &nodes, uint32_t node) {
    auto it = std::lower_bound(nodes.begin(), nodes.end(), node);
    return it != nodes.end() && *it == node ? static_cast<uint32_t>(it - nodes.begin()) : UINT32_MAX;
}

// The nodes of each group, groups in order of first appearance, members in node order; empty
// when group_of does not cover the nodes.
std::vector<std::vector<uint32_t>> groups_of(const std::vector<uint32_t> &nodes, const std::vector<uint32_t> &group_of) {
    if (nodes.empty() || group_of.empty() || nodes.back() >= group_of.size()) return {};
    std::vector<std::vector<uint32_t>> out;
    std::map<uint32_t, size_t> slot;  // group id -> index in out
    for (uint32_t n : nodes) {
        auto [it, fresh] = slot.emplace(group_of[n], out.size());
        if (fresh) out.emplace_back();
        out[it->second].push_back(n);
    }
    return out;
}
}  // namespace

// ---------------------------------------------------------------- tree

namespace {
// Links of position `i` in a k-ary heap over `members`.
void heap_links(const std::vector<uint32_t> &members, size_t i, uint32_t width, tree_links *out) {
    if (i > 0) out->parent = members[(i - 1) / width];
    for (uint64_t c = uint64_t(i) * width + 1; c <= uint64_t(i) * width + width && c < members.size(); ++c)
        out->children.push_back(members[c]);
}
}  // namespace

// A level of the tree costs its parent one receive per child going up and a send per child
// coming down (tens of microseconds of software each), and adds a wire latency and a wake-up;
// the fewer children the more levels. The simulator's real engines (docs/simulator.md, "Tree
// width") put the empty fence's optimum at 4 from 8 to 4096 nodes (5-10% below 8), and at 8 from
// 16k nodes on, where the fence's O(N) bytes make every extra level cost more than the wider
// fan-out; the collecting fence is flat between 4 and 16 everywhere.
uint32_t default_tree_width(size_t nodes) { return nodes <= 4096 ? 4 : 8; }

tree_links tree_links_of(const std::vector<uint32_t> &nodes, uint32_t self, uint32_t width,
                         const std::vector<uint32_t> &group_of) {
    width = std::max<uint32_t>(width, 1);
    tree_links out;
    const auto groups = tree_follows_groups(nodes.size(), width) ? groups_of(nodes, group_of)
                                                                  : std::vector<std::vector<uint32_t>>{};
    if (groups.empty()) {
        uint32_t i = index_of(nodes, self);
        if (i != UINT32_MAX) heap_links(nodes, i, width, &out);
        return out;
    }
    size_t r = 0;  // our group's index
    while (r < groups.size() && std::find(groups[r].begin(), groups[r].end(), self) == groups[r].end()) ++r;
    if (r == groups.size()) return out;
    const std::vector<uint32_t> &mine = groups[r];
    auto pos = std::find(mine.begin(), mine.end(), self);
    heap_links(mine, size_t(pos - mine.begin()), width, &out);
    if (pos == mine.begin()) {  // a group root: also a member of the tree of group roots
        std::vector<uint32_t> roots;
        for (const auto &g : groups) roots.push_back(g.front());
        tree_links upper;
        heap_links(roots, r, width, &upper);
        out.parent = upper.parent;
        out.children.insert(out.children.end(), upper.children.begin(), upper.children.end());
    }
    return out;
}

tree_engine::tree_engine(coll_key key, std::vector<uint32_t> nodes, uint32_t self_node, uint32_t width,
                         const std::vector<uint32_t> &group_of)
    : _key(key), _nodes(std::move(nodes)), _self(self_node) {
    _links = tree_links_of(_nodes, _self, width, group_of);
}

uint32_t tree_engine::parent() const { return _links.parent; }

std::vector<uint32_t> tree_engine::children() const { return _links.children; }

void tree_engine::start(blob local, actions &out) {
    if (_state != engine_state::waiting) return;
    _state = engine_state::started;
    // An empty contribution (a fence without data, a node whose ranks committed nothing) travels
    // as nothing: an empty fence's messages then stay 17 bytes at any size, where one entry per
    // node made the root's fan-out 8 bytes x N (131 KB at 16k nodes) and every level's copy of it.
    if (!local.empty()) _gathered.push_back({_self, std::move(local)});
    maybe_up(out);
}

void tree_engine::maybe_up(actions &out) {
    if (_state != engine_state::started || _sent_up) return;
    if (_children_heard.size() < children().size()) return;
    _sent_up = true;
    if (_links.parent == UINT32_MAX) {
        finish(std::move(_gathered), out);
        return;
    }
    coll_message m;
    m.kind = msg_kind::tree_up;
    m.key = _key;
    m.blobs = std::move(_gathered);
    _gathered.clear();
    out.sends.push_back({parent(), std::move(m)});
}

void tree_engine::finish(std::vector<node_blob> all, actions &out) {
    std::vector<uint32_t> to = children();
    if (!to.empty()) {
        coll_message m;
        m.kind = msg_kind::tree_down;
        m.key = _key;
        m.blobs = all;
        out.sends.push_back({to.front(), std::move(m), std::vector<uint32_t>(to.begin() + 1, to.end())});
    }
    _state = engine_state::done;
    out.done = true;
    out.result = std::move(all);
}

Status tree_engine::receive(uint32_t from, coll_message &&m, actions &out) {
    if (_state == engine_state::done) return Status(PMIX_ERR_BAD_PARAM, "tree message after completion");
    if (m.kind == msg_kind::tree_up) {
        auto ch = children();
        if (std::find(ch.begin(), ch.end(), from) == ch.end())
            return Status(PMIX_ERR_BAD_PARAM, "tree fan-in from node " + std::to_string(from) + ", not a child");
        if (!_children_heard.insert(from).second)
            return Status(PMIX_ERR_BAD_PARAM, "second tree fan-in from node " + std::to_string(from));
        for (auto &b : m.blobs) _gathered.push_back(std::move(b));
        maybe_up(out);
        return Status::success();
    }
    if (m.kind == msg_kind::tree_down) {
        if (_links.parent == UINT32_MAX || from != parent())
            return Status(PMIX_ERR_BAD_PARAM, "tree fan-out from node " + std::to_string(from) + ", not the parent");
        if (!_sent_up) return Status(PMIX_ERR_BAD_PARAM, "tree fan-out before our fan-in");
        finish(std::move(m.blobs), out);
        return Status::success();
    }
    return Status(PMIX_ERR_BAD_PARAM, "ring message given to a tree engine");
}

std::vector<uint32_t> tree_engine::missing() const {
    std::vector<uint32_t> out;
    if (_state == engine_state::done) return out;
    for (uint32_t c : children())
        if (!_children_heard.count(c)) out.push_back(c);
    if (out.empty() && _links.parent != UINT32_MAX) out.push_back(parent());
    return out;
}

// ---------------------------------------------------------------- ring

std::vector<uint32_t> ring_order_of(const std::vector<uint32_t> &nodes, const std::vector<uint32_t> &group_of) {
    const auto groups = groups_of(nodes, group_of);
    if (groups.empty()) return nodes;
    std::vector<uint32_t> out;
    out.reserve(nodes.size());
    for (const auto &g : groups) out.insert(out.end(), g.begin(), g.end());
    return out;
}

ring_engine::ring_engine(coll_key key, std::vector<uint32_t> nodes, uint32_t self_node,
                         const std::vector<uint32_t> &group_of)
    : _key(key), _nodes(std::move(nodes)), _self(self_node) {
    const std::vector<uint32_t> ring = ring_order_of(_nodes, group_of);
    auto it = std::find(ring.begin(), ring.end(), _self);
    const size_t m = ring.size();
    if (it != ring.end()) {
        const size_t i = size_t(it - ring.begin());
        _next = ring[(i + 1) % m];
        _prev = ring[(i + m - 1) % m];
    }
}

void ring_engine::start(blob local, actions &out) {
    if (_state != engine_state::waiting) return;
    _state = engine_state::started;
    if (_nodes.size() > 1) {
        coll_message m;
        m.kind = msg_kind::ring;
        m.key = _key;
        m.blobs.push_back({_self, local});
        out.sends.push_back({_next, std::move(m)});
    }
    _have[_self] = std::move(local);
    maybe_done(out);
}

Status ring_engine::receive(uint32_t from, coll_message &&m, actions &out) {
    if (m.kind != msg_kind::ring) return Status(PMIX_ERR_BAD_PARAM, "tree message given to a ring engine");
    if (from != _prev) return Status(PMIX_ERR_BAD_PARAM, "ring message from node " + std::to_string(from) + ", not our predecessor");
    if (m.blobs.size() != 1) return Status(PMIX_ERR_BAD_PARAM, "ring message without exactly one blob");
    node_blob &b = m.blobs[0];
    if (b.node == _self || !std::binary_search(_nodes.begin(), _nodes.end(), b.node) || _have.count(b.node))
        return Status(PMIX_ERR_BAD_PARAM, "ring message with unexpected origin node " + std::to_string(b.node));
    if (_next != b.node) {  // pass it on unless the next node is where it came from
        coll_message fwd;
        fwd.kind = msg_kind::ring;
        fwd.key = _key;
        fwd.blobs.push_back(b);
        out.sends.push_back({_next, std::move(fwd)});
    }
    _have[b.node] = std::move(b.data);
    maybe_done(out);
    return Status::success();
}

void ring_engine::maybe_done(actions &out) {
    if (_state != engine_state::started || _have.size() < _nodes.size()) return;
    _state = engine_state::done;
    out.done = true;
    for (auto &[n, d] : _have) out.result.push_back({n, std::move(d)});
    _have.clear();
}

std::vector<uint32_t> ring_engine::missing() const {
    std::vector<uint32_t> out;
    if (_state == engine_state::done) return out;
    for (uint32_t n : _nodes)
        if (!_have.count(n) && n != _self) out.push_back(n);
    return out;
}

// ---------------------------------------------------------------- direct

direct_engine::direct_engine(coll_key key, std::vector<uint32_t> nodes, uint32_t self_node)
    : _key(key), _nodes(std::move(nodes)), _self(self_node) {}

void direct_engine::start(blob local, actions &out) {
    if (_state != engine_state::waiting) return;
    _state = engine_state::started;
    for (uint32_t n : _nodes) {
        if (n == _self) continue;
        coll_message m;
        m.kind = msg_kind::direct;
        m.key = _key;
        m.blobs.push_back({_self, local});
        out.sends.push_back({n, std::move(m)});
    }
    _have[_self] = std::move(local);
    maybe_done(out);
}

Status direct_engine::receive(uint32_t from, coll_message &&m, actions &out) {
    if (m.kind != msg_kind::direct) return Status(PMIX_ERR_BAD_PARAM, "tree or ring message given to a direct engine");
    if (_state == engine_state::done) return Status(PMIX_ERR_BAD_PARAM, "direct message after completion");
    if (m.blobs.size() != 1 || m.blobs[0].node != from || from == _self ||
        !std::binary_search(_nodes.begin(), _nodes.end(), from))
        return Status(PMIX_ERR_BAD_PARAM, "direct message from node " + std::to_string(from) + " not carrying its own data");
    if (_have.count(from)) return Status(PMIX_ERR_BAD_PARAM, "second direct message from node " + std::to_string(from));
    _have[from] = std::move(m.blobs[0].data);
    maybe_done(out);
    return Status::success();
}

void direct_engine::maybe_done(actions &out) {
    if (_state != engine_state::started || _have.size() < _nodes.size()) return;
    _state = engine_state::done;
    out.done = true;
    for (auto &[n, d] : _have) out.result.push_back({n, std::move(d)});
    _have.clear();
}

std::vector<uint32_t> direct_engine::missing() const {
    std::vector<uint32_t> out;
    if (_state == engine_state::done) return out;
    for (uint32_t n : _nodes)
        if (!_have.count(n) && n != _self) out.push_back(n);
    return out;
}

}  // namespace pmixcpp::coll
