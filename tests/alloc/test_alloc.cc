// Allocation requests without Slurm: attribute checks (plugin/services/alloc/alloc_codec.h), the
// request state machine and leases (alloc_table.h), the agent messages and channel
// (plugin/agent/: agent_proto.h, agent_client.h), the wire messages alloc/query, and the server's alloc_service with a fake host.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <thread>

#include "plugin/agent/proto/agent_io.h"
#include "plugin/agent/stepd/agent_client.h"
#include "tests/net/test_credentials.h"
#include "plugin/services/alloc/alloc_codec.h"
#include "plugin/services/alloc/alloc_srun.h"
#include "plugin/services/alloc/alloc_plan.h"
#include "plugin/services/service_ids.h"
#include "plugin/server/alloc.h"
#include "wire/frame.h"
#include "wire/messages.h"

using namespace pmixcpp;
using namespace pmixcpp::alloc;

namespace {

pmix_info_t info_str(const char *key, const char *v, bool required = false) {
    pmix_info_t i{};
    strncpy(i.key, key, PMIX_MAX_KEYLEN);
    EXPECT_TRUE(value_load(&i.value, v, PMIX_STRING).ok());
    if (required) i.flags |= PMIX_INFO_REQD;
    return i;
}
pmix_info_t info_flag(const char *key, bool v) {
    pmix_info_t i{};
    strncpy(i.key, key, PMIX_MAX_KEYLEN);
    EXPECT_TRUE(value_load(&i.value, &v, PMIX_BOOL).ok());
    return i;
}
template <typename T>
pmix_info_t info_num(const char *key, T v, pmix_data_type_t type, bool required = false) {
    pmix_info_t i{};
    strncpy(i.key, key, PMIX_MAX_KEYLEN);
    EXPECT_TRUE(value_load(&i.value, &v, type).ok());
    if (required) i.flags |= PMIX_INFO_REQD;
    return i;
}

struct infos {
    std::vector<pmix_info_t> v;
    ~infos() {
        for (auto &i : v) info_destruct(&i);
    }
    infos &add(pmix_info_t i) {
        v.push_back(i);
        return *this;
    }
    InfoArray array() const {
        auto *p = static_cast<pmix_info_t *>(calloc(v.size() ? v.size() : 1, sizeof(pmix_info_t)));
        for (size_t k = 0; k < v.size(); ++k) EXPECT_TRUE(info_xfer(&p[k], &v[k]).ok());
        return InfoArray(p, v.size());
    }
};

}  // namespace

// --- parse_spec -------------------------------------------------------------------------------

TEST(AllocSpec, NewWithResources) {
    infos in;
    in.add(info_num(PMIX_ALLOC_NUM_NODES, uint64_t(2), PMIX_UINT64))
        .add(info_str(PMIX_ALLOC_NODE_LIST, "n[3-4]"))
        .add(info_num(PMIX_ALLOC_NUM_CPUS, uint32_t(8), PMIX_UINT32))
        .add(info_num(PMIX_ALLOC_MEM_SIZE, 512.0f, PMIX_FLOAT))
        .add(info_num(PMIX_ALLOC_TIME, uint32_t(90), PMIX_UINT32))
        .add(info_str(PMIX_ALLOC_REQ_ID, "grow-1"))
        .add(info_str(PMIX_ALLOC_QUEUE, "debug"))
        .add(info_num(PMIX_TIMEOUT, 5, PMIX_INT));
    auto s = parse_spec(PMIX_ALLOC_NEW, in.v.data(), in.v.size());
    ASSERT_TRUE(s.ok()) << s.status().message();
    EXPECT_EQ(s->dir, directive::new_allocation);
    EXPECT_EQ(*s->num_nodes, 2u);
    EXPECT_EQ(s->node_list, "n[3-4]");
    EXPECT_EQ(*s->num_cpus, 8u);
    EXPECT_EQ(*s->mem_mb, 512u);
    EXPECT_EQ(*s->time_sec, 90u);
    EXPECT_EQ(s->request_id, "grow-1");
    EXPECT_EQ(s->queue, "debug");
    EXPECT_TRUE(s->ignored.empty());
    EXPECT_NE(describe(s.value()).find("NEW"), std::string::npos);
}

TEST(AllocSpec, NewDefaultsToOneNode) {
    auto s = parse_spec(PMIX_ALLOC_NEW, nullptr, 0);
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(*s->num_nodes, 1u);
}

TEST(AllocSpec, BadTypesAndValuesAreBadParam) {
    struct c {
        pmix_info_t info;
        const char *why;
    };
    std::vector<c> cases = {
        {info_str(PMIX_ALLOC_NUM_NODES, "two"), "string node count"},
        {info_num(PMIX_ALLOC_NUM_NODES, int32_t(0), PMIX_INT32), "zero nodes"},
        {info_num(PMIX_ALLOC_NUM_NODES, int32_t(-3), PMIX_INT32), "negative nodes"},
        {info_num(PMIX_ALLOC_NODE_LIST, uint32_t(3), PMIX_UINT32), "numeric node list"},
        {info_str(PMIX_ALLOC_NODE_LIST, "n[3-"), "broken host list"},
        {info_str(PMIX_ALLOC_NODE_LIST, ""), "empty node list"},
        {info_num(PMIX_ALLOC_TIME, -1.0, PMIX_DOUBLE), "negative time"},
        {info_num(PMIX_ALLOC_TIME, true, PMIX_BOOL), "bool time"},
        {info_str(PMIX_ALLOC_ID, "a b"), "id with a blank"},
    };
    for (auto &k : cases) {
        auto s = parse_spec(PMIX_ALLOC_NEW, &k.info, 1);
        EXPECT_FALSE(s.ok()) << k.why;
        EXPECT_EQ(s.status().code(), PMIX_ERR_BAD_PARAM) << k.why << ": " << s.status().message();
        info_destruct(&k.info);
    }
}

