// The OpenPMIx client session engine (plugin/native/session.h): the captured session of a real
// OpenPMIx 4.2.2 client replayed through it, the refusals, and a REAL unmodified OpenPMIx client
// (tests/native/openpmix/native_client.c built here against Debian's libpmix2 with pkg-config;
// the test skips without it) connecting over TCP loopback to a minimal listener around the
// engine: PMIx_Init returns, PMIx_Get of the job size, its rank and local rank work,
// PMIx_Finalize returns, in both integer flavours (v41 and, with PMIX_MCA_bfrops=v3, v3).
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "plugin/native/session.h"
#include "plugin/server/jobdata.h"
#include "plugin/server/native_dyn.h"
#include "plugin/server/native_jobdata.h"
#include "plugin/net/listener_guard.h"
#include "value.h"

using namespace pmixcpp;
using namespace pmixcpp::native;

namespace {

// Job data of `nranks` ranks on one node, as the REQ reply carries it; owns its strings.
struct test_job {
    std::string nspace, host, peers, nlist;
    uint32_t nranks;
    job_blob_data data;

    static pmix_info_t u32(const char *key, uint32_t v) {
        pmix_info_t i{};
        strcpy(i.key, key);
        i.value.type = PMIX_UINT32;
        i.value.data.uint32 = v;
        return i;
    }
    static pmix_info_t u16(const char *key, uint16_t v) {
        pmix_info_t i{};
        strcpy(i.key, key);
        i.value.type = PMIX_UINT16;
        i.value.data.uint16 = v;
        return i;
    }
    static pmix_info_t str(const char *key, const std::string &s) {
        pmix_info_t i{};
        strcpy(i.key, key);
        i.value.type = PMIX_STRING;
        i.value.data.string = const_cast<char *>(s.c_str());
        return i;
    }
    static pmix_info_t rank(const char *key, pmix_rank_t r) {
        pmix_info_t i{};
        strcpy(i.key, key);
        i.value.type = PMIX_PROC_RANK;
        i.value.data.rank = r;
        return i;
    }

    test_job(std::string ns, std::string h, uint32_t n) : nspace(std::move(ns)), host(std::move(h)), nranks(n) {
        for (uint32_t r = 0; r < n; ++r) peers += (r ? "," : "") + std::to_string(r);
        nlist = host;
        data.nspace = nspace;
        data.job = {u32(PMIX_JOB_SIZE, n), u32(PMIX_UNIV_SIZE, n), u32(PMIX_MAX_PROCS, n), u32(PMIX_NUM_NODES, 1),
                    str(PMIX_NODE_LIST, nlist)};
        data.nodes.push_back({{str(PMIX_HOSTNAME, host), u32(PMIX_NODEID, 0), str(PMIX_LOCAL_PEERS, peers),
                               u32(PMIX_LOCAL_SIZE, n), rank(PMIX_LOCALLDR, 0)}});
        for (uint32_t r = 0; r < n; ++r)
            // pmix.rank too: an OpenPMIx 4.2 client asks the server for PMIx_Get(&me, PMIX_RANK)
            // unless its own data holds it.
            data.ranks.push_back({r, {rank(PMIX_RANK, r), str(PMIX_HOSTNAME, host), u32(PMIX_NODEID, 0), u16(PMIX_LOCAL_RANK, static_cast<uint16_t>(r)),
                                      u16(PMIX_NODE_RANK, static_cast<uint16_t>(r))}});
    }

    session_policy policy(uid_t uid, gid_t gid) const {
        session_policy p;
        p.uid = uid;
        p.gid = gid;
        p.nspace = nspace;
        p.nranks = nranks;
        const job_blob_data *d = &data;
        p.job_blob = [d](int_flavour f) { return pack_job_blob(f, *d); };
        return p;
    }
};

struct segment {
    bool from_client;
    std::vector<uint8_t> bytes;
};

std::vector<segment> load_traffic(const std::string &file) {
    std::vector<segment> out;
    std::ifstream in(std::string(PMIXCPP_TOP_SRCDIR) + "/tests/native/openpmix/" + file);
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream ls(line);
        std::string dir, tok;
        size_t n;
        ls >> dir >> n;
        segment s{dir == "C>S", {}};
        while (ls >> tok) s.bytes.push_back(static_cast<uint8_t>(std::stoul(tok, nullptr, 16)));
        out.push_back(std::move(s));
    }
    return out;
}

}  // namespace

