// Direct modex without I/O (plugin/server/dmodex.h): several nodes' engines over an in-memory
// network that delivers the node messages in random order (seeded), with commits, ranks that
// leave, lost nodes and timeouts.
#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <random>
#include <set>

#include "../../plugin/server/dmodex.h"
#include "client_util.h"

using namespace pmixcpp;
using namespace pmixcpp::server;
using pmixcpp::testing::make_infos;
using pmixcpp::testing::set_info;

namespace {

constexpr uint64_t kClient = 100;  // the connection of each node's client (one per node)

struct message {
    uint32_t from = 0, to = 0;
    bool reply = false;
    std::vector<uint8_t> body;
};

struct outcome {
    get_waiter w;
    pmix_status_t status = PMIX_SUCCESS;
    std::string message;
};

// One node: its engine and its store (rank -> key -> value; its own ranks' commits and what it
// stored from other nodes).
struct cluster;

// A node's store as direct modex sees it (rank_store.h), over the node's map.
struct map_store final : rank_data_store {
    cluster *c = nullptr;
    uint32_t self = 0;
    bool has(uint32_t requester, uint32_t rank, const std::string &key) const override;
    Result<std::vector<uint8_t>> encode(const std::vector<uint32_t> &ranks) const override;
    Status store(uint32_t from, const std::vector<wire::rank_data_entry> &entries, std::vector<uint32_t> *ranks) override;
};

struct node {
    map_store data;
    std::unique_ptr<dmodex_engine> engine;
    std::map<uint32_t, std::map<std::string, int>> store;
    std::map<uint32_t, std::string> gone;  // local rank -> "died" / "finalized"
    std::vector<outcome> done;             // completed Gets of the local client
    size_t requests = 0;                   // requests sent
};

struct cluster {
    uint32_t nnodes, per_node;
    std::vector<node> nodes;
    std::deque<message> net;
    server_clock::time_point now = server_clock::now();

    // batched: requests wait for the end of the round (round()), as the server's post() makes them.
    bool batched = false;
    std::vector<std::function<void()>> deferred;
    size_t replies = 0;  // reply messages sent

    cluster(uint32_t n, uint32_t ranks_per_node, bool whole_node = false, uint32_t timeout_sec = 300,
            bool batch = false)
        : nnodes(n), per_node(ranks_per_node), nodes(n) {
        batched = batch;
        std::vector<std::string> names;
        std::vector<uint32_t> node_of;
        for (uint32_t i = 0; i < n; ++i) names.push_back("n" + std::to_string(i));
        for (uint32_t r = 0; r < n * per_node; ++r) node_of.push_back(r / per_node);
        for (uint32_t i = 0; i < n; ++i) {
            dmodex_config c;
            c.nspace = "test.0";
            c.self_node = i;
            c.node_names = names;
            c.node_of = node_of;
            for (uint32_t k = 0; k < per_node; ++k) c.local_ranks.push_back(i * per_node + k);
            c.timeout_sec = timeout_sec;
            c.whole_node = whole_node;
            nodes[i].data.c = this;
            nodes[i].data.self = i;
            nodes[i].engine = std::make_unique<dmodex_engine>(std::move(c), ops_of(i), nodes[i].data);
        }
    }

    dmodex_ops ops_of(uint32_t self) {
        dmodex_ops o;
        o.send_request = [this, self](uint32_t to, std::vector<uint8_t> body) {
            ++nodes[self].requests;
            net.push_back({self, to, false, std::move(body)});
        };
        o.send_reply = [this, self](uint32_t to, std::vector<uint8_t> body) {
            ++replies;
            net.push_back({self, to, true, std::move(body)});
        };
        if (batched) o.defer = [this](std::function<void()> fn) { deferred.push_back(std::move(fn)); };
        o.answer = [this, self](const get_waiter &w) {
            // The engine answers only when the store holds what was asked.
            EXPECT_TRUE(has(self, w.target, w.key)) << "rank " << w.target << " key " << w.key;
            nodes[self].done.push_back({w, PMIX_SUCCESS, {}});
        };
        o.fail = [this, self](const get_waiter &w, pmix_status_t st, const std::string &m) {
            nodes[self].done.push_back({w, st, m});
        };
        o.gone = [this, self](uint32_t rank) {
            auto it = nodes[self].gone.find(rank);
            return it == nodes[self].gone.end() ? std::string() : it->second;
        };
        return o;
    }

