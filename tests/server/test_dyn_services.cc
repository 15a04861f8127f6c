// The node server's dynamic services without sockets (plugin/server/dyn*.h, connect.h): two
// nodes' publish and job-control services wired back to back (forwarding to node 0, job control
// signals across nodes), the spawn service against a recording srun agent (grow-spawn), the
// session range handed to the job's store, dyn_services routing to each, and another
// namespace's size looked up in the job's store.
#include <gtest/gtest.h>
#include <signal.h>

#include <cstring>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "plugin/server/dyn.h"
#include "plugin/services/alloc/alloc_codec.h"
#include "plugin/services/sessions/session_codec.h"
#include "tests/dyn/dyn_util.h"
#include "value.h"
#include "wire/codec.h"
#include "wire/messages.h"

using namespace pmixcpp;
using namespace pmixcpp::server;
using namespace pmixcpp::dyn_test;

// Two nodes' publish and job-control services wired back to back: node-1 requests are forwarded
// to node 0.
namespace {

struct reply_rec {
    uint64_t conn;
    uint32_t request_id;
    pmix_status_t status;
    std::string message;
    std::vector<uint8_t> body;
};

struct two_nodes {
    step_info step[2];
    std::unique_ptr<publish_service> pub[2];
    std::unique_ptr<job_control_service> jc[2];
    node_channels channels[2];  // by node: what its services registered
    std::vector<reply_rec> replies[2];
    std::deque<std::tuple<uint32_t, uint32_t, node_channel, std::vector<uint8_t>>> wire_q;  // from, to, chan, body
    std::vector<std::pair<pid_t, int>> signals[2];

    two_nodes() {
        for (uint32_t n = 0; n < 2; ++n) {
            step[n].nspace = "slurm.1.0";
            step[n].ntasks = 4;
            step[n].node_id = n;
            step[n].node_names = {"n1", "n2"};
            step[n].node_ranks = {{0, 1}, {2, 3}};
            auto reply = [this, n](uint64_t conn, uint32_t id, pmix_status_t st, const std::string &m,
                                   std::span<const uint8_t> body) {
                replies[n].push_back({conn, id, st, m, std::vector<uint8_t>(body.begin(), body.end())});
            };
            auto send_node = [this, n](uint32_t to, node_channel chan, std::span<const uint8_t> body) {
                wire_q.emplace_back(n, to, chan, std::vector<uint8_t>(body.begin(), body.end()));
            };
            publish_ops pops;
            pops.reply = reply;
            pops.send_node = send_node;
            job_control_service_ops jops;
            jops.reply = reply;
            jops.send_node = send_node;
            jops.process_of = [](uint32_t rank) -> process_handle {
                if (rank == 1) return nullptr;
                return std::make_shared<const process_ref>(-1, static_cast<pid_t>(1000 + rank));
            };
            jops.signal = [this, n](const process_ref &p, int sig) {
                signals[n].emplace_back(p.pid(), sig);
                return 0;
            };
            pub[n] = std::make_unique<publish_service>(step[n], std::vector<uint32_t>{0, 0, 1, 1}, std::move(pops));
            jc[n] = std::make_unique<job_control_service>(step[n], std::vector<uint32_t>{0, 0, 1, 1}, std::move(jops));
            EXPECT_TRUE(pub[n]->add_channels(channels[n]).ok());
            EXPECT_TRUE(jc[n]->add_channels(channels[n]).ok());
        }
    }
    void pump() {
        while (!wire_q.empty()) {
            auto [from, to, chan, body] = wire_q.front();
            wire_q.pop_front();
            EXPECT_TRUE(channels[to].dispatch(from, id_of(chan), body));
        }
    }
};


}  // namespace

