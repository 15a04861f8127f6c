// The process-table engine (plugin/server/proc_table.h): three nodes, messages delivered by hand.
#include <gtest/gtest.h>

#include <deque>
#include <optional>

#include "plugin/server/proc_table.h"

using namespace pmixcpp;
using namespace pmixcpp::server;

namespace {

using clock_t_ = proc_table_engine::clock;

struct msg {
    uint32_t from, to;
    node_channel chan;
    std::vector<uint8_t> body;
};

// Three nodes, two ranks each (0,1 | 2,3 | 4,5); node n's rows: pid 1000 + rank, running.
struct cluster {
    std::vector<std::vector<uint32_t>> ranks = {{0, 1}, {2, 3}, {4, 5}};
    std::vector<std::string> names = {"n1", "n2", "n3"};
    std::deque<msg> wire;
    std::vector<bool> lost = std::vector<bool>(3, false), gone = std::vector<bool>(3, false);
    std::vector<std::unique_ptr<proc_table_engine>> nodes;
    std::vector<std::unique_ptr<node_channels>> channels;  // by node: what its engine registered
    std::string exe = "/bin/app";  // what each node's ranks show as their executable

    cluster() {
        for (uint32_t n = 0; n < 3; ++n) {
            proc_table_ops o;
            o.send = [this, n](uint32_t to, node_channel k, std::vector<uint8_t> body) {
                wire.push_back({n, to, k, std::move(body)});
            };
            o.local_rows = [this, n] {
                std::vector<proc_row> rows;
                for (uint32_t r : ranks[n]) {
                    proc_row p;
                    p.rank = r;
                    p.pid = 1000 + static_cast<int32_t>(r);
                    p.state = PMIX_PROC_STATE_RUNNING;
                    p.executable = exe;
                    rows.push_back(p);
                }
                return rows;
            };
            o.lost = [this](uint32_t x) { return bool(lost[x]); };
            o.gone = [this](uint32_t x) { return bool(gone[x]); };
            nodes.push_back(std::make_unique<proc_table_engine>(n, ranks, names, std::move(o)));
            channels.push_back(std::make_unique<node_channels>());
            EXPECT_TRUE(nodes.back()->add_channels(*channels.back()).ok());
        }
    }
    // Deliver every message, except those to `dead` (dropped).
    void run(std::optional<uint32_t> dead = std::nullopt) {
        while (!wire.empty()) {
            msg m = std::move(wire.front());
            wire.pop_front();
            if (dead && m.to == *dead) continue;
            EXPECT_TRUE(channels[m.to]->dispatch(m.from, id_of(m.chan), m.body));
        }
    }
};

}  // namespace

TEST(ProcTable, GathersEveryNodesRealPids) {
    cluster c;
    std::optional<proc_table_engine::result> got;
    c.nodes[0]->gather(std::chrono::seconds(5), [&](proc_table_engine::result r) { got = std::move(r); },
                       clock_t_::now());
    EXPECT_FALSE(got);
    c.run();
    ASSERT_TRUE(got);
    ASSERT_EQ(got->rows.size(), 6u);
    for (uint32_t r = 0; r < 6; ++r) {
        EXPECT_EQ(got->rows[r].rank, r);
        EXPECT_EQ(got->rows[r].pid, 1000 + static_cast<int32_t>(r));
        EXPECT_EQ(got->rows[r].state, PMIX_PROC_STATE_RUNNING);
        EXPECT_EQ(got->rows[r].executable, "/bin/app");
    }
    EXPECT_TRUE(got->silent.empty());
    EXPECT_EQ(c.nodes[0]->pending(), 0u);
}