// The captured client (capture.ns rank 0, uid 65534) through the engine: the same ack, a REQ reply
// the client's codec reads, the same FINALIZE reply to the byte.
TEST(NativeSession, CapturedClientSession) {
    for (auto [file, f] : {std::pair{"handshake-4.2.2-v41.txt", int_flavour::flex128},
                           std::pair{"handshake-4.2.2-v3.txt", int_flavour::fixed}}) {
        SCOPED_TRACE(file);
        auto t = load_traffic(file);
        test_job job("capture.ns", "vm", 2);
        session s(job.policy(65534, 65534));
        std::span<const uint8_t> hs(t[0].bytes);
        auto a = s.on_handshake(hs.subspan(kHeaderSize), 65534);
        ASSERT_FALSE(a.close) << a.why.message();
        std::vector<uint8_t> ack = t[1].bytes;
        ack.insert(ack.end(), t[2].bytes.begin(), t[2].bytes.end());
        EXPECT_EQ(a.out, ack);
        EXPECT_EQ(s.state(), session_state::connected);
        EXPECT_EQ(s.flavour(), f);

        std::span<const uint8_t> req(t[3].bytes);
        auto r = s.on_message(decode_header(req.data()), req.subspan(kHeaderSize));
        ASSERT_FALSE(r.close);
        header rh = decode_header(r.out.data());
        EXPECT_EQ(rh.tag, 101u);
        EXPECT_EQ(rh.nbytes, r.out.size() - kHeaderSize);
        unpacker up(f, std::span<const uint8_t>(r.out).subspan(kHeaderSize));
        int32_t n;
        std::string ns;
        ASSERT_TRUE(up.unpack_count(&n).ok());
        ASSERT_TRUE(up.get_string(&ns).ok());
        EXPECT_EQ(ns, "capture.ns");
        int kvals = 0;
        while (!up.at_end()) {
            std::string key;
            pmix_value_t v{};
            ASSERT_TRUE(up.unpack_count(&n).ok());
            ASSERT_TRUE(up.get_kval(&key, &v).ok());
            value_destruct(&v);
            ++kvals;
        }
        EXPECT_EQ(kvals, 5 + 1 + 2);

        std::span<const uint8_t> fin(t[5].bytes);
        auto fr = s.on_message(decode_header(fin.data()), fin.subspan(kHeaderSize));
        EXPECT_EQ(fr.out, t[6].bytes);
        EXPECT_TRUE(s.ended_normally());
    }
}

TEST(NativeSession, UnknownCommandsGetNotSupported) {
    test_job job("ns", "h", 1);
    session s(job.policy(1000, 1000));
    hello h;
    h.psec = "native";
    uint32_t ids[2] = {1000, 1000};
    h.credential.assign(reinterpret_cast<uint8_t *>(ids), reinterpret_cast<uint8_t *>(ids) + 8);
    h.proc = pmix_proc_t{};
    strcpy(h.proc->nspace, "ns");
    h.version = "4.2.2";
    h.major = 4;
    h.minor = 2;
    h.bfrops = "v41";
    h.gds = "hash";
    ASSERT_FALSE(s.on_handshake(encode_hello(h), 1000).close);
    for (uint8_t cmd : {uint8_t{3}, uint8_t{4}, uint8_t{9}, uint8_t{38}, uint8_t{200}}) {
        packer pk(int_flavour::flex128);
        ASSERT_TRUE(pk.pack(PMIX_COMMAND, &cmd, 1).ok());
        auto a = s.on_message({0, 105, static_cast<uint32_t>(pk.size())}, pk.data());
        ASSERT_FALSE(a.close);
        EXPECT_EQ(decode_header(a.out.data()).tag, 105u);
        unpacker up(int_flavour::flex128, std::span<const uint8_t>(a.out).subspan(kHeaderSize));
        pmix_status_t st = 0;
        ASSERT_TRUE(up.unpack(PMIX_STATUS, &st, 1).ok());
        EXPECT_EQ(st, PMIX_ERR_NOT_SUPPORTED) << "command " << int(cmd);
    }
    uint8_t dereg = 14;
    packer pk(int_flavour::flex128);
    ASSERT_TRUE(pk.pack(PMIX_COMMAND, &dereg, 1).ok());
    EXPECT_TRUE(s.on_message({0, 106, static_cast<uint32_t>(pk.size())}, pk.data()).out.empty());
    // Garbage instead of a command closes the connection.
    std::vector<uint8_t> junk = {0xff};
    EXPECT_TRUE(s.on_message({0, 107, 1}, junk).close);
    EXPECT_EQ(s.state(), session_state::closed);
}

