// group_service (plugin/server/groups.h) without I/O: three nodes' services, their collectives
// delivered by the test in a shuffled order of contributions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <random>

#include "../../plugin/server/groups.h"
#include "client_util.h"

using namespace pmixcpp;
using namespace pmixcpp::server;
using pmixcpp::testing::make_infos;
using pmixcpp::testing::set_info;

namespace {

constexpr const char *kNs = "slurm.5.0";

struct reply_rec {
    uint64_t conn;
    uint32_t id;
    pmix_status_t status;
    std::string message;
    uint64_t cid = 0;
    std::vector<std::pair<uint32_t, uint8_t>> states;  // rank, member_state
    std::map<uint32_t, size_t> ninfos;
};

// Three nodes: ranks {0,1} {2,3} {4,5}.
struct cluster {
    step_info step;
    std::vector<uint32_t> node_of{0, 0, 1, 1, 2, 2};
    std::vector<std::unique_ptr<group_service>> nodes;
    std::vector<std::unique_ptr<node_channels>> channels;  // by node: what its service registered
    std::vector<reply_rec> replies;
    std::set<uint32_t> gone;
    std::vector<std::pair<std::string, bool>> pset_events;
    // signature -> (node -> (instance, blob)), and how many nodes the collective has
    std::map<uint64_t, std::map<uint32_t, std::pair<uint64_t, std::vector<uint8_t>>>> colls;
    std::map<uint64_t, size_t> coll_nodes;
    struct node_msg {
        uint32_t from, to;
        node_channel chan;
        std::vector<uint8_t> body;
    };
    std::vector<node_msg> wire_q;  // bootstrap messages between the services
    std::mt19937 rng{7};

    cluster() {
        step.nspace = kNs;
        step.ntasks = 6;
        step.node_names = {"n0", "n1", "n2"};
        step.node_ranks = {{0, 1}, {2, 3}, {4, 5}};
        for (uint32_t n = 0; n < 3; ++n) {
            step_info s = step;
            s.node_id = n;
            group_ops o;
            o.reply = [this](uint64_t conn, uint32_t id, pmix_status_t st, const std::string &msg,
                             const wire::group_reply *r) {
                reply_rec rec{conn, id, st, msg, 0, {}, {}};
                if (r) {
                    rec.cid = r->context_id;
                    for (const auto &m : r->members) {
                        rec.states.emplace_back(m.proc.rank, m.state);
                        rec.ninfos[m.proc.rank] = m.infos.size();
                    }
                }
                replies.push_back(std::move(rec));
            };
            o.start_collective = [this, n](uint64_t instance, uint64_t sig, std::vector<uint32_t> ns,
                                           std::vector<uint8_t> blob) {
                colls[sig][n] = {instance, std::move(blob)};
                coll_nodes[sig] = ns.size();
                return Status::success();
            };
            o.cancel_collective = [](uint64_t) {};
            o.send_node = [this, n](uint32_t to, node_channel chan, std::vector<uint8_t> body) {
                wire_q.push_back({n, to, chan, std::move(body)});
                return Status::success();
            };
            o.rank_gone = [this](uint32_t r) { return gone.count(r) != 0; };
            o.pset_changed = [this](const std::string &name, const std::vector<pmix_proc_t> &, bool defined) {
                pset_events.emplace_back(name, defined);
            };
            nodes.push_back(std::make_unique<group_service>(s, node_of, std::move(o), 300));
            channels.push_back(std::make_unique<node_channels>());
            EXPECT_TRUE(nodes.back()->add_channels(*channels.back()).ok());
        }
    }

    // Complete every collective all of whose nodes contributed, delivering the blobs shuffled.
    void deliver() {
        for (auto it = colls.begin(); it != colls.end();) {
            if (it->second.size() < coll_nodes[it->first]) {
                ++it;
                continue;
            }
            std::vector<std::pair<uint32_t, std::span<const uint8_t>>> blobs;
            for (auto &[node, ib] : it->second) blobs.emplace_back(node, std::span<const uint8_t>(ib.second));
            for (auto &[node, ib] : it->second) {
                std::shuffle(blobs.begin(), blobs.end(), rng);
                nodes[node]->collective_done(ib.first, blobs);
            }
            it = colls.erase(it);
        }
    }