TEST(ProcTable, SilentNodeTimesOutWithItsName) {
    cluster c;
    std::optional<proc_table_engine::result> got;
    auto t0 = clock_t_::now();
    c.nodes[0]->gather(std::chrono::seconds(2), [&](proc_table_engine::result r) { got = std::move(r); }, t0);
    c.run(2u);  // n3 never answers
    EXPECT_FALSE(got);
    ASSERT_TRUE(c.nodes[0]->next_deadline());
    c.nodes[0]->expire(t0 + std::chrono::seconds(1));
    EXPECT_FALSE(got);
    c.nodes[0]->expire(t0 + std::chrono::seconds(2));
    ASSERT_TRUE(got);
    EXPECT_EQ(got->rows[2].pid, 1002);
    EXPECT_EQ(got->rows[4].pid, 0);
    EXPECT_EQ(got->rows[4].state, PMIX_PROC_STATE_COMM_FAILED);
    EXPECT_EQ(got->rows[5].state, PMIX_PROC_STATE_COMM_FAILED);
    EXPECT_NE(got->silent.find("node n3: no answer within 2000 ms"), std::string::npos) << got->silent;
    EXPECT_FALSE(c.nodes[0]->next_deadline());
}

TEST(ProcTable, LostNodeEndsTheWait) {
    cluster c;
    std::optional<proc_table_engine::result> got;
    c.nodes[0]->gather(std::chrono::seconds(30), [&](proc_table_engine::result r) { got = std::move(r); },
                       clock_t_::now());
    c.run(1u);
    EXPECT_FALSE(got);
    c.nodes[0]->node_lost(1);
    ASSERT_TRUE(got);
    EXPECT_EQ(got->rows[3].state, PMIX_PROC_STATE_COMM_FAILED);
    EXPECT_EQ(got->rows[4].pid, 1004);
    EXPECT_NE(got->silent.find("node n2 was lost"), std::string::npos) << got->silent;
}

TEST(ProcTable, EndedNodeGivesItsFinalRows) {
    cluster c;
    c.nodes[2]->send_final();  // n3's part ends: its final rows go to n1 and n2
    c.run();
    c.gone[2] = true;
    std::optional<proc_table_engine::result> got;
    c.nodes[0]->gather(std::chrono::seconds(5), [&](proc_table_engine::result r) { got = std::move(r); },
                       clock_t_::now());
    c.run();
    ASSERT_TRUE(got);
    EXPECT_EQ(got->rows[5].pid, 1005);
    EXPECT_TRUE(got->silent.empty()) << got->silent;
    // a node that ended without them: UNDEF, named
    cluster d;
    d.gone[1] = true;
    std::optional<proc_table_engine::result> got2;
    d.nodes[0]->gather(std::chrono::seconds(5), [&](proc_table_engine::result r) { got2 = std::move(r); },
                       clock_t_::now());
    d.run();
    ASSERT_TRUE(got2);
    EXPECT_EQ(got2->rows[2].state, PMIX_PROC_STATE_UNDEF);
    EXPECT_NE(got2->silent.find("node n2 has ended"), std::string::npos) << got2->silent;
}

// On the directory route a node holds only some addresses: its final rows go to those only
// (no ask through slurmd per node at the step's end), and a node without them answers its
// query with that node's ranks as ended.
TEST(ProcTable, FinalRowsGoOnlyWhereTheAddressIsKnown) {
    cluster c;
    std::vector<uint32_t> to;
    for (uint32_t n = 0; n < 3; ++n) {
        proc_table_ops o;
        o.send = [&to](uint32_t node, node_channel, std::vector<uint8_t>) { to.push_back(node); };
        o.local_rows = [] { return std::vector<proc_row>{}; };
        o.final_rows_to = [](uint32_t node) { return node == 1; };  // n2's address only
        c.nodes[n] = std::make_unique<proc_table_engine>(n, c.ranks, c.names, std::move(o));
    }
    c.nodes[2]->send_final();
    EXPECT_EQ(to, std::vector<uint32_t>{1});
}

TEST(ProcTable, SingleNodeAnswersAtOnce) {
    cluster c;
    c.lost[1] = c.lost[2] = true;
    bool called = false;
    c.nodes[0]->gather(std::chrono::seconds(5), [&](proc_table_engine::result) { called = true; }, clock_t_::now());
    EXPECT_TRUE(called);
    EXPECT_TRUE(c.wire.empty());
}

