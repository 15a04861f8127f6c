// slurm_load_topo()'s response read by release (shared/fabric/slurm_topo_layout.h): the mirrors'
// LP64 layout as slurm.h of 22.05 and 24.11 defines it, and the decoding of each layout.
#include <gtest/gtest.h>

#include <cstddef>

#include "shared/fabric/slurm_topo_layout.h"

using namespace pmixcpp;
using namespace pmixcpp::sched;

namespace {

constexpr uint32_t k22_05 = slurm_version_num(22, 5, 8);
constexpr uint32_t k24_11 = slurm_version_num(24, 11, 5);

// Two leaves under a spine, as Slurm's topology/tree reports them.
struct two_leaves {
    char s1[3] = "s1", s2[3] = "s2", spine[6] = "spine", n12[8] = "n[1-2]", n34[8] = "n[3-4]", s12[8] = "s[1-2]";
    slurm_abi::topo_record recs[3] = {{0, 100, s1, n12, nullptr}, {0, 100, s2, n34, nullptr}, {1, 200, spine, nullptr, s12}};
};

void expect_two_leaves(const Result<std::vector<switch_record>> &r) {
    ASSERT_TRUE(r.ok()) << r.status().message();
    ASSERT_EQ(r->size(), 3u);
    EXPECT_EQ(r.value()[0], (switch_record{"s1", 0, 100, "n[1-2]", ""}));
    EXPECT_EQ(r.value()[1], (switch_record{"s2", 0, 100, "n[3-4]", ""}));
    EXPECT_EQ(r.value()[2], (switch_record{"spine", 1, 200, "", "s[1-2]"}));
}

}  // namespace

#if defined(__x86_64__) || defined(__aarch64__)
// slurm.h's structs on LP64; the plugin checks the same against the headers it is built with.
TEST(SlurmTopoLayout, MirrorsMatchSlurmHeadersOnLp64) {
    EXPECT_EQ(sizeof(slurm_abi::topo_record), 32u);
    EXPECT_EQ(offsetof(slurm_abi::topo_record, link_speed), 4u);
    EXPECT_EQ(offsetof(slurm_abi::topo_record, name), 8u);
    EXPECT_EQ(offsetof(slurm_abi::topo_record, nodes), 16u);
    EXPECT_EQ(offsetof(slurm_abi::topo_record, switches), 24u);
    EXPECT_EQ(sizeof(slurm_abi::topo_response_22_05), 16u);
    EXPECT_EQ(offsetof(slurm_abi::topo_response_22_05, topo_array), 8u);
    EXPECT_EQ(sizeof(slurm_abi::topo_response_23_11), 24u);
    EXPECT_EQ(offsetof(slurm_abi::topo_response_23_11, topo_info), 16u);
    EXPECT_EQ(sizeof(slurm_abi::dynamic_plugin_data), 16u);
    EXPECT_EQ(offsetof(slurm_abi::dynamic_plugin_data, plugin_id), 8u);
    EXPECT_EQ(sizeof(slurm_abi::tree_data_23_11), 16u);
    EXPECT_EQ(offsetof(slurm_abi::tree_data_23_11, topo_array), 8u);
}
#endif

TEST(SlurmTopoLayout, ReleasesMapToLayouts) {
    EXPECT_EQ(topo_layout_of(slurm_version_num(22, 5, 0)), topo_layout::v22_05);
    EXPECT_EQ(topo_layout_of(k22_05), topo_layout::v22_05);
    EXPECT_EQ(topo_layout_of(slurm_version_num(23, 2, 7)), topo_layout::v22_05);
    EXPECT_EQ(topo_layout_of(slurm_version_num(23, 11, 1)), topo_layout::v23_11);
    EXPECT_EQ(topo_layout_of(slurm_version_num(24, 5, 4)), topo_layout::v23_11);
    EXPECT_EQ(topo_layout_of(k24_11), topo_layout::v23_11);
    EXPECT_EQ(topo_layout_of(slurm_version_num(21, 8, 8)), topo_layout::unknown);
    EXPECT_EQ(topo_layout_of(slurm_version_num(25, 5, 0)), topo_layout::unknown);
    EXPECT_EQ(topo_layout_of(slurm_version_num(26, 5, 0)), topo_layout::unknown);
    EXPECT_EQ(topo_layout_of(0), topo_layout::unknown);
    EXPECT_EQ(slurm_version_string(k24_11), "24.11.5");
    EXPECT_EQ(slurm_version_string(slurm_version_num(22, 5, 8)), "22.05.8");
}

// slurm_api_version() of libslurm.so.38 (Debian 12) is 0x260000, of libslurm.so.42 (Debian 13) 0x2a0000.
TEST(SlurmTopoLayout, LibraryInterfacesMapToReleases) {
    EXPECT_EQ(slurm_release_of_api(0x260000), slurm_version_num(22, 5));
    EXPECT_EQ(slurm_release_of_api(0x270000), slurm_version_num(23, 2));
    EXPECT_EQ(slurm_release_of_api(0x280000), slurm_version_num(23, 11));
    EXPECT_EQ(slurm_release_of_api(0x290000), slurm_version_num(24, 5));
    EXPECT_EQ(slurm_release_of_api(0x2a0000), slurm_version_num(24, 11));
    EXPECT_EQ(topo_layout_of(slurm_release_of_api(0x260000)), topo_layout::v22_05);
    EXPECT_EQ(topo_layout_of(slurm_release_of_api(0x2a0000)), topo_layout::v23_11);
    EXPECT_EQ(slurm_release_of_api(0x250000), 0u);
    EXPECT_EQ(slurm_release_of_api(0x2b0000), 0u);
    EXPECT_EQ(slurm_release_of_api(-1), 0u);
    EXPECT_EQ(topo_layout_of(slurm_release_of_api(0x2b0000)), topo_layout::unknown);
}

