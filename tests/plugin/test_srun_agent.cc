#include "plugin/agent/srun/srun_agent.h"
#include "plugin/agent/stepd/agent_client.h"
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
