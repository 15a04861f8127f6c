// The request engine (plugin/server/requests.h) without sockets: connect, finalize, abort, log,
// notify, the modex snapshot and the requests handed to a service, as the shell hands them
// (connection, rank, request id, payload); the answers caught by a reply sink made of vectors,
// what the engine asks of the rest of the server recorded by its routes. A query goes to the
// real allocation service, which answers through the same sink.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "../../plugin/server/alloc.h"
#include "../../plugin/server/requests.h"
#include "client_util.h"
#include "sink_util.h"
#include "wire/messages.h"

using namespace pmixcpp;
using namespace pmixcpp::server;
using pmixcpp::testing::make_infos;
using pmixcpp::testing::set_info;
using vector_sink = pmixcpp::testing::recording_sink;

namespace {

const char *kNs = "requests.0";
const char *kToken = "0123456789abcdef";

template <typename M>
std::vector<uint8_t> payload_of(const M &m) {
    wire::Writer w;
    EXPECT_TRUE(wire::encode(w, m).ok());
    return w.take();
}

step_info two_nodes() {
    step_info s;
    s.nspace = kNs;
    s.job_id = 9;
    s.ntasks = 4;
    s.node_id = 0;
    s.node_names = {"n0", "n1"};
    s.node_ranks = {{0, 1}, {2, 3}};
    return s;
}

// Four ranks, two a node; this is node 0 (ranks 0 and 1).
struct requests_bed : ::testing::Test {
    std::vector<uint32_t> node_of{0, 0, 1, 1};
    kv_store kvs;
    modex_snapshot_writer snapshots{node_of, 0};
    vector_sink sink;
    std::unique_ptr<alloc_service> alloc;
    std::unique_ptr<request_engine> engine;

    // What the routes were asked, in order.
    std::vector<std::string> calls;
    std::string refusal;  // claim_refusal's answer
    Status host_abort = Status::success();
    Status notify_status = Status::success();
    std::vector<std::pair<std::string, std::string>> logged;  // channel, text
    std::vector<xstep::message> to_steps;
    std::vector<wire::event_notification> notified;
    std::vector<wire::group_request> groups;
    Status fabric_status = Status::success();

    void make(bool cross_step = false) {
        alloc_ops ao;
        ao.reply = [this](uint64_t conn, uint32_t id, pmix_status_t st, const std::string &msg, InfoArray &&r) {
            sink.reply(conn, id, st, msg, [&r](wire::Writer &w) {
                wire::info_reply rep;
                rep.results = std::move(r);
                return wire::encode(w, rep);
            });
        };
        ao.notify = [](uint32_t, wire::event_notification &&) {};
        ao.post = [](std::function<void()> fn) { fn(); };
        ao.local_procs = [] { return std::vector<proc_row>{}; };
        ao.psets = [](bool) { return std::vector<std::pair<std::string, std::vector<pmix_proc_t>>>{}; };
        alloc = std::make_unique<alloc_service>(two_nodes(), nullptr, std::move(ao));

        request_config c;
        c.nspace = kNs;
        c.client_token = kToken;
        c.max_procs = 64;
        c.cross_step = cross_step;
        request_routes r;
        r.claim_refusal = [this](uint64_t, uint32_t rank) {
            calls.push_back("claim " + std::to_string(rank));
            return refusal;
        };
        r.admit = [this](uint64_t conn, uint32_t rank) {
            calls.push_back("admit " + std::to_string(conn) + " " + std::to_string(rank));
            wire::connect_reply reply;
            reply.jobdata_path = "/dev/shm/jobdata";
            reply.jobdata_size = 4096;
            reply.local_rank = rank;
            return reply;
        };
        r.connected = [this](uint32_t rank) {
            calls.push_back("connected " + std::to_string(rank) + " after " + std::to_string(sink.replies.size()) +
                            " replies");
        };
        r.finalized = [this](uint64_t conn, uint32_t rank) {
            calls.push_back("finalized " + std::to_string(conn) + " " + std::to_string(rank));
        };
        r.aborting = [this](uint32_t rank, int status, const std::string &message) {
            calls.push_back("aborting " + std::to_string(rank) + " " + std::to_string(status) + " " + message);
        };
        r.abort = [this](uint32_t rank, int status, const std::string &, const std::vector<pmix_proc_t> &procs) {
            calls.push_back("abort " + std::to_string(rank) + " " + std::to_string(status) + " " +
                            std::to_string(procs.size()));
            return host_abort;
        };
        r.log = [this](uint32_t, const std::string &channel, const std::string &text) {
            logged.emplace_back(channel, text);
        };
        r.notify = [this](uint32_t, wire::event_notification &&ev) {
            notified.push_back(std::move(ev));
            return notify_status;
        };
        r.to_other_steps = [this](xstep::message m) { to_steps.push_back(std::move(m)); };
        r.alloc = [this](uint64_t conn, uint32_t id, uint32_t rank, wire::alloc_request &&m) {
            alloc->allocate(conn, id, rank, std::move(m));
        };
        r.query = [this](uint64_t conn, uint32_t id, uint32_t rank, wire::query_request &&m) {
            alloc->query(conn, id, rank, std::move(m));
        };
        r.group = [this](uint64_t, uint32_t, uint32_t, wire::group_request &&m) { groups.push_back(std::move(m)); };
        r.fabric = [this](uint64_t, uint32_t, std::span<const uint8_t>) { return fabric_status; };
        engine = std::make_unique<request_engine>(std::move(c), std::move(r), kvs, snapshots, sink);
    }

