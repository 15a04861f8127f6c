// The remote-fence backend (plugin/server/remote_fence.h) without sockets: the fence tracker hands
// it a fence whose ranks span nodes, the test plays the node collective (the ops) and the other
// nodes' contributions, and the answers are caught by a reply sink of vectors.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "../../plugin/server/remote_fence.h"
#include "client_util.h"
#include "sink_util.h"

using namespace pmixcpp;
using namespace pmixcpp::server;
using pmixcpp::testing::make_infos;
using pmixcpp::testing::recording_sink;
using pmixcpp::testing::set_info;

namespace {

const char *kNs = "rfence.0";

void commit_int(kv_store &kvs, uint32_t rank, const char *key, int value) {
    InfoArray infos = make_infos(1);
    set_info(infos[0], key, &value, PMIX_INT);
    uint8_t scope = PMIX_GLOBAL;
    ASSERT_TRUE(kvs.commit(rank, &scope, infos.data(), 1).ok());
}

// Four ranks on three nodes: 0 and 1 here (node 0), 2 on n1, 3 on n2.
struct remote_fence_bed : ::testing::Test {
    std::vector<uint32_t> node_of{0, 0, 1, 2};
    kv_store kvs;
    kvs_rank_store store{kvs, node_of};
    recording_sink sink;
    std::unique_ptr<fence_tracker> fences;
    std::unique_ptr<remote_fence_backend> backend;

    // The shell's side, as the ops see it.
    Status transport = Status::success();
    std::set<uint32_t> lost;
    struct started_coll {
        uint64_t instance;
        std::vector<uint32_t> nodes;
        std::vector<uint8_t> blob;
        bool collect;
    };
    std::vector<started_coll> started;
    std::vector<uint64_t> cancelled;
    std::vector<uint32_t> missing{1};
    std::string note;
    std::vector<std::vector<uint32_t>> probes;
    std::vector<uint32_t> stored;

    void SetUp() override {
        fences = std::make_unique<fence_tracker>(kNs, 4, std::vector<uint32_t>{0, 1}, nullptr);
        remote_fence_config c;
        c.nspace = kNs;
        c.ntasks = 4;
        c.node_id = 0;
        c.node_names = {"n0", "n1", "n2"};
        c.node_of = node_of;
        remote_fence_ops o;
        o.transport = [this] { return transport; };
        o.start_collective = [this](uint64_t instance, uint64_t, std::vector<uint32_t> nodes, std::vector<uint8_t> blob,
                                    bool collect) { started.push_back({instance, nodes, blob, collect}); };
        o.cancel_collective = [this](uint64_t instance) { cancelled.push_back(instance); };
        o.missing = [this](uint64_t) { return missing; };
        o.transport_note = [this] { return note; };
        o.probe = [this](std::vector<uint32_t> nodes) { probes.push_back(nodes); };
        o.node_lost = [this](uint32_t n) { return lost.count(n) > 0; };
        o.data_stored = [this](uint32_t rank) { stored.push_back(rank); };
        backend = std::make_unique<remote_fence_backend>(c, std::move(o), kvs, store, *fences, sink);
        fences->set_remote(backend.get());
    }

    // Ranks 0 and 1 enter the fence over `ranks`; what the tracker answered at once.
    std::vector<fence_outcome> enter_local(const std::vector<uint32_t> &ranks, bool collect = true,
                                           std::optional<server_clock::time_point> deadline = std::nullopt) {
        std::vector<fence_outcome> out;
        for (uint32_t r : {0u, 1u}) {
            if (std::find(ranks.begin(), ranks.end(), r) == ranks.end()) continue;
            auto o = fences->enter(ranks, fence_waiter{100 + r, 10 + r, r}, collect, deadline);
            out.insert(out.end(), o.begin(), o.end());
        }
        return out;
    }