    // Deliver the queued bootstrap messages in a shuffled order until none is left.
    void deliver_node_messages() {
        while (!wire_q.empty()) {
            std::shuffle(wire_q.begin(), wire_q.end(), rng);
            node_msg m = std::move(wire_q.back());
            wire_q.pop_back();
            EXPECT_TRUE(channels[m.to]->dispatch(m.from, id_of(m.chan), m.body));
        }
    }

    // A bootstrap member: a leader (leaders > 0) names itself and `add`; a follower no procs.
    void enter_bootstrap(uint32_t rank, const std::string &name, size_t leaders, std::vector<uint32_t> add) {
        wire::group_request req;
        req.op = static_cast<uint8_t>(wire::group_op::construct);
        req.name = name;
        bool t = true;
        if (leaders > 0) {
            pmix_proc_t self{};
            strcpy(self.nspace, kNs);
            self.rank = rank;
            req.procs.push_back(self);
        }
        std::vector<pmix_proc_t> procs;
        for (uint32_t r : add) {
            pmix_proc_t p{};
            strcpy(p.nspace, kNs);
            p.rank = r;
            procs.push_back(p);
        }
        pmix_data_array_t da{PMIX_PROC, procs.size(), procs.data()};
        req.directives = make_infos(leaders > 0 ? (add.empty() ? 2 : 3) : 1);
        set_info(req.directives[0], PMIX_GROUP_ASSIGN_CONTEXT_ID, &t, PMIX_BOOL);
        if (leaders > 0) set_info(req.directives[1], PMIX_GROUP_BOOTSTRAP, &leaders, PMIX_SIZE);
        if (leaders > 0 && !add.empty()) set_info(req.directives[2], PMIX_GROUP_ADD_MEMBERS, &da, PMIX_DATA_ARRAY);
        nodes[node_of[rank]]->on_request(100 + rank, rank, 1, std::move(req));
    }

    void enter(uint32_t rank, wire::group_op op, const std::string &name, std::vector<uint32_t> members,
               bool assign = true, uint64_t lcid = 0) {
        wire::group_request req;
        req.op = static_cast<uint8_t>(op);
        req.name = name;
        for (uint32_t r : members) {
            pmix_proc_t p{};
            strcpy(p.nspace, kNs);
            p.rank = r;
            req.procs.push_back(p);
        }
        if (assign) {
            req.directives = make_infos(1);
            bool t = true;
            set_info(req.directives[0], PMIX_GROUP_ASSIGN_CONTEXT_ID, &t, PMIX_BOOL);
        }
        if (lcid) {
            req.member_info = make_infos(1);
            size_t v = lcid;
            set_info(req.member_info[0], PMIX_GROUP_LOCAL_CID, &v, PMIX_SIZE);
        }
        nodes[node_of[rank]]->on_request(100 + rank, rank, 1, std::move(req));
    }
};

}  // namespace

TEST(Groups, ConstructAcrossNodesIsOneCollective) {
    cluster c;
    std::vector<uint32_t> all{0, 1, 2, 3, 4, 5};
    for (uint32_t r : {5u, 0u, 3u, 1u, 4u}) c.enter(r, wire::group_op::construct, "g", all, true, 1000 + r);
    c.deliver();
    EXPECT_TRUE(c.replies.empty());  // rank 2 has not entered: node 1 has not contributed
    c.enter(2, wire::group_op::construct, "g", all, true, 1002);
    EXPECT_EQ(c.colls.size(), 1u);  // one collective over the three nodes
    c.deliver();
    ASSERT_EQ(c.replies.size(), 6u);
    for (const auto &r : c.replies) {
        EXPECT_EQ(r.status, PMIX_SUCCESS) << r.message;
        EXPECT_NE(r.cid, 0u);
        EXPECT_EQ(r.cid, c.replies[0].cid);
        ASSERT_EQ(r.states.size(), 6u);
        for (const auto &[rank, st] : r.states) {
            EXPECT_EQ(st, static_cast<uint8_t>(wire::member_state::joined));
            EXPECT_EQ(r.ninfos.at(rank), 1u);
        }
    }
    EXPECT_EQ(c.nodes[0]->psets().count("g"), 1u);
    EXPECT_EQ(c.nodes[0]->members_of("g").size(), 6u);
}

