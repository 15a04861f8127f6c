#include "wire/messages.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace pmixcpp;
using namespace pmixcpp::wire;

namespace {

InfoArray make_infos(std::initializer_list<std::pair<const char *, uint32_t>> kv) {
    auto *infos = static_cast<pmix_info_t *>(calloc(kv.size() ? kv.size() : 1, sizeof(pmix_info_t)));
    size_t i = 0;
    for (const auto &[k, v] : kv) {
        std::strncpy(infos[i].key, k, PMIX_MAX_KEYLEN);
        infos[i].value.type = PMIX_UINT32;
        infos[i].value.data.uint32 = v;
        ++i;
    }
    return InfoArray(infos, kv.size());
}

pmix_proc_t proc(const char *ns, uint32_t rank) {
    pmix_proc_t p{};
    std::strncpy(p.nspace, ns, PMIX_MAX_NSLEN);
    p.rank = rank;
    return p;
}

template <typename M>
std::vector<uint8_t> bytes_of(const M &m) {
    Writer w;
    EXPECT_TRUE(encode(w, m).ok());
    return w.take();
}

// Every strict prefix of a valid payload must be rejected without crashing.
template <typename M>
void expect_truncations_rejected(const std::vector<uint8_t> &bytes) {
    for (size_t n = 0; n < bytes.size(); ++n) {
        M m;
        EXPECT_FALSE(decode_payload(std::span<const uint8_t>(bytes.data(), n), &m).ok()) << "prefix " << n;
    }
}

}  // namespace

TEST(Messages, ConnectRoundTrip) {
    connect_request m;
    m.nspace = "slurm.5.0";
    m.rank = 3;
    m.token = "00ff";
    m.pid = 1234;
    auto b = bytes_of(m);
    connect_request d;
    ASSERT_TRUE(decode_payload(b, &d).ok());
    EXPECT_EQ(d.protocol, kClientProtocol);
    EXPECT_EQ(d.nspace, "slurm.5.0");
    EXPECT_EQ(d.rank, 3u);
    EXPECT_EQ(d.token, "00ff");
    EXPECT_EQ(d.pid, 1234u);
    expect_truncations_rejected<connect_request>(b);
    b.push_back(0);
    EXPECT_FALSE(decode_payload(b, &d).ok()) << "trailing bytes are an error";
}

TEST(Messages, CommitRoundTripAndBadScope) {
    commit_request m;
    m.infos = make_infos({{"a", 1}, {"b", 2}});
    m.scopes = {PMIX_LOCAL, PMIX_GLOBAL};
    auto b = bytes_of(m);
    commit_request d;
    ASSERT_TRUE(decode_payload(b, &d).ok());
    ASSERT_EQ(d.infos.size(), 2u);
    EXPECT_STREQ(d.infos[1].key, "b");
    EXPECT_EQ(d.infos[1].value.data.uint32, 2u);
    EXPECT_EQ(d.scopes[0], PMIX_LOCAL);
    expect_truncations_rejected<commit_request>(b);
    b[4] = 9;  // first scope byte
    EXPECT_FALSE(decode_payload(b, &d).ok());

    commit_request mismatch;
    mismatch.infos = make_infos({{"a", 1}});
    Writer w;
    EXPECT_FALSE(encode(w, mismatch).ok());
}

TEST(Messages, FenceGetAbortRoundTrip) {
    fence_request f;
    f.procs = {proc("ns", 0), proc("ns", 2)};
    f.infos = make_infos({{PMIX_TIMEOUT, 5}});
    auto fb = bytes_of(f);
    fence_request fd;
    ASSERT_TRUE(decode_payload(fb, &fd).ok());
    ASSERT_EQ(fd.procs.size(), 2u);
    EXPECT_EQ(fd.procs[1].rank, 2u);
    EXPECT_STREQ(fd.infos[0].key, PMIX_TIMEOUT);
    expect_truncations_rejected<fence_request>(fb);

    get_request g;
    g.proc = proc("ns", PMIX_RANK_WILDCARD);
    g.key = "pmix.job.size";
    auto gb = bytes_of(g);
    get_request gd;
    ASSERT_TRUE(decode_payload(gb, &gd).ok());
    EXPECT_EQ(gd.proc.rank, PMIX_RANK_WILDCARD);
    EXPECT_EQ(gd.key, "pmix.job.size");
    expect_truncations_rejected<get_request>(gb);

    abort_request a;
    a.status = 7;
    a.message = "bye";
    auto ab = bytes_of(a);
    abort_request ad;
    ASSERT_TRUE(decode_payload(ab, &ad).ok());
    EXPECT_EQ(ad.status, 7);
    EXPECT_EQ(ad.message, "bye");
    EXPECT_TRUE(ad.procs.empty());
}