TEST(DynService, LookupOnNode1WaitsForPublishOnNode0) {
    two_nodes t;
    const auto lk = static_cast<uint16_t>(wire::msg_type::lookup);
    const auto pub = static_cast<uint16_t>(wire::msg_type::publish);
    t.pub[1]->on_client(5, 2, lk, 11, lookup_payload({"svc"}, {info_num<int>(PMIX_WAIT, 0, PMIX_INT)}));
    t.pump();
    EXPECT_TRUE(t.replies[1].empty());
    EXPECT_EQ(t.pub[0]->store().waiting(), 1u);
    t.pub[0]->on_client(6, 0, pub, 12, publish_payload("svc", "tcp://x"));
    t.pump();
    ASSERT_EQ(t.replies[0].size(), 1u);
    EXPECT_EQ(t.replies[0][0].status, PMIX_SUCCESS);
    ASSERT_EQ(t.replies[1].size(), 1u);
    EXPECT_EQ(t.replies[1][0].conn, 5u);
    EXPECT_EQ(t.replies[1][0].request_id, 11u);
    ASSERT_EQ(t.replies[1][0].status, PMIX_SUCCESS);
    wire::lookup_reply r;
    ASSERT_TRUE(wire::decode_payload(t.replies[1][0].body, &r).ok());
    ASSERT_EQ(r.owners.size(), 1u);
    EXPECT_EQ(r.owners[0].rank, 0u);
    EXPECT_STREQ(r.data[0].value.data.string, "tcp://x");

    // Publisher on node 1 (rank 3) leaves: its PROC data is removed on node 0.
    t.pub[1]->on_client(7, 3, pub, 13, publish_payload("svc3", "v"));
    t.pump();
    EXPECT_EQ(t.pub[0]->store().size(), 2u);
    t.pub[1]->rank_left(3);
    t.pump();
    EXPECT_EQ(t.pub[0]->store().size(), 1u);
    // Unpublish of a key the rank does not own: not found.
    wire::unpublish_request u;
    u.keys = {"svc"};
    wire::Writer w;
    ASSERT_TRUE(wire::encode(w, u).ok());
    t.pub[1]->on_client(8, 2, static_cast<uint16_t>(wire::msg_type::unpublish), 14, w.data());
    t.pump();
    EXPECT_EQ(t.replies[1].back().status, PMIX_ERR_NOT_FOUND);
}

TEST(DynService, LookupTimesOut) {
    two_nodes t;
    t.pub[0]->on_client(5, 0, static_cast<uint16_t>(wire::msg_type::lookup), 1,
                        lookup_payload({"never"}, {info_num<bool>(PMIX_WAIT, true, PMIX_BOOL),
                                                   info_num<int>(PMIX_TIMEOUT, 1, PMIX_INT)}));
    ASSERT_TRUE(t.pub[0]->next_deadline().has_value());
    t.pub[0]->expire(server_clock::now() + std::chrono::seconds(2));
    ASSERT_EQ(t.replies[0].size(), 1u);
    EXPECT_EQ(t.replies[0][0].status, PMIX_ERR_TIMEOUT);
}

TEST(DynService, JobControlSignalsAcrossNodes) {
    two_nodes t;
    wire::job_control_request m;
    pmix_proc_t p{};
    strcpy(p.nspace, "slurm.1.0");
    p.rank = 0;
    m.targets.push_back(p);
    p.rank = 3;
    m.targets.push_back(p);
    m.infos = infos({info_num<int>(PMIX_JOB_CTRL_SIGNAL, SIGUSR1, PMIX_INT)});
    ASSERT_TRUE(t.jc[0]->job_control(9, 0, 1, m));
    t.pump();
    ASSERT_EQ(t.replies[0].size(), 1u);
    EXPECT_EQ(t.replies[0][0].status, PMIX_SUCCESS);
    ASSERT_EQ(t.signals[0].size(), 1u);
    EXPECT_EQ(t.signals[0][0], std::make_pair(pid_t(1000), SIGUSR1));
    ASSERT_EQ(t.signals[1].size(), 1u);
    EXPECT_EQ(t.signals[1][0], std::make_pair(pid_t(1003), SIGUSR1));

    // Terminate the whole namespace: SIGTERM now, SIGKILL after the grace (rank 1 has no pid).
    wire::job_control_request all;
    all.infos = infos({info_num<bool>(PMIX_JOB_CTRL_TERMINATE, true, PMIX_BOOL)});
    ASSERT_TRUE(t.jc[1]->job_control(9, 2, 2, all));
    t.pump();
    EXPECT_EQ(t.signals[1].size(), 3u);  // + ranks 2, 3
    EXPECT_EQ(t.signals[0].size(), 2u);  // + rank 0
    t.jc[1]->expire(server_clock::now() + std::chrono::seconds(kTerminateGraceSec + 1));
    EXPECT_EQ(t.signals[1].back().second, SIGKILL);

    // Another namespace, a bad rank, no action.
    wire::job_control_request other;
    strcpy(p.nspace, "other");
    other.targets.push_back(p);
    other.infos = infos({info_num<bool>(PMIX_JOB_CTRL_KILL, true, PMIX_BOOL)});
    ASSERT_TRUE(t.jc[0]->job_control(9, 0, 3, other));
    EXPECT_EQ(t.replies[0].back().status, PMIX_ERR_NOT_SUPPORTED);
    wire::job_control_request none;
    EXPECT_FALSE(t.jc[0]->job_control(9, 0, 4, none));
}

