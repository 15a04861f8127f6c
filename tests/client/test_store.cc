// LocalData: the PMIx_Get lookup order, own puts and the commit queue, the fetched-data cache.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <regex>
#include <string>

#include "client/get.h"
#include "client/store.h"

using namespace pmixcpp;
using namespace pmixcpp::client;

namespace {

pmix_value_t u32(uint32_t x) {
    pmix_value_t v{};
    v.type = PMIX_UINT32;
    v.data.uint32 = x;
    return v;
}

pmix_proc_t proc(const char *ns, pmix_rank_t r) {
    pmix_proc_t p{};
    strncpy(p.nspace, ns, PMIX_MAX_NSLEN);
    p.rank = r;
    return p;
}

InfoArray infos(std::initializer_list<std::pair<const char *, uint32_t>> kv) {
    auto *arr = static_cast<pmix_info_t *>(calloc(kv.size(), sizeof(pmix_info_t)));
    size_t i = 0;
    for (auto &[k, x] : kv) {
        strncpy(arr[i].key, k, PMIX_MAX_KEYLEN);
        arr[i].value = u32(x);
        ++i;
    }
    return InfoArray(arr, kv.size());
}

uint32_t get_u32(const LocalData &d, const pmix_proc_t &p, const char *key, lookup_source *src,
                 bool cache = true) {
    Value out;
    auto r = d.lookup(p, key, cache, out.get());
    EXPECT_TRUE(r.ok());
    *src = r.ok() ? r.value() : lookup_source::none;
    return out->type == PMIX_UINT32 ? out->data.uint32 : 0xdeadbeef;
}

class LocalDataTest : public ::testing::Test {
protected:
    void SetUp() override {
        d.set_self("ns", 1);
        std::vector<wire::jobdata_entry> e(3);
        e[0].rank = PMIX_RANK_WILDCARD;
        e[0].infos = infos({{"pmix.job.size", 4}, {"shadow", 10}});
        e[1].rank = 1;
        e[1].infos = infos({{"pmix.lrank", 1}, {"shadow", 11}});
        e[2].rank = 2;
        e[2].infos = infos({{"pmix.lrank", 2}});
        ASSERT_TRUE(d.load_jobdata(e).ok());
    }
    LocalData d;
};

}  // namespace

TEST_F(LocalDataTest, JobDataRankThenWildcard) {
    lookup_source src;
    EXPECT_EQ(get_u32(d, proc("ns", 2), "pmix.lrank", &src), 2u);
    EXPECT_EQ(src, lookup_source::job);
    EXPECT_EQ(get_u32(d, proc("ns", 1), "shadow", &src), 11u);  // rank-level wins
    EXPECT_EQ(get_u32(d, proc("ns", 2), "shadow", &src), 10u);  // falls back to the job level
    EXPECT_EQ(get_u32(d, proc("ns", 2), "pmix.job.size", &src), 4u);
    EXPECT_EQ(get_u32(d, proc("", PMIX_RANK_WILDCARD), "pmix.job.size", &src), 4u);  // "" = own namespace
    EXPECT_EQ(get_u32(d, proc("ns", PMIX_RANK_UNDEF), "pmix.job.size", &src), 4u);
}

TEST_F(LocalDataTest, OrderInternalOwnJobCache) {
    lookup_source src;
    pmix_value_t v = u32(100);
    ASSERT_TRUE(d.put(PMIX_GLOBAL, "shadow", &v).ok());
    EXPECT_EQ(get_u32(d, proc("ns", 1), "shadow", &src), 100u);
    EXPECT_EQ(src, lookup_source::own);
    v = u32(200);
    ASSERT_TRUE(d.store_internal(proc("ns", 1), "shadow", &v).ok());
    EXPECT_EQ(get_u32(d, proc("ns", 1), "shadow", &src), 200u);
    EXPECT_EQ(src, lookup_source::internal);

    // Own puts apply only to this process.
    EXPECT_EQ(get_u32(d, proc("ns", 2), "shadow", &src), 10u);
    wire::get_reply reply;
    reply.data = infos({{"peer.key", 7}, {"shadow", 99}});
    d.cache_proc(proc("ns", 2), reply);
    EXPECT_EQ(get_u32(d, proc("ns", 2), "peer.key", &src), 7u);
    EXPECT_EQ(src, lookup_source::cache);
    EXPECT_EQ(get_u32(d, proc("ns", 2), "shadow", &src), 10u);  // job data before the cache
    Value out;
    auto r = d.lookup(proc("ns", 2), "peer.key", false, out.get());  // refresh: cache skipped
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.value(), lookup_source::none);
    d.clear_cache();
    r = d.lookup(proc("ns", 2), "peer.key", true, out.get());
    EXPECT_EQ(r.value(), lookup_source::none);
}

