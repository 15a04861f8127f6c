// Allocation requests through the real pieces, still without Slurm: srun's agent hands an alloc
// frame to its handler (and keeps serving reports), and the server answers alloc/query frames on
// its socket through an alloc_host that answers from another thread, with the completion event.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>

#include <filesystem>
#include <mutex>
#include <thread>

#include "../../plugin/agent/proto/agent_io.h"
#include "../../plugin/agent/stepd/agent_client.h"
#include "../net/test_credentials.h"
#include "../../plugin/services/alloc/alloc_codec.h"
#include "../../plugin/services/service_ids.h"
#include "../../plugin/agent/srun/srun_agent.h"
#include "../../plugin/common/step_env.h"
#include "../../plugin/server/server.h"
#include "../server/client_util.h"

using namespace pmixcpp;
using pmixcpp::testing::raw_client;

namespace {

sockaddr_storage loopback() {
    sockaddr_storage ss{};
    auto *in = reinterpret_cast<sockaddr_in *>(&ss);
    in->sin_family = AF_INET;
    in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return ss;
}

}  // namespace

TEST(AgentAllocChannel, HandlerGetsTheConnectionAndReportsStillWork) {
    std::mutex mu;
    std::vector<agent::report> reports;
    pmixcpp::testing::agent_auth auth, forger;
    auto agent = srun_agent::start([&](const agent::report &r) {
        std::lock_guard<std::mutex> lock(mu);
        reports.push_back(r);
    }, auth.keys());
    ASSERT_TRUE(agent.ok());
    agent.value()->services().set_names(&services::names());
    std::vector<std::thread> answerers;
    ASSERT_TRUE(agent.value()->services().add(services::id_of(services::service::alloc), [&](agent::responder answer, std::vector<uint8_t> body) {
        // answer later, from another thread, as the bridge does
        answerers.emplace_back([answer, body = std::move(body)] {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            std::vector<uint8_t> out(body);
            out.push_back(0x42);
            (void)answer.send(agent::reply{PMIX_SUCCESS, {}, out});
        });
    }).ok());
    // several at once: the agent never waits for an answer
    std::vector<std::thread> callers;
    std::atomic<int> ok{0};
    for (int i = 0; i < 8; ++i)
        callers.emplace_back([&, i] {
            std::vector<uint8_t> body = {static_cast<uint8_t>(i)};
            auto r = agent::call_agent(loopback(), agent.value()->port(), auth.client(), services::id_of(services::service::alloc),
                                       body, 5000);
            if (r.ok() && r->body == std::vector<uint8_t>{static_cast<uint8_t>(i), 0x42}) ++ok;
        });
    for (auto &t : callers) t.join();
    EXPECT_EQ(ok.load(), 8);
    auto wrong = agent::call_agent(loopback(), agent.value()->port(), forger.client(), services::id_of(services::service::alloc),
                                   std::vector<uint8_t>{1}, 5000);
    EXPECT_FALSE(wrong.ok());
    // A service nobody registered: answered PMIX_ERR_NOT_SUPPORTED, the agent keeps serving.
    auto none = agent::call_agent(loopback(), agent.value()->port(), auth.client(), services::id_of(services::service::fabric),
                                  std::vector<uint8_t>{1}, 5000);
    ASSERT_TRUE(none.ok()) << none.status().message();
    EXPECT_EQ(none->status, PMIX_ERR_NOT_SUPPORTED);

    agent::report r;
    r.what = agent::report::kind::abort;
    r.status = 3;
    r.node = "n1";
    r.message = "still heard";
    EXPECT_TRUE(agent::client(loopback(), agent.value()->port(), auth.client()).report(r).ok());
    agent.value()->stop();
    for (auto &t : answerers) t.join();
    std::lock_guard<std::mutex> lock(mu);
    ASSERT_EQ(reports.size(), 1u);
    EXPECT_EQ(reports[0].message, "still heard");
}

namespace {

// Answers every request from a thread of its own: NEW granted with a job id, EXTEND refused,
// queries with a remaining time.
struct threaded_host : server::alloc_host {
    std::vector<std::thread> threads;
    ~threaded_host() override {
        for (auto &t : threads) t.join();
    }
    void forward_alloc(std::vector<uint8_t> request, int, reply_fn done) override {
        threads.emplace_back([request = std::move(request), done] {
            alloc::agent_request req;
            wire::Reader r(request.data(), request.size());
            if (!alloc::decode(r, &req).ok()) return done(Status(PMIX_ERR_UNPACK_FAILURE, "bad request"));
            alloc::agent_reply rep;
            alloc::info_builder b;
            if (req.op == alloc::agent_op::query) {
                b.add_u32(PMIX_TIME_REMAINING, 77);
            } else if (req.directive == PMIX_ALLOC_NEW) {
                b.add_string(PMIX_ALLOC_ID, "7.0.1").add_string(PMIX_JOBID, "8").add_string(PMIX_ALLOC_NODE_LIST, "n5");
            } else {
                rep.status = PMIX_ERR_NO_PERMISSIONS;
                rep.message = "slurmctld: Access/permission denied";
                b.add_string(PMIX_ALLOC_ID, "7.0.2");
            }
            rep.results = b.take();
            done(alloc::encode_reply(rep));
        });
    }
};

struct null_host : server::server_host {
    Status abort(const std::string &, uint32_t, int, const std::string &, const std::vector<pmix_proc_t> &) override {
        return Status::success();
    }
    void log(const std::string &, uint32_t, const std::string &, const std::string &) override {}
};

}  // namespace

