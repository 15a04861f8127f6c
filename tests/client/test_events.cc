// event_registry and event_chain (client/event_chain.h): handler order, single places, filters,
// chain execution and result aggregation, without a server or a progress thread.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "client/event_chain.h"

using namespace pmixcpp;
using namespace pmixcpp::client;

namespace {

void fake_handler(size_t, pmix_status_t, const pmix_proc_t *, pmix_info_t[], size_t, pmix_info_t *, size_t,
                  pmix_event_notification_cbfunc_fn_t, void *) {}

pmix_proc_t proc(const char *ns, pmix_rank_t r) {
    pmix_proc_t p{};
    strncpy(p.nspace, ns, PMIX_MAX_NSLEN);
    p.rank = r;
    return p;
}

// Builds info arrays for registrations and events.
struct infos {
    std::vector<pmix_info_t> v;
    std::vector<pmix_proc_t> procs;  // keeps proc arrays alive
    pmix_data_array_t darray{};
    ~infos() {
        for (auto &i : v)
            if (i.value.type == PMIX_STRING) free(i.value.data.string);
    }
    infos &flag(const char *key) {
        pmix_info_t i{};
        strncpy(i.key, key, PMIX_MAX_KEYLEN);
        i.value.type = PMIX_BOOL;
        i.value.data.flag = true;
        v.push_back(i);
        return *this;
    }
    infos &undef(const char *key) {
        pmix_info_t i{};
        strncpy(i.key, key, PMIX_MAX_KEYLEN);
        i.value.type = PMIX_UNDEF;
        v.push_back(i);
        return *this;
    }
    infos &str(const char *key, const char *s) {
        pmix_info_t i{};
        strncpy(i.key, key, PMIX_MAX_KEYLEN);
        i.value.type = PMIX_STRING;
        i.value.data.string = strdup(s);
        v.push_back(i);
        return *this;
    }
    infos &size(const char *key, size_t n) {
        pmix_info_t i{};
        strncpy(i.key, key, PMIX_MAX_KEYLEN);
        i.value.type = PMIX_SIZE;
        i.value.data.size = n;
        v.push_back(i);
        return *this;
    }
    infos &range(pmix_data_range_t r) {
        pmix_info_t i{};
        strncpy(i.key, PMIX_RANGE, PMIX_MAX_KEYLEN);
        i.value.type = PMIX_DATA_RANGE;
        i.value.data.range = r;
        v.push_back(i);
        return *this;
    }
    // Only one proc array per builder (darray is shared).
    infos &proc_array(const char *key, std::vector<pmix_proc_t> ps) {
        procs = std::move(ps);
        darray.type = PMIX_PROC;
        darray.size = procs.size();
        darray.array = procs.data();
        pmix_info_t i{};
        strncpy(i.key, key, PMIX_MAX_KEYLEN);
        i.value.type = PMIX_DATA_ARRAY;
        i.value.data.darray = &darray;
        v.push_back(i);
        return *this;
    }
    infos &one_proc(const char *key, pmix_proc_t *p) {
        pmix_info_t i{};
        strncpy(i.key, key, PMIX_MAX_KEYLEN);
        i.value.type = PMIX_PROC;
        i.value.data.proc = p;
        v.push_back(i);
        return *this;
    }
    pmix_info_t *data() { return v.empty() ? nullptr : v.data(); }
    size_t n() const { return v.size(); }
};

class RegistryTest : public ::testing::Test {
protected:
    pmix_proc_t self = proc("ns", 0);
    event_registry reg{self, [](const pmix_proc_t &p) { return strcmp(p.nspace, "ns") == 0 && p.rank < 2; }};

    size_t add(std::vector<pmix_status_t> codes, infos &&i = infos()) {
        auto r = reg.add(codes.data(), codes.size(), i.data(), i.n(), fake_handler);
        EXPECT_TRUE(r.ok()) << r.status().message();
        return r.ok() ? r.value() : 0;
    }
    pmix_status_t add_fails(std::vector<pmix_status_t> codes, infos &&i) {
        auto r = reg.add(codes.data(), codes.size(), i.data(), i.n(), fake_handler);
        EXPECT_FALSE(r.ok());
        return r.ok() ? PMIX_SUCCESS : r.status().code();
    }
    std::vector<size_t> chain(pmix_status_t status, pmix_proc_t src, infos &&i = infos()) {
        std::vector<size_t> out;
        for (const auto &h : reg.chain_for(status, src, i.data(), i.n())) out.push_back(h.ref);
        return out;
    }
};

constexpr pmix_status_t A = -1001, B = -1002;

}  // namespace

