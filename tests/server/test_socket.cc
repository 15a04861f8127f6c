// The server in-process on a temporary directory, driven with raw frames over its socket.
#include <gtest/gtest.h>
#include <hwloc.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>

#include "../../plugin/common/step_env.h"
#include "../../plugin/server/jobdata.h"
#include "../../plugin/server/server.h"
#include "client_util.h"

using namespace pmixcpp;
using namespace pmixcpp::server;
using pmixcpp::testing::make_infos;
using pmixcpp::testing::make_proc;
using pmixcpp::testing::raw_client;
using pmixcpp::testing::set_info;

namespace {

struct fake_host : server_host {
    std::mutex m;
    int aborts = 0;
    int abort_status = 0;
    std::string abort_message;
    std::vector<std::string> logs;
    Status abort(const std::string &, uint32_t, int status, const std::string &message,
                 const std::vector<pmix_proc_t> &) override {
        std::lock_guard<std::mutex> l(m);
        ++aborts;
        abort_status = status;
        abort_message = message;
        return Status::success();
    }
    void log(const std::string &, uint32_t, const std::string &, const std::string &message) override {
        std::lock_guard<std::mutex> l(m);
        logs.push_back(message);
    }
};

class ServerSocket : public ::testing::Test {
protected:
    void SetUp() override {
        char tmpl[] = "/tmp/pmixcpp-server-test.XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        base = tmpl;
        step.nspace = make_namespace(7, 0);
        step.job_id = 7;
        step.uid = getuid();
        step.gid = getgid();
        step.ntasks = 4;
        step.node_id = 0;
        step.node_names = {"n1", "n2"};
        step.node_ranks = {{0, 1, 2}, {3}};  // rank 3 lives on another node
        step.universe_size = 4;
        step.client_token = "0123456789abcdef";
        ASSERT_TRUE(prepare_step_dir(step, base).ok());
        auto s = pmix_server::start(step, node_topology{"0", "SK0:CR0:HT0", 0}, &host);
        ASSERT_TRUE(s.ok()) << s.status().message();
        srv = std::move(s.value());
    }
    void TearDown() override {
        if (srv) srv->stop();
        srv.reset();
        remove_step_dir(step);
        std::filesystem::remove_all(base);
    }
    // A connected client for `rank`.
    std::unique_ptr<raw_client> client(uint32_t rank) {
        auto c = std::make_unique<raw_client>();
        EXPECT_TRUE(c->open(step.server_socket));
        EXPECT_EQ(c->do_connect(step.nspace, rank, step.client_token), PMIX_SUCCESS);
        return c;
    }
    bool send_fence(raw_client &c, uint32_t id, std::vector<uint32_t> ranks, int timeout = 0) {
        wire::fence_request f;
        for (uint32_t r : ranks) f.procs.push_back(make_proc(step.nspace, r));
        if (timeout) {
            f.infos = make_infos(1);
            set_info(f.infos[0], PMIX_TIMEOUT, &timeout, PMIX_INT);
        }
        return c.send_msg(wire::msg_type::fence, id, f);
    }
    bool send_get(raw_client &c, uint32_t id, uint32_t rank, const std::string &key, const char *flag = nullptr,
                  int timeout = 0) {
        wire::get_request g;
        g.proc = make_proc(step.nspace, rank);
        g.key = key;
        if (flag) {
            g.infos = make_infos(1);
            bool t = true;
            set_info(g.infos[0], flag, &t, PMIX_BOOL);
        } else if (timeout) {
            g.infos = make_infos(1);
            set_info(g.infos[0], PMIX_TIMEOUT, &timeout, PMIX_INT);
        }
        return c.send_msg(wire::msg_type::get, id, g);
    }
    bool send_commit(raw_client &c, uint32_t id, const char *key, const char *value, uint8_t scope = PMIX_GLOBAL) {
        wire::commit_request m;
        m.infos = make_infos(1);
        set_info(m.infos[0], key, value, PMIX_STRING);
        m.scopes = {scope};
        return c.send_msg(wire::msg_type::commit, id, m);
    }

    std::string base;
    step_info step;
    fake_host host;
    std::unique_ptr<pmix_server> srv;
};

const pmix_info_t *find(const InfoArray &a, const char *key) {
    for (size_t i = 0; i < a.size(); ++i)
        if (strcmp(a[i].key, key) == 0) return &a[i];
    return nullptr;
}

}  // namespace