TEST(DynService, BadNodeMessagesAreDropped) {
    two_nodes t;
    std::vector<uint8_t> junk = {1, 2, 3};
    EXPECT_TRUE(t.channels[0].dispatch(1, id_of(node_channel::pubsub_request), junk));
    EXPECT_TRUE(t.channels[1].dispatch(0, id_of(node_channel::pubsub_reply), junk));
    EXPECT_TRUE(t.channels[1].dispatch(0, id_of(node_channel::job_control), junk));
    EXPECT_TRUE(t.replies[0].empty());
    EXPECT_TRUE(t.replies[1].empty());
    EXPECT_TRUE(t.signals[1].empty());
}

TEST(DynService, SpawnWithoutAgentIsNotSupported) {
    step_info step;
    step.nspace = "slurm.1.0";
    step.ntasks = 1;
    step.node_names = {"n1"};
    step.node_ranks = {{0}};
    std::vector<reply_rec> replies;
    spawn_ops ops;
    ops.reply = [&](uint64_t conn, uint32_t id, pmix_status_t st, const std::string &m, std::span<const uint8_t> body) {
        replies.push_back({conn, id, st, m, std::vector<uint8_t>(body.begin(), body.end())});
    };
    spawn_service svc(step, std::move(ops));
    wire::spawn_request s;
    s.apps.push_back(wire::spawn_app{"/bin/true", {"/bin/true"}, {}, {}, 1, InfoArray()});
    wire::Writer w;
    ASSERT_TRUE(wire::encode(w, s).ok());
    svc.on_spawn(3, 0, 1, w.data());
    ASSERT_EQ(replies.size(), 1u);
    EXPECT_EQ(replies[0].status, PMIX_ERR_NOT_SUPPORTED);
}


namespace {
// One node's spawn service whose srun agent records what it is asked (and answers nothing).
struct grow_harness {
    step_info step;
    std::unique_ptr<spawn_service> svc;
    std::vector<reply_rec> replies;
    std::vector<std::pair<services::service, std::vector<uint8_t>>> asked;
    explicit grow_harness(uint32_t grow_timeout) {
        step.nspace = "slurm.1.0";
        step.ntasks = 2;
        step.node_id = 0;
        step.node_names = {"n1"};
        step.node_ranks = {{0, 1}};
        spawn_ops ops;
        ops.reply = [this](uint64_t conn, uint32_t id, pmix_status_t st, const std::string &m,
                           std::span<const uint8_t> body) {
            replies.push_back({conn, id, st, m, std::vector<uint8_t>(body.begin(), body.end())});
        };
        ops.agent = [this](services::service s, std::vector<uint8_t> body, int, spawn_ops::done_fn) {
            asked.emplace_back(s, std::move(body));
        };
        ops.grow_timeout_sec = grow_timeout;
        svc = std::make_unique<spawn_service>(step, std::move(ops));
    }
    // A spawn of /bin/true whose app environment is `env` (and app info PMIX_HOST if `host`).
    void spawn(std::vector<std::string> env, const char *host = nullptr, bool attribute = false) {
        wire::spawn_request s;
        s.apps.push_back(wire::spawn_app{"/bin/true", {"/bin/true"}, std::move(env), {}, 1, InfoArray()});
        if (host) s.apps[0].info = infos({info_str(PMIX_HOST, host)});
        if (attribute) s.job_info = infos({info_num<uint64_t>(kSpawnGrow, 2, PMIX_UINT64)});
        wire::Writer w;
        ASSERT_TRUE(wire::encode(w, s).ok());
        svc->on_spawn(3, 0, static_cast<uint32_t>(replies.size() + asked.size() + 1), w.data());
    }
};
}  // namespace