TEST_F(RegistryTest, ClassesRunSingleThenMultiThenDefault) {
    size_t d1 = add({});
    size_t m1 = add({A, B});
    size_t s1 = add({A});
    size_t d2 = add({});
    size_t s2 = add({A});
    size_t m2 = add({B, A});
    EXPECT_EQ(chain(A, self), (std::vector<size_t>{s1, s2, m1, m2, d1, d2}));
    EXPECT_EQ(chain(B, self), (std::vector<size_t>{m1, m2, d1, d2}));
    EXPECT_EQ(chain(-7, self), (std::vector<size_t>{d1, d2}));
    EXPECT_EQ(reg.size(), 6u);
}

TEST_F(RegistryTest, ReferencesAreUniqueAndPositive) {
    size_t a = add({});
    size_t b = add({});
    EXPECT_GT(a, 0u);
    EXPECT_NE(a, b);
    EXPECT_TRUE(reg.remove(a));
    size_t c = add({});
    EXPECT_NE(c, a);
    EXPECT_FALSE(reg.remove(a));
    EXPECT_FALSE(reg.remove(12345));
}

TEST_F(RegistryTest, FirstAndLastOverall) {
    size_t s = add({A});
    size_t last = add({}, std::move(infos().flag(PMIX_EVENT_HDLR_LAST)));
    size_t d = add({});
    size_t first = add({}, std::move(infos().flag(PMIX_EVENT_HDLR_FIRST)));
    EXPECT_EQ(chain(A, self), (std::vector<size_t>{first, s, d, last}));
}

TEST_F(RegistryTest, SecondFirstOrLastIsRefusedUntilFreed) {
    size_t first = add({A}, std::move(infos().flag(PMIX_EVENT_HDLR_FIRST)));
    EXPECT_EQ(add_fails({}, std::move(infos().flag(PMIX_EVENT_HDLR_FIRST))), PMIX_ERR_EVENT_REGISTRATION);
    size_t last = add({}, std::move(infos().undef(PMIX_EVENT_HDLR_LAST)));  // PMIX_UNDEF = true
    EXPECT_EQ(add_fails({B}, std::move(infos().flag(PMIX_EVENT_HDLR_LAST))), PMIX_ERR_EVENT_REGISTRATION);
    EXPECT_EQ(reg.size(), 2u);  // a refused registration leaves nothing behind
    EXPECT_TRUE(reg.remove(first));
    size_t first2 = add({}, std::move(infos().flag(PMIX_EVENT_HDLR_FIRST)));
    EXPECT_TRUE(reg.remove(last));
    size_t last2 = add({A}, std::move(infos().flag(PMIX_EVENT_HDLR_LAST)));
    EXPECT_EQ(chain(A, self), (std::vector<size_t>{first2, last2}));
}

TEST_F(RegistryTest, FirstAndLastInCategory) {
    size_t s1 = add({A});
    size_t slast = add({A}, std::move(infos().flag(PMIX_EVENT_HDLR_LAST_IN_CATEGORY)));
    size_t s2 = add({A});
    size_t sfirst = add({A}, std::move(infos().flag(PMIX_EVENT_HDLR_FIRST_IN_CATEGORY)));
    size_t dfirst = add({}, std::move(infos().flag(PMIX_EVENT_HDLR_FIRST_IN_CATEGORY)));
    size_t d1 = add({});
    size_t s3 = add({A}, std::move(infos().flag(PMIX_EVENT_HDLR_PREPEND)));
    EXPECT_EQ(chain(A, self), (std::vector<size_t>{sfirst, s3, s1, s2, slast, dfirst, d1}));
    EXPECT_EQ(add_fails({A}, std::move(infos().flag(PMIX_EVENT_HDLR_FIRST_IN_CATEGORY))),
              PMIX_ERR_EVENT_REGISTRATION);
    EXPECT_EQ(add_fails({}, std::move(infos().flag(PMIX_EVENT_HDLR_FIRST_IN_CATEGORY))),
              PMIX_ERR_EVENT_REGISTRATION);
    // The multi-code class has its own places.
    size_t mfirst = add({A, B}, std::move(infos().flag(PMIX_EVENT_HDLR_FIRST_IN_CATEGORY)));
    EXPECT_EQ(chain(B, self), (std::vector<size_t>{mfirst, dfirst, d1}));
}

