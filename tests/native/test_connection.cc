// OpenPMIx's handshake and framing (plugin/native/connection.h) against the traffic of a real
// OpenPMIx 4.2.2 client (Debian's libpmix2, PMIx_Init + PMIx_Get + PMIx_Finalize, run as uid and
// gid 65534) talking to a real OpenPMIx 4.2.2 server: tests/native/openpmix/handshake-*.txt,
// captured with conn_server.c / conn_client.c. The REQ reply (the job-data blob of gds/hash) is
// decoded with plugin/native/bfrops to the last byte.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "plugin/native/bfrops.h"
#include "plugin/native/connection.h"
#include "value.h"

using namespace pmixcpp;
using namespace pmixcpp::native;

namespace {

struct segment {
    bool from_client;
    std::vector<uint8_t> bytes;
};

std::vector<segment> load_traffic(const std::string &file) {
    std::vector<segment> out;
    std::ifstream in(std::string(PMIXCPP_TOP_SRCDIR) + "/tests/native/openpmix/" + file);
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream ls(line);
        std::string dir, tok;
        size_t n;
        ls >> dir >> n;
        segment s{dir == "C>S", {}};
        while (ls >> tok) s.bytes.push_back(static_cast<uint8_t>(std::stoul(tok, nullptr, 16)));
        EXPECT_EQ(s.bytes.size(), n);
        out.push_back(std::move(s));
    }
    return out;
}

// The client's messages through message_reader, fed in the chunks it asks for.
std::vector<std::pair<header, std::vector<uint8_t>>> read_messages(const std::vector<uint8_t> &stream, bool handshake_done) {
    message_reader r(1u << 20);
    if (handshake_done) {
        // a reader that already read a handshake: feed one first
        auto h = encode_handshake_header(1);
        EXPECT_TRUE(r.feed(h.data(), h.size()).ok());
        uint8_t z = 0;
        EXPECT_TRUE(r.feed(&z, 1).ok());
        r.next();
    }
    std::vector<std::pair<header, std::vector<uint8_t>>> out;
    size_t off = 0;
    while (off < stream.size()) {
        size_t n = std::min(r.wanted(), stream.size() - off);
        Status st = r.feed(stream.data() + off, n);
        EXPECT_TRUE(st.ok()) << st.message();
        if (!st.ok()) break;
        off += n;
        if (r.complete()) {
            out.emplace_back(r.current(), std::vector<uint8_t>(r.payload().begin(), r.payload().end()));
            r.next();
        }
    }
    return out;
}

std::vector<uint8_t> concat(const std::vector<segment> &t, bool from_client, size_t skip) {
    std::vector<uint8_t> out;
    size_t seen = 0;
    for (const segment &s : t) {
        if (s.from_client != from_client) continue;
        if (seen++ < skip) continue;
        out.insert(out.end(), s.bytes.begin(), s.bytes.end());
    }
    return out;
}

