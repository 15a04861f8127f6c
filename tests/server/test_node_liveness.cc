// Lost nodes, the step-wide part, without I/O (plugin/server/node_liveness.h): several nodes'
// engines over an in-memory network that delivers node_down / node_probe / node_query messages
// in random order (seeded); dead nodes never answer, a node that ended normally said goodbye to
// its ring neighbours. Messages reach an engine through the handlers it registered (node_channels.h).
#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <random>
#include <set>

#include "../../plugin/server/node_liveness.h"
#include "wire/node_messages.h"

using namespace pmixcpp;
using namespace pmixcpp::server;
using chan = node_channel;

namespace {

struct message {
    uint32_t from = 0, to = 0;
    chan c = chan::node_down;
    std::vector<uint8_t> body;
};

struct sim {
    uint32_t n;
    std::set<uint32_t> dead;   // never answer, never act
    int32_t ended = -1;        // ended normally: said goodbye to its live ring neighbours
    std::vector<std::unique_ptr<node_liveness>> eng;
    std::vector<std::unique_ptr<node_channels>> channels;  // by node: what its engine registered
    std::vector<std::map<uint32_t, int>> lost_calls;  // by observer: node -> times `lost` ran
    std::vector<std::set<uint32_t>> forgotten;        // by observer: what its transport forgot
    std::vector<std::set<uint32_t>> goodbyes;         // by observer: who said goodbye to it
    std::deque<message> net;
    server_clock::time_point now = server_clock::now();

    explicit sim(uint32_t nodes) : n(nodes), lost_calls(nodes), forgotten(nodes), goodbyes(nodes) {
        std::vector<std::string> names;
        for (uint32_t i = 0; i < n; ++i) names.push_back("n" + std::to_string(i));
        for (uint32_t i = 0; i < n; ++i) {
            node_liveness_ops o;
            o.send = [this, i](uint32_t to, chan c, std::vector<uint8_t> body) {
                net.push_back({i, to, c, std::move(body)});
            };
            o.said_goodbye = [this, i](uint32_t node) { return goodbyes[i].count(node) > 0; };
            // The transport's view: alive unless forgotten or it said goodbye here (dead nodes
            // look alive until someone decides).
            o.peer_alive = [this, i](uint32_t node) { return !forgotten[i].count(node) && !goodbyes[i].count(node); };
            o.forget = [this, i](uint32_t node) { forgotten[i].insert(node); };
            o.lost = [this, i](uint32_t node, const std::string &) { ++lost_calls[i][node]; };
            eng.push_back(std::make_unique<node_liveness>("test.0", i, names, std::move(o)));
            channels.push_back(std::make_unique<node_channels>());
            EXPECT_TRUE(eng.back()->add_channels(*channels.back()).ok());
        }
    }

    bool up(uint32_t x) const { return !dead.count(x) && int32_t(x) != ended; }

    void deliver(message m) {
        if (!up(m.to)) return;  // nobody there
        EXPECT_TRUE(channels[m.to]->dispatch(m.from, id_of(m.c), m.body)) << "channel " << id_of(m.c);
    }

    bool deliver_random(std::mt19937 &rng) {
        if (net.empty()) return false;
        size_t k = std::uniform_int_distribution<size_t>(0, net.size() - 1)(rng);
        message m = std::move(net[k]);
        net.erase(net.begin() + static_cast<std::ptrdiff_t>(k));
        deliver(std::move(m));
        return true;
    }
};

}  // namespace

