// The fence collectives without I/O: engines and the manager over an in-memory network that
// delivers messages in random order.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <memory>
#include <random>

#include "plugin/coll/fence_manager.h"

using namespace pmixcpp::coll;

namespace {

blob bytes_of(uint32_t node, size_t n = 3) { return blob(n, static_cast<uint8_t>(node + 1)); }

void expect_full(const std::vector<node_blob> &result, const std::vector<uint32_t> &nodes, size_t n = 3) {
    ASSERT_EQ(result.size(), nodes.size());
    std::vector<uint32_t> seen;
    for (const auto &b : result) {
        seen.push_back(b.node);
        EXPECT_EQ(b.data, bytes_of(b.node, n));
    }
    std::sort(seen.begin(), seen.end());
    EXPECT_EQ(seen, nodes);
}

// Drive one engine kind over `nodes` to completion; messages delivered FIFO per run.
template <typename Make>
void run_engines(const std::vector<uint32_t> &nodes, Make make) {
    std::map<uint32_t, decltype(make(0u))> eng;
    for (uint32_t n : nodes) eng[n] = make(n);
    std::deque<std::pair<uint32_t, send_action>> q;  // (from, action)
    std::map<uint32_t, std::vector<node_blob>> done;
    auto take = [&](uint32_t from, actions &a) {
        for (auto &s : a.sends)
            for (uint32_t n : destinations(s)) q.emplace_back(from, send_action{n, s.msg, {}});
        if (a.done) done[from] = std::move(a.result);
    };
    for (uint32_t n : nodes) {
        actions a;
        eng[n]->start(bytes_of(n), a);
        take(n, a);
    }
    while (!q.empty()) {
        auto [from, s] = std::move(q.front());
        q.pop_front();
        actions a;
        ASSERT_TRUE(eng[s.node]->receive(from, std::move(s.msg), a).ok());
        take(s.node, a);
    }
    ASSERT_EQ(done.size(), nodes.size());
    for (auto &[n, r] : done) expect_full(r, nodes);
}

}  // namespace

TEST(coll_message, round_trip_and_rejects) {
    coll_message m;
    m.kind = msg_kind::tree_up;
    m.key = {0x1234, 7};
    m.blobs = {{2, {1, 2}}, {0, {}}};
    auto bytes = encode(m);
    coll_message d;
    ASSERT_TRUE(decode(bytes, 4, &d).ok());
    EXPECT_EQ(d.key, m.key);
    ASSERT_EQ(d.blobs.size(), 2u);
    EXPECT_EQ(d.blobs[0].data, (blob{1, 2}));
    EXPECT_FALSE(decode(bytes, 2, &d).ok());  // origin node 2 out of range
    bytes.push_back(0);
    EXPECT_FALSE(decode(bytes, 4, &d).ok());  // trailing byte
    m.blobs = {{1, {}}, {1, {}}};
    EXPECT_FALSE(decode(encode(m), 4, &d).ok());  // duplicate origin
}

TEST(tree_engine, shapes) {
    tree_engine t({1, 0}, {0, 2, 5, 7, 9}, 0, 2);
    EXPECT_EQ(t.children(), (std::vector<uint32_t>{2, 5}));
    tree_engine u({1, 0}, {0, 2, 5, 7, 9}, 2, 2);
    EXPECT_EQ(u.parent(), 0u);
    EXPECT_EQ(u.children(), (std::vector<uint32_t>{7, 9}));
}

TEST(tree_engine, completes_for_many_sizes_and_widths) {
    for (uint32_t m : {2u, 3u, 4u, 7u, 17u})
        for (uint32_t w : {1u, 2u, 8u}) {
            std::vector<uint32_t> nodes;
            for (uint32_t i = 0; i < m; ++i) nodes.push_back(i * 3);
            run_engines(nodes, [&](uint32_t n) { return std::make_unique<tree_engine>(coll_key{9, 1}, nodes, n, w); });
        }
}