    bool has(uint32_t at, uint32_t rank, const std::string &key) {
        auto it = nodes[at].store.find(rank);
        if (it == nodes[at].store.end()) return false;
        return key.empty() ? !it->second.empty() : it->second.count(key) > 0;
    }

    uint32_t node_of(uint32_t rank) const { return rank / per_node; }

    void commit(uint32_t rank, const std::string &key, int value) {
        nodes[node_of(rank)].store[rank][key] = value;
        nodes[node_of(rank)].engine->rank_committed(rank);
    }

    // A Get of the client of node `at` for a remote rank that the store does not hold (what the
    // server checks before it hands the Get to the engine).
    void get(uint32_t at, uint32_t target, const std::string &key, uint32_t request_id) {
        if (has(at, target, key)) {
            nodes[at].done.push_back({get_waiter{kClient, request_id, at * per_node, target, key, {}}, PMIX_SUCCESS, {}});
            return;
        }
        get_waiter w;
        w.conn = kClient;
        w.request_id = request_id;
        w.requester = at * per_node;
        w.target = target;
        w.key = key;
        nodes[at].engine->get(std::move(w), now);
    }

    void deliver(message m) {
        auto &e = *nodes[m.to].engine;
        if (m.reply)
            e.on_reply(m.from, m.body, now);
        else
            e.on_request(m.from, m.body, now);
    }

    // The end of a round of the loop: what was deferred runs.
    void round() {
        while (!deferred.empty()) {
            auto fns = std::move(deferred);
            deferred.clear();
            for (auto &fn : fns) fn();
        }
    }

    // Deliver the queued messages in order until none is left.
    void run() {
        round();
        while (!net.empty()) {
            message m = std::move(net.front());
            net.pop_front();
            deliver(std::move(m));
        }
    }

    // Deliver one queued message picked at random; false when none is queued.
    bool deliver_random(std::mt19937 &rng) {
        if (net.empty()) return false;
        size_t i = std::uniform_int_distribution<size_t>(0, net.size() - 1)(rng);
        message m = std::move(net[i]);
        net.erase(net.begin() + static_cast<std::ptrdiff_t>(i));
        deliver(std::move(m));
        round();
        return true;
    }
};

bool map_store::has(uint32_t, uint32_t rank, const std::string &key) const { return c->has(self, rank, key); }

Result<std::vector<uint8_t>> map_store::encode(const std::vector<uint32_t> &ranks) const {
    std::vector<wire::rank_data_entry> entries;
    for (uint32_t r : ranks) {
        auto it = c->nodes[self].store.find(r);
        if (it == c->nodes[self].store.end() || it->second.empty()) continue;
        wire::rank_data_entry e;
        e.rank = r;
        e.infos = make_infos(it->second.size());
        size_t i = 0;
        for (const auto &[k, v] : it->second) set_info(e.infos[i++], k.c_str(), &v, PMIX_INT);
        entries.push_back(std::move(e));
    }
    wire::Writer w;
    PMIXCPP_RETURN_IF_ERROR(wire::encode_rank_data(w, entries));
    return w.take();
}

Status map_store::store(uint32_t from, const std::vector<wire::rank_data_entry> &entries, std::vector<uint32_t> *ranks) {
    for (const auto &e : entries)
        if (e.rank / c->per_node != from) return Status(PMIX_ERR_BAD_PARAM, "not hosted there");
    for (const auto &e : entries) {
        for (size_t i = 0; i < e.infos.size(); ++i)
            c->nodes[self].store[e.rank][e.infos[i].key] = e.infos[i].value.data.integer;
        ranks->push_back(e.rank);
    }
    return Status::success();
}

const outcome *find_done(const node &n, uint32_t request_id) {
    for (const auto &o : n.done)
        if (o.w.request_id == request_id) return &o;
    return nullptr;
}

}  // namespace

