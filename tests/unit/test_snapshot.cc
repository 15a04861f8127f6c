#include "wire/snapshot.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace pmixcpp;
using namespace pmixcpp::wire;

namespace {
InfoArray one_info(const char *key, uint32_t v) {
    auto *infos = static_cast<pmix_info_t *>(calloc(1, sizeof(pmix_info_t)));
    std::strncpy(infos[0].key, key, PMIX_MAX_KEYLEN);
    infos[0].value.type = PMIX_UINT32;
    infos[0].value.data.uint32 = v;
    return InfoArray(infos, 1);
}
}  // namespace

TEST(Snapshot, RoundTripByRank) {
    InfoArray a = one_info("k", 7), b = one_info("k", 9), empty;
    auto bytes = encode_snapshot({{5, &b}, {2, &a}, {3, &empty}});
    ASSERT_TRUE(bytes.ok());
    auto view = snapshot_view::parse(bytes.value());
    ASSERT_TRUE(view.ok()) << view.status().message();
    EXPECT_EQ(view->size(), 3u);
    EXPECT_TRUE(view->has(2));
    EXPECT_FALSE(view->has(4));
    InfoArray got;
    ASSERT_TRUE(view->rank_data(5, &got).ok());
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].value.data.uint32, 9u);
    ASSERT_TRUE(view->rank_data(3, &got).ok());
    EXPECT_EQ(got.size(), 0u);
    EXPECT_EQ(view->rank_data(4, &got).code(), PMIX_ERR_NOT_FOUND);
}

TEST(Snapshot, DuplicateRanksRefused) {
    InfoArray a = one_info("k", 1);
    EXPECT_FALSE(encode_snapshot({{1, &a}, {1, &a}}).ok());
}

TEST(Snapshot, EveryTruncationAndCorruptionIsRejected) {
    InfoArray a = one_info("key", 1), b = one_info("other", 2);
    auto bytes = encode_snapshot({{0, &a}, {1, &b}});
    ASSERT_TRUE(bytes.ok());
    // The last blob ends at the end of the file, so every strict prefix fails the index check.
    for (size_t n = 0; n < bytes->size(); ++n)
        EXPECT_FALSE(snapshot_view::parse(std::span<const uint8_t>(bytes->data(), n)).ok()) << n;
    // unsorted index
    auto bad = bytes.value();
    std::swap(bad[16], bad[32]);
    EXPECT_FALSE(snapshot_view::parse(bad).ok());
    // offset outside the file
    bad = bytes.value();
    bad[24] = 0xff;
    bad[25] = 0xff;
    EXPECT_FALSE(snapshot_view::parse(bad).ok());
}
