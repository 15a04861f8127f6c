// The server's native listener (plugin/server/server.cc) in-process, on a temporary step
// directory, served to real OpenPMIx 4.2 clients (tests/native/openpmix/native_modex.c, built
// here against Debian's libpmix2 with pkg-config): Init, Put/Commit, a collecting Fence, the Get of
// a peer's key, a second Fence, Finalize; and its requests decoded from the bytes such a client
// sends (requests.h), hostile ones included.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "plugin/common/process_ref.h"
#include "plugin/common/step_env.h"
#include "plugin/net/listener_guard.h"
#include "plugin/native/requests.h"
#include "plugin/native/session.h"
#include "plugin/server/server.h"

using namespace pmixcpp;
using namespace pmixcpp::native;

namespace {

struct no_host : server::server_host {
    std::mutex m;
    int aborts = 0, abort_status = 0;
    uint32_t abort_rank = 0;
    std::string abort_message;
    Status abort(const std::string &, uint32_t rank, int status, const std::string &message,
                 const std::vector<pmix_proc_t> &) override {
        std::lock_guard<std::mutex> l(m);
        ++aborts;
        abort_rank = rank;
        abort_status = status;
        abort_message = message;
        return Status::success();
    }
    void log(const std::string &, uint32_t, const std::string &, const std::string &) override {}
};

std::string build_client(const std::string &dir, const char *name) {
    std::string out = dir + "/" + name;
    std::string cmd = "gcc -o " + out + " " + PMIXCPP_TOP_SRCDIR + "/tests/native/openpmix/" + name +
                      ".c $(pkg-config --cflags --libs pmix) >/dev/null 2>&1";
    return system(cmd.c_str()) == 0 ? out : std::string();
}

struct child {
    pid_t pid = -1;
    int out = -1;
};

child start_client(const std::string &exe, const env_list &env, const char *arg = nullptr) {
    std::vector<std::string> e = {"PATH=/usr/bin:/bin"};
    for (const auto &[k, v] : env) e.push_back(k + "=" + v);
    int p[2];
    if (pipe(p) != 0) return {};
    pid_t pid = fork();
    if (pid == 0) {
        dup2(p[1], 1);
        dup2(p[1], 2);
        alarm(60);
        std::vector<char *> envp;
        for (auto &s : e) envp.push_back(s.data());
        envp.push_back(nullptr);
        char *argv[] = {const_cast<char *>(exe.c_str()), const_cast<char *>(arg), nullptr};
        execve(exe.c_str(), argv, envp.data());
        _exit(127);
    }
    close(p[1]);
    return {pid, p[0]};
}

std::string finish(child c, int *status) {
    std::string out;
    char b[512];
    ssize_t n;
    while ((n = read(c.out, b, sizeof b)) > 0) out.append(b, static_cast<size_t>(n));
    close(c.out);
    waitpid(c.pid, status, 0);
    return out;
}

class NativeServer : public ::testing::Test {
protected:
    void SetUp() override {
        char tmpl[] = "/tmp/pmixcpp-native-server.XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        base = tmpl;
        step.nspace = make_namespace(9, 1);
        step.job_id = 9;
        step.step_id = 1;
        step.uid = getuid();
        step.gid = getgid();
        step.ntasks = 3;
        step.node_id = 0;
        step.node_names = {"n1"};
        step.node_ranks = {{0, 1, 2}};
        step.universe_size = 3;
        step.client_token = "0123456789abcdef";
        ASSERT_TRUE(prepare_step_dir(step, base).ok());
        server::server_options o;
        o.native_listener = true;
        auto s = server::pmix_server::start(step, server::node_topology{"0", "SK0:CR0:HT0", 0}, &host, o);
        ASSERT_TRUE(s.ok()) << s.status().message();
        srv = std::move(s.value());
    }
    void TearDown() override {
        if (srv) srv->stop();
        srv.reset();
        remove_step_dir(step);
        std::filesystem::remove_all(base);
    }
    env_list client_env(uint32_t rank) {
        env_list env = native_task_env(step, srv->native_port());
        env.emplace_back("PMIX_NAMESPACE", step.nspace);
        env.emplace_back("PMIX_RANK", std::to_string(rank));
        return env;
    }
    std::string base;
    step_info step;
    no_host host;
    std::unique_ptr<server::pmix_server> srv;
};

TEST_F(NativeServer, HasALoopbackPort) {
    EXPECT_NE(srv->native_port(), 0);
}

TEST_F(NativeServer, OpenPMIxClientsPutCommitFenceGetFinalize) {
    std::string exe = build_client(base, "native_modex");
    if (exe.empty()) GTEST_SKIP() << "no OpenPMIx development files (pkg-config pmix) to build the client";
    std::vector<child> kids;
    for (uint32_t r = 0; r < step.ntasks; ++r) kids.push_back(start_client(exe, client_env(r)));
    for (uint32_t r = 0; r < step.ntasks; ++r) {
        int status = -1;
        std::string out = finish(kids[r], &status);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "rank " << r << ": " << out;
        std::string want = "native_modex " + step.nspace + "." + std::to_string(r) + " got value-" +
                           std::to_string((r + 1) % step.ntasks);
        EXPECT_NE(out.find(want), std::string::npos) << out;
    }
}

// Events both ways: an OpenPMIx client's PMIx_Notify_event goes through the server's event engine
// to the handler another OpenPMIx client registered (NOTIFY on tag 0), with the sender as source.
TEST_F(NativeServer, OpenPMIxClientsNotifyEachOther) {
    std::string exe = build_client(base, "native_modex");
    if (exe.empty()) GTEST_SKIP() << "no OpenPMIx development files (pkg-config pmix) to build the client";
    // A fence of every rank: the third runs the plain program (it takes part in both fences).
    std::vector<child> kids;
    for (uint32_t r = 0; r < 2; ++r) kids.push_back(start_client(exe, client_env(r), "event"));
    child third = start_client(exe, client_env(2), "event");
    std::string out0;
    for (uint32_t r = 0; r < 2; ++r) {
        int status = -1;
        std::string out = finish(kids[r], &status);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "rank " << r << ": " << out;
        if (r == 0) out0 = out;
    }
    int status = -1;
    std::string out2 = finish(third, &status);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << out2;
    EXPECT_NE(out0.find("native_modex event -3005 from rank 1"), std::string::npos) << out0;
}

// Groups for OpenPMIx clients (as OpenMPI 5's sessions and MPI_Comm_create_from_group use them):
// every rank constructs one group with a context id, all see the same id, then destruct it; a
// destruct of a group never made fails.
TEST_F(NativeServer, OpenPMIxClientsConstructAndDestructAGroup) {
    std::string exe = build_client(base, "native_modex");
    if (exe.empty()) GTEST_SKIP() << "no OpenPMIx development files (pkg-config pmix) to build the client";
    std::vector<child> kids;
    for (uint32_t r = 0; r < step.ntasks; ++r) kids.push_back(start_client(exe, client_env(r), "group"));
    std::set<std::string> ids;
    for (uint32_t r = 0; r < step.ntasks; ++r) {
        int status = -1;
        std::string out = finish(kids[r], &status);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "rank " << r << ": " << out;
        std::string want = "native_modex group " + std::to_string(r) + " ctxid ";
        auto at = out.find(want);
        ASSERT_NE(at, std::string::npos) << out;
        std::string id = out.substr(at + want.size(), out.find(' ', at + want.size()) - at - want.size());
        EXPECT_NE(id, "0") << out;
        ids.insert(id);
        // each member's PMIX_GROUP_LOCAL_CID, asked after the destruct, qualified by the context id
        EXPECT_NE(out.find("native_modex group " + std::to_string(r) + " local cids of " + std::to_string(step.ntasks) +
                           " members"), std::string::npos) << out;
    }
    EXPECT_EQ(ids.size(), 1u) << "every member got the same context id";
}

// Queries and logging for OpenPMIx clients: the namespaces and the process sets OpenMPI 5's
// sessions ask for (PMIX_QUERY_REFRESH_CACHE sends them to the server), typed as it reads them,
// and the membership of mpi://WORLD.
TEST_F(NativeServer, OpenPMIxClientQueriesPsetsAndLogs) {
    std::string exe = build_client(base, "native_modex");
    if (exe.empty()) GTEST_SKIP() << "no OpenPMIx development files (pkg-config pmix) to build the client";
    child c = start_client(exe, client_env(1), "query");
    int status = -1;
    std::string out = finish(c, &status);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << out;
    EXPECT_NE(out.find("native_modex query 1 status 0 nspaces " + step.nspace), std::string::npos) << out;
    // One application: no process set beyond OpenMPI's built-in ones, whose membership is answered.
    EXPECT_NE(out.find(" npsets 0 psets  world 3"), std::string::npos) << out;
    EXPECT_NE(out.find("native_modex log 0"), std::string::npos) << out;
}

// PMIx_Abort of an OpenPMIx client reaches the host with its status and message, and the client
// gets its answer.
TEST_F(NativeServer, OpenPMIxClientAborts) {
    std::string exe = build_client(base, "native_modex");
    if (exe.empty()) GTEST_SKIP() << "no OpenPMIx development files (pkg-config pmix) to build the client";
    int status = -1;
    std::string out = finish(start_client(exe, client_env(2), "abort"), &status);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << out;
    EXPECT_NE(out.find("native_modex aborted 0"), std::string::npos) << out;
    std::lock_guard<std::mutex> l(host.m);
    EXPECT_EQ(host.aborts, 1);
    EXPECT_EQ(host.abort_rank, 2u);
    EXPECT_EQ(host.abort_status, 7);
    EXPECT_EQ(host.abort_message, "native abort");
}

// A client of the job's user that names a rank of another node, or a rank already connected: the
// handshake is answered with a refusal and the connection closed.
TEST_F(NativeServer, HandshakeForARankNotServedHereIsRefused) {
    auto connect_as = [&](uint32_t rank) -> std::vector<uint8_t> {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        a.sin_port = htons(srv->native_port());
        EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof a), 0);
        hello h;
        h.psec = "native";
        uint32_t cred[2] = {static_cast<uint32_t>(geteuid()), static_cast<uint32_t>(getegid())};
        h.credential.assign(reinterpret_cast<uint8_t *>(cred), reinterpret_cast<uint8_t *>(cred) + 8);
        pmix_proc_t p{};
        strncpy(p.nspace, step.nspace.c_str(), PMIX_MAX_NSLEN);
        p.rank = rank;
        h.proc = p;
        h.version = "4.2.2";
        h.bfrops = "v41";
        h.gds = "hash";
        auto payload = encode_hello(h);
        auto hdr = encode_handshake_header(static_cast<uint32_t>(payload.size()));
        std::vector<uint8_t> msg(hdr.begin(), hdr.end());
        msg.insert(msg.end(), payload.begin(), payload.end());
        EXPECT_EQ(send(fd, msg.data(), msg.size(), 0), static_cast<ssize_t>(msg.size()));
        timeval tv{5, 0};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        std::vector<uint8_t> got;
        uint8_t b[64];
        ssize_t n;
        while ((n = recv(fd, b, sizeof b, 0)) > 0) {
            got.insert(got.end(), b, b + n);
            if (got.size() >= 8) break;  // status + index: accepted, stays open
        }
        close(fd);
        return got;
    };
    auto status_of = [](const std::vector<uint8_t> &g) {
        uint32_t s = 0;
        if (g.size() >= 4) memcpy(&s, g.data(), 4);
        return static_cast<int32_t>(ntohl(s));
    };
    EXPECT_EQ(status_of(connect_as(7)), PMIX_ERR_NOT_FOUND);   // not a rank of the step
    std::vector<uint8_t> ok = connect_as(1);                   // accepted (then closed: rank 1 lost)
    EXPECT_EQ(status_of(ok), PMIX_SUCCESS);
    EXPECT_EQ(ok.size(), 8u);
}

