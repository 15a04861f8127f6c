// The fence collectives without I/O: engines and the manager over an in-memory network that
// delivers messages in random order.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <set>

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

// Drive one engine kind over `nodes` to completion, messages delivered FIFO; node n starts with
// local(n), and every node's result must hold exactly the contributions of `contributing`.
// `largest`: the largest message encoded.
template <typename Make, typename Local>
void drive_engines(const std::vector<uint32_t> &nodes, Make make, Local local, const std::vector<uint32_t> &contributing,
                   size_t *largest = nullptr) {
    std::map<uint32_t, decltype(make(0u))> eng;
    for (uint32_t n : nodes) eng[n] = make(n);
    std::deque<std::pair<uint32_t, send_action>> q;  // (from, action)
    std::map<uint32_t, std::vector<node_blob>> done;
    auto take = [&](uint32_t from, actions &a) {
        for (auto &s : a.sends) {
            if (largest) *largest = std::max(*largest, encode(s.msg).size());
            for (uint32_t n : destinations(s)) q.emplace_back(from, send_action{n, s.msg, {}});
        }
        if (a.done) done[from] = std::move(a.result);
    };
    for (uint32_t n : nodes) {
        actions a;
        eng[n]->start(local(n), a);
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
    for (auto &[n, r] : done) expect_full(r, contributing);
}

// Every node contributes.
template <typename Make>
void run_engines(const std::vector<uint32_t> &nodes, Make make) {
    drive_engines(nodes, make, [](uint32_t n) { return bytes_of(n); }, nodes);
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
        std::vector<uint32_t> with_data;  // every third node
        for (uint32_t n : nodes)
            if (n % 3 == 1) with_data.push_back(n);
        size_t largest = 0;
        drive_engines(
            nodes, [&](uint32_t n) { return std::make_unique<tree_engine>(coll_key{7, 1}, nodes, n, 4); },
            [](uint32_t n) { return n % 3 == 1 ? bytes_of(n) : blob{}; }, with_data, &largest);
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

// ---------------------------------------------------------------- dissemination barrier

namespace {
std::vector<uint32_t> sparse_nodes(uint32_t m) {
    std::vector<uint32_t> nodes;
    for (uint32_t i = 0; i < m; ++i) nodes.push_back(2 * i + 1);
    return nodes;
}

coll_message round_msg(uint32_t round, coll_key key = {5, 0}) {
    coll_message m;
    m.kind = msg_kind::dissemination;
    m.key = key;
    m.round = static_cast<uint8_t>(round);
    return m;
}
}  // namespace

TEST(coll_message, dissemination_round_trip_and_rejects) {
    EXPECT_EQ(dissemination_rounds(1), 0u);
    EXPECT_EQ(dissemination_rounds(2), 1u);
    EXPECT_EQ(dissemination_rounds(5), 3u);
    EXPECT_EQ(dissemination_rounds(64), 6u);
    EXPECT_EQ(dissemination_rounds(65), 7u);
    coll_message m = round_msg(2, {0x99, 3});
    auto bytes = encode(m);
    EXPECT_EQ(bytes.size(), 18u);  // the 17-byte header and the round
    coll_message d;
    ASSERT_TRUE(decode(bytes, 5, &d).ok());
    EXPECT_EQ(d.kind, msg_kind::dissemination);
    EXPECT_EQ(d.key, m.key);
    EXPECT_EQ(d.round, 2u);
    EXPECT_TRUE(d.blobs.empty());
    EXPECT_FALSE(decode(bytes, 4, &d).ok());  // 4 nodes have rounds 0 and 1 only
    EXPECT_FALSE(decode(bytes, 1, &d).ok());  // one node: no barrier messages at all
    auto longer = bytes;
    longer.push_back(0);
    EXPECT_FALSE(decode(longer, 5, &d).ok());  // trailing byte
    auto shorter = bytes;
    shorter.pop_back();
    EXPECT_FALSE(decode(shorter, 5, &d).ok());  // no round
    m.blobs = {{1, {}}};
    EXPECT_FALSE(decode(encode(m), 5, &d).ok());  // data in a barrier
    bytes[0] = 6;
    EXPECT_FALSE(decode(bytes, 5, &d).ok());  // unknown kind
}

// Every node completes after ceil(log2 m) rounds, whatever the order of deliveries and starts
// (a message before its engine started, before its round); one message per node and round.
TEST(dissemination_engine, completes_at_every_size_in_random_order) {
    std::mt19937 rng(33);
    for (uint32_t m = 1; m <= 70; ++m) {
        for (int trial = 0; trial < 3; ++trial) {
            const std::vector<uint32_t> nodes = sparse_nodes(m);
            std::map<uint32_t, std::unique_ptr<dissemination_engine>> eng;
            for (uint32_t n : nodes) eng[n] = std::make_unique<dissemination_engine>(coll_key{5, 0}, nodes, n);
            std::vector<std::pair<uint32_t, send_action>> net;  // (from, action)
            std::set<uint32_t> done;
            size_t sent = 0;
            auto take = [&](uint32_t from, actions &a) {
                for (auto &s : a.sends) {
                    ASSERT_TRUE(s.also.empty());
                    ASSERT_TRUE(s.msg.blobs.empty());
                    net.emplace_back(from, std::move(s));
                    ++sent;
                }
                if (a.done) {
                    EXPECT_TRUE(a.result.empty());
                    EXPECT_TRUE(done.insert(from).second) << "node " << from << " completed twice";
                }
            };
            std::vector<uint32_t> to_start = nodes;
            std::shuffle(to_start.begin(), to_start.end(), rng);
            while (!to_start.empty() || !net.empty()) {
                // start a node or deliver a random message, at random
                if (!to_start.empty() && (net.empty() || rng() % 3 == 0)) {
                    actions a;
                    eng[to_start.back()]->start({}, a);
                    take(to_start.back(), a);
                    to_start.pop_back();
                    continue;
                }
                const size_t i = rng() % net.size();
                auto [from, s] = std::move(net[i]);
                net.erase(net.begin() + long(i));
                actions a;
                pmixcpp::Status st = eng[s.node]->receive(from, std::move(s.msg), a);
                ASSERT_TRUE(st.ok()) << st.message();
                take(s.node, a);
            }
            ASSERT_EQ(done.size(), m) << m << " nodes";
            EXPECT_EQ(sent, size_t(m) * dissemination_rounds(m));
            for (auto &[n, e] : eng) {
                EXPECT_EQ(e->state(), engine_state::done);
                EXPECT_TRUE(e->missing().empty());
            }
        }
    }
}

TEST(dissemination_engine, partners_by_position) {
    const std::vector<uint32_t> nodes{3, 4, 8, 10, 20};  // positions 0..4
    dissemination_engine e({5, 0}, nodes, 8);          // position 2
    EXPECT_EQ(e.rounds(), 3u);
    EXPECT_EQ(e.send_to(0), 10u);    // 2 + 1
    EXPECT_EQ(e.send_to(1), 20u);    // 2 + 2
    EXPECT_EQ(e.send_to(2), 4u);     // 2 + 4 = 6 mod 5 = 1
    EXPECT_EQ(e.hear_from(0), 4u);   // 2 - 1
    EXPECT_EQ(e.hear_from(1), 3u);   // 2 - 2
    EXPECT_EQ(e.hear_from(2), 10u);  // 2 - 4 = -2 mod 5 = 3
}

TEST(dissemination_engine, keeps_early_rounds_and_refuses_the_rest) {
    const std::vector<uint32_t> nodes{0, 1, 2, 3};
    dissemination_engine e({5, 0}, nodes, 0);  // rounds: 0 to 1 from 3, 1 to 2 from 2
    actions a;
    // round 1 before our start and before round 0: kept
    ASSERT_TRUE(e.receive(2, round_msg(1), a).ok());
    EXPECT_TRUE(a.sends.empty());
    EXPECT_EQ(e.state(), engine_state::waiting);
    e.start({}, a);
    ASSERT_EQ(a.sends.size(), 1u);  // round 0 only: round 1 waits for round 0's message
    EXPECT_EQ(a.sends[0].node, 1u);
    EXPECT_EQ(a.sends[0].msg.round, 0u);
    EXPECT_EQ(e.missing(), (std::vector<uint32_t>{3}));
    actions b;
    EXPECT_FALSE(e.receive(2, round_msg(1), b).ok());  // round 1 twice
    EXPECT_FALSE(e.receive(1, round_msg(0), b).ok());  // round 0 is node 3's
    EXPECT_FALSE(e.receive(3, round_msg(2), b).ok());  // no round 2 over 4 nodes
    coll_message with_data = round_msg(0);
    with_data.blobs = {{3, bytes_of(3)}};
    EXPECT_FALSE(e.receive(3, std::move(with_data), b).ok());
    coll_message tree = round_msg(0);
    tree.kind = msg_kind::tree_up;
    EXPECT_FALSE(e.receive(3, std::move(tree), b).ok());
    EXPECT_TRUE(b.sends.empty());
    EXPECT_FALSE(b.done);
    ASSERT_TRUE(e.receive(3, round_msg(0), b).ok());
    ASSERT_EQ(b.sends.size(), 1u);  // round 1, and done: its message had come
    EXPECT_EQ(b.sends[0].node, 2u);
    EXPECT_EQ(b.sends[0].msg.round, 1u);
    EXPECT_TRUE(b.done);
    EXPECT_TRUE(b.result.empty());
    EXPECT_TRUE(e.missing().empty());
    actions c;
    EXPECT_FALSE(e.receive(3, round_msg(0), c).ok());  // after completion
}

TEST(dissemination_engine, one_node_is_done_at_start) {
    dissemination_engine e({5, 0}, {4}, 4);
    actions a;
    e.start({}, a);
    EXPECT_TRUE(a.done);
    EXPECT_TRUE(a.sends.empty());
}

namespace {
// `count` managers over an in-memory network delivering in random order; `setup` adjusts each
// node's options, `start` starts its part of fence 1 (signature 42 over every node).
struct barrier_net {
    std::vector<std::unique_ptr<fence_manager>> mgr;
    struct msg {
        uint32_t from, to;
        std::vector<uint8_t> body;
    };
    std::vector<msg> net;
    std::map<uint32_t, std::vector<node_blob>> done;
    std::map<msg_kind, size_t> kinds;  // messages sent by kind
    std::vector<uint32_t> nodes;

    barrier_net(uint32_t count, const std::function<void(uint32_t, manager_options &)> &setup) {
        for (uint32_t n = 0; n < count; ++n) nodes.push_back(n);
        for (uint32_t n = 0; n < count; ++n) {
            manager_options o;
            o.self_node = n;
            o.nnodes = count;
            o.send = [this, n](uint32_t to, std::span<const uint8_t> b) {
                kinds[static_cast<msg_kind>(b[0])]++;
                net.push_back({n, to, {b.begin(), b.end()}});
            };
            o.on_done = [this, n](uint64_t, std::vector<node_blob> &&r) {
                EXPECT_FALSE(done.count(n)) << "node " << n << " completed twice";
                done[n] = std::move(r);
            };
            setup(n, o);
            mgr.push_back(std::make_unique<fence_manager>(o));
        }
    }
    void run(std::mt19937 &rng, const std::function<void(fence_manager &, uint32_t)> &start) {
        std::vector<uint32_t> order = nodes;
        std::shuffle(order.begin(), order.end(), rng);
        for (uint32_t n : order) {
            start(*mgr[n], n);
            for (int k = 0; k < 5 && !net.empty(); ++k) deliver_one(rng);
        }
        while (!net.empty()) deliver_one(rng);
    }
    void deliver_one(std::mt19937 &rng) {
        const size_t i = rng() % net.size();
        msg m = std::move(net[i]);
        net.erase(net.begin() + long(i));
        mgr[m.to]->receive(m.from, m.body);
    }
};
}  // namespace

// auto: the barrier for a fence without data from kDisseminationMinNodes nodes on, the tree
// below and for any fence with data.
TEST(fence_manager, auto_picks_the_barrier_for_empty_fences_above_the_threshold) {
    for (uint32_t count : {kDisseminationMinNodes - 1, kDisseminationMinNodes, kDisseminationMinNodes + 6}) {
        for (bool with_data : {false, true}) {
            SCOPED_TRACE(std::to_string(count) + " nodes" + (with_data ? " with data" : " empty"));
            std::mt19937 rng(count);
            barrier_net b(count, [](uint32_t, manager_options &) {});
            b.run(rng, [&](fence_manager &m, uint32_t n) {
                m.start(1, 42, b.nodes, with_data ? bytes_of(n) : blob{}, with_data);
            });
            ASSERT_EQ(b.done.size(), count);
            const bool barrier = !with_data && count >= kDisseminationMinNodes;
            if (barrier) {
                EXPECT_EQ(b.kinds.size(), 1u);
                EXPECT_EQ(b.kinds[msg_kind::dissemination], size_t(count) * dissemination_rounds(count));
            } else {
                EXPECT_EQ(b.kinds[msg_kind::dissemination], 0u);
                EXPECT_EQ(b.kinds[msg_kind::tree_up], size_t(count) - 1);
            }
            for (auto &[n, r] : b.done) {
                if (with_data) expect_full(r, b.nodes);
                else EXPECT_TRUE(r.empty());
            }
            for (auto &m : b.mgr) EXPECT_EQ(m->active(), 0u);
        }
    }
}

TEST(fence_manager, forced_barrier_only_for_fences_without_data) {
    std::vector<std::vector<uint8_t>> sent;
    manager_options o;
    o.self_node = 0;
    o.nnodes = 3;
    o.algo = algorithm::dissemination;
    o.send = [&](uint32_t, std::span<const uint8_t> b) { sent.emplace_back(b.begin(), b.end()); };
    fence_manager m(o);
    m.start(1, 9, {0, 1, 2}, {}, false);
    ASSERT_EQ(sent.size(), 1u);
    EXPECT_EQ(static_cast<msg_kind>(sent[0][0]), msg_kind::dissemination);
    EXPECT_EQ(m.missing(1), (std::vector<uint32_t>{1, 2}));  // round 0 from node 2, round 1 from node 1
    m.start(2, 10, {0, 1, 2}, bytes_of(0), true);  // data: the tree's root waits for its children
    EXPECT_EQ(sent.size(), 1u);
    EXPECT_EQ(m.missing(2), (std::vector<uint32_t>{1, 2}));
}

// Nodes that disagree: some forced to the tree, some collecting with data where the others have
// none. Whoever receives the barrier joins it, whoever receives a tree message joins the tree;
// the fence completes everywhere (without data where the barrier finished first).
TEST(fence_manager, disagreeing_nodes_still_complete) {
    for (int seed = 0; seed < 30; ++seed) {
        std::mt19937 rng(seed);
        const uint32_t count = 70;
        barrier_net b(count, [&](uint32_t n, manager_options &o) {
            if ((n + seed) % 7 == 0) o.algo = algorithm::tree;
            if (seed % 2) o.dissemination_min_nodes = 2;
        });
        b.run(rng, [&](fence_manager &m, uint32_t n) {
            const bool data = seed % 3 == 0 && n % 11 == 5;
            m.start(1, 42, b.nodes, data ? bytes_of(n) : blob{}, data);
        });
        ASSERT_EQ(b.done.size(), count) << "seed " << seed;
        EXPECT_GT(b.kinds[msg_kind::dissemination], 0u);
        for (auto &m : b.mgr) EXPECT_EQ(m->active(), 0u);
    }
}
