#include "wire/snapshot.h"

#include "wire/messages.h"

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

// --- the reference a reply names -----------------------------------------------------------

namespace {
std::vector<uint8_t> ref_bytes(const snapshot_ref &ref) {
    Writer w;
    EXPECT_TRUE(encode(w, ref).ok());
    return w.take();
}
Status decode_ref(std::span<const uint8_t> bytes, snapshot_ref *out) { return decode_payload(bytes, out); }
}  // namespace

TEST(SnapshotRef, RoundTripAndBytes) {
    snapshot_ref ref{"modex.7", {{0, 100}, {128, 28}}};
    auto bytes = ref_bytes(ref);
    // str id, u32 count, (u64 offset, u64 length) x count: the bytes PROTOCOL.md gives.
    const std::vector<uint8_t> want = {7, 0, 0, 0, 'm', 'o', 'd', 'e', 'x', '.', '7', 2, 0, 0, 0,
                                       0, 0, 0, 0, 0, 0, 0, 0, 100, 0, 0, 0, 0, 0, 0, 0,
                                       128, 0, 0, 0, 0, 0, 0, 0, 28, 0, 0, 0, 0, 0, 0, 0};
    EXPECT_EQ(bytes, want);
    snapshot_ref back;
    ASSERT_TRUE(decode_ref(bytes, &back).ok());
    EXPECT_EQ(back.id, ref.id);
    EXPECT_EQ(back.segments, ref.segments);

    // None could be made: the empty id alone.
    snapshot_ref none;
    EXPECT_EQ(ref_bytes(none), (std::vector<uint8_t>{0, 0, 0, 0}));
    back.id = "x";
    ASSERT_TRUE(decode_ref(ref_bytes(none), &back).ok());
    EXPECT_TRUE(back.id.empty());
    EXPECT_TRUE(back.segments.empty());

    // The most segments there may be.
    snapshot_ref many{"modex.1", {}};
    for (uint64_t i = 0; i < kMaxSnapshotSegments; ++i) many.segments.emplace_back(i * 16, 16);
    ASSERT_TRUE(decode_ref(ref_bytes(many), &back).ok());
    EXPECT_EQ(back.segments.size(), size_t{kMaxSnapshotSegments});
}

TEST(SnapshotRef, EveryTruncationIsRejected) {
    auto bytes = ref_bytes({"modex.12", {{0, 4096}, {4096, 64}, {8192, 1}}});
    for (size_t n = 0; n < bytes.size(); ++n) {
        snapshot_ref out{"kept", {{1, 1}}};
        Status st = decode_ref(std::span<const uint8_t>(bytes.data(), n), &out);
        EXPECT_FALSE(st.ok()) << n << " bytes";
        EXPECT_EQ(st.code(), PMIX_ERR_UNPACK_FAILURE) << n;
        EXPECT_EQ(out.id, "kept") << "untouched on failure";
    }
    // Trailing bytes after a whole reference are refused too.
    bytes.push_back(0);
    snapshot_ref out;
    EXPECT_FALSE(decode_ref(bytes, &out).ok());
    // As is anything after the empty id.
    std::vector<uint8_t> none_then_count = {0, 0, 0, 0, 1, 0, 0, 0};
    EXPECT_FALSE(decode_ref(none_then_count, &out).ok());
}

TEST(SnapshotRef, CountsAndSegmentsOutOfBoundsAreRejected) {
    auto with_count = [](uint32_t count, size_t segments_written) {
        Writer w;
        EXPECT_TRUE(w.put_string("modex.1").ok());
        w.put_u32(count);
        for (size_t i = 0; i < segments_written; ++i) {
            w.put_u64(i * 8);
            w.put_u64(8);
        }
        return w.take();
    };
    snapshot_ref out;
    // An announced count beyond the bound, or beyond the bytes, fails before any allocation.
    Status st = decode_ref(with_count(kMaxSnapshotSegments + 1, 1), &out);
    EXPECT_FALSE(st.ok());
    EXPECT_NE(st.message().find("segments"), std::string::npos) << st.message();
    EXPECT_FALSE(decode_ref(with_count(0xFFFFFFFFu, 2), &out).ok());
    EXPECT_FALSE(decode_ref(with_count(1000, 2), &out).ok());
    EXPECT_FALSE(decode_ref(with_count(0, 0), &out).ok()) << "a file with no segment";
    EXPECT_TRUE(decode_ref(with_count(2, 2), &out).ok());

    auto one = [](uint64_t off1, uint64_t len1, uint64_t off2, uint64_t len2) {
        Writer w;
        EXPECT_TRUE(w.put_string("modex.1").ok());
        w.put_u32(2);
        w.put_u64(off1);
        w.put_u64(len1);
        w.put_u64(off2);
        w.put_u64(len2);
        return w.take();
    };
    EXPECT_FALSE(decode_ref(one(0, 0, 8, 8), &out).ok()) << "an empty segment";
    EXPECT_FALSE(decode_ref(one(0, 16, 8, 8), &out).ok()) << "overlapping segments";
    EXPECT_FALSE(decode_ref(one(64, 8, 0, 8), &out).ok()) << "newer before older";
    EXPECT_FALSE(decode_ref(one(0, 8, UINT64_MAX - 2, 8), &out).ok()) << "an end beyond 2^64";

    // An id longer than the bound, or with a NUL.
    Writer w;
    ASSERT_TRUE(w.put_string(std::string(kMaxSnapshotIdLength + 1, 'a')).ok());
    w.put_u32(1);
    w.put_u64(0);
    w.put_u64(8);
    EXPECT_FALSE(decode_ref(w.data(), &out).ok());
}

TEST(SnapshotRef, TheEncoderRefusesWhatTheDecoderWould) {
    const std::vector<snapshot_ref> bad = {
        {"", {{0, 8}}},                                     // segments without a file
        {"modex.1", {}},                                    // a file without segments
        {"modex.1", {{0, 0}}},                              // an empty segment
        {"modex.1", {{16, 8}, {0, 8}}},                     // out of order
        {"modex.1", {{UINT64_MAX, 2}}},                     // an end beyond 2^64
        {std::string(kMaxSnapshotIdLength + 1, 'x'), {{0, 8}}},
        {std::string("mo\0dex", 6), {{0, 8}}},
    };
    for (const auto &ref : bad) {
        Writer w;
        Status st = encode(w, ref);
        EXPECT_EQ(st.code(), PMIX_ERR_PACK_FAILURE) << ref.id.size();
        EXPECT_EQ(w.size(), 0u) << "nothing written";
    }
    snapshot_ref too_many{"modex.1", {}};
    for (uint64_t i = 0; i <= kMaxSnapshotSegments; ++i) too_many.segments.emplace_back(i * 16, 16);
    Writer w;
    EXPECT_FALSE(encode(w, too_many).ok());
    EXPECT_EQ(w.size(), 0u);
}