// Dead nodes are found lost on every live node, once each, whether through a probe, a query
// nobody could answer yes to, or another node's node-down message; a node that ended normally is
// never taken for lost (a neighbour got its goodbye); live nodes are never lost.
TEST(NodeLiveness, RandomDeliveryOrdersFindTheDeadOnly) {
    for (uint32_t seed : {1u, 2u, 3u, 5u, 8u, 13u, 21u, 34u, 55u, 89u}) {
        SCOPED_TRACE("seed " + std::to_string(seed));
        std::mt19937 rng(seed);
        const uint32_t N = 7;
        sim s(N);
        std::vector<uint32_t> order(N);
        for (uint32_t i = 0; i < N; ++i) order[i] = i;
        std::shuffle(order.begin(), order.end(), rng);
        uint32_t ndead = 1 + seed % 2;
        for (uint32_t k = 0; k < ndead; ++k) s.dead.insert(order[k]);
        // The one that ended normally: one with a live ring neighbour to hold its goodbye.
        for (uint32_t k = ndead; k < N; ++k) {
            uint32_t e = order[k], a = (e + 1) % N, b = (e + N - 1) % N;
            if (!s.dead.count(a) || !s.dead.count(b)) {
                s.ended = int32_t(e);
                for (uint32_t nb : {a, b})
                    if (!s.dead.count(nb)) s.goodbyes[nb].insert(e);
                break;
            }
        }
        ASSERT_GE(s.ended, 0);
        // What the live nodes' transports report, in random order among the deliveries: every
        // gone node refuses every live node (unreachable); some nodes also probe the dead.
        std::vector<std::pair<uint32_t, uint32_t>> reports;  // (observer, gone)
        for (uint32_t x = 0; x < N; ++x) {
            if (!s.up(x)) continue;
            for (uint32_t g = 0; g < N; ++g)
                if (!s.up(g)) reports.emplace_back(x, g);
        }
        std::shuffle(reports.begin(), reports.end(), rng);
        std::vector<uint32_t> dead(s.dead.begin(), s.dead.end());
        size_t next = 0;
        while (next < reports.size() || !s.net.empty()) {
            int what = std::uniform_int_distribution<int>(0, 4)(rng);
            if (what == 0 && next < reports.size()) {
                auto [x, g] = reports[next++];
                s.eng[x]->unreachable(g, "connection refused", s.now);
            } else if (what == 1 && next < reports.size()) {
                uint32_t x = reports[next].first;
                s.eng[x]->probe(dead, s.now);
            } else if (!s.deliver_random(rng) && next < reports.size()) {
                auto [x, g] = reports[next++];
                s.eng[x]->unreachable(g, "connection refused", s.now);
            }
        }
        // Deadlines pass (probes 5 s, queries 2 s); what they send is delivered too.
        for (int round = 0; round < 3; ++round) {
            s.now += std::chrono::seconds(6);
            for (uint32_t x = 0; x < N; ++x)
                if (s.up(x)) s.eng[x]->expire(s.now);
            while (s.deliver_random(rng)) {
            }
        }
        for (uint32_t x = 0; x < N; ++x) {
            if (!s.up(x)) continue;
            SCOPED_TRACE("observer " + std::to_string(x));
            std::set<uint32_t> lost;
            for (auto [node, times] : s.lost_calls[x]) {
                EXPECT_EQ(times, 1) << "node " << node;
                lost.insert(node);
            }
            EXPECT_EQ(lost, s.dead);
            for (uint32_t node : s.dead) EXPECT_TRUE(s.eng[x]->is_lost(node));
            EXPECT_FALSE(s.eng[x]->is_lost(uint32_t(s.ended)));
            EXPECT_EQ(s.eng[x]->probes(), 0u);
            EXPECT_EQ(s.eng[x]->queries(), 0u);
            EXPECT_EQ(s.eng[x]->next_deadline(), std::nullopt);
            for (uint32_t node : s.dead) EXPECT_TRUE(s.forgotten[x].count(node));
        }
    }
}

// The probe: a live node answers (nothing happens), a silent one is lost after kProbeTimeout
// and the others are told.
TEST(NodeLiveness, ProbeAnsweredOrTimedOut) {
    sim s(3);
    s.dead.insert(2);
    s.eng[0]->probe({1, 2, 0}, s.now);  // itself: skipped
    EXPECT_EQ(s.eng[0]->probes(), 2u);
    EXPECT_EQ(s.eng[0]->next_deadline(), s.now + node_liveness::kProbeTimeout);
    while (!s.net.empty()) {
        s.deliver(s.net.front());
        s.net.pop_front();
    }
    EXPECT_EQ(s.eng[0]->probes(), 1u);  // node 1 answered
    s.eng[0]->expire(s.now + std::chrono::seconds(4));
    EXPECT_TRUE(s.lost_calls[0].empty());
    s.eng[0]->expire(s.now + node_liveness::kProbeTimeout);
    EXPECT_EQ(s.lost_calls[0][2], 1);
    ASSERT_EQ(s.net.size(), 1u);  // node-down to node 1 (not to the lost node)
    EXPECT_EQ(s.net.front().to, 1u);
    EXPECT_EQ(s.net.front().c, chan::node_down);
    s.deliver(s.net.front());
    s.net.pop_front();
    EXPECT_EQ(s.lost_calls[1][2], 1);
    EXPECT_TRUE(s.net.empty());  // told, not noticed: node 1 tells nobody
    // Lost once: again changes nothing.
    s.eng[0]->node_lost(2, "again", true);
    EXPECT_EQ(s.lost_calls[0][2], 1);
    EXPECT_EQ(s.eng[0]->lost_nodes(), std::vector<uint32_t>{2});
}