// Every node's client asks for keys of every remote rank: some committed before the request,
// some committed later (the serving node answers on commit), some requests overtaken by others
// for the same rank. Delivered in random orders: every Get is answered once, with its data.
TEST(Dmodex, RandomDeliveryOrdersAnswerEveryGet) {
    for (uint32_t seed : {1u, 2u, 3u, 7u, 42u, 1234u, 99991u, 31337u}) {
        SCOPED_TRACE("seed " + std::to_string(seed));
        std::mt19937 rng(seed);
        cluster c(4, 2);
        const uint32_t nranks = 8;
        for (uint32_t r = 0; r < nranks; ++r) c.commit(r, "early" + std::to_string(r), int(r));
        // The late commits happen at random moments among the deliveries.
        std::vector<uint32_t> late;
        for (uint32_t r = 0; r < nranks; ++r) late.push_back(r);
        std::shuffle(late.begin(), late.end(), rng);
        std::map<uint32_t, std::set<uint32_t>> expect;  // node -> request ids
        uint32_t id = 1;
        std::vector<std::tuple<uint32_t, uint32_t, std::string>> gets;
        for (uint32_t at = 0; at < 4; ++at)
            for (uint32_t t = 0; t < nranks; ++t) {
                if (c.node_of(t) == at) continue;
                gets.emplace_back(at, t, "early" + std::to_string(t));
                gets.emplace_back(at, t, "late" + std::to_string(t));
                gets.emplace_back(at, t, std::string());
            }
        std::shuffle(gets.begin(), gets.end(), rng);
        size_t next_get = 0, next_late = 0;
        for (int steps = 0; steps < 100000; ++steps) {
            int what = std::uniform_int_distribution<int>(0, 3)(rng);
            if (what == 0 && next_get < gets.size()) {
                auto [at, t, key] = gets[next_get++];
                expect[at].insert(id);
                c.get(at, t, key, id++);
            } else if (what == 1 && next_late < late.size()) {
                uint32_t r = late[next_late++];
                c.commit(r, "late" + std::to_string(r), int(100 + r));
            } else if (!c.deliver_random(rng) && next_get == gets.size() && next_late == late.size()) {
                break;
            }
        }
        EXPECT_TRUE(c.net.empty());
        for (uint32_t at = 0; at < 4; ++at) {
            const node &n = c.nodes[at];
            std::set<uint32_t> answered;
            for (const auto &o : n.done) {
                EXPECT_EQ(o.status, PMIX_SUCCESS) << o.message;
                EXPECT_TRUE(answered.insert(o.w.request_id).second) << "answered twice: " << o.w.request_id;
            }
            EXPECT_EQ(answered, expect[at]);
            EXPECT_EQ(n.engine->size(), 0u);
            EXPECT_EQ(n.engine->requests_in_flight(), 0u);
            for (uint32_t t = 0; t < nranks; ++t) {
                if (c.node_of(t) == at) continue;
                EXPECT_EQ(n.store.at(t).at("late" + std::to_string(t)), int(100 + t));
            }
            // Coalesced: at most one request per target and key round, not one per Get (each
            // remote rank is asked at most twice here: before and after its late commit).
            EXPECT_LE(n.requests, 2u * 6u) << "node " << at;
        }
        // The serving sides hold nothing either.
        for (const auto &n : c.nodes) EXPECT_EQ(n.engine->next_deadline(), std::nullopt);
    }
}