TEST_F(ServerSocket, ConnectRepliesWithJobData) {
    raw_client c;
    ASSERT_TRUE(c.open(step.server_socket));
    wire::connect_reply r;
    ASSERT_EQ(c.do_connect(step.nspace, 2, step.client_token, &r), PMIX_SUCCESS);
    EXPECT_EQ(r.local_rank, 2u);
    EXPECT_EQ(r.jobdata_path, step.step_root + "/jobdata");
    struct stat st {};
    ASSERT_EQ(stat(r.jobdata_path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0400u) << "readable by the job's user only";
    EXPECT_EQ(st.st_uid, step.uid);
    EXPECT_EQ(static_cast<uint64_t>(st.st_size), r.jobdata_size);
    std::ifstream in(r.jobdata_path, std::ios::binary);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<wire::jobdata_entry> entries;
    ASSERT_TRUE(wire::decode_jobdata(bytes, &entries).ok());
    // the compact form: the job level and this node's 3 ranks; rank 3, on the other node, only
    // in the layout, which describes all 4
    EXPECT_EQ(entries.size(), 4u);
    for (const auto &e : entries) EXPECT_NE(e.rank, 3u);
    auto layout = server::jobdata_layout(entries);
    ASSERT_TRUE(layout.ok()) << layout.status().message();
    ASSERT_TRUE(layout.value().has_value());
    EXPECT_EQ(layout.value()->nranks, 4u);
    EXPECT_EQ(layout.value()->locate(3).node, 1u);
    EXPECT_EQ(layout.value()->nodes, step.node_names);
}

TEST_F(ServerSocket, RefusesBadTokenForeignRankAndDuplicates) {
    raw_client bad;
    ASSERT_TRUE(bad.open(step.server_socket));
    EXPECT_EQ(bad.do_connect(step.nspace, 0, "wrong"), PMIX_ERR_NO_PERMISSIONS);
    EXPECT_TRUE(bad.wait_closed());

    raw_client remote;
    ASSERT_TRUE(remote.open(step.server_socket));
    EXPECT_EQ(remote.do_connect(step.nspace, 3, step.client_token), PMIX_ERR_NO_PERMISSIONS);

    raw_client other_ns;
    ASSERT_TRUE(other_ns.open(step.server_socket));
    EXPECT_EQ(other_ns.do_connect("slurm.8.0", 0, step.client_token), PMIX_ERR_NO_PERMISSIONS);

    auto first = client(0);
    raw_client dup;
    ASSERT_TRUE(dup.open(step.server_socket));
    EXPECT_EQ(dup.do_connect(step.nspace, 0, step.client_token), PMIX_ERR_NO_PERMISSIONS);

    // Anything but connect first closes the connection.
    raw_client early;
    ASSERT_TRUE(early.open(step.server_socket));
    ASSERT_TRUE(send_get(early, 1, 0, PMIX_HOSTNAME));
    EXPECT_TRUE(early.wait_closed());
}

TEST_F(ServerSocket, MalformedFrameClosesOnlyThatConnection) {
    auto good = client(0);
    auto victim = client(1);
    const char junk[] = "this is not a frame at all, not even close";
    ASSERT_TRUE(victim->send_raw(junk, sizeof(junk)));
    EXPECT_TRUE(victim->wait_closed());

    // A well-framed but malformed payload closes too.
    auto third = client(2);
    uint8_t payload[] = {1, 2, 3};
    auto f = wire::encode_frame(static_cast<uint16_t>(wire::msg_type::get), 0, 9, payload);
    ASSERT_TRUE(f.ok());
    ASSERT_TRUE(third->send_raw(f->data(), f->size()));
    EXPECT_TRUE(third->wait_closed());

    ASSERT_TRUE(send_get(*good, 2, 3, PMIX_HOSTNAME));
    auto r = good->recv_reply();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->id, 2u);
    ASSERT_EQ(r->status, PMIX_SUCCESS) << r->message;
    wire::get_reply g;
    ASSERT_TRUE(raw_client::body(*r, &g));
    const pmix_info_t *h = find(g.data, PMIX_HOSTNAME);
    ASSERT_NE(h, nullptr);
    EXPECT_STREQ(h->value.data.string, "n2");
}

TEST_F(ServerSocket, FenceOfTwoClients) {
    auto a = client(0);
    auto b = client(1);
    ASSERT_TRUE(send_fence(*a, 5, {0, 1}));
    EXPECT_FALSE(a->recv_reply(200));  // not complete yet
    ASSERT_TRUE(send_fence(*b, 6, {1, 0}));
    auto rb = b->recv_reply();
    ASSERT_TRUE(rb);
    EXPECT_EQ(rb->id, 6u);
    EXPECT_EQ(rb->status, PMIX_SUCCESS);
    auto ra = a->recv_reply();
    ASSERT_TRUE(ra);
    EXPECT_EQ(ra->id, 5u);
    EXPECT_EQ(ra->status, PMIX_SUCCESS);
}

