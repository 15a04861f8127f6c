// Between the steps of a job without Slurm: the cross-step messages (plugin/services/xstep/
// xstep_codec.h) and srun's routers that carry Gets, answers, events and job control between
// steps (xstep_srun.h), over real socket pairs.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <poll.h>

#include <algorithm>
#include <filesystem>
#include <chrono>
#include <map>
#include <mutex>
#include <thread>

#include "plugin/agent/proto/agent_io.h"
#include "plugin/services/sessions/session_srun.h"
#include "plugin/services/xstep/xstep_srun.h"
#include "plugin/server/connect.h"
#include "plugin/server/events.h"
#include "tests/dyn/dyn_util.h"
#include "wire/messages.h"

using namespace pmixcpp;
using namespace pmixcpp::server;
using namespace pmixcpp::dyn_test;

// --- between the steps of a job (plugin/services/xstep/xstep_codec.h) ---------------------------------------

namespace {

// The answer an agent call gets on its connection (the test's end of a socket pair).
session::agent_reply read_answer(int fd) {
    session::agent_reply rep;
    auto f = agent_io::read_frame(fd, agent::kMaxPayload, agent_io::clock_type::now() + std::chrono::seconds(10));
    if (!f.ok()) {
        rep.status = f.status().code();
        rep.message = f.status().message();
        return rep;
    }
    EXPECT_EQ(f->type, agent::kReplyFrame);
    EXPECT_TRUE(agent::decode_reply(f->payload, &rep).ok());
    return rep;
}

struct call_pair {
    int fds[2] = {-1, -1};
    call_pair() { EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0); }
    ~call_pair() {
        if (fds[1] >= 0) close(fds[1]);
    }
    agent::responder router_end() { return agent::responder::on_fd(fds[0], 1); }  // taken over by the router
};

std::vector<uint8_t> body_of(const xstep::message &m) {
    auto b = xstep::encode(m);
    EXPECT_TRUE(b.ok());
    return b.ok() ? b.value() : std::vector<uint8_t>{};
}

}  // namespace

TEST(Xstep, MessagesRoundTripAndBadOnesAreRefused) {
    xstep::message g;
    g.what = xstep::op::get;
    g.nspace = "slurm.7.1";
    g.rank = 3;
    g.key = "late.3";
    g.from_nspace = "slurm.7.0";
    g.from_node = "n1";
    g.timeout_ms = 2500;
    auto b = body_of(g);
    EXPECT_TRUE(xstep::is_xstep_body(b));
    EXPECT_FALSE(session::is_session_body(b));
    xstep::message back;
    ASSERT_TRUE(xstep::decode(b, &back).ok());
    EXPECT_EQ(back.nspace, "slurm.7.1");
    EXPECT_EQ(back.rank, 3u);
    EXPECT_EQ(back.key, "late.3");
    EXPECT_EQ(back.from_node, "n1");
    EXPECT_EQ(back.timeout_ms, 2500u);
    for (size_t cut = 0; cut < b.size(); ++cut) {  // every truncation is an error, not a crash
        xstep::message m;
        EXPECT_FALSE(xstep::decode(std::span<const uint8_t>(b.data(), cut), &m).ok());
    }
    b[4] = 99;  // unknown operation
    EXPECT_FALSE(xstep::decode(b, &back).ok());
    std::vector<xstep::inbox_item> items{{7, {1, 2, 3}}, {0, {}}}, got;
    auto e = xstep::encode_items(items);
    ASSERT_TRUE(e.ok());
    ASSERT_TRUE(xstep::decode_items(e.value(), &got).ok());
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0].id, 7u);
    EXPECT_EQ(got[0].body, (std::vector<uint8_t>{1, 2, 3}));
}

