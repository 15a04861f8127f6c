// event_engine (plugin/server/events.h) without sockets: routing by range, custom range,
// forwarding, cache and replay at connect, generated events, refused deliveries.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <set>

#include "events.h"
#include "wire/frame.h"

using namespace pmixcpp;
using namespace pmixcpp::server;

namespace {

step_info two_nodes() {
    step_info s;
    s.nspace = "slurm.1.0";
    s.ntasks = 6;
    s.node_id = 0;
    s.node_names = {"n1", "n2"};
    s.node_ranks = {{0, 1, 2}, {3, 4, 5}};
    return s;
}

struct forwarder : remote_events {
    std::vector<std::pair<uint32_t, std::vector<uint8_t>>> sent;
    void forward_event(uint32_t node, std::span<const uint8_t> payload) override {
        sent.emplace_back(node, std::vector<uint8_t>(payload.begin(), payload.end()));
    }
};

struct harness {
    std::set<uint32_t> connected{0, 1, 2};
    std::map<uint32_t, std::vector<wire::event_notification>> got;
    forwarder fwd;
    event_engine eng;

    explicit harness(size_t cache = 8, step_info s = two_nodes())
        : eng(s, ops(), cache) {}
    event_ops ops() {
        event_ops o;
        o.send_to_rank = [this](uint32_t rank, std::span<const uint8_t> frame) {
            if (!connected.count(rank)) return false;
            wire::FrameReader r;
            EXPECT_TRUE(r.feed(frame).ok());
            auto f = r.next();
            EXPECT_TRUE(f.ok() && f->has_value());
            EXPECT_EQ((*f)->type, static_cast<uint16_t>(wire::msg_type::event));
            EXPECT_EQ((*f)->id, 0u);
            wire::event_notification ev;
            EXPECT_TRUE(wire::decode_payload((*f)->payload, &ev).ok());
            got[rank].push_back(std::move(ev));
            return true;
        };
        o.remote = &fwd;
        return o;
    }
    std::set<uint32_t> receivers() const {
        std::set<uint32_t> out;
        for (const auto &[r, v] : got)
            if (!v.empty()) out.insert(r);
        return out;
    }
};

pmix_info_t proc_array_info(const char *key, std::vector<pmix_proc_t> procs) {
    pmix_info_t i{};
    strncpy(i.key, key, PMIX_MAX_KEYLEN);
    pmix_data_array_t da{};
    da.type = PMIX_PROC;
    da.size = procs.size();
    da.array = procs.data();
    pmix_value_t v{};
    v.type = PMIX_DATA_ARRAY;
    v.data.darray = &da;
    EXPECT_TRUE(value_xfer(&i.value, &v).ok());
    return i;
}

pmix_proc_t p(const char *ns, pmix_rank_t r) {
    pmix_proc_t x{};
    strncpy(x.nspace, ns, PMIX_MAX_NSLEN);
    x.rank = r;
    return x;
}

wire::event_notification make_event(uint8_t range, std::vector<pmix_info_t> infos = {}) {
    wire::event_notification ev;
    ev.status = -5000;
    ev.source = p("slurm.1.0", 1);
    ev.range = range;
    if (!infos.empty()) {
        auto *arr = static_cast<pmix_info_t *>(calloc(infos.size(), sizeof(pmix_info_t)));
        for (size_t i = 0; i < infos.size(); ++i) arr[i] = infos[i];
        ev.infos = InfoArray(arr, infos.size());
    }
    return ev;
}

const pmix_info_t *find(const wire::event_notification &ev, const char *key) {
    for (size_t i = 0; i < ev.infos.size(); ++i)
        if (strcmp(ev.infos[i].key, key) == 0) return &ev.infos[i];
    return nullptr;
}

}  // namespace

TEST(EventEngine, LocalRangeStaysOnTheNode) {
    harness h;
    ASSERT_TRUE(h.eng.notify_from_client(1, make_event(PMIX_RANGE_LOCAL)).ok());
    EXPECT_EQ(h.receivers(), (std::set<uint32_t>{0, 1, 2}));
    EXPECT_TRUE(h.fwd.sent.empty());
    EXPECT_EQ(h.got[0][0].status, -5000);
    EXPECT_EQ(h.got[0][0].source.rank, 1u);
}

