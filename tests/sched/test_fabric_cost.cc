// The fabric cost formula (shared/fabric/fabric_cost.h) from parsed topology.conf text.
#include <gtest/gtest.h>

#include "shared/fabric/fabric_cost.h"

using namespace pmixcpp;
using namespace pmixcpp::sched;

namespace {

switch_tree tree_of(const std::string &conf) {
    auto recs = parse_topology_conf(conf);
    EXPECT_TRUE(recs.ok()) << recs.status().message();
    auto t = switch_tree::build(recs.value());
    EXPECT_TRUE(t.ok()) << t.status().message();
    return std::move(t.value());
}

const char *kTwoLeaves =
    "# two leaves under one spine\n"
    "SwitchName=s1 Nodes=n[1-2]\n"
    "SwitchName=s2 Nodes=n[3-4]\n"
    "SwitchName=spine Switches=s[1-2]\n";

}  // namespace

TEST(TopologyConf, ParsesLevelsLikeSlurm) {
    auto recs = parse_topology_conf(kTwoLeaves);
    ASSERT_TRUE(recs.ok());
    ASSERT_EQ(recs->size(), 3u);
    EXPECT_EQ(recs.value()[0].level, 0);
    EXPECT_EQ(recs.value()[2].level, 1);
    EXPECT_EQ(recs.value()[2].switches, "s[1-2]");
}

TEST(TopologyConf, RejectsBadInput) {
    EXPECT_EQ(parse_topology_conf("Nodes=n1\n").status().code(), PMIX_ERR_BAD_PARAM);
    EXPECT_EQ(parse_topology_conf("SwitchName=a Switches=b\n").status().code(), PMIX_ERR_BAD_PARAM);
    EXPECT_EQ(parse_topology_conf("SwitchName=a Color=red\n").status().code(), PMIX_ERR_BAD_PARAM);
    EXPECT_EQ(parse_topology_conf("SwitchName=a LinkSpeed=fast\n").status().code(), PMIX_ERR_BAD_PARAM);
}

TEST(SwitchTree, SameLeafAcrossSpineSameNode) {
    switch_tree t = tree_of(kTwoLeaves);
    EXPECT_EQ(t.nodes(), (std::vector<std::string>{"n1", "n2", "n3", "n4"}));
    EXPECT_EQ(t.node_cost("n1", "n1"), 0);
    EXPECT_EQ(t.node_cost("n1", "n2"), 2);
    EXPECT_EQ(t.node_cost("n1", "n3"), 4);
    EXPECT_EQ(t.node_cost("n4", "n2"), 4);
    EXPECT_EQ(t.leaf_of("n3"), "s2");
}

TEST(SwitchTree, CostGrowsWithLevels) {
    switch_tree t = tree_of(
        "SwitchName=l1 Nodes=a1\nSwitchName=l2 Nodes=a2\nSwitchName=l3 Nodes=b1\n"
        "SwitchName=m1 Switches=l[1-2]\nSwitchName=m2 Switches=l3\nSwitchName=top Switches=m[1-2]\n");
    EXPECT_EQ(t.node_cost("a1", "a2"), 4);
    EXPECT_EQ(t.node_cost("a1", "b1"), 6);
}

TEST(SwitchTree, LinkSpeedsWeighLinks) {
    // Leaves at speed 100, spine at 25: links into the spine weigh 4.
    switch_tree t = tree_of(
        "SwitchName=s1 Nodes=n[1-2] LinkSpeed=100\nSwitchName=s2 Nodes=n[3-4] LinkSpeed=100\n"
        "SwitchName=spine Switches=s[1-2] LinkSpeed=25\n");
    EXPECT_EQ(t.node_cost("n1", "n2"), 2);
    EXPECT_EQ(t.node_cost("n1", "n3"), 1 + 4 + 4 + 1);
}

TEST(SwitchTree, DisconnectedAndUnknownNodes) {
    switch_tree t = tree_of("SwitchName=s1 Nodes=n1\nSwitchName=s2 Nodes=n2\n");
    EXPECT_EQ(t.node_cost("n1", "n2"), kCostUnreachable);
    EXPECT_EQ(t.node_cost("n1", "zz"), kCostUnreachable);
}

TEST(SwitchTree, NodeOnTwoLeavesTakesTheCheaperPath) {
    switch_tree t = tree_of(
        "SwitchName=s1 Nodes=n[1-2]\nSwitchName=s2 Nodes=n[2-3]\nSwitchName=spine Switches=s[1-2]\n");
    EXPECT_EQ(t.node_cost("n1", "n3"), 4);
    EXPECT_EQ(t.node_cost("n2", "n3"), 2);
}