// Concurrent Gets of one rank share one request; a reply without the key asks again once.
TEST(Dmodex, CoalescesAndAsksAgainForMissingKeys) {
    cluster c(2, 1);
    c.commit(1, "a", 1);
    c.get(0, 1, "a", 1);
    c.get(0, 1, "b", 2);
    c.get(0, 1, "a", 3);
    EXPECT_EQ(c.nodes[0].requests, 1u);
    EXPECT_EQ(c.net.size(), 1u);
    c.deliver(c.net.front());  // node 1 answers at once (it has "a"; the request asked for "a")
    c.net.pop_front();
    ASSERT_EQ(c.net.size(), 1u);
    c.deliver(c.net.front());
    c.net.pop_front();
    EXPECT_NE(find_done(c.nodes[0], 1), nullptr);
    EXPECT_NE(find_done(c.nodes[0], 3), nullptr);
    EXPECT_EQ(find_done(c.nodes[0], 2), nullptr);
    EXPECT_EQ(c.nodes[0].requests, 2u);  // asked again for "b"
    ASSERT_EQ(c.net.size(), 1u);
    c.deliver(c.net.front());  // node 1 waits for "b"
    c.net.pop_front();
    EXPECT_TRUE(c.net.empty());
    EXPECT_EQ(c.nodes[1].engine->size(), 1u);
    c.commit(1, "b", 2);
    ASSERT_EQ(c.net.size(), 1u);
    c.deliver(c.net.front());
    c.net.pop_front();
    const outcome *o = find_done(c.nodes[0], 2);
    ASSERT_NE(o, nullptr);
    EXPECT_EQ(o->status, PMIX_SUCCESS);
    EXPECT_EQ(c.nodes[0].store[1]["b"], 2);
}

// A rank that finalizes or dies without the key fails the Gets waiting for it; a request for a
// rank the node does not serve fails at once.
TEST(Dmodex, RanksThatLeaveFailTheirGets) {
    cluster c(2, 2);
    c.get(0, 2, "x", 1);
    c.get(0, 3, "y", 2);
    while (!c.net.empty()) {
        c.deliver(c.net.front());
        c.net.pop_front();
    }
    EXPECT_EQ(c.nodes[1].engine->size(), 2u);
    c.nodes[1].gone[2] = "died";
    c.nodes[1].engine->rank_left(2, true);
    c.nodes[1].gone[3] = "finalized";
    c.nodes[1].engine->rank_left(3, false);
    while (!c.net.empty()) {
        c.deliver(c.net.front());
        c.net.pop_front();
    }
    const outcome *a = find_done(c.nodes[0], 1), *b = find_done(c.nodes[0], 2);
    ASSERT_TRUE(a && b);
    EXPECT_EQ(a->status, PMIX_ERR_NOT_FOUND);
    EXPECT_EQ(a->message, "rank 2 died without committing x");
    EXPECT_EQ(b->status, PMIX_ERR_NOT_FOUND);
    EXPECT_EQ(b->message, "rank 3 finalized without committing y");
    // A rank known gone is refused at once.
    c.get(0, 2, "z", 3);
    c.deliver(c.net.front());
    c.net.pop_front();
    c.deliver(c.net.front());
    c.net.pop_front();
    ASSERT_NE(find_done(c.nodes[0], 3), nullptr);
    EXPECT_EQ(find_done(c.nodes[0], 3)->message, "rank 2 died without committing z");
    // Not served there (a request sent to the wrong node).
    wire::Writer w;
    ASSERT_TRUE(wire::encode(w, wire::dmodex_request{77, 0, "k"}).ok());
    c.nodes[1].engine->on_request(0, w.data(), c.now);
    ASSERT_EQ(c.net.size(), 1u);
    wire::dmodex_reply r;
    ASSERT_TRUE(wire::decode(c.net.front().body, 4, &r).ok());
    EXPECT_EQ(r.id, 77u);
    EXPECT_EQ(r.status, PMIX_ERR_NOT_FOUND);
    EXPECT_EQ(r.message, "rank 0 is not served by node n1");
}