TEST(AllocSpec, RequiredVersusOptional) {
    infos opt;
    opt.add(info_str(PMIX_ALLOC_CPU_LIST, "0-3")).add(info_str(PMIX_ALLOC_FABRIC_QOS, "gold"));
    auto s = parse_spec(PMIX_ALLOC_NEW, opt.v.data(), opt.v.size());
    ASSERT_TRUE(s.ok()) << s.status().message();
    EXPECT_EQ(s->ignored.size(), 2u);

    infos req;
    req.add(info_str(PMIX_ALLOC_CPU_LIST, "0-3", true));
    s = parse_spec(PMIX_ALLOC_NEW, req.v.data(), req.v.size());
    EXPECT_EQ(s.status().code(), PMIX_ERR_NOT_SUPPORTED);
}

TEST(AllocSpec, DirectiveRules) {
    EXPECT_EQ(parse_spec(99, nullptr, 0).status().code(), PMIX_ERR_BAD_PARAM);
    EXPECT_EQ(parse_spec(PMIX_ALLOC_EXTERNAL, nullptr, 0).status().code(), PMIX_ERR_NOT_SUPPORTED);
    EXPECT_EQ(parse_spec(PMIX_ALLOC_EXTEND, nullptr, 0).status().code(), PMIX_ERR_BAD_PARAM);
    EXPECT_EQ(parse_spec(PMIX_ALLOC_RELEASE, nullptr, 0).status().code(), PMIX_ERR_BAD_PARAM);
    infos t;
    t.add(info_num(PMIX_ALLOC_TIME, uint32_t(600), PMIX_UINT32));
    EXPECT_TRUE(parse_spec(PMIX_ALLOC_EXTEND, t.v.data(), t.v.size()).ok());
    EXPECT_EQ(parse_spec(PMIX_ALLOC_REQ_CANCEL, t.v.data(), t.v.size()).status().code(), PMIX_ERR_BAD_PARAM);
    EXPECT_TRUE(parse_spec(PMIX_ALLOC_REQ_CANCEL, nullptr, 0).ok());
    EXPECT_TRUE(parse_spec(PMIX_ALLOC_REAQUIRE, nullptr, 0).ok());
    infos n;
    n.add(info_num(PMIX_ALLOC_NUM_NODES, 2, PMIX_INT));
    EXPECT_TRUE(parse_spec(PMIX_ALLOC_RELEASE, n.v.data(), n.v.size()).ok());
    EXPECT_EQ(parse_spec(PMIX_ALLOC_REAQUIRE, n.v.data(), n.v.size()).status().code(), PMIX_ERR_BAD_PARAM);
    infos c;
    c.add(info_num(PMIX_ALLOC_NUM_CPUS, 2, PMIX_INT));
    EXPECT_EQ(parse_spec(PMIX_ALLOC_RELEASE, c.v.data(), c.v.size()).status().code(), PMIX_ERR_BAD_PARAM);
}

// --- request_table --------------------------------------------------------------------------

TEST(AllocTable, StateMachine) {
    EXPECT_TRUE(can_transition(req_state::queued, req_state::pending));
    EXPECT_TRUE(can_transition(req_state::queued, req_state::granted));
    EXPECT_TRUE(can_transition(req_state::pending, req_state::cancelled));
    EXPECT_FALSE(can_transition(req_state::pending, req_state::queued));
    EXPECT_FALSE(can_transition(req_state::pending, req_state::pending));
    EXPECT_FALSE(can_transition(req_state::granted, req_state::cancelled));
    EXPECT_FALSE(can_transition(req_state::cancelled, req_state::granted));
    EXPECT_STREQ(to_string(req_state::pending), "pending");

    request_table t("7.0.");
    auto now = alloc_clock::now();
    spec s;
    s.request_id = "mine";
    auto a = t.add(s, "ns:0", now);
    ASSERT_TRUE(a.ok());
    EXPECT_EQ(a.value()->id, "7.0.1");
    EXPECT_EQ(t.add(s, "ns:1", now).status().code(), PMIX_ERR_EXISTS);  // name still open
    EXPECT_EQ(t.find("mine"), a.value());
    EXPECT_EQ(t.find("7.0.1"), a.value());
    ASSERT_TRUE(t.transition(*a.value(), req_state::pending).ok());
    a.value()->slurm_job = 42;
    EXPECT_EQ(t.find_by_job(42), a.value());
    EXPECT_EQ(t.open_requests("ns:0").size(), 1u);
    EXPECT_EQ(t.open_requests("ns:1").size(), 0u);
    ASSERT_TRUE(t.transition(*a.value(), req_state::cancelled, PMIX_ERR_JOB_CANCELED, "by ns:0").ok());
    EXPECT_FALSE(t.transition(*a.value(), req_state::granted).ok());
    EXPECT_TRUE(t.open_requests().empty());
    std::string line = request_table::status_line(*a.value());
    EXPECT_NE(line.find("7.0.1"), std::string::npos) << line;
    EXPECT_NE(line.find("cancelled"), std::string::npos) << line;
    EXPECT_NE(line.find("job=42"), std::string::npos) << line;
    EXPECT_TRUE(t.add(s, "ns:1", now).ok());  // the name is free again
    EXPECT_EQ(t.of("ns:0").size(), 1u);
}

TEST(AllocTable, PrunesFinalRequests) {
    request_table t("1.0.", 3);
    auto now = alloc_clock::now();
    for (int i = 0; i < 10; ++i) {
        auto r = t.add(spec{}, "ns:0", now);
        ASSERT_TRUE(r.ok());
        ASSERT_TRUE(t.transition(*r.value(), req_state::granted).ok());
    }
    auto open = t.add(spec{}, "ns:0", now);
    ASSERT_TRUE(open.ok());
    EXPECT_LE(t.size(), 5u);
    EXPECT_EQ(t.open_requests().size(), 1u);
}

TEST(AllocTable, Leases) {
    request_table t("1.0.");
    auto now = alloc_clock::now();
    t.add_lease("1.0.1", {"n3", "n4"}, now + std::chrono::seconds(60));
    t.add_lease("1.0.2", {"n5"}, now + std::chrono::seconds(1));
    t.add_lease("1.0.3", {"n6"}, now + std::chrono::seconds(60));
    EXPECT_EQ(t.take_leases("1.0.1", now), (std::vector<std::string>{"n3", "n4"}));
    EXPECT_TRUE(t.take_leases("1.0.1", now).empty());  // taken once
    // n5's lease has run out by then; n6 is still lent
    EXPECT_EQ(t.take_leases("", now + std::chrono::seconds(5)), (std::vector<std::string>{"n6"}));
    EXPECT_EQ(t.lease_count(), 0u);
}

