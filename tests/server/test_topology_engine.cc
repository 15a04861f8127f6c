// The topology engine (plugin/server/topology_engine.h) without sockets or threads: the test
// plays the shell's thread (ops.make) and delivers what it made later, as the loop would.
#include <gtest/gtest.h>

#include "../../plugin/server/topology_engine.h"
#include "sink_util.h"
#include "wire/codec.h"

using namespace pmixcpp;
using namespace pmixcpp::server;
using pmixcpp::testing::recording_sink;

namespace {

struct topology_bed : ::testing::Test {
    recording_sink sink;
    std::unique_ptr<topology_engine> engine;
    size_t makes = 0;
    Status start = Status::success();
    std::function<void(Result<std::string>)> done;  // what the shell's thread posts to

    void SetUp() override {
        topology_ops o;
        o.make = [this](std::function<void(Result<std::string>)> d) {
            ++makes;
            if (start.ok()) done = std::move(d);
            return start;
        };
        engine = std::make_unique<topology_engine>("topo.0", std::move(o), sink);
    }
    get_waiter waiter(uint64_t conn, uint32_t id) {
        get_waiter w;
        w.conn = conn;
        w.request_id = id;
        w.key = PMIX_LOCAL_TOPO;
        return w;
    }
    std::string xml_in(const std::vector<uint8_t> &body) {
        InfoArray infos;
        if (!wire::decode_info_array_exact(body, &infos).ok() || infos.size() != 1) return "";
        if (strcmp(infos[0].key, PMIX_LOCAL_TOPO) != 0 || infos[0].value.type != PMIX_STRING) return "";
        return infos[0].value.data.string;
    }
};

TEST_F(topology_bed, TheFirstGetHasItMadeTheOthersWaitAndLaterOnesAreAnsweredAtOnce) {
    engine->get(waiter(1, 10));
    engine->get(waiter(2, 20));
    EXPECT_EQ(makes, 1u);
    EXPECT_TRUE(sink.replies.empty());  // nothing answered inside the call
    EXPECT_EQ(engine->waiting(), 2u);
    ASSERT_TRUE(done);
    done(std::string("<topology/>"));
    ASSERT_EQ(sink.replies.size(), 2u);
    EXPECT_EQ(sink.replies[0].conn, 1u);
    EXPECT_EQ(sink.replies[1].id, 20u);
    EXPECT_EQ(xml_in(sink.replies[0].body), "<topology/>");
    EXPECT_EQ(engine->waiting(), 0u);

    engine->get(waiter(3, 30));
    EXPECT_EQ(makes, 1u);
    ASSERT_EQ(sink.replies.size(), 3u);
    EXPECT_EQ(xml_in(sink.replies[2].body), "<topology/>");
}

TEST_F(topology_bed, ATopologyThatCannotBeMadeFailsEveryGetWithTheReason) {
    engine->get(waiter(1, 1));
    done(Status(PMIX_ERROR, "hwloc_topology_load failed"));
    engine->get(waiter(1, 2));
    ASSERT_EQ(sink.replies.size(), 2u);
    for (const auto &r : sink.replies) {
        EXPECT_EQ(r.status, PMIX_ERR_NOT_AVAILABLE);
        EXPECT_NE(r.message.find("hwloc_topology_load failed"), std::string::npos) << r.message;
    }

    // A thread that cannot start: the Get fails at once.
    start = Status(PMIX_ERR_OUT_OF_RESOURCE, "cannot start a thread");
    SetUp();
    sink.replies.clear();
    engine->get(waiter(4, 4));
    ASSERT_EQ(sink.replies.size(), 1u);
    EXPECT_EQ(sink.replies[0].status, PMIX_ERR_NOT_AVAILABLE);
    EXPECT_NE(sink.replies[0].message.find("cannot start a thread"), std::string::npos);
}

TEST_F(topology_bed, WaitingGetsAreBoundedPerConnectionAndForgottenWhenItCloses) {
    for (uint32_t i = 0; i < kMaxTopologyWaiters; ++i) engine->get(waiter(7, i));
    engine->get(waiter(7, 99));
    ASSERT_EQ(sink.replies.size(), 1u);
    EXPECT_EQ(sink.replies[0].id, 99u);
    EXPECT_EQ(sink.replies[0].status, PMIX_ERR_OUT_OF_RESOURCE);
    engine->get(waiter(8, 1));  // another connection still may
    EXPECT_EQ(engine->waiting(), kMaxTopologyWaiters + 1);

    engine->drop_connection(7);
    EXPECT_EQ(engine->waiting(), 1u);
    done(std::string("<t/>"));
    ASSERT_EQ(sink.replies.size(), 2u);
    EXPECT_EQ(sink.replies[1].conn, 8u);
}

}  // namespace