// Deadlines: the requester's Gets and the server's waiting requests fail with PMIX_ERR_TIMEOUT;
// a Get's own deadline is kept when it is earlier; a request older than the timeout is sent again.
TEST(Dmodex, TimeoutsOnBothSides) {
    cluster c(2, 1, false, 10);
    get_waiter w;
    w.conn = kClient;
    w.request_id = 1;
    w.target = 1;
    w.key = "k";
    w.deadline = c.now + std::chrono::seconds(3);
    c.nodes[0].engine->get(w, c.now);
    EXPECT_EQ(c.nodes[0].engine->next_deadline(), c.now + std::chrono::seconds(3));
    c.get(0, 1, "k", 2);
    EXPECT_EQ(c.nodes[0].requests, 1u);
    c.deliver(c.net.front());
    c.net.pop_front();
    EXPECT_EQ(c.nodes[1].engine->next_deadline(), c.now + std::chrono::seconds(10));
    c.nodes[0].engine->expire(c.now + std::chrono::seconds(3));
    ASSERT_NE(find_done(c.nodes[0], 1), nullptr);
    EXPECT_EQ(find_done(c.nodes[0], 1)->status, PMIX_ERR_TIMEOUT);
    EXPECT_EQ(find_done(c.nodes[0], 2), nullptr);
    c.nodes[1].engine->expire(c.now + std::chrono::seconds(10));
    ASSERT_EQ(c.net.size(), 1u);
    c.deliver(c.net.front());
    c.net.pop_front();
    ASSERT_NE(find_done(c.nodes[0], 2), nullptr);
    EXPECT_EQ(find_done(c.nodes[0], 2)->status, PMIX_ERR_TIMEOUT);
    EXPECT_EQ(find_done(c.nodes[0], 2)->message, "timed out waiting for rank 1 to commit k");
    // The request came back: none in flight; a new Get asks again.
    c.get(0, 1, "k", 3);
    EXPECT_EQ(c.nodes[0].requests, 2u);
    // A request in flight longer than the timeout is sent again for a new Get.
    c.now += std::chrono::seconds(11);
    c.get(0, 1, "k", 4);
    EXPECT_EQ(c.nodes[0].requests, 3u);
}

// A lost node fails the Gets of its ranks; its request is forgotten (a later Get asks again).
// A client connection that closes takes its Gets with it.
TEST(Dmodex, LostNodesAndClosedConnections) {
    cluster c(3, 1);
    c.get(0, 1, "k", 1);
    c.get(0, 2, "k", 2);
    EXPECT_EQ(c.nodes[0].engine->requests_in_flight(), 2u);
    EXPECT_EQ(c.nodes[0].engine->waiting_of(kClient), 2u);
    EXPECT_EQ(c.nodes[0].engine->node_lost(1, "node n1 is lost: test"), 1u);
    ASSERT_NE(find_done(c.nodes[0], 1), nullptr);
    EXPECT_EQ(find_done(c.nodes[0], 1)->status, PMIX_ERR_NODE_DOWN);
    EXPECT_EQ(find_done(c.nodes[0], 1)->message, "node n1 is lost: test");
    EXPECT_EQ(c.nodes[0].engine->requests_in_flight(), 1u);
    c.nodes[0].engine->drop_connection(kClient);
    EXPECT_EQ(c.nodes[0].engine->waiting_of(kClient), 0u);
    EXPECT_EQ(c.nodes[0].engine->size(), 0u);
}