TEST(Groups, ConcurrentGroupsGetDistinctContextIds) {
    cluster c;
    // Two groups sharing nodes 0 and 1, entered in opposite orders on the two nodes, plus one on
    // node 2 alone: every context id differs.
    c.enter(0, wire::group_op::construct, "a", {0, 2});
    c.enter(3, wire::group_op::construct, "b", {1, 3});
    c.enter(1, wire::group_op::construct, "b", {1, 3});
    c.enter(2, wire::group_op::construct, "a", {0, 2});
    c.enter(4, wire::group_op::construct, "c", {4});
    c.deliver();
    ASSERT_EQ(c.replies.size(), 5u);
    std::map<uint64_t, uint64_t> cid_of;  // conn -> cid
    for (const auto &r : c.replies) {
        EXPECT_EQ(r.status, PMIX_SUCCESS);
        cid_of[r.conn] = r.cid;
    }
    EXPECT_EQ(cid_of[100], cid_of[102]);
    EXPECT_EQ(cid_of[101], cid_of[103]);
    EXPECT_NE(cid_of[100], cid_of[101]);
    EXPECT_NE(cid_of[104], cid_of[100]);
    EXPECT_NE(cid_of[104], cid_of[101]);
    // Later groups never reuse an id.
    c.replies.clear();
    c.enter(0, wire::group_op::construct, "d", {0, 4});
    c.enter(4, wire::group_op::construct, "d", {0, 4});
    c.deliver();
    ASSERT_EQ(c.replies.size(), 2u);
    for (const auto &[conn, cid] : cid_of) EXPECT_NE(c.replies[0].cid, cid);
}

TEST(Groups, MemberDyingOrDecliningIsReportedNotWaitedFor) {
    cluster c;
    std::vector<uint32_t> all{0, 1, 2, 3};
    c.enter(0, wire::group_op::construct, "g", all);
    c.enter(1, wire::group_op::join_decline, "g", all);
    c.enter(2, wire::group_op::join_accept, "g", all);
    c.deliver();
    EXPECT_TRUE(c.replies.empty());
    c.gone.insert(3);
    c.nodes[1]->rank_left(3);  // rank 3 dies before entering
    c.deliver();
    ASSERT_EQ(c.replies.size(), 3u);
    std::map<uint32_t, uint8_t> st(c.replies[0].states.begin(), c.replies[0].states.end());
    EXPECT_EQ(st[0], static_cast<uint8_t>(wire::member_state::joined));
    EXPECT_EQ(st[1], static_cast<uint8_t>(wire::member_state::declined));
    EXPECT_EQ(st[2], static_cast<uint8_t>(wire::member_state::joined));
    EXPECT_EQ(st[3], static_cast<uint8_t>(wire::member_state::failed));
    // A rank already gone when the collective starts is counted as failed at once.
    c.replies.clear();
    c.enter(2, wire::group_op::construct, "h", {2, 3});
    c.deliver();
    ASSERT_EQ(c.replies.size(), 1u);
    EXPECT_EQ(c.replies[0].status, PMIX_SUCCESS);
}