TEST(EventEngine, NamespaceSessionGlobalReachEveryNode) {
    for (uint8_t range : {PMIX_RANGE_NAMESPACE, PMIX_RANGE_SESSION, PMIX_RANGE_GLOBAL, PMIX_RANGE_UNDEF}) {
        harness h;
        ASSERT_TRUE(h.eng.notify_from_client(0, make_event(range)).ok());
        EXPECT_EQ(h.receivers(), (std::set<uint32_t>{0, 1, 2}));
        ASSERT_EQ(h.fwd.sent.size(), 1u);
        EXPECT_EQ(h.fwd.sent[0].first, 1u);
        // The other node delivers to its ranks and never forwards again.
        step_info s = two_nodes();
        s.node_id = 1;
        harness other(8, s);
        other.connected = {3, 4, 5};
        ASSERT_TRUE(other.eng.from_remote(h.fwd.sent[0].second).ok());
        EXPECT_EQ(other.receivers(), (std::set<uint32_t>{3, 4, 5}));
        EXPECT_TRUE(other.fwd.sent.empty());
    }
}

TEST(EventEngine, RmRangeReachesNoProcess) {
    harness h;
    ASSERT_TRUE(h.eng.notify_from_client(0, make_event(PMIX_RANGE_RM)).ok());
    EXPECT_TRUE(h.receivers().empty());
    EXPECT_TRUE(h.fwd.sent.empty());
}

TEST(EventEngine, CustomRange) {
    harness h;
    auto ev = make_event(PMIX_RANGE_CUSTOM, {proc_array_info(PMIX_EVENT_CUSTOM_RANGE,
                                                             {p("slurm.1.0", 2), p("slurm.1.0", 4),
                                                              p("other.ns", 0)})});
    ASSERT_TRUE(h.eng.notify_from_client(0, std::move(ev)).ok());
    EXPECT_EQ(h.receivers(), (std::set<uint32_t>{2}));
    ASSERT_EQ(h.fwd.sent.size(), 1u);
    EXPECT_EQ(h.fwd.sent[0].first, 1u);
    // On the other node only rank 4 is in range.
    step_info s = two_nodes();
    s.node_id = 1;
    harness other(8, s);
    other.connected = {3, 4, 5};
    ASSERT_TRUE(other.eng.from_remote(h.fwd.sent[0].second).ok());
    EXPECT_EQ(other.receivers(), (std::set<uint32_t>{4}));

    harness w;
    ASSERT_TRUE(w.eng.notify_from_client(0, make_event(PMIX_RANGE_CUSTOM, {proc_array_info(PMIX_EVENT_CUSTOM_RANGE,
                                                                                         {p("slurm.1.0", PMIX_RANK_WILDCARD)})}))
                    .ok());
    EXPECT_EQ(w.receivers(), (std::set<uint32_t>{0, 1, 2}));
    EXPECT_EQ(w.fwd.sent.size(), 1u);
}

TEST(EventEngine, RefusedNotifications) {
    harness h;
    EXPECT_EQ(h.eng.notify_from_client(0, make_event(PMIX_RANGE_CUSTOM)).code(), PMIX_ERR_BAD_PARAM);
    EXPECT_EQ(h.eng.notify_from_client(0, make_event(PMIX_RANGE_PROC_LOCAL)).code(), PMIX_ERR_BAD_PARAM);
    EXPECT_TRUE(h.receivers().empty());
    std::vector<uint8_t> junk{1, 2, 3};
    EXPECT_FALSE(h.eng.from_remote(junk).ok());
}