TEST(Spawn, GrowAskedThroughTheAppsEnvironment) {
    grow_harness h(45);
    h.spawn({"A=1", std::string(kSpawnGrowEnv) + "=3"});
    ASSERT_TRUE(h.replies.empty()) << h.replies[0].message;
    ASSERT_EQ(h.asked.size(), 1u);
    EXPECT_EQ(h.asked[0].first, services::service::alloc) << "the job grows first";
    alloc::agent_request r;
    wire::Reader rd(h.asked[0].second.data(), h.asked[0].second.size());
    ASSERT_TRUE(alloc::decode(rd, &r).ok());
    EXPECT_EQ(r.directive, PMIX_ALLOC_EXTEND);
    auto nodes = value_to_number<int64_t>(alloc::find_info(r.infos, PMIX_ALLOC_NUM_NODES)->value);
    EXPECT_EQ(nodes.value(), 3);
    auto timeout = value_to_number<int64_t>(alloc::find_info(r.infos, PMIX_TIMEOUT)->value);
    EXPECT_EQ(timeout.value(), 45) << "no PMIX_TIMEOUT in the spawn: the server's default";

    // Several apps may repeat the same value; anything else is refused before srun is asked.
    for (auto bad : std::vector<std::vector<std::string>>{
             {"PMIXCPP_SPAWN_GROW=0"}, {"PMIXCPP_SPAWN_GROW=65537"}, {"PMIXCPP_SPAWN_GROW=-2"},
             {"PMIXCPP_SPAWN_GROW=2 "}, {"PMIXCPP_SPAWN_GROW=0x2"}, {"PMIXCPP_SPAWN_GROW="},
             {"PMIXCPP_SPAWN_GROW=18446744073709551617"}, {"PMIXCPP_SPAWN_GROW=1", "PMIXCPP_SPAWN_GROW=2"}}) {
        grow_harness b(45);
        b.spawn(bad);
        ASSERT_EQ(b.replies.size(), 1u) << bad[0];
        EXPECT_EQ(b.replies[0].status, PMIX_ERR_BAD_PARAM) << bad[0];
        EXPECT_TRUE(b.asked.empty()) << bad[0];
    }
    grow_harness host(45);
    host.spawn({"PMIXCPP_SPAWN_GROW=1"}, "n1");
    ASSERT_EQ(host.replies.size(), 1u);
    EXPECT_EQ(host.replies[0].status, PMIX_ERR_BAD_PARAM) << "the grow places the processes";
    grow_harness both(45);
    both.spawn({"PMIXCPP_SPAWN_GROW=2"}, nullptr, true);
    ASSERT_EQ(both.replies.size(), 1u);
    EXPECT_EQ(both.replies[0].status, PMIX_ERR_BAD_PARAM) << "the variable and the attribute: one of them";
    EXPECT_TRUE(host.asked.empty() && both.asked.empty());

    // PMIxCppAllocTimeout=0: the grow waits as long as Slurm keeps it pending.
    grow_harness unlimited(0);
    unlimited.spawn({"PMIXCPP_SPAWN_GROW=1"});
    ASSERT_EQ(unlimited.asked.size(), 1u);
    alloc::agent_request u;
    wire::Reader ru(unlimited.asked[0].second.data(), unlimited.asked[0].second.size());
    ASSERT_TRUE(alloc::decode(ru, &u).ok());
    EXPECT_EQ(value_to_number<int64_t>(alloc::find_info(u.infos, PMIX_TIMEOUT)->value).value(), 0);
}

TEST(DynService, SessionRangeGoesToTheJobStore) {
    two_nodes t;
    std::vector<std::vector<uint8_t>> sent;
    publish_ops ops;
    ops.reply = [&](uint64_t conn, uint32_t id, pmix_status_t st, const std::string &m, std::span<const uint8_t> body) {
        t.replies[1].push_back({conn, id, st, m, std::vector<uint8_t>(body.begin(), body.end())});
    };
    ops.send_node = [&](uint32_t to, node_channel chan, std::span<const uint8_t> body) {
        t.wire_q.emplace_back(1, to, chan, std::vector<uint8_t>(body.begin(), body.end()));
    };
    ops.job_store = [&](std::vector<uint8_t> body, int, publish_ops::done_fn done) {
        sent.push_back(std::move(body));
        done(PMIX_SUCCESS, {}, {});
    };
    publish_service svc(t.step[1], {0, 0, 1, 1}, std::move(ops));
    const auto pub = static_cast<uint16_t>(wire::msg_type::publish);
    svc.on_client(5, 2, pub, 1, publish_payload("s", "v"));  // no range: the session
    ASSERT_EQ(sent.size(), 1u);
    session::agent_request r;
    ASSERT_TRUE(session::decode_request(sent[0], &r).ok());
    EXPECT_EQ(r.nspace, "slurm.1.0");
    EXPECT_EQ(r.rank, 2u);
    ASSERT_EQ(t.replies[1].size(), 1u);
    EXPECT_EQ(t.replies[1][0].status, PMIX_SUCCESS);
    // PMIX_RANGE_NAMESPACE: the step's store on node 0.
    wire::publish_request p;
    p.data = infos({info_str("n", "v")});
    p.directives = infos({info_num<pmix_data_range_t>(PMIX_RANGE, PMIX_RANGE_NAMESPACE, PMIX_DATA_RANGE)});
    wire::Writer w;
    ASSERT_TRUE(wire::encode(w, p).ok());
    svc.on_client(5, 2, pub, 2, w.data());
    EXPECT_EQ(sent.size(), 1u);
    ASSERT_EQ(t.wire_q.size(), 1u);
    EXPECT_EQ(std::get<2>(t.wire_q.front()), node_channel::pubsub_request);
    // A range value the standard does not define (OpenMPI 5.0's MPI_Lookup_name sends one): the
    // default, the session, where OpenMPI's MPI_Publish_name put the name.
    wire::lookup_request lk;
    lk.keys.push_back("s");
    lk.directives = infos({info_num<pmix_data_range_t>(PMIX_RANGE, 0x5a, PMIX_DATA_RANGE)});
    wire::Writer lw;
    ASSERT_TRUE(wire::encode(lw, lk).ok());
    svc.on_client(5, 3, static_cast<uint16_t>(wire::msg_type::lookup), 3, lw.data());
    EXPECT_EQ(sent.size(), 2u);
    EXPECT_EQ(t.wire_q.size(), 1u);
    // The session publisher leaves: the job store hears it.
    svc.rank_left(2);
    EXPECT_EQ(sent.size(), 3u);
}

