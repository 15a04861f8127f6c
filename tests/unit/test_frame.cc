// Tests for shared/wire/frame: golden header bytes, reassembly, and rejection of bad streams.
#include <gtest/gtest.h>

#include <random>

#include "wire/frame.h"

namespace pmixcpp::wire {
namespace {

using Bytes = std::vector<uint8_t>;

Bytes frame_bytes(uint16_t type, uint8_t flags, uint32_t id, const Bytes &payload) {
    auto r = encode_frame(type, flags, id, payload);
    EXPECT_TRUE(r.ok());
    return r.ok() ? r.value() : Bytes{};
}

TEST(Frame, GoldenBytes) {
    // Pins the wire format: changing it breaks every deployed peer.
    Bytes got = frame_bytes(0x0102, 0x80, 0x11223344, Bytes{'h', 'i'});
    Bytes want = {'P',  'M',  'X',  'C',  0x01, 0x80, 0x02, 0x01, 0x44,
                  0x33, 0x22, 0x11, 0x02, 0x00, 0x00, 0x00, 'h',  'i'};
    EXPECT_EQ(got, want);
    EXPECT_EQ(kFrameHeaderSize, 16u);
}

TEST(Frame, HeaderRoundTrip) {
    FrameHeader h;
    h.flags = 7;
    h.type = 0xBEEF;
    h.id = 0xDEADBEEF;
    h.length = 1234;
    uint8_t buf[kFrameHeaderSize];
    encode_frame_header(h, buf);
    FrameHeader out;
    ASSERT_TRUE(decode_frame_header(buf, &out).ok());
    EXPECT_EQ(out.version, kProtocolVersion);
    EXPECT_EQ(out.flags, 7);
    EXPECT_EQ(out.type, 0xBEEF);
    EXPECT_EQ(out.id, 0xDEADBEEFu);
    EXPECT_EQ(out.length, 1234u);
}

TEST(FrameReader, WholeFramesAndEmptyPayload) {
    FrameReader reader;
    Bytes a = frame_bytes(1, 0, 10, Bytes{1, 2, 3});
    Bytes b = frame_bytes(2, 1, 11, Bytes{});
    Bytes stream = a;
    stream.insert(stream.end(), b.begin(), b.end());
    ASSERT_TRUE(reader.feed(stream).ok());
    auto f1 = reader.next();
    ASSERT_TRUE(f1.ok());
    ASSERT_TRUE(f1->has_value());
    EXPECT_EQ((*f1)->type, 1);
    EXPECT_EQ((*f1)->id, 10u);
    EXPECT_EQ((*f1)->payload, (Bytes{1, 2, 3}));
    auto f2 = reader.next();
    ASSERT_TRUE(f2.ok() && f2->has_value());
    EXPECT_EQ((*f2)->type, 2);
    EXPECT_EQ((*f2)->flags, 1);
    EXPECT_TRUE((*f2)->payload.empty());
    auto f3 = reader.next();
    ASSERT_TRUE(f3.ok());
    EXPECT_FALSE(f3->has_value());
    EXPECT_EQ(reader.buffered(), 0u);
}

TEST(FrameReader, ByteByByteAndRandomChunks) {
    std::mt19937 rng(7);
    Bytes stream;
    std::vector<Bytes> payloads;
    for (int i = 0; i < 50; ++i) {
        Bytes p(rng() % 300);
        for (auto &c : p) c = static_cast<uint8_t>(rng());
        payloads.push_back(p);
        Bytes f = frame_bytes(static_cast<uint16_t>(i), 0, static_cast<uint32_t>(i), p);
        stream.insert(stream.end(), f.begin(), f.end());
    }
    for (int mode = 0; mode < 2; ++mode) {
        FrameReader reader;
        size_t got = 0, pos = 0;
        while (pos < stream.size()) {
            size_t n = mode == 0 ? 1 : std::min<size_t>(1 + rng() % 97, stream.size() - pos);
            ASSERT_TRUE(reader.feed(stream.data() + pos, n).ok());
            pos += n;
            while (true) {
                auto f = reader.next();
                ASSERT_TRUE(f.ok()) << f.status().message();
                if (!f->has_value()) break;
                EXPECT_EQ((*f)->id, got);
                EXPECT_EQ((*f)->payload, payloads[got]);
                ++got;
            }
        }
        EXPECT_EQ(got, payloads.size());
    }
}

TEST(FrameReader, RejectsBadMagicAssoonAsItArrives) {
    FrameReader reader;
    uint8_t garbage[] = {'G'};
    ASSERT_TRUE(reader.feed(garbage, 1).ok());
    auto f = reader.next();
    ASSERT_FALSE(f.ok());
    EXPECT_EQ(f.status().code(), PMIX_ERR_UNPACK_FAILURE);
    EXPECT_NE(f.status().message().find("magic"), std::string::npos);
    // The failure is sticky.
    EXPECT_TRUE(reader.failed());
    EXPECT_FALSE(reader.feed(garbage, 1).ok());
    EXPECT_FALSE(reader.next().ok());
}

TEST(FrameReader, RejectsUnsupportedVersion) {
    Bytes f = frame_bytes(1, 0, 1, Bytes{});
    f[4] = 2;
    FrameReader reader;
    ASSERT_TRUE(reader.feed(f).ok());
    auto r = reader.next();
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), PMIX_ERR_NOT_SUPPORTED);
    EXPECT_NE(r.status().message().find("version 2"), std::string::npos);
}