TEST(ring_engine, completes_for_many_sizes) {
    for (uint32_t m : {2u, 3u, 5u, 16u}) {
        std::vector<uint32_t> nodes;
        for (uint32_t i = 0; i < m; ++i) nodes.push_back(i + 1);
        run_engines(nodes, [&](uint32_t n) { return std::make_unique<ring_engine>(coll_key{9, 1}, nodes, n); });
    }
}

TEST(direct_engine, completes_for_many_sizes) {
    for (uint32_t m : {1u, 2u, 3u, 4u, 9u}) {
        std::vector<uint32_t> nodes;
        for (uint32_t i = 0; i < m; ++i) nodes.push_back(2 * i);
        run_engines(nodes, [&](uint32_t n) { return std::make_unique<direct_engine>(coll_key{9, 1}, nodes, n); });
    }
}

TEST(direct_engine, refuses_forgeries_and_duplicates_and_reports_missing) {
    direct_engine d({1, 0}, {0, 1, 2}, 0);
    actions a;
    d.start(bytes_of(0), a);
    ASSERT_EQ(a.sends.size(), 2u);  // to nodes 1 and 2, one blob each: ours
    EXPECT_EQ(a.sends[0].msg.blobs.at(0).node, 0u);
    EXPECT_EQ(d.missing(), (std::vector<uint32_t>{1, 2}));
    auto msg = [](uint32_t origin) {
        coll_message m;
        m.kind = msg_kind::direct;
        m.key = {1, 0};
        m.blobs = {{origin, bytes_of(origin)}};
        return m;
    };
    actions b;
    EXPECT_FALSE(d.receive(1, msg(2), b).ok());  // node 1 carrying node 2's data
    EXPECT_FALSE(d.receive(3, msg(3), b).ok());  // not a participant
    EXPECT_TRUE(d.receive(1, msg(1), b).ok());
    EXPECT_FALSE(d.receive(1, msg(1), b).ok());  // twice
    EXPECT_EQ(d.missing(), (std::vector<uint32_t>{2}));
    EXPECT_FALSE(b.done);
    EXPECT_TRUE(d.receive(2, msg(2), b).ok());
    ASSERT_TRUE(b.done);
    expect_full(b.result, {0, 1, 2});
    coll_message ring = msg(2);
    ring.kind = msg_kind::ring;
    EXPECT_FALSE(d.receive(2, std::move(ring), b).ok());
}

TEST(tree_engine, refuses_strangers_and_reports_missing) {
    tree_engine t({1, 0}, {0, 1, 2}, 0, 2);
    actions a;
    t.start({}, a);
    EXPECT_TRUE(a.sends.empty());
    EXPECT_EQ(t.missing(), (std::vector<uint32_t>{1, 2}));
    coll_message m;
    m.kind = msg_kind::tree_down;
    m.key = {1, 0};
    EXPECT_FALSE(t.receive(1, std::move(m), a).ok());  // the root has no parent
}

