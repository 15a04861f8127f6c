// The simulator at small N: properties that hold whatever the costs. Every fence completes on
// every node with every node's contribution (content checked), no message is lost or dropped by
// the real code, the direct-modex Get is answered with the owner's data. No timing is asserted
// beyond the order of events the model must keep (a fence cannot end before its message hops).
#include <gtest/gtest.h>

#include "sim.h"

using namespace pmixcpp;
using namespace pmixcpp::sim;

namespace {

fence_result run(uint32_t nodes, coll::algorithm algo, bool collect, uint32_t fences, bool cold, const net_params &p) {
    fence_setup s;
    s.nodes = nodes;
    s.ppn = 4;
    s.algo = algo;
    s.collect = collect;
    s.bytes_per_rank = 1024;
    s.real_blob_bytes = collect ? 64 : 0;
    s.fences = fences;
    s.cold = cold;
    return run_fence(p, s);
}

}  // namespace

TEST(Sim, EveryFenceCompletesWithEveryContribution) {
    for (const net_params &p : {fabric_preset(), host_preset()}) {
        for (auto algo : {coll::algorithm::automatic, coll::algorithm::tree, coll::algorithm::ring, coll::algorithm::direct}) {
            for (uint32_t n : {1u, 2u, 3u, 8u, 9u, 10u, 65u, 200u}) {
                for (bool collect : {false, true}) {
                    SCOPED_TRACE(p.name + " algo " + to_string(algo) + " nodes " + std::to_string(n) +
                                 (collect ? " collect" : " empty"));
                    fence_result r = run(n, algo, collect, 3, true, p);
                    EXPECT_TRUE(r.ok) << r.error;
                    EXPECT_EQ(r.completions, uint64_t(n) * 3);
                    EXPECT_EQ(r.delivered, r.messages);
                    EXPECT_EQ(r.log_errors, 0u);
                    if (n > 1) {
                        EXPECT_GT(r.messages, 0u);
                        // at least one hop's wire latency and one client round trip
                        EXPECT_GT(r.max_us, p.lat_us + p.client_us / 2);
                    }
                }
            }
        }
    }
}

TEST(Sim, MessageCountsFollowTheAlgorithm) {
    const net_params p = fabric_preset();
    const uint32_t n = 100;
    // tree: one message up and one down per edge (the fan-out is one encoding sent to k nodes)
    EXPECT_EQ(run(n, coll::algorithm::tree, false, 1, false, p).messages, 2u * (n - 1));
    // ring: every contribution passes n - 1 links
    EXPECT_EQ(run(n, coll::algorithm::ring, true, 1, false, p).messages, uint64_t(n) * (n - 1));
    // direct: every node to every other
    EXPECT_EQ(run(n, coll::algorithm::direct, true, 1, false, p).messages, uint64_t(n) * (n - 1));
    // a tree node talks to its parent and at most `width` children
    EXPECT_LE(run(n, coll::algorithm::tree, false, 1, false, p).max_peers, 9u);
    EXPECT_EQ(run(n, coll::algorithm::ring, true, 1, false, p).max_peers, 2u);
}

TEST(Sim, CollectingFenceChargesTheFullData) {
    const net_params p = fabric_preset();
    fence_result r = run(16, coll::algorithm::ring, true, 1, false, p);
    ASSERT_TRUE(r.ok) << r.error;
    // each node takes in the other 15 nodes' 4 x 1 KiB
    EXPECT_GE(r.max_node_in_bytes, 15u * 4 * 1024);
    EXPECT_LT(r.max_node_in_bytes, 15u * (4 * 1024 + 64));
}

TEST(Sim, DirectModexGetIsAnsweredWithTheOwnersData) {
    for (uint32_t n : {2u, 3u, 64u}) {
        dmodex_result r = run_dmodex(fabric_preset(), n, 8, 1024);
        EXPECT_TRUE(r.ok) << r.error;
        EXPECT_GT(r.cold_us, r.warm_us);  // the first pays for the connection
        EXPECT_GT(r.reply_bytes, 2u * 1024);
    }
}

