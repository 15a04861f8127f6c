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
    EXPECT_EQ(d[0].rank, 0u);  // sorted by rank: the job level (WILDCARD) last
    EXPECT_EQ(d[0].infos.size(), 2u);
    EXPECT_EQ(d[1].rank, PMIX_RANK_WILDCARD);
    for (size_t n = 0; n < bytes->size(); ++n) {
        std::vector<jobdata_entry> t;
        EXPECT_FALSE(decode_jobdata(std::span<const uint8_t>(bytes->data(), n), &t).ok()) << n;
    }
}

namespace {
// A job of `n` ranks as the server writes it: job level plus a few keys per rank.
std::vector<uint8_t> sample_jobdata(uint32_t n) {
    std::vector<jobdata_entry> entries(n + 1);
    entries[0].rank = PMIX_RANK_WILDCARD;
    entries[0].infos = make_infos({{PMIX_JOB_SIZE, n}, {PMIX_NUM_NODES, 2}, {PMIX_LOCAL_SIZE, n / 2}});
    for (uint32_t r = 0; r < n; ++r) {
        entries[r + 1].rank = r;
        entries[r + 1].infos = make_infos({{PMIX_NODEID, r % 2}, {PMIX_APPNUM, 0}, {PMIX_RANK, r}});
    }
    auto bytes = encode_jobdata(entries);
    EXPECT_TRUE(bytes.ok());
    return bytes.ok() ? bytes.value() : std::vector<uint8_t>{};
}

uint32_t view_u32(const jobdata_view &v, uint32_t rank, const char *key, pmix_status_t *st) {
    auto e = v.find(rank);
    if (!e.ok()) {
        *st = e.status().code();
        return 0;
    }
    pmix_value_t val{};
    Status s = v.value(e.value(), key, &val);
    *st = s.code();
    uint32_t out = s.ok() && val.type == PMIX_UINT32 ? val.data.uint32 : 0;
    value_destruct(&val);
    return out;
}
}  // namespace

TEST(Messages, JobdataViewLooksUpInPlace) {
    auto bytes = sample_jobdata(100);
    auto v = jobdata_view::parse(bytes);
    ASSERT_TRUE(v.ok()) << v.status().message();
    EXPECT_EQ(v->size(), 101u);
    pmix_status_t st;
    EXPECT_EQ(view_u32(v.value(), PMIX_RANK_WILDCARD, PMIX_JOB_SIZE, &st), 100u);
    EXPECT_EQ(st, PMIX_SUCCESS);
    EXPECT_EQ(view_u32(v.value(), 77, PMIX_NODEID, &st), 1u);
    EXPECT_EQ(view_u32(v.value(), 0, PMIX_NODEID, &st), 0u);
    view_u32(v.value(), 77, PMIX_HOSTNAME, &st);
    EXPECT_EQ(st, PMIX_ERR_NOT_FOUND);
    view_u32(v.value(), 100, PMIX_NODEID, &st);
    EXPECT_EQ(st, PMIX_ERR_NOT_FOUND);
    // keys come back sorted
    auto e = v->find(5);
    ASSERT_TRUE(e.ok());
    ASSERT_EQ(e->nkeys, 3u);
    std::string prev;
    for (uint32_t k = 0; k < e->nkeys; ++k) {
        auto key = v->key_at(e.value(), k);
        ASSERT_TRUE(key.ok());
        EXPECT_LT(prev, std::string(key.value()));
        prev = std::string(key.value());
    }
    // sparse ranks are found by binary search
    std::vector<jobdata_entry> sparse(3);
    sparse[0].rank = 7;
    sparse[0].infos = make_infos({{PMIX_NODEID, 3}});
    sparse[1].rank = 2;
    sparse[1].infos = make_infos({{PMIX_NODEID, 1}});
    sparse[2].rank = PMIX_RANK_WILDCARD;
    sparse[2].infos = make_infos({{PMIX_JOB_SIZE, 9}});
    auto sb = encode_jobdata(sparse);
    ASSERT_TRUE(sb.ok());
    auto sv = jobdata_view::parse(sb.value());
    ASSERT_TRUE(sv.ok());
    EXPECT_EQ(view_u32(sv.value(), 7, PMIX_NODEID, &st), 3u);
    EXPECT_EQ(view_u32(sv.value(), 2, PMIX_NODEID, &st), 1u);
    EXPECT_EQ(view_u32(sv.value(), PMIX_RANK_WILDCARD, PMIX_JOB_SIZE, &st), 9u);
}

TEST(Messages, JobdataEncoderRefusesDuplicates) {
    std::vector<jobdata_entry> twice(2);
    twice[0].rank = 1;
    twice[0].infos = make_infos({{PMIX_NODEID, 0}});
    twice[1].rank = 1;
    twice[1].infos = make_infos({{PMIX_NODEID, 0}});
    EXPECT_FALSE(encode_jobdata(twice).ok());
    std::vector<jobdata_entry> keys(1);
    keys[0].infos = make_infos({{PMIX_NODEID, 0}, {PMIX_NODEID, 1}});
    EXPECT_FALSE(encode_jobdata(keys).ok());
}

