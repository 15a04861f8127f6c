// The tree fence's shape when the step's nodes are grouped by leaf switch (engines.h,
// tree_links_of): nodes under one switch form a subtree, and a fence crosses between switches
// 2 * (switches - 1) times; the ring's order keeps each switch's nodes together, so a blob
// crosses between switches once per switch. Also a small benchmark: messages crossing switches
// per fence, flat against topology-aware, tree and ring, for a few layouts (counts, no timing).
#include <gtest/gtest.h>

#include <algorithm>

#include <cstdio>
#include <deque>
#include <map>
#include <set>

#include "plugin/coll/engines.h"

using namespace pmixcpp::coll;

namespace {

struct fence_count {
    size_t messages = 0;
    size_t crossing = 0;  // between nodes of different groups
    bool complete = false;
};

// One fence over `nodes` with engines made by `make(node)`, crossings counted against `switch_of`.
template <typename make_engine>
fence_count run_fence(const std::vector<uint32_t> &nodes, const std::vector<uint32_t> &switch_of, make_engine make) {
    fence_count out;
    std::map<uint32_t, decltype(make(0u))> eng;
    for (uint32_t n : nodes) eng[n] = make(n);
    std::deque<std::pair<uint32_t, send_action>> q;
    size_t done = 0;
    auto take = [&](uint32_t from, actions &a) {
        for (auto &s : a.sends)
            for (uint32_t n : destinations(s)) {
                ++out.messages;
                if (switch_of[from] != switch_of[n]) ++out.crossing;
                q.emplace_back(from, send_action{n, s.msg, {}});
            }
        if (a.done) {
            ++done;
            EXPECT_EQ(a.result.size(), nodes.size());
        }
    };
    for (uint32_t n : nodes) {
        actions a;
        eng[n]->start(blob{uint8_t(n)}, a);
        take(n, a);
    }
    while (!q.empty()) {
        auto [from, s] = std::move(q.front());
        q.pop_front();
        actions a;
        EXPECT_TRUE(eng[s.node]->receive(from, std::move(s.msg), a).ok());
        take(s.node, a);
    }
    out.complete = done == nodes.size();
    return out;
}

// A tree fence shaped by `shape_groups` (empty = flat).
fence_count run_tree(const std::vector<uint32_t> &nodes, uint32_t width, const std::vector<uint32_t> &shape_groups,
                     const std::vector<uint32_t> &switch_of) {
    return run_fence(nodes, switch_of, [&](uint32_t n) {
        return std::make_unique<tree_engine>(coll_key{1, 0}, nodes, n, width, shape_groups);
    });
}

// A ring fence ordered by `shape_groups` (empty = node order).
fence_count run_ring(const std::vector<uint32_t> &nodes, const std::vector<uint32_t> &shape_groups,
                     const std::vector<uint32_t> &switch_of) {
    return run_fence(nodes, switch_of, [&](uint32_t n) {
        return std::make_unique<ring_engine>(coll_key{1, 0}, nodes, n, shape_groups);
    });
}

std::vector<uint32_t> iota_nodes(uint32_t n) {
    std::vector<uint32_t> v(n);
    for (uint32_t i = 0; i < n; ++i) v[i] = i;
    return v;
}

// n nodes scattered over nsw switches in no simple order; *used = the switches that got a node.
std::vector<uint32_t> scattered_switches(uint32_t n, uint32_t nsw, std::set<uint32_t> *used) {
    std::vector<uint32_t> sw(n);
    for (uint32_t i = 0; i < n; ++i) sw[i] = (i * 5 + i / 3) % nsw;
    used->insert(sw.begin(), sw.end());
    return sw;
}

}  // namespace

TEST(tree_topology, flat_without_groups) {
    std::vector<uint32_t> nodes = {0, 1, 2, 3, 4};
    auto l0 = tree_links_of(nodes, 0, 2);
    EXPECT_EQ(l0.parent, UINT32_MAX);
    EXPECT_EQ(l0.children, (std::vector<uint32_t>{1, 2}));
    auto l4 = tree_links_of(nodes, 4, 2);
    EXPECT_EQ(l4.parent, 1u);
    // A group table that does not cover every node is ignored.
    auto short_groups = tree_links_of(nodes, 4, 2, {0, 1});
    EXPECT_EQ(short_groups.parent, 1u);
}