TEST(Xstep, RoutersCarryGetsAnswersAndEventsBetweenSteps) {
    char dir[] = "/tmp/pmixcpp-xstep-test.XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    {
        auto store = session::job_store::open(7, getuid(), "c", dir);
        ASSERT_TRUE(store.ok());
        store.value()->step_started("slurm.7.0");
        store.value()->step_started("slurm.7.1");
        // Step A: 2 ranks on 2 nodes; step B: 4 ranks, 2 per node.
        auto a = xstep::router::start(dir, "slurm.7.0", {0, 1}, 2);
        auto b = xstep::router::start(dir, "slurm.7.1", {0, 0, 1, 1}, 2);
        ASSERT_TRUE(a.ok()) << a.status().message();
        ASSERT_TRUE(b.ok()) << b.status().message();

        // B's node 1 waits for messages; A's server asks for rank 2 of B (on B's node 1).
        call_pair inbox1, get;
        xstep::message in;
        in.what = xstep::op::inbox;
        in.node = 1;
        b.value()->submit(inbox1.router_end(), body_of(in));
        xstep::message g;
        g.what = xstep::op::get;
        g.nspace = "slurm.7.1";
        g.rank = 2;
        g.key = "k";
        g.from_nspace = "slurm.7.0";
        g.from_node = "n1";
        g.timeout_ms = 5000;
        a.value()->submit(get.router_end(), body_of(g));
        auto delivered = read_answer(inbox1.fds[1]);
        ASSERT_EQ(delivered.status, PMIX_SUCCESS) << delivered.message;
        std::vector<xstep::inbox_item> items;
        ASSERT_TRUE(xstep::decode_items(delivered.body, &items).ok());
        ASSERT_EQ(items.size(), 1u);
        xstep::message seen;
        ASSERT_TRUE(xstep::decode(items[0].body, &seen).ok());
        EXPECT_EQ(seen.rank, 2u);
        EXPECT_EQ(seen.key, "k");
        EXPECT_NE(items[0].id, 0u);
        // B's node answers; A's server gets exactly that answer.
        call_pair ans;
        xstep::message reply;
        reply.what = xstep::op::answer;
        reply.id = items[0].id;
        reply.status = PMIX_SUCCESS;
        reply.payload = {9, 8, 7};
        b.value()->submit(ans.router_end(), body_of(reply));
        EXPECT_EQ(read_answer(ans.fds[1]).status, PMIX_SUCCESS);
        auto answered = read_answer(get.fds[1]);
        EXPECT_EQ(answered.status, PMIX_SUCCESS) << answered.message;
        EXPECT_EQ(answered.body, (std::vector<uint8_t>{9, 8, 7}));

        // A rank B does not have, a namespace that is not a step of the job: at once.
        call_pair bad_rank, ghost;
        g.rank = 9;
        a.value()->submit(bad_rank.router_end(), body_of(g));
        EXPECT_EQ(read_answer(bad_rank.fds[1]).status, PMIX_ERR_NOT_FOUND);
        g.nspace = "slurm.7.9";
        a.value()->submit(ghost.router_end(), body_of(g));
        EXPECT_EQ(read_answer(ghost.fds[1]).status, PMIX_ERR_NOT_FOUND);

        // An event of A for every other step: queued for each of B's nodes (id 0), delivered to
        // the one whose inbox waits now.
        call_pair ev, inbox0;
        xstep::message e;
        e.what = xstep::op::event;
        e.payload = {1, 2};
        a.value()->submit(ev.router_end(), body_of(e));
        EXPECT_EQ(read_answer(ev.fds[1]).status, PMIX_SUCCESS);
        in.node = 0;
        b.value()->submit(inbox0.router_end(), body_of(in));
        auto evs = read_answer(inbox0.fds[1]);
        ASSERT_TRUE(xstep::decode_items(evs.body, &items).ok());
        ASSERT_EQ(items.size(), 1u);
        EXPECT_EQ(items[0].id, 0u);

        // B's node 0 never answers this one; B ends: A's server is told at once, not left waiting.
        call_pair late, inbox0b;
        g.nspace = "slurm.7.1";
        g.rank = 0;
        b.value()->submit(inbox0b.router_end(), body_of(in));
        a.value()->submit(late.router_end(), body_of(g));
        EXPECT_EQ(read_answer(inbox0b.fds[1]).status, PMIX_SUCCESS);  // the request reached the node
        b.value()->stop();
        store.value()->step_ended("slurm.7.1");
        EXPECT_EQ(read_answer(late.fds[1]).status, PMIX_ERR_NOT_FOUND);
        call_pair after;
        a.value()->submit(after.router_end(), body_of(g));
        EXPECT_EQ(read_answer(after.fds[1]).status, PMIX_ERR_NOT_FOUND);
        a.value()->stop();
        store.value()->step_ended("slurm.7.0");
    }
    std::filesystem::remove_all(dir);
}