TEST(NativeSessionAttack, Refusals) {
    test_job job("ns", "h", 2);
    hello good;
    good.psec = "native";
    uint32_t ids[2] = {1000, 1000};
    good.credential.assign(reinterpret_cast<uint8_t *>(ids), reinterpret_cast<uint8_t *>(ids) + 8);
    good.proc = pmix_proc_t{};
    strcpy(good.proc->nspace, "ns");
    good.proc->rank = 1;
    good.version = "4.2.2";
    good.major = 4;
    good.minor = 2;
    good.bfrops = "v41";
    good.gds = "hash";
    auto refused = [&](const hello &h, uid_t peer, pmix_status_t want) {
        session s(job.policy(1000, 1000));
        auto a = s.on_handshake(encode_hello(h), peer);
        EXPECT_TRUE(a.close);
        EXPECT_EQ(a.out, encode_client_ack(want, 0)) << a.why.message();
        EXPECT_EQ(s.state(), session_state::closed);
        return a.why.message();
    };
    {
        session s(job.policy(1000, 1000));
        EXPECT_FALSE(s.on_handshake(encode_hello(good), 1000).close);
    }
    // Another user, whatever it claims (here the job user's own credential).
    EXPECT_NE(refused(good, 1001, PMIX_ERR_NO_PERMISSIONS).find("uid 1001"), std::string::npos);
    EXPECT_NE(refused(good, 0, PMIX_ERR_NO_PERMISSIONS).find("uid 0"), std::string::npos);
    // The job's user claiming to be someone else.
    hello h = good;
    uint32_t other[2] = {0, 0};
    h.credential.assign(reinterpret_cast<uint8_t *>(other), reinterpret_cast<uint8_t *>(other) + 8);
    refused(h, 1000, PMIX_ERR_INVALID_CRED);
    h = good;
    strcpy(h.proc->nspace, "other");
    refused(h, 1000, PMIX_ERR_NOT_FOUND);
    h = good;
    h.proc->rank = 2;
    refused(h, 1000, PMIX_ERR_NOT_FOUND);
    h = good;
    h.proc->rank = PMIX_RANK_WILDCARD;
    refused(h, 1000, PMIX_ERR_NOT_FOUND);
    h = good;
    h.flag = peer_flag::tool_needs_id;
    h.uid = 1000;
    h.gid = 1000;
    refused(h, 1000, PMIX_ERR_NOT_SUPPORTED);
    h = good;
    h.bfrops = "v12";
    refused(h, 1000, PMIX_ERR_NOT_SUPPORTED);
    h = good;
    h.gds = "ds21";
    refused(h, 1000, PMIX_ERR_NOT_SUPPORTED);
    h = good;
    h.buffer_type = kBufferFullyDesc;
    refused(h, 1000, PMIX_ERR_NOT_SUPPORTED);
    h = good;
    h.psec = "munge";
    refused(h, 1000, PMIX_ERR_NOT_SUPPORTED);
    // Not a handshake at all.
    session s(job.policy(1000, 1000));
    std::vector<uint8_t> junk(40, 0x41);
    EXPECT_TRUE(s.on_handshake(junk, 1000).close);
    // No message before the handshake.
    session s2(job.policy(1000, 1000));
    EXPECT_TRUE(s2.on_message({0, 101, 0}, {}).close);
}