// Every fence's reply names the node's modex snapshot once something was committed, a fence that
// collects nothing as well (OpenMPI's barrier after its modex): the clients then read from the
// snapshot what the server holds instead of asking. Before any commit there is none to name.
TEST_F(ServerSocket, FenceThatCollectsNothingNamesTheSnapshot) {
    auto a = client(0);
    auto b = client(1);
    // The reply body's snapshot: id and segments ("" and none without a body).
    auto snapshot_of = [](const raw_client::reply &r, std::string *id,
                          std::vector<std::pair<uint64_t, uint64_t>> *segments) {
        segments->clear();
        id->clear();
        wire::Reader rd(std::span<const uint8_t>(r.payload).subspan(r.body_offset));
        if (rd.at_end()) return;
        uint32_t n = 0;
        ASSERT_TRUE(rd.get_string(id, 4096).ok());
        ASSERT_TRUE(rd.get_u32(&n).ok());
        for (uint32_t i = 0; i < n; ++i) {
            uint64_t offset = 0, length = 0;
            ASSERT_TRUE(rd.get_u64(&offset).ok());
            ASSERT_TRUE(rd.get_u64(&length).ok());
            segments->emplace_back(offset, length);
        }
        EXPECT_TRUE(rd.at_end());
    };
    auto fence_both = [&](uint32_t id, std::string *snap_id, std::vector<std::pair<uint64_t, uint64_t>> *segments) {
        ASSERT_TRUE(send_fence(*a, id, {0, 1}));
        ASSERT_TRUE(send_fence(*b, id, {0, 1}));
        std::string other_id;
        std::vector<std::pair<uint64_t, uint64_t>> other_segments;
        for (auto *x : {a.get(), b.get()}) {
            auto r = x->recv_reply();
            ASSERT_TRUE(r);
            ASSERT_EQ(r->status, PMIX_SUCCESS) << r->message;
            if (x == a.get()) snapshot_of(*r, snap_id, segments);
            else snapshot_of(*r, &other_id, &other_segments);
        }
        EXPECT_EQ(*snap_id, other_id);  // both clients are told the same
        EXPECT_EQ(*segments, other_segments);
    };
    std::string id;
    std::vector<std::pair<uint64_t, uint64_t>> segments;
    fence_both(5, &id, &segments);
    EXPECT_EQ(id, "");  // nothing committed yet
    EXPECT_TRUE(segments.empty());

    ASSERT_TRUE(send_commit(*a, 6, "btl.tcp.4.1", "a"));
    ASSERT_TRUE(send_commit(*b, 6, "btl.tcp.4.1", "b"));
    for (auto *x : {a.get(), b.get()}) ASSERT_TRUE(x->recv_reply());
    fence_both(7, &id, &segments);
    EXPECT_NE(id, "");
    ASSERT_EQ(segments.size(), 1u);
    EXPECT_GT(segments[0].second, 0u);

    // Nothing new: the same segments again.
    std::string again_id;
    std::vector<std::pair<uint64_t, uint64_t>> again;
    fence_both(8, &again_id, &again);
    EXPECT_EQ(again_id, id);
    EXPECT_EQ(again, segments);

    // A new commit: a segment of it appended to the same file.
    ASSERT_TRUE(send_commit(*b, 9, "pml.base.2.0", "b2"));
    ASSERT_TRUE(b->recv_reply());
    fence_both(10, &again_id, &again);
    EXPECT_EQ(again_id, id);
    ASSERT_EQ(again.size(), 2u);
    EXPECT_EQ(again[0], segments[0]);
}

// The node's topology (PMIX_LOCAL_TOPO) is not in the job data: the first Get makes it, the Gets
// that come meanwhile wait for it, later ones are answered from what was made; a pmix.optional Get
// (OpenMPI's) too. It is hwloc XML that hwloc loads, with the machine's processing units.
TEST_F(ServerSocket, LocalTopologyIsMadeWhenFirstAskedFor) {
    auto a = client(0);
    auto b = client(1);
    ASSERT_TRUE(send_get(*a, 3, PMIX_RANK_WILDCARD, PMIX_LOCAL_TOPO, PMIX_OPTIONAL));
    ASSERT_TRUE(send_get(*b, 4, PMIX_RANK_WILDCARD, PMIX_LOCAL_TOPO));
    std::string xml[2];
    int i = 0;
    for (auto *x : {a.get(), b.get()}) {
        auto r = x->recv_reply(30000);
        ASSERT_TRUE(r);
        ASSERT_EQ(r->status, PMIX_SUCCESS) << r->message;
        wire::get_reply g;
        ASSERT_TRUE(raw_client::body(*r, &g));
        const pmix_info_t *v = find(g.data, PMIX_LOCAL_TOPO);
        ASSERT_NE(v, nullptr);
        ASSERT_EQ(v->value.type, PMIX_STRING);
        xml[i++] = v->value.data.string;
    }
    EXPECT_EQ(xml[0], xml[1]);  // made once
    ASSERT_TRUE(send_get(*a, 5, PMIX_RANK_WILDCARD, PMIX_LOCAL_TOPO));
    auto again = a->recv_reply();
    ASSERT_TRUE(again);
    EXPECT_EQ(again->status, PMIX_SUCCESS);

    hwloc_topology_t t = nullptr;
    ASSERT_EQ(hwloc_topology_init(&t), 0);
    ASSERT_EQ(hwloc_topology_set_xmlbuffer(t, xml[0].c_str(), static_cast<int>(xml[0].size() + 1)), 0);
    ASSERT_EQ(hwloc_topology_load(t), 0);
    hwloc_topology_t here = nullptr;
    ASSERT_EQ(hwloc_topology_init(&here), 0);
    ASSERT_EQ(hwloc_topology_set_flags(here, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED), 0);
    ASSERT_EQ(hwloc_topology_load(here), 0);
    EXPECT_GT(hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU), 0);
    EXPECT_EQ(hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU), hwloc_get_nbobjs_by_type(here, HWLOC_OBJ_PU));
    hwloc_topology_destroy(here);
    hwloc_topology_destroy(t);
}