// N managers, several fences over different node sets started in different orders per node,
// messages delivered in random order, algorithms chosen differently per node (auto with sizes
// on both sides of the threshold): every fence completes everywhere with every contribution.
namespace {
void concurrent_fences(bool mixed_settings) {
    for (int seed = 0; seed < 50; ++seed) {
        std::mt19937 rng(seed);
        const uint32_t nnodes = 5;
        struct msg {
            uint32_t from, to;
            std::vector<uint8_t> body;
        };
        std::vector<msg> net;
        std::map<std::pair<uint32_t, uint64_t>, std::vector<node_blob>> done;  // (node, instance)
        std::vector<std::unique_ptr<fence_manager>> mgr;
        for (uint32_t n = 0; n < nnodes; ++n) {
            manager_options o;
            o.self_node = n;
            o.nnodes = nnodes;
            o.algo = algorithm::automatic;
            o.tree_width = 2;
            o.ring_threshold = 4;
            // Every node with its own view: some forced, some automatic (with or without direct).
            const algorithm algos[] = {algorithm::automatic, algorithm::direct, algorithm::tree, algorithm::ring};
            if (mixed_settings) {
                o.algo = algos[(n + seed) % 4];
                o.direct_max_nodes = (seed % 3 == 0) ? 8 : 0;
            }
            o.send = [&, n](uint32_t to, std::span<const uint8_t> b) { net.push_back({n, to, {b.begin(), b.end()}}); };
            o.on_done = [&, n](uint64_t inst, std::vector<node_blob> &&r) { done[{n, inst}] = std::move(r); };
            mgr.push_back(std::make_unique<fence_manager>(o));
        }
        // fences: instance id -> (signature, nodes); two instances share a signature (same set twice)
        struct f {
            uint64_t inst, sig;
            std::vector<uint32_t> nodes;
        };
        std::vector<f> fences = {{1, 100, {0, 1, 2, 3, 4}}, {2, 200, {0, 2, 4}}, {3, 300, {1, 3}},
                                 {4, 100, {0, 1, 2, 3, 4}}, {5, 500, {0, 1, 2, 3, 4}}};
        for (uint32_t n = 0; n < nnodes; ++n) {
            std::vector<f> order;
            for (auto &x : fences)
                if (std::binary_search(x.nodes.begin(), x.nodes.end(), n)) order.push_back(x);
            // the two instances of signature 100 keep their order; others shuffle
            std::stable_sort(order.begin(), order.end(), [&](const f &a, const f &b) {
                if (a.sig == b.sig) return a.inst < b.inst;
                return ((a.inst * 7 + n + seed) % 5) < ((b.inst * 7 + n + seed) % 5);
            });
            for (auto &x : order) {
                size_t sz = (n + seed + x.inst) % 2 ? 8 : 3;  // both sides of the threshold
                mgr[n]->start(x.inst, x.sig, x.nodes, bytes_of(n, sz), true);
                // deliver a few random messages in between
                for (int k = 0; k < 3 && !net.empty(); ++k) {
                    size_t i = rng() % net.size();
                    msg m = std::move(net[i]);
                    net.erase(net.begin() + i);
                    mgr[m.to]->receive(m.from, m.body);
                }
            }
        }
        while (!net.empty()) {
            size_t i = rng() % net.size();
            msg m = std::move(net[i]);
            net.erase(net.begin() + i);
            mgr[m.to]->receive(m.from, m.body);
        }
        for (auto &x : fences)
            for (uint32_t n : x.nodes) {
                auto it = done.find({n, x.inst});
                ASSERT_NE(it, done.end()) << "seed " << seed << " fence " << x.inst << " node " << n;
                ASSERT_EQ(it->second.size(), x.nodes.size());
                for (auto &b : it->second) EXPECT_EQ(b.data[0], b.node + 1);
            }
        for (auto &m : mgr) EXPECT_EQ(m->active(), 0u);
    }
}
}  // namespace

TEST(fence_manager, concurrent_fences_random_order_mixed_algorithms) { concurrent_fences(false); }

// Same, with nodes whose settings disagree (tree, ring, direct, auto with and without direct):
// whoever receives another algorithm's message joins it, and every fence still completes.
TEST(fence_manager, concurrent_fences_random_order_disagreeing_settings) { concurrent_fences(true); }