// --- messages -------------------------------------------------------------------------------

TEST(AllocMessages, AgentRequestAndReplyRoundTrip) {
    agent_request q;
    q.op = agent_op::query;
    q.nspace = "slurm.5.0";
    q.rank = 3;
    q.node = "n2";
    q.keys = {PMIX_QUERY_ALLOC_STATUS, PMIX_TIME_REMAINING};
    infos in;
    in.add(info_str(PMIX_ALLOC_ID, "5.0.1"));
    q.infos = in.array();
    auto bytes = encode_request(q);
    ASSERT_TRUE(bytes.ok());
    agent_request back;
    wire::Reader r(bytes.value().data(), bytes.value().size());
    ASSERT_TRUE(decode(r, &back).ok());
    EXPECT_TRUE(r.expect_end().ok());
    EXPECT_EQ(back.op, agent_op::query);
    EXPECT_EQ(back.nspace, q.nspace);
    EXPECT_EQ(back.rank, 3u);
    EXPECT_EQ(back.node, "n2");
    EXPECT_EQ(back.keys, q.keys);
    EXPECT_EQ(info_string(back.infos, PMIX_ALLOC_ID).value_or(""), "5.0.1");

    agent_reply rep;
    rep.status = PMIX_ERR_NO_PERMISSIONS;
    rep.message = "Access/permission denied";
    info_builder b;
    b.add_string(PMIX_ALLOC_ID, "5.0.2").add_u32(PMIX_ALLOC_TIME, 60);
    rep.results = b.take();
    auto rb = encode_reply(rep);
    ASSERT_TRUE(rb.ok());
    agent_reply rback;
    wire::Reader rr(rb.value().data(), rb.value().size());
    ASSERT_TRUE(decode(rr, &rback).ok());
    EXPECT_EQ(rback.status, PMIX_ERR_NO_PERMISSIONS);
    EXPECT_EQ(rback.message, rep.message);
    EXPECT_EQ(rback.results.size(), 2u);

    // Truncations never decode.
    for (size_t n = 0; n + 1 < bytes.value().size(); n += 3) {
        agent_request junk;
        wire::Reader jr(bytes.value().data(), n);
        Status st = decode(jr, &junk);
        if (st.ok()) st = jr.expect_end();
        EXPECT_FALSE(st.ok()) << n;
    }
    std::vector<uint8_t> bad = bytes.value();
    bad[0] = 9;  // unknown operation
    agent_request junk;
    wire::Reader br(bad.data(), bad.size());
    EXPECT_FALSE(decode(br, &junk).ok());
}

TEST(AllocMessages, WireAllocAndQuery) {
    wire::alloc_request a;
    a.directive = PMIX_ALLOC_EXTEND;
    infos in;
    in.add(info_num(PMIX_ALLOC_NUM_NODES, uint64_t(2), PMIX_UINT64, true));
    a.infos = in.array();
    wire::Writer w;
    ASSERT_TRUE(wire::encode(w, a).ok());
    wire::alloc_request ab;
    ASSERT_TRUE(wire::decode_payload(w.data(), &ab).ok());
    EXPECT_EQ(ab.directive, PMIX_ALLOC_EXTEND);
    ASSERT_EQ(ab.infos.size(), 1u);
    EXPECT_TRUE(ab.infos[0].flags & PMIX_INFO_REQD);

    wire::query_request q;
    q.queries.resize(2);
    q.queries[0].keys = {PMIX_QUERY_NAMESPACES, PMIX_QUERY_JOB_STATUS};
    q.queries[1].keys = {PMIX_QUERY_ALLOC_STATUS};
    infos qual;
    qual.add(info_str(PMIX_ALLOC_ID, "1.0.1"));
    q.queries[1].qualifiers = qual.array();
    wire::Writer qw;
    ASSERT_TRUE(wire::encode(qw, q).ok());
    wire::query_request qb;
    ASSERT_TRUE(wire::decode_payload(qw.data(), &qb).ok());
    ASSERT_EQ(qb.queries.size(), 2u);
    EXPECT_EQ(qb.queries[0].keys, q.queries[0].keys);
    EXPECT_EQ(qb.queries[1].qualifiers.size(), 1u);
    EXPECT_TRUE(wire::is_request_type(static_cast<uint16_t>(wire::msg_type::alloc)));
    EXPECT_TRUE(wire::is_request_type(static_cast<uint16_t>(wire::msg_type::query)));
    EXPECT_STREQ(wire::to_string(wire::msg_type::query), "query");
    for (size_t n = 0; n + 1 < qw.data().size(); ++n) {
        wire::query_request junk;
        EXPECT_FALSE(wire::decode_payload(std::span<const uint8_t>(qw.data().data(), n), &junk).ok()) << n;
    }
}

// --- the agent channel ------------------------------------------------------------------------