TEST(Sim, WireupAndJobDataSizesGrowAsTheCodeDoes) {
    const net_params p = fabric_preset();
    wireup_result a = run_wireup(p, 100), b = run_wireup(p, 200);
    // srun sends every node the whole table: quadratic in the node count
    EXPECT_GT(double(b.srun_bytes_out), 3.9 * double(a.srun_bytes_out));
    EXPECT_EQ(b.srun_connections, 200u);
    jobdata_result j1 = run_jobdata(16, 4, 1 << 20), j2 = run_jobdata(32, 4, 1 << 20);
    EXPECT_FALSE(j1.extrapolated);
    EXPECT_GT(j2.file_bytes, j1.file_bytes);
    jobdata_result x = run_jobdata(64, 4, 128);  // above the cap: from 8/16/32 nodes
    EXPECT_TRUE(x.extrapolated);
    jobdata_result real = run_jobdata(64, 4, 1 << 20);
    EXPECT_NEAR(double(x.file_bytes), double(real.file_bytes), 0.02 * double(real.file_bytes));
}

TEST(Sim, DirectoryWireupDoesNotGrowWithTheNodeCount) {
    const net_params p = fabric_preset();
    directory_wireup_result small = run_directory_wireup(p, 1024, 8), big = run_directory_wireup(p, 65536, 8);
    // the same neighbours at any size: node 1's tree parent (node 0, also a ring neighbour), its
    // 8 children (9-16), the other ring neighbour (node 2); then one ask
    EXPECT_EQ(small.tells, 10u);
    EXPECT_EQ(big.tells, small.tells);
    EXPECT_EQ(big.messages_per_node, small.tells + 1);
    EXPECT_DOUBLE_EQ(big.total_us, small.total_us);
    EXPECT_EQ(big.srun_connections, 0u);
    // the parent's record comes back after the tells' call and a round trip of two forwards
    EXPECT_GT(big.parent_known_us, big.children_know_us + 2 * p.forward_us);
    EXPECT_GT(big.message_bytes, 200u);
    // a small step tells fewer nodes
    EXPECT_EQ(run_directory_wireup(p, 3, 8).tells, 2u);
}

TEST(Sim, DirectoryForwardsFollowTheProtocol) {
    // 8 nodes, width 4: tree edges 0-1..0-4, 1-5..1-7 (7), ring 8 edges, 0-1 in both: 14 pairs
    EXPECT_DOUBLE_EQ(directory_forwards(8, 4, 0, 1000), 28);  // all up at once: one tell each way
    // 20 ms apart: the first tell of every pair fails, the second gets there, the first is sent
    // again at once; a pair more than 100 ms apart (6 or 7 places apart) also tries again
    const double apart = directory_forwards(8, 4, 20e3, 1000);
    EXPECT_GT(apart, 14 * 3);
    EXPECT_LT(apart, 14 * 4);
    EXPECT_GT(directory_forwards(32, 4, 20e3, 1000), directory_forwards(32, 4, 5e3, 1000));
    // the measured CPU per message: the wire-up's messages in the timed window on the shared CPUs
    net_params p = host_preset();
    p.dir_msg_cpu_us = 2000;
    p.start_gap_us = 0;
    p.dir_window_share = 0.5;
    directory_wireup_result d = run_directory_wireup(p, 8, 4);
    EXPECT_DOUBLE_EQ(d.forwards, 28);
    EXPECT_DOUBLE_EQ(d.forwards_cpu_us, 28 * 2000);
    EXPECT_NEAR(d.host_cpu_us, run_static_wireup(p, 8, 4).host_cpu_us + 0.5 * 28 * 2000 / (p.cpus * p.cpu_share), 1e-6);
}