// Replies are checked: about a rank the sender does not host, or carrying another node's data,
// they are dropped and store nothing. With whole_node, one answer carries the node's ranks.
TEST(Dmodex, RepliesAreCheckedAndWholeNodeAnswers) {
    cluster c(3, 2, true);
    c.commit(2, "k", 2);
    c.commit(3, "k", 3);
    c.get(0, 2, "k", 1);
    message req = c.net.front();
    c.net.pop_front();
    c.deliver(req);
    message rep = c.net.front();
    c.net.pop_front();
    // The same reply as if from node 2: dropped.
    rep.from = 2;
    c.deliver(rep);
    EXPECT_EQ(find_done(c.nodes[0], 1), nullptr);
    EXPECT_TRUE(c.nodes[0].store.empty());
    // Garbage: dropped.
    c.nodes[0].engine->on_reply(1, std::vector<uint8_t>{1, 2, 3}, c.now);
    EXPECT_EQ(find_done(c.nodes[0], 1), nullptr);
    rep.from = 1;
    c.deliver(rep);
    ASSERT_NE(find_done(c.nodes[0], 1), nullptr);
    EXPECT_EQ(c.nodes[0].store[2]["k"], 2);
    EXPECT_EQ(c.nodes[0].store[3]["k"], 3);  // the node's other rank came along
}

// With whole_node, Gets of several ranks of one node share one request; the ranks its answer did
// not satisfy (a key not committed yet) ask for themselves, each at once.
TEST(Dmodex, WholeNodeGetsShareOneRequest) {
    cluster c(2, 4, true);
    for (uint32_t r = 4; r < 8; ++r)
        if (r != 7) c.commit(r, "k", static_cast<int>(r));
    for (uint32_t r = 4; r < 8; ++r) c.get(0, r, "k", r);
    EXPECT_EQ(c.nodes[0].requests, 1u);
    EXPECT_EQ(c.nodes[0].engine->requests_in_flight(), 1u);
    c.run();
    for (uint32_t r = 4; r < 7; ++r) {
        const outcome *o = find_done(c.nodes[0], r);
        ASSERT_NE(o, nullptr) << r;
        EXPECT_EQ(o->status, PMIX_SUCCESS);
    }
    EXPECT_EQ(find_done(c.nodes[0], 7), nullptr);  // rank 7 has not committed "k"
    EXPECT_EQ(c.nodes[0].requests, 2u);            // one of its own, waiting on node 1
    c.commit(7, "k", 7);
    c.run();
    ASSERT_NE(find_done(c.nodes[0], 7), nullptr);
    EXPECT_EQ(find_done(c.nodes[0], 7)->status, PMIX_SUCCESS);
    EXPECT_EQ(c.nodes[0].store[7]["k"], 7);
    EXPECT_EQ(c.nodes[0].engine->size(), 0u);
}