// The query: one "yes" ends it; all "no" or nobody to ask: lost; an answer that never comes:
// lost after kQueryTimeout.
TEST(NodeLiveness, QueryYesNoAndTimeout) {
    {
        sim s(4);
        s.ended = 2;
        s.goodbyes[3].insert(2);
        s.eng[0]->unreachable(2, "refused", s.now);
        EXPECT_EQ(s.eng[0]->queries(), 1u);
        EXPECT_EQ(s.net.size(), 2u);  // asks 1 and 3
        while (!s.net.empty()) {
            s.deliver(s.net.front());
            s.net.pop_front();
        }
        EXPECT_EQ(s.eng[0]->queries(), 0u);
        EXPECT_TRUE(s.lost_calls[0].empty());
        // Node 3 has its goodbye: it does not ask.
        s.eng[3]->unreachable(2, "refused", s.now);
        EXPECT_EQ(s.eng[3]->queries(), 0u);
    }
    {
        sim s(3);
        s.dead.insert(2);
        s.eng[0]->unreachable(2, "refused", s.now);
        while (!s.net.empty()) {
            s.deliver(s.net.front());
            s.net.pop_front();
        }
        EXPECT_EQ(s.lost_calls[0][2], 1);  // node 1 said no
        EXPECT_EQ(s.lost_calls[1][2], 1);  // and was told
    }
    {
        sim s(2);
        s.eng[0]->unreachable(1, "refused", s.now);  // nobody to ask
        EXPECT_EQ(s.lost_calls[0][1], 1);
    }
    {
        sim s(3);
        s.dead.insert(1);
        s.dead.insert(2);
        s.eng[0]->unreachable(2, "refused", s.now);  // asks node 1, which is dead too
        while (!s.net.empty()) {
            s.deliver(s.net.front());
            s.net.pop_front();
        }
        EXPECT_EQ(s.eng[0]->queries(), 1u);
        s.eng[0]->expire(s.now + node_liveness::kQueryTimeout);
        EXPECT_EQ(s.lost_calls[0][2], 1);
    }
    {
        // The node whose answer is due is lost meanwhile: nobody left to ask.
        sim s(3);
        s.dead.insert(1);
        s.dead.insert(2);
        s.eng[0]->unreachable(2, "refused", s.now);
        s.eng[0]->node_lost(1, "transport", true);
        EXPECT_EQ(s.lost_calls[0][1], 1);
        EXPECT_EQ(s.lost_calls[0][2], 1);
        EXPECT_EQ(s.eng[0]->queries(), 0u);
    }
}

// Malformed or impossible messages are dropped; a node told it is lost itself stays.
TEST(NodeLiveness, BadMessagesAreDropped) {
    sim s(3);
    wire::Writer w;
    ASSERT_TRUE(wire::encode(w, wire::node_down_message{0, "you"}).ok());
    s.eng[0]->on_node_down(1, w.data());  // about ourselves
    w.clear();
    ASSERT_TRUE(wire::encode(w, wire::node_down_message{1, "me"}).ok());
    s.eng[0]->on_node_down(1, w.data());  // about the sender
    w.clear();
    ASSERT_TRUE(wire::encode(w, wire::node_down_message{9, "?"}).ok());
    s.eng[0]->on_node_down(1, w.data());  // no such node
    s.eng[0]->on_node_down(1, std::vector<uint8_t>{1, 2});
    s.eng[0]->on_probe(1, std::vector<uint8_t>{3});
    s.eng[0]->on_query(1, std::vector<uint8_t>{1, 9, 0, 0, 0});
    w.clear();
    ASSERT_TRUE(wire::encode(w, wire::node_query_message{1, 7, false}).ok());
    s.eng[0]->on_query(1, w.data());  // about no such node
    EXPECT_TRUE(s.lost_calls[0].empty());
    EXPECT_TRUE(s.net.empty());
    EXPECT_TRUE(s.eng[0]->lost_nodes().empty());
}