TEST(Messages, ReplyHeaderCarriesMessageOnlyOnFailure) {
    reply_header ok;
    auto b = bytes_of(ok);
    EXPECT_EQ(b.size(), 4u);
    reply_header bad{PMIX_ERR_TIMEOUT, "fence timed out"};
    auto bb = bytes_of(bad);
    reply_header d;
    ASSERT_TRUE(decode_payload(bb, &d).ok());
    EXPECT_EQ(d.status, PMIX_ERR_TIMEOUT);
    EXPECT_EQ(d.message, "fence timed out");
}

TEST(Messages, HugeCountsRejectedBeforeAllocation) {
    Writer w;
    w.put_u32(0xFFFFFFF0u);  // proc count
    fence_request d;
    EXPECT_FALSE(decode_payload(w.data(), &d).ok());
    Writer c;
    c.put_u32(1u << 30);
    commit_request cd;
    EXPECT_FALSE(decode_payload(c.data(), &cd).ok());
}

TEST(Messages, JobdataRoundTrip) {
    std::vector<jobdata_entry> entries(2);
    entries[0].rank = PMIX_RANK_WILDCARD;
    entries[0].infos = make_infos({{PMIX_JOB_SIZE, 8}});
    entries[1].rank = 0;
    entries[1].infos = make_infos({{PMIX_NODEID, 0}, {PMIX_APPNUM, 0}});
    auto bytes = encode_jobdata(entries);
    ASSERT_TRUE(bytes.ok());
    EXPECT_EQ(std::memcmp(bytes->data(), "PXJD", 4), 0);
    std::vector<jobdata_entry> d;
    ASSERT_TRUE(decode_jobdata(bytes.value(), &d).ok());
    ASSERT_EQ(d.size(), 2u);
    EXPECT_EQ(d[0].rank, PMIX_RANK_WILDCARD);
    EXPECT_EQ(d[1].infos.size(), 2u);
    for (size_t n = 0; n < bytes->size(); ++n) {
        std::vector<jobdata_entry> t;
        EXPECT_FALSE(decode_jobdata(std::span<const uint8_t>(bytes->data(), n), &t).ok()) << n;
    }
}

TEST(Messages, EventNotificationRoundTrip) {
    event_notification e;
    e.id = 77;
    e.status = PMIX_ERR_PROC_ABORTED;
    e.source = proc("ns", 3);
    e.range = PMIX_RANGE_CUSTOM;
    e.infos = make_infos({{"k", 9}});
    auto b = bytes_of(e);
    event_notification d;
    ASSERT_TRUE(decode_payload(b, &d).ok());
    EXPECT_EQ(d.id, 77u);
    EXPECT_EQ(d.status, PMIX_ERR_PROC_ABORTED);
    EXPECT_EQ(d.source.rank, 3u);
    EXPECT_STREQ(d.source.nspace, "ns");
    EXPECT_EQ(d.range, PMIX_RANGE_CUSTOM);
    ASSERT_EQ(d.infos.size(), 1u);
    EXPECT_EQ(d.infos[0].value.data.uint32, 9u);
    expect_truncations_rejected<event_notification>(b);
    // Golden bytes of the fixed part: u64 id, i32 status, proc (str nspace, u32 rank), u8 range.
    ASSERT_GE(b.size(), 12u);
    EXPECT_EQ(b[0], 77);
    EXPECT_EQ(b[8], static_cast<uint8_t>(PMIX_ERR_PROC_ABORTED & 0xff));
    // A range beyond PMIX_RANGE_PROC_LOCAL is refused.
    e.range = PMIX_RANGE_PROC_LOCAL + 1;
    event_notification bad;
    EXPECT_FALSE(decode_payload(bytes_of(e), &bad).ok());
    // notify is a request type, event (server -> client only) is not.
    EXPECT_TRUE(is_request_type(static_cast<uint16_t>(msg_type::notify)));
    EXPECT_FALSE(is_request_type(static_cast<uint16_t>(msg_type::event)));
    EXPECT_FALSE(is_request_type(static_cast<uint16_t>(msg_type::reply)));
    EXPECT_STREQ(to_string(msg_type::event), "event");
}