TEST(fence_manager, direct_when_asked) {
    std::vector<std::pair<uint32_t, std::vector<uint8_t>>> sent;
    std::vector<node_blob> result;
    manager_options o;
    o.self_node = 1;
    o.nnodes = 3;
    o.direct_max_nodes = 3;
    o.send = [&](uint32_t to, std::span<const uint8_t> b) { sent.emplace_back(to, std::vector<uint8_t>(b.begin(), b.end())); };
    o.on_done = [&](uint64_t, std::vector<node_blob> &&r) { result = std::move(r); };
    fence_manager m(o);
    // Node 0's message comes before our own start.
    coll_message early;
    early.kind = msg_kind::direct;
    early.key = {77, 0};
    early.blobs = {{0, bytes_of(0)}};
    m.receive(0, encode(early));
    m.start(5, 77, {0, 1, 2}, bytes_of(1), true);
    ASSERT_EQ(sent.size(), 2u);
    coll_message d;
    ASSERT_TRUE(decode(sent[0].second, 3, &d).ok());
    EXPECT_EQ(d.kind, msg_kind::direct);
    EXPECT_EQ(m.missing(5), (std::vector<uint32_t>{2}));
    coll_message last = early;
    last.blobs = {{2, bytes_of(2)}};
    m.receive(2, encode(last));
    expect_full(result, {0, 1, 2});
    EXPECT_EQ(m.active(), 0u);
}

TEST(fence_manager, missing_and_cancel) {
    std::vector<std::vector<uint8_t>> sent;
    manager_options o;
    o.self_node = 0;
    o.nnodes = 3;
    o.send = [&](uint32_t, std::span<const uint8_t> b) { sent.emplace_back(b.begin(), b.end()); };
    fence_manager m(o);
    m.start(7, 1, {0, 1, 2}, {}, false);
    EXPECT_EQ(m.missing(7), (std::vector<uint32_t>{1, 2}));
    m.cancel(7);
    EXPECT_EQ(m.active(), 0u);
    EXPECT_TRUE(m.missing(7).empty());
}

// A fence without data: the tree's messages carry no entry per node (17 bytes at any size), and
// the result is empty on every node; a mix keeps exactly the non-empty contributions.
TEST(tree_engine, empty_contributions_travel_as_nothing) {
    for (uint32_t count : {2u, 9u, 40u}) {
        std::vector<uint32_t> nodes(count);
        for (uint32_t i = 0; i < count; ++i) nodes[i] = i;
        std::map<uint32_t, std::unique_ptr<tree_engine>> eng;
        for (uint32_t n : nodes) eng[n] = std::make_unique<tree_engine>(coll_key{7, 1}, nodes, n, 4);
        std::deque<std::pair<uint32_t, send_action>> q;
        std::map<uint32_t, std::vector<node_blob>> done;
        size_t largest = 0;
        auto take = [&](uint32_t from, actions &a) {
            for (auto &s : a.sends) {
                largest = std::max(largest, encode(s.msg).size());
                for (uint32_t n : destinations(s)) q.emplace_back(from, send_action{n, s.msg, {}});
            }
            if (a.done) done[from] = std::move(a.result);
        };
        for (uint32_t n : nodes) {
            actions a;
            eng[n]->start(n % 3 == 1 ? bytes_of(n) : blob{}, a);  // every third node has data
            take(n, a);
        }
        while (!q.empty()) {
            auto [from, s] = std::move(q.front());
            q.pop_front();
            actions a;
            ASSERT_TRUE(eng[s.node]->receive(from, std::move(s.msg), a).ok());
            take(s.node, a);
        }
        ASSERT_EQ(done.size(), nodes.size());
        std::vector<uint32_t> with_data;
        for (uint32_t n : nodes)
            if (n % 3 == 1) with_data.push_back(n);
        for (auto &[n, r] : done) expect_full(r, with_data);
        EXPECT_LE(largest, 17u + with_data.size() * (8 + 3)) << count << " nodes";
    }
    // All empty: every message is the 17-byte header.
    std::vector<uint32_t> nodes{0, 1, 2, 3, 4, 5};
    tree_engine root(coll_key{7, 2}, nodes, 0, 4), leaf(coll_key{7, 2}, nodes, 5, 4);
    actions a;
    leaf.start({}, a);
    ASSERT_EQ(a.sends.size(), 1u);
    EXPECT_EQ(encode(a.sends[0].msg).size(), 17u);
}