// After a good handshake, a message that does not decode closes that connection (the server goes on:
// the rank connects again); a connection that never sends its handshake is closed at the 10 s deadline.
TEST_F(NativeServer, MalformedMessageAndSilentPeerAreClosed) {
    auto open_conn = [&]() {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        a.sin_port = htons(srv->native_port());
        EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof a), 0);
        timeval tv{20, 0};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        return fd;
    };
    auto handshake = [&](int fd, uint32_t rank) {
        hello h;
        h.psec = "native";
        uint32_t cred[2] = {static_cast<uint32_t>(geteuid()), static_cast<uint32_t>(getegid())};
        h.credential.assign(reinterpret_cast<uint8_t *>(cred), reinterpret_cast<uint8_t *>(cred) + 8);
        pmix_proc_t p{};
        strncpy(p.nspace, step.nspace.c_str(), PMIX_MAX_NSLEN);
        p.rank = rank;
        h.proc = p;
        h.version = "4.2.2";
        h.bfrops = "v41";
        h.gds = "hash";
        auto payload = encode_hello(h);
        auto hdr = encode_handshake_header(static_cast<uint32_t>(payload.size()));
        std::vector<uint8_t> msg(hdr.begin(), hdr.end());
        msg.insert(msg.end(), payload.begin(), payload.end());
        EXPECT_EQ(send(fd, msg.data(), msg.size(), 0), static_cast<ssize_t>(msg.size()));
        uint8_t ack[8];
        EXPECT_EQ(recv(fd, ack, sizeof ack, MSG_WAITALL), 8);
        uint32_t st;
        memcpy(&st, ack, 4);
        return static_cast<int32_t>(ntohl(st));
    };
    int fd = open_conn();
    ASSERT_EQ(handshake(fd, 0), PMIX_SUCCESS);
    // GETNB whose nspace string claims 100 bytes of the 3 that follow
    std::vector<uint8_t> body = {0x02, 0x04, 0x02, 0xc8, 0x01, 'a', 'b', 'c'};
    auto hdr = encode_header({0, 101, static_cast<uint32_t>(body.size())});
    std::vector<uint8_t> msg(hdr.begin(), hdr.end());
    msg.insert(msg.end(), body.begin(), body.end());
    ASSERT_EQ(send(fd, msg.data(), msg.size(), 0), static_cast<ssize_t>(msg.size()));
    uint8_t b[64];
    EXPECT_EQ(recv(fd, b, sizeof b, 0), 0) << "closed without a reply";
    close(fd);
    fd = open_conn();
    EXPECT_EQ(handshake(fd, 0), PMIX_SUCCESS) << "the server goes on; the rank may connect again";
    close(fd);

    // SPAWNNB announcing a million apps in 8 bytes: closed without a reply, the server goes on.
    fd = open_conn();
    ASSERT_EQ(handshake(fd, 0), PMIX_SUCCESS);
    std::vector<uint8_t> spawn = {0x02, 0x09, 0x02, 0x00, 0x02, 0xc0, 0x84, 0x3d};
    auto shdr = encode_header({0, 102, static_cast<uint32_t>(spawn.size())});
    std::vector<uint8_t> smsg(shdr.begin(), shdr.end());
    smsg.insert(smsg.end(), spawn.begin(), spawn.end());
    ASSERT_EQ(send(fd, smsg.data(), smsg.size(), 0), static_cast<ssize_t>(smsg.size()));
    // (events of the earlier connection's rank may come first, on tag 0; then the close)
    ssize_t got;
    while ((got = recv(fd, b, sizeof b, 0)) > 0) {
    }
    EXPECT_EQ(got, 0) << "a malformed spawn: the connection is closed";
    close(fd);
    fd = open_conn();
    EXPECT_EQ(handshake(fd, 0), PMIX_SUCCESS) << "the server goes on after a malformed spawn";
    close(fd);

    fd = open_conn();
    auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(recv(fd, b, sizeof b, 0), 0);
    auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_GE(waited, 9000);
    EXPECT_LE(waited, 16000);
    close(fd);
}

