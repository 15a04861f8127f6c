// The decode budget (codec.h) and the node message bodies (node_messages.h): counts checked
// against the bytes before any allocation, the decoded form bounded by a multiple of the input,
// ranks bounded by the step, nesting bounded; legitimate dense input still decodes.
#include <gtest/gtest.h>

#include <cstring>

#include "wire/codec.h"
#include "wire/messages.h"
#include "wire/node_messages.h"

using namespace pmixcpp;
using namespace pmixcpp::wire;

namespace {

std::vector<uint8_t> bytes_of(std::initializer_list<uint32_t> words, size_t pad = 0) {
    Writer w;
    for (uint32_t v : words) w.put_u32(v);
    for (size_t i = 0; i < pad; ++i) w.put_u8(0);
    return w.take();
}

// n infos with an empty key and no value: the densest legitimate encoding (10 bytes each).
std::vector<uint8_t> dense_infos(uint32_t n) {
    Writer w;
    w.put_u32(n);
    for (uint32_t i = 0; i < n; ++i) {
        w.put_u32(0);
        w.put_u32(0);
        w.put_u16(PMIX_UNDEF);
    }
    return w.take();
}

}  // namespace

TEST(DecodeBudget, BudgetIsAMultipleOfTheInputCapped) {
    EXPECT_EQ(decode_budget_for(0), kDecodeBudgetSlack);
    EXPECT_EQ(decode_budget_for(1000), 1000 * kDecodeBudgetFactor + kDecodeBudgetSlack);
    EXPECT_EQ(decode_budget_for(size_t{1} << 40), kMaxDecodeBudget);
}

TEST(DecodeBudget, HugeCountInFortyBytesFailsBeforeAllocating) {
    auto msg = bytes_of({0xffffffffu}, 36);  // 2^32-1 infos announced in 40 bytes
    Reader r(msg);
    InfoArray out;
    Status st = decode_info_array(r, &out);
    EXPECT_FALSE(st.ok());
    EXPECT_EQ(r.charged(), 0u);  // nothing charged, nothing allocated
    EXPECT_EQ(out.size(), 0u);
    // the same count below the element limit but past the bytes
    auto msg2 = bytes_of({1u << 20}, 36);
    Reader r2(msg2);
    st = decode_info_array(r2, &out);
    EXPECT_EQ(st.code(), PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER);
    EXPECT_EQ(r2.charged(), 0u);
}

TEST(DecodeBudget, TakeCountChecksBytesLimitAndBudget) {
    std::vector<uint8_t> data(100, 0);
    Reader r(std::span<const uint8_t>(data), 1000);
    EXPECT_EQ(r.take_count(26, 4, 1, "x").code(), PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER);
    EXPECT_EQ(r.take_count(5, 1, 1, "x", 4).code(), PMIX_ERR_UNPACK_FAILURE);
    EXPECT_EQ(r.take_count(10, 1, 101, "x").code(), PMIX_ERR_OUT_OF_RESOURCE);
    EXPECT_EQ(r.charged(), 0u);
    EXPECT_TRUE(r.take_count(10, 1, 100, "x").ok());
    EXPECT_EQ(r.budget_left(), 0u);
    EXPECT_EQ(r.charge(1, "y").code(), PMIX_ERR_OUT_OF_RESOURCE);
}

TEST(DecodeBudget, DensestLegitimateInputFits) {
    // 10 bytes per info on the wire, sizeof(pmix_info_t) in memory: within the factor.
    auto msg = dense_infos(20000);
    Reader r(msg);
    InfoArray out;
    ASSERT_TRUE(decode_info_array(r, &out).ok());
    EXPECT_EQ(out.size(), 20000u);
    EXPECT_LE(r.charged(), decode_budget_for(msg.size()));
    EXPECT_GE(r.charged(), 20000 * sizeof(pmix_info_t));
}

TEST(DecodeBudget, OverTheCeilingFailsWithOutOfResource) {
    // 1M dense infos: 10 MB of input, 577 MB decoded > kMaxDecodeBudget.
    auto msg = dense_infos(1u << 20);
    Reader r(msg);
    InfoArray out;
    Status st = decode_info_array(r, &out);
    EXPECT_EQ(st.code(), PMIX_ERR_OUT_OF_RESOURCE) << st.message();
    EXPECT_EQ(r.charged(), 0u);
}