TEST(Groups, TimeoutsLostNodesAndBadRequestsFailClearly) {
    cluster c;
    c.enter(0, wire::group_op::construct, "t", {0, 1});
    c.nodes[0]->expire(server_clock::now() + std::chrono::seconds(301));
    ASSERT_EQ(c.replies.size(), 1u);
    EXPECT_EQ(c.replies[0].status, PMIX_ERR_TIMEOUT);
    EXPECT_NE(c.replies[0].message.find("1"), std::string::npos);  // names the missing rank

    c.replies.clear();
    c.enter(0, wire::group_op::construct, "l", {0, 2});
    c.nodes[0]->node_lost(1);
    ASSERT_EQ(c.replies.size(), 1u);
    EXPECT_EQ(c.replies[0].status, PMIX_ERR_NODE_DOWN);
    EXPECT_EQ(c.nodes[0]->pending(), 0u);

    c.replies.clear();
    c.enter(0, wire::group_op::construct, "x", {1, 2});  // caller not a member
    c.enter(0, wire::group_op::construct, "y", {0, 9});  // rank out of the step
    c.enter(0, wire::group_op::construct, kNs, {0});     // the namespace's own name
    ASSERT_EQ(c.replies.size(), 3u);
    for (const auto &r : c.replies) EXPECT_EQ(r.status, PMIX_ERR_BAD_PARAM);

    c.replies.clear();
    wire::group_request req;
    req.op = static_cast<uint8_t>(wire::group_op::construct);
    req.name = "f";
    pmix_proc_t p{};
    strcpy(p.nspace, "slurm.5.1");
    req.procs.push_back(p);
    c.nodes[0]->on_request(1, 0, 1, std::move(req));
    ASSERT_EQ(c.replies.size(), 1u);
    EXPECT_EQ(c.replies[0].status, PMIX_ERR_NOT_SUPPORTED);

    // Entering twice, or with other members, while the collective is in flight.
    c.replies.clear();
    c.enter(0, wire::group_op::construct, "z", {0, 2});
    c.enter(0, wire::group_op::construct, "z", {0, 2});
    c.enter(1, wire::group_op::construct, "z", {1, 2});
    ASSERT_EQ(c.replies.size(), 2u);
    EXPECT_EQ(c.replies[0].status, PMIX_ERR_BAD_PARAM);
    EXPECT_EQ(c.replies[1].status, PMIX_ERR_BAD_PARAM);
}

TEST(Groups, DestructDeletesTheProcessSet) {
    cluster c;
    c.enter(0, wire::group_op::construct, "p", {0, 1}, false);
    c.enter(1, wire::group_op::construct, "p", {0, 1}, false);
    ASSERT_EQ(c.replies.size(), 2u);
    EXPECT_EQ(c.replies[0].cid, 0u);  // none asked
    ASSERT_EQ(c.pset_events.size(), 1u);
    EXPECT_TRUE(c.pset_events[0].second);
    c.enter(0, wire::group_op::destruct, "p", {0, 1}, false);
    c.enter(1, wire::group_op::destruct, "p", {0, 1}, false);
    ASSERT_EQ(c.replies.size(), 4u);
    EXPECT_EQ(c.nodes[0]->psets().count("p"), 0u);
    ASSERT_EQ(c.pset_events.size(), 2u);
    EXPECT_FALSE(c.pset_events[1].second);
}