TEST(tree_topology, one_switch_one_subtree) {
    // Two leaf switches, interleaved: s0 = {0, 2}, s1 = {1, 3}.
    std::vector<uint32_t> nodes = {0, 1, 2, 3};
    std::vector<uint32_t> g = {0, 1, 0, 1};
    auto l0 = tree_links_of(nodes, 0, 2, g), l1 = tree_links_of(nodes, 1, 2, g);
    auto l2 = tree_links_of(nodes, 2, 2, g), l3 = tree_links_of(nodes, 3, 2, g);
    EXPECT_EQ(l0.parent, UINT32_MAX);
    EXPECT_EQ(l0.children, (std::vector<uint32_t>{2, 1}));  // its switch first, then the other group root
    EXPECT_EQ(l2.parent, 0u);
    EXPECT_EQ(l1.parent, 0u);
    EXPECT_EQ(l1.children, (std::vector<uint32_t>{3}));
    EXPECT_EQ(l3.parent, 1u);
    // Fan-out 8: the flat tree is one level; grouping would only add one.
    auto flat = tree_links_of(nodes, 0, 8, g);
    EXPECT_EQ(flat.children, (std::vector<uint32_t>{1, 2, 3}));
    EXPECT_EQ(tree_links_of(nodes, 3, 8, g).parent, 0u);
}

TEST(tree_topology, every_node_has_one_parent_and_the_links_agree) {
    for (uint32_t n : {2u, 5u, 16u, 33u, 64u})
        for (uint32_t width : {2u, 3u, 8u})
            for (uint32_t nsw : {1u, 2u, 3u, 8u}) {
                auto nodes = iota_nodes(n);
                std::vector<uint32_t> g(n);
                for (uint32_t i = 0; i < n; ++i) g[i] = (i * 7) % nsw;  // scattered placement
                size_t roots = 0;
                for (uint32_t x : nodes) {
                    auto l = tree_links_of(nodes, x, width, g);
                    if (l.parent == UINT32_MAX) ++roots;
                    else {
                        auto p = tree_links_of(nodes, l.parent, width, g);
                        EXPECT_NE(std::find(p.children.begin(), p.children.end(), x), p.children.end())
                            << "n=" << n << " width=" << width << " node " << x;
                    }
                    // Within a switch a node's parent is under the same switch, unless it is the
                    // switch's first node.
                    bool first_of_switch = true;
                    for (uint32_t y : nodes)
                        if (y < x && g[y] == g[x]) first_of_switch = false;
                    if (!first_of_switch && tree_follows_groups(n, width)) {
                        EXPECT_EQ(g[l.parent], g[x]);
                    }
                }
                EXPECT_EQ(roots, 1u);
            }
}

TEST(tree_topology, fence_crosses_switches_twice_per_extra_switch) {
    for (uint32_t n : {4u, 16u, 64u})
        for (uint32_t nsw : {2u, 4u, 8u}) {
            if (nsw > n) continue;
            auto nodes = iota_nodes(n);
            std::set<uint32_t> used;
            auto sw = scattered_switches(n, nsw, &used);
            auto aware = run_tree(nodes, 8, sw, sw);
            EXPECT_TRUE(aware.complete);
            if (tree_follows_groups(n, 8))
                EXPECT_EQ(aware.crossing, 2 * (used.size() - 1)) << "n=" << n << " switches=" << nsw;
            else
                EXPECT_EQ(aware.crossing, run_tree(nodes, 8, {}, sw).crossing) << "one level: flat";
            EXPECT_EQ(aware.messages, 2 * (n - 1));
            auto flat = run_tree(nodes, 8, {}, sw);
            EXPECT_TRUE(flat.complete);
            EXPECT_LE(aware.crossing, flat.crossing);
        }
}

