// The protocol engine (plugin/server/engine.h) without sockets: requests as the shell hands them
// (connection, rank, request id, payload), the answers caught by a reply sink made of vectors;
// and the re-entrancy rule of plugin/server/README.md (a completion is posted to the loop, never
// run inside the call that caused it).
#include <gtest/gtest.h>

#include <deque>
#include <map>

#include "../../plugin/server/engine.h"
#include "client_util.h"
#include "sink_util.h"
#include "wire/messages.h"

using namespace pmixcpp;
using namespace pmixcpp::server;
using pmixcpp::testing::make_infos;
using pmixcpp::testing::make_proc;
using pmixcpp::testing::set_info;
using reply_record = pmixcpp::testing::sunk_reply;
using vector_sink = pmixcpp::testing::recording_sink;

namespace {

const char *kNs = "engine.0";

template <typename M>
std::vector<uint8_t> payload_of(const M &m) {
    wire::Writer w;
    EXPECT_TRUE(wire::encode(w, m).ok());
    return w.take();
}

// The value of `key` in a Get reply's body (an info array), or -1.
int int_value_in(const std::vector<uint8_t> &body, const char *key) {
    InfoArray data;
    if (!wire::decode_info_array_exact(body, &data).ok()) return -1;
    for (size_t i = 0; i < data.size(); ++i)
        if (strcmp(data[i].key, key) == 0 && data[i].value.type == PMIX_INT) return data[i].value.data.integer;
    return -1;
}

// Four ranks, two a node; this is node 0 (ranks 0 and 1).
struct engine_bed : ::testing::Test {
    std::vector<uint32_t> node_of{0, 0, 1, 1};
    kv_store kvs;
    kvs_rank_store store{kvs, node_of};
    no_remote_fences no_remote;
    remote_fences *remote = &no_remote;
    std::unique_ptr<fence_tracker> fences;
    vector_sink sink;
    std::unique_ptr<protocol_engine> engine;

    // What the routes were asked.
    Status remote_state{PMIX_ERR_NOT_SUPPORTED, "no node transport"};
    std::vector<get_waiter> remote_gets, topology_gets;
    std::vector<uint32_t> committed;
    std::map<uint32_t, std::string> gone;
    size_t foreign = 0;
    size_t fences_in_flight = 0;

    void make(bool multinode = false) {
        fences = std::make_unique<fence_tracker>(kNs, 4, std::vector<uint32_t>{0, 1}, remote);
        engine_config c;
        c.nspace = kNs;
        c.ntasks = 4;
        c.node_names = {"n0", "n1"};
        c.node_of = node_of;
        c.local_ranks = {0, 1};
        c.max_procs = 64;
        c.multinode = multinode;
        engine_routes r;
        r.foreign_get = [this](uint64_t, uint32_t, const pmix_proc_t &, const std::string &, const InfoArray &) {
            ++foreign;
        };
        r.foreign_fence = [this](uint64_t, uint32_t, uint32_t, std::span<const uint8_t>) { ++foreign; };
        r.topology = [this](const get_waiter &w) { topology_gets.push_back(w); };
        r.remote_state = [this] { return remote_state; };
        r.node_lost = [](uint32_t) { return false; };
        r.remote_get = [this](get_waiter w) { remote_gets.push_back(std::move(w)); };
        r.remote_waiting = [](uint64_t) { return size_t(0); };
        r.gone = [this](uint32_t rank) { return gone.count(rank) ? gone[rank] : std::string(); };
        r.committed = [this](uint32_t rank) { committed.push_back(rank); };
        engine = std::make_unique<protocol_engine>(std::move(c), std::move(r), kvs, store, *fences, sink);
    }

    client_ref client(uint32_t rank) { return {100 + rank, rank, &fences_in_flight}; }