TEST_F(RegistryTest, PrependAndAppend) {
    size_t a = add({});
    size_t b = add({}, std::move(infos().undef(PMIX_EVENT_HDLR_PREPEND)));  // OpenMPI's form
    size_t c = add({}, std::move(infos().flag(PMIX_EVENT_HDLR_APPEND)));
    size_t d = add({}, std::move(infos().flag(PMIX_EVENT_HDLR_PREPEND)));
    EXPECT_EQ(chain(A, self), (std::vector<size_t>{d, b, a, c}));
}

TEST_F(RegistryTest, BeforeAndAfterByNameOrReference) {
    size_t a = add({A}, std::move(infos().str(PMIX_EVENT_HDLR_NAME, "alpha")));
    size_t b = add({A}, std::move(infos().str(PMIX_EVENT_HDLR_NAME, "beta")));
    size_t before_b = add({A}, std::move(infos().str(PMIX_EVENT_HDLR_BEFORE, "beta")));
    size_t after_a = add({A}, std::move(infos().str(PMIX_EVENT_HDLR_AFTER, "alpha")));
    size_t after_b = add({A}, std::move(infos().size(PMIX_EVENT_HDLR_AFTER, b)));
    size_t before_a = add({A}, std::move(infos().size(PMIX_EVENT_HDLR_BEFORE, a)));
    EXPECT_EQ(chain(A, self), (std::vector<size_t>{before_a, a, after_a, before_b, b, after_b}));
    // Unknown target, or one in another class: refused, nothing added.
    EXPECT_EQ(add_fails({A}, std::move(infos().str(PMIX_EVENT_HDLR_BEFORE, "nobody"))), PMIX_ERR_EVENT_REGISTRATION);
    EXPECT_EQ(add_fails({}, std::move(infos().str(PMIX_EVENT_HDLR_AFTER, "alpha"))), PMIX_ERR_EVENT_REGISTRATION);
    EXPECT_EQ(reg.size(), 6u);
}

TEST_F(RegistryTest, AfterTheFirstInCategory) {
    size_t f = add({}, std::move(infos().flag(PMIX_EVENT_HDLR_FIRST_IN_CATEGORY).str(PMIX_EVENT_HDLR_NAME, "f")));
    size_t x = add({});
    size_t y = add({}, std::move(infos().str(PMIX_EVENT_HDLR_AFTER, "f")));
    EXPECT_EQ(chain(A, self), (std::vector<size_t>{f, y, x}));
    EXPECT_EQ(add_fails({}, std::move(infos().str(PMIX_EVENT_HDLR_BEFORE, "f"))), PMIX_ERR_EVENT_REGISTRATION);
}

// OpenPMIx's test/simple/hybrid: a handler AFTER the one declared FIRST overall (and one BEFORE
// the one declared LAST); BEFORE the first or AFTER the last has no place and is refused.
TEST_F(RegistryTest, AfterTheFirstOverallAndBeforeTheLast) {
    size_t f = add({}, std::move(infos().flag(PMIX_EVENT_HDLR_FIRST).str(PMIX_EVENT_HDLR_NAME, "master")));
    size_t l = add({}, std::move(infos().flag(PMIX_EVENT_HDLR_LAST).str(PMIX_EVENT_HDLR_NAME, "final")));
    size_t x = add({});
    size_t y = add({}, std::move(infos().str(PMIX_EVENT_HDLR_AFTER, "master")));
    size_t z = add({}, std::move(infos().str(PMIX_EVENT_HDLR_BEFORE, "final")));
    EXPECT_EQ(chain(A, self), (std::vector<size_t>{f, y, x, z, l}));
    EXPECT_EQ(add_fails({}, std::move(infos().str(PMIX_EVENT_HDLR_BEFORE, "master"))), PMIX_ERR_EVENT_REGISTRATION);
    EXPECT_EQ(add_fails({}, std::move(infos().str(PMIX_EVENT_HDLR_AFTER, "final"))), PMIX_ERR_EVENT_REGISTRATION);
}

TEST_F(RegistryTest, NonDefaultEventsSkipDefaultHandlers) {
    size_t s = add({A});
    add({});
    size_t first_default = add({}, std::move(infos().flag(PMIX_EVENT_HDLR_FIRST)));
    (void)first_default;
    EXPECT_EQ(chain(A, self, std::move(infos().flag(PMIX_EVENT_NON_DEFAULT))), (std::vector<size_t>{s}));
}