// A rank outside a group cannot take its name: a construct of the name with other members is
// PMIX_ERR_EXISTS, a destruct naming non-members is refused, and the group's process set stays
// as its members made it; its members still destruct it, after which the name is free again.
TEST(Groups, AGroupsNameCannotBeTakenByOthers) {
    cluster c;
    c.enter(0, wire::group_op::construct, "g", {0, 1}, false);
    c.enter(1, wire::group_op::construct, "g", {0, 1}, false);
    ASSERT_EQ(c.replies.size(), 2u);
    ASSERT_EQ(c.replies[1].status, PMIX_SUCCESS);

    // rank 1 alone: a group of one local member would complete at once, replacing the set
    c.enter(1, wire::group_op::construct, "g", {1}, false);
    ASSERT_EQ(c.replies.size(), 3u);
    EXPECT_EQ(c.replies[2].status, PMIX_ERR_EXISTS) << c.replies[2].message;
    ASSERT_EQ(c.nodes[0]->psets().count("g"), 1u);
    EXPECT_EQ(c.nodes[0]->psets().at("g").ranks, (std::vector<uint32_t>{0, 1}));
    // a member naming itself alone (as the others do once one left the group): allowed
    c.enter(1, wire::group_op::destruct, "g", {1}, false);
    ASSERT_EQ(c.replies.size(), 4u);
    EXPECT_EQ(c.replies[3].status, PMIX_SUCCESS);
    c.enter(0, wire::group_op::construct, "g", {0, 1}, false);  // again, the same members: fine
    c.enter(1, wire::group_op::construct, "g", {0, 1}, false);
    ASSERT_EQ(c.replies.size(), 6u);
    EXPECT_EQ(c.replies[5].status, PMIX_SUCCESS);

    // the group {0} of rank 0 against rank 1 of the same node, which is not in it
    c.enter(0, wire::group_op::construct, "h", {0}, false);
    ASSERT_EQ(c.replies.size(), 7u);
    ASSERT_EQ(c.replies[6].status, PMIX_SUCCESS);
    c.enter(1, wire::group_op::construct, "h", {0, 1}, false);  // h exists with {0}
    ASSERT_EQ(c.replies.size(), 8u);
    EXPECT_EQ(c.replies[7].status, PMIX_ERR_EXISTS);
    c.enter(1, wire::group_op::destruct, "h", {1}, false);  // rank 1 is not in h
    ASSERT_EQ(c.replies.size(), 9u);
    EXPECT_EQ(c.replies[8].status, PMIX_ERR_BAD_PARAM) << c.replies[8].message;
    ASSERT_EQ(c.nodes[0]->psets().count("h"), 1u);
    EXPECT_EQ(c.nodes[0]->psets().at("h").ranks, (std::vector<uint32_t>{0}));
    c.enter(0, wire::group_op::destruct, "h", {0}, false);
    ASSERT_EQ(c.replies.size(), 10u);
    EXPECT_EQ(c.replies[9].status, PMIX_SUCCESS);
    EXPECT_EQ(c.nodes[0]->psets().count("h"), 0u);
    c.enter(1, wire::group_op::construct, "h", {1}, false);  // the name is free again
    ASSERT_EQ(c.replies.size(), 11u);
    EXPECT_EQ(c.replies[10].status, PMIX_SUCCESS);
    EXPECT_EQ(c.nodes[0]->psets().at("h").ranks, (std::vector<uint32_t>{1}));
}

TEST(GroupMessages, RoundTripAndBounds) {
    wire::group_contribution gc;
    gc.reservation = 9;
    gc.entries.push_back({3, static_cast<uint8_t>(wire::member_state::joined), make_infos(0)});
    wire::Writer w;
    ASSERT_TRUE(wire::encode(w, gc).ok());
    wire::group_contribution back;
    ASSERT_TRUE(wire::decode_group_contribution(w.data(), 4, &back).ok());
    EXPECT_EQ(back.reservation, 9u);
    ASSERT_EQ(back.entries.size(), 1u);
    EXPECT_EQ(back.entries[0].rank, 3u);
    EXPECT_FALSE(wire::decode_group_contribution(w.data(), 3, &back).ok());  // rank 3 not in a 3-rank step
    std::vector<uint8_t> bad = w.data();
    bad[8 + 4 + 4] = 7;  // unknown state
    EXPECT_FALSE(wire::decode_group_contribution(bad, 4, &back).ok());

    wire::group_request req;
    req.op = 9;
    req.name = "g";
    wire::Writer rw;
    ASSERT_TRUE(wire::encode(rw, req).ok());
    wire::group_request rback;
    EXPECT_FALSE(wire::decode_payload(rw.data(), &rback).ok());  // unknown operation
}

