#include "plugin/agent/srun/srun_agent.h"
#include "plugin/agent/stepd/agent_client.h"
#include "plugin/services/service_ids.h"
#include "tests/net/test_credentials.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <mutex>
#include <vector>

using namespace pmixcpp;

namespace {
sockaddr_storage loopback() {
    sockaddr_storage ss{};
    auto *in = reinterpret_cast<sockaddr_in *>(&ss);
    in->sin_family = AF_INET;
    in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return ss;
}
}  // namespace

TEST(SrunAgent, DeliversReportsAndKeepsFirstStatus) {
    std::mutex mu;
    std::vector<agent::report> got;
    pmixcpp::testing::agent_auth auth;
    auto agent = srun_agent::start([&](const agent::report &r) {
        std::lock_guard<std::mutex> lock(mu);
        got.push_back(r);
    }, auth.keys());
    ASSERT_TRUE(agent.ok()) << agent.status().message();
    EXPECT_EQ(agent.value()->exit_code(), 0);
    EXPECT_NE(agent.value()->port(), 0);

    agent::report r;
    r.what = agent::report::kind::abort;
    r.status = 7;
    r.node = "n2";
    r.message = "rank 3 aborted";
    ASSERT_TRUE(agent::client(loopback(), agent.value()->port(), auth.client()).report(r).ok());
    r.status = 9;
    ASSERT_TRUE(agent::client(loopback(), agent.value()->port(), auth.client()).report(r).ok());
    EXPECT_EQ(agent.value()->exit_code(), 7) << "the first status wins";
    std::lock_guard<std::mutex> lock(mu);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0].node, "n2");
    EXPECT_EQ(got[0].message, "rank 3 aborted");
    EXPECT_EQ(got[0].what, agent::report::kind::abort);
}

TEST(SrunAgent, RefusesForgedCredentialsAndGarbage) {
    int calls = 0;
    pmixcpp::testing::agent_auth auth, forger;
    auto agent = srun_agent::start([&](const agent::report &) { ++calls; }, auth.keys());
    ASSERT_TRUE(agent.ok());
    agent::report r;
    EXPECT_FALSE(agent::client(loopback(), agent.value()->port(), forger.client()).report(r, 2000).ok());

    // Raw garbage on the socket: the agent drops it and keeps serving.
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_storage ss = loopback();
    reinterpret_cast<sockaddr_in *>(&ss)->sin_port = htons(agent.value()->port());
    ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr *>(&ss), sizeof(sockaddr_in)), 0);
    const char junk[] = "GET / HTTP/1.0\r\n\r\n";
    ASSERT_GT(write(fd, junk, sizeof(junk)), 0);
    char c;
    EXPECT_LE(read(fd, &c, 1), 0) << "connection closed without an acknowledgement";
    close(fd);

    EXPECT_EQ(calls, 0);
    EXPECT_EQ(agent.value()->exit_code(), 0);
    r.status = 3;
    EXPECT_TRUE(agent::client(loopback(), agent.value()->port(), auth.client()).report(r).ok());
    EXPECT_EQ(calls, 1);
    agent.value()->stop();
    EXPECT_FALSE(agent::client(loopback(), agent.value()->port(), auth.client()).report(r, 1000).ok());
}

// The table takes a handler only for an id the layer above names, once.
TEST(ServiceTable, RegistersOnlyNamedServicesOnce) {
    agent::service_table t;
    auto h = [](agent::responder, std::vector<uint8_t>) {};
    const agent::service_id spawn = services::id_of(services::service::spawn);
    EXPECT_FALSE(t.add(spawn, h).ok()) << "no names: the agent knows no service of the layer above";
    t.set_names(&services::names());
    EXPECT_FALSE(t.add(agent::kReport, h).ok()) << "the agent's own";
    EXPECT_FALSE(t.add(agent::kRendezvous, h).ok()) << "the agent's own";
    EXPECT_FALSE(t.add(40, h).ok()) << "an id nobody names";
    EXPECT_FALSE(t.add(spawn, nullptr).ok());
    EXPECT_EQ(t.find(spawn), nullptr);
    ASSERT_TRUE(t.add(spawn, h).ok());
    EXPECT_NE(t.find(spawn), nullptr);
    EXPECT_EQ(t.add(spawn, h).code(), PMIX_ERR_EXISTS);
    EXPECT_EQ(t.find(services::id_of(services::service::spawn_watch)), nullptr);
    EXPECT_EQ(t.find(0xffff), nullptr);
}

// Names for log lines: the agent's own, the layer above's, "unknown" for the rest.
TEST(ServiceTable, NamesComeFromTheLayerAbove) {
    const agent::service_names *n = &services::names();
    EXPECT_STREQ(agent::service_name(n, agent::kReport), "report");
    EXPECT_STREQ(agent::service_name(nullptr, agent::kRendezvous), "rendezvous");
    EXPECT_STREQ(agent::service_name(n, services::id_of(services::service::xstep)), "cross-step");
    EXPECT_STREQ(agent::service_name(nullptr, services::id_of(services::service::xstep)), "unknown");
    EXPECT_STREQ(agent::service_name(n, 40), "unknown");
    EXPECT_TRUE(agent::is_service(nullptr, agent::kReport));
    EXPECT_FALSE(agent::is_service(nullptr, services::id_of(services::service::alloc)));
    EXPECT_TRUE(agent::is_service(n, services::id_of(services::service::alloc)));
    EXPECT_FALSE(agent::is_service(n, 0));
    EXPECT_FALSE(agent::is_service(n, 40));
    EXPECT_FALSE(agent::is_service(n, agent::kReplyFrame));
}

// A named service nobody registered is answered PMIX_ERR_NOT_SUPPORTED; an id nobody names is a
// malformed request: the connection is closed without an answer, and the agent serves on.
TEST(SrunAgent, UnknownServiceIdClosesTheConnection) {
    pmixcpp::testing::agent_auth auth;
    auto agent = srun_agent::start(nullptr, auth.keys());
    ASSERT_TRUE(agent.ok());
    agent.value()->services().set_names(&services::names());
    const std::vector<uint8_t> body{1};
    auto none = agent::call_agent(loopback(), agent.value()->port(), auth.client(),
                                  services::id_of(services::service::fabric), body, 5000);
    ASSERT_TRUE(none.ok()) << none.status().message();
    EXPECT_EQ(none->status, PMIX_ERR_NOT_SUPPORTED);
    EXPECT_NE(none->message.find("fabric"), std::string::npos) << none->message;
    auto unknown = agent::call_agent(loopback(), agent.value()->port(), auth.client(), 40, body, 5000);
    ASSERT_FALSE(unknown.ok());
    EXPECT_EQ(unknown.status().code(), PMIX_ERR_UNREACH) << unknown.status().message();
    agent::report r;
    r.what = agent::report::kind::abort;
    r.status = 3;
    r.node = "n1";
    EXPECT_TRUE(agent::client(loopback(), agent.value()->port(), auth.client()).report(r).ok());
    EXPECT_EQ(agent.value()->exit_code(), 3);
}