void check_session(const char *file, int_flavour f, const char *bfrops) {
    SCOPED_TRACE(file);
    auto t = load_traffic(file);
    ASSERT_GE(t.size(), 7u);

    // 1. The client's handshake: host-order header, then the payload.
    ASSERT_TRUE(t[0].from_client);
    auto msgs = read_messages(concat(t, true, 0), false);
    ASSERT_EQ(msgs.size(), 3u);  // handshake, REQ, FINALIZE
    const header &hh = msgs[0].first;
    EXPECT_EQ(hh.pindex, -1);
    EXPECT_EQ(hh.tag, 0xFFFFFFFFu);
    EXPECT_EQ(hh.nbytes, t[0].bytes.size() - kHeaderSize);
    auto hs = encode_handshake_header(hh.nbytes);
    EXPECT_TRUE(std::equal(hs.begin(), hs.end(), t[0].bytes.begin()));
    Result<hello> h = parse_hello(msgs[0].second);
    ASSERT_TRUE(h.ok()) << h.status().message();
    EXPECT_EQ(h->psec, "native");
    EXPECT_EQ(h->flag, peer_flag::simple_client);
    ASSERT_TRUE(h->proc.has_value());
    EXPECT_STREQ(h->proc->nspace, "capture.ns");
    EXPECT_EQ(h->proc->rank, 0u);
    EXPECT_EQ(h->version, "4.2.2rc2");
    EXPECT_EQ(h->major, 4);
    EXPECT_EQ(h->minor, 2);
    EXPECT_EQ(h->release, 2);
    EXPECT_EQ(h->bfrops, bfrops);
    EXPECT_EQ(flavour_of_bfrops(h->bfrops).value(), f);
    EXPECT_EQ(h->buffer_type, kBufferNonDesc);
    EXPECT_EQ(h->gds, "hash");
    EXPECT_EQ(h->trailing, 1u);  // OpenPMIx 4.2.2 counts one byte more than it writes
    uid_t uid;
    gid_t gid;
    ASSERT_TRUE(native_credential(*h, &uid, &gid).ok());
    EXPECT_EQ(uid, 65534u);
    EXPECT_EQ(gid, 65534u);
    EXPECT_EQ(encode_hello(*h), msgs[0].second);  // what a client of ours would send

    // 2. The server's ack: status 0, then the index 0 (two writes).
    ASSERT_FALSE(t[1].from_client);
    auto ack = concat(t, false, 0);
    std::vector<uint8_t> want = encode_client_ack(PMIX_SUCCESS, 0);
    ASSERT_GE(ack.size(), want.size());
    EXPECT_TRUE(std::equal(want.begin(), want.end(), ack.begin()));
    EXPECT_EQ(encode_client_ack(PMIX_ERR_NOT_FOUND, 7), (std::vector<uint8_t>{0xff, 0xff, 0xff, 0xd2}));

    // 3. REQ (cmd 0) on tag 101, pindex = the index.
    const header &rq = msgs[1].first;
    EXPECT_EQ(rq.pindex, 0);
    EXPECT_EQ(rq.tag, 101u);
    {
        unpacker up(f, msgs[1].second);
        uint8_t cmd = 0xff;
        ASSERT_TRUE(up.unpack(PMIX_COMMAND, &cmd, 1).ok());
        EXPECT_EQ(cmd, 0);
        EXPECT_TRUE(up.at_end());
    }
    auto enc = encode_header(rq);
    std::vector<uint8_t> client_req = concat(t, true, 1);
    EXPECT_TRUE(std::equal(enc.begin(), enc.end(), client_req.begin()));

    // 4. The server's messages after the ack: the REQ reply (the job blob) and the FINALIZE reply.
    std::vector<uint8_t> server = std::vector<uint8_t>(ack.begin() + 8, ack.end());
    auto replies = read_messages(server, true);
    ASSERT_EQ(replies.size(), 2u);
    EXPECT_EQ(replies[0].first.tag, 101u);  // a reply on the request's tag
    unpacker up(f, replies[0].second);
    int32_t n = 0;
    ASSERT_TRUE(up.unpack_count(&n).ok());
    ASSERT_EQ(n, 1);
    std::string nspace;
    ASSERT_TRUE(up.get_string(&nspace).ok());
    EXPECT_EQ(nspace, "capture.ns");
    std::vector<std::string> keys;
    while (!up.at_end()) {
        ASSERT_TRUE(up.unpack_count(&n).ok());
        ASSERT_EQ(n, 1);
        std::string key;
        pmix_value_t v{};
        Status st = up.get_kval(&key, &v);
        ASSERT_TRUE(st.ok()) << st.message();
        keys.push_back(key);
        if (key == "pmix.job.size") {
            EXPECT_EQ(v.type, PMIX_UINT32);
            EXPECT_EQ(v.data.uint32, 2u);
        }
        if (key == "pmix.pblob") {  // [PROC_RANK r][KVAL ...] inside the byte object
            ASSERT_EQ(v.type, PMIX_BYTE_OBJECT);
            unpacker in(f, std::span<const uint8_t>(reinterpret_cast<const uint8_t *>(v.data.bo.bytes), v.data.bo.size));
            pmix_rank_t r;
            ASSERT_TRUE(in.unpack(PMIX_PROC_RANK, &r, 1).ok());
            EXPECT_LT(r, 2u);
            int kv = 0;
            while (!in.at_end()) {
                std::string k;
                pmix_value_t iv{};
                ASSERT_TRUE(in.unpack_count(&n).ok());
                ASSERT_TRUE(in.get_kval(&k, &iv).ok());
                if (k == "pmix.lrank") {
                    EXPECT_EQ(iv.type, PMIX_UINT16);
                    EXPECT_EQ(iv.data.uint16, r);
                }
                value_destruct(&iv);
                ++kv;
            }
            EXPECT_EQ(kv, 4);  // hname, nodeid, lrank, nrank
        }
        if (key == "pmix.node.arr") {
            ASSERT_EQ(v.type, PMIX_DATA_ARRAY);
            EXPECT_EQ(v.data.darray->type, PMIX_INFO);
            EXPECT_EQ(v.data.darray->size, 5u);
        }
        value_destruct(&v);
    }
    EXPECT_EQ(keys, (std::vector<std::string>{"pmix.job.size", "pmix.max.size", "pmix.num.nodes", "pmix.nlist",
                                              "pmix.bfrops.mod", "pmix.ssn.arr", "pmix.node.arr", "pmix.pblob",
                                              "pmix.pblob"}));

    // 5. FINALIZE (cmd 5) on tag 102, answered [STATUS 0] on tag 102.
    EXPECT_EQ(msgs[2].first.tag, 102u);
    {
        unpacker uf(f, msgs[2].second);
        uint8_t cmd;
        ASSERT_TRUE(uf.unpack(PMIX_COMMAND, &cmd, 1).ok());
        EXPECT_EQ(cmd, 5);
    }
    EXPECT_EQ(replies[1].first.tag, 102u);
    packer reply(f);
    pmix_status_t ok = PMIX_SUCCESS;
    ASSERT_TRUE(reply.pack(PMIX_STATUS, &ok, 1).ok());
    EXPECT_EQ(reply.data(), replies[1].second);
}

}  // namespace