// Batches: Gets of several ranks of one node in one round travel in one request; the owner
// answers those ready together in one reply and each of the others when it commits; the
// requests count as outstanding (the transport keeps the connection) until all are answered.
TEST(Dmodex, GetsOfOneNodeInARoundShareOneRequest) {
    cluster c(3, 4, false, 300, true);
    for (uint32_t r = 4; r < 8; ++r)
        if (r != 7) c.commit(r, "k", static_cast<int>(r));
    c.commit(8, "k", 8);
    for (uint32_t r = 4; r < 8; ++r) c.get(0, r, "k", r);
    c.get(0, 8, "k", 8);
    c.get(0, 5, "k", 100);  // coalesced with the batch's request for rank 5
    EXPECT_TRUE(c.net.empty());  // nothing before the round ends
    EXPECT_TRUE(c.nodes[0].engine->outstanding_to(1));
    c.round();
    ASSERT_EQ(c.net.size(), 2u);  // one request to node 1 (4 ranks), one to node 2
    EXPECT_EQ(c.nodes[0].requests, 2u);
    EXPECT_EQ(c.nodes[0].engine->request_messages(), 2u);
    EXPECT_EQ(c.nodes[0].engine->requested_ranks(), 5u);
    wire::dmodex_request m;
    ASSERT_TRUE(wire::decode(c.net.front().body, &m).ok());
    EXPECT_EQ(m.target, 4u);
    ASSERT_EQ(m.more.size(), 3u);
    EXPECT_EQ(m.more[2].target, 7u);
    c.run();
    EXPECT_EQ(c.replies, 2u);  // node 1: ranks 4-6 together; node 2: rank 8
    for (uint32_t id : {4u, 5u, 6u, 8u, 100u}) {
        const outcome *o = find_done(c.nodes[0], id);
        ASSERT_NE(o, nullptr) << id;
        EXPECT_EQ(o->status, PMIX_SUCCESS);
    }
    EXPECT_EQ(find_done(c.nodes[0], 7), nullptr);  // waits on node 1 for the commit
    EXPECT_TRUE(c.nodes[0].engine->outstanding_to(1));
    EXPECT_FALSE(c.nodes[0].engine->outstanding_to(2));
    c.commit(7, "k", 7);
    c.run();
    EXPECT_EQ(c.replies, 3u);  // its own reply, with the batch's id
    ASSERT_NE(find_done(c.nodes[0], 7), nullptr);
    EXPECT_EQ(c.nodes[0].store[7]["k"], 7);
    EXPECT_EQ(c.nodes[0].requests, 2u);  // nobody asked again
    EXPECT_FALSE(c.nodes[0].engine->outstanding_to(1));
    EXPECT_EQ(c.nodes[0].engine->size(), 0u);
    EXPECT_EQ(c.nodes[1].engine->size(), 0u);
}

// A batch's ranks that fail (one finalized without the key, one not on that node: a peer's
// bad request) fail alone; the others are answered.
TEST(Dmodex, ABatchFailsRankByRank) {
    cluster c(2, 4, false, 300, true);
    c.commit(4, "k", 4);
    c.nodes[1].gone[5] = "finalized";
    c.get(0, 4, "k", 1);
    c.get(0, 5, "k", 2);
    c.get(0, 6, "k", 3);
    c.run();
    EXPECT_EQ(c.nodes[0].requests, 1u);
    ASSERT_NE(find_done(c.nodes[0], 1), nullptr);
    EXPECT_EQ(find_done(c.nodes[0], 1)->status, PMIX_SUCCESS);
    ASSERT_NE(find_done(c.nodes[0], 2), nullptr);
    EXPECT_EQ(find_done(c.nodes[0], 2)->status, PMIX_ERR_NOT_FOUND);
    EXPECT_EQ(find_done(c.nodes[0], 3), nullptr);
    c.nodes[1].engine->rank_left(6, true);
    c.run();
    ASSERT_NE(find_done(c.nodes[0], 3), nullptr);
    EXPECT_EQ(find_done(c.nodes[0], 3)->status, PMIX_ERR_NOT_FOUND);
    EXPECT_FALSE(c.nodes[0].engine->outstanding_to(1));
    // A request naming a rank node 1 does not host, among its own: that one fails, the
    // other is answered.
    wire::Writer w;
    wire::dmodex_request bad{9, 4, "k", {{0, "k"}}};
    ASSERT_TRUE(wire::encode(w, bad).ok());
    const size_t before = c.replies;
    c.nodes[1].engine->on_request(0, w.take(), c.now);
    EXPECT_EQ(c.replies, before + 2);
    c.net.clear();
}