namespace {

// A minimal listener around the engine: one connection, blocking I/O, on its own thread.
class loopback_server {
public:
    explicit loopback_server(session_policy p) : _policy(std::move(p)) {
        _fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        EXPECT_EQ(bind(_fd, reinterpret_cast<sockaddr *>(&a), sizeof a), 0);
        EXPECT_EQ(listen(_fd, 4), 0);
        socklen_t l = sizeof a;
        getsockname(_fd, reinterpret_cast<sockaddr *>(&a), &l);
        _port = ntohs(a.sin_port);
        _thread = std::thread([this] { serve(); });
    }
    ~loopback_server() {
        join();
        close(_fd);
    }
    // Stop accepting and wait until the connection is served (the client has exited by then).
    void join() {
        if (!_thread.joinable()) return;
        shutdown(_fd, SHUT_RDWR);
        _thread.join();
    }
    int port() const { return _port; }
    std::string log() { join(); return _log; }
    bool ended_normally() { join(); return _normal; }

private:
    void serve() {
        pollfd p{_fd, POLLIN, 0};
        if (poll(&p, 1, 20000) <= 0) return;
        int c = accept4(_fd, nullptr, nullptr, SOCK_CLOEXEC);
        if (c < 0) return;
        // One connection only: a refused OpenPMIx client connects again (and would wait for an
        // answer in the backlog forever); later attempts are refused by the kernel.
        shutdown(_fd, SHUT_RDWR);
        timeval tv{30, 0};  // a client that stops talking ends the test instead of hanging it
        setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        long uid = net::local_peer_uid(c);
        session s(_policy);
        message_reader r(1u << 20);
        std::vector<uint8_t> buf(4096);
        bool done = false;
        while (!done) {
            size_t want = std::min(r.wanted(), buf.size());
            ssize_t n = want == 0 ? 0 : read(c, buf.data(), want);
            if (n <= 0 && want != 0) break;
            if (!r.feed(buf.data(), static_cast<size_t>(n)).ok()) break;
            if (!r.complete()) continue;
            session::action a = r.handshake_done() ? s.on_message(r.current(), r.payload())
                                                   : s.on_handshake(r.payload(), static_cast<uid_t>(uid));
            r.next();
            if (!a.out.empty() && write(c, a.out.data(), a.out.size()) != static_cast<ssize_t>(a.out.size())) break;
            if (a.close) {
                _log += a.why.message() + "\n";
                done = true;
            }
        }
        _normal = s.ended_normally();
        close(c);
    }

    session_policy _policy;
    int _fd = -1;
    int _port = 0;
    std::thread _thread;
    std::string _log;
    bool _normal = false;
};

// The build directory of the client, removed when the test program ends.
struct client_dir {
    std::string path = "/tmp/pmixcpp-native-test." + std::to_string(getpid());
    ~client_dir() {
        unlink((path + "/native_client").c_str());
        rmdir(path.c_str());
    }
};

// Build native_client.c against the real OpenPMIx with pkg-config, once.
std::string native_client() {
    static client_dir cleanup;
    static std::string path = [] {
        std::string dir = cleanup.path;
        std::string out = dir + "/native_client";
        std::string cmd = "mkdir -p " + dir + " && gcc -o " + out + " " + PMIXCPP_TOP_SRCDIR +
                          "/tests/native/openpmix/native_client.c $(pkg-config --cflags --libs pmix) >/dev/null 2>&1";
        return system(cmd.c_str()) == 0 ? out : std::string();
    }();
    return path;
}

// Run the client with the environment an OpenPMIx server's setup_fork would give it.
std::string run_client(const std::string &exe, int port, const std::string &nspace, uint32_t rank, bool v3, int *status) {
    std::string uri = "pmixcpp-native.0;tcp4://127.0.0.1:" + std::to_string(port);
    std::vector<std::string> env = {"PATH=/usr/bin:/bin",
                                    "PMIX_NAMESPACE=" + nspace,
                                    "PMIX_RANK=" + std::to_string(rank),
                                    "PMIX_SERVER_URI41=" + uri,
                                    "PMIX_SERVER_URI4=" + uri,
                                    "PMIX_SERVER_URI3=" + uri,
                                    "PMIX_SERVER_URI21=" + uri,
                                    "PMIX_SERVER_URI2=" + uri,
                                    "PMIX_SECURITY_MODE=native",
                                    "PMIX_BFROP_BUFFER_TYPE=PMIX_BFROP_BUFFER_NON_DESC",
                                    "PMIX_GDS_MODULE=hash",
                                    "PMIX_HOSTNAME=testhost",
                                    "PMIX_VERSION=4.2.2"};
    if (v3) env.push_back("PMIX_MCA_bfrops=v3");
    int pipefd[2];
    if (pipe(pipefd) != 0) return "";
    pid_t pid = fork();
    if (pid == 0) {
        dup2(pipefd[1], 1);
        dup2(pipefd[1], 2);
        alarm(60);  // a client that hangs is killed (and the test fails) instead of hanging make check
        std::vector<char *> envp;
        for (auto &e : env) envp.push_back(e.data());
        envp.push_back(nullptr);
        char *argv[] = {const_cast<char *>(exe.c_str()), nullptr};
        execve(exe.c_str(), argv, envp.data());
        _exit(127);
    }
    close(pipefd[1]);
    std::string out;
    char b[512];
    ssize_t n;
    while ((n = read(pipefd[0], b, sizeof b)) > 0) out.append(b, static_cast<size_t>(n));
    close(pipefd[0]);
    waitpid(pid, status, 0);
    return out;
}

// OpenPMIx before 5.0 also speaks the fixed-width encoding (bfrops v3); 5.0 and later only
// v4/v41: the v3 flavour is tested with the clients that have it (Debian 12's 4.2.2), not with
// Debian 13's 5.0.7 (a 3.2 client is t-native-clients' part).
bool client_speaks_v3() {
    static const bool yes = [] {
        FILE *f = popen("pkg-config --modversion pmix 2>/dev/null", "r");
        if (!f) return false;
        char buf[64] = {};
        bool ok = fgets(buf, sizeof buf, f) != nullptr;
        pclose(f);
        return ok && atoi(buf) > 0 && atoi(buf) < 5;
    }();
    return yes;
}

}  // namespace