TEST_F(ServerSocket, FenceTimesOut) {
    auto a = client(0);
    ASSERT_TRUE(send_fence(*a, 5, {0, 1}, 1));
    auto r = a->recv_reply(3000);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, PMIX_ERR_TIMEOUT);
}

TEST_F(ServerSocket, MultiNodeFenceAndRemoteGetAreNotSupported) {
    auto a = client(0);
    auto b = client(1);
    auto c = client(2);
    for (auto *x : {a.get(), b.get(), c.get()}) ASSERT_TRUE(send_fence(*x, 3, {}));
    for (auto *x : {a.get(), b.get(), c.get()}) {
        auto r = x->recv_reply();
        ASSERT_TRUE(r);
        EXPECT_EQ(r->status, PMIX_ERR_NOT_SUPPORTED);
    }
    ASSERT_TRUE(send_get(*a, 4, 3, "btl.tcp.4.1"));
    auto r = a->recv_reply();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, PMIX_ERR_NOT_SUPPORTED);
    ASSERT_TRUE(send_get(*a, 5, 3, "btl.tcp.4.1", PMIX_OPTIONAL));
    r = a->recv_reply();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, PMIX_ERR_NOT_FOUND);
}

TEST_F(ServerSocket, GetWaitsForCommit) {
    auto a = client(0);
    auto b = client(1);
    ASSERT_TRUE(send_get(*a, 7, 1, "btl.vader.4.1"));
    EXPECT_FALSE(a->recv_reply(200));
    ASSERT_TRUE(send_commit(*b, 8, "btl.vader.4.1", "endpoint", PMIX_LOCAL));
    auto rb = b->recv_reply();
    ASSERT_TRUE(rb);
    EXPECT_EQ(rb->status, PMIX_SUCCESS);
    auto ra = a->recv_reply();
    ASSERT_TRUE(ra);
    EXPECT_EQ(ra->id, 7u);
    ASSERT_EQ(ra->status, PMIX_SUCCESS) << ra->message;
    wire::get_reply g;
    ASSERT_TRUE(raw_client::body(*ra, &g));
    const pmix_info_t *v = find(g.data, "btl.vader.4.1");
    ASSERT_NE(v, nullptr);
    EXPECT_STREQ(v->value.data.string, "endpoint");
    EXPECT_NE(find(g.data, PMIX_HOSTNAME), nullptr);  // the proc's job data comes along
}

TEST_F(ServerSocket, ImmediateGetAndTimeoutAndJobLevel) {
    auto a = client(0);
    ASSERT_TRUE(send_get(*a, 1, 1, "nothing", PMIX_IMMEDIATE));
    auto r = a->recv_reply();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, PMIX_ERR_NOT_FOUND);
    ASSERT_TRUE(send_get(*a, 2, 1, "nothing", nullptr, 1));
    r = a->recv_reply(3000);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, PMIX_ERR_TIMEOUT);
    ASSERT_TRUE(send_get(*a, 3, PMIX_RANK_WILDCARD, PMIX_JOB_SIZE));
    r = a->recv_reply();
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, PMIX_SUCCESS);
    wire::get_reply g;
    ASSERT_TRUE(raw_client::body(*r, &g));
    const pmix_info_t *js = find(g.data, PMIX_JOB_SIZE);
    ASSERT_NE(js, nullptr);
    EXPECT_EQ(js->value.type, PMIX_UINT32);
    EXPECT_EQ(js->value.data.uint32, 4u);
    ASSERT_TRUE(send_get(*a, 4, PMIX_RANK_WILDCARD, "no.such.key"));
    r = a->recv_reply();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, PMIX_ERR_NOT_FOUND);
}