    // What node `node` would contribute with `rank`'s `key` committed there.
    std::vector<uint8_t> contribution_of(uint32_t rank, const char *key, int value) {
        kv_store there;
        commit_int(there, rank, key, value);
        kvs_rank_store s{there, node_of};
        auto b = s.encode({rank});
        EXPECT_TRUE(b.ok());
        return b.ok() ? b.value() : std::vector<uint8_t>();
    }
};

TEST_F(remote_fence_bed, AFenceAcrossNodesStoresTheOtherNodesDataAndAnswersItsWaiters) {
    commit_int(kvs, 0, "here.key", 1);
    EXPECT_TRUE(enter_local({0, 1, 2, 3}).empty());
    ASSERT_EQ(started.size(), 1u);
    EXPECT_EQ(started[0].nodes, (std::vector<uint32_t>{0, 1, 2}));
    EXPECT_TRUE(started[0].collect);
    EXPECT_FALSE(started[0].blob.empty());  // rank 0's commit
    EXPECT_EQ(backend->in_flight(), 1u);
    EXPECT_TRUE(sink.outcomes.empty());

    backend->finish(started[0].instance, {{0, started[0].blob},
                                          {1, contribution_of(2, "n1.key", 2)},
                                          {2, contribution_of(3, "n2.key", 3)}});
    ASSERT_EQ(sink.outcomes.size(), 1u);
    EXPECT_EQ(sink.outcomes[0].status, PMIX_SUCCESS) << sink.outcomes[0].message;
    EXPECT_EQ(sink.outcomes[0].waiters.size(), 2u);
    EXPECT_TRUE(kvs.has(2, "n1.key", relation::other_node));
    EXPECT_TRUE(kvs.has(3, "n2.key", relation::other_node));
    EXPECT_EQ(stored, (std::vector<uint32_t>{2, 3}));
    EXPECT_EQ(backend->in_flight(), 0u);

    // A late completion of the same instance changes nothing.
    backend->finish(started[0].instance, {});
    EXPECT_EQ(sink.outcomes.size(), 1u);
}

TEST_F(remote_fence_bed, MalformedOrMisplacedDataFromANodeFailsTheFence) {
    enter_local({0, 1, 2});
    ASSERT_EQ(started.size(), 1u);
    backend->finish(started[0].instance, {{1, {0xff, 0xff, 0xff, 0x7f, 0x01}}});
    ASSERT_EQ(sink.outcomes.size(), 1u);
    EXPECT_NE(sink.outcomes[0].status, PMIX_SUCCESS);
    EXPECT_NE(sink.outcomes[0].message.find("data from node n1"), std::string::npos) << sink.outcomes[0].message;

    // Node n2 sending rank 2's data (n1's rank): refused, nothing stored.
    enter_local({0, 1, 2});
    ASSERT_EQ(started.size(), 2u);
    backend->finish(started[1].instance, {{2, contribution_of(2, "forged", 9)}});
    ASSERT_EQ(sink.outcomes.size(), 2u);
    EXPECT_NE(sink.outcomes[1].status, PMIX_SUCCESS);
    EXPECT_NE(sink.outcomes[1].message.find("data from node n2"), std::string::npos) << sink.outcomes[1].message;
    EXPECT_FALSE(kvs.has(2, "forged", relation::other_node));
    EXPECT_TRUE(stored.empty());
}

TEST_F(remote_fence_bed, NoTransportOrALostNodeRefusesTheFenceAtOnce) {
    transport = Status(PMIX_ERR_NOT_SUPPORTED, "the node transport is not running");
    auto out = enter_local({0, 1, 2});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].status, PMIX_ERR_NOT_SUPPORTED);
    EXPECT_NE(out[0].message.find("not running"), std::string::npos);

    transport = Status::success();
    lost.insert(2);
    out = enter_local({0, 1, 3});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].status, PMIX_ERR_NODE_DOWN);
    EXPECT_NE(out[0].message.find("node n2 of the fence is lost"), std::string::npos) << out[0].message;
    EXPECT_TRUE(started.empty());
    EXPECT_EQ(backend->in_flight(), 0u);
}