TEST(Sim, NodeLossReachesEveryLiveNodeOnce) {
    for (uint32_t width : {2u, 4u, 8u}) {
        for (uint32_t n : {3u, 9u, 10u, 100u, 1000u}) {
            SCOPED_TRACE("nodes " + std::to_string(n) + " width " + std::to_string(width));
            node_loss_result real = run_node_loss(fabric_preset(), n, width, 1000);
            EXPECT_TRUE(real.ok) << real.error;
            EXPECT_TRUE(real.receivers_real);
            // through the lost node's tree: every live node once, the noticer too (in its own
            // place) unless it is one of the lost node's children
            EXPECT_GE(real.messages, n - 2u);
            EXPECT_LE(real.messages, n - 1u);
            EXPECT_LE(real.noticer_sends, width);
            EXPECT_LE(real.max_sends, width);
            EXPECT_LE(real.max_new_connections, width);
            node_loss_result modelled = run_node_loss(fabric_preset(), n, width, 0);
            EXPECT_TRUE(modelled.ok) << modelled.error;
            EXPECT_FALSE(modelled.receivers_real);
            EXPECT_EQ(modelled.messages, real.messages);
            EXPECT_EQ(modelled.max_sends, real.max_sends);
            EXPECT_EQ(modelled.max_new_connections, real.max_new_connections);
            EXPECT_DOUBLE_EQ(modelled.all_told_us, real.all_told_us);
        }
    }
    // O(log N) hops, not N sends from one node: 8x the nodes, about one level (of `width`
    // sends and a hop) more
    const net_params p = fabric_preset();
    node_loss_result small = run_node_loss(p, 512, 8, 0), big = run_node_loss(p, 4096, 8, 0);
    EXPECT_LT(big.all_told_us, small.all_told_us + 8 * (p.send_us + p.connect_us) + p.recv_us + p.lat_us + 1);
}

// A pattern model that stands in for the real engines: the same messages, bytes, times and peers.
static void expect_model_equals_real(const fence_result &model, const fence_result &real) {
    ASSERT_TRUE(real.ok) << real.error;
    ASSERT_TRUE(model.ok) << model.error;
    EXPECT_EQ(model.messages, real.messages);
    EXPECT_EQ(model.wire_bytes, real.wire_bytes);
    EXPECT_EQ(model.max_message_bytes, real.max_message_bytes);
    EXPECT_NEAR(model.max_us, real.max_us, 1e-6 * real.max_us + 1e-9);
    EXPECT_NEAR(model.median_us, real.median_us, 1e-6 * real.median_us + 1e-9);
    EXPECT_EQ(model.max_peers, real.max_peers);
}

TEST(Sim, TreePatternMatchesTheRealEngines) {
    // The pattern stands in for the engines where they do not fit in memory: at sizes where both
    // run, the same times, messages and bytes.
    const net_params p = fabric_preset();
    for (uint32_t n : {1u, 2u, 9u, 10u, 100u, 1000u}) {
        for (bool collect : {false, true}) {
            SCOPED_TRACE("nodes " + std::to_string(n) + (collect ? " collect" : " empty"));
            fence_setup s;
            s.nodes = n;
            s.ppn = 16;
            s.collect = collect;
            s.bytes_per_rank = 1024;
            s.real_blob_bytes = collect ? 8 : 0;
            s.algo = coll::algorithm::tree;
            expect_model_equals_real(run_tree_pattern(p, s), run_fence(p, s));
        }
    }
}

TEST(Sim, DisseminationPatternMatchesTheRealEngine) {
    // As the tree's: the barrier's pattern stands in above the real engines' sizes.
    const net_params p = fabric_preset();
    for (uint32_t n : {1u, 2u, 3u, 9u, 64u, 100u, 1000u}) {
        SCOPED_TRACE("nodes " + std::to_string(n));
        fence_setup s;
        s.nodes = n;
        s.ppn = 16;
        s.real_blob_bytes = 0;
        s.algo = coll::algorithm::dissemination;
        fence_result real = run_fence(p, s), model = run_dissemination_pattern(p, s);
        expect_model_equals_real(model, real);
        EXPECT_EQ(model.messages, uint64_t(n) * coll::dissemination_rounds(n));
        EXPECT_EQ(model.max_node_in_bytes, real.max_node_in_bytes);
    }
}

TEST(Sim, AutoTakesTheBarrierForEmptyFencesAtScale) {
    const net_params p = fabric_preset();
    fence_setup s;
    s.nodes = coll::kDisseminationMinNodes;
    s.ppn = 4;
    s.real_blob_bytes = 0;
    fence_result r = run_fence(p, s);
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(r.messages, uint64_t(s.nodes) * coll::dissemination_rounds(s.nodes));
    s.nodes -= 1;  // below: the tree, one message up and one down per edge
    r = run_fence(p, s);
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(r.messages, 2u * (s.nodes - 1));
}