TEST(NativeConnection, OpenPMIx422SessionFlex128) { check_session("handshake-4.2.2-v41.txt", int_flavour::flex128, "v41"); }

TEST(NativeConnection, OpenPMIx422SessionFixed) { check_session("handshake-4.2.2-v3.txt", int_flavour::fixed, "v3"); }

TEST(NativeConnection, StudyExampleOfA507Client) {
    // OPENPMIX-WIRE.md §2: a v5.0.7 client, native, uid = gid = 1000, nspace job.7, rank 3.
    std::vector<uint8_t> payload = {0x6e, 0x61, 0x74, 0x69, 0x76, 0x65, 0x00, 0x00, 0x00, 0x00, 0x08, 0xe8,
                                    0x03, 0x00, 0x00, 0xe8, 0x03, 0x00, 0x00, 0x00, 0x6a, 0x6f, 0x62, 0x2e,
                                    0x37, 0x00, 0x00, 0x00, 0x00, 0x03, 0x35, 0x2e, 0x30, 0x2e, 0x37, 0x00,
                                    0x76, 0x34, 0x31, 0x00, 0x01, 0x68, 0x61, 0x73, 0x68, 0x00};
    Result<hello> h = parse_hello(payload);
    ASSERT_TRUE(h.ok()) << h.status().message();
    EXPECT_STREQ(h->proc->nspace, "job.7");
    EXPECT_EQ(h->proc->rank, 3u);
    EXPECT_EQ(h->major, 5);
    EXPECT_EQ(h->trailing, 0u);
    uid_t uid;
    gid_t gid;
    ASSERT_TRUE(native_credential(*h, &uid, &gid).ok());
    EXPECT_EQ(uid, 1000u);
    EXPECT_EQ(gid, 1000u);
}

