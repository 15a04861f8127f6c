// Dynamic-process requests of OpenPMIx clients (plugin/native/requests_dyn.h): SPAWNNB, PUBLISHNB,
// LOOKUPNB, UNPUBLISHNB, CONNECTNB built in the layouts OpenPMIx 4.2.2's client packs
// (src/client/pmix_client_spawn.c, pmix_client_pub.c, pmix_client_connect.c; APP as bfrops packs
// it), in both integer flavours; their replies read back; hostile input (every truncation, counts
// beyond the input or a cap, trailing bytes).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "plugin/native/requests_dyn.h"
#include "value.h"

using namespace pmixcpp;
using namespace pmixcpp::native;

namespace {

pmix_info_t str_info(const char *key, const char *v) {
    pmix_info_t i{};
    strncpy(i.key, key, PMIX_MAX_KEYLEN);
    i.value.type = PMIX_STRING;
    i.value.data.string = const_cast<char *>(v);
    return i;
}

pmix_info_t u8_info(const char *key, uint8_t v, pmix_data_type_t t) {
    pmix_info_t i{};
    strncpy(i.key, key, PMIX_MAX_KEYLEN);
    i.value.type = t;
    i.value.data.uint8 = v;
    return i;
}

void put_infos(packer &pk, const std::vector<pmix_info_t> &infos) {
    pk.put_int32(1);
    pk.put_size(infos.size());
    if (infos.empty()) return;
    pk.put_int32(static_cast<int32_t>(infos.size()));
    for (const auto &i : infos) ASSERT_TRUE(pk.put_info(i).ok());
}

// A spawn of one app as the 4.2.2 client packs it (after the command byte).
std::vector<uint8_t> spawn_bytes(int_flavour f) {
    packer pk(f);
    put_infos(pk, {u8_info(PMIX_MAPBY, 0, PMIX_UINT8)});
    pk.put_int32(1);
    pk.put_size(1);  // napps
    pk.put_int32(1);
    (void)pk.put_string("/bin/child");
    pk.put_int32(2);
    (void)pk.put_string("/bin/child");
    (void)pk.put_string("4");
    pk.put_int32(2);
    (void)pk.put_string("OMPI_PARENT_PORT=1234.0:tcp://x");
    (void)pk.put_string("OMPI_FOO=bar");
    (void)pk.put_string("/tmp");
    int32_t maxprocs = 4;
    EXPECT_TRUE(pk.put(PMIX_INT, &maxprocs).ok());
    pmix_info_t host = str_info(PMIX_HOST, "n1");
    pk.put_size(1);
    EXPECT_TRUE(pk.put_info(host).ok());
    return pk.take();
}

std::vector<uint8_t> lookup_bytes(int_flavour f, const std::vector<const char *> &keys) {
    packer pk(f);
    pk.put_int32(1);
    pk.put_uint32(1000);
    pk.put_int32(1);
    pk.put_size(keys.size());
    for (const char *k : keys) {
        pk.put_int32(1);
        (void)pk.put_string(k);
    }
    pmix_info_t w{};
    strncpy(w.key, PMIX_WAIT, PMIX_MAX_KEYLEN);
    w.value.type = PMIX_BOOL;
    w.value.data.flag = true;
    put_infos(pk, {w});
    return pk.take();
}

class DynRequests : public ::testing::TestWithParam<int_flavour> {};

TEST_P(DynRequests, SpawnCarriesTheAppsAndTheirEnvironment) {
    auto bytes = spawn_bytes(GetParam());
    unpacker up(GetParam(), bytes);
    wire::spawn_request m;
    ASSERT_TRUE(decode_spawn(up, &m).ok());
    ASSERT_EQ(m.job_info.size(), 1u);
    EXPECT_STREQ(m.job_info[0].key, PMIX_MAPBY);
    ASSERT_EQ(m.apps.size(), 1u);
    const auto &a = m.apps[0];
    EXPECT_EQ(a.cmd, "/bin/child");
    EXPECT_EQ(a.argv, (std::vector<std::string>{"/bin/child", "4"}));
    EXPECT_EQ(a.env, (std::vector<std::string>{"OMPI_PARENT_PORT=1234.0:tcp://x", "OMPI_FOO=bar"}));
    EXPECT_EQ(a.cwd, "/tmp");
    EXPECT_EQ(a.maxprocs, 4);
    ASSERT_EQ(a.info.size(), 1u);
    EXPECT_STREQ(a.info[0].key, PMIX_HOST);
    EXPECT_STREQ(a.info[0].value.data.string, "n1");
}

TEST_P(DynRequests, EveryTruncationOfASpawnFailsCleanly) {
    auto bytes = spawn_bytes(GetParam());
    for (size_t n = 0; n < bytes.size(); ++n) {
        std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + n);
        unpacker up(GetParam(), cut);
        wire::spawn_request m;
        EXPECT_FALSE(decode_spawn(up, &m).ok()) << n << " bytes";
        EXPECT_TRUE(m.apps.empty());
    }
    bytes.push_back(0);
    unpacker up(GetParam(), bytes);
    wire::spawn_request m;
    EXPECT_FALSE(decode_spawn(up, &m).ok()) << "a trailing byte";
}