TEST(Groups, AStepOfSeveralAppsDefinesOneSetPerApp) {
    step_info s;
    s.nspace = kNs;
    s.ntasks = 5;
    s.node_names = {"n0"};
    s.node_ranks = {{0, 1, 2, 3, 4}};
    s.job_env = {"PMIXCPP_SPAWN_APP_SIZES=2,3"};
    group_service g(s, {0, 0, 0, 0, 0}, group_ops{}, 300);
    g.define_step_psets();
    ASSERT_EQ(g.psets().size(), 2u);
    EXPECT_EQ(g.members_of(std::string(kNs) + ".app0").size(), 2u);
    auto app1 = g.members_of(std::string(kNs) + ".app1");
    ASSERT_EQ(app1.size(), 3u);
    EXPECT_EQ(app1[0].rank, 2u);
    s.job_env = {"PMIXCPP_SPAWN_APP_SIZES=5"};  // one app: no set beyond the namespace
    group_service one(s, {0, 0, 0, 0, 0}, group_ops{}, 300);
    one.define_step_psets();
    EXPECT_TRUE(one.psets().empty());
}

TEST(Groups, ASpawnedStepDefinesTheSpawnsTwoSetsFromItsEnvironment) {
    step_info s;
    s.nspace = "slurm.7.3";
    s.job_id = 7;
    s.ntasks = 2;
    s.node_names = {"n0"};
    s.node_ranks = {{0, 1}};
    s.job_env = {"PMIXCPP_SPAWN_PARENT=slurm.7.0:0", "PMIXCPP_SPAWN_PARENT_SIZE=4"};
    group_service g(s, {0, 0}, group_ops{}, 300);
    g.define_spawned_step_psets();
    ASSERT_EQ(g.job_psets().size(), 2u);
    const auto &spawned = g.job_psets().at(spawned_pset_name("slurm.7.3"));
    ASSERT_EQ(spawned.size(), 2u);
    EXPECT_STREQ(spawned[1].nspace, "slurm.7.3");
    EXPECT_EQ(spawned[1].rank, 1u);
    const auto &all = g.job_psets().at(union_pset_name("slurm.7.3"));
    ASSERT_EQ(all.size(), 6u);  // the parent's 4 first, then the children
    EXPECT_STREQ(all[0].nspace, "slurm.7.0");
    EXPECT_EQ(all[3].rank, 3u);
    EXPECT_STREQ(all[4].nspace, "slurm.7.3");
    EXPECT_EQ(all[4].rank, 0u);
    EXPECT_FALSE(g.define_job_pset(union_pset_name("slurm.7.3"), {}));  // defined once

    // The environment is the user's: another job's step, a size that is no number, zero, too
    // large, or the step itself as its parent define nothing.
    for (auto env : std::vector<std::vector<std::string>>{
             {"PMIXCPP_SPAWN_PARENT=slurm.8.0:0", "PMIXCPP_SPAWN_PARENT_SIZE=4"},
             {"PMIXCPP_SPAWN_PARENT=slurm.7.0:0", "PMIXCPP_SPAWN_PARENT_SIZE=4x"},
             {"PMIXCPP_SPAWN_PARENT=slurm.7.0:0", "PMIXCPP_SPAWN_PARENT_SIZE=0"},
             {"PMIXCPP_SPAWN_PARENT=slurm.7.0:0", "PMIXCPP_SPAWN_PARENT_SIZE=65537"},
             {"PMIXCPP_SPAWN_PARENT=slurm.7.0:0", "PMIXCPP_SPAWN_PARENT_SIZE=99999999999999"},
             {"PMIXCPP_SPAWN_PARENT=slurm.7.3:0", "PMIXCPP_SPAWN_PARENT_SIZE=4"},
             {"PMIXCPP_SPAWN_PARENT=slurm.7.0:0"}}) {
        s.job_env = env;
        group_service bad(s, {0, 0}, group_ops{}, 300);
        bad.define_spawned_step_psets();
        EXPECT_TRUE(bad.job_psets().empty()) << env[0];
    }
}