    void commit(uint32_t rank, uint32_t id, const char *key, int value) {
        wire::commit_request m;
        m.infos = make_infos(1);
        set_info(m.infos[0], key, &value, PMIX_INT);
        m.scopes = {PMIX_GLOBAL};
        engine->commit(client(rank), id, payload_of(m));
    }
    void get(uint32_t requester, uint32_t id, uint32_t target, const char *key, bool immediate = false) {
        wire::get_request m;
        m.proc = make_proc(kNs, target);
        m.key = key;
        if (immediate) {
            m.infos = make_infos(1);
            bool yes = true;
            set_info(m.infos[0], PMIX_IMMEDIATE, &yes, PMIX_BOOL);
        }
        engine->get(client(requester), id, payload_of(m));
    }
    void fence(uint32_t rank, uint32_t id, const std::vector<uint32_t> &ranks) {
        wire::fence_request m;
        for (uint32_t r : ranks) m.procs.push_back(make_proc(kNs, r));
        engine->fence(client(rank), id, payload_of(m));
    }
};

TEST_F(engine_bed, GetOfALocalKeyIsAnsweredWithItsValue) {
    make();
    commit(1, 7, "app.key", 42);
    ASSERT_EQ(sink.replies.size(), 1u);
    EXPECT_EQ(sink.replies[0].conn, 101u);
    EXPECT_EQ(sink.replies[0].id, 7u);
    EXPECT_EQ(sink.replies[0].status, PMIX_SUCCESS);
    EXPECT_EQ(committed, std::vector<uint32_t>{1});

    get(0, 8, 1, "app.key");
    ASSERT_EQ(sink.replies.size(), 2u);
    const auto &r = sink.replies[1];
    EXPECT_EQ(r.conn, 100u);
    EXPECT_EQ(r.id, 8u);
    EXPECT_EQ(r.status, PMIX_SUCCESS) << r.message;
    EXPECT_EQ(int_value_in(r.body, "app.key"), 42);
    EXPECT_TRUE(sink.refused.empty());
}

TEST_F(engine_bed, GetOfALocalRankWaitsForItsCommit) {
    make();
    get(0, 3, 1, "late.key");
    EXPECT_TRUE(sink.replies.empty());
    EXPECT_EQ(engine->waiting(), 1u);
    commit(1, 4, "late.key", 5);
    ASSERT_EQ(sink.replies.size(), 2u);  // the commit's reply, then the Get's
    EXPECT_EQ(sink.replies[0].id, 4u);
    EXPECT_EQ(sink.replies[1].conn, 100u);
    EXPECT_EQ(sink.replies[1].id, 3u);
    EXPECT_EQ(sink.replies[1].status, PMIX_SUCCESS);
    EXPECT_EQ(int_value_in(sink.replies[1].body, "late.key"), 5);
    EXPECT_EQ(engine->waiting(), 0u);
}

TEST_F(engine_bed, GetsThatCannotBeAnsweredFailWithTheReason) {
    make();
    get(0, 1, 9, "k");  // no such rank
    get(0, 2, 1, "k", /*immediate=*/true);
    gone[1] = "finalized";
    get(0, 3, 1, "k");
    get(0, 4, 2, "k");  // another node, no node transport
    ASSERT_EQ(sink.replies.size(), 4u);
    EXPECT_EQ(sink.replies[0].status, PMIX_ERR_NOT_FOUND);
    EXPECT_NE(sink.replies[0].message.find("is not in engine.0"), std::string::npos) << sink.replies[0].message;
    EXPECT_EQ(sink.replies[1].status, PMIX_ERR_NOT_FOUND);
    EXPECT_EQ(sink.replies[2].status, PMIX_ERR_NOT_FOUND);
    EXPECT_NE(sink.replies[2].message.find("finalized without committing k"), std::string::npos);
    EXPECT_EQ(sink.replies[3].status, PMIX_ERR_NOT_SUPPORTED);
    EXPECT_TRUE(remote_gets.empty());
    EXPECT_EQ(engine->waiting(), 0u);
}

TEST_F(engine_bed, GetOfARemoteRankGoesToDirectModexAndTheTopologyToItsThread) {
    make();
    remote_state = Status::success();
    get(0, 5, 3, "far.key");
    ASSERT_EQ(remote_gets.size(), 1u);
    EXPECT_EQ(remote_gets[0].target, 3u);
    EXPECT_EQ(remote_gets[0].key, "far.key");
    EXPECT_EQ(remote_gets[0].requester, 0u);
    EXPECT_TRUE(sink.replies.empty());

    remote_state = Status(PMIX_ERR_UNREACH, "the address table never came");
    get(0, 6, 3, "far.key");
    ASSERT_EQ(sink.replies.size(), 1u);
    EXPECT_EQ(sink.replies[0].status, PMIX_ERR_UNREACH);
    EXPECT_NE(sink.replies[0].message.find("the address table never came"), std::string::npos);

    get(0, 7, PMIX_RANK_WILDCARD, PMIX_LOCAL_TOPO);
    EXPECT_EQ(topology_gets.size(), 1u);
}

TEST_F(engine_bed, MalformedRequestsAreRefusedWithoutAReply) {
    make();
    const std::vector<uint8_t> junk{0xff, 0x01, 0x02};
    engine->get(client(0), 1, junk);
    engine->commit(client(0), 2, junk);
    engine->fence(client(0), 3, junk);
    wire::get_request m;  // a Get cut short
    m.proc = make_proc(kNs, 1);
    m.key = "cut.key";
    auto cut = payload_of(m);
    cut.pop_back();
    engine->get(client(1), 4, cut);
    EXPECT_TRUE(sink.replies.empty());
    ASSERT_EQ(sink.refused.size(), 4u);
    EXPECT_EQ(sink.refused[0].first, 100u);
    EXPECT_NE(sink.refused[0].second.find("malformed get payload"), std::string::npos) << sink.refused[0].second;
    EXPECT_NE(sink.refused[1].second.find("malformed commit payload"), std::string::npos);
    EXPECT_NE(sink.refused[2].second.find("malformed fence payload"), std::string::npos);
    EXPECT_EQ(sink.refused[3].first, 101u);
    EXPECT_NE(sink.refused[3].second.find("malformed get payload"), std::string::npos);
    EXPECT_TRUE(committed.empty());
}

TEST_F(engine_bed, FenceOfOneLocalRankCompletesAtOnce) {
    make();
    fence(0, 9, {0});
    ASSERT_EQ(sink.outcomes.size(), 1u);
    EXPECT_EQ(sink.outcomes[0].status, PMIX_SUCCESS);
    ASSERT_EQ(sink.outcomes[0].waiters.size(), 1u);
    EXPECT_EQ(sink.outcomes[0].waiters[0].conn, 100u);
    EXPECT_EQ(sink.outcomes[0].waiters[0].request_id, 9u);
    EXPECT_EQ(fences_in_flight, 1u);  // counted down by the shell as it sends the reply
}

TEST_F(engine_bed, FenceOfTheNodesRanksCompletesWithTheLastAndAStrayRankFails) {
    make();
    fence(0, 1, {0, 1});
    EXPECT_TRUE(sink.outcomes.empty());
    fence(1, 2, {0, 1});
    ASSERT_EQ(sink.outcomes.size(), 1u);
    EXPECT_EQ(sink.outcomes[0].waiters.size(), 2u);

    fence(0, 3, {7});  // not a rank of the namespace
    ASSERT_EQ(sink.replies.size(), 1u);
    EXPECT_NE(sink.replies[0].status, PMIX_SUCCESS);
    // A fence with another node's rank and no node transport: the backend refuses it.
    fence(0, 4, {0, 2});
    ASSERT_EQ(sink.outcomes.size(), 2u);
    EXPECT_EQ(sink.outcomes[1].status, PMIX_ERR_NOT_SUPPORTED);
}

// The re-entrancy rule, as the server keeps it for a multi-node fence: its collective may be
// complete inside the call that started it (the other nodes were all early), and its completion
// is then posted to the loop, not run inline. The fence's reply comes from the posted work, after
// the request's handler returned; the engine never sees its own call re-entered.
struct early_collective final : remote_fences {
    std::deque<std::function<void()>> *loop = nullptr;  // the loop's posted work
    fence_tracker *tracker = nullptr;
    vector_sink *sink = nullptr;
    size_t started = 0;
    Status start(uint64_t instance, const std::vector<uint32_t> &, bool) override {
        ++started;
        // Complete now, as coll::fence_manager::on_done does when every other node was early:
        // posted, as the server's on_done does.
        loop->push_back([this, instance] { sink->fence_outcomes(tracker->remote_done(instance, PMIX_SUCCESS, {})); });
        return Status::success();
    }
};

TEST_F(engine_bed, ACompletionIsPostedNotRunInsideTheCallThatCausedIt) {
    std::deque<std::function<void()>> loop;
    early_collective coll;
    remote = &coll;
    make(/*multinode=*/true);
    coll.loop = &loop;
    coll.tracker = fences.get();
    coll.sink = &sink;

    fence(0, 1, {0, 1, 2, 3});
    fence(1, 2, {0, 1, 2, 3});  // the node's last rank: the collective starts, and is complete
    EXPECT_EQ(coll.started, 1u);
    EXPECT_TRUE(sink.outcomes.empty()) << "the completion ran inside the fence request";
    ASSERT_EQ(loop.size(), 1u);

    // The loop runs what was posted: now the fence completes, for both waiters.
    while (!loop.empty()) {
        auto fn = std::move(loop.front());
        loop.pop_front();
        fn();
    }
    ASSERT_EQ(sink.outcomes.size(), 1u);
    EXPECT_EQ(sink.outcomes[0].status, PMIX_SUCCESS);
    EXPECT_EQ(sink.outcomes[0].waiters.size(), 2u);
}

}  // namespace