TEST(AllocAgent, CallAndAnswerOverTcp) {
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(lfd, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(bind(lfd, reinterpret_cast<sockaddr *>(&a), sizeof(a)), 0);
    ASSERT_EQ(listen(lfd, 4), 0);
    socklen_t len = sizeof(a);
    getsockname(lfd, reinterpret_cast<sockaddr *>(&a), &len);
    uint16_t port = ntohs(a.sin_port);

    // A one-shot "agent": checks the slurmstepd credential, echoes the body reversed.
    pmixcpp::testing::agent_auth auth, forger;
    std::thread agent([lfd, keys = auth.keys()] {
        for (int i = 0; i < 2; ++i) {
            int fd = accept(lfd, nullptr, nullptr);
            Status auth = agent_io::accept_authenticated(fd, keys, agent_io::clock_type::now() + std::chrono::seconds(5));
            if (!auth.ok()) {
                close(fd);  // a forged credential: refused at the hello
                continue;
            }
            wire::FrameReader reader(agent::kMaxPayload);
            uint8_t buf[4096];
            std::optional<wire::Frame> f;
            while (!f) {
                ssize_t n = read(fd, buf, sizeof(buf));
                if (n <= 0) break;
                ASSERT_TRUE(reader.feed(buf, n).ok());
                auto nx = reader.next();
                ASSERT_TRUE(nx.ok());
                f = std::move(nx.value());
            }
            ASSERT_TRUE(f.has_value());
            EXPECT_EQ(f->type, static_cast<uint16_t>(services::id_of(services::service::alloc)));
            std::vector<uint8_t> rev(f->payload.rbegin(), f->payload.rend());
            EXPECT_TRUE(agent_io::send_reply_and_close(fd, agent::reply{PMIX_SUCCESS, "done", rev}).ok());
        }
    });
    sockaddr_storage host{};
    memcpy(&host, &a, sizeof(a));
    std::vector<uint8_t> body = {1, 2, 3};
    auto r = agent::call_agent(host, port, auth.client(), services::id_of(services::service::alloc), body, 5000);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->body, (std::vector<uint8_t>{3, 2, 1}));
    EXPECT_EQ(r->message, "done");
    auto wrong = agent::call_agent(host, port, forger.client(), services::id_of(services::service::alloc), body, 5000);
    EXPECT_FALSE(wrong.ok());  // refused at the hello: the caller tries again until its deadline
    agent.join();

    // Nobody answers: the client's shutdown gate ends the wait, as cancelled.
    agent::client client(host, port, auth.client());
    std::thread stopper([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        client.shutdown();
    });
    auto t0 = std::chrono::steady_clock::now();
    auto c = client.call_sync(services::id_of(services::service::alloc), body, 60000);  // connects (backlog), no answer
    stopper.join();
    ASSERT_FALSE(c.ok());
    EXPECT_EQ(c.status().code(), PMIX_ERR_JOB_CANCELED);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
    close(lfd);
}

// --- alloc_service ----------------------------------------------------------------------------

namespace {

step_info one_node() {
    step_info s;
    s.nspace = "slurm.9.0";
    s.job_id = 9;
    s.ntasks = 4;
    s.node_id = 0;
    s.node_names = {"n1", "n2"};
    s.node_ranks = {{0, 1}, {2, 3}};
    return s;
}

struct fake_host : server::alloc_host {
    std::vector<std::pair<agent_request, reply_fn>> got;
    void forward_alloc(std::vector<uint8_t> request, int, reply_fn done) override {
        agent_request r;
        wire::Reader rd(request.data(), request.size());
        EXPECT_TRUE(decode(rd, &r).ok());
        got.emplace_back(std::move(r), std::move(done));
    }
};

struct service_harness {
    struct answer {
        uint64_t conn;
        uint32_t id;
        pmix_status_t status;
        std::string message;
        InfoArray results;
    };
    std::vector<answer> replies;
    std::vector<wire::event_notification> events;
    std::vector<std::function<void()>> posted;
    fake_host host;
    server::alloc_service svc;

    explicit service_harness(bool with_host = true, uint32_t default_timeout = server::kDefaultAllocTimeoutSec)
        : svc(one_node(), with_host ? &host : nullptr, ops(), default_timeout) {}
    server::alloc_ops ops() {
        server::alloc_ops o;
        o.reply = [this](uint64_t c, uint32_t id, pmix_status_t st, const std::string &m, InfoArray &&r) {
            replies.push_back(answer{c, id, st, m, std::move(r)});
        };
        o.notify = [this](uint32_t, wire::event_notification &&ev) { events.push_back(std::move(ev)); };
        o.post = [this](std::function<void()> fn) { posted.push_back(std::move(fn)); };
        o.local_procs = [] {
            std::vector<server::proc_row> rows(2);
            rows[0].rank = 0;
            rows[0].pid = getpid();
            rows[0].state = PMIX_PROC_STATE_RUNNING;
            rows[0].executable = server::executable_of(getpid());
            rows[1].rank = 1;
            rows[1].state = PMIX_PROC_STATE_LAUNCH_UNDERWAY;
            return rows;
        };
        return o;
    }
    void run_posted() {
        auto p = std::move(posted);
        posted.clear();
        for (auto &f : p) f();
    }
};

std::vector<uint8_t> reply_bytes(pmix_status_t st, const std::string &msg, InfoArray results) {
    agent_reply rep;
    rep.status = st;
    rep.message = msg;
    rep.results = std::move(results);
    return encode_reply(rep).value();
}

}  // namespace

TEST(AllocService, BadParamNeverReachesTheHost) {
    service_harness h;
    wire::alloc_request m;
    m.directive = PMIX_ALLOC_EXTEND;
    infos in;
    in.add(info_str(PMIX_ALLOC_NUM_NODES, "lots"));
    m.infos = in.array();
    h.svc.allocate(1, 7, 0, std::move(m));
    ASSERT_EQ(h.replies.size(), 1u);
    EXPECT_EQ(h.replies[0].status, PMIX_ERR_BAD_PARAM);
    EXPECT_TRUE(h.host.got.empty());
}

TEST(AllocService, NoHostIsNotSupported) {
    service_harness h(false);
    wire::alloc_request m;
    m.directive = PMIX_ALLOC_NEW;
    h.svc.allocate(1, 7, 0, std::move(m));
    ASSERT_EQ(h.replies.size(), 1u);
    EXPECT_EQ(h.replies[0].status, PMIX_ERR_NOT_SUPPORTED);
}

