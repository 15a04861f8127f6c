// The transports' liveness policy without I/O (plugin/net/liveness.h): a ring of engines over
// modelled links (a greeting opens a link that the peer hears; a dead peer refuses new links
// and breaks the open ones; a peer that ends normally says goodbye on its links, then they
// break), the facts delivered in random order (seeded). With an ordered link (TCP) a link's
// goodbye comes before its break; without (UCX) in any order, and the grace settles it.
#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <random>
#include <set>

#include "plugin/net/liveness.h"
#include "wire/node_messages.h"

using namespace pmixcpp;
using namespace pmixcpp::net;

namespace {

enum class fact_kind { connect, bye, broken };
struct fact {
    fact_kind kind;
    uint32_t at, about;  // the observer, the peer it learns about
};

struct ring {
    uint32_t n;
    bool ordered;  // TCP: per link, goodbye before break
    std::vector<std::unique_ptr<peer_liveness>> eng;
    std::vector<std::set<uint32_t>> out;  // by node: links it opened
    std::set<uint32_t> dead;
    int32_t ended = -1;
    std::deque<fact> facts;
    std::vector<std::map<uint32_t, int>> lost;      // by observer: node -> reports
    std::vector<std::set<uint32_t>> unreachable;    // by observer
    peer_liveness::clock::time_point now = peer_liveness::clock::now();

    ring(uint32_t nodes, bool tcp) : n(nodes), ordered(tcp), out(nodes), lost(nodes), unreachable(nodes) {
        std::vector<std::string> names;
        for (uint32_t i = 0; i < n; ++i) names.push_back("n" + std::to_string(i));
        for (uint32_t i = 0; i < n; ++i) {
            liveness_options o{tcp ? "tcp" : "ucx", i, names, true, tcp,
                               tcp ? std::chrono::milliseconds(0) : std::chrono::milliseconds(500)};
            liveness_ops ops;
            ops.close = [this, i](uint32_t node) { out[i].erase(node); };
            ops.greet = [this, i](uint32_t node) {
                out[i].insert(node);
                facts.push_back({fact_kind::connect, i, node});
            };
            ops.linked = [this, i](uint32_t node) { return out[i].count(node) > 0; };
            ops.lost = [this, i](uint32_t node, const std::string &) { ++lost[i][node]; };
            ops.unreachable = [this, i](uint32_t node, const std::string &) { unreachable[i].insert(node); };
            eng.push_back(std::make_unique<peer_liveness>(std::move(o), std::move(ops)));
        }
    }

    bool up(uint32_t x) const { return !dead.count(x) && int32_t(x) != ended; }

    void apply(const fact &f) {
        if (!up(f.at)) return;
        peer_liveness &e = *eng[f.at];
        switch (f.kind) {
        case fact_kind::connect:
            if (!out[f.at].count(f.about)) return;  // closed meanwhile
            if (!up(f.about)) {
                e.connect_failed(f.about, "connection refused", now);
                return;
            }
            e.reached(f.about);
            eng[f.about]->heard(f.at);
            return;
        case fact_kind::bye: {
            uint8_t b = static_cast<uint8_t>(wire::link_kind::bye);
            e.link_message(f.about, {&b, 1});
            return;
        }
        case fact_kind::broken: e.broken(f.about, "closed", now); return;
        }
    }

    // One fact at random; with ordered links, only the first queued one of its (observer, peer).
    bool step(std::mt19937 &rng) {
        if (facts.empty()) return false;
        size_t k = std::uniform_int_distribution<size_t>(0, facts.size() - 1)(rng);
        if (ordered)
            for (size_t j = 0; j < k; ++j)
                if (facts[j].at == facts[k].at && facts[j].about == facts[k].about) {
                    k = j;
                    break;
                }
        fact f = facts[k];
        facts.erase(facts.begin() + static_cast<std::ptrdiff_t>(k));
        apply(f);
        return true;
    }