TEST_F(ServerSocket, DeadClientFailsPendingFenceAndGets) {
    auto a = client(0);
    auto b = client(1);
    ASSERT_TRUE(send_fence(*a, 5, {0, 1}));
    ASSERT_TRUE(send_get(*a, 6, 1, "never"));
    EXPECT_FALSE(a->recv_reply(200));
    b->close_fd();  // rank 1 dies
    bool fence_failed = false, get_failed = false;
    for (int i = 0; i < 2; ++i) {
        auto r = a->recv_reply();
        ASSERT_TRUE(r);
        if (r->id == 5) fence_failed = r->status == PMIX_ERR_PROC_ABORTED;
        if (r->id == 6) get_failed = r->status == PMIX_ERR_NOT_FOUND;
    }
    EXPECT_TRUE(fence_failed);
    EXPECT_TRUE(get_failed);
    // A new fence including the dead rank fails at once.
    ASSERT_TRUE(send_fence(*a, 7, {0, 1}));
    auto r = a->recv_reply();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, PMIX_ERR_PROC_ABORTED);
}

TEST_F(ServerSocket, AbortLogAndJobControl) {
    auto a = client(0);
    wire::abort_request ab;
    ab.status = 3;
    ab.message = "bye";
    ASSERT_TRUE(a->send_msg(wire::msg_type::abort, 1, ab));
    auto r = a->recv_reply();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, PMIX_SUCCESS);
    {
        std::lock_guard<std::mutex> l(host.m);
        EXPECT_EQ(host.aborts, 1);
        EXPECT_EQ(host.abort_status, 3);
        EXPECT_EQ(host.abort_message, "bye");
    }

    wire::log_request lg;
    lg.data = make_infos(1);
    pmix_byte_object_t bo{const_cast<char *>("early failure"), 13};
    set_info(lg.data[0], PMIX_LOG_MSG, &bo, PMIX_BYTE_OBJECT);
    ASSERT_TRUE(a->send_msg(wire::msg_type::log, 2, lg));
    r = a->recv_reply();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, PMIX_SUCCESS);
    {
        std::lock_guard<std::mutex> l(host.m);
        ASSERT_EQ(host.logs.size(), 1u);
        EXPECT_EQ(host.logs[0], "early failure");
    }

    std::string dir = step.step_dir + "/ompi-session";
    ASSERT_EQ(mkdir(dir.c_str(), 0700), 0);
    wire::job_control_request jc;
    jc.infos = make_infos(2);
    set_info(jc.infos[0], PMIX_REGISTER_CLEANUP_DIR, dir.c_str(), PMIX_STRING);
    bool t = true;
    set_info(jc.infos[1], PMIX_CLEANUP_RECURSIVE, &t, PMIX_BOOL);
    ASSERT_TRUE(a->send_msg(wire::msg_type::job_control, 3, jc));
    r = a->recv_reply();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, PMIX_SUCCESS);

    // Outside the user's step directory, or escaping it with "..": refused, never removed.
    char outside_tmpl[] = "/tmp/pmixcpp-outside.XXXXXX";
    ASSERT_NE(mkdtemp(outside_tmpl), nullptr);
    const std::string outside = outside_tmpl;
    for (const std::string &bad : {outside, step.step_dir + "/../../" + outside.substr(5), step.step_root}) {
        wire::job_control_request esc;
        esc.infos = make_infos(1);
        set_info(esc.infos[0], PMIX_REGISTER_CLEANUP_DIR, bad.c_str(), PMIX_STRING);
        ASSERT_TRUE(a->send_msg(wire::msg_type::job_control, 3, esc));
        r = a->recv_reply();
        ASSERT_TRUE(r);
        EXPECT_EQ(r->status, PMIX_ERR_NO_PERMISSIONS) << bad;
    }
    // Inside, but through a link the job planted: accepted, and at the end the link is not followed.
    ASSERT_EQ(symlink(outside.c_str(), (step.step_dir + "/via").c_str()), 0);
    {
        std::ofstream(outside + "/precious") << "x";
        wire::job_control_request via;
        via.infos = make_infos(1);
        std::string p = step.step_dir + "/via/precious";
        set_info(via.infos[0], PMIX_REGISTER_CLEANUP, p.c_str(), PMIX_STRING);
        ASSERT_TRUE(a->send_msg(wire::msg_type::job_control, 3, via));
        r = a->recv_reply();
        ASSERT_TRUE(r);
        EXPECT_EQ(r->status, PMIX_SUCCESS);
    }

    // Kill of another namespace: refused (the actions themselves are tested in tests/dyn).
    wire::job_control_request other;
    pmix_proc_t elsewhere{};
    strcpy(elsewhere.nspace, "other.ns");
    other.targets.push_back(elsewhere);
    other.infos = make_infos(1);
    set_info(other.infos[0], "pmix.jctrl.kill", &t, PMIX_BOOL);
    ASSERT_TRUE(a->send_msg(wire::msg_type::job_control, 4, other));
    r = a->recv_reply();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, PMIX_ERR_NOT_SUPPORTED);

    // A signal to rank 0 (this process; SIGURG is ignored by default) reaches its pid.
    wire::job_control_request sig;
    pmix_proc_t rank0{};
    strcpy(rank0.nspace, step.nspace.c_str());
    sig.targets.push_back(rank0);
    sig.infos = make_infos(1);
    int urg = SIGURG;
    set_info(sig.infos[0], "pmix.jctrl.sig", &urg, PMIX_INT);
    ASSERT_TRUE(a->send_msg(wire::msg_type::job_control, 5, sig));
    r = a->recv_reply();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, PMIX_SUCCESS);

    srv->stop();
    EXPECT_FALSE(std::filesystem::exists(dir));
    EXPECT_FALSE(std::filesystem::exists(step.server_socket));
    EXPECT_TRUE(std::filesystem::exists(outside + "/precious")) << "a clean-up followed a link";
    std::filesystem::remove_all(outside);
}