TEST(NativeSessionRealClient, OpenPMIxClientInitGetFinalize) {
    std::string exe = native_client();
    if (exe.empty()) GTEST_SKIP() << "no OpenPMIx development files (pkg-config pmix) to build the client";
    for (bool v3 : {false, true}) {
        if (v3 && !client_speaks_v3()) {
            std::cout << "OpenPMIx's client here has no v3 encoding (5.0 or later): the v3 flavour is left out\n";
            continue;
        }
        SCOPED_TRACE(v3 ? "v3" : "v41");
        test_job job("native.test", "testhost", 3);
        loopback_server srv(job.policy(geteuid(), getegid()));
        int status = -1;
        std::string out = run_client(exe, srv.port(), "native.test", 2, v3, &status);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << out << srv.log();
        EXPECT_NE(out.find("native_client native.test.2 size=3 lrank=2 get_rank=2"), std::string::npos) << out << srv.log();
        EXPECT_TRUE(srv.ended_normally()) << srv.log();
    }
}

// Not tested with a real client: one the engine refuses (unknown namespace, a rank not served here)
// was seen to connect again and to wait in PMIx_Init in most runs instead of failing (OpenPMIx
// 4.2.2); the engine's refusals are NativeSessionAttack.Refusals. The listener must bound what such
// clients cost (handshake deadline, per-uid cap).

// The job data the server builds for a real step (plugin/server/jobdata.h), as the REQ reply:
// rank 3 of 5 on the second of two nodes (n1: 0-2, n2: 3-4) initializes and reads it.
TEST(NativeSessionRealClient, BlobFromTheServersJobData) {
    std::string exe = native_client();
    if (exe.empty()) GTEST_SKIP() << "no OpenPMIx development files (pkg-config pmix) to build the client";
    step_info s;
    s.nspace = "slurm.42.3";
    s.job_id = 42;
    s.step_id = 3;
    s.ntasks = 5;
    s.node_id = 1;
    s.node_names = {"n1", "n2"};
    s.node_ranks = {{0, 1, 2}, {3, 4}};
    s.universe_size = 5;
    s.step_dir = "/tmp/stepdir";
    s.server_socket = "/tmp/stepdir/server.sock";
    auto entries = server::build_jobdata(s, {});
    ASSERT_TRUE(entries.ok()) << entries.status().message();
    job_blob_data blob = server::native_job_blob(s.nspace, entries.value());
    EXPECT_EQ(blob.ranks.size(), 5u);
    ASSERT_EQ(blob.nodes.size(), 1u);
    for (bool v3 : {false, true}) {
        if (v3 && !client_speaks_v3()) {
            std::cout << "OpenPMIx's client here has no v3 encoding (5.0 or later): the v3 flavour is left out\n";
            continue;
        }
        SCOPED_TRACE(v3 ? "v3" : "v41");
        session_policy p;
        p.uid = geteuid();
        p.gid = getegid();
        p.nspace = s.nspace;
        p.nranks = s.ntasks;
        p.rank_is_local = [](pmix_rank_t r) { return r == 3 || r == 4; };
        p.job_blob = [&blob](int_flavour f) { return pack_job_blob(f, blob); };
        loopback_server srv(p);
        int status = -1;
        std::string out = run_client(exe, srv.port(), s.nspace, 3, v3, &status);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << out << srv.log();
        EXPECT_NE(out.find("native_client slurm.42.3.3 size=5 lrank=0 get_rank=3"), std::string::npos) << out << srv.log();
        EXPECT_TRUE(srv.ended_normally()) << srv.log();
    }
}