TEST(FrameReader, RejectsOversizedLengthBeforeThePayloadArrives) {
    FrameReader reader(1024);
    FrameHeader h;
    h.length = 1025;
    uint8_t buf[kFrameHeaderSize];
    encode_frame_header(h, buf);
    ASSERT_TRUE(reader.feed(buf, sizeof(buf)).ok());
    auto r = reader.next();
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), PMIX_ERR_UNPACK_INADEQUATE_SPACE);

    FrameReader ok_reader(1024);
    h.length = 1024;
    encode_frame_header(h, buf);
    ASSERT_TRUE(ok_reader.feed(buf, sizeof(buf)).ok());
    auto r2 = ok_reader.next();
    ASSERT_TRUE(r2.ok());
    EXPECT_FALSE(r2->has_value());  // waits for the payload
}

TEST(FrameReader, MaxPayloadIsCappedAtTheAbsoluteLimit) {
    FrameReader reader(UINT32_MAX);
    EXPECT_EQ(reader.max_payload(), kMaxPayloadLimit);
    FrameHeader h;
    h.length = kMaxPayloadLimit + 1;
    uint8_t buf[kFrameHeaderSize];
    encode_frame_header(h, buf);
    ASSERT_TRUE(reader.feed(buf, sizeof(buf)).ok());
    EXPECT_FALSE(reader.next().ok());
}

TEST(Frame, EncodeRefusesOversizedPayload) {
    Bytes big(100);
    auto r = encode_frame(1, 0, 1, big, 99);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), PMIX_ERR_PACK_FAILURE);
}

TEST(Frame, DecodeHeaderNeedsSixteenBytes) {
    Bytes f = frame_bytes(1, 0, 1, Bytes{});
    for (size_t n = 0; n < kFrameHeaderSize; ++n) {
        FrameHeader h;
        EXPECT_FALSE(decode_frame_header(std::span<const uint8_t>(f.data(), n), &h).ok()) << n;
    }
}

TEST(FrameReader, RandomGarbageIsRejectedOrWaitsNeverCrashes) {
    std::mt19937 rng(99);
    for (int iter = 0; iter < 2000; ++iter) {
        Bytes junk(rng() % 64);
        for (auto &c : junk) c = static_cast<uint8_t>(rng());
        if (junk.size() >= 5 && rng() % 4 == 0) {
            // Valid magic and version, random rest: exercises the length checks.
            Bytes f = frame_bytes(1, 0, 1, Bytes{});
            std::copy(f.begin(), f.begin() + 5, junk.begin());
        }
        FrameReader reader(4096);
        ASSERT_TRUE(reader.feed(junk).ok());
        for (int i = 0; i < 10; ++i) {
            auto r = reader.next();
            if (!r.ok() || !r->has_value()) break;
            EXPECT_LE((*r)->payload.size(), 4096u);
        }
    }
}

}  // namespace
}  // namespace pmixcpp::wire
