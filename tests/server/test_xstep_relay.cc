// What the other steps of a job ask of this node, without I/O (plugin/server/xstep_relay.h):
// Gets of local ranks answered at once, on commit, or failed (rank gone, not served here,
// timeout); events and job control handed on; malformed items dropped.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "../../plugin/server/xstep_relay.h"
#include "client_util.h"

using namespace pmixcpp;
using namespace pmixcpp::server;

namespace {

struct relay_fixture {
    step_info step;
    std::map<uint32_t, std::set<std::string>> store;  // rank -> committed keys
    std::map<uint32_t, std::string> gone;
    std::vector<xstep::message> sent;
    std::vector<std::vector<uint8_t>> events;
    std::vector<std::pair<std::vector<uint32_t>, int>> jobctl;
    std::unique_ptr<xstep_relay> relay;
    server_clock::time_point now = server_clock::now();

    relay_fixture() {
        step.nspace = "slurm.1.0";
        step.ntasks = 4;
        step.node_id = 1;
        step.node_names = {"n1", "n2"};
        step.node_ranks = {{0, 1}, {2, 3}};
        xstep_relay_ops o;
        o.send = [this](std::vector<uint8_t> body, int, xstep_relay_ops::done_fn done) {
            xstep::message m;
            EXPECT_TRUE(xstep::decode(body, &m).ok());
            sent.push_back(std::move(m));
            done(PMIX_SUCCESS, "", {});
        };
        o.has = [this](uint32_t rank, const std::string &key, relation) {
            return key.empty() ? !store[rank].empty() : store[rank].count(key) > 0;
        };
        o.data = [](uint32_t, relation) -> Result<InfoArray> { return InfoArray(); };
        o.gone = [this](uint32_t rank) { return gone.count(rank) ? gone[rank] : std::string(); };
        o.event = [this](std::span<const uint8_t> p) {
            events.emplace_back(p.begin(), p.end());
            return Status::success();
        };
        o.job_control = [this](const std::vector<uint32_t> &ranks, int signal, bool) { jobctl.emplace_back(ranks, signal); };
        relay = std::make_unique<xstep_relay>(step, 300, std::move(o));
    }

    void get(uint64_t id, const std::string &nspace, uint32_t rank, const std::string &key, uint32_t timeout_ms = 0) {
        xstep::message m;
        m.what = xstep::op::get;
        m.nspace = nspace;
        m.rank = rank;
        m.key = key;
        m.from_nspace = "slurm.1.1";
        m.from_node = "n3";
        m.timeout_ms = timeout_ms;
        auto body = xstep::encode(m);
        ASSERT_TRUE(body.ok());
        relay->on_item({id, body.value()}, now);
    }
};

}  // namespace

TEST(XstepRelay, GetsAnsweredAtOnceOnCommitOrFailed) {
    relay_fixture f;
    f.store[2] = {"a"};
    f.get(11, "slurm.1.0", 2, "a");
    ASSERT_EQ(f.sent.size(), 1u);
    EXPECT_EQ(f.sent[0].what, xstep::op::answer);
    EXPECT_EQ(f.sent[0].id, 11u);
    EXPECT_EQ(f.sent[0].status, PMIX_SUCCESS);
    // Waits for the commit.
    f.get(12, "slurm.1.0", 3, "b");
    EXPECT_EQ(f.sent.size(), 1u);
    EXPECT_EQ(f.relay->size(), 1u);
    f.store[3] = {"x"};
    f.relay->rank_committed(3);
    EXPECT_EQ(f.sent.size(), 1u);  // not the key it waits for
    f.store[3].insert("b");
    f.relay->rank_committed(3);
    ASSERT_EQ(f.sent.size(), 2u);
    EXPECT_EQ(f.sent[1].id, 12u);
    EXPECT_EQ(f.sent[1].status, PMIX_SUCCESS);
    // Not served here; another namespace.
    f.get(13, "slurm.1.0", 0, "a");
    f.get(14, "slurm.1.7", 2, "a");
    ASSERT_EQ(f.sent.size(), 4u);
    EXPECT_EQ(f.sent[2].status, PMIX_ERR_NOT_FOUND);
    EXPECT_EQ(f.sent[2].text, "slurm.1.0: rank 0 is not served by node n2");
    EXPECT_EQ(f.sent[3].status, PMIX_ERR_NOT_FOUND);
    // The rank leaves without the key; a rank known gone.
    f.get(15, "slurm.1.0", 2, "c");
    f.relay->rank_left(2, true);
    ASSERT_EQ(f.sent.size(), 5u);
    EXPECT_EQ(f.sent[4].text, "slurm.1.0: rank 2 died without committing c");
    f.gone[2] = "died";
    f.get(16, "slurm.1.0", 2, "d");
    ASSERT_EQ(f.sent.size(), 6u);
    EXPECT_EQ(f.sent[5].text, "slurm.1.0: rank 2 died without committing d");
    EXPECT_EQ(f.relay->size(), 0u);
}