TEST_P(DynRequests, SpawnCountsBeyondTheInputOrTheCapsAreRefused) {
    for (size_t napps : {size_t(kMaxSpawnApps + 1), size_t(1000), SIZE_MAX}) {
        packer pk(GetParam());
        put_infos(pk, {});
        pk.put_int32(1);
        pk.put_size(napps);
        pk.put_int32(1);
        unpacker up(GetParam(), pk.data());
        wire::spawn_request m;
        EXPECT_FALSE(decode_spawn(up, &m).ok()) << napps;
    }
    // argc announcing more strings than the bytes that follow, and a negative argc
    for (int32_t argc : {1 << 30, -1}) {
        packer pk(GetParam());
        put_infos(pk, {});
        pk.put_int32(1);
        pk.put_size(1);
        pk.put_int32(1);
        (void)pk.put_string("/bin/x");
        pk.put_int32(argc);
        unpacker up(GetParam(), pk.data());
        wire::spawn_request m;
        EXPECT_FALSE(decode_spawn(up, &m).ok()) << argc;
    }
}

TEST_P(DynRequests, PublishSplitsDirectivesFromData) {
    packer pk(GetParam());
    pk.put_int32(1);
    pk.put_uint32(1000);
    put_infos(pk, {str_info("ompi.port", "p0"), u8_info(PMIX_PERSISTENCE, PMIX_PERSIST_FIRST_READ, PMIX_PERSIST),
                   u8_info(PMIX_RANGE, PMIX_RANGE_SESSION, PMIX_DATA_RANGE)});
    unpacker up(GetParam(), pk.data());
    wire::publish_request m;
    ASSERT_TRUE(decode_publish(up, &m).ok());
    ASSERT_EQ(m.data.size(), 1u);
    EXPECT_STREQ(m.data[0].key, "ompi.port");
    EXPECT_STREQ(m.data[0].value.data.string, "p0");
    ASSERT_EQ(m.directives.size(), 2u);
    EXPECT_STREQ(m.directives[0].key, PMIX_PERSISTENCE);
    EXPECT_STREQ(m.directives[1].key, PMIX_RANGE);
    auto bytes = pk.data();
    for (size_t n = 0; n < bytes.size(); ++n) {
        std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + n);
        unpacker u(GetParam(), cut);
        wire::publish_request x;
        EXPECT_FALSE(decode_publish(u, &x).ok()) << n;
    }
}

TEST_P(DynRequests, LookupAndUnpublishKeys) {
    auto bytes = lookup_bytes(GetParam(), {"ompi.a", "ompi.b"});
    unpacker up(GetParam(), bytes);
    wire::lookup_request m;
    ASSERT_TRUE(decode_lookup(up, &m).ok());
    EXPECT_EQ(m.keys, (std::vector<std::string>{"ompi.a", "ompi.b"}));
    ASSERT_EQ(m.directives.size(), 1u);
    EXPECT_STREQ(m.directives[0].key, PMIX_WAIT);
    auto none = lookup_bytes(GetParam(), {});
    unpacker u0(GetParam(), none);
    wire::lookup_request all;
    ASSERT_TRUE(decode_lookup(u0, &all).ok());
    EXPECT_TRUE(all.keys.empty());
    for (size_t n = 0; n < bytes.size(); ++n) {
        std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + n);
        unpacker u(GetParam(), cut);
        wire::lookup_request x;
        EXPECT_FALSE(decode_lookup(u, &x).ok()) << n;
        EXPECT_TRUE(x.keys.empty());
    }
    // a key longer than PMIX_MAX_KEYLEN
    std::string longkey(PMIX_MAX_KEYLEN + 5, 'k');
    auto lk = lookup_bytes(GetParam(), {longkey.c_str()});
    unpacker ul(GetParam(), lk);
    wire::lookup_request y;
    EXPECT_FALSE(decode_lookup(ul, &y).ok());
}

