// Tests for shared/hostlist: expansion, compression, errors, round trips.
#include <gtest/gtest.h>

#include <random>

#include "hostlist.h"

namespace pmixcpp::hostlist {
namespace {

using V = std::vector<std::string>;

V must_expand(const char *list) {
    auto r = expand(list);
    EXPECT_TRUE(r.ok()) << list << ": " << r.status().message();
    return r.ok() ? r.value() : V{};
}

TEST(HostlistExpand, Basics) {
    EXPECT_EQ(must_expand(""), V{});
    EXPECT_EQ(must_expand("login"), V{"login"});
    EXPECT_EQ(must_expand("n[1-4,7]"), (V{"n1", "n2", "n3", "n4", "n7"}));
    EXPECT_EQ(must_expand("n[01-10]"),
              (V{"n01", "n02", "n03", "n04", "n05", "n06", "n07", "n08", "n09", "n10"}));
    EXPECT_EQ(must_expand("n[8-10]"), (V{"n8", "n9", "n10"}));
    EXPECT_EQ(must_expand("n[1-3],m5,x[2,4-5]"), (V{"n1", "n2", "n3", "m5", "x2", "x4", "x5"}));
    EXPECT_EQ(must_expand("a[1-2]b"), (V{"a1b", "a2b"}));
    EXPECT_EQ(must_expand("n[3,1,2]"), (V{"n3", "n1", "n2"}));
    EXPECT_EQ(must_expand("n[098-101]"), (V{"n098", "n099", "n100", "n101"}));
    EXPECT_EQ(must_expand("rack1-n[1-2]"), (V{"rack1-n1", "rack1-n2"}));
    EXPECT_EQ(must_expand("[5-6]"), (V{"5", "6"}));
}

TEST(HostlistExpand, RejectsMalformedInput) {
    const char *bad[] = {"n[1-3",
                         "n1-3]",
                         "n]1[",
                         "n[[1]]",
                         "n[]",
                         "n[5-3]",
                         "n[a-b]",
                         "n[1-]",
                         "n[-2]",
                         "n[1,,2]",
                         "n1,,n2",
                         "n1,",
                         ",n1",
                         "n[1]x[2]",
                         "n 1",
                         "n[1-2]]",
                         "n[1-1000001]",
                         "n[1-600000],m[1-600000]",
                         "n[1234567890123456789]"};
    for (const char *list : bad) {
        auto r = expand(list);
        EXPECT_FALSE(r.ok()) << list;
        if (!r.ok()) {
            EXPECT_EQ(r.status().code(), PMIX_ERR_BAD_PARAM);
            EXPECT_NE(r.status().message().find("hostlist"), std::string::npos);
        }
    }
    auto r = expand("n[5-3]");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("reversed"), std::string::npos);
    r = expand("n[1-3");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("unbalanced"), std::string::npos);
}

TEST(HostlistExpand, ExactlyTheLimitIsAccepted) {
    auto r = expand("n[1-1000000]");
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->size(), kMaxExpandedHosts);
    EXPECT_EQ(r->back(), "n1000000");
}

TEST(HostlistCompress, Basics) {
    EXPECT_EQ(compress({}), "");
    EXPECT_EQ(compress({"login"}), "login");
    EXPECT_EQ(compress({"n5"}), "n5");
    EXPECT_EQ(compress({"n1", "n2", "n3", "n4", "n7"}), "n[1-4,7]");
    EXPECT_EQ(compress({"n01", "n02", "n10"}), "n[01-02,10]");
    EXPECT_EQ(compress(must_expand("n[01-10]")), "n[01-10]");
    EXPECT_EQ(compress({"n9", "n10"}), "n[9-10]");
    EXPECT_EQ(compress({"n8", "n09"}), "n[8,09]");
    EXPECT_EQ(compress({"n1", "n2", "n3", "m5", "x2", "x4", "x5"}), "n[1-3],m5,x[2,4-5]");
    EXPECT_EQ(compress({"n1", "m1", "n2"}), "n1,m1,n2");  // order preserved
    EXPECT_EQ(compress({"n3", "n1", "n2"}), "n[3,1-2]");
    EXPECT_EQ(compress({"a", "a1", "a2"}), "a,a[1-2]");
    EXPECT_EQ(compress({"n1", "n1"}), "n[1,1]");
}

TEST(HostlistCompress, RoundTripsRandomLists) {
    std::mt19937 rng(1234);
    const char *prefixes[] = {"n", "node", "gpu-", "r1n", ""};
    for (int iter = 0; iter < 500; ++iter) {
        V hosts;
        int n = rng() % 30;
        for (int i = 0; i < n; ++i) {
            std::string p = prefixes[rng() % 5];
            int width = rng() % 3 == 0 ? 3 : 1;
            std::string num = std::to_string(rng() % 120);
            if (num.size() < static_cast<size_t>(width)) num.insert(0, width - num.size(), '0');
            if (p.empty() && rng() % 2) p = "x";
            hosts.push_back(p + num);
            if (rng() % 7 == 0) hosts.push_back("login");
        }
        std::string c = compress(hosts);
        auto back = expand(c);
        ASSERT_TRUE(back.ok()) << c << ": " << back.status().message();
        EXPECT_EQ(back.value(), hosts) << c;
    }
}

}  // namespace
}  // namespace pmixcpp::hostlist