TEST(ProcTable, RepliesNamingForeignRanksAreDropped) {
    std::vector<uint32_t> n2 = {2, 3};
    uint64_t id = 0;
    std::vector<proc_row> rows;
    proc_row foreign;
    foreign.rank = 0;  // node 1's rank
    EXPECT_EQ(decode_proc_reply(encode_proc_reply(7, {foreign}), n2, &id, &rows).code(), PMIX_ERR_BAD_PARAM);
    proc_row a;
    a.rank = 2;
    EXPECT_EQ(decode_proc_reply(encode_proc_reply(7, {a, a}), n2, &id, &rows).code(), PMIX_ERR_BAD_PARAM);
    proc_row b;
    b.rank = 3;
    b.pid = 4242;
    b.exit_code = 12;
    b.state = PMIX_PROC_STATE_TERM_NON_ZERO;
    ASSERT_TRUE(decode_proc_reply(encode_proc_reply(7, {a, b}), n2, &id, &rows).ok());
    EXPECT_EQ(id, 7u);
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows[1], b);
    // more rows than the node has ranks, truncated, trailing bytes
    EXPECT_FALSE(decode_proc_reply(encode_proc_reply(7, {a, b, a}), n2, &id, &rows).ok());
    auto body = encode_proc_reply(7, {a});
    body.pop_back();
    EXPECT_FALSE(decode_proc_reply(body, n2, &id, &rows).ok());
    body = encode_proc_reply(7, {a});
    body.push_back(0);
    EXPECT_FALSE(decode_proc_reply(body, n2, &id, &rows).ok());
    // a count of 2^32-1 in a short message fails before any allocation
    std::vector<uint8_t> huge(12, 0xFF);
    EXPECT_FALSE(decode_proc_reply(huge, n2, &id, &rows).ok());
    // a bad reply reaches no gather
    cluster c;
    std::optional<proc_table_engine::result> got;
    c.nodes[0]->gather(std::chrono::seconds(5), [&](proc_table_engine::result r) { got = std::move(r); },
                       clock_t_::now());
    c.nodes[0]->on_reply(1, encode_proc_reply(1, {foreign}));
    EXPECT_FALSE(got);
    c.run();
    ASSERT_TRUE(got);
    EXPECT_EQ(got->rows[0].pid, 1000);
}

TEST(ProcTable, ConcurrentQueriesShareOneGather) {
    cluster c;
    int answers = 0;
    for (int i = 0; i < 50; ++i)
        c.nodes[0]->gather(std::chrono::seconds(5), [&](proc_table_engine::result r) {
            EXPECT_EQ(r.rows[3].pid, 1003);
            ++answers;
        }, clock_t_::now());
    EXPECT_EQ(c.wire.size(), 2u);  // one request to each other node
    c.run();
    EXPECT_EQ(answers, 50);
    EXPECT_EQ(c.nodes[0]->pending(), 0u);
}

// A second asker joins a gather under way: this node's rows are taken again when it joins, so a
// rank that exec'd in between shows its executable (a gather begun before it had none).
TEST(ProcTable, AJoiningAskerSeesThisNodesRowsAsTheyAreNow) {
    cluster c;
    c.exe = "";
    std::optional<proc_table_engine::result> first, second;
    c.nodes[0]->gather(std::chrono::seconds(5), [&](proc_table_engine::result r) { first = std::move(r); },
                       clock_t_::now());
    c.exe = "/bin/app";
    c.nodes[0]->gather(std::chrono::seconds(5), [&](proc_table_engine::result r) { second = std::move(r); },
                       clock_t_::now());
    c.run();
    ASSERT_TRUE(first && second);
    EXPECT_EQ(second->rows[0].executable, "/bin/app");
    EXPECT_EQ(second->rows[1].executable, "/bin/app");
    EXPECT_EQ(second->rows[2].executable, "/bin/app");  // asked of node 1 after the change
}