// The spawn reply with the children's job data (plugin/server/native_dyn.h): the child step's job
// data as its node-0 server sends it (wire::encode_jobdata) becomes [STATUS][STRING nspace][KVAL...]
// as OpenPMIx's server sends a spawned job's data, without the child's server addresses; data of
// another namespace, every truncation and corrupted bytes are refused.
TEST(NativeSpawnReply, CarriesTheChildsJobData) {
    step_info s;
    s.nspace = "slurm.42.4";
    s.job_id = 42;
    s.step_id = 4;
    s.ntasks = 3;
    s.node_id = 0;
    s.node_names = {"n1", "n2"};
    s.node_ranks = {{0, 1}, {2}};
    s.universe_size = 3;
    s.step_dir = "/tmp/stepdir";
    s.server_socket = "/tmp/stepdir/server.sock";
    auto entries = server::build_jobdata(s, {});
    ASSERT_TRUE(entries.ok()) << entries.status().message();
    auto bytes = wire::encode_jobdata(entries.value());
    ASSERT_TRUE(bytes.ok());
    for (int_flavour f : {int_flavour::flex128, int_flavour::fixed}) {
        SCOPED_TRACE(to_string(f));
        auto r = server::native_spawn_reply(f, s.nspace, bytes.value());
        ASSERT_TRUE(r.ok()) << r.status().message();
        unpacker up(f, r.value());
        pmix_status_t st = -1;
        ASSERT_TRUE(up.unpack(PMIX_STATUS, &st, 1).ok());
        EXPECT_EQ(st, PMIX_SUCCESS);
        char *ns = nullptr;
        ASSERT_TRUE(up.unpack(PMIX_STRING, &ns, 1).ok());
        EXPECT_STREQ(ns, "slurm.42.4");
        free(ns);
        std::map<std::string, int> keys;
        uint32_t size = 0;
        std::vector<uint32_t> blob_ranks;
        while (!up.at_end()) {
            int32_t n = 0;
            ASSERT_TRUE(up.unpack_count(&n).ok());
            ASSERT_EQ(n, 1);
            std::string key;
            pmix_value_t v{};
            ASSERT_TRUE(up.get_kval(&key, &v).ok());
            ++keys[key];
            if (key == PMIX_JOB_SIZE) size = v.data.uint32;
            if (key == PMIX_PROC_BLOB) {
                ASSERT_EQ(v.type, PMIX_BYTE_OBJECT);
                unpacker in(f, std::span<const uint8_t>(reinterpret_cast<const uint8_t *>(v.data.bo.bytes), v.data.bo.size));
                pmix_rank_t rank = 0;
                ASSERT_TRUE(in.unpack(PMIX_PROC_RANK, &rank, 1).ok());
                blob_ranks.push_back(rank);
            }
            value_destruct(&v);
        }
        EXPECT_EQ(size, 3u);
        EXPECT_EQ(blob_ranks, (std::vector<uint32_t>{0, 1, 2}));
        EXPECT_EQ(keys[PMIX_NODE_INFO_ARRAY], 1);
        EXPECT_EQ(keys.count(PMIX_SERVER_URI), 0u);
        EXPECT_EQ(keys.count(PMIX_MYSERVER_URI), 0u);
    }
    auto other = server::native_spawn_reply(int_flavour::flex128, "slurm.42.5", bytes.value());
    EXPECT_FALSE(other.ok()) << "the data of another namespace";
    const std::vector<uint8_t> &b = bytes.value();
    for (size_t n = 0; n < b.size(); n += (n < 64 ? 1 : 97)) {
        std::vector<uint8_t> cut(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(n));
        EXPECT_FALSE(server::native_spawn_reply(int_flavour::flex128, s.nspace, cut).ok()) << "truncated to " << n;
    }
    for (size_t at = 0; at < b.size(); at += 7) {
        std::vector<uint8_t> bad = b;
        bad[at] ^= 0xa5;
        (void)server::native_spawn_reply(int_flavour::flex128, s.nspace, bad);  // an error or a reply; never a crash
    }
}