    client_ref client(uint32_t rank) { return {100 + rank, rank, nullptr, 4000 + static_cast<int>(rank), 1000}; }

    wire::connect_request connect_of(uint32_t rank) {
        wire::connect_request m;
        m.nspace = kNs;
        m.rank = rank;
        m.token = kToken;
        return m;
    }

    std::vector<uint8_t> log_payload(const char *key, const char *text) {
        wire::log_request m;
        m.data = make_infos(1);
        set_info(m.data[0], key, text, PMIX_STRING);
        return payload_of(m);
    }

    std::vector<uint8_t> event_payload(pmix_status_t status, uint8_t range, const char *pset = nullptr) {
        wire::event_notification ev;
        ev.status = status;
        ev.range = range;
        strncpy(ev.source.nspace, kNs, PMIX_MAX_NSLEN);
        ev.source.rank = 0;
        if (pset) {
            ev.infos = make_infos(1);
            set_info(ev.infos[0], PMIX_PSET_NAME, pset, PMIX_STRING);
        }
        return payload_of(ev);
    }
};

TEST_F(requests_bed, ConnectAdmitsTheRankThenRepliesThenTellsTheEvents) {
    make();
    client_ref c{7, PMIX_RANK_UNDEF, nullptr, 4321, 1000};
    engine->connect(c, 1, payload_of(connect_of(1)));
    ASSERT_EQ(sink.replies.size(), 1u);
    EXPECT_EQ(sink.replies[0].status, PMIX_SUCCESS);
    EXPECT_FALSE(sink.replies[0].closes);
    wire::connect_reply r;
    ASSERT_TRUE(wire::decode_payload(sink.replies[0].body, &r).ok());
    EXPECT_EQ(r.jobdata_path, "/dev/shm/jobdata");
    EXPECT_EQ(r.jobdata_size, 4096u);
    EXPECT_EQ(r.local_rank, 1u);
    // admitted before the reply, the events told after it
    EXPECT_EQ(calls, (std::vector<std::string>{"claim 1", "admit 7 1", "connected 1 after 1 replies"}));
}

TEST_F(requests_bed, ConnectRefusedRepliesNoPermissionsAndCloses) {
    make();
    auto wrong_token = connect_of(0);
    wrong_token.token = "fedcba9876543210";
    auto wrong_ns = connect_of(0);
    wrong_ns.nspace = "other.0";
    auto wrong_protocol = connect_of(0);
    wrong_protocol.protocol = wire::kClientProtocol + 1;
    engine->connect(client(PMIX_RANK_UNDEF), 1, payload_of(wrong_token));
    engine->connect(client(PMIX_RANK_UNDEF), 2, payload_of(wrong_ns));
    engine->connect(client(PMIX_RANK_UNDEF), 3, payload_of(wrong_protocol));
    refusal = "rank 0 is already connected";
    engine->connect(client(PMIX_RANK_UNDEF), 4, payload_of(connect_of(0)));
    ASSERT_EQ(sink.replies.size(), 4u);
    for (const auto &r : sink.replies) {
        EXPECT_EQ(r.status, PMIX_ERR_NO_PERMISSIONS);
        EXPECT_TRUE(r.closes);
    }
    EXPECT_EQ(sink.replies[0].message, "wrong step token");
    EXPECT_EQ(sink.replies[1].message, "unknown namespace 'other.0'");
    EXPECT_NE(sink.replies[2].message.find("protocol"), std::string::npos);
    EXPECT_EQ(sink.replies[3].message, "rank 0 is already connected");
    // the shell's admission is asked only once the token is right, and nobody is admitted
    EXPECT_EQ(calls, (std::vector<std::string>{"claim 0"}));
}

TEST_F(requests_bed, FinalizeMarksTheRankThenReplies) {
    make();
    engine->finalize(client(1), 9, payload_of(wire::finalize_request{}));
    EXPECT_EQ(calls, (std::vector<std::string>{"finalized 101 1"}));
    ASSERT_EQ(sink.replies.size(), 1u);
    EXPECT_EQ(sink.replies[0].conn, 101u);
    EXPECT_EQ(sink.replies[0].id, 9u);
    EXPECT_EQ(sink.replies[0].status, PMIX_SUCCESS);
}

TEST_F(requests_bed, AbortTellsTheEventsFirstThenTheHostWhoseOutcomeIsTheReply) {
    make();
    wire::abort_request m;
    m.status = 3;
    m.message = "bye";
    m.procs = {pmixcpp::testing::make_proc(kNs, 2)};
    engine->abort(client(0), 5, payload_of(m));
    EXPECT_EQ(calls, (std::vector<std::string>{"aborting 0 3 bye", "abort 0 3 1"}));
    ASSERT_EQ(sink.replies.size(), 1u);
    EXPECT_EQ(sink.replies[0].status, PMIX_SUCCESS);

    host_abort = Status(PMIX_ERR_NOT_SUPPORTED, "no host to abort the job");
    engine->abort(client(1), 6, payload_of(m));
    ASSERT_EQ(sink.replies.size(), 2u);
    EXPECT_EQ(sink.replies[1].status, PMIX_ERR_NOT_SUPPORTED);
    EXPECT_EQ(sink.replies[1].message, "no host to abort the job");
}

TEST_F(requests_bed, LogForwardsEscapedTextAndIsGated) {
    make();
    // nothing the server can forward
    engine->log(client(0), 1, log_payload("app.key", "text"));
    ASSERT_EQ(sink.replies.size(), 1u);
    EXPECT_EQ(sink.replies[0].status, PMIX_ERR_NOT_SUPPORTED);
    EXPECT_TRUE(logged.empty());
    // one line, never a forged line of slurmd's own
    engine->log(client(0), 2, log_payload(PMIX_LOG_STDERR, "one\nslurmd: forged"));
    ASSERT_EQ(sink.replies.size(), 2u);
    EXPECT_EQ(sink.replies[1].status, PMIX_SUCCESS);
    ASSERT_EQ(logged.size(), 1u);
    EXPECT_EQ(logged[0].first, PMIX_LOG_STDERR);
    EXPECT_EQ(logged[0].second, "one\\nslurmd: forged");
    // the burst limit: past kLogBurst messages in a window, dropped and refused
    for (uint32_t i = 0; i < kLogBurst + 4; ++i) engine->log(client(1), 10 + i, log_payload(PMIX_LOG_MSG, "m"));
    EXPECT_EQ(logged.size(), kLogBurst);
    EXPECT_EQ(sink.replies.back().status, PMIX_ERR_OUT_OF_RESOURCE);
    EXPECT_EQ(engine->log_dropped(), 5u);
}

TEST_F(requests_bed, NotifyGoesToOtherStepsOnlyWhenItsRangeReachesThem) {
    make(/*cross_step=*/true);
    engine->notify(client(0), 1, event_payload(PMIX_ERR_EXIT_NONZERO_TERM, PMIX_RANGE_GLOBAL));
    ASSERT_EQ(to_steps.size(), 1u);
    EXPECT_EQ(to_steps[0].what, xstep::op::event);
    EXPECT_TRUE(to_steps[0].nspaces.empty());  // every other step
    wire::event_notification sent;
    ASSERT_TRUE(wire::decode_payload(to_steps[0].payload, &sent).ok());
    EXPECT_EQ(sent.status, PMIX_ERR_EXIT_NONZERO_TERM);

    engine->notify(client(0), 2, event_payload(PMIX_ERR_EXIT_NONZERO_TERM, PMIX_RANGE_LOCAL));  // stays here
    engine->notify(client(0), 3, event_payload(PMIX_PROCESS_SET_DEFINE, PMIX_RANGE_GLOBAL, "pmixcpp://spawn.1"));
    engine->notify(client(0), 4, event_payload(PMIX_PROCESS_SET_DEFINE, PMIX_RANGE_GLOBAL, "app.set"));
    EXPECT_EQ(to_steps.size(), 2u);  // the server's own sets are the servers' to announce
    EXPECT_EQ(notified.size(), 4u);  // every one to the event engine
    for (const auto &r : sink.replies) EXPECT_EQ(r.status, PMIX_SUCCESS);

    // refused by the event engine: its status is the reply's, nothing leaves the step
    notify_status = Status(PMIX_ERR_BAD_PARAM, "bad range");
    engine->notify(client(1), 5, event_payload(PMIX_ERR_EXIT_NONZERO_TERM, PMIX_RANGE_GLOBAL));
    EXPECT_EQ(to_steps.size(), 2u);
    EXPECT_EQ(sink.replies.back().status, PMIX_ERR_BAD_PARAM);
    EXPECT_EQ(sink.replies.back().message, "bad range");
}

TEST_F(requests_bed, NotifyStaysInTheStepWithoutTheAgent) {
    make(/*cross_step=*/false);
    engine->notify(client(0), 1, event_payload(PMIX_ERR_EXIT_NONZERO_TERM, PMIX_RANGE_GLOBAL));
    EXPECT_TRUE(to_steps.empty());
    EXPECT_EQ(notified.size(), 1u);
    ASSERT_EQ(sink.replies.size(), 1u);
    EXPECT_EQ(sink.replies[0].status, PMIX_SUCCESS);
}

TEST_F(requests_bed, MalformedPayloadsAreRefusedWithoutAReply) {
    make();
    const std::vector<uint8_t> junk{0xff, 0xff, 0xff, 0xff, 0x01};
    engine->connect(client(PMIX_RANK_UNDEF), 1, junk);
    engine->finalize(client(0), 2, junk);
    engine->abort(client(0), 3, junk);
    engine->log(client(0), 4, junk);
    engine->notify(client(0), 5, junk);
    engine->alloc(client(0), 6, junk);
    engine->query(client(0), 7, junk);
    engine->group(client(0), 8, junk);
    engine->snapshot(client(0), 9, junk);  // a snapshot request has no payload at all
    fabric_status = Status(PMIX_ERR_BAD_PARAM, "truncated");
    engine->fabric(client(0), 10, junk);
    EXPECT_TRUE(sink.replies.empty());
    ASSERT_EQ(sink.refused.size(), 10u);
    EXPECT_NE(sink.refused[0].second.find("malformed connect payload"), std::string::npos);
    EXPECT_NE(sink.refused[8].second.find("malformed snapshot request"), std::string::npos);
    EXPECT_EQ(sink.refused[9].second, "malformed fabric payload: truncated");
    // nothing reached the shell, the host or a service
    EXPECT_TRUE(calls.empty());
    EXPECT_TRUE(notified.empty());
    EXPECT_TRUE(groups.empty());
    // and a payload of more procs than the step can hold is malformed too
    wire::abort_request big;
    big.procs.assign(65, pmixcpp::testing::make_proc(kNs, 0));
    engine->abort(client(0), 11, payload_of(big));
    EXPECT_EQ(sink.refused.size(), 11u);
    EXPECT_TRUE(calls.empty());
}

TEST_F(requests_bed, QueryIsAnsweredByTheServiceThroughTheSink) {
    make();
    wire::query_request q;
    q.queries.resize(1);
    q.queries[0].keys = {PMIX_QUERY_NAMESPACES};
    engine->query(client(0), 12, payload_of(q));
    ASSERT_EQ(sink.replies.size(), 1u);
    EXPECT_EQ(sink.replies[0].conn, 100u);
    EXPECT_EQ(sink.replies[0].id, 12u);
    ASSERT_EQ(sink.replies[0].status, PMIX_SUCCESS);
    wire::info_reply rep;
    ASSERT_TRUE(wire::decode_payload(sink.replies[0].body, &rep).ok());
    const pmix_info_t *ns = find_info(rep.results, PMIX_QUERY_NAMESPACES);
    ASSERT_NE(ns, nullptr);
    ASSERT_EQ(ns->value.type, PMIX_STRING);
    EXPECT_STREQ(ns->value.data.string, kNs);
}

TEST_F(requests_bed, AllocWithoutABridgeIsNotSupported) {
    make();
    wire::alloc_request m;
    m.directive = PMIX_ALLOC_NEW;
    engine->alloc(client(1), 3, payload_of(m));
    ASSERT_EQ(sink.replies.size(), 1u);
    EXPECT_EQ(sink.replies[0].status, PMIX_ERR_NOT_SUPPORTED);
}

TEST_F(requests_bed, GroupIsHandedOnDecoded) {
    make();
    wire::group_request g;
    g.op = 1;
    g.name = "grp";
    g.procs = {pmixcpp::testing::make_proc(kNs, 0), pmixcpp::testing::make_proc(kNs, 1)};
    engine->group(client(0), 4, payload_of(g));
    ASSERT_EQ(groups.size(), 1u);
    EXPECT_EQ(groups[0].name, "grp");
    EXPECT_EQ(groups[0].procs.size(), 2u);
    EXPECT_TRUE(sink.replies.empty());  // the group service answers when the collective is done
}

TEST_F(requests_bed, SnapshotIsTheNodesDataWithItsDescriptorResent) {
    make();
    int v = 42;
    auto infos = make_infos(1);
    set_info(infos[0], "app.key", &v, PMIX_INT);
    const uint8_t scope = PMIX_GLOBAL;
    ASSERT_TRUE(kvs.commit(1, &scope, infos.data(), infos.size()).ok());
    engine->snapshot(client(0), 8, {});
    engine->snapshot(client(0), 9, {});
    ASSERT_EQ(sink.snapshots.size(), 2u);
    EXPECT_TRUE(sink.replies.empty());
    for (const auto &s : sink.snapshots) {
        EXPECT_TRUE(s.made);
        EXPECT_TRUE(s.has_descriptor);
        EXPECT_TRUE(s.resend);  // asked for again: its descriptor goes again
        EXPECT_GE(s.segments, 1u);
    }
    EXPECT_EQ(sink.snapshots[0].file, sink.snapshots[1].file);  // nothing changed: the same one
    EXPECT_EQ(sink.snapshots[1].id, 9u);
}

}  // namespace