TEST(AllocService, GrantedRequestRepliesAndNotifies) {
    service_harness h;
    wire::alloc_request m;
    m.directive = PMIX_ALLOC_EXTEND;
    infos in;
    in.add(info_num(PMIX_ALLOC_NUM_NODES, 2, PMIX_INT)).add(info_str(PMIX_ALLOC_REQ_ID, "grow"));
    m.infos = in.array();
    h.svc.allocate(3, 11, 1, std::move(m));
    ASSERT_EQ(h.host.got.size(), 1u);
    EXPECT_TRUE(h.replies.empty());  // the loop does not wait
    const agent_request &sent = h.host.got[0].first;
    EXPECT_EQ(sent.op, agent_op::allocate);
    EXPECT_EQ(sent.rank, 1u);
    EXPECT_EQ(sent.node, "n1");
    EXPECT_EQ(sent.directive, PMIX_ALLOC_EXTEND);

    info_builder b;
    b.add_string(PMIX_ALLOC_ID, "9.0.1").add_string(PMIX_ALLOC_NODE_LIST, "n[3-4]");
    h.host.got[0].second(reply_bytes(PMIX_SUCCESS, "", b.take()));
    EXPECT_TRUE(h.replies.empty());  // only on the loop thread
    h.run_posted();
    ASSERT_EQ(h.replies.size(), 1u);
    EXPECT_EQ(h.replies[0].conn, 3u);
    EXPECT_EQ(h.replies[0].id, 11u);
    EXPECT_EQ(h.replies[0].status, PMIX_SUCCESS);
    EXPECT_EQ(info_string(h.replies[0].results, PMIX_ALLOC_NODE_LIST).value_or(""), "n[3-4]");
    ASSERT_EQ(h.events.size(), 1u);
    EXPECT_EQ(h.events[0].status, PMIX_NOTIFY_ALLOC_COMPLETE);
    EXPECT_EQ(h.events[0].source.rank, 1u);
    EXPECT_EQ(h.events[0].range, PMIX_RANGE_NAMESPACE);
    EXPECT_EQ(info_string(h.events[0].infos, PMIX_ALLOC_ID).value_or(""), "9.0.1");
    EXPECT_EQ(info_string(h.events[0].infos, PMIX_ALLOC_REQ_ID).value_or(""), "grow");
}

TEST(AllocService, RefusalCarriesSlurmsReason) {
    service_harness h;
    wire::alloc_request m;
    m.directive = PMIX_ALLOC_EXTEND;
    infos in;
    in.add(info_num(PMIX_ALLOC_TIME, 3600, PMIX_INT));
    m.infos = in.array();
    h.svc.allocate(1, 2, 0, std::move(m));
    ASSERT_EQ(h.host.got.size(), 1u);
    h.host.got[0].second(reply_bytes(PMIX_ERR_NO_PERMISSIONS, "slurmctld: Access/permission denied", InfoArray()));
    h.run_posted();
    ASSERT_EQ(h.replies.size(), 1u);
    EXPECT_EQ(h.replies[0].status, PMIX_ERR_NO_PERMISSIONS);
    EXPECT_NE(h.replies[0].message.find("Access/permission denied"), std::string::npos);
    ASSERT_EQ(h.events.size(), 1u);
    EXPECT_NE(info_string(h.events[0].infos, PMIX_EVENT_TEXT_MESSAGE).value_or("").find("denied"), std::string::npos);

    // A host that cannot reach srun: a clear status, never a hang.
    wire::alloc_request m2;
    m2.directive = PMIX_ALLOC_NEW;
    h.svc.allocate(1, 3, 0, std::move(m2));
    h.host.got[1].second(Status(PMIX_ERR_UNREACH, "srun agent: connect: refused"));
    h.run_posted();
    ASSERT_EQ(h.replies.size(), 2u);
    EXPECT_EQ(h.replies[1].status, PMIX_ERR_UNREACH);
}

// The PMIX_TIMEOUT the bridge is given (nullopt: none).
std::optional<int64_t> sent_timeout(const agent_request &r) {
    const pmix_info_t *t = find_info(r.infos, PMIX_TIMEOUT);
    if (t == nullptr) return std::nullopt;
    auto v = value_to_number<int64_t>(t->value);
    return v.ok() ? std::optional<int64_t>(v.value()) : std::nullopt;
}

TEST(AllocService, RequestsThatMayPendGetTheDefaultTimeout) {
    service_harness h(true, 45);
    auto ask = [&h](pmix_alloc_directive_t d, int nodes, std::optional<int> timeout) {
        infos in;
        if (nodes) in.add(info_num(PMIX_ALLOC_NUM_NODES, nodes, PMIX_INT));
        if (timeout) in.add(info_num(PMIX_TIMEOUT, *timeout, PMIX_INT));
        wire::alloc_request m;
        m.directive = d;
        m.infos = in.array();
        h.svc.allocate(1, static_cast<uint32_t>(h.host.got.size() + 1), 0, std::move(m));
    };
    ask(PMIX_ALLOC_NEW, 0, std::nullopt);
    ask(PMIX_ALLOC_EXTEND, 2, std::nullopt);
    ask(PMIX_ALLOC_EXTEND, 2, 7);
    ask(PMIX_ALLOC_EXTEND, 2, 0);
    ask(PMIX_ALLOC_RELEASE, 1, std::nullopt);
    ASSERT_EQ(h.host.got.size(), 5u);
    EXPECT_EQ(sent_timeout(h.host.got[0].first), 45) << "NEW without PMIX_TIMEOUT";
    EXPECT_EQ(sent_timeout(h.host.got[1].first), 45) << "EXTEND without PMIX_TIMEOUT";
    EXPECT_EQ(sent_timeout(h.host.got[2].first), 7) << "the caller's own PMIX_TIMEOUT wins";
    EXPECT_EQ(sent_timeout(h.host.got[3].first), 0) << "PMIX_TIMEOUT 0: the caller asked for no limit";
    EXPECT_FALSE(sent_timeout(h.host.got[4].first)) << "a RELEASE never pends";

    // The bridge's timeout, with the default applied: the caller learns whose limit it was.
    h.host.got[1].second(reply_bytes(PMIX_ERR_TIMEOUT, "still pending in Slurm after 45 s (pmix.timeout)", InfoArray()));
    h.host.got[2].second(reply_bytes(PMIX_ERR_TIMEOUT, "still pending in Slurm after 7 s (pmix.timeout)", InfoArray()));
    h.run_posted();
    ASSERT_EQ(h.replies.size(), 2u);
    EXPECT_EQ(h.replies[0].status, PMIX_ERR_TIMEOUT);
    EXPECT_NE(h.replies[0].message.find("PMIxCppAllocTimeout=45 s"), std::string::npos) << h.replies[0].message;
    EXPECT_EQ(h.replies[1].message.find("PMIxCppAllocTimeout"), std::string::npos) << h.replies[1].message;

    // PMIxCppAllocTimeout=0: nothing added.
    service_harness none(true, 0);
    wire::alloc_request m;
    m.directive = PMIX_ALLOC_NEW;
    none.svc.allocate(1, 1, 0, std::move(m));
    ASSERT_EQ(none.host.got.size(), 1u);
    EXPECT_FALSE(sent_timeout(none.host.got[0].first));
}