TEST(DecodeBudget, StringsAndBytesAreCharged) {
    Writer w;
    ASSERT_TRUE(w.put_string(std::string(1000, 'a')).ok());
    ASSERT_TRUE(w.put_bytes("abc", 3).ok());
    Reader r(std::span<const uint8_t>(w.data()), 1003);
    std::string s;
    ASSERT_TRUE(r.get_string(&s).ok());
    EXPECT_EQ(r.charged(), 1001u);
    std::span<const uint8_t> b;
    EXPECT_EQ(r.get_bytes(&b).code(), PMIX_ERR_OUT_OF_RESOURCE);
    EXPECT_EQ(r.position(), 1004u);  // unchanged by the failed getter
}

TEST(DecodeBudget, NestingIsCapped) {
    Writer w;
    for (int i = 0; i < kMaxNestingDepth + 4; ++i) {
        w.put_u16(PMIX_DATA_ARRAY);
        w.put_u16(PMIX_VALUE);
        w.put_u32(1);
    }
    w.put_u16(PMIX_UNDEF);
    Value v;
    Status st = decode_value_exact(w.data(), v.get());
    EXPECT_FALSE(st.ok());
    EXPECT_NE(st.message().find("nested deeper"), std::string::npos) << st.message();
}

TEST(DecodeBudget, ProcListsBoundedByTheStep) {
    fence_request f;
    for (uint32_t r = 0; r < 10; ++r) {
        pmix_proc_t p{};
        strcpy(p.nspace, "ns");
        p.rank = r;
        f.procs.push_back(p);
    }
    Writer w;
    ASSERT_TRUE(encode(w, f).ok());
    fence_request out;
    EXPECT_TRUE(decode_payload(w.data(), &out, 10).ok());
    EXPECT_FALSE(decode_payload(w.data(), &out, 9).ok());
}

TEST(NodeMessages, RoundTrips) {
    Writer w;
    ASSERT_TRUE(encode(w, dmodex_request{7, 3, "key"}).ok());
    dmodex_request dr;
    ASSERT_TRUE(decode(w.data(), &dr).ok());
    EXPECT_EQ(dr.id, 7u);
    EXPECT_EQ(dr.target, 3u);
    EXPECT_EQ(dr.key, "key");

    w.clear();
    ASSERT_TRUE(encode(w, node_query_message{2, 5, true}).ok());
    node_query_message q;
    ASSERT_TRUE(decode(w.data(), &q).ok());
    EXPECT_EQ(q.kind, 2);
    EXPECT_EQ(q.node, 5u);
    EXPECT_TRUE(q.said_goodbye);

    w.clear();
    ASSERT_TRUE(encode(w, job_control_forward{15, true, {1, 2}}).ok());
    job_control_forward jc;
    ASSERT_TRUE(decode(w.data(), 4, &jc).ok());
    EXPECT_EQ(jc.ranks, (std::vector<uint32_t>{1, 2}));
    EXPECT_FALSE(decode(w.data(), 2, &jc).ok());  // rank 2 is beyond a 2-task step
    EXPECT_FALSE(jc.checkpoint);
    w.clear();
    ASSERT_TRUE(encode(w, job_control_forward{0, false, {3}, true}).ok());
    ASSERT_TRUE(decode(w.data(), 4, &jc).ok());
    EXPECT_TRUE(jc.checkpoint);
    EXPECT_EQ(jc.signal, 0);
    w.clear();
    ASSERT_TRUE(encode(w, job_control_forward{15, false, {3}, true}).ok());
    EXPECT_FALSE(decode(w.data(), 4, &jc).ok());  // a checkpoint carries no signal
    w.clear();
    ASSERT_TRUE(encode(w, job_control_forward{0, false, {3}, false}).ok());
    EXPECT_FALSE(decode(w.data(), 4, &jc).ok());  // a signal is 1..64

    std::vector<rank_data_entry> rd(2);
    rd[0].rank = 0;
    rd[1].rank = 3;
    w.clear();
    ASSERT_TRUE(encode_rank_data(w, rd).ok());
    std::vector<rank_data_entry> back;
    ASSERT_TRUE(decode_rank_data(w.data(), 4, &back).ok());
    ASSERT_EQ(back.size(), 2u);
    EXPECT_EQ(back[1].rank, 3u);
    EXPECT_FALSE(decode_rank_data(w.data(), 3, &back).ok());  // rank 3 not in a 3-task step
}