TEST_F(RegistryTest, SourceRangeFilter) {
    size_t own = add({}, std::move(infos().range(PMIX_RANGE_PROC_LOCAL)));
    size_t node = add({}, std::move(infos().range(PMIX_RANGE_LOCAL)));
    size_t ns = add({}, std::move(infos().range(PMIX_RANGE_NAMESPACE)));
    size_t any = add({});
    EXPECT_EQ(chain(A, self), (std::vector<size_t>{own, node, ns, any}));
    EXPECT_EQ(chain(A, proc("ns", 1)), (std::vector<size_t>{node, ns, any}));   // a local peer
    EXPECT_EQ(chain(A, proc("ns", 5)), (std::vector<size_t>{ns, any}));         // another node
    EXPECT_EQ(chain(A, proc("other", 0)), (std::vector<size_t>{any}));          // another namespace
}

TEST_F(RegistryTest, CustomRangeOfSources) {
    size_t h = add({A}, std::move(infos().proc_array(PMIX_EVENT_CUSTOM_RANGE, {proc("ns", 3), proc("ns", 4)})));
    EXPECT_EQ(chain(A, proc("ns", 3)), (std::vector<size_t>{h}));
    EXPECT_TRUE(chain(A, proc("ns", 2)).empty());
    pmix_proc_t wild = proc("w", PMIX_RANK_WILDCARD);
    size_t w = add({B}, std::move(infos().one_proc(PMIX_EVENT_CUSTOM_RANGE, &wild)));
    EXPECT_EQ(chain(B, proc("w", 9)), (std::vector<size_t>{w}));
    EXPECT_TRUE(chain(B, proc("ns", 9)).empty());
}

TEST_F(RegistryTest, AffectedProcsFilter) {
    pmix_proc_t p7 = proc("ns", 7);
    size_t h = add({A}, std::move(infos().one_proc(PMIX_EVENT_AFFECTED_PROC, &p7)));
    size_t any = add({A});
    pmix_proc_t hit = proc("ns", 7), miss = proc("ns", 8);
    EXPECT_EQ(chain(A, self, std::move(infos().one_proc(PMIX_EVENT_AFFECTED_PROC, &hit))),
              (std::vector<size_t>{h, any}));
    EXPECT_EQ(chain(A, self, std::move(infos().one_proc(PMIX_EVENT_AFFECTED_PROC, &miss))),
              (std::vector<size_t>{any}));
    EXPECT_EQ(chain(A, self), (std::vector<size_t>{any}));  // an event naming no affected proc
    EXPECT_EQ(chain(A, self, std::move(infos().proc_array(PMIX_EVENT_AFFECTED_PROCS, {miss, hit}))),
              (std::vector<size_t>{h, any}));
    EXPECT_TRUE(reg.accepts(h, A, self, nullptr, 0) == false);
    EXPECT_TRUE(reg.accepts(any, A, self, nullptr, 0));
}

TEST_F(RegistryTest, BadArguments) {
    EXPECT_EQ(reg.add(nullptr, 0, nullptr, 0, nullptr).status().code(), PMIX_ERR_BAD_PARAM);
    EXPECT_EQ(reg.add(nullptr, 2, nullptr, 0, fake_handler).status().code(), PMIX_ERR_BAD_PARAM);
    EXPECT_EQ(reg.size(), 0u);
}

// ------------------------------------------------------------------------------------------
// event_chain

namespace {
std::vector<event_handler_entry> entries(std::vector<size_t> refs) {
    std::vector<event_handler_entry> out;
    for (size_t r : refs) {
        event_handler_entry e;
        e.ref = r;
        e.fn = fake_handler;
        out.push_back(e);
    }
    return out;
}
pmix_info_t result(const char *key, int v) {
    pmix_info_t i{};
    strncpy(i.key, key, PMIX_MAX_KEYLEN);
    i.value.type = PMIX_INT;
    i.value.data.integer = v;
    return i;
}
}  // namespace