// The process behind a loopback TCP connection: the kernel names the socket (sock_diag), /proc
// names who holds it. Here that is this process; another uid finds nobody.
TEST(NativePeer, ProcessHoldingTheSocket) {
    int l = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(bind(l, reinterpret_cast<sockaddr *>(&a), sizeof a), 0);
    ASSERT_EQ(listen(l, 1), 0);
    socklen_t len = sizeof a;
    ASSERT_EQ(getsockname(l, reinterpret_cast<sockaddr *>(&a), &len), 0);
    int c = socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_EQ(connect(c, reinterpret_cast<sockaddr *>(&a), sizeof a), 0);
    int s = accept(l, nullptr, nullptr);
    ASSERT_GE(s, 0);
    uint64_t inode = 0;
    EXPECT_EQ(net::local_peer_uid(s, &inode), static_cast<long>(geteuid()));
    ASSERT_NE(inode, 0u);
    auto p = process_ref::holding_socket(inode, geteuid());
    ASSERT_TRUE(p.ok()) << p.status().message();
    EXPECT_EQ(p.value()->pid(), getpid());
    EXPECT_TRUE(p.value()->descends_from(getpid()));
    EXPECT_EQ(process_ref::holding_socket(inode, geteuid() + 12345).status().code(), PMIX_ERR_NOT_FOUND);
    close(c);
    close(s);
    close(l);
}