// --- the dynamic services together (dyn.h), and connect's own parts (connect.h) ----------------

// dyn_services routes each request to its service and a rank that leaves, the node channels and
// the timers to each service that keeps something for them.
TEST(DynServices, RoutesToEachService) {
    step_info step;
    step.nspace = "slurm.1.0";
    step.ntasks = 2;
    step.node_names = {"n1"};
    step.node_ranks = {{0, 1}};
    std::vector<reply_rec> replies;
    auto reply = [&](uint64_t conn, uint32_t id, pmix_status_t st, const std::string &m, std::span<const uint8_t> body) {
        replies.push_back({conn, id, st, m, std::vector<uint8_t>(body.begin(), body.end())});
    };
    publish_ops pops;
    pops.reply = reply;
    spawn_ops sops;
    sops.reply = reply;
    job_control_service_ops jops;
    jops.reply = reply;
    std::vector<std::pair<pid_t, int>> signals;
    jops.process_of = [](uint32_t rank) -> process_handle {
        return std::make_shared<const process_ref>(-1, static_cast<pid_t>(1000 + rank));
    };
    jops.signal = [&](const process_ref &p, int sig) {
        signals.emplace_back(p.pid(), sig);
        return 0;
    };
    connect_ops cops;
    cops.reply = reply;
    cops.data_of = [](uint32_t, relation) -> Result<InfoArray> { return InfoArray(); };
    dyn_services dyn(std::make_unique<publish_service>(step, std::vector<uint32_t>{0, 0}, std::move(pops)),
                     std::make_unique<spawn_service>(step, std::move(sops)),
                     std::make_unique<job_control_service>(step, std::vector<uint32_t>{0, 0}, std::move(jops)),
                     std::make_unique<connect_service>(step, std::vector<uint32_t>{0, 0}, std::move(cops), 300));
    node_channels channels;
    ASSERT_TRUE(dyn.add_channels(channels).ok());
    EXPECT_STREQ(channels.name_of(node_channel::pubsub_request), "pubsub request");
    EXPECT_STREQ(channels.name_of(node_channel::pubsub_reply), "pubsub reply");
    EXPECT_STREQ(channels.name_of(node_channel::job_control), "job control");
    EXPECT_FALSE(dyn.next_deadline().has_value());

    // publish (node 0 keeps the step's store), then the publisher leaves: its data goes.
    dyn.on_client(1, 1, static_cast<uint16_t>(wire::msg_type::publish), 1, publish_payload("k", "v"));
    ASSERT_EQ(replies.size(), 1u);
    EXPECT_EQ(replies[0].status, PMIX_SUCCESS);
    EXPECT_EQ(dyn.publish().store().size(), 1u);
    dyn.rank_left(1);
    EXPECT_EQ(dyn.publish().store().size(), 0u);

    // a lookup that waits: the earliest deadline is its; past it, it fails.
    dyn.on_client(2, 0, static_cast<uint16_t>(wire::msg_type::lookup), 2,
                  lookup_payload({"never"}, {info_num<bool>(PMIX_WAIT, true, PMIX_BOOL), info_num<int>(PMIX_TIMEOUT, 1, PMIX_INT)}));
    ASSERT_TRUE(dyn.next_deadline().has_value());
    // a terminate: SIGTERM now, SIGKILL after the grace.
    wire::job_control_request all;
    all.infos = infos({info_num<bool>(PMIX_JOB_CTRL_TERMINATE, true, PMIX_BOOL)});
    ASSERT_TRUE(dyn.job_control(3, 0, 3, all));
    EXPECT_EQ(signals.size(), 2u);
    dyn.expire(server_clock::now() + std::chrono::seconds(kTerminateGraceSec + 1));
    ASSERT_EQ(signals.size(), 6u);  // each: is it still there (signal 0), then SIGKILL
    EXPECT_EQ(signals.back().second, SIGKILL);
    EXPECT_EQ(replies.back().status, PMIX_ERR_TIMEOUT) << "the lookup expired with the rest";
    EXPECT_FALSE(dyn.next_deadline().has_value());

    // spawn without srun's agent; a connect frame that does not decode.
    wire::spawn_request s;
    s.apps.push_back(wire::spawn_app{"/bin/true", {"/bin/true"}, {}, {}, 1, InfoArray()});
    wire::Writer w;
    ASSERT_TRUE(wire::encode(w, s).ok());
    dyn.on_spawn(4, 0, 4, w.data());
    EXPECT_EQ(replies.back().request_id, 4u);
    EXPECT_EQ(replies.back().status, PMIX_ERR_NOT_SUPPORTED);
    const std::vector<uint8_t> junk = {1, 2, 3};
    dyn.on_connect(5, 0, 5, connect_op::connect, junk);
    EXPECT_EQ(replies.back().request_id, 5u);
    EXPECT_EQ(replies.back().status, PMIX_ERR_UNPACK_FAILURE);
}

