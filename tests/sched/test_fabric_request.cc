// The step's fabric for application processes (plugin/services/fabric/fabric_codec.h): the request
// codec, srun's side answering from a loader (no Slurm), the matrix as result infos and back,
// and the node groups that shape the tree fence.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <thread>

#include "plugin/services/fabric/fabric_srun.h"
#include "shared/fabric/fabric_wire.h"
#include "wire/frame.h"
#include "wire/messages.h"

using namespace pmixcpp;
using namespace pmixcpp::fabric;

namespace {

std::vector<sched::switch_record> two_leaves() {
    auto r = sched::parse_topology_conf("SwitchName=s1 Nodes=n[1-2]\nSwitchName=s2 Nodes=n[3-4]\n"
                                        "SwitchName=spine Switches=s[1-2]\n");
    EXPECT_TRUE(r.ok());
    return r.value();
}

}  // namespace

TEST(fabric_request, codec_round_trip_and_rejects) {
    auto body = encode_agent_request({fabric_op::update, "default"});
    ASSERT_TRUE(body.ok());
    EXPECT_TRUE(is_fabric_body(body.value()));
    fabric_request r;
    ASSERT_TRUE(decode_agent_request(body.value(), &r).ok());
    EXPECT_EQ(r.op, fabric_op::update);
    EXPECT_EQ(r.plane, "default");
    std::vector<uint8_t> bad = body.value();
    bad[4] = 9;  // unknown op
    EXPECT_FALSE(decode_agent_request(bad, &r).ok());
    bad = body.value();
    bad.push_back(0);  // trailing byte
    EXPECT_FALSE(decode_agent_request(bad, &r).ok());
    EXPECT_FALSE(is_fabric_body(std::vector<uint8_t>{1, 2}));
}

TEST(fabric_request, service_answers_the_matrix_and_reloads_on_update) {
    int loads = 0;
    fabric_service svc([&loads]() -> Result<std::vector<sched::switch_record>> {
        ++loads;
        return two_leaves();
    });
    auto rep = svc.handle({fabric_op::registration, ""});
    ASSERT_EQ(rep.status, PMIX_SUCCESS) << rep.message;
    svc.handle({fabric_op::registration, "default"});
    EXPECT_EQ(loads, 1);  // loaded once
    svc.handle({fabric_op::update, "default"});
    EXPECT_EQ(loads, 2);  // an update asks Slurm again

    wire::info_reply reply;
    wire::Reader rd(rep.body);
    ASSERT_TRUE(wire::decode(rd, &reply).ok());
    sched::cost_matrix m;
    std::string plane;
    ASSERT_TRUE(sched::matrix_from_results(reply.results.data(), reply.results.size(), &m, &plane).ok());
    EXPECT_EQ(plane, "default");
    ASSERT_EQ(m.size(), 4u);
    EXPECT_EQ(m.vertices[0].node, "n1");
    EXPECT_EQ(m.vertices[3].leaf, "s2");
    EXPECT_EQ(m.at(0, 1), 2);
    EXPECT_EQ(m.at(0, 2), 4);
    EXPECT_EQ(m.at(3, 3), 0);

    EXPECT_EQ(svc.handle({fabric_op::registration, "other"}).status, PMIX_ERR_NOT_FOUND);
}

TEST(fabric_request, no_topology_and_failing_loader) {
    fabric_service none([]() -> Result<std::vector<sched::switch_record>> { return std::vector<sched::switch_record>{}; });
    EXPECT_EQ(none.handle({fabric_op::registration, ""}).status, PMIX_ERR_NOT_AVAILABLE);
    fabric_service broken([]() -> Result<std::vector<sched::switch_record>> {
        return Status(PMIX_ERR_UNREACH, "slurmctld down");
    });
    auto rep = broken.handle({fabric_op::registration, ""});
    EXPECT_EQ(rep.status, PMIX_ERR_UNREACH);
    EXPECT_NE(rep.message.find("slurmctld down"), std::string::npos);
}