TEST(Xstep, JobControlReachesOnlyTheNodesOfItsTargets) {
    xstep::message j;
    j.what = xstep::op::jobctl;
    j.nspace = "slurm.8.1";
    j.signal = SIGUSR1;
    j.terminate = true;
    j.ranks = {3};
    auto bytes = body_of(j);
    xstep::message back;
    ASSERT_TRUE(xstep::decode(bytes, &back).ok());
    EXPECT_EQ(back.ranks, (std::vector<uint32_t>{3}));
    EXPECT_EQ(back.signal, SIGUSR1);
    EXPECT_TRUE(back.terminate);
    for (size_t cut = 0; cut < bytes.size(); ++cut)
        EXPECT_FALSE(xstep::decode(std::span<const uint8_t>(bytes.data(), cut), &back).ok());
    j.signal = 0;  // not a signal
    EXPECT_FALSE(xstep::decode(body_of(j), &back).ok());
    j.signal = SIGUSR1;

    char dir[] = "/tmp/pmixcpp-xstep-test.XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    {
        auto store = session::job_store::open(8, getuid(), "c", dir);
        ASSERT_TRUE(store.ok());
        store.value()->step_started("slurm.8.0");
        store.value()->step_started("slurm.8.1");
        auto a = xstep::router::start(dir, "slurm.8.0", {0}, 1);
        auto b = xstep::router::start(dir, "slurm.8.1", {0, 0, 1, 1}, 2);
        ASSERT_TRUE(a.ok() && b.ok());
        // rank 3 lives on B's node 1: that node's inbox gets it, node 0's nothing
        call_pair inbox0, inbox1, ctl;
        xstep::message in;
        in.what = xstep::op::inbox;
        in.node = 1;
        b.value()->submit(inbox1.router_end(), body_of(in));
        a.value()->submit(ctl.router_end(), body_of(j));
        EXPECT_EQ(read_answer(ctl.fds[1]).status, PMIX_SUCCESS);
        auto got = read_answer(inbox1.fds[1]);
        std::vector<xstep::inbox_item> items;
        ASSERT_TRUE(xstep::decode_items(got.body, &items).ok());
        ASSERT_EQ(items.size(), 1u);
        ASSERT_TRUE(xstep::decode(items[0].body, &back).ok());
        EXPECT_EQ(back.what, xstep::op::jobctl);
        EXPECT_EQ(back.ranks, (std::vector<uint32_t>{3}));
        in.node = 0;
        b.value()->submit(inbox0.router_end(), body_of(in));
        pollfd p{inbox0.fds[1], POLLIN, 0};
        EXPECT_EQ(poll(&p, 1, 200), 0);  // nothing for node 0
        // a rank B does not have, a namespace that is no step of the job, our own namespace
        call_pair bad_rank, ghost, own;
        j.ranks = {4};
        a.value()->submit(bad_rank.router_end(), body_of(j));
        EXPECT_EQ(read_answer(bad_rank.fds[1]).status, PMIX_ERR_BAD_PARAM);
        j.nspace = "slurm.8.9";
        a.value()->submit(ghost.router_end(), body_of(j));
        EXPECT_EQ(read_answer(ghost.fds[1]).status, PMIX_ERR_NOT_FOUND);
        j.nspace = "slurm.8.0";
        a.value()->submit(own.router_end(), body_of(j));
        EXPECT_EQ(read_answer(own.fds[1]).status, PMIX_ERR_BAD_PARAM);
        a.value()->stop();
        b.value()->stop();
        store.value()->step_ended("slurm.8.0");
        store.value()->step_ended("slurm.8.1");
    }
    std::filesystem::remove_all(dir);
}