TEST(NodeMessages, SpawnPsetsRoundTripAndBounds) {
    Writer w;
    ASSERT_TRUE(encode(w, spawn_psets_message{"slurm.4.2", 3}).ok());
    spawn_psets_message m;
    ASSERT_TRUE(decode(w.data(), 8, &m).ok());
    EXPECT_EQ(m.child, "slurm.4.2");
    EXPECT_EQ(m.child_size, 3u);
    EXPECT_FALSE(decode(w.data(), 2, &m).ok());  // more children than allowed
    std::vector<uint8_t> longer = w.data();
    longer.push_back(0);
    EXPECT_FALSE(decode(longer, 8, &m).ok());  // trailing bytes
    w.clear();
    EXPECT_FALSE(encode(w, spawn_psets_message{"", 1}).ok());
    EXPECT_FALSE(encode(w, spawn_psets_message{std::string(PMIX_MAX_NSLEN + 1, 'n'), 1}).ok());
}

TEST(NodeMessages, HostileCountsFailFast) {
    // rank data announcing 2^32-1 ranks, job control announcing 2^32-1 ranks, a connect
    // contribution announcing 2^32-1 ranks: all in a few bytes.
    std::vector<rank_data_entry> rd;
    EXPECT_FALSE(decode_rank_data(bytes_of({0xffffffffu}, 36), 1u << 24, &rd).ok());
    job_control_forward jc;
    EXPECT_FALSE(decode(bytes_of({15, 0xffffffffu}), 1u << 24, &jc).ok());
    Writer w;
    ASSERT_TRUE(w.put_string("node").ok());
    w.put_u32(0);
    w.put_u32(0xffffffffu);
    connect_contribution cc;
    EXPECT_FALSE(decode(w.data(), &cc).ok());
    probe_kind k;
    EXPECT_FALSE(decode(std::vector<uint8_t>{3}, &k).ok());
    // a node-down whose reason announces 4 GiB
    node_down_message nd;
    Writer d;
    d.put_u32(1);
    d.put_u32(0);
    d.put_u8(4);
    d.put_u32(0xfffffff0u);
    EXPECT_FALSE(decode(d.data(), 8, &nd).ok());
}

TEST(NodeMessages, NodeDownRoundTripAndBounds) {
    Writer w;
    ASSERT_TRUE(encode(w, node_down_message{3, "reset", 5, 8}).ok());
    node_down_message m;
    ASSERT_TRUE(decode(w.data(), 6, &m).ok());
    EXPECT_EQ(m.node, 3u);
    EXPECT_EQ(m.origin, 5u);
    EXPECT_EQ(m.width, 8u);
    EXPECT_EQ(m.why, "reset");
    EXPECT_FALSE(decode(w.data(), 5, &m).ok());  // origin 5 beyond a 5-node step
    EXPECT_FALSE(decode(w.data(), 3, &m).ok());  // the node too
    std::vector<uint8_t> longer = w.data();
    longer.push_back(0);
    EXPECT_FALSE(decode(longer, 6, &m).ok());  // trailing bytes
    // The tree's width and the origin, as a hostile sender would write them.
    auto raw = [](uint32_t node, uint32_t origin, uint8_t width) {
        Writer r;
        r.put_u32(node);
        r.put_u32(origin);
        r.put_u8(width);
        EXPECT_TRUE(r.put_string("x").ok());
        return r.take();
    };
    EXPECT_TRUE(decode(raw(1, 0, 2), 4, &m).ok());
    EXPECT_TRUE(decode(raw(1, 0, 64), 4, &m).ok());
    for (uint8_t bad_width : {0, 1, 65, 255}) EXPECT_FALSE(decode(raw(1, 0, bad_width), 4, &m).ok()) << int(bad_width);
    EXPECT_FALSE(decode(raw(1, 1, 4), 4, &m).ok());           // noticed by the lost node itself
    EXPECT_FALSE(decode(raw(1, 0xffffffffu, 4), 4, &m).ok());  // no such origin
    // The encoder writes nothing the decoder would refuse.
    w.clear();
    EXPECT_FALSE(encode(w, node_down_message{1, "x", 1, 4}).ok());
    EXPECT_FALSE(encode(w, node_down_message{1, "x", 0, 1}).ok());
    EXPECT_FALSE(encode(w, node_down_message{1, "x", 0, 65}).ok());
}

TEST(DecodeBudget, PersistentFlagOnTheWireIsRefused) {
    // Found by fuzz_snapshot: an info whose flags carry PMIX_INFO_PERSISTENT decoded (the bit
    // cleared) and re-encoded to other bytes. The encoder never sends it; the decoder refuses it.
    Writer w;
    w.put_u32(1);
    ASSERT_TRUE(w.put_string("a").ok());
    w.put_u32(PMIX_INFO_PERSISTENT);
    w.put_u16(PMIX_UNDEF);
    InfoArray out;
    EXPECT_FALSE(decode_info_array_exact(w.data(), &out).ok());
}