TEST(AllocService, TwoPhasesAnswerAtOnceThenOnlyTheEvent) {
    service_harness h;
    wire::alloc_request m;
    m.directive = PMIX_ALLOC_EXTEND;
    infos in;
    in.add(info_num(PMIX_ALLOC_NUM_NODES, 2, PMIX_INT)).add(info_flag(server::kAllocTwoPhase, true));
    m.infos = in.array();
    h.svc.allocate(3, 11, 1, std::move(m));
    // the first answer before Slurm has said anything: in progress, with a request id the bridge
    // also got
    ASSERT_EQ(h.replies.size(), 1u);
    EXPECT_EQ(h.replies[0].status, PMIX_SUCCESS);  // the wire status; the call's is a result
    const pmix_info_t *st = find_info(h.replies[0].results, "pmixcpp.query.status");
    ASSERT_NE(st, nullptr);
    EXPECT_EQ(st->value.data.status, PMIX_OPERATION_IN_PROGRESS);
    const std::string id = info_string(h.replies[0].results, PMIX_ALLOC_REQ_ID).value_or("");
    EXPECT_EQ(id, "pmixcpp.req.1.1");
    ASSERT_EQ(h.host.got.size(), 1u);
    EXPECT_EQ(info_string(h.host.got[0].first.infos, PMIX_ALLOC_REQ_ID).value_or(""), id);
    // the outcome: the event only, no second reply
    info_builder b;
    b.add_string(PMIX_ALLOC_ID, "9.0.1").add_string(PMIX_ALLOC_REQ_ID, id).add_string(PMIX_ALLOC_NODE_LIST, "n[3-4]");
    h.host.got[0].second(reply_bytes(PMIX_SUCCESS, "", b.take()));
    h.run_posted();
    EXPECT_EQ(h.replies.size(), 1u);
    ASSERT_EQ(h.events.size(), 1u);
    EXPECT_EQ(h.events[0].status, PMIX_NOTIFY_ALLOC_COMPLETE);
    EXPECT_EQ(info_string(h.events[0].infos, PMIX_ALLOC_REQ_ID).value_or(""), id);
    EXPECT_EQ(info_string(h.events[0].infos, PMIX_ALLOC_NODE_LIST).value_or(""), "n[3-4]");

    // a refusal in two phases: also the event, with the status and the reason
    wire::alloc_request m2;
    m2.directive = PMIX_ALLOC_EXTEND;
    infos in2;
    in2.add(info_num(PMIX_ALLOC_NUM_NODES, 9, PMIX_INT)).add(info_str(PMIX_ALLOC_REQ_ID, "mine"));
    in2.add(info_flag(server::kAllocTwoPhase, true));
    m2.infos = in2.array();
    h.svc.allocate(3, 12, 1, std::move(m2));
    ASSERT_EQ(h.replies.size(), 2u);
    EXPECT_EQ(info_string(h.replies[1].results, PMIX_ALLOC_REQ_ID).value_or(""), "mine");
    h.host.got[1].second(reply_bytes(PMIX_ERR_TIMEOUT, "still pending in Slurm after 4 s", InfoArray()));
    h.run_posted();
    EXPECT_EQ(h.replies.size(), 2u);
    ASSERT_EQ(h.events.size(), 2u);
    const pmix_info_t *es = find_info(h.events[1].infos, "pmixcpp.alloc.status");
    ASSERT_NE(es, nullptr);
    EXPECT_EQ(es->value.data.status, PMIX_ERR_TIMEOUT);
    EXPECT_EQ(info_string(h.events[1].infos, PMIX_ALLOC_REQ_ID).value_or(""), "mine");
    EXPECT_NE(info_string(h.events[1].infos, PMIX_EVENT_TEXT_MESSAGE).value_or("").find("pending"), std::string::npos);
}

TEST(AllocService, TwoPhasesRefusedForCancelAndBadValue) {
    service_harness h;
    wire::alloc_request m;
    m.directive = PMIX_ALLOC_REQ_CANCEL;
    infos in;
    in.add(info_flag(server::kAllocTwoPhase, true));
    m.infos = in.array();
    h.svc.allocate(1, 1, 0, std::move(m));
    wire::alloc_request m2;
    m2.directive = PMIX_ALLOC_EXTEND;
    infos in2;
    in2.add(info_num(PMIX_ALLOC_NUM_NODES, 1, PMIX_INT)).add(info_str(server::kAllocTwoPhase, "yes"));
    m2.infos = in2.array();
    h.svc.allocate(1, 2, 0, std::move(m2));
    ASSERT_EQ(h.replies.size(), 2u);
    EXPECT_EQ(h.replies[0].status, PMIX_ERR_BAD_PARAM);
    EXPECT_EQ(h.replies[1].status, PMIX_ERR_BAD_PARAM);
    EXPECT_TRUE(h.host.got.empty());
}

TEST(AllocService, LateAnswerAfterServiceIsGoneIsDropped) {
    std::vector<std::function<void()>> posted;
    fake_host host;
    {
        server::alloc_ops o;
        o.reply = [](uint64_t, uint32_t, pmix_status_t, const std::string &, InfoArray &&) { FAIL(); };
        o.post = [&](std::function<void()> fn) { posted.push_back(std::move(fn)); };
        server::alloc_service svc(one_node(), &host, o);
        wire::alloc_request m;
        m.directive = PMIX_ALLOC_NEW;
        svc.allocate(1, 1, 0, std::move(m));
    }
    ASSERT_EQ(host.got.size(), 1u);
    host.got[0].second(Status(PMIX_ERR_TIMEOUT, "late"));
    EXPECT_TRUE(posted.empty());
}