TEST(EventChain, RunsEveryHandlerInOrderAndAggregatesResults) {
    event_chain c(A, proc("ns", 0), InfoArray(), entries({1, 2, 3}));
    EXPECT_EQ(c.current_state(), event_chain::state::ready);
    auto h = c.next();
    ASSERT_TRUE(h);
    EXPECT_EQ(h->ref, 1u);
    EXPECT_EQ(c.current_state(), event_chain::state::in_handler);
    EXPECT_FALSE(c.next());  // not while a handler runs
    pmix_info_t r1 = result("r1", 11);
    ASSERT_TRUE(c.handler_done(PMIX_SUCCESS, &r1, 1).ok());
    EXPECT_EQ(c.results().size(), 1u);

    h = c.next();
    ASSERT_TRUE(h);
    EXPECT_EQ(h->ref, 2u);
    pmix_info_t r2[2] = {result("r2a", 21), result("r2b", 22)};
    ASSERT_TRUE(c.handler_done(PMIX_EVENT_NO_ACTION_TAKEN, r2, 2).ok());
    ASSERT_EQ(c.results().size(), 3u);  // the third handler sees all earlier results
    EXPECT_STREQ(c.results()[0].key, "r1");
    EXPECT_EQ(c.results()[0].value.data.integer, 11);
    EXPECT_STREQ(c.results()[2].key, "r2b");
    EXPECT_EQ(c.last_handler_status(), PMIX_EVENT_NO_ACTION_TAKEN);

    h = c.next();
    ASSERT_TRUE(h);
    EXPECT_EQ(h->ref, 3u);
    ASSERT_TRUE(c.handler_done(PMIX_SUCCESS, nullptr, 0).ok());
    EXPECT_FALSE(c.next());
    EXPECT_EQ(c.current_state(), event_chain::state::done);
    EXPECT_EQ(c.handlers_run(), 3u);
}

TEST(EventChain, ActionCompleteEndsTheChain) {
    event_chain c(A, proc("ns", 0), InfoArray(), entries({1, 2, 3}));
    ASSERT_TRUE(c.next());
    ASSERT_TRUE(c.handler_done(PMIX_SUCCESS, nullptr, 0).ok());
    ASSERT_TRUE(c.next());
    ASSERT_TRUE(c.handler_done(PMIX_EVENT_ACTION_COMPLETE, nullptr, 0).ok());
    EXPECT_EQ(c.current_state(), event_chain::state::done);
    EXPECT_FALSE(c.next());
    EXPECT_EQ(c.handlers_run(), 2u);
}

TEST(EventChain, EmptyChainIsDoneAtOnce) {
    event_chain c(A, proc("ns", 0), InfoArray(), {});
    EXPECT_FALSE(c.next());
    EXPECT_EQ(c.current_state(), event_chain::state::done);
}

TEST(EventChain, CompletionOutOfTurnIsRefused) {
    event_chain c(A, proc("ns", 0), InfoArray(), entries({1}));
    EXPECT_FALSE(c.handler_done(PMIX_SUCCESS, nullptr, 0).ok());
    ASSERT_TRUE(c.next());
    EXPECT_TRUE(c.handler_done(PMIX_SUCCESS, nullptr, 0).ok());
    EXPECT_FALSE(c.handler_done(PMIX_SUCCESS, nullptr, 0).ok());
}

TEST(EventChain, KeepsTheEventInfo) {
    pmix_info_t in[1] = {result("k", 5)};
    InfoArray copy;
    ASSERT_TRUE(info_array_copy(in, 1, &copy).ok());
    event_chain c(B, proc("ns", 4), std::move(copy), entries({1}));
    EXPECT_EQ(c.status(), B);
    EXPECT_EQ(c.source().rank, 4u);
    ASSERT_EQ(c.info().size(), 1u);
    EXPECT_EQ(c.info()[0].value.data.integer, 5);
}

// Robustness: thousands of handlers, unknown references.
TEST_F(RegistryTest, ThousandsOfHandlersAndUnknownReferences) {
    std::vector<size_t> refs;
    for (int i = 0; i < 5000; ++i) refs.push_back(add({static_cast<pmix_status_t>(A - (i % 7))}));
    refs.push_back(add({}));  // a default one
    EXPECT_EQ(reg.size(), 5001u);
    auto c = chain(A, self);
    ASSERT_EQ(c.size(), 5000u / 7 + 1 + 1);  // every 7th registration is for A, then the default
    EXPECT_TRUE(std::is_sorted(c.begin(), c.end() - 1));
    EXPECT_FALSE(reg.remove(0));
    EXPECT_FALSE(reg.remove(static_cast<size_t>(-1)));
    EXPECT_FALSE(reg.remove(refs.back() + 1000000));
    for (size_t r : refs) EXPECT_TRUE(reg.remove(r));
    for (size_t r : refs) EXPECT_FALSE(reg.remove(r));  // twice
    EXPECT_EQ(reg.size(), 0u);
    EXPECT_TRUE(chain(A, self).empty());
}
