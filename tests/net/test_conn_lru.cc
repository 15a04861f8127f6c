// The cap on open node connections (plugin/net/conn_lru.h): least recently used closed first,
// never one the transport keeps; no cap at 0.
#include <gtest/gtest.h>

#include <set>

#include "plugin/net/conn_lru.h"

using pmixcpp::net::conn_lru;

TEST(conn_lru, closes_the_least_recently_used_over_the_cap) {
    conn_lru l(2);
    l.touch(5);
    l.touch(6);
    EXPECT_TRUE(l.evict({}).empty());
    l.touch(5);  // 6 is now the least recently used
    l.touch(7);
    EXPECT_EQ(l.open(), 3u);
    EXPECT_EQ(l.evict({}), std::vector<uint32_t>{6});
    EXPECT_EQ(l.open(), 2u);
    EXPECT_FALSE(l.is_open(6));
    EXPECT_TRUE(l.is_open(5));
    EXPECT_TRUE(l.is_open(7));
    EXPECT_EQ(l.evictions(), 1u);
    EXPECT_EQ(l.peak(), 3u);
    // Reopened on next need: it is the most recent then, 5 goes.
    l.touch(6);
    EXPECT_EQ(l.evict({}), std::vector<uint32_t>{5});
}

TEST(conn_lru, never_closes_a_kept_connection) {
    conn_lru l(1);
    for (uint32_t n : {1u, 2u, 3u, 4u}) l.touch(n);
    // 1 has requests outstanding, 2 is the watched neighbour: 3 goes, then 4 would but the cap
    // is reached by skipping no more than needed: open 4 - cap 1 = 3 to close, only 2 may.
    std::set<uint32_t> keep{1, 2};
    auto closed = l.evict([&](uint32_t n) { return keep.count(n) > 0; });
    EXPECT_EQ(closed, (std::vector<uint32_t>{3, 4}));
    EXPECT_EQ(l.open(), 2u);  // over the cap while both are busy (a soft cap)
    keep.erase(1);            // its reply came
    EXPECT_EQ(l.evict([&](uint32_t n) { return keep.count(n) > 0; }), std::vector<uint32_t>{1});
    EXPECT_EQ(l.open(), 1u);
}

TEST(conn_lru, no_cap_closes_nothing_and_closed_ones_leave) {
    conn_lru l(0);
    for (uint32_t n = 0; n < 1000; ++n) l.touch(n);
    EXPECT_TRUE(l.evict({}).empty());
    EXPECT_EQ(l.open(), 1000u);
    l.closed(10);
    l.closed(10);  // twice: no harm
    l.closed(5000);
    EXPECT_EQ(l.open(), 999u);
    EXPECT_FALSE(l.is_open(10));
    EXPECT_EQ(l.peak(), 1000u);
}

// Random use against a model: the open set is always the most recently used ones (nothing is
// kept), and its size never exceeds the cap after an eviction.
TEST(conn_lru, matches_a_model_under_random_use) {
    for (size_t cap : {1u, 2u, 3u, 8u}) {
        conn_lru l(cap);
        std::vector<uint32_t> recent;  // model: most recent last, distinct
        uint32_t x = 12345;
        for (int i = 0; i < 5000; ++i) {
            x = x * 1103515245u + 12345u;
            uint32_t n = (x >> 16) % 20;
            l.touch(n);
            std::erase(recent, n);
            recent.push_back(n);
            auto closed = l.evict({});
            while (recent.size() > cap) {
                ASSERT_FALSE(closed.empty());
                EXPECT_EQ(closed.front(), recent.front());
                closed.erase(closed.begin());
                recent.erase(recent.begin());
            }
            EXPECT_TRUE(closed.empty());
            ASSERT_EQ(l.open(), recent.size());
            for (uint32_t r : recent) EXPECT_TRUE(l.is_open(r));
        }
    }
}