TEST(fabric_wire, rejects_inconsistent_results) {
    auto tree = sched::switch_tree::build(two_leaves());
    ASSERT_TRUE(tree.ok());
    auto res = sched::matrix_to_results(sched::build_cost_matrix(tree.value(), {}), "default");
    ASSERT_TRUE(res.ok());
    sched::cost_matrix m;
    std::string plane;
    // Drop the last result (the costs): refused.
    EXPECT_FALSE(sched::matrix_from_results(res->data(), res->size() - 1, &m, &plane).ok());
    // A vertex count that does not match the lists: refused.
    pmix_info_t *nv = &(*res)[1];
    nv->value.data.size = 5;
    EXPECT_FALSE(sched::matrix_from_results(res->data(), res->size(), &m, &plane).ok());
}

TEST(node_groups, leaf_switch_per_step_node) {
    auto recs = two_leaves();
    EXPECT_EQ(node_groups(recs, {"n1", "n2", "n3", "n4"}), (std::vector<uint32_t>{0, 0, 1, 1}));
    EXPECT_EQ(node_groups(recs, {"n3", "n1", "n4"}), (std::vector<uint32_t>{0, 1, 0}));
    EXPECT_EQ(node_groups(recs, {"n1", "n2", "x9"}), (std::vector<uint32_t>{0, 0, 1}));  // outside: own group
    EXPECT_TRUE(node_groups(recs, {"n1", "n2"}).empty());                               // one group: nothing to shape
    EXPECT_TRUE(node_groups({}, {"n1", "n2"}).empty());
}

TEST(node_groups, run_length_codec) {
    std::vector<uint32_t> g = {0, 0, 1, 1, 1, 2, 0};
    std::string text = encode_node_groups(g);
    EXPECT_EQ(text, "0*2,1*3,2,0");
    auto back = decode_node_groups(text, g.size());
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(back.value(), g);
    EXPECT_FALSE(decode_node_groups(text, g.size() + 1).ok());
    EXPECT_FALSE(decode_node_groups("0*99999999999", 4).ok());
    EXPECT_FALSE(decode_node_groups("0,x", 2).ok());
    EXPECT_FALSE(decode_node_groups("1*", 1).ok());
}

// Fabric updates (fabric_request.h, watch): the generation counts changes of the records that
// the poller (started by the first watch) loads; a watch waits for a generation other than the
// one it knows; the end of the service answers the waiting watches.
TEST(fabric_watch, codec) {
    auto body = encode_watch(7);
    EXPECT_TRUE(is_watch_body(body));
    EXPECT_TRUE(is_fabric_body(body));  // carried like a request; the service tells them apart
    uint64_t g = 0;
    ASSERT_TRUE(decode_watch(body, &g).ok());
    EXPECT_EQ(g, 7u);
    body.push_back(0);
    EXPECT_FALSE(decode_watch(body, &g).ok());
    EXPECT_FALSE(is_watch_body(encode_agent_request({fabric_op::update, ""}).value()));
}

namespace {
uint64_t generation_of(const session::agent_reply &rep) {
    wire::Reader r(rep.body.data(), rep.body.size());
    uint64_t g = 0;
    EXPECT_TRUE(r.get_u64(&g).ok());
    return g;
}
}  // namespace

TEST(fabric_watch, wakes_on_a_topology_change) {
    std::atomic<bool> changed{false};
    std::atomic<int> loads{0};
    fabric_service svc(
        [&]() -> Result<std::vector<sched::switch_record>> {
            ++loads;
            if (!changed) return two_leaves();
            return sched::parse_topology_conf("SwitchName=s1 Nodes=n[1-3]\n").value();
        },
        1);
    EXPECT_EQ(loads, 0);  // nothing loaded, nothing polled before a watch
    auto first = svc.watch(0);
    ASSERT_EQ(first.status, PMIX_SUCCESS) << first.message;
    EXPECT_EQ(generation_of(first), 1u);  // at once: the generation now
    std::thread flip([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(1500));
        changed = true;
    });
    auto start = std::chrono::steady_clock::now();
    auto next = svc.watch(1);  // waits for the change
    flip.join();
    ASSERT_EQ(next.status, PMIX_SUCCESS) << next.message;
    EXPECT_EQ(generation_of(next), 2u);
    EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(1400));
    // An update request that loads the same records again is no change.
    auto rep = svc.handle({fabric_op::update, ""});
    ASSERT_EQ(rep.status, PMIX_SUCCESS);
    EXPECT_EQ(generation_of(svc.watch(1)), 2u);
}