TEST(ring_topology, each_blob_crosses_once_per_switch) {
    for (uint32_t n : {3u, 16u, 64u})
        for (uint32_t nsw : {2u, 4u, 8u}) {
            if (nsw > n) continue;
            auto nodes = iota_nodes(n);
            std::set<uint32_t> used;
            auto sw = scattered_switches(n, nsw, &used);
            auto order = ring_order_of(nodes, sw);
            ASSERT_EQ(order.size(), n);
            size_t changes = 0;  // switch boundaries around the ring
            for (uint32_t i = 0; i < n; ++i) changes += sw[order[i]] != sw[order[(i + 1) % n]];
            EXPECT_EQ(changes, used.size() > 1 ? used.size() : 0u);
            auto aware = run_ring(nodes, sw, sw), flat = run_ring(nodes, {}, sw);
            EXPECT_TRUE(aware.complete && flat.complete);
            EXPECT_EQ(aware.messages, size_t(n) * (n - 1));
            // each of the n blobs travels n-1 hops and passes all boundaries but the one behind it
            // (the one behind it is crossed by nobody when it leads into its own origin)
            EXPECT_LE(aware.crossing, size_t(n) * changes);
            EXPECT_LE(aware.crossing, flat.crossing);
        }
    // a group_of too short for the nodes: node order
    EXPECT_EQ(ring_order_of({0, 1, 2}, {0, 1}), (std::vector<uint32_t>{0, 1, 2}));
    EXPECT_EQ(ring_order_of({0, 1, 2, 3}, {0, 1, 0, 1}), (std::vector<uint32_t>{0, 2, 1, 3}));
}

// Not a check: the numbers for the README (messages crossing switches per fence).
TEST(tree_topology, benchmark_crossings) {
    struct layout {
        const char *name;
        uint32_t n, nsw;
        bool blocked;  // nodes numbered switch by switch (Slurm's usual order) or interleaved
    };
    printf("%-34s %6s %8s %14s %14s\n", "layout", "width", "messages", "flat crossing", "topo crossing");
    for (layout l : {layout{"4 nodes, 2 switches, blocked", 4, 2, true}, layout{"4 nodes, 2 switches, interleaved", 4, 2, false},
                     layout{"16 nodes, 4 switches, blocked", 16, 4, true},
                     layout{"16 nodes, 4 switches, interleaved", 16, 4, false},
                     layout{"64 nodes, 8 switches, blocked", 64, 8, true},
                     layout{"64 nodes, 8 switches, interleaved", 64, 8, false},
                     layout{"256 nodes, 16 switches, blocked", 256, 16, true}})
        for (uint32_t width : {2u, 8u}) {
            auto nodes = iota_nodes(l.n);
            std::vector<uint32_t> sw(l.n);
            for (uint32_t i = 0; i < l.n; ++i) sw[i] = l.blocked ? i / (l.n / l.nsw) : i % l.nsw;
            auto flat = run_tree(nodes, width, {}, sw);
            auto aware = run_tree(nodes, width, sw, sw);
            EXPECT_TRUE(flat.complete && aware.complete);
            EXPECT_LE(aware.crossing, flat.crossing);
            printf("%-34s %6u %8zu %14zu %14zu\n", l.name, width, aware.messages, flat.crossing, aware.crossing);
        }
    printf("%-34s %6s %8s %14s %14s\n", "ring: layout", "", "messages", "flat crossing", "topo crossing");
    for (layout l : {layout{"16 nodes, 4 switches, blocked", 16, 4, true},
                     layout{"16 nodes, 4 switches, interleaved", 16, 4, false},
                     layout{"64 nodes, 8 switches, interleaved", 64, 8, false}}) {
        auto nodes = iota_nodes(l.n);
        std::vector<uint32_t> sw(l.n);
        for (uint32_t i = 0; i < l.n; ++i) sw[i] = l.blocked ? i / (l.n / l.nsw) : i % l.nsw;
        auto flat = run_ring(nodes, {}, sw), aware = run_ring(nodes, sw, sw);
        EXPECT_TRUE(flat.complete && aware.complete);
        EXPECT_LE(aware.crossing, flat.crossing);
        printf("%-34s %6s %8zu %14zu %14zu\n", l.name, "", aware.messages, flat.crossing, aware.crossing);
    }
}