TEST(Groups, ASpawnOfAGrownJobNamesTheRunningSpawnedStepsInItsUnion) {
    // The parent slurm.7.0 (2 ranks) spawned slurm.7.1 (2 ranks), still running; now slurm.7.2
    // (4 ranks) from a communicator over both: the union is 7.0, then 7.1, then 7.2.
    step_info s;
    s.nspace = "slurm.7.2";
    s.job_id = 7;
    s.ntasks = 4;
    s.node_names = {"n0"};
    s.node_ranks = {{0, 1, 2, 3}};
    s.job_env = {"PMIXCPP_SPAWN_PARENT=slurm.7.0:0", "PMIXCPP_SPAWN_PARENT_SIZE=2",
                 "PMIXCPP_SPAWN_PEERS=slurm.7.1:2"};
    group_service g(s, {0, 0, 0, 0}, group_ops{}, 300);
    g.define_spawned_step_psets();
    ASSERT_EQ(g.job_psets().size(), 2u);
    EXPECT_EQ(g.job_psets().at(spawned_pset_name("slurm.7.2")).size(), 4u);
    const auto &all = g.job_psets().at(union_pset_name("slurm.7.2"));
    ASSERT_EQ(all.size(), 8u);
    EXPECT_STREQ(all[1].nspace, "slurm.7.0");
    EXPECT_STREQ(all[2].nspace, "slurm.7.1");
    EXPECT_EQ(all[3].rank, 1u);
    EXPECT_STREQ(all[4].nspace, "slurm.7.2");
    EXPECT_EQ(all[7].rank, 3u);

    // The parent's side computes the same members.
    auto same = spawn_pset_members("slurm.7.0", 2, "slurm.7.2", 4, true, {{"slurm.7.1", 2}});
    ASSERT_EQ(same.size(), all.size());
    for (size_t i = 0; i < same.size(); ++i) {
        EXPECT_STREQ(same[i].nspace, all[i].nspace);
        EXPECT_EQ(same[i].rank, all[i].rank);
    }
    EXPECT_EQ(format_spawn_peers({{"slurm.7.1", 2}, {"slurm.7.4", 8}}), "slurm.7.1:2,slurm.7.4:8");
    auto two = parse_spawn_peers("slurm.7.1:2,slurm.7.4:8", "slurm.7.", "slurm.7.0", "slurm.7.5");
    ASSERT_TRUE(two.has_value());
    EXPECT_EQ(*two, (std::vector<spawn_peer>{{"slurm.7.1", 2}, {"slurm.7.4", 8}}));
    EXPECT_TRUE(parse_spawn_peers("", "slurm.7.", "slurm.7.0", "slurm.7.5")->empty());

    // The environment is the user's: another job's step, the parent or the child itself, one
    // twice, a step that is no number, sizes that are no number, zero, too large (alone or in
    // all), too many peers, or no size define no sets at all.
    std::string many;
    for (int i = 10; i < 10 + int(kMaxSpawnPeers) + 1; ++i) many += (many.empty() ? "" : ",") + ("slurm.7." + std::to_string(i) + ":1");
    for (const std::string &bad : std::vector<std::string>{
             "slurm.8.1:2", "slurm.7.0:2", "slurm.7.2:2", "slurm.7.1:2,slurm.7.1:2", "slurm.7.x:2", "slurm.7.:2",
             "slurm.7.1:2x", "slurm.7.1:0", "slurm.7.1:65537", "slurm.7.1:40000,slurm.7.3:40000", "slurm.7.1",
             "slurm.7.1:", ",", "slurm.7.1:2,", many}) {
        EXPECT_FALSE(parse_spawn_peers(bad, "slurm.7.", "slurm.7.0", "slurm.7.2").has_value()) << bad;
        s.job_env = {"PMIXCPP_SPAWN_PARENT=slurm.7.0:0", "PMIXCPP_SPAWN_PARENT_SIZE=2", "PMIXCPP_SPAWN_PEERS=" + bad};
        group_service none(s, {0, 0, 0, 0}, group_ops{}, 300);
        none.define_spawned_step_psets();
        EXPECT_TRUE(none.job_psets().empty()) << bad;
    }
}