    // `x` goes away: the nodes linked with it (either way) see the links break, after its
    // goodbye if it ended normally.
    void go(uint32_t x, bool goodbye) {
        for (uint32_t i = 0; i < n; ++i) {
            if (i == x || !(out[i].count(x) || out[x].count(i))) continue;
            if (goodbye) facts.push_back({fact_kind::bye, i, x});
            facts.push_back({fact_kind::broken, i, x});
        }
        out[x].clear();
    }
};

void dead_and_ended_case(bool tcp) {
    for (uint32_t seed : {1u, 2u, 3u, 4u, 5u, 6u, 7u, 11u, 23u, 97u}) {
        SCOPED_TRACE(std::string(tcp ? "tcp" : "ucx") + " seed " + std::to_string(seed));
        std::mt19937 rng(seed);
        const uint32_t N = 8;
        ring r(N, tcp);
        for (auto &e : r.eng) e->start();
        while (r.step(rng)) {
        }  // the neighbours greet each other
        // A run of dead nodes (consecutive: only the cascade finds the middle ones), and
        // elsewhere one that ends normally.
        uint32_t first = seed % N, len = 1 + seed % 3;
        for (uint32_t k = 0; k < len; ++k) r.dead.insert((first + k) % N);
        r.ended = int32_t((first + len + 1 + seed % 2) % N);
        std::vector<uint32_t> going(r.dead.begin(), r.dead.end());
        going.push_back(uint32_t(r.ended));
        std::shuffle(going.begin(), going.end(), rng);
        for (uint32_t x : going) r.go(x, int32_t(x) == r.ended);
        for (int round = 0; round < 5; ++round) {
            while (r.step(rng)) {
            }
            r.now += std::chrono::seconds(1);  // past every grace
            for (uint32_t i = 0; i < N; ++i)
                if (r.up(i)) r.eng[i]->tick(r.now);
        }
        EXPECT_TRUE(r.facts.empty());
        std::set<uint32_t> found;
        for (uint32_t i = 0; i < N; ++i) {
            if (!r.up(i)) continue;
            SCOPED_TRACE("observer " + std::to_string(i));
            for (auto [node, times] : r.lost[i]) {
                EXPECT_EQ(times, 1) << "node " << node;
                EXPECT_TRUE(r.dead.count(node)) << "node " << node << " reported lost";
                found.insert(node);
            }
            for (uint32_t node : r.unreachable[i]) {
                EXPECT_FALSE(r.up(node)) << "node " << node << " reported unreachable";
                if (r.dead.count(node)) found.insert(node);
            }
            for (uint32_t j = 0; j < N; ++j)
                if (r.up(j) && j != i) {
                    EXPECT_TRUE(r.eng[i]->alive(j)) << "node " << j;
                }
            EXPECT_FALSE(r.eng[i]->waiting_for_goodbyes());
        }
        EXPECT_EQ(found, r.dead);
        // The one that ended normally: its neighbours got its goodbye.
        for (uint32_t nb : {(uint32_t(r.ended) + 1) % N, (uint32_t(r.ended) + N - 1) % N})
            if (r.up(nb) && (r.out[nb].count(uint32_t(r.ended)) || r.eng[nb]->has_heard(uint32_t(r.ended)))) {
                EXPECT_TRUE(r.eng[nb]->said_goodbye(uint32_t(r.ended)));
            }
    }
}

}  // namespace

TEST(peer_liveness, tcp_random_orders_find_every_dead_node_and_no_live_one) { dead_and_ended_case(true); }
TEST(peer_liveness, ucx_random_orders_find_every_dead_node_and_no_live_one) { dead_and_ended_case(false); }