TEST(EventEngine, LateRanksGetCachedEventsOnce) {
    harness h;
    h.connected = {0};
    ASSERT_TRUE(h.eng.notify_from_client(0, make_event(PMIX_RANGE_LOCAL)).ok());
    bool t = true;
    pmix_info_t nocache{};
    strcpy(nocache.key, PMIX_EVENT_DO_NOT_CACHE);
    ASSERT_TRUE(value_load(&nocache.value, &t, PMIX_BOOL).ok());
    ASSERT_TRUE(h.eng.notify_from_client(0, make_event(PMIX_RANGE_LOCAL, {nocache})).ok());
    EXPECT_EQ(h.got[0].size(), 2u);
    EXPECT_EQ(h.eng.cached(), 1u);
    h.connected.insert(2);
    h.eng.rank_connected(2);
    EXPECT_EQ(h.got[2].size(), 1u);  // the cached one, not the DO_NOT_CACHE one
    h.eng.rank_connected(2);
    EXPECT_EQ(h.got[2].size(), 1u);  // never twice
    h.eng.rank_connected(0);
    EXPECT_EQ(h.got[0].size(), 2u);  // had it already
    EXPECT_EQ(h.eng.stats().replayed, 1u);
}

TEST(EventEngine, CacheIsBounded) {
    harness h(4);
    for (int i = 0; i < 100; ++i) ASSERT_TRUE(h.eng.notify_from_client(0, make_event(PMIX_RANGE_LOCAL)).ok());
    EXPECT_EQ(h.eng.cached(), 4u);
    EXPECT_EQ(h.eng.stats().routed, 100u);
}

TEST(EventEngine, DeathWithoutFinalizeIsProcAborted) {
    harness h;
    h.connected = {0, 1};
    h.eng.rank_terminated(2, false);
    ASSERT_EQ(h.got[0].size(), 2u);
    const auto &ab = h.got[0][0];
    EXPECT_EQ(ab.status, PMIX_ERR_PROC_ABORTED);
    const pmix_info_t *aff = find(ab, PMIX_EVENT_AFFECTED_PROC);
    ASSERT_NE(aff, nullptr);
    ASSERT_EQ(aff->value.type, PMIX_PROC);
    EXPECT_EQ(aff->value.data.proc->rank, 2u);
    EXPECT_STREQ(aff->value.data.proc->nspace, "slurm.1.0");
    EXPECT_EQ(find(ab, PMIX_EVENT_NON_DEFAULT), nullptr);
    const auto &term = h.got[0][1];
    EXPECT_EQ(term.status, PMIX_EVENT_PROC_TERMINATED);
    ASSERT_NE(find(term, PMIX_EVENT_NON_DEFAULT), nullptr);
    EXPECT_EQ(find(term, PMIX_PROC_TERM_STATUS)->value.data.status, PMIX_ERR_PROC_ABORTED);
    EXPECT_EQ(h.fwd.sent.size(), 2u);  // the whole namespace hears of it
}

TEST(EventEngine, FinalizedRankRaisesNothingByDefault) {
    harness h;
    h.eng.rank_terminated(1, true);
    EXPECT_TRUE(h.got[0].empty());
    EXPECT_TRUE(h.fwd.sent.empty());
}

TEST(EventEngine, FinalizedRankIsOnlyTerminatedWhenAsked) {
    harness h;
    h.eng.set_normal_termination_events(true);
    h.eng.rank_terminated(1, true);
    ASSERT_EQ(h.got[0].size(), 1u);
    EXPECT_EQ(h.got[0][0].status, PMIX_EVENT_PROC_TERMINATED);
    EXPECT_EQ(find(h.got[0][0], PMIX_PROC_TERM_STATUS)->value.data.status, PMIX_SUCCESS);
}

TEST(EventEngine, AbortTellsEveryone) {
    harness h;
    h.eng.job_aborting(1, 42, "bye");
    ASSERT_EQ(h.got[2].size(), 1u);
    const auto &ev = h.got[2][0];
    EXPECT_EQ(ev.status, PMIX_ERR_JOB_TERMINATED);
    EXPECT_EQ(find(ev, PMIX_JOB_TERM_STATUS)->value.data.status, 42);
    EXPECT_NE(std::string(find(ev, PMIX_EVENT_TEXT_MESSAGE)->value.data.string).find("bye"), std::string::npos);
    EXPECT_EQ(h.fwd.sent.size(), 1u);
}

TEST(EventEngine, UnreachableRanksAreCountedAsDropped) {
    harness h;
    h.connected = {};
    ASSERT_TRUE(h.eng.notify_from_client(0, make_event(PMIX_RANGE_LOCAL)).ok());
    EXPECT_EQ(h.eng.stats().dropped, 3u);
    EXPECT_EQ(h.eng.stats().delivered, 0u);
}