TEST(Messages, JobdataViewChecksVersionAndBounds) {
    auto bytes = sample_jobdata(4);
    {
        auto old = bytes;
        old[4] = 1;  // version 1 (the unindexed format)
        auto v = jobdata_view::parse(old);
        ASSERT_FALSE(v.ok());
        EXPECT_NE(v.status().message().find("version 1"), std::string::npos);
    }
    {
        auto huge = bytes;
        huge[16] = 0xff;  // more entries than fit
        huge[17] = 0xff;
        EXPECT_FALSE(jobdata_view::parse(huge).ok());
    }
    // An index entry whose key table points outside the file, a key slot whose value does.
    auto v0 = jobdata_view::parse(bytes);
    ASSERT_TRUE(v0.ok());
    auto e0 = v0->find(0);
    ASSERT_TRUE(e0.ok());
    {
        auto bad = bytes;
        const size_t idx = kJobdataHeaderSize;  // rank 0's index entry
        for (int i = 0; i < 8; ++i) bad[idx + 8 + i] = 0xff;
        auto v = jobdata_view::parse(bad);
        ASSERT_TRUE(v.ok());
        auto e = v->find(0);
        EXPECT_FALSE(e.ok());
        EXPECT_EQ(e.status().code(), PMIX_ERR_UNPACK_FAILURE);
    }
    {
        auto bad = bytes;
        const size_t slot = e0->table;  // first key of rank 0
        for (int i = 0; i < 4; ++i) bad[slot + 12 + i] = 0xff;  // value length
        auto v = jobdata_view::parse(bad);
        ASSERT_TRUE(v.ok());
        auto e = v->find(0);
        ASSERT_TRUE(e.ok());
        EXPECT_EQ(v->key_at(e.value(), 0).status().code(), PMIX_ERR_UNPACK_FAILURE);
        auto key = v0->key_at(e0.value(), 0);
        ASSERT_TRUE(key.ok());
        const std::string k(key.value());
        pmix_value_t val{};
        EXPECT_EQ(v->value(e.value(), k, &val).code(), PMIX_ERR_UNPACK_FAILURE);
    }
    // Any single corrupted byte: lookups fail cleanly or succeed, never read outside the file.
    for (size_t n = 0; n < bytes.size(); ++n) {
        for (uint8_t x : {uint8_t{0x00}, uint8_t{0xff}, uint8_t{0x80}}) {
            auto bad = bytes;
            bad[n] = x;
            auto v = jobdata_view::parse(bad);
            if (!v.ok()) continue;
            for (uint32_t rank : {0u, 3u, PMIX_RANK_WILDCARD}) {
                auto e = v->find(rank);
                if (!e.ok()) continue;
                for (const char *k : {PMIX_NODEID, PMIX_JOB_SIZE, "absent"}) {
                    pmix_value_t val{};
                    if (v->value(e.value(), k, &val).ok()) value_destruct(&val);
                }
            }
            std::vector<jobdata_entry> t;
            (void)decode_jobdata(bad, &t);
        }
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

// The server writes a lookup reply from the infos its store keeps encoded: the same bytes as the
// reply's own encoder, which the client decodes.
TEST(Messages, LookupReplyFromEncodedInfos) {
    lookup_reply m;
    m.owners = {proc("pmixcpp.1.0", 2), proc("pmixcpp.1.0", 0)};
    m.data = make_infos({{"svc.a", 1}, {"svc.b", 2}});
    std::vector<std::vector<uint8_t>> infos;
    for (size_t i = 0; i < m.data.size(); ++i) {
        Writer w;
        ASSERT_TRUE(encode_info(w, m.data[i]).ok());
        infos.push_back(w.take());
    }
    std::vector<encoded_lookup_entry> entries = {{m.owners[0], infos[0]}, {m.owners[1], infos[1]}};
    Writer w;
    ASSERT_TRUE(encode_lookup_reply(w, entries).ok());
    EXPECT_EQ(w.data(), bytes_of(m));
    lookup_reply back;
    ASSERT_TRUE(decode_payload(w.data(), &back).ok());
    ASSERT_EQ(back.owners.size(), 2u);
    EXPECT_EQ(back.owners[0].rank, 2u);
    EXPECT_STREQ(back.data[1].key, "svc.b");
    expect_truncations_rejected<lookup_reply>(w.data());

    Writer none;
    ASSERT_TRUE(encode_lookup_reply(none, {}).ok());
    EXPECT_EQ(none.data(), (std::vector<uint8_t>{0, 0, 0, 0}));

    // What the client would refuse is not written: an entry without its info, too many entries.
    Writer bad;
    std::vector<encoded_lookup_entry> empty_info = {{m.owners[0], {}}};
    EXPECT_EQ(encode_lookup_reply(bad, empty_info).code(), PMIX_ERR_PACK_FAILURE);
    std::vector<encoded_lookup_entry> many(1025, entries[0]);
    EXPECT_EQ(encode_lookup_reply(bad, many).code(), PMIX_ERR_PACK_FAILURE);
    EXPECT_EQ(bad.size(), 0u);
}