// Another namespace's size, asked of the job's store: the lookup request it makes, and the
// answers it takes.
TEST(ConnectService, NamespaceSizeComesFromTheJobStore) {
    std::vector<std::vector<uint8_t>> asked;
    connect_ops::done_fn answer;
    auto lookup = namespace_size_lookup("slurm.1.0", [&](std::vector<uint8_t> body, int, connect_ops::done_fn done) {
        asked.push_back(std::move(body));
        answer = std::move(done);
    });
    std::vector<std::optional<uint32_t>> got;
    lookup("slurm.1.4", [&](std::optional<uint32_t> n) { got.push_back(n); });
    ASSERT_EQ(asked.size(), 1u);
    session::agent_request req;
    ASSERT_TRUE(session::decode_request(asked[0], &req).ok());
    EXPECT_EQ(req.type, static_cast<uint8_t>(wire::msg_type::lookup));
    EXPECT_EQ(req.nspace, "slurm.1.0");
    EXPECT_EQ(req.rank, PMIX_RANK_WILDCARD);
    wire::lookup_request lk;
    ASSERT_TRUE(wire::decode_payload(req.payload, &lk).ok());
    ASSERT_EQ(lk.keys.size(), 1u);
    EXPECT_EQ(lk.keys[0], std::string(kNamespaceSizeKey) + "slurm.1.4");

    // the store's answer: one entry, the size
    pmix_info_t size = info_num<uint32_t>(lk.keys[0].c_str(), 6, PMIX_UINT32);
    wire::Writer iw;
    ASSERT_TRUE(wire::encode_info(iw, size).ok());
    std::vector<uint8_t> info_bytes = iw.data();
    wire::encoded_lookup_entry e;
    e.info = info_bytes;
    wire::Writer rw;
    ASSERT_TRUE(wire::encode_lookup_reply(rw, std::span<const wire::encoded_lookup_entry>(&e, 1)).ok());
    answer(PMIX_SUCCESS, {}, rw.data());
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0], std::optional<uint32_t>(6));

    // not found, or an answer that does not decode: unknown
    lookup("slurm.1.5", [&](std::optional<uint32_t> n) { got.push_back(n); });
    answer(PMIX_ERR_NOT_FOUND, "no such key", {});
    lookup("slurm.1.6", [&](std::optional<uint32_t> n) { got.push_back(n); });
    answer(PMIX_SUCCESS, {}, {1, 2, 3});
    ASSERT_EQ(got.size(), 3u);
    EXPECT_FALSE(got[1].has_value());
    EXPECT_FALSE(got[2].has_value());
}