TEST(AllocService, LocalQueries) {
    service_harness h;
    wire::query_request q;
    q.queries.resize(1);
    q.queries[0].keys = {PMIX_QUERY_NAMESPACES, PMIX_QUERY_JOB_STATUS, PMIX_QUERY_PROC_TABLE,
                         PMIX_QUERY_LOCAL_PROC_TABLE, PMIX_QUERY_SPAWN_SUPPORT, PMIX_QUERY_DEBUG_SUPPORT,
                         PMIX_QUERY_NUM_PSETS, PMIX_QUERY_PSET_NAMES};
    h.svc.query(1, 5, 0, std::move(q));
    ASSERT_EQ(h.replies.size(), 1u);
    EXPECT_EQ(h.replies[0].status, PMIX_SUCCESS) << h.replies[0].message;
    const InfoArray &r = h.replies[0].results;
    EXPECT_EQ(r.size(), 9u);  // PMIX_QUERY_RESULTS, then the 8 answers flat
    ASSERT_TRUE(PMIX_CHECK_KEY(&r[0], PMIX_QUERY_RESULTS));
    ASSERT_EQ(r[0].value.type, PMIX_DATA_ARRAY);
    ASSERT_EQ(r[0].value.data.darray->type, PMIX_INFO);
    EXPECT_EQ(r[0].value.data.darray->size, 8u);  // no qualifiers: no PMIX_QUERY_QUALIFIERS
    EXPECT_EQ(info_string(r, PMIX_QUERY_NAMESPACES).value_or(""), "slurm.9.0");
    const pmix_info_t *pt = find_info(r, PMIX_QUERY_PROC_TABLE);
    ASSERT_NE(pt, nullptr);
    ASSERT_EQ(pt->value.type, PMIX_DATA_ARRAY);
    ASSERT_EQ(pt->value.data.darray->type, PMIX_PROC_INFO);
    ASSERT_EQ(pt->value.data.darray->size, 4u);
    auto *pi = static_cast<pmix_proc_info_t *>(pt->value.data.darray->array);
    EXPECT_EQ(pi[0].pid, getpid());
    EXPECT_STREQ(pi[2].hostname, "n2");
    EXPECT_NE(pi[0].executable_name, nullptr);
    const pmix_info_t *lpt = find_info(r, PMIX_QUERY_LOCAL_PROC_TABLE);
    ASSERT_NE(lpt, nullptr);
    EXPECT_EQ(lpt->value.data.darray->size, 2u);
    EXPECT_TRUE(h.host.got.empty());
}

// A query whose answers would not fit: 2 queries of 256 keys naming every process set, 512 sets
// of 250-character names (128 KiB per answer, 64 MiB in all; the protocol's 256 x 256 keys would
// make 8 GiB). Refused with PMIX_ERR_OUT_OF_RESOURCE once the answers pass kMaxQueryAnswerBytes,
// not built; a query under the bound is answered.
TEST(AllocService, AQueryWhoseAnswersWouldNotFitIsRefused) {
    service_harness h;
    auto o = h.ops();
    std::vector<std::pair<std::string, std::vector<pmix_proc_t>>> sets;
    for (int i = 0; i < 512; ++i) sets.emplace_back(std::to_string(i) + "." + std::string(246, 'g'), std::vector<pmix_proc_t>());
    o.psets = [&](bool) { return sets; };
    server::alloc_service svc(one_node(), nullptr, o);
    wire::query_request q;
    q.queries.resize(2);
    for (auto &e : q.queries) e.keys.assign(256, PMIX_QUERY_PSET_NAMES);
    svc.query(1, 7, 0, std::move(q));
    ASSERT_EQ(h.replies.size(), 1u);
    EXPECT_EQ(h.replies[0].status, PMIX_ERR_OUT_OF_RESOURCE);
    EXPECT_NE(h.replies[0].message.find("MiB"), std::string::npos) << h.replies[0].message;
    EXPECT_TRUE(h.replies[0].results.empty());

    // 100 answers of 128 KiB: 12.5 MiB, under the bound
    wire::query_request fits;
    fits.queries.resize(1);
    fits.queries[0].keys.assign(100, PMIX_QUERY_PSET_NAMES);
    svc.query(1, 8, 0, std::move(fits));
    ASSERT_EQ(h.replies.size(), 2u);
    EXPECT_EQ(h.replies[1].status, PMIX_SUCCESS) << h.replies[1].message;
    EXPECT_EQ(h.replies[1].results.size(), 101u);  // PMIX_QUERY_RESULTS, then the 100 answers flat
}