// Among the descendants first: a grandchild (a task under a wrapper) that holds the client end
// is found from the ancestor; from an ancestor without it, the scan of the whole host finds it
// just the same; another uid finds nobody either way.
TEST(NativePeer, ProcessHoldingTheSocketAmongDescendants) {
    int l = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(bind(l, reinterpret_cast<sockaddr *>(&a), sizeof a), 0);
    ASSERT_EQ(listen(l, 1), 0);
    socklen_t len = sizeof a;
    ASSERT_EQ(getsockname(l, reinterpret_cast<sockaddr *>(&a), &len), 0);
    int ready[2], done[2];
    ASSERT_EQ(pipe(ready), 0);
    ASSERT_EQ(pipe(done), 0);
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {  // the child forks the grandchild, which connects and waits
        pid_t grandchild = fork();
        if (grandchild == 0) {
            int c = socket(AF_INET, SOCK_STREAM, 0);
            if (connect(c, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0) _exit(1);
            pid_t me = getpid();
            if (write(ready[1], &me, sizeof me) != sizeof me) _exit(1);
            char x;
            (void)!read(done[0], &x, 1);
            _exit(0);
        }
        int st = 0;
        waitpid(grandchild, &st, 0);
        _exit(0);
    }
    pid_t grandchild = 0;
    ASSERT_EQ(read(ready[0], &grandchild, sizeof grandchild), static_cast<ssize_t>(sizeof grandchild));
    int s = accept(l, nullptr, nullptr);
    ASSERT_GE(s, 0);
    uint64_t inode = 0;
    EXPECT_EQ(net::local_peer_uid(s, &inode), static_cast<long>(geteuid()));
    ASSERT_NE(inode, 0u);
    auto p = process_ref::holding_socket(inode, geteuid(), getpid());
    ASSERT_TRUE(p.ok()) << p.status().message();
    EXPECT_EQ(p.value()->pid(), grandchild);
    EXPECT_TRUE(p.value()->descends_from(getpid()));
    // an ancestor that is not one of the holder's (a child with no children): the whole scan,
    // the same answer
    pid_t idle = fork();
    ASSERT_GE(idle, 0);
    if (idle == 0) {
        char x;
        (void)!read(done[0], &x, 1);
        _exit(0);
    }
    auto q = process_ref::holding_socket(inode, geteuid(), idle);
    ASSERT_TRUE(q.ok()) << q.status().message();
    EXPECT_EQ(q.value()->pid(), grandchild);
    EXPECT_EQ(process_ref::holding_socket(inode, geteuid() + 12345, getpid()).status().code(), PMIX_ERR_NOT_FOUND);
    ASSERT_EQ(write(done[1], "xy", 2), 2);
    int st = 0;
    waitpid(child, &st, 0);
    waitpid(idle, &st, 0);
    close(s);
    close(l);
    for (int fd : {ready[0], ready[1], done[0], done[1]}) close(fd);
}

// The bytes of OpenPMIx 4.2's requests, as its client packs them (pmix_client_fence.c,
// pmix_client_get.c, PMIx_Commit, PMIx_Abort, the event registration).
TEST(NativeRequests, DecodeWhatTheClientSends) {
    for (int_flavour f : {int_flavour::flex128, int_flavour::fixed}) {
        SCOPED_TRACE(to_string(f));
        // FENCENB: one WILDCARD proc, pmix.collect
        packer pk(f);
        size_t one = 1;
        pmix_proc_t wild{};
        strcpy(wild.nspace, "job.1");
        wild.rank = PMIX_RANK_WILDCARD;
        ASSERT_TRUE(pk.pack(PMIX_SIZE, &one, 1).ok());
        ASSERT_TRUE(pk.pack(PMIX_PROC, &wild, 1).ok());
        pmix_info_t collect{};
        strcpy(collect.key, PMIX_COLLECT_DATA);
        collect.value.type = PMIX_BOOL;
        collect.value.data.flag = true;
        ASSERT_TRUE(pk.pack(PMIX_SIZE, &one, 1).ok());
        ASSERT_TRUE(pk.pack(PMIX_INFO, &collect, 1).ok());
        {
            unpacker up(f, pk.data());
            fence_data d;
            ASSERT_TRUE(decode_fence(up, &d, 100).ok());
            ASSERT_EQ(d.procs.size(), 1u);
            EXPECT_EQ(d.procs[0].rank, PMIX_RANK_WILDCARD);
            ASSERT_EQ(d.infos.size(), 1u);
            EXPECT_STREQ(d.infos[0].key, PMIX_COLLECT_DATA);
        }
        // more procs than the cap: refused before anything is allocated
        {
            packer big(f);
            size_t huge = 1000000;
            ASSERT_TRUE(big.pack(PMIX_SIZE, &huge, 1).ok());
            unpacker up(f, big.data());
            fence_data d;
            EXPECT_FALSE(decode_fence(up, &d, 100).ok());
        }
        // GETNB: nspace, rank, no infos, a key
        packer g(f);
        const char *ns = "job.1";
        pmix_rank_t r = 2;
        size_t zero = 0;
        const char *key = "btl.tcp.addr";
        ASSERT_TRUE(g.pack(PMIX_STRING, &ns, 1).ok());
        ASSERT_TRUE(g.pack(PMIX_PROC_RANK, &r, 1).ok());
        ASSERT_TRUE(g.pack(PMIX_SIZE, &zero, 1).ok());
        ASSERT_TRUE(g.pack(PMIX_STRING, &key, 1).ok());
        {
            unpacker up(f, g.data());
            get_data d;
            ASSERT_TRUE(decode_get(up, &d).ok());
            EXPECT_STREQ(d.proc.nspace, "job.1");
            EXPECT_EQ(d.proc.rank, 2u);
            EXPECT_EQ(d.key, key);
        }
        // trailing garbage after a GETNB: refused
        {
            std::vector<uint8_t> bad = g.data();
            bad.push_back(0x7f);
            unpacker up(f, bad);
            get_data d;
            EXPECT_FALSE(decode_get(up, &d).ok());
        }
        // COMMIT: LOCAL [k1, both], REMOTE [k2, both]: k1 LOCAL, k2 REMOTE, both GLOBAL
        auto kvals = [&](std::vector<std::pair<const char *, const char *>> kv) {
            packer in(f);
            for (auto [k, v] : kv) {
                pmix_value_t val{};
                val.type = PMIX_STRING;
                val.data.string = const_cast<char *>(v);
                in.put_int32(1);
                EXPECT_TRUE(in.put_kval(k, val).ok());
            }
            return in.take();
        };
        packer c(f);
        uint8_t local = PMIX_LOCAL, remote = PMIX_REMOTE;
        auto lb = kvals({{"k1", "a"}, {"both", "x"}});
        auto rb = kvals({{"k2", "b"}, {"both", "x"}});
        ASSERT_TRUE(c.pack(PMIX_SCOPE, &local, 1).ok());
        c.put_int32(1);
        c.put_buffer(kBufferNonDesc, lb);
        ASSERT_TRUE(c.pack(PMIX_SCOPE, &remote, 1).ok());
        c.put_int32(1);
        c.put_buffer(kBufferNonDesc, rb);
        {
            unpacker up(f, c.data());
            commit_data d;
            ASSERT_TRUE(decode_commit(up, &d).ok());
            ASSERT_EQ(d.infos.size(), 3u);
            std::map<std::string, uint8_t> scope;
            for (size_t i = 0; i < d.infos.size(); ++i) scope[d.infos[i].key] = d.scopes[i];
            EXPECT_EQ(scope["k1"], PMIX_LOCAL);
            EXPECT_EQ(scope["k2"], PMIX_REMOTE);
            EXPECT_EQ(scope["both"], PMIX_GLOBAL);
        }
        // a commit whose buffer lies about its length: refused
        {
            std::vector<uint8_t> bad = c.data();
            bad.resize(bad.size() - 3);
            unpacker up(f, bad);
            commit_data d;
            EXPECT_FALSE(decode_commit(up, &d).ok());
            EXPECT_EQ(d.infos.size(), 0u);
        }
        // ABORT and REGEVENTS
        packer a(f);
        pmix_status_t st = 3;
        const char *msg = "bye";
        ASSERT_TRUE(a.pack(PMIX_STATUS, &st, 1).ok());
        ASSERT_TRUE(a.pack(PMIX_STRING, &msg, 1).ok());
        ASSERT_TRUE(a.pack(PMIX_SIZE, &zero, 1).ok());
        {
            unpacker up(f, a.data());
            abort_data d;
            ASSERT_TRUE(decode_abort(up, &d, 100).ok());
            EXPECT_EQ(d.status, 3);
            EXPECT_EQ(d.message, "bye");
        }
        packer e(f);
        size_t two = 2;
        pmix_status_t codes[2] = {PMIX_ERR_PROC_ABORTED, PMIX_ERR_LOST_CONNECTION};
        ASSERT_TRUE(e.pack(PMIX_SIZE, &two, 1).ok());
        ASSERT_TRUE(e.pack(PMIX_STATUS, codes, 2).ok());
        ASSERT_TRUE(e.pack(PMIX_SIZE, &zero, 1).ok());
        {
            unpacker up(f, e.data());
            regevents_data d;
            ASSERT_TRUE(decode_regevents(up, &d).ok());
            EXPECT_EQ(d.codes.size(), 2u);
        }
    }
}

// The GETNB reply: [STATUS 0][BYTE_OBJECT [PROC][KVAL...]].
TEST(NativeRequests, GetReplyLayout) {
    pmix_info_t info{};
    strcpy(info.key, "k");
    info.value.type = PMIX_UINT32;
    info.value.data.uint32 = 5;
    pmix_proc_t p{};
    strcpy(p.nspace, "n");
    p.rank = 1;
    auto r = encode_get_reply(int_flavour::flex128, p, &info, 1);
    ASSERT_TRUE(r.ok());
    unpacker up(int_flavour::flex128, r.value());
    pmix_status_t st = -1;
    ASSERT_TRUE(up.unpack(PMIX_STATUS, &st, 1).ok());
    EXPECT_EQ(st, PMIX_SUCCESS);
    int32_t n;
    ASSERT_TRUE(up.unpack_count(&n).ok());
    std::span<const uint8_t> bo;
    ASSERT_TRUE(up.get_bytes(&bo).ok());
    EXPECT_TRUE(up.at_end());
    unpacker in(int_flavour::flex128, bo);
    pmix_proc_t got{};
    ASSERT_TRUE(in.unpack(PMIX_PROC, &got, 1).ok());
    EXPECT_STREQ(got.nspace, "n");
    EXPECT_EQ(got.rank, 1u);
    ASSERT_TRUE(in.unpack_count(&n).ok());
    std::string key;
    pmix_value_t v{};
    ASSERT_TRUE(in.get_kval(&key, &v).ok());
    EXPECT_EQ(key, "k");
    EXPECT_EQ(v.data.uint32, 5u);
    EXPECT_TRUE(in.at_end());
}

}  // namespace
