#include "fence_manager.h"

#include <algorithm>

#include "log.h"

namespace pmixcpp::coll {

void fence_manager::start(uint64_t instance, uint64_t signature, std::vector<uint32_t> nodes, blob local,
                          bool collect) {
    coll_key key{signature, _next_seq[signature]++};
    fence f;
    f.instance = instance;
    f.nodes = std::move(nodes);
    f.local = std::move(local);
    // auto: up to direct_max_nodes (0 by default) a single exchange (one hop) where the tree
    // needs two (fan-in, fan-out) but m-1 messages per node where a tree leaf sends one; with two
    // nodes the ring is that single exchange; from three nodes on, the ring only for large
    // collecting fences. Every node decides from the same node count, so they agree except on size.
    // A fence without data (not collecting, nothing local) from dissemination_min_nodes on takes
    // the dissemination barrier: log2 m rounds of one message in and out per node, where the
    // tree's parents take their k children's messages one after another at every level. The
    // simulator on the fabric preset (a CPU per node; `pmixcpp_sim barrier`, docs/simulator.md)
    // has it faster at every size from 4 nodes (436 against 482 us) to 65k (0.78 against
    // 1.44 ms; 16k: 0.73 against 1.29 ms). The threshold (64) keeps the tree where nodes share
    // CPUs, as the local cluster's up to 32 virtual nodes share this host's two: there the
    // barrier's m log2 m messages cost more CPU than the tree's 2 (m - 1), and the host preset
    // has it twice as slow at 32 x 1 (1.88 against 0.93 ms); a real cluster of 64 nodes or more
    // has a CPU per node.
    const bool barrier = !collect && f.local.empty();
    f.collect = collect;
    msg_kind kind = msg_kind::tree_up;
    switch (_opts.algo) {
    case algorithm::tree: break;
    case algorithm::ring: kind = msg_kind::ring; break;
    case algorithm::direct: kind = msg_kind::direct; break;
    case algorithm::dissemination:
    case algorithm::automatic:
        if (barrier && f.nodes.size() > 1 &&
            (_opts.algo == algorithm::dissemination || f.nodes.size() >= _opts.dissemination_min_nodes))
            kind = msg_kind::dissemination;
        else if (f.nodes.size() <= _opts.direct_max_nodes)
            kind = msg_kind::direct;
        else if (f.nodes.size() == 2 || (collect && f.nodes.size() >= 3 && f.local.size() > _opts.ring_threshold))
            kind = msg_kind::ring;
        break;
    }
    auto [it, inserted] = _active.emplace(key, std::move(f));
    if (!inserted) {
        PMIXCPP_LOG_ERROR("collective %s started twice", to_string(key).c_str());
        return;
    }
    PMIXCPP_LOG_DEBUG("collective %s (fence %llu): %s over %zu nodes, %zu bytes local", to_string(key).c_str(),
                      static_cast<unsigned long long>(instance), kind == msg_kind::tree_up ? "tree" : to_string(kind),
                      it->second.nodes.size(), it->second.local.size());
    run_engine(it->second, kind);
    // Messages that came before we started.
    auto early = _early.find(key);
    if (early != _early.end()) {
        auto msgs = std::move(early->second);
        _early.erase(early);
        for (auto &[from, m] : msgs) deliver(key, from, std::move(m));
    }
}

void fence_manager::run_engine(fence &f, msg_kind kind) {
    coll_key key;
    for (auto &[k, v] : _active)
        if (&v == &f) key = k;
    actions a;
    if (kind == msg_kind::ring) {
        if (f.ring) return;
        f.ring = std::make_unique<ring_engine>(key, f.nodes, _opts.self_node, _opts.node_groups);
        f.ring->start(f.local, a);
    } else if (kind == msg_kind::direct) {
        if (f.direct) return;
        f.direct = std::make_unique<direct_engine>(key, f.nodes, _opts.self_node);
        f.direct->start(f.local, a);
    } else if (kind == msg_kind::dissemination) {
        if (f.dissemination) return;
        f.dissemination = std::make_unique<dissemination_engine>(key, f.nodes, _opts.self_node);
        f.dissemination->start({}, a);
    } else {
        if (f.tree) return;
        f.tree = std::make_unique<tree_engine>(key, f.nodes, _opts.self_node, tree_width_for(_opts.tree_width, f.nodes.size()),
                                               _opts.node_groups);
        f.tree->start(f.local, a);
    }
    apply(key, std::move(a));
}

void fence_manager::receive(uint32_t from, std::span<const uint8_t> body) {
    coll_message m;
    Status st = decode(body, _opts.nnodes, &m);
    if (!st.ok()) {
        PMIXCPP_LOG_ERROR("collective message from node %u dropped: %s", from, st.message().c_str());
        return;
    }
    coll_key key = m.key;
    if (_finished.count(key)) {
        PMIXCPP_LOG_TRACE("collective %s: late %s message from node %u ignored", to_string(key).c_str(),
                          to_string(m.kind), from);
        return;
    }
    if (!_active.count(key)) {
        _early[key].emplace_back(from, std::move(m));
        return;
    }
    deliver(key, from, std::move(m));
}

void fence_manager::deliver(const coll_key &key, uint32_t from, coll_message &&m) {
    auto it = _active.find(key);
    if (it == _active.end()) return;  // finished meanwhile
    fence &f = it->second;
    if (!std::binary_search(f.nodes.begin(), f.nodes.end(), from)) {
        PMIXCPP_LOG_ERROR("collective %s: message from node %u, which takes no part; dropped", to_string(key).c_str(), from);
        return;
    }
    const msg_kind kind = m.kind;
    if (kind == msg_kind::ring && !f.ring) run_engine(f, msg_kind::ring);
    if (kind == msg_kind::direct && !f.direct) run_engine(f, msg_kind::direct);
    if ((kind == msg_kind::tree_up || kind == msg_kind::tree_down) && !f.tree) run_engine(f, msg_kind::tree_up);
    if (kind == msg_kind::dissemination && !f.dissemination) {
        // Another node runs the barrier for this fence. Joined as any other algorithm (no fence
        // may hang); one this node started with data then completes without the others'
        // contributions if the barrier finishes first (fence_manager.h).
        if (f.collect || !f.local.empty())
            PMIXCPP_LOG_WARNING("collective %s: node %u runs the barrier without data for a fence this node collects "
                                "data in (%zu bytes local); joined, the data is not exchanged if the barrier completes "
                                "first",
                                to_string(key).c_str(), from, f.local.size());
        run_engine(f, msg_kind::dissemination);
    }
    it = _active.find(key);
    if (it == _active.end()) return;  // joining completed it
    fence &g = it->second;
    actions a;
    Status st = kind == msg_kind::ring            ? g.ring->receive(from, std::move(m), a)
                : kind == msg_kind::direct        ? g.direct->receive(from, std::move(m), a)
                : kind == msg_kind::dissemination ? g.dissemination->receive(from, std::move(m), a)
                                                  : g.tree->receive(from, std::move(m), a);
    if (!st.ok()) {
        PMIXCPP_LOG_ERROR("collective %s: %s message from node %u dropped: %s", to_string(key).c_str(),
                          to_string(kind), from, st.message().c_str());
        return;
    }
    apply(key, std::move(a));
}

void fence_manager::apply(const coll_key &key, actions &&a) {
    for (auto &s : a.sends) {
        std::vector<uint8_t> bytes = encode(s.msg);
        s.msg.blobs.clear();  // freed now: the encoded bytes are all the sends need
        const auto nodes = destinations(s);
        if (_opts.send_to && nodes.size() > 1) {
            _opts.send_to(nodes, bytes);
            continue;
        }
        for (uint32_t n : nodes) _opts.send(n, bytes);
    }
    if (!a.done) return;
    auto it = _active.find(key);
    if (it == _active.end()) return;
    uint64_t instance = it->second.instance;
    _active.erase(it);
    _finished.insert(key);
    _early.erase(key);
    if (_opts.on_done) _opts.on_done(instance, std::move(a.result));
}

std::vector<uint32_t> fence_manager::missing(uint64_t instance) const {
    for (const auto &[k, f] : _active) {
        if (f.instance != instance) continue;
        // Direct and ring name exactly the nodes whose data has not come; the tree only its neighbours.
        std::vector<uint32_t> out;
        if (f.direct) out = f.direct->missing();
        if (f.ring && out.empty()) out = f.ring->missing();
        if (f.dissemination && out.empty()) out = f.dissemination->missing();
        if (f.tree && out.empty()) out = f.tree->missing();
        return out;
    }
    return {};
}

void fence_manager::cancel(uint64_t instance) {
    for (auto it = _active.begin(); it != _active.end(); ++it) {
        if (it->second.instance != instance) continue;
        _finished.insert(it->first);
        _early.erase(it->first);
        _active.erase(it);
        return;
    }
}

}  // namespace pmixcpp::coll
