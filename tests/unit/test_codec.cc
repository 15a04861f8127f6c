// Tests for shared/wire/codec: primitives, round trip of every PMIx type, golden bytes,
// truncation and garbage rejection.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "sample_values.h"
#include "wire/codec.h"

namespace pmixcpp::wire {
namespace {

using Bytes = std::vector<uint8_t>;
using pmixcpp::testing::encodable_value_types;
using pmixcpp::testing::make_sample;

Bytes encode(const pmix_value_t &v) {
    Writer w;
    Status st = encode_value(w, v);
    EXPECT_TRUE(st.ok()) << st.message();
    return w.take();
}

TEST(Writer, LittleEndianPrimitives) {
    Writer w;
    w.put_u8(0x01);
    w.put_u16(0x0203);
    w.put_u32(0x04050607);
    w.put_u64(0x08090a0b0c0d0e0full);
    w.put_i32(-2);
    ASSERT_TRUE(w.put_string("ab").ok());
    ASSERT_TRUE(w.put_cstring(nullptr).ok());
    Bytes want = {0x01, 0x03, 0x02, 0x07, 0x06, 0x05, 0x04, 0x0f, 0x0e, 0x0d, 0x0c, 0x0b, 0x0a, 0x09, 0x08,
                  0xfe, 0xff, 0xff, 0xff, 0x02, 0,    0,    0,    'a',  'b',  0xff, 0xff, 0xff, 0xff};
    EXPECT_EQ(w.data(), want);

    Reader r(w.data().data(), w.size());
    uint8_t a;
    uint16_t b;
    uint32_t c;
    uint64_t d;
    int32_t e;
    std::string s;
    char *cs = reinterpret_cast<char *>(1);
    ASSERT_TRUE(r.get_u8(&a).ok());
    ASSERT_TRUE(r.get_u16(&b).ok());
    ASSERT_TRUE(r.get_u32(&c).ok());
    ASSERT_TRUE(r.get_u64(&d).ok());
    ASSERT_TRUE(r.get_i32(&e).ok());
    ASSERT_TRUE(r.get_string(&s).ok());
    ASSERT_TRUE(r.get_cstring(&cs).ok());
    EXPECT_EQ(a, 0x01);
    EXPECT_EQ(b, 0x0203);
    EXPECT_EQ(c, 0x04050607u);
    EXPECT_EQ(d, 0x08090a0b0c0d0e0full);
    EXPECT_EQ(e, -2);
    EXPECT_EQ(s, "ab");
    EXPECT_EQ(cs, nullptr);
    EXPECT_TRUE(r.at_end());
    EXPECT_EQ(r.get_u8(&a).code(), PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER);
}

TEST(Reader, UnderflowLeavesPositionUnchanged) {
    Bytes b = {1, 2, 3};
    Reader r(b.data(), b.size());
    uint32_t v;
    EXPECT_EQ(r.get_u32(&v).code(), PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER);
    EXPECT_EQ(r.position(), 0u);
    uint16_t h;
    ASSERT_TRUE(r.get_u16(&h).ok());
    EXPECT_EQ(r.position(), 2u);
}

TEST(Reader, StringPolicy) {
    {
        Bytes b = {3, 0, 0, 0, 'a', 0, 'b'};  // embedded NUL
        Reader r(b.data(), b.size());
        char *s = nullptr;
        Status st = r.get_cstring(&s);
        EXPECT_EQ(st.code(), PMIX_ERR_UNPACK_FAILURE);
        EXPECT_NE(st.message().find("NUL"), std::string::npos);
        EXPECT_EQ(s, nullptr);
        EXPECT_EQ(r.position(), 0u);
    }
    {
        Bytes b = {9, 0, 0, 0, 'a'};  // length past the end
        Reader r(b.data(), b.size());
        std::string s;
        EXPECT_EQ(r.get_string(&s).code(), PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER);
    }
    {
        Bytes b = {0xff, 0xff, 0xff, 0xff};  // NULL where a string is required
        Reader r(b.data(), b.size());
        std::string s;
        EXPECT_FALSE(r.get_string(&s).ok());
    }
    {
        Bytes b = {2, 0, 0, 0, 'a', 'b'};
        Reader r(b.data(), b.size());
        std::string s;
        EXPECT_FALSE(r.get_string(&s, 1).ok());  // over the caller's limit
    }
    {
        Bytes b = {2};
        Reader r(b.data(), b.size());
        bool flag;
        EXPECT_EQ(r.get_bool(&flag).code(), PMIX_ERR_UNPACK_FAILURE);  // bool must be 0/1
    }
}

TEST(Codec, RoundTripOfEveryType) {
    for (pmix_data_type_t type : encodable_value_types()) {
        SCOPED_TRACE("type " + std::to_string(type));
        Value in;
        ASSERT_TRUE(make_sample(type, in.get()).ok());
        Bytes bytes = encode(*in.get());
        Value out;
        Status st = decode_value_exact(bytes, out.get());
        ASSERT_TRUE(st.ok()) << st.message();
        EXPECT_EQ(out->type, type);
        EXPECT_EQ(value_compare(in.get(), out.get()), PMIX_EQUAL);
        // Decoded pointers are fresh allocations, not aliases of the source.
        if (data_type_is_pointer_in_value(type)) {
            EXPECT_NE(out->data.ptr, in->data.ptr);
        }
        // A different sample must not compare equal (the comparison looks at the payload).
        Value other;
        ASSERT_TRUE(make_sample(type, other.get(), 1).ok());
        EXPECT_NE(value_compare(other.get(), out.get()), PMIX_EQUAL);
        // Re-encoding the decoded value gives the same bytes.
        EXPECT_EQ(encode(*out.get()), bytes);
    }
}

TEST(Codec, SpecificFieldsSurvive) {
    Value in;
    ASSERT_TRUE(make_sample(PMIX_PROC_INFO, in.get()).ok());
    Value out;
    ASSERT_TRUE(decode_value_exact(encode(*in.get()), out.get()).ok());
    EXPECT_STREQ(out->data.pinfo->proc.nspace, "job");
    EXPECT_EQ(out->data.pinfo->proc.rank, 9u);
    EXPECT_STREQ(out->data.pinfo->hostname, "n1");
    EXPECT_EQ(out->data.pinfo->executable_name, nullptr);
    EXPECT_EQ(out->data.pinfo->exit_code, -1);

    Value da;
    ASSERT_TRUE(make_sample(PMIX_DATA_ARRAY, da.get()).ok());
    Value dout;
    ASSERT_TRUE(decode_value_exact(encode(*da.get()), dout.get()).ok());
    ASSERT_EQ(dout->data.darray->type, PMIX_INFO);
    ASSERT_EQ(dout->data.darray->size, 2u);
    auto infos = static_cast<pmix_info_t *>(dout->data.darray->array);
    EXPECT_STREQ(infos[0].key, "pmix.a");
    EXPECT_EQ(infos[0].flags, static_cast<pmix_info_directives_t>(PMIX_INFO_REQD));
    EXPECT_EQ(infos[0].value.data.uint32, 5u);
    auto inner = infos[1].value.data.darray;
    ASSERT_EQ(inner->type, PMIX_STRING);
    ASSERT_EQ(inner->size, 3u);
    auto strs = static_cast<char **>(inner->array);
    EXPECT_STREQ(strs[0], "x");
    EXPECT_EQ(strs[1], nullptr);
    EXPECT_STREQ(strs[2], "zz");
}

TEST(Codec, UndefAndNullString) {
    pmix_value_t v;
    memset(&v, 0, sizeof(v));
    v.type = PMIX_UNDEF;
    EXPECT_EQ(encode(v), (Bytes{0, 0}));
    v.type = PMIX_STRING;
    v.data.string = nullptr;
    Bytes b = encode(v);
    EXPECT_EQ(b, (Bytes{3, 0, 0xff, 0xff, 0xff, 0xff}));
    Value out;
    ASSERT_TRUE(decode_value_exact(b, out.get()).ok());
    EXPECT_EQ(out->type, PMIX_STRING);
    EXPECT_EQ(out->data.string, nullptr);
}

TEST(Codec, GoldenInfoBytes) {
    pmix_info_t info;
    memset(&info, 0, sizeof(info));
    strcpy(info.key, "a");
    info.flags = PMIX_INFO_REQD | PMIX_INFO_PERSISTENT;  // persistent never goes on the wire
    info.value.type = PMIX_UINT32;
    info.value.data.uint32 = 5;
    Writer w;
    ASSERT_TRUE(encode_info_array(w, &info, 1).ok());
    Bytes want = {0x01,        0, 0, 0,       // count
                  0x01,        0, 0, 0, 'a',  // key
                  0x01,        0, 0, 0,       // flags
                  PMIX_UINT32, 0,             // type 14
                  0x05,        0, 0, 0};      // value
    EXPECT_EQ(w.data(), want);
    InfoArray out;
    ASSERT_TRUE(decode_info_array_exact(w.data(), &out).ok());
    ASSERT_EQ(out.size(), 1u);
    EXPECT_STREQ(out[0].key, "a");
    EXPECT_EQ(out[0].flags, static_cast<pmix_info_directives_t>(PMIX_INFO_REQD));
    EXPECT_EQ(out[0].value.data.uint32, 5u);
}

TEST(Codec, GoldenProcBytes) {
    pmix_proc_t p;
    memset(&p, 0, sizeof(p));
    strcpy(p.nspace, "ns");
    p.rank = PMIX_RANK_WILDCARD;
    Writer w;
    ASSERT_TRUE(encode_proc(w, p).ok());
    EXPECT_EQ(w.data(), (Bytes{2, 0, 0, 0, 'n', 's', 0xfe, 0xff, 0xff, 0xff}));
}

TEST(Codec, RefusesToEncodeWhatCannotTravel) {
    pmix_value_t v;
    memset(&v, 0, sizeof(v));
    int x;
    v.type = PMIX_POINTER;
    v.data.ptr = &x;
    Writer w;
    w.put_u8(0x77);
    EXPECT_EQ(encode_value(w, v).code(), PMIX_ERR_NOT_SUPPORTED);
    EXPECT_EQ(w.size(), 1u);  // nothing partial left behind
    v.type = PMIX_TOPO;
    EXPECT_EQ(encode_value(w, v).code(), PMIX_ERR_NOT_SUPPORTED);
    v.type = PMIX_PROC_CPUSET;
    EXPECT_EQ(encode_value(w, v).code(), PMIX_ERR_NOT_SUPPORTED);
    v.type = PMIX_PROC;
    v.data.proc = nullptr;
    EXPECT_EQ(encode_value(w, v).code(), PMIX_ERR_PACK_FAILURE);
    // A pointer deep inside an info array rolls the whole array back.
    pmix_info_t infos[2];
    memset(infos, 0, sizeof(infos));
    strcpy(infos[0].key, "ok");
    infos[0].value.type = PMIX_BOOL;
    strcpy(infos[1].key, "bad");
    infos[1].value.type = PMIX_POINTER;
    Status st = encode_info_array(w, infos, 2);
    EXPECT_FALSE(st.ok());
    EXPECT_NE(st.message().find("bad"), std::string::npos) << st.message();
    EXPECT_EQ(w.size(), 1u);
    // An unterminated key.
    memset(infos[0].key, 'k', sizeof(infos[0].key));
    EXPECT_EQ(encode_info(w, infos[0]).code(), PMIX_ERR_PACK_FAILURE);
}

TEST(Codec, DecodeRejectsLimitsAndBadTypes) {
    {  // key longer than PMIX_MAX_KEYLEN
        Writer w;
        w.put_u32(1);
        ASSERT_TRUE(w.put_string(std::string(PMIX_MAX_KEYLEN + 1, 'k')).ok());
        w.put_u32(0);
        w.put_u16(PMIX_UNDEF);
        InfoArray out;
        EXPECT_FALSE(decode_info_array_exact(w.data(), &out).ok());
    }
    {  // key of exactly PMIX_MAX_KEYLEN is fine
        Writer w;
        w.put_u32(1);
        ASSERT_TRUE(w.put_string(std::string(PMIX_MAX_KEYLEN, 'k')).ok());
        w.put_u32(0);
        w.put_u16(PMIX_UNDEF);
        InfoArray out;
        EXPECT_TRUE(decode_info_array_exact(w.data(), &out).ok());
        EXPECT_EQ(strlen(out[0].key), static_cast<size_t>(PMIX_MAX_KEYLEN));
    }
    {  // nspace too long
        Writer w;
        ASSERT_TRUE(w.put_string(std::string(PMIX_MAX_NSLEN + 1, 'n')).ok());
        w.put_u32(0);
        Reader r(w.data().data(), w.size());
        pmix_proc_t p;
        EXPECT_FALSE(decode_proc(r, &p).ok());
    }
    for (uint16_t type : {uint16_t{PMIX_POINTER}, uint16_t{PMIX_TOPO}, uint16_t{PMIX_PROC_CPUSET},
                          uint16_t{PMIX_INFO}, uint16_t{PMIX_VALUE}, uint16_t{26}, uint16_t{9999}}) {
        Bytes b = {static_cast<uint8_t>(type), static_cast<uint8_t>(type >> 8), 0, 0, 0, 0, 0, 0, 0, 0};
        Value out;
        Status st = decode_value_exact(b, out.get());
        EXPECT_FALSE(st.ok()) << type;
        EXPECT_EQ(out->type, PMIX_UNDEF);
    }
    {  // a count that cannot fit in the remaining bytes is rejected before allocating
        Writer w;
        w.put_u16(PMIX_DATA_ARRAY);
        w.put_u16(PMIX_INFO);
        w.put_u32(1000000);
        Value out;
        Status st = decode_value_exact(w.data(), out.get());
        EXPECT_EQ(st.code(), PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER);
    }
    {  // trailing bytes
        Bytes b = {PMIX_UINT8, 0, 7, 0};
        Value out;
        EXPECT_FALSE(decode_value_exact(b, out.get()).ok());
        EXPECT_EQ(out->type, PMIX_UNDEF);
    }
}

TEST(Codec, NestingDepthIsBounded) {
    auto nested = [](int levels) {
        Writer w;
        w.put_u16(PMIX_DATA_ARRAY);
        for (int i = 0; i < levels; ++i) {
            w.put_u16(PMIX_DATA_ARRAY);  // element type
            w.put_u32(1);
        }
        w.put_u16(PMIX_UINT8);
        w.put_u32(1);
        w.put_u8(42);
        return w.take();
    };
    Value ok_v;
    EXPECT_TRUE(decode_value_exact(nested(kMaxNestingDepth - 1), ok_v.get()).ok());
    Value bad_v;
    Status st = decode_value_exact(nested(kMaxNestingDepth + 5), bad_v.get());
    EXPECT_FALSE(st.ok());
    EXPECT_NE(st.message().find("nested"), std::string::npos) << st.message();
    // Deep nesting through values-in-arrays is bounded as well.
    Writer w;
    w.put_u16(PMIX_DATA_ARRAY);
    for (int i = 0; i < 1000; ++i) {
        w.put_u16(PMIX_VALUE);
        w.put_u32(1);
        w.put_u16(PMIX_DATA_ARRAY);
    }
    Value deep;
    EXPECT_FALSE(decode_value_exact(w.data(), deep.get()).ok());
}

// Every strict prefix of a valid encoding must be rejected, and never crash or leak.
TEST(Codec, EveryTruncationIsRejected) {
    for (pmix_data_type_t type : encodable_value_types()) {
        Value in;
        ASSERT_TRUE(make_sample(type, in.get()).ok());
        Bytes bytes = encode(*in.get());
        for (size_t n = 0; n < bytes.size(); ++n) {
            Value out;
            Status st = decode_value_exact(std::span<const uint8_t>(bytes.data(), n), out.get());
            EXPECT_FALSE(st.ok()) << "type " << type << " truncated to " << n;
            EXPECT_EQ(out->type, PMIX_UNDEF);
        }
    }
    // And an info array holding all of them.
    std::vector<pmix_info_t> infos(encodable_value_types().size());
    memset(infos.data(), 0, infos.size() * sizeof(pmix_info_t));
    size_t i = 0;
    for (pmix_data_type_t type : encodable_value_types()) {
        snprintf(infos[i].key, sizeof(infos[i].key), "key.%u", type);
        ASSERT_TRUE(make_sample(type, &infos[i].value).ok());
        ++i;
    }
    Writer w;
    ASSERT_TRUE(encode_info_array(w, infos.data(), infos.size()).ok());
    InfoArray all;
    ASSERT_TRUE(decode_info_array_exact(w.data(), &all).ok());
    ASSERT_EQ(all.size(), infos.size());
    for (size_t k = 0; k < infos.size(); ++k) {
        EXPECT_STREQ(all[k].key, infos[k].key);
        EXPECT_EQ(value_compare(&all[k].value, &infos[k].value), PMIX_EQUAL) << infos[k].key;
    }
    for (size_t n = 0; n < w.size(); ++n) {
        InfoArray out;
        EXPECT_FALSE(decode_info_array_exact(std::span<const uint8_t>(w.data().data(), n), &out).ok()) << n;
        EXPECT_TRUE(out.empty());
    }
    for (auto &info : infos) info_destruct(&info);
}

TEST(Codec, RandomGarbageAndMutationsNeverCrash) {
    std::mt19937 rng(2024);
    // Pure garbage.
    for (int iter = 0; iter < 3000; ++iter) {
        Bytes junk(rng() % 96);
        for (auto &c : junk) c = static_cast<uint8_t>(rng());
        Value v;
        (void)decode_value_exact(junk, v.get());
        InfoArray infos;
        (void)decode_info_array_exact(junk, &infos);
    }
    // Mutations of valid encodings: most are rejected; whatever decodes must re-encode cleanly.
    Value sample;
    ASSERT_TRUE(make_sample(PMIX_DATA_ARRAY, sample.get()).ok());
    Bytes base = encode(*sample.get());
    int rejected = 0;
    for (int iter = 0; iter < 3000; ++iter) {
        Bytes m = base;
        int flips = 1 + rng() % 3;
        for (int f = 0; f < flips; ++f) m[rng() % m.size()] = static_cast<uint8_t>(rng());
        Value v;
        Status st = decode_value_exact(m, v.get());
        if (!st.ok()) {
            ++rejected;
            EXPECT_EQ(v->type, PMIX_UNDEF);
            continue;
        }
        Writer w;
        EXPECT_TRUE(encode_value(w, *v.get()).ok());
    }
    EXPECT_GT(rejected, 0);
}

TEST(Codec, DataArrayApi) {
    uint32_t nums[] = {1, 2, 3};
    pmix_data_array_t a = {PMIX_UINT32, 3, nums};
    Writer w;
    ASSERT_TRUE(encode_data_array(w, a).ok());
    EXPECT_EQ(w.data(), (Bytes{PMIX_UINT32, 0, 3, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0}));
    Reader r(w.data().data(), w.size());
    pmix_data_array_t *out = nullptr;
    ASSERT_TRUE(decode_data_array(r, &out).ok());
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(out->size, 3u);
    EXPECT_EQ(static_cast<uint32_t *>(out->array)[2], 3u);
    data_array_free(out);
}

}  // namespace
}  // namespace pmixcpp::wire