TEST(Xstep, GetOfAnotherStepAsksOnceThenAnswersFromWhatItKept) {
    step_info step;
    step.nspace = "slurm.7.0";
    step.ntasks = 1;
    step.node_names = {"n1"};
    step.node_ranks = {{0}};
    std::vector<connect_reply_rec> replies;
    std::vector<std::pair<xstep::message, connect_ops::done_fn>> asked;
    connect_ops ops;
    ops.reply = [&](uint64_t conn, uint32_t, pmix_status_t st, const std::string &msg, std::span<const uint8_t> body) {
        replies.push_back({conn, st, msg, std::vector<uint8_t>(body.begin(), body.end())});
    };
    ops.data_of = [](uint32_t, relation) -> Result<InfoArray> { return InfoArray(); };
    ops.xstep = [&](std::vector<uint8_t> body, int, connect_ops::done_fn done) {
        xstep::message m;
        EXPECT_TRUE(xstep::decode(body, &m).ok());
        asked.emplace_back(std::move(m), std::move(done));
    };
    connect_service svc(step, {0}, std::move(ops), 30);
    pmix_proc_t p = procs({{"slurm.7.1", 1}})[0];
    InfoArray none, two_sec = infos({info_num<int>(PMIX_TIMEOUT, 2, PMIX_INT)});
    svc.get(1, 1, p, "late", two_sec);
    svc.get(2, 1, p, "late", none);  // the same proc and key: joins the first request
    ASSERT_EQ(asked.size(), 1u);
    EXPECT_EQ(asked[0].first.nspace, "slurm.7.1");
    EXPECT_EQ(asked[0].first.rank, 1u);
    EXPECT_EQ(asked[0].first.timeout_ms, 2000u);
    EXPECT_EQ(asked[0].first.from_node, "n1");
    EXPECT_TRUE(replies.empty());
    InfoArray data = infos({info_str("late", "v1"), info_str("other", "v2")});
    wire::Writer w;
    ASSERT_TRUE(wire::encode_info_array(w, data.data(), data.size()).ok());
    asked[0].second(PMIX_SUCCESS, {}, w.data());
    ASSERT_EQ(replies.size(), 2u);
    for (auto &r : replies) EXPECT_EQ(r.status, PMIX_SUCCESS) << r.message;
    // Kept: another key of that proc is answered here, no second request.
    svc.get(3, 1, p, "other", none);
    EXPECT_EQ(asked.size(), 1u);
    EXPECT_EQ(replies.back().status, PMIX_SUCCESS);
    EXPECT_EQ(svc.cache_hits(), 1u);
    // OPTIONAL never leaves the node; a failure of the other step is the Get's status.
    svc.get(4, 1, p, "missing", infos({info_num<bool>(PMIX_OPTIONAL, true, PMIX_BOOL)}));
    EXPECT_EQ(replies.back().status, PMIX_ERR_NOT_FOUND);
    EXPECT_EQ(asked.size(), 1u);
    svc.get(5, 1, p, "missing", none);
    ASSERT_EQ(asked.size(), 2u);
    asked[1].second(PMIX_ERR_TIMEOUT, "timed out", {});
    EXPECT_EQ(replies.back().status, PMIX_ERR_TIMEOUT);
}

TEST(Xstep, WhichEventsReachOtherSteps) {
    wire::event_notification ev;
    std::vector<std::string> ns;
    ev.range = PMIX_RANGE_SESSION;
    EXPECT_TRUE(reaches_other_steps(ev, "slurm.7.0", &ns));
    EXPECT_TRUE(ns.empty());  // every other step
    ev.range = PMIX_RANGE_GLOBAL;
    EXPECT_TRUE(reaches_other_steps(ev, "slurm.7.0", &ns));
    for (auto r : {PMIX_RANGE_NAMESPACE, PMIX_RANGE_LOCAL, PMIX_RANGE_UNDEF, PMIX_RANGE_RM}) {
        ev.range = r;
        EXPECT_FALSE(reaches_other_steps(ev, "slurm.7.0", &ns));
    }
    ev.range = PMIX_RANGE_CUSTOM;
    auto targets = procs({{"slurm.7.0", 1}, {"slurm.7.2", 0}, {"slurm.7.2", 1}});
    pmix_info_t cr{};
    strncpy(cr.key, PMIX_EVENT_CUSTOM_RANGE, PMIX_MAX_KEYLEN);
    pmix_data_array_t arr{PMIX_PROC, targets.size(), targets.data()};
    ASSERT_TRUE(value_load(&cr.value, &arr, PMIX_DATA_ARRAY).ok());
    ev.infos = infos({cr});
    EXPECT_TRUE(reaches_other_steps(ev, "slurm.7.0", &ns));
    EXPECT_EQ(ns, std::vector<std::string>{"slurm.7.2"});
    ev.infos = infos({});
    EXPECT_FALSE(reaches_other_steps(ev, "slurm.7.0", &ns));
}