TEST_F(LocalDataTest, OtherNamespaceOnlyInternalAndCache) {
    lookup_source src;
    Value out;
    auto r = d.lookup(proc("other", 2), "pmix.lrank", true, out.get());
    EXPECT_EQ(r.value(), lookup_source::none);
    pmix_value_t v = u32(5);
    ASSERT_TRUE(d.store_internal(proc("other", 2), "pmix.lrank", &v).ok());
    EXPECT_EQ(get_u32(d, proc("other", 2), "pmix.lrank", &src), 5u);
}

TEST_F(LocalDataTest, PendingCommitQueue) {
    pmix_value_t v = u32(1);
    ASSERT_TRUE(d.put(PMIX_LOCAL, "a", &v).ok());
    v = u32(2);
    ASSERT_TRUE(d.put(PMIX_INTERNAL, "i", &v).ok());  // never sent
    v = u32(3);
    ASSERT_TRUE(d.put(PMIX_REMOTE, "b", &v).ok());
    v = u32(4);
    ASSERT_TRUE(d.put(PMIX_GLOBAL, "a", &v).ok());  // replaces the queued "a"
    EXPECT_EQ(d.pending_count(), 2u);
    auto req = d.take_pending();
    ASSERT_EQ(req.infos.size(), 2u);
    EXPECT_STREQ(req.infos[0].key, "a");
    EXPECT_EQ(req.scopes[0], PMIX_GLOBAL);
    EXPECT_EQ(req.infos[0].value.data.uint32, 4u);
    EXPECT_STREQ(req.infos[1].key, "b");
    EXPECT_EQ(req.scopes[1], PMIX_REMOTE);
    EXPECT_EQ(d.pending_count(), 0u);
    EXPECT_EQ(d.take_pending().infos.size(), 0u);
    lookup_source src;
    EXPECT_EQ(get_u32(d, proc("ns", 1), "i", &src), 2u);  // still visible to itself
}

TEST_F(LocalDataTest, CollectAllKeysOfAProc) {
    pmix_value_t v = u32(100);
    ASSERT_TRUE(d.put(PMIX_GLOBAL, "shadow", &v).ok());
    auto all = d.collect(proc("ns", 1));
    ASSERT_TRUE(all.ok());
    EXPECT_EQ(all->size(), 2u);  // shadow (own, wins over job data) and pmix.lrank
    for (size_t i = 0; i < all->size(); ++i) {
        if (strcmp((*all)[i].key, "shadow") == 0) {
            EXPECT_EQ((*all)[i].value.data.uint32, 100u);
        }
    }
    EXPECT_FALSE(d.collect(proc("ns", 3)).ok());
}

TEST(ProcStore, StringsAreDeepCopied) {
    ProcStore s;
    char text[] = "hello";
    pmix_value_t v{};
    v.type = PMIX_STRING;
    v.data.string = text;
    ASSERT_TRUE(s.store("ns", 0, "k", &v).ok());
    text[0] = 'j';
    const pmix_value_t *got = s.find("ns", 0, "k");
    ASSERT_NE(got, nullptr);
    EXPECT_STREQ(got->data.string, "hello");
    EXPECT_EQ(s.find("ns", 1, "k"), nullptr);
    EXPECT_EQ(s.find("nx", 0, "k"), nullptr);
}

// Reserved keys are exactly the standard's attribute names: every PMIX_* attribute string the
// public header defines, and nothing that merely starts with "pmix".
TEST(StandardKeys, EveryHeaderAttributeAndNothingElse) {
    std::ifstream h(PMIXCPP_TOP_SRCDIR "/shared/pmix/pmix_common.h");
    ASSERT_TRUE(h.good());
    std::regex attr("^#define PMIX_[A-Z0-9_]+ +\"(pmix[^\"]*)\"");
    std::string line;
    size_t n = 0;
    while (std::getline(h, line)) {
        std::smatch m;
        if (!std::regex_search(line, m, attr)) continue;
        ++n;
        EXPECT_TRUE(standard_key(m[1].str().c_str())) << m[1];
    }
    EXPECT_GT(n, 400u);
    EXPECT_TRUE(standard_key(PMIX_JOB_SIZE));
    EXPECT_TRUE(standard_key(PMIX_LOCALITY_STRING));
    EXPECT_FALSE(standard_key("pmixcpp.1.0-0-local"));
    EXPECT_FALSE(standard_key("pmix.not.a.standard.key"));
    EXPECT_FALSE(standard_key("pmix"));
    EXPECT_FALSE(standard_key(nullptr));
}