TEST(ServerAlloc, RequestsQueriesAndTheCompletionEvent) {
    char tmpl[] = "/tmp/pmixcpp-alloc-test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    step_info step;
    step.nspace = make_namespace(7, 0);
    step.job_id = 7;
    step.uid = getuid();
    step.gid = getgid();
    step.ntasks = 2;
    step.node_id = 0;
    step.node_names = {"n1"};
    step.node_ranks = {{0, 1}};
    step.universe_size = 2;
    step.client_token = "0123456789abcdef";
    null_host host;
    threaded_host ahost;
    server::server_options opts;
    opts.alloc = &ahost;
    ASSERT_TRUE(prepare_step_dir(step, tmpl).ok());
    auto srv = server::pmix_server::start(step, server::node_topology{"0", "SK0:CR0:HT0", 0}, &host, opts);
    ASSERT_TRUE(srv.ok()) << srv.status().message();
    {
        raw_client c0, c1;
        ASSERT_TRUE(c0.open(step.server_socket));
        ASSERT_EQ(c0.do_connect(step.nspace, 0, step.client_token), PMIX_SUCCESS);
        ASSERT_TRUE(c1.open(step.server_socket));
        ASSERT_EQ(c1.do_connect(step.nspace, 1, step.client_token), PMIX_SUCCESS);

        wire::alloc_request a;
        a.directive = PMIX_ALLOC_NEW;
        ASSERT_TRUE(c0.send_msg(wire::msg_type::alloc, 5, a));
        auto r = c0.recv_reply();
        ASSERT_TRUE(r);
        EXPECT_EQ(r->id, 5u);
        EXPECT_EQ(r->status, PMIX_SUCCESS) << r->message;
        wire::info_reply body;
        ASSERT_TRUE(raw_client::body(*r, &body));
        EXPECT_EQ(alloc::info_string(body.results, PMIX_JOBID).value_or(""), "8");
        // rank 1 gets the completion event
        auto ev = c1.recv_frame(5000);
        ASSERT_TRUE(ev);
        EXPECT_EQ(ev->type, static_cast<uint16_t>(wire::msg_type::event));
        wire::event_notification n;
        ASSERT_TRUE(wire::decode_payload(ev->payload, &n).ok());
        EXPECT_EQ(n.status, PMIX_NOTIFY_ALLOC_COMPLETE);
        EXPECT_EQ(alloc::info_string(n.infos, PMIX_ALLOC_ID).value_or(""), "7.0.1");

        wire::alloc_request t;
        t.directive = PMIX_ALLOC_EXTEND;
        pmix_info_t *ti = static_cast<pmix_info_t *>(calloc(1, sizeof(pmix_info_t)));
        strncpy(ti->key, PMIX_ALLOC_TIME, PMIX_MAX_KEYLEN);
        uint32_t secs = 60;
        ASSERT_TRUE(value_load(&ti->value, &secs, PMIX_UINT32).ok());
        t.infos = InfoArray(ti, 1);
        ASSERT_TRUE(c0.send_msg(wire::msg_type::alloc, 6, t));
        r = c0.recv_reply();
        ASSERT_TRUE(r);
        EXPECT_EQ(r->status, PMIX_ERR_NO_PERMISSIONS);
        EXPECT_NE(r->message.find("Access/permission denied"), std::string::npos);

        wire::alloc_request bad;
        bad.directive = 77;
        ASSERT_TRUE(c0.send_msg(wire::msg_type::alloc, 7, bad));
        r = c0.recv_reply();
        ASSERT_TRUE(r);
        EXPECT_EQ(r->status, PMIX_ERR_BAD_PARAM);

        wire::query_request q;
        q.queries.resize(1);
        q.queries[0].keys = {PMIX_QUERY_NAMESPACES, PMIX_TIME_REMAINING};
        ASSERT_TRUE(c0.send_msg(wire::msg_type::query, 8, q));
        r = c0.recv_reply();
        ASSERT_TRUE(r);
        EXPECT_EQ(r->status, PMIX_SUCCESS) << r->message;
        wire::info_reply qb;
        ASSERT_TRUE(raw_client::body(*r, &qb));
        EXPECT_EQ(qb.results.size(), 3u);  // one PMIX_QUERY_RESULTS (v4.1), then the 2 answers flat
        EXPECT_TRUE(PMIX_CHECK_KEY(&qb.results[0], PMIX_QUERY_RESULTS));
        EXPECT_EQ(alloc::info_string(qb.results, PMIX_QUERY_NAMESPACES).value_or(""), step.nspace);
    }
    srv.value()->stop();
    remove_step_dir(step);
    std::filesystem::remove_all(tmpl);
}