TEST(NativeConnectionHostile, EveryTruncatedHandshakeFails) {
    auto t = load_traffic("handshake-4.2.2-v41.txt");
    std::vector<uint8_t> payload(t[0].bytes.begin() + kHeaderSize, t[0].bytes.end());
    // Without the trailing byte the handshake is complete; every shorter prefix is not.
    size_t complete = payload.size() - 1;
    for (size_t n = 0; n < complete; ++n) {
        std::vector<uint8_t> cut(payload.begin(), payload.begin() + static_cast<long>(n));
        EXPECT_FALSE(parse_hello(cut).ok()) << "prefix of " << n << " bytes parsed";
    }
    EXPECT_TRUE(parse_hello(std::vector<uint8_t>(payload.begin(), payload.begin() + static_cast<long>(complete))).ok());
}

TEST(NativeConnectionHostile, BadFields) {
    hello good;
    good.psec = "native";
    good.credential = std::vector<uint8_t>(8, 0);
    good.proc = pmix_proc_t{};
    strcpy(good.proc->nspace, "ns");
    good.version = "4.2.2";
    good.major = 4;
    good.minor = 2;
    good.release = 2;
    good.bfrops = "v41";
    good.gds = "hash";
    ASSERT_TRUE(parse_hello(encode_hello(good)).ok());

    auto bad = good;
    bad.flag = static_cast<peer_flag>(11);
    EXPECT_EQ(parse_hello(encode_hello(bad)).status().code(), PMIX_ERR_NOT_SUPPORTED);
    bad = good;
    bad.buffer_type = 7;
    EXPECT_FALSE(parse_hello(encode_hello(bad)).ok());
    bad = good;
    bad.version = "x.y";
    EXPECT_FALSE(parse_hello(encode_hello(bad)).ok());
    bad = good;
    bad.psec = std::string(200, 'p');
    EXPECT_FALSE(parse_hello(encode_hello(bad)).ok());
    bad = good;
    strcpy(bad.proc->nspace, "");
    EXPECT_FALSE(parse_hello(encode_hello(bad)).ok());
    // A credential length beyond the payload.
    auto bytes = encode_hello(good);
    bytes[7] = 0x7f;
    EXPECT_FALSE(parse_hello(bytes).ok());
    // A nspace longer than PMIX_MAX_NSLEN.
    std::vector<uint8_t> longns = {'n', 'o', 'n', 'e', 0, 0, 0, 0, 0, 0};
    longns.insert(longns.end(), PMIX_MAX_NSLEN + 1, 'n');
    longns.insert(longns.end(), {0, 0, 0, 0, 0});
    EXPECT_FALSE(parse_hello(longns).ok());
    // A native credential of the wrong size.
    bad = good;
    bad.credential.resize(4);
    uid_t u;
    gid_t g;
    EXPECT_FALSE(native_credential(bad, &u, &g).ok());
}

TEST(NativeConnectionHostile, ReaderBounds) {
    // A first message that is not a handshake; a handshake beyond 131072 bytes; a later message
    // beyond the limit: refused at the header, nothing allocated.
    message_reader r(1024);
    auto h = encode_header({0, 101, 2});
    EXPECT_FALSE(r.feed(h.data(), h.size()).ok());
    message_reader r2(1024);
    auto big = encode_handshake_header(kMaxHandshakeBytes + 1);
    EXPECT_FALSE(r2.feed(big.data(), big.size()).ok());
    message_reader r3(1024);
    auto hs = encode_handshake_header(1);
    ASSERT_TRUE(r3.feed(hs.data(), hs.size()).ok());
    uint8_t z = 0;
    ASSERT_TRUE(r3.feed(&z, 1).ok());
    ASSERT_TRUE(r3.complete());
    r3.next();
    auto huge = encode_header({0, 101, 1025});
    EXPECT_EQ(r3.feed(huge.data(), huge.size()).code(), PMIX_ERR_OUT_OF_RESOURCE);
    // Feeding more than wanted is refused.
    message_reader r4(1024);
    std::vector<uint8_t> many(32, 0xff);
    EXPECT_FALSE(r4.feed(many.data(), many.size()).ok());
}