TEST(AllocService, ProcTableGatheredFromEveryNodeInTheV41Form) {
    service_harness h;
    std::function<void(std::vector<server::proc_row>, std::string)> pending;
    int asked_timeout = 0;
    auto o = h.ops();  // and the table gathered from the other node (a multi-node step)
    o.gather_procs = [&](int timeout, std::function<void(std::vector<server::proc_row>, std::string)> done) {
        asked_timeout = timeout;
        pending = std::move(done);
    };
    server::alloc_service svc(one_node(), nullptr, o);
    wire::query_request q;
    q.queries.resize(2);
    q.queries[0].keys = {PMIX_QUERY_PROC_TABLE};
    info_builder quals;
    quals.add_u32(PMIX_TIMEOUT, 3);
    q.queries[0].qualifiers = quals.take();
    q.queries[1].keys = {PMIX_QUERY_NAMESPACES};
    svc.query(1, 9, 0, std::move(q));
    EXPECT_TRUE(h.replies.empty());  // waits for the other nodes
    ASSERT_TRUE(pending);
    EXPECT_EQ(asked_timeout, 3);
    std::vector<server::proc_row> rows(4);
    for (uint32_t r = 0; r < 4; ++r) {
        rows[r].rank = r;
        rows[r].pid = 100 + static_cast<int32_t>(r);
        rows[r].state = r == 3 ? PMIX_PROC_STATE_COMM_FAILED : PMIX_PROC_STATE_RUNNING;
    }
    rows[2].exit_code = 7;
    rows[2].state = PMIX_PROC_STATE_TERM_NON_ZERO;
    rows[3].pid = 0;
    pending(rows, "node n2: no answer within 3000 ms");
    ASSERT_EQ(h.replies.size(), 1u);
    const InfoArray &r = h.replies[0].results;
    // the table is there, but a node's part is missing: partial success, the node named
    const pmix_info_t *st = find_info(r, "pmixcpp.query.status");
    ASSERT_NE(st, nullptr);
    EXPECT_EQ(st->value.data.status, PMIX_QUERY_PARTIAL_SUCCESS);
    EXPECT_NE(h.replies[0].message.find("node n2: no answer"), std::string::npos) << h.replies[0].message;
    // the v4.1 form: two PMIX_QUERY_RESULTS, the first with its qualifiers, then the table
    ASSERT_GE(r.size(), 2u);
    ASSERT_TRUE(PMIX_CHECK_KEY(&r[0], PMIX_QUERY_RESULTS));
    const pmix_data_array_t *first = r[0].value.data.darray;
    ASSERT_EQ(first->type, PMIX_INFO);
    ASSERT_EQ(first->size, 2u);
    auto *in = static_cast<pmix_info_t *>(first->array);
    EXPECT_TRUE(PMIX_CHECK_KEY(&in[0], PMIX_QUERY_QUALIFIERS));
    ASSERT_TRUE(PMIX_CHECK_KEY(&in[1], PMIX_QUERY_PROC_TABLE));
    ASSERT_EQ(in[1].value.data.darray->type, PMIX_PROC_INFO);
    ASSERT_EQ(in[1].value.data.darray->size, 4u);
    auto *pi = static_cast<pmix_proc_info_t *>(in[1].value.data.darray->array);
    EXPECT_EQ(pi[1].pid, 101);
    EXPECT_STREQ(pi[2].hostname, "n2");
    EXPECT_EQ(pi[2].exit_code, 7);
    EXPECT_EQ(pi[2].state, PMIX_PROC_STATE_TERM_NON_ZERO);
    EXPECT_EQ(pi[3].state, PMIX_PROC_STATE_COMM_FAILED);
    ASSERT_TRUE(PMIX_CHECK_KEY(&r[1], PMIX_QUERY_RESULTS));
    auto *second = static_cast<pmix_info_t *>(r[1].value.data.darray->array);
    EXPECT_TRUE(PMIX_CHECK_KEY(&second[0], PMIX_QUERY_NAMESPACES));
    // and flat
    const pmix_info_t *flat = find_info(r, PMIX_QUERY_PROC_TABLE);
    ASSERT_NE(flat, nullptr);
    EXPECT_EQ(flat->value.data.darray->size, 4u);
}

TEST(AllocService, MixedQueriesGoToTheHostAndReportPartialSuccess) {
    service_harness h;
    wire::query_request q;
    q.queries.resize(2);
    q.queries[0].keys = {PMIX_QUERY_NAMESPACES, "pmix.qry.nosuchkey"};
    q.queries[1].keys = {PMIX_QUERY_ALLOC_STATUS, PMIX_TIME_REMAINING};
    h.svc.query(1, 6, 2, std::move(q));
    ASSERT_EQ(h.host.got.size(), 1u);
    EXPECT_EQ(h.host.got[0].first.op, agent_op::query);
    EXPECT_EQ(h.host.got[0].first.keys.size(), 2u);
    info_builder b;
    b.add_u32(PMIX_TIME_REMAINING, 1234).add_string(PMIX_QUERY_ALLOC_STATUS, "9.0.1 NEW granted");
    h.host.got[0].second(reply_bytes(PMIX_SUCCESS, "", b.take()));
    h.run_posted();
    ASSERT_EQ(h.replies.size(), 1u);
    // 3 of 4 keys: the partial status travels as a result info for the client.
    EXPECT_EQ(h.replies[0].status, PMIX_SUCCESS);
    const pmix_info_t *st = find_info(h.replies[0].results, "pmixcpp.query.status");
    ASSERT_NE(st, nullptr);
    EXPECT_EQ(st->value.data.status, PMIX_QUERY_PARTIAL_SUCCESS);
    EXPECT_NE(find_info(h.replies[0].results, PMIX_TIME_REMAINING), nullptr);

    wire::query_request none;
    none.queries.resize(1);
    none.queries[0].keys = {"pmix.qry.nosuchkey"};
    h.svc.query(1, 7, 2, std::move(none));
    ASSERT_EQ(h.replies.size(), 2u);
    EXPECT_EQ(h.replies[1].status, PMIX_ERR_NOT_FOUND);
}

// A NEW allocation that Slurm starts late, against the job that asked for it (the bridge's plan;
// the race that leads here cannot be placed by an integration test).
TEST(AllocTime, ANewAllocationStartedLateEndsWithItsJob) {
    const time_t now = 1'800'000'000;
    started_alloc s;
    s.job_id = 77;
    s.start_time = now;
    // The job has no time limit: nothing to bound.
    s.end_time = now + 3600;
    EXPECT_EQ(end_with_owner(s, 5, 0).what, end_plan::keep);
    // It ends before the job: kept as Slurm started it.
    EXPECT_EQ(end_with_owner(s, 5, now + 3600).what, end_plan::keep);
    EXPECT_EQ(end_with_owner(s, 5, now + 7200).what, end_plan::keep);
    // It would outlive the job: lowered to the job's whole minutes left from its start.
    auto p = end_with_owner(s, 5, now + 10 * 60 + 59);
    EXPECT_EQ(p.what, end_plan::lower);
    EXPECT_EQ(p.minutes, 10u);
    // No time limit of its own (unlimited) while the job has one: lowered too.
    s.end_time = 0;
    p = end_with_owner(s, 5, now + 119);
    EXPECT_EQ(p.what, end_plan::lower);
    EXPECT_EQ(p.minutes, 1u);
    // Exactly a minute left: one minute.
    p = end_with_owner(s, 5, now + kMinGrowSec);
    EXPECT_EQ(p.what, end_plan::lower);
    EXPECT_EQ(p.minutes, 1u);
    // Less than a minute, or started after the job's end: given back, with the reason.
    p = end_with_owner(s, 5, now + 59);
    EXPECT_EQ(p.what, end_plan::give_back);
    EXPECT_NE(p.reason.find("Slurm started job 77 59 s before job 5 ends"), std::string::npos) << p.reason;
    p = end_with_owner(s, 5, now - 30);
    EXPECT_EQ(p.what, end_plan::give_back);
    EXPECT_NE(p.reason.find(" 0 s before job 5 ends"), std::string::npos) << p.reason;
}