// The states, one fact at a time.
TEST(peer_liveness, transitions) {
    std::vector<std::pair<uint32_t, std::string>> lost, unreachable;
    std::vector<uint32_t> greeted, left;
    std::set<uint32_t> links;
    liveness_ops ops{[&](uint32_t n) { links.erase(n); },
                     [&](uint32_t n) {
                         greeted.push_back(n);
                         links.insert(n);
                     },
                     [&](uint32_t n) { return links.count(n) > 0; },
                     [&](uint32_t n, const std::string &w) { lost.emplace_back(n, w); },
                     [&](uint32_t n, const std::string &w) { unreachable.emplace_back(n, w); },
                     [&](uint32_t n) { left.push_back(n); }};
    auto now = peer_liveness::clock::now();
    peer_liveness e({"ucx", 0, {"a", "b", "c", "d", "e"}, true, false, std::chrono::milliseconds(500)}, ops);
    e.start();
    EXPECT_EQ(greeted, (std::vector<uint32_t>{1, 4}));  // both neighbours
    // Never talked, refused before any loss: left quietly.
    e.connect_failed(2, "refused", now);
    EXPECT_EQ(e.state(2), peer_state::left);
    EXPECT_TRUE(unreachable.empty());
    // Talked, link broke: waits for the goodbye, which comes: left.
    e.reached(1);
    e.broken(1, "endpoint error", now);
    EXPECT_EQ(e.state(1), peer_state::left);
    EXPECT_TRUE(e.waiting_for_goodbyes());
    EXPECT_EQ(e.next_deadline(), now + std::chrono::milliseconds(500));
    uint8_t bye = 2;
    e.link_message(1, {&bye, 1});
    e.tick(now + std::chrono::milliseconds(100));
    EXPECT_FALSE(e.waiting_for_goodbyes());
    EXPECT_TRUE(lost.empty());
    // Each told once as no longer alive (gone untalked; broken, waiting for its goodbye): the
    // goodbye that followed tells nothing more.
    EXPECT_EQ(left, (std::vector<uint32_t>{2, 1}));
    EXPECT_TRUE(e.said_goodbye(1));
    // Heard from, link broke, no goodbye within the grace: lost, once; the ring closes.
    e.heard(4);
    e.broken(4, "endpoint error", now);
    e.tick(now + std::chrono::milliseconds(499));
    EXPECT_TRUE(lost.empty());
    greeted.clear();
    e.tick(now + std::chrono::milliseconds(500));
    ASSERT_EQ(lost.size(), 1u);
    EXPECT_EQ(lost[0], (std::pair<uint32_t, std::string>{4, "endpoint error (no goodbye followed)"}));
    EXPECT_EQ(e.state(4), peer_state::lost);
    EXPECT_EQ(greeted, (std::vector<uint32_t>{3}));  // 1 and 2 left; 4 lost: 3 on both sides
    e.broken(4, "again", now);
    EXPECT_EQ(lost.size(), 1u);
    // After a loss, a never-talked refusal goes to the server.
    e.connect_failed(3, "refused", now);
    ASSERT_EQ(unreachable.size(), 1u);
    EXPECT_EQ(unreachable[0].first, 3u);
    EXPECT_EQ(e.state(3), peer_state::left);
    // forget: lost without a report.
    e.forget(3);
    EXPECT_EQ(e.state(3), peer_state::lost);
    EXPECT_EQ(lost.size(), 1u);
    // An ordered link (no grace): lost at once; a hello is no goodbye; out-of-range facts do nothing.
    peer_liveness t({"tcp", 1, {"a", "b", "c"}, true, true, {}}, ops);
    greeted.clear();
    t.start();
    EXPECT_EQ(greeted, (std::vector<uint32_t>{2}));  // the successor only
    uint8_t hello = 1;
    t.link_message(0, {&hello, 1});
    EXPECT_TRUE(t.alive(0));
    t.heard(0);
    t.broken(0, "closed", now);
    EXPECT_EQ(t.state(0), peer_state::lost);
    EXPECT_EQ(lost.size(), 2u);
    t.broken(7, "?", now);
    t.broken(1, "self", now);
    t.connect_failed(9, "?", now);
    EXPECT_EQ(lost.size(), 2u);
    // A link closed idle for the cap: the peer may have left while we had no link, its goodbye
    // coming later on another one; a failing link waits for it (unlinked_grace), and only then
    // is the peer lost.
    liveness_options capped{"tcp", 0, {"a", "b", "c", "d"}, false, true, {}};
    capped.unlinked_grace = std::chrono::milliseconds(500);
    peer_liveness c(capped, ops);
    c.start();
    c.heard(1);
    c.heard(2);
    c.heard(3);
    c.unlinked(1);
    c.unlinked(2);
    c.connect_failed(1, "Broken pipe", now);
    c.broken(2, "closed", now);
    c.broken(3, "closed", now);  // never closed idle: lost at once, as before
    EXPECT_EQ(lost.size(), 3u);
    EXPECT_EQ(c.state(3), peer_state::lost);
    EXPECT_EQ(c.state(1), peer_state::left);
    EXPECT_EQ(c.state(2), peer_state::left);
    EXPECT_EQ(c.next_deadline(), now + std::chrono::milliseconds(500));
    c.link_message(1, {&bye, 1});  // its goodbye came after all: it left
    c.tick(now + std::chrono::milliseconds(500));
    EXPECT_TRUE(c.said_goodbye(1));
    EXPECT_EQ(c.state(1), peer_state::left);
    ASSERT_EQ(lost.size(), 4u);  // 2's never came
    EXPECT_EQ(lost[3], (std::pair<uint32_t, std::string>{2, "closed (no goodbye followed)"}));
    EXPECT_FALSE(c.waiting_for_goodbyes());
}