TEST(EventEngine, NodeDownNamesTheNodeAndItsRanks) {
    harness h;
    h.eng.node_down(1, "connection reset");
    for (uint32_t r : {0u, 1u, 2u}) {
        ASSERT_EQ(h.got[r].size(), 1u);
        const auto &ev = h.got[r][0];
        EXPECT_EQ(ev.status, PMIX_ERR_NODE_DOWN);
        EXPECT_EQ(ev.source.rank, PMIX_RANK_UNDEF);
        const pmix_info_t *aff = find(ev, PMIX_EVENT_AFFECTED_PROCS);
        ASSERT_NE(aff, nullptr);
        ASSERT_EQ(aff->value.type, PMIX_DATA_ARRAY);
        ASSERT_EQ(aff->value.data.darray->size, 3u);
        auto *procs = static_cast<pmix_proc_t *>(aff->value.data.darray->array);
        EXPECT_EQ(procs[0].rank, 3u);
        EXPECT_EQ(procs[2].rank, 5u);
        EXPECT_STREQ(find(ev, PMIX_HOSTNAME)->value.data.string, "n2");
        EXPECT_EQ(find(ev, PMIX_NODEID)->value.data.uint32, 1u);
        EXPECT_NE(std::string(find(ev, PMIX_EVENT_TEXT_MESSAGE)->value.data.string).find("connection reset"),
                  std::string::npos);
    }
    EXPECT_TRUE(h.fwd.sent.empty());  // every node raises its own
    EXPECT_EQ(h.eng.cached(), 1u);    // for handlers registered later
    h.eng.node_down(0, "self");       // this node, or one out of range: nothing
    h.eng.node_down(7, "nonsense");
    EXPECT_EQ(h.got[0].size(), 1u);
}

// Robustness: bad ranges, custom ranges and affected procs never crash the engine.
TEST(EventEngine, BadNotificationsAreRefusedOrIgnored) {
    harness h;
    EXPECT_FALSE(h.eng.notify_from_client(0, make_event(200)).ok());
    EXPECT_FALSE(h.eng.notify_from_client(0, make_event(PMIX_RANGE_PROC_LOCAL)).ok());
    EXPECT_FALSE(h.eng.notify_from_client(0, make_event(PMIX_RANGE_CUSTOM)).ok());  // no procs
    // procs of other namespaces and ranks out of range are ignored
    EXPECT_TRUE(h.eng.notify_from_client(0, make_event(PMIX_RANGE_CUSTOM, {proc_array_info(PMIX_EVENT_CUSTOM_RANGE,
                                                                             {p("other", 0), p("slurm.1.0", 999999),
                                                                              p("slurm.1.0", PMIX_RANK_UNDEF)})}))
                    .ok());
    EXPECT_TRUE(h.receivers().empty());
    // a custom range that is not a proc array, affected procs of the wrong type: delivered, no crash
    pmix_info_t notprocs{};
    strncpy(notprocs.key, PMIX_EVENT_CUSTOM_RANGE, PMIX_MAX_KEYLEN);
    int x = 5;
    ASSERT_TRUE(value_load(&notprocs.value, &x, PMIX_INT).ok());
    EXPECT_FALSE(h.eng.notify_from_client(0, make_event(PMIX_RANGE_CUSTOM, {notprocs})).ok());
    pmix_info_t aff{};
    strncpy(aff.key, PMIX_EVENT_AFFECTED_PROCS, PMIX_MAX_KEYLEN);
    ASSERT_TRUE(value_load(&aff.value, "garbage", PMIX_STRING).ok());
    EXPECT_TRUE(h.eng.notify_from_client(0, make_event(PMIX_RANGE_LOCAL, {aff})).ok());
    EXPECT_EQ(h.receivers(), (std::set<uint32_t>{0, 1, 2}));
    // garbage from another node
    std::vector<uint8_t> junk = {1, 2, 3};
    EXPECT_FALSE(h.eng.from_remote(junk).ok());
    EXPECT_FALSE(h.eng.from_remote({}).ok());
}