TEST_F(remote_fence_bed, ALostNodeFailsOnlyTheFencesThatNeedItAndATransportFailureTheRest) {
    enter_local({0, 2});  // nodes 0, 1
    enter_local({1, 3});  // nodes 0, 2
    ASSERT_EQ(started.size(), 2u);
    EXPECT_EQ(backend->node_lost(1, "node n1 is lost: gone"), 1u);
    ASSERT_EQ(sink.outcomes.size(), 1u);
    EXPECT_EQ(sink.outcomes[0].status, PMIX_ERR_NODE_DOWN);
    EXPECT_EQ(sink.outcomes[0].waiters.at(0).rank, 0u);
    EXPECT_EQ(cancelled, std::vector<uint64_t>{started[0].instance});
    EXPECT_EQ(backend->in_flight(), 1u);

    EXPECT_EQ(backend->transport_failed("the node transport failed: no table"), 1u);
    ASSERT_EQ(sink.outcomes.size(), 2u);
    EXPECT_EQ(sink.outcomes[1].status, PMIX_ERR_UNREACH);
    EXPECT_EQ(sink.outcomes[1].waiters.at(0).rank, 1u);
    EXPECT_EQ(backend->in_flight(), 0u);
    // The collective's late completion is dropped.
    backend->finish(started[1].instance, {});
    EXPECT_EQ(sink.outcomes.size(), 2u);
}

TEST_F(remote_fence_bed, ATimeoutNamesTheMissingNodesAsksForAProbeAndForgetsTheFence) {
    note = "node addresses never arrived";
    enter_local({0, 1, 2}, true, server_clock::now() - std::chrono::seconds(1));
    ASSERT_EQ(started.size(), 1u);
    auto out = fences->expire(server_clock::now());
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].status, PMIX_ERR_TIMEOUT);
    EXPECT_NE(out[0].message.find("n1; node addresses never arrived"), std::string::npos) << out[0].message;
    EXPECT_EQ(probes, (std::vector<std::vector<uint32_t>>{{1}}));
    EXPECT_EQ(cancelled, std::vector<uint64_t>{started[0].instance});
    EXPECT_EQ(backend->in_flight(), 0u);
}

TEST_F(remote_fence_bed, AWholeStepFenceSendsOnlyWhatChangedSinceTheLastOne) {
    commit_int(kvs, 0, "first", 1);
    enter_local({0, 1, 2, 3});
    ASSERT_EQ(started.size(), 1u);
    backend->finish(started[0].instance, {});
    ASSERT_EQ(sink.outcomes.size(), 1u);
    ASSERT_EQ(sink.outcomes[0].status, PMIX_SUCCESS);
    EXPECT_GT(backend->whole_step_base(), 0u);

    commit_int(kvs, 0, "second", 2);
    enter_local({0, 1, 2, 3});
    ASSERT_EQ(started.size(), 2u);
    // What node n1 would store of it: the new key only.
    kv_store there;
    kvs_rank_store s{there, node_of};
    std::vector<uint32_t> ranks;
    ASSERT_TRUE(s.store_encoded(0, started[1].blob, &ranks).ok());
    EXPECT_TRUE(there.has(0, "second", relation::other_node));
    EXPECT_FALSE(there.has(0, "first", relation::other_node));

    // A fence of some ranks carries everything its local ranks committed.
    enter_local({0, 2});
    ASSERT_EQ(started.size(), 3u);
    kv_store again;
    kvs_rank_store s2{again, node_of};
    ASSERT_TRUE(s2.store_encoded(0, started[2].blob, &ranks).ok());
    EXPECT_TRUE(again.has(0, "first", relation::other_node));
    EXPECT_TRUE(again.has(0, "second", relation::other_node));
}

}  // namespace