TEST_P(DynRequests, ConnectNeedsProcs) {
    packer pk(GetParam());
    pk.put_int32(1);
    pk.put_size(2);
    pk.put_int32(2);
    pmix_proc_t a{}, b{};
    strcpy(a.nspace, "slurm.1.0");
    a.rank = PMIX_RANK_WILDCARD;
    strcpy(b.nspace, "slurm.1.1");
    b.rank = PMIX_RANK_WILDCARD;
    pk.put_proc(a);
    pk.put_proc(b);
    put_infos(pk, {});
    unpacker up(GetParam(), pk.data());
    connect_data d;
    ASSERT_TRUE(decode_connect(up, &d, 1024).ok());
    ASSERT_EQ(d.procs.size(), 2u);
    EXPECT_STREQ(d.procs[1].nspace, "slurm.1.1");
    packer empty(GetParam());
    empty.put_int32(1);
    empty.put_size(0);
    empty.put_int32(0);
    put_infos(empty, {});
    unpacker ue(GetParam(), empty.data());
    EXPECT_FALSE(decode_connect(ue, &d, 1024).ok());
    unpacker ucap(GetParam(), pk.data());
    EXPECT_FALSE(decode_connect(ucap, &d, 1).ok()) << "more procs than the cap";
}

TEST_P(DynRequests, RepliesReadBackInOpenPMIxLayout) {
    const int_flavour f = GetParam();
    auto sp = encode_spawn_reply(f, PMIX_SUCCESS, "slurm.7.1");
    ASSERT_TRUE(sp.ok());
    {
        unpacker up(f, sp.value());
        pmix_status_t st;
        ASSERT_TRUE(up.unpack(PMIX_STATUS, &st, 1).ok());
        EXPECT_EQ(st, PMIX_SUCCESS);
        char *ns = nullptr;
        ASSERT_TRUE(up.unpack(PMIX_STRING, &ns, 1).ok());
        EXPECT_STREQ(ns, "slurm.7.1");
        free(ns);
        EXPECT_TRUE(up.at_end());
    }
    wire::lookup_reply lr;
    lr.owners.resize(1);
    strcpy(lr.owners[0].nspace, "slurm.7.0");
    lr.owners[0].rank = 0;
    auto *d = static_cast<pmix_info_t *>(calloc(1, sizeof(pmix_info_t)));
    strcpy(d[0].key, "ompi.port");
    ASSERT_TRUE(value_load(&d[0].value, "port-0", PMIX_STRING).ok());
    lr.data = InfoArray(d, 1);
    auto lk = encode_lookup_reply(f, lr);
    ASSERT_TRUE(lk.ok());
    {
        unpacker up(f, lk.value());
        pmix_status_t st;
        size_t n;
        ASSERT_TRUE(up.unpack(PMIX_STATUS, &st, 1).ok());
        ASSERT_TRUE(up.unpack(PMIX_SIZE, &n, 1).ok());
        ASSERT_EQ(n, 1u);
        int32_t count;
        ASSERT_TRUE(up.unpack_count(&count).ok());
        ASSERT_EQ(count, 1);
        pmix_proc_t owner;
        std::string key;
        pmix_value_t v{};
        ASSERT_TRUE(up.get_proc(&owner).ok());
        ASSERT_TRUE(up.get_string(&key).ok());
        ASSERT_TRUE(up.get_value(&v).ok());
        EXPECT_STREQ(owner.nspace, "slurm.7.0");
        EXPECT_EQ(key, "ompi.port");
        EXPECT_STREQ(v.data.string, "port-0");
        value_destruct(&v);
        EXPECT_TRUE(up.at_end());
    }
    auto cr = encode_connect_reply(f, {{1, 2, 3}, {4}});
    {
        unpacker up(f, cr);
        pmix_status_t st;
        ASSERT_TRUE(up.unpack(PMIX_STATUS, &st, 1).ok());
        for (size_t want : {3u, 1u}) {
            int32_t count;
            ASSERT_TRUE(up.unpack_count(&count).ok());
            std::span<const uint8_t> b;
            ASSERT_TRUE(up.get_bytes(&b).ok());
            EXPECT_EQ(b.size(), want);
        }
        EXPECT_TRUE(up.at_end());
    }
}

INSTANTIATE_TEST_SUITE_P(Flavours, DynRequests, ::testing::Values(int_flavour::flex128, int_flavour::fixed),
                         [](const auto &i) { return std::string(i.param == int_flavour::fixed ? "fixed" : "flex128"); });

}  // namespace