TEST_F(ServerSocket, FinalizedRankIsNotADeath) {
    auto a = client(0);
    auto b = client(1);
    ASSERT_TRUE(b->send_msg(wire::msg_type::finalize, 2, wire::finalize_request{}));
    auto r = b->recv_reply();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, PMIX_SUCCESS);
    b->close_fd();
    // Its data request answers NOT_FOUND at once (it will never commit).
    ASSERT_TRUE(send_get(*a, 3, 1, "late"));
    r = a->recv_reply();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, PMIX_ERR_NOT_FOUND);
}

// PMIx_Init after the last PMIx_Finalize (OpenMPI 5 does at an MPI_Session_init after its last
// MPI_Session_finalize): the rank connects again, whether or not the server has seen its old
// connection close, and a fence over it that was entered while it was away completes.
TEST_F(ServerSocket, FinalizedRankConnectsAgainAndCountsInFences) {
    auto a = client(0);
    for (bool close_first : {true, false}) {
        SCOPED_TRACE(close_first ? "old connection closed first" : "old connection still open");
        auto b = client(1);
        ASSERT_TRUE(b->send_msg(wire::msg_type::finalize, 2, wire::finalize_request{}));
        auto r = b->recv_reply();
        ASSERT_TRUE(r);
        EXPECT_EQ(r->status, PMIX_SUCCESS);
        if (close_first) b->close_fd();
        // Another process of the step cannot take the rank while the one that finalized runs.
        pid_t pid = fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            raw_client impostor;
            bool refused = impostor.open(step.server_socket) &&
                           impostor.do_connect(step.nspace, 1, step.client_token) == PMIX_ERR_NO_PERMISSIONS;
            _exit(refused ? 0 : 1);
        }
        int status = 0;
        ASSERT_EQ(waitpid(pid, &status, 0), pid);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "another process took a finalized rank";
        ASSERT_TRUE(send_fence(*a, 5, {0, 1}));
        EXPECT_FALSE(a->recv_reply(300)) << "a fence failed for a rank that finalized but lives";
        auto b2 = client(1);  // connects again (do_connect expects PMIX_SUCCESS)
        ASSERT_TRUE(send_fence(*b2, 6, {0, 1}));
        auto rb = b2->recv_reply();
        ASSERT_TRUE(rb);
        EXPECT_EQ(rb->status, PMIX_SUCCESS);
        auto ra = a->recv_reply();
        ASSERT_TRUE(ra);
        EXPECT_EQ(ra->id, 5u);
        EXPECT_EQ(ra->status, PMIX_SUCCESS);
        b.reset();  // the old connection's end changes nothing for the rank
        ASSERT_TRUE(send_fence(*a, 7, {0, 1}));
        ASSERT_TRUE(send_fence(*b2, 8, {0, 1}));
        ra = a->recv_reply();
        ASSERT_TRUE(ra);
        EXPECT_EQ(ra->status, PMIX_SUCCESS);
        rb = b2->recv_reply();
        ASSERT_TRUE(rb);
        EXPECT_EQ(rb->status, PMIX_SUCCESS);
        // the rank's current connection finalizes: the next round starts from there
        ASSERT_TRUE(b2->send_msg(wire::msg_type::finalize, 9, wire::finalize_request{}));
        ASSERT_TRUE(b2->recv_reply());
        b2->close_fd();
        auto b3 = client(1);
        ASSERT_TRUE(b3->send_msg(wire::msg_type::finalize, 10, wire::finalize_request{}));
        ASSERT_TRUE(b3->recv_reply());
        b3->close_fd();
    }
    // A rank that is connected and has not finalized cannot be claimed twice.
    auto b = client(1);
    raw_client other;
    ASSERT_TRUE(other.open(step.server_socket));
    EXPECT_EQ(other.do_connect(step.nspace, 1, step.client_token), PMIX_ERR_NO_PERMISSIONS);
}

