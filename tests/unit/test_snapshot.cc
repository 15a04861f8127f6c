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

TEST(Snapshot, OneKeyOfOneRankInPlace) {
    auto *infos = static_cast<pmix_info_t *>(calloc(2, sizeof(pmix_info_t)));
    std::strncpy(infos[0].key, "zeta", PMIX_MAX_KEYLEN);
    infos[0].value.type = PMIX_UINT32;
    infos[0].value.data.uint32 = 1;
    std::strncpy(infos[1].key, "alpha", PMIX_MAX_KEYLEN);
    infos[1].value.type = PMIX_STRING;
    infos[1].value.data.string = strdup("a");
    InfoArray two(infos, 2), other = one_info("zeta", 2);
    auto bytes = encode_snapshot({{4, &two}, {1, &other}});
    ASSERT_TRUE(bytes.ok()) << bytes.status().message();
    auto view = snapshot_view::parse(bytes.value());
    ASSERT_TRUE(view.ok());
    pmix_value_t v{};
    ASSERT_TRUE(view->value(4, "alpha", &v).ok());
    EXPECT_EQ(v.type, PMIX_STRING);
    EXPECT_STREQ(v.data.string, "a");
    value_destruct(&v);
    v = pmix_value_t{};
    ASSERT_TRUE(view->value(1, "zeta", &v).ok());
    EXPECT_EQ(v.data.uint32, 2u);
    v = pmix_value_t{};
    EXPECT_EQ(view->value(1, "alpha", &v).code(), PMIX_ERR_NOT_FOUND);
    EXPECT_EQ(view->value(2, "zeta", &v).code(), PMIX_ERR_NOT_FOUND);
}

TEST(Snapshot, DuplicateKeysRefused) {
    auto *infos = static_cast<pmix_info_t *>(calloc(2, sizeof(pmix_info_t)));
    std::strncpy(infos[0].key, "k", PMIX_MAX_KEYLEN);
    std::strncpy(infos[1].key, "k", PMIX_MAX_KEYLEN);
    infos[0].value.type = infos[1].value.type = PMIX_BOOL;
    InfoArray twice(infos, 2);
    EXPECT_FALSE(encode_snapshot({{0, &twice}}).ok());
}

TEST(Snapshot, EveryTruncationAndCorruptionIsRejected) {
    InfoArray a = one_info("key", 1), b = one_info("other", 2);
    auto bytes = encode_snapshot({{0, &a}, {1, &b}});
    ASSERT_TRUE(bytes.ok());
    // The header names the file's length: every strict prefix fails.
    for (size_t n = 0; n < bytes->size(); ++n)
        EXPECT_FALSE(snapshot_view::parse(std::span<const uint8_t>(bytes->data(), n)).ok()) << n;
    // Any single corrupted byte of the header, index or key tables: parsing or the lookup fails
    // cleanly, or (a value's own bytes) the value decodes to something; nothing reads outside.
    for (size_t i = 0; i < bytes->size(); ++i) {
        auto bad = bytes.value();
        bad[i] ^= 0xff;
        auto view = snapshot_view::parse(bad);
        if (!view.ok()) continue;
        for (uint32_t rank : {0u, 1u}) {
            InfoArray got;
            (void)view->rank_data(rank, &got);
            pmix_value_t v{};
            if (view->value(rank, "key", &v).ok()) value_destruct(&v);
        }
    }
}