TEST(Groups, BootstrapLearnsTheMembershipFromTheLeaders) {
    cluster c;
    // Leaders 1 (node 0) and 4 (node 2); 1 names 2 and 3, 4 names 5; rank 0 stays out.
    c.enter_bootstrap(3, "b", 0, {});
    c.enter_bootstrap(1, "b", 2, {2, 3});
    c.enter_bootstrap(5, "b", 0, {});
    c.deliver_node_messages();
    c.deliver();
    EXPECT_TRUE(c.replies.empty());  // leader 4 and member 2 are missing
    c.enter_bootstrap(4, "b", 2, {5});
    c.deliver_node_messages();
    c.deliver();
    EXPECT_TRUE(c.replies.empty());  // member 2, which leader 1 named, is missing
    c.enter_bootstrap(2, "b", 0, {});
    c.deliver_node_messages();
    EXPECT_EQ(c.colls.size(), 1u);  // then one ordinary collective over the three nodes
    c.deliver();
    ASSERT_EQ(c.replies.size(), 5u);
    for (const auto &r : c.replies) {
        EXPECT_EQ(r.status, PMIX_SUCCESS) << r.message;
        EXPECT_NE(r.cid, 0u);
        EXPECT_EQ(r.cid, c.replies[0].cid);
        ASSERT_EQ(r.states.size(), 5u);
        EXPECT_EQ(r.states[0].first, 1u);
    }
    EXPECT_EQ(c.nodes[0]->pending(), 0u);
    EXPECT_EQ(c.nodes[1]->pending(), 0u);
    EXPECT_EQ(c.nodes[2]->pending(), 0u);
}

TEST(Groups, BootstrapRefusesDisagreementAndForgedMessages) {
    cluster c;
    c.enter_bootstrap(0, "d", 2, {});
    c.enter_bootstrap(4, "d", 3, {});
    c.deliver_node_messages();
    ASSERT_EQ(c.replies.size(), 2u);
    for (const auto &r : c.replies) EXPECT_EQ(r.status, PMIX_ERR_BAD_PARAM) << r.message;
    c.replies.clear();

    // Zero leaders, a wildcard leader, a member of another step: refused at once.
    wire::group_request req;
    req.op = static_cast<uint8_t>(wire::group_op::construct);
    req.name = "z";
    pmix_proc_t self{};
    strcpy(self.nspace, kNs);
    self.rank = 0;
    req.procs.push_back(self);
    req.directives = make_infos(1);
    size_t zero = 0;
    set_info(req.directives[0], PMIX_GROUP_BOOTSTRAP, &zero, PMIX_SIZE);
    c.nodes[0]->on_request(100, 0, 1, std::move(req));
    ASSERT_EQ(c.replies.size(), 1u);
    EXPECT_EQ(c.replies[0].status, PMIX_ERR_BAD_PARAM);
    c.replies.clear();

    // Node 1 claims an entry for rank 4 (node 2's); node 2 sends node 1 a result: both dropped.
    wire::group_bootstrap_entry e;
    e.name = "f";
    e.rank = 4;
    e.leaders = 1;
    wire::Writer w;
    ASSERT_TRUE(wire::encode(w, e).ok());
    c.nodes[0]->on_bootstrap_entry(1, w.data());
    wire::group_bootstrap_result r;
    r.name = "f";
    r.members = {2, 3};
    wire::Writer w2;
    ASSERT_TRUE(wire::encode(w2, r).ok());
    c.enter_bootstrap(2, "f", 0, {});
    c.wire_q.clear();
    c.nodes[1]->on_bootstrap_result(2, w2.data());
    c.deliver();
    EXPECT_TRUE(c.replies.empty());
    EXPECT_EQ(c.nodes[1]->pending(), 1u);  // still waiting for node 0
    // Truncated bodies are dropped too.
    c.nodes[0]->on_bootstrap_entry(1, std::span<const uint8_t>(w.data()).subspan(0, 5));
    c.nodes[1]->on_bootstrap_result(0, std::span<const uint8_t>(w2.data()).subspan(0, 5));
    EXPECT_TRUE(c.replies.empty());
    // Its deadline ends the wait with a clear error.
    c.nodes[1]->expire(server_clock::now() + std::chrono::seconds(400));
    ASSERT_EQ(c.replies.size(), 1u);
    EXPECT_EQ(c.replies[0].status, PMIX_ERR_TIMEOUT);
}