// A rank that finalized leaves the fences in flight when its process exits without coming back.
TEST_F(ServerSocket, FinalizedRankThatExitsFailsPendingFence) {
    auto a = client(0);
    ASSERT_TRUE(send_fence(*a, 5, {0, 1}));
    EXPECT_FALSE(a->recv_reply(200));
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        raw_client b;
        bool ok = b.open(step.server_socket) && b.do_connect(step.nspace, 1, step.client_token) == PMIX_SUCCESS &&
                  b.send_msg(wire::msg_type::finalize, 2, wire::finalize_request{}) && b.recv_reply();
        usleep(300 * 1000);  // finalized and alive: the fence must still wait
        _exit(ok ? 0 : 1);
    }
    EXPECT_FALSE(a->recv_reply(200));
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    auto r = a->recv_reply();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->id, 5u);
    EXPECT_EQ(r->status, PMIX_ERR_LOST_CONNECTION);
    // and a later fence including it fails at once
    ASSERT_TRUE(send_fence(*a, 6, {0, 1}));
    r = a->recv_reply();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, PMIX_ERR_LOST_CONNECTION);
}

// Publish / lookup through the real server (single node: node 0 keeps the data; the engine and
// the forwarding between nodes are tested in tests/dyn).
TEST_F(ServerSocket, PublishLookupThroughTheServer) {
    auto a = client(0);
    auto b = client(1);
    wire::lookup_request lk;
    lk.keys = {"svc"};
    lk.directives = make_infos(1);
    bool t = true;
    set_info(lk.directives[0], PMIX_WAIT, &t, PMIX_BOOL);
    ASSERT_TRUE(b->send_msg(wire::msg_type::lookup, 2, lk));
    EXPECT_FALSE(b->recv_reply(100));  // waits for the data

    wire::publish_request pub;
    pub.data = make_infos(1);
    set_info(pub.data[0], "svc", "port-0", PMIX_STRING);
    ASSERT_TRUE(a->send_msg(wire::msg_type::publish, 3, pub));
    auto r = a->recv_reply();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, PMIX_SUCCESS);
    r = b->recv_reply();
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, PMIX_SUCCESS);
    wire::lookup_reply found;
    ASSERT_TRUE(raw_client::body(*r, &found));
    ASSERT_EQ(found.owners.size(), 1u);
    EXPECT_EQ(found.owners[0].rank, 0u);
    EXPECT_STREQ(found.data[0].value.data.string, "port-0");

    // The publisher dies: its (default PMIX_PERSIST_PROC) data goes.
    a->close_fd();
    wire::lookup_request now;
    now.keys = {"svc"};
    pmix_status_t st = PMIX_SUCCESS;
    for (int i = 0; i < 50 && st == PMIX_SUCCESS; ++i) {
        ASSERT_TRUE(b->send_msg(wire::msg_type::lookup, 10 + i, now));
        r = b->recv_reply();
        ASSERT_TRUE(r);
        st = r->status;
        if (st == PMIX_SUCCESS) usleep(10000);
    }
    EXPECT_EQ(st, PMIX_ERR_NOT_FOUND);
}

// --- what one client may cost the server (decoders and queues) ----------------------------------

TEST_F(ServerSocket, FloodWithoutReadingIsDisconnectedOthersServed) {
    auto flooder = client(0);
    auto good = client(1);
    // Gets of all job-level data, answered at once; the flooder never reads.
    wire::get_request g;
    g.proc = make_proc(step.nspace, PMIX_RANK_WILDCARD);
    wire::Writer w;
    ASSERT_TRUE(wire::encode(w, g).ok());
    auto one = wire::encode_frame(static_cast<uint16_t>(wire::msg_type::get), 0, 1, w.data());
    ASSERT_TRUE(one.ok());
    std::vector<uint8_t> batch;
    for (int i = 0; i < 512; ++i) batch.insert(batch.end(), one->begin(), one->end());
    bool cut = false;
    for (int round = 0; round < 200 && !cut; ++round) cut = !flooder->send_raw(batch.data(), batch.size());
    EXPECT_TRUE(cut || flooder->wait_closed(10000)) << "the server kept a client that never reads";
    // The server still serves the others.
    ASSERT_TRUE(send_commit(*good, 2, "k", "v"));
    auto r = good->recv_reply();
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->status, PMIX_SUCCESS);
}

