// Tests for shared/process_mapping: PMI_process_mapping text from the node of each rank, read
// back as MPICH reads it.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "process_mapping.h"

namespace pmixcpp {
namespace {

using V = std::vector<uint32_t>;

// Every layout must read back as itself.
void expect_round_trip(const V &nodes) {
    std::string m = process_mapping(nodes);
    auto back = expand_process_mapping(m, nodes.size());
    ASSERT_TRUE(back.has_value()) << m;
    EXPECT_EQ(*back, nodes) << m;
}

TEST(ProcessMapping, Block) {
    EXPECT_EQ(process_mapping({0, 0, 1, 1}), "(vector,(0,2,2))");
    EXPECT_EQ(process_mapping({0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3}), "(vector,(0,4,4))");
    EXPECT_EQ(process_mapping({0, 0, 0, 1, 1}), "(vector,(0,1,3),(1,1,2))");
    EXPECT_EQ(process_mapping({0, 0, 0, 1, 1, 2, 2}), "(vector,(0,1,3),(1,2,2))");
    EXPECT_EQ(process_mapping({0}), "(vector,(0,1,1))");
    EXPECT_EQ(process_mapping({}), "(vector)");
}

TEST(ProcessMapping, CyclicIsOnePeriod) {
    EXPECT_EQ(process_mapping({0, 1, 0, 1}), "(vector,(0,2,1))");
    EXPECT_EQ(process_mapping({0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3}), "(vector,(0,4,1))");
    // block-cyclic, 2 at a time over 3 nodes, last period cut short
    EXPECT_EQ(process_mapping({0, 0, 1, 1, 2, 2, 0, 0, 1}), "(vector,(0,3,2))");
    // uneven cyclic: 5 ranks on 2 nodes
    EXPECT_EQ(process_mapping({0, 1, 0, 1, 0}), "(vector,(0,2,1))");
}

TEST(ProcessMapping, ArbitraryLayouts) {
    expect_round_trip({1, 0, 1, 0});
    expect_round_trip({2, 2, 0, 1, 1, 0});
    expect_round_trip({0, 1, 1, 0});
    expect_round_trip({3, 1, 2, 0});
    // the last rank is the start of a second period
    EXPECT_EQ(process_mapping({0, 1, 1, 0}), "(vector,(0,1,1),(1,1,2))");
    EXPECT_EQ(process_mapping({1, 0, 1, 0}), "(vector,(1,1,1),(0,2,1))");
}

TEST(ProcessMapping, RandomLayoutsReadBack) {
    std::mt19937 rng(7);
    for (int i = 0; i < 2000; ++i) {
        size_t n = 1 + rng() % 40;
        uint32_t nodes = 1 + rng() % 6;
        V v(n);
        switch (i % 3) {
        case 0:
            for (auto &x : v) x = rng() % nodes;
            break;
        case 1:  // block-cyclic with a random block
            for (size_t r = 0, b = 1 + rng() % 4; r < n; ++r) v[r] = static_cast<uint32_t>((r / b) % nodes);
            break;
        default:  // sorted: block layouts of uneven sizes
            for (auto &x : v) x = rng() % nodes;
            std::sort(v.begin(), v.end());
        }
        expect_round_trip(v);
    }
}

TEST(ProcessMapping, ExpandReadsWhatMpichReads) {
    EXPECT_EQ(expand_process_mapping("(vector,(0,2,1))", 5), (V{0, 1, 0, 1, 0}));
    // after a wrap, a pass starts at the first triple that starts at node 0
    EXPECT_EQ(expand_process_mapping("(vector,(1,1,1),(0,1,1))", 4), (V{1, 0, 0, 0}));
    EXPECT_EQ(expand_process_mapping("(vector,(1,1,2))", 3), (V{1, 1, 1}));
    EXPECT_EQ(expand_process_mapping("(vector)", 0), V{});
}

TEST(ProcessMapping, ExpandRejectsGarbage) {
    const char *bad[] = {"", "vector", "(vector,", "(vector,(0,1))", "(vector,(0,1,1)", "(vector,(0,1,1)x",
                         "(vector,(a,1,1))", "(vector,(0,-1,1))", "(vector,(0,0,1))", "(vector,(0,1,0))",
                         "(vector,(0,1,99999999999))", "(block,(0,1,1))", "(vector)"};
    for (const char *m : bad) EXPECT_FALSE(expand_process_mapping(m, 3).has_value()) << m;
}

}  // namespace
}  // namespace pmixcpp
