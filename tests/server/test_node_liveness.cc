// Lost nodes, the step-wide part, without I/O (plugin/server/node_liveness.h): several nodes'
// engines over an in-memory network that delivers node_down / node_probe / node_query messages
// in random order (seeded); dead nodes never answer, a node that ended normally said goodbye to
// its ring neighbours. Messages reach an engine through the handlers it registered (node_channels.h).
// A loss is told through the tree rooted at the lost node: every live node once, at most `width`
// messages from any node, a lost relay's subtree too.
#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <random>
#include <set>

#include "../../plugin/server/node_liveness.h"
#include "log.h"
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
    bool sends_fail = false;   // a message to a dead node: its sender's transport finds it lost
    int32_t ended = -1;        // ended normally: said goodbye to its live ring neighbours
    std::vector<std::unique_ptr<node_liveness>> eng;
    std::vector<std::unique_ptr<node_channels>> channels;  // by node: what its engine registered
    std::vector<std::map<uint32_t, int>> lost_calls;  // by observer: node -> times `lost` ran
    std::vector<std::set<uint32_t>> forgotten;        // by observer: what its transport forgot
    std::vector<std::set<uint32_t>> goodbyes;         // by observer: who said goodbye to it
    std::vector<std::map<uint32_t, int>> downs_out;   // by sender: lost node -> node-down messages sent
    std::vector<std::map<uint32_t, int>> downs_in;    // by receiver: lost node -> node-down messages taken
    std::deque<message> net;
    server_clock::time_point now = server_clock::now();

    explicit sim(uint32_t nodes, uint32_t width = 4)
        : n(nodes), lost_calls(nodes), forgotten(nodes), goodbyes(nodes), downs_out(nodes), downs_in(nodes) {
        std::vector<std::string> names;
        for (uint32_t i = 0; i < n; ++i) names.push_back("n" + std::to_string(i));
        for (uint32_t i = 0; i < n; ++i) {
            node_liveness_ops o;
            o.send = [this, i](uint32_t to, chan c, std::vector<uint8_t> body) {
                EXPECT_NE(to, i) << "a node sends to itself";
                if (c == chan::node_down) ++downs_out[i][about(body)];
                net.push_back({i, to, c, std::move(body)});
            };
            o.said_goodbye = [this, i](uint32_t node) { return goodbyes[i].count(node) > 0; };
            // The transport's view: alive unless forgotten or it said goodbye here (dead nodes
            // look alive until someone decides).
            o.peer_alive = [this, i](uint32_t node) { return !forgotten[i].count(node) && !goodbyes[i].count(node); };
            o.forget = [this, i](uint32_t node) { forgotten[i].insert(node); };
            o.lost = [this, i](uint32_t node, const std::string &) { ++lost_calls[i][node]; };
            eng.push_back(std::make_unique<node_liveness>("test.0", i, names, std::move(o), width));
            channels.push_back(std::make_unique<node_channels>());
            EXPECT_TRUE(eng.back()->add_channels(*channels.back()).ok());
        }
    }

    bool up(uint32_t x) const { return !dead.count(x) && int32_t(x) != ended; }

    static uint32_t about(const std::vector<uint8_t> &body) {  // a node-down's lost node (its first u32)
        wire::Reader r(body);
        uint32_t node = UINT32_MAX;
        (void)r.get_u32(&node);
        return node;
    }

    void deliver(message m) {
        if (sends_fail && dead.count(m.to) && up(m.from)) eng[m.from]->node_lost(m.to, "connection refused", true);
        if (!up(m.to)) return;  // nobody there
        if (m.c == chan::node_down) ++downs_in[m.to][about(m.body)];
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
    ASSERT_EQ(s.net.size(), 1u);  // node-down to node 1 (not to the lost node): its tree's other child
    EXPECT_EQ(s.net.front().to, 1u);
    EXPECT_EQ(s.net.front().c, chan::node_down);
    s.deliver(s.net.front());
    s.net.pop_front();
    EXPECT_EQ(s.lost_calls[1][2], 1);
    EXPECT_TRUE(s.net.empty());  // a leaf of the lost node's tree: passes it on to nobody
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

// Malformed or impossible messages are dropped with a line saying so; a node told it is lost
// itself stays.
TEST(NodeLiveness, BadMessagesAreDropped) {
    std::vector<std::string> lines;
    const log_level level = get_log_level();
    set_log_level(log_level::warning);
    set_log_sink([&](const log_record &r) { lines.emplace_back(r.message); });
    sim s(3);
    wire::Writer w;
    ASSERT_TRUE(wire::encode(w, wire::node_down_message{0, "you", 2, 4}).ok());
    s.eng[0]->on_node_down(1, w.data());  // about ourselves
    w.clear();
    ASSERT_TRUE(wire::encode(w, wire::node_down_message{1, "me", 2, 4}).ok());
    s.eng[0]->on_node_down(1, w.data());  // about the sender
    w.clear();
    ASSERT_TRUE(wire::encode(w, wire::node_down_message{9, "?", 1, 4}).ok());
    s.eng[0]->on_node_down(1, w.data());  // no such node
    w.clear();
    ASSERT_TRUE(wire::encode(w, wire::node_down_message{2, "far", 3, 4}).ok());
    s.eng[0]->on_node_down(1, w.data());  // noticed by no such node
    // A width outside 2..64, a loss noticed by the lost node itself (written as a hostile
    // sender would: the encoder refuses both).
    for (auto [origin, width] : {std::pair<uint32_t, uint8_t>{1, 0}, {1, 1}, {1, 65}, {1, 255}, {2, 4}}) {
        w.clear();
        w.put_u32(2);
        w.put_u32(origin);
        w.put_u8(width);
        ASSERT_TRUE(w.put_string("x").ok());
        s.eng[0]->on_node_down(1, w.data());
    }
    s.eng[0]->on_node_down(1, std::vector<uint8_t>{1, 2});
    s.eng[0]->on_probe(1, std::vector<uint8_t>{3});
    s.eng[0]->on_query(1, std::vector<uint8_t>{1, 9, 0, 0, 0});
    w.clear();
    ASSERT_TRUE(wire::encode(w, wire::node_query_message{1, 7, false}).ok());
    s.eng[0]->on_query(1, w.data());  // about no such node
    set_log_sink({});
    set_log_level(level);
    EXPECT_TRUE(s.lost_calls[0].empty());
    EXPECT_TRUE(s.net.empty());
    EXPECT_TRUE(s.eng[0]->lost_nodes().empty());
    size_t malformed = 0, about_us = 0;
    for (const auto &l : lines) {
        if (l.find("malformed node-down message from node 1 dropped") != std::string::npos) ++malformed;
        if (l.find("node n1 believes this node is lost") != std::string::npos) ++about_us;
    }
    EXPECT_EQ(malformed, 9u);  // the sender, no such node, no such origin, 4 widths, the node itself, 2 bytes
    EXPECT_EQ(about_us, 1u);
}

namespace {

// Delivers everything, in random order.
void drain(sim &s, std::mt19937 &rng) {
    while (s.deliver_random(rng)) {
    }
}

// Every up node took `lost` for lost exactly once and sent at most `max_out` node-downs about
// it (`max_extra` for the nodes of `extra`).
void expect_told_once(sim &s, uint32_t lost, int max_out, const std::set<uint32_t> &extra = {}, int max_extra = 0) {
    for (uint32_t x = 0; x < s.n; ++x) {
        SCOPED_TRACE("node " + std::to_string(x));
        if (!s.up(x)) continue;
        EXPECT_EQ(s.lost_calls[x][lost], 1);
        EXPECT_TRUE(s.eng[x]->is_lost(lost));
        EXPECT_LE(s.downs_out[x][lost], extra.count(x) ? max_extra : max_out);
    }
}

}  // namespace

// One noticer: every live node but the noticer gets exactly one message (the noticer at most
// one: its own place in the tree); the noticer sends at most `width` to the lost node's
// children, and in its own place at most `width` more to its own (at once when it is one of
// them: 2 width - 1), every other node at most `width`; at every size from 1 to 40 nodes, for
// several lost nodes, noticers and widths.
TEST(NodeLiveness, LossToldThroughTheTreeOncePerNode) {
    std::mt19937 rng(7);
    for (uint32_t N = 1; N <= 40; ++N) {
        for (uint32_t width : {2u, 3u, 4u, 8u}) {
            for (uint32_t lost : {0u, N / 2, N - 1}) {
                for (uint32_t off : {1u, N - 1, N / 3 + 1}) {
                    const uint32_t noticer = (lost + off) % N;
                    if (noticer == lost) continue;
                    SCOPED_TRACE("N " + std::to_string(N) + " width " + std::to_string(width) + " lost " +
                                 std::to_string(lost) + " noticer " + std::to_string(noticer));
                    sim s(N, width);
                    s.dead.insert(lost);
                    s.eng[noticer]->node_lost(lost, "connection reset", true);
                    const auto top = node_liveness::tree_children(lost, lost, width, N);
                    const bool top_child = std::find(top.begin(), top.end(), noticer) != top.end();
                    EXPECT_LE(s.net.size(), top_child ? 2 * width - 1 : width);
                    drain(s, rng);
                    expect_told_once(s, lost, int(width), {noticer}, 2 * int(width));
                    size_t total = 0;
                    for (uint32_t x = 0; x < N; ++x) {
                        if (x == lost) continue;
                        total += size_t(s.downs_in[x][lost]);
                        if (x == noticer) EXPECT_LE(s.downs_in[x][lost], 1);
                        else EXPECT_EQ(s.downs_in[x][lost], 1) << "node " << x;
                    }
                    EXPECT_LE(total, N - 1u);
                    EXPECT_EQ(s.downs_in[lost][lost], 0);  // dead: never delivered, and never sent
                    for (const auto &m : s.net) EXPECT_NE(m.to, lost);
                }
            }
        }
    }
}

// Several nodes notice the same loss at about the same time (its tree and ring neighbours all
// see the link break): one tree, so one forward per node still reaches everyone, and copies are
// dropped without being passed on again.
TEST(NodeLiveness, SeveralNoticersOneTree) {
    for (uint32_t seed = 1; seed <= 30; ++seed) {
        std::mt19937 rng(seed);
        const uint32_t N = 5 + seed % 36, width = seed % 3 == 0 ? 2 : (seed % 3 == 1 ? 4 : 8);
        const uint32_t lost = std::uniform_int_distribution<uint32_t>(0, N - 1)(rng);
        SCOPED_TRACE("seed " + std::to_string(seed) + " N " + std::to_string(N) + " width " + std::to_string(width));
        sim s(N, width);
        s.dead.insert(lost);
        std::set<uint32_t> noticers;
        while (noticers.size() < 3) {
            uint32_t x = std::uniform_int_distribution<uint32_t>(0, N - 1)(rng);
            if (x != lost) noticers.insert(x);
        }
        // The noticers' reports interleave with deliveries.
        std::vector<uint32_t> pending(noticers.begin(), noticers.end());
        std::shuffle(pending.begin(), pending.end(), rng);
        while (!pending.empty() || !s.net.empty()) {
            if (!pending.empty() && (s.net.empty() || rng() % 3 == 0)) {
                s.eng[pending.back()]->node_lost(lost, "connection reset", true);
                pending.pop_back();
            } else {
                s.deliver_random(rng);
            }
        }
        // a noticer: once from the root, once in its own place
        expect_told_once(s, lost, int(width), noticers, 2 * int(width));
        for (uint32_t x = 0; x < N; ++x) {
            if (x != lost && !noticers.count(x)) EXPECT_GE(s.downs_in[x][lost], 1) << "node " << x;
        }
    }
}

// A relay of the tree is lost too. Known lost when the message comes: skipped, its children
// are sent to instead. Lost at the same moment (the message to it goes nowhere): the sender's
// transport finds it lost (the send fails), the sender tells its loss through the relay's own
// tree and sends the first loss to the relay's children. Either way every live node is told of
// both, once; a node sends at most its own children's and a lost relay's children's worth.
TEST(NodeLiveness, LostRelaysSubtreeStillTold) {
    for (uint32_t N : {6u, 9u, 17u, 40u}) {
        for (uint32_t width : {2u, 3u, 4u}) {
            for (bool known : {true, false}) {
                SCOPED_TRACE("N " + std::to_string(N) + " width " + std::to_string(width) + (known ? " known" : " unknown"));
                std::mt19937 rng(N * 10 + width);
                const uint32_t lost = N / 2;
                // The relay: the lost node's first child, with children of its own; the noticer:
                // the lost node's last child.
                const auto top = node_liveness::tree_children(lost, lost, width, N);
                const uint32_t relay = top.front(), noticer = top.back();
                const auto below = node_liveness::tree_children(lost, relay, width, N);
                ASSERT_FALSE(below.empty());
                sim s(N, width);
                s.dead = {lost, relay};
                s.sends_fail = true;
                if (known) {
                    s.eng[noticer]->node_lost(relay, "connection reset", true);
                    drain(s, rng);
                }
                s.eng[noticer]->node_lost(lost, "connection reset", true);
                drain(s, rng);
                // (other nodes whose sends to the dead failed noticed them too)
                expect_told_once(s, lost, 2 * int(width), {noticer}, 3 * int(width));
                expect_told_once(s, relay, 2 * int(width), {noticer}, 3 * int(width));
            }
        }
    }
}

// The repair itself, step by step: the message to the relay goes nowhere, its children have
// nothing; once the sender takes the relay for lost they get it, once.
TEST(NodeLiveness, SenderRepairsALostRelaysSubtree) {
    for (uint32_t width : {2u, 3u}) {
        const uint32_t N = 12, lost = 3;
        const auto top = node_liveness::tree_children(lost, lost, width, N);
        const uint32_t relay = top.front(), noticer = top.back();
        const auto below = node_liveness::tree_children(lost, relay, width, N);
        sim s(N, width);
        s.dead = {lost, relay};
        std::mt19937 rng(width);
        s.eng[noticer]->node_lost(lost, "connection reset", true);
        drain(s, rng);
        for (uint32_t c : below) EXPECT_EQ(s.lost_calls[c][lost], 0) << c;
        s.eng[noticer]->node_lost(relay, "connection refused", true);  // its send failed
        drain(s, rng);
        for (uint32_t c : below) EXPECT_EQ(s.downs_in[c][lost], 1) << c;
        expect_told_once(s, lost, int(width), {noticer}, 3 * int(width));
        expect_told_once(s, relay, int(width), {noticer}, 2 * int(width));
    }
}

// Two relays on one path lost at the same moment as the node: the subtree below both is told
// as each is found lost; a third node noticing one of them too changes nothing.
TEST(NodeLiveness, LostRelayChainStillTold) {
    const uint32_t N = 40, width = 2, lost = 0;
    const uint32_t relay = 1, relay2 = node_liveness::tree_children(lost, relay, width, N).front();
    ASSERT_EQ(relay2, 3u);
    std::mt19937 rng(3);
    sim s(N, width);
    s.dead = {lost, relay, relay2};
    s.sends_fail = true;
    s.eng[2]->node_lost(lost, "connection reset", true);
    s.eng[5]->node_lost(relay2, "connection reset", true);
    drain(s, rng);
    expect_told_once(s, lost, 2 * int(width), {2}, 4 * int(width));
    for (uint32_t x = 0; x < N; ++x)
        if (s.up(x)) {
            EXPECT_EQ(s.lost_calls[x][relay], 1) << x;
            EXPECT_EQ(s.lost_calls[x][relay2], 1) << x;
        }
    for (uint32_t c : node_liveness::tree_children(lost, relay2, width, N)) EXPECT_EQ(s.downs_in[c][lost], 1) << c;
}

// The tree: every node but the root is exactly one node's child, children hold at most `width`.
TEST(NodeLiveness, TreeCoversEveryNodeOnce) {
    for (uint32_t N = 1; N <= 70; ++N)
        for (uint32_t width : {2u, 3u, 8u, 64u})
            for (uint32_t root = 0; root < N; root += 1 + N / 5) {
                std::vector<int> parents(N, 0);
                for (uint32_t x = 0; x < N; ++x) {
                    auto c = node_liveness::tree_children(root, x, width, N);
                    EXPECT_LE(c.size(), width);
                    for (uint32_t k : c) ++parents[k];
                }
                for (uint32_t x = 0; x < N; ++x) EXPECT_EQ(parents[x], x == root ? 0 : 1) << N << " " << root << " " << x;
            }
}