TEST(XstepRelay, DeadlinesEventsJobControlAndBadItems) {
    relay_fixture f;
    f.get(21, "slurm.1.0", 3, "k", 2000);
    f.get(22, "slurm.1.0", 3, "k");
    EXPECT_EQ(f.relay->next_deadline(), f.now + std::chrono::milliseconds(2000));
    f.relay->expire(f.now + std::chrono::seconds(2));
    ASSERT_EQ(f.sent.size(), 1u);
    EXPECT_EQ(f.sent[0].id, 21u);
    EXPECT_EQ(f.sent[0].status, PMIX_ERR_TIMEOUT);
    EXPECT_EQ(f.relay->next_deadline(), f.now + std::chrono::seconds(300));
    // An event and job control of this step's ranks are handed on; of another step's refused.
    xstep::message ev;
    ev.what = xstep::op::event;
    ev.payload = {1, 2, 3};
    f.relay->on_item({0, xstep::encode(ev).value()}, f.now);
    ASSERT_EQ(f.events.size(), 1u);
    EXPECT_EQ(f.events[0], (std::vector<uint8_t>{1, 2, 3}));
    xstep::message jc;
    jc.what = xstep::op::jobctl;
    jc.nspace = "slurm.1.0";
    jc.ranks = {2};
    jc.signal = 10;
    f.relay->on_item({0, xstep::encode(jc).value()}, f.now);
    jc.nspace = "slurm.1.5";
    f.relay->on_item({0, xstep::encode(jc).value()}, f.now);
    ASSERT_EQ(f.jobctl.size(), 1u);
    EXPECT_EQ(f.jobctl[0].second, 10);
    // Garbage, a get without an id, an answer (not for us): dropped.
    f.relay->on_item({5, {1, 2, 3}}, f.now);
    xstep::message g;
    g.what = xstep::op::get;
    g.nspace = "slurm.1.0";
    g.rank = 2;
    f.relay->on_item({0, xstep::encode(g).value()}, f.now);
    xstep::message a;
    a.what = xstep::op::answer;
    f.relay->on_item({5, xstep::encode(a).value()}, f.now);
    EXPECT_EQ(f.sent.size(), 1u);
    EXPECT_EQ(f.relay->size(), 1u);
}

// A get of the step's job data (rank WILDCARD, xstep::kJobdataKey): answered at once with what
// ops.jobdata gives; without that op, or for another namespace, PMIX_ERR_NOT_FOUND; a WILDCARD
// get of anything else is not a job-data request.
TEST(XstepRelay, JobDataAnsweredAtOnce) {
    relay_fixture f;
    f.get(21, "slurm.1.0", PMIX_RANK_WILDCARD, xstep::kJobdataKey);
    ASSERT_EQ(f.sent.size(), 1u);
    EXPECT_EQ(f.sent[0].status, PMIX_ERR_NOT_FOUND) << "no jobdata op";

    relay_fixture g;
    xstep_relay_ops o;
    o.send = [&g](std::vector<uint8_t> body, int, xstep_relay_ops::done_fn done) {
        xstep::message m;
        EXPECT_TRUE(xstep::decode(body, &m).ok());
        g.sent.push_back(std::move(m));
        done(PMIX_SUCCESS, "", {});
    };
    o.has = [](uint32_t, const std::string &, relation) { return false; };
    o.data = [](uint32_t, relation) -> Result<InfoArray> { return InfoArray(); };
    o.gone = [](uint32_t) { return std::string(); };
    o.jobdata = [] { return Result<std::vector<uint8_t>>(std::vector<uint8_t>{1, 2, 3}); };
    g.relay = std::make_unique<xstep_relay>(g.step, 300, std::move(o));
    g.get(22, "slurm.1.0", PMIX_RANK_WILDCARD, xstep::kJobdataKey);
    ASSERT_EQ(g.sent.size(), 1u);
    EXPECT_EQ(g.sent[0].what, xstep::op::answer);
    EXPECT_EQ(g.sent[0].id, 22u);
    EXPECT_EQ(g.sent[0].status, PMIX_SUCCESS);
    EXPECT_EQ(g.sent[0].payload, (std::vector<uint8_t>{1, 2, 3}));
    g.get(23, "slurm.1.9", PMIX_RANK_WILDCARD, xstep::kJobdataKey);
    ASSERT_EQ(g.sent.size(), 2u);
    EXPECT_EQ(g.sent[1].status, PMIX_ERR_NOT_FOUND) << "another namespace";
    g.get(24, "slurm.1.0", PMIX_RANK_WILDCARD, "pmix.job.size");
    ASSERT_EQ(g.sent.size(), 3u);
    EXPECT_EQ(g.sent[2].status, PMIX_ERR_NOT_FOUND) << "not a job-data request";
    EXPECT_EQ(g.relay->size(), 0u) << "nothing left waiting";
}