TEST_F(ServerSocket, WaitingGetsPerClientAreCapped) {
    auto c = client(0);
    // Gets of a key rank 1 never commits wait; past the cap the next one fails at once.
    for (uint32_t id = 1; id <= 4096; ++id) ASSERT_TRUE(send_get(*c, id, 1, "never"));
    ASSERT_TRUE(send_get(*c, 5000, 1, "never"));
    auto r = c->recv_reply();
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->id, 5000u);
    EXPECT_EQ(r->status, PMIX_ERR_OUT_OF_RESOURCE);
}

TEST_F(ServerSocket, HostileFramesCloseOnlyThatConnection) {
    auto good = client(1);
    auto send_and_expect_closed = [&](uint16_t type, const std::vector<uint8_t> &payload, bool connect_first) {
        raw_client c;
        EXPECT_TRUE(c.open(step.server_socket));
        if (connect_first) EXPECT_EQ(c.do_connect(step.nspace, 0, step.client_token), PMIX_SUCCESS);
        auto f = wire::encode_frame(type, 0, 9, payload);
        ASSERT_TRUE(f.ok());
        EXPECT_TRUE(c.send_raw(f->data(), f->size()));
        EXPECT_TRUE(c.wait_closed());
    };
    std::vector<uint8_t> huge_count{0xff, 0xff, 0xff, 0xff};
    huge_count.resize(40, 0);
    send_and_expect_closed(static_cast<uint16_t>(wire::msg_type::commit), huge_count, true);
    // Before connect, a frame larger than a connect is refused.
    send_and_expect_closed(static_cast<uint16_t>(wire::msg_type::connect), std::vector<uint8_t>(8192, 'x'), false);
    // Well formed but over the decode budget: 1M infos of 10 bytes (577 MB decoded).
    wire::Writer w;
    w.put_u32(1u << 20);
    for (uint32_t i = 0; i < (1u << 20); ++i) {
        w.put_u32(0);
        w.put_u32(0);
        w.put_u16(PMIX_UNDEF);
    }
    send_and_expect_closed(static_cast<uint16_t>(wire::msg_type::finalize), w.data(), true);
    ASSERT_TRUE(send_commit(*good, 2, "k", "v"));
    auto r = good->recv_reply();
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->status, PMIX_SUCCESS);
}

TEST_F(ServerSocket, FencesInFlightPerClientAreCapped) {
    auto c = client(0);
    // Fences over {0, 1} that rank 1 never enters: each is a new instance; past the cap the next
    // one fails at once.
    for (uint32_t id = 1; id <= 1024; ++id) ASSERT_TRUE(send_fence(*c, id, {0, 1}));
    ASSERT_TRUE(send_fence(*c, 5000, {0, 1}));
    auto r = c->recv_reply();
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->id, 5000u);
    EXPECT_EQ(r->status, PMIX_ERR_OUT_OF_RESOURCE);
}

// accept() out of descriptors: the server pauses accepts instead of spinning on the readable
// listening socket, and accepts again once descriptors are back.
TEST_F(ServerSocket, AcceptOutOfDescriptorsBacksOffThenResumes) {
    size_t open_fds = 0;
    for (const auto &e : std::filesystem::directory_iterator("/proc/self/fd")) {
        (void)e;
        ++open_fds;
    }
    rlimit saved{};
    ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &saved), 0);
    rlimit tight = saved;
    tight.rlim_cur = open_fds + 7;
    ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &tight), 0);
    // Clients and the server's accepted sockets share the limit: the server runs out first or
    // together with the clients.
    std::vector<std::unique_ptr<raw_client>> clients;
    for (int i = 0; i < 8; ++i) {
        auto c = std::make_unique<raw_client>();
        if (!c->open(step.server_socket)) break;
        clients.push_back(std::move(c));
        usleep(20000);
    }
    rusage before{}, after{};
    getrusage(RUSAGE_SELF, &before);
    usleep(500000);
    getrusage(RUSAGE_SELF, &after);
    auto cpu_us = [](const rusage &r) {
        return (r.ru_utime.tv_sec + r.ru_stime.tv_sec) * 1000000L + r.ru_utime.tv_usec + r.ru_stime.tv_usec;
    };
    long used = cpu_us(after) - cpu_us(before);
    ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &saved), 0);
    EXPECT_LT(used, 200000) << "the server spun on accept for " << used << " us of 500000";
    clients.clear();
    // Descriptors are back: a client connects and is served.
    auto c = std::make_unique<raw_client>();
    ASSERT_TRUE(c->open(step.server_socket));
    EXPECT_EQ(c->do_connect(step.nspace, 0, step.client_token), PMIX_SUCCESS);
}