// Random delivery orders with batches: the same guarantees as without (every Get answered once).
TEST(Dmodex, RandomOrdersWithBatches) {
    for (uint32_t seed : {5u, 17u, 4242u}) {
        SCOPED_TRACE("seed " + std::to_string(seed));
        std::mt19937 rng(seed);
        cluster c(3, 3, false, 300, true);
        const uint32_t nranks = 9;
        std::vector<uint32_t> late;
        for (uint32_t r = 0; r < nranks; ++r) late.push_back(r);
        std::shuffle(late.begin(), late.end(), rng);
        std::map<uint32_t, std::set<uint32_t>> expect;
        uint32_t id = 1;
        std::vector<std::pair<uint32_t, uint32_t>> gets;
        for (uint32_t at = 0; at < 3; ++at)
            for (uint32_t t = 0; t < nranks; ++t)
                if (c.node_of(t) != at) gets.emplace_back(at, t);
        std::shuffle(gets.begin(), gets.end(), rng);
        size_t next_get = 0, next_late = 0;
        for (int steps = 0; steps < 100000; ++steps) {
            int what = std::uniform_int_distribution<int>(0, 3)(rng);
            if (what == 0 && next_get < gets.size()) {
                // several Gets in one round
                for (int k = 0; k < 3 && next_get < gets.size(); ++k) {
                    auto [at, t] = gets[next_get++];
                    expect[at].insert(id);
                    c.get(at, t, "late" + std::to_string(t), id++);
                }
                c.round();
            } else if (what == 1 && next_late < late.size()) {
                uint32_t r = late[next_late++];
                c.commit(r, "late" + std::to_string(r), int(100 + r));
            } else if (!c.deliver_random(rng) && next_get == gets.size() && next_late == late.size()) {
                break;
            }
        }
        EXPECT_TRUE(c.net.empty());
        for (uint32_t at = 0; at < 3; ++at) {
            std::set<uint32_t> answered;
            for (const auto &o : c.nodes[at].done) {
                EXPECT_EQ(o.status, PMIX_SUCCESS) << o.message;
                EXPECT_TRUE(answered.insert(o.w.request_id).second);
            }
            EXPECT_EQ(answered, expect[at]);
            EXPECT_EQ(c.nodes[at].engine->requests_in_flight(), 0u);
            for (uint32_t n = 0; n < 3; ++n) EXPECT_FALSE(c.nodes[at].engine->outstanding_to(n));
        }
    }
}

// The request's codec: a batch round-trips; a request of one rank is the old format; counts of
// 0 or beyond kMaxDmodexBatch - 1 more ranks, and a cut batch, are refused.
TEST(Dmodex, BatchCodec) {
    wire::dmodex_request m{7, 3, "a", {{4, "b"}, {5, ""}}};
    wire::Writer w;
    ASSERT_TRUE(wire::encode(w, m).ok());
    auto bytes = w.take();
    wire::dmodex_request d;
    ASSERT_TRUE(wire::decode(bytes, &d).ok());
    EXPECT_EQ(d.id, 7u);
    EXPECT_EQ(d.target, 3u);
    EXPECT_EQ(d.key, "a");
    EXPECT_EQ(d.more, m.more);
    wire::Writer one;
    ASSERT_TRUE(wire::encode(one, wire::dmodex_request{7, 3, "a"}).ok());
    EXPECT_EQ(one.size(), 4u + 4u + 4u + 1u);  // id, target, key (length + bytes): as before batches
    auto cut = bytes;
    cut.pop_back();
    EXPECT_FALSE(wire::decode(cut, &d).ok());
    auto zero = one.take();
    for (int i = 0; i < 4; ++i) zero.push_back(0);  // a count of 0
    EXPECT_FALSE(wire::decode(zero, &d).ok());
    wire::Writer big;
    wire::dmodex_request huge{1, 0, "", std::vector<wire::dmodex_item>(wire::kMaxDmodexBatch, {1, ""})};
    EXPECT_FALSE(wire::encode(big, huge).ok());
    huge.more.resize(wire::kMaxDmodexBatch - 1);
    wire::Writer ok;
    ASSERT_TRUE(wire::encode(ok, huge).ok());
    auto okb = ok.take();
    ASSERT_TRUE(wire::decode(okb, &d).ok());
    // The count (after id, target and the empty key's length) claims more than the limit.
    okb[12] = 0xff, okb[13] = 0xff, okb[14] = 0xff, okb[15] = 0;
    EXPECT_FALSE(wire::decode(okb, &d).ok());
}