TEST(SlurmTopoLayout, Decodes22_05Records) {
    two_leaves t;
    slurm_abi::topo_response_22_05 msg{3, t.recs};
    expect_two_leaves(decode_topo_response(&msg, k22_05));
    slurm_abi::topo_response_22_05 none{0, nullptr};
    auto r = decode_topo_response(&none, k22_05);
    ASSERT_TRUE(r.ok());
    EXPECT_TRUE(r->empty());
}

TEST(SlurmTopoLayout, Decodes24_11TreePluginData) {
    two_leaves t;
    slurm_abi::tree_data_23_11 tree{3, t.recs};
    slurm_abi::dynamic_plugin_data dyn{&tree, slurm_abi::kTopologyTree};
    // the plain members stay empty when slurmctld speaks 23.11's protocol or newer
    slurm_abi::topo_response_23_11 msg{0, nullptr, &dyn};
    expect_two_leaves(decode_topo_response(&msg, k24_11));
}

TEST(SlurmTopoLayout, Decodes24_11PlainRecordsOfAnOlderController) {
    two_leaves t;
    slurm_abi::topo_response_23_11 msg{3, t.recs, nullptr};
    expect_two_leaves(decode_topo_response(&msg, k24_11));
}

TEST(SlurmTopoLayout, OtherTopologyPluginsHaveNoSwitches) {
    two_leaves t;
    slurm_abi::tree_data_23_11 not_a_tree{3, t.recs};  // never read as a tree
    for (uint32_t id : {slurm_abi::kTopologyDefault, slurm_abi::kTopologyBlock, slurm_abi::kTopology3dTorus, 999u}) {
        slurm_abi::dynamic_plugin_data dyn{&not_a_tree, id};
        slurm_abi::topo_response_23_11 msg{0, nullptr, &dyn};
        auto r = decode_topo_response(&msg, k24_11);
        ASSERT_TRUE(r.ok()) << id;
        EXPECT_TRUE(r->empty()) << id;
    }
    slurm_abi::dynamic_plugin_data no_data{nullptr, slurm_abi::kTopologyTree};
    slurm_abi::topo_response_23_11 msg{0, nullptr, &no_data};
    auto r = decode_topo_response(&msg, k24_11);
    ASSERT_TRUE(r.ok());
    EXPECT_TRUE(r->empty());
}

TEST(SlurmTopoLayout, NoResponseIsNoTopology) {
    for (uint32_t v : {k22_05, k24_11}) {
        auto r = decode_topo_response(nullptr, v);
        ASSERT_TRUE(r.ok());
        EXPECT_TRUE(r->empty());
    }
}

TEST(SlurmTopoLayout, UnknownReleaseIsNotSupportedAndNotRead) {
    // a pointer that must not be dereferenced
    const void *poison = reinterpret_cast<const void *>(uintptr_t{0x10});
    auto r = decode_topo_response(poison, slurm_version_num(25, 5, 1));
    EXPECT_EQ(r.status().code(), PMIX_ERR_NOT_SUPPORTED);
    EXPECT_NE(r.status().message().find("Slurm 25.05.1"), std::string::npos) << r.status().message();
    EXPECT_EQ(decode_topo_response(nullptr, slurm_version_num(21, 8)).status().code(), PMIX_ERR_NOT_SUPPORTED);
}

TEST(SlurmTopoLayout, ImplausibleCountsAreRefused) {
    slurm_abi::topo_response_22_05 huge{kMaxSwitchRecords + 1, nullptr};
    EXPECT_EQ(decode_topo_response(&huge, k22_05).status().code(), PMIX_ERR_BAD_PARAM);
    slurm_abi::topo_response_22_05 no_array{2, nullptr};
    EXPECT_EQ(decode_topo_response(&no_array, k22_05).status().code(), PMIX_ERR_BAD_PARAM);
    slurm_abi::tree_data_23_11 tree{kMaxSwitchRecords + 1, nullptr};
    slurm_abi::dynamic_plugin_data dyn{&tree, slurm_abi::kTopologyTree};
    slurm_abi::topo_response_23_11 msg{0, nullptr, &dyn};
    EXPECT_EQ(decode_topo_response(&msg, k24_11).status().code(), PMIX_ERR_BAD_PARAM);
}

// The records of either layout give the same switch tree.
TEST(SlurmTopoLayout, BothLayoutsGiveTheSameCosts) {
    two_leaves t;
    slurm_abi::topo_response_22_05 old_msg{3, t.recs};
    slurm_abi::tree_data_23_11 tree{3, t.recs};
    slurm_abi::dynamic_plugin_data dyn{&tree, slurm_abi::kTopologyTree};
    slurm_abi::topo_response_23_11 new_msg{0, nullptr, &dyn};
    auto a = decode_topo_response(&old_msg, k22_05);
    auto b = decode_topo_response(&new_msg, k24_11);
    ASSERT_TRUE(a.ok() && b.ok());
    auto ta = switch_tree::build(a.value());
    auto tb = switch_tree::build(b.value());
    ASSERT_TRUE(ta.ok() && tb.ok());
    EXPECT_EQ(ta->nodes(), tb->nodes());
    EXPECT_EQ(tb->node_cost("n1", "n2"), ta->node_cost("n1", "n2"));
    EXPECT_EQ(tb->node_cost("n1", "n4"), ta->node_cost("n1", "n4"));
    EXPECT_EQ(tb->leaf_of("n3"), "s2");
}