TEST(fabric_watch, off_and_ended) {
    fabric_service off([]() -> Result<std::vector<sched::switch_record>> { return two_leaves(); }, 0);
    EXPECT_EQ(off.watch(0).status, PMIX_ERR_NOT_SUPPORTED);

    int sv[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    {
        fabric_service svc([]() -> Result<std::vector<sched::switch_record>> { return two_leaves(); }, 1);
        ASSERT_EQ(generation_of(svc.watch(0)), 1u);
        svc.submit_watch(agent::responder::on_fd(sv[0], 1), encode_watch(1));  // never changes: answered when the service ends
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    std::vector<uint8_t> got(4096);
    ssize_t n = read(sv[1], got.data(), got.size());
    close(sv[1]);
    ASSERT_GT(n, 0);
    wire::FrameReader fr(1 << 20);
    ASSERT_TRUE(fr.feed(got.data(), static_cast<size_t>(n)).ok());
    auto f = fr.next();
    ASSERT_TRUE(f.ok() && f->has_value());
    session::agent_reply rep;
    ASSERT_TRUE(agent::decode_reply((**f).payload, &rep).ok());
    EXPECT_EQ(rep.status, PMIX_ERR_NOT_AVAILABLE) << rep.message;
}

namespace {
// The one reply on `fd`, waited for at most `ms`; status -1 if none came.
session::agent_reply reply_on(int fd, int ms) {
    session::agent_reply rep;
    rep.status = -1;
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, ms) <= 0) return rep;
    std::vector<uint8_t> got(4096);
    ssize_t n = read(fd, got.data(), got.size());
    if (n <= 0) return rep;
    wire::FrameReader fr(1 << 20);
    if (!fr.feed(got.data(), static_cast<size_t>(n)).ok()) return rep;
    auto f = fr.next();
    if (!f.ok() || !f->has_value()) return rep;
    (void)agent::decode_reply((**f).payload, &rep);
    return rep;
}
}  // namespace

// srun's per-request threads are bounded: watches that hold their thread fill the pool, one more
// is refused at once without a thread, and every thread is joined when the service ends.
TEST(fabric_watch, threads_are_bounded_and_joined) {
    std::vector<std::array<int, 2>> held(kServiceThreads);
    int extra[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, extra), 0);
    {
        fabric_service svc([]() -> Result<std::vector<sched::switch_record>> { return two_leaves(); }, 3600);
        ASSERT_EQ(generation_of(svc.watch(0)), 1u);
        for (auto &sv : held) {
            ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv.data()), 0);
            svc.submit_watch(agent::responder::on_fd(sv[0], 1), encode_watch(1));  // never changes: each holds a thread
        }
        svc.submit_watch(agent::responder::on_fd(extra[0], 1), encode_watch(1));
        auto refused = reply_on(extra[1], 5000);
        EXPECT_EQ(refused.status, PMIX_ERR_OUT_OF_RESOURCE) << refused.message;
        EXPECT_NE(refused.message.find("too many fabric watches in flight"), std::string::npos) << refused.message;
        EXPECT_EQ(reply_on(held[0][1], 100).status, -1) << "a held watch is still waiting";
    }
    // The service ended: every watch was answered and its thread joined.
    for (auto &sv : held) {
        EXPECT_EQ(reply_on(sv[1], 1000).status, PMIX_ERR_NOT_AVAILABLE);
        close(sv[1]);
    }
    close(extra[1]);
}