TEST(SwitchTree, RejectsLoopsAndDuplicates) {
    std::vector<switch_record> loop = {{"a", 1, 0, "", "b"}, {"b", 1, 0, "", "a"}};
    EXPECT_EQ(switch_tree::build(loop).status().code(), PMIX_ERR_BAD_PARAM);
    std::vector<switch_record> dup = {{"a", 0, 0, "n1", ""}, {"a", 0, 0, "n2", ""}};
    EXPECT_EQ(switch_tree::build(dup).status().code(), PMIX_ERR_BAD_PARAM);
}

TEST(CostMatrix, NicsAreVerticesNodesOtherwise) {
    switch_tree t = tree_of(kTwoLeaves);
    std::map<std::string, std::vector<nic>> nics = {{"n1", {{"eth0", "aa"}, {"ib0", "bb"}}}};
    cost_matrix m = build_cost_matrix(t, nics);
    ASSERT_EQ(m.size(), 5u);
    EXPECT_EQ(m.vertices[0], (fabric_vertex{"n1", "eth0", "aa", "s1"}));
    EXPECT_EQ(m.vertices[1].device, "ib0");
    EXPECT_EQ(m.vertices[2], (fabric_vertex{"n2", "", "", "s1"}));
    EXPECT_EQ(m.at(0, 1), 0);  // two NICs of one node
    EXPECT_EQ(m.at(0, 2), 2);
    EXPECT_EQ(m.at(1, 4), 4);
    for (size_t i = 0; i < m.size(); ++i) EXPECT_EQ(m.at(i, i), 0);
}

TEST(CostMatrix, NotAssumedSymmetricButIsForTrees) {
    switch_tree t = tree_of(kTwoLeaves);
    cost_matrix m = build_cost_matrix(t, {});
    for (size_t i = 0; i < m.size(); ++i)
        for (size_t j = 0; j < m.size(); ++j) EXPECT_EQ(m.at(i, j), m.at(j, i));
}

TEST(SwitchTree, UpperSwitchesListingAllNodesAsSlurmReportsThem) {
    // slurm_load_topo reports the spine with Nodes=n[1-4].
    std::vector<switch_record> recs = {{"s1", 0, 1, "n[1-2]", ""}, {"s2", 0, 1, "n[3-4]", ""},
                                       {"spine", 1, 1, "n[1-4]", "s[1-2]"}};
    auto t = switch_tree::build(recs);
    ASSERT_TRUE(t.ok());
    EXPECT_EQ(t->nodes(), (std::vector<std::string>{"n1", "n2", "n3", "n4"}));
    EXPECT_EQ(t->node_cost("n1", "n2"), 2);
    EXPECT_EQ(t->node_cost("n1", "n3"), 4);
    EXPECT_EQ(t->leaf_of("n4"), "s2");
}

TEST(FlatCluster, SlurmConfNodesInOrder) {
    auto nodes = parse_slurm_conf_nodes(
        "ClusterName=c # comment NodeName=x9\n"
        "nodename=DEFAULT CPUs=4\n"
        "NodeName=n[1-3] NodeHostname=h Port=17001 \\\n"
        "   CPUs=64\n"
        "NodeName=gpu1,n2 State=UNKNOWN\n"
        "PartitionName=p Nodes=ALL\n");
    ASSERT_TRUE(nodes.ok()) << nodes.status().message();
    EXPECT_EQ(nodes.value(), (std::vector<std::string>{"n1", "n2", "n3", "gpu1"}));
    auto none = parse_slurm_conf_nodes("ClusterName=c\n");
    ASSERT_TRUE(none.ok());
    EXPECT_TRUE(none->empty());
    auto bad = parse_slurm_conf_nodes("ClusterName=c\nNodeName=n[1-\n");
    EXPECT_EQ(bad.status().code(), PMIX_ERR_BAD_PARAM);
    EXPECT_NE(bad.status().message().find("line 2"), std::string::npos) << bad.status().message();
}

TEST(FlatCluster, OneVertexPerNodeUniformCost) {
    std::vector<std::string> nodes = {"n1", "n2", "n3", "gpu1"};
    auto recs = flat_topology(nodes);
    ASSERT_EQ(recs.size(), 1u);
    EXPECT_EQ(recs[0].name, kFlatSwitchName);
    auto t = switch_tree::build(recs);
    ASSERT_TRUE(t.ok()) << t.status().message();
    cost_matrix m = build_cost_matrix(t.value(), {});
    ASSERT_EQ(m.size(), nodes.size());
    for (size_t i = 0; i < m.size(); ++i) {
        EXPECT_EQ(m.vertices[i].node, nodes[i]);
        EXPECT_EQ(m.vertices[i].leaf, kFlatSwitchName);
        for (size_t j = 0; j < m.size(); ++j) EXPECT_EQ(m.at(i, j), i == j ? 0 : 2) << i << "," << j;
    }
    EXPECT_TRUE(flat_topology({}).empty());
}
