// The server's engines without sockets: key-value store, fence tracker, get waits, job data.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "../../plugin/common/step_env.h"
#include "../../plugin/server/fence_tracker.h"
#include "../../plugin/server/get_waits.h"
#include "../../plugin/server/jctrl.h"
#include "../../plugin/server/jobdata.h"
#include "../../plugin/server/kvs.h"
#include "../../plugin/server/modex_snapshot.h"
#include "client_util.h"
#include "wire/snapshot.h"

using namespace pmixcpp;
using namespace pmixcpp::server;
using pmixcpp::testing::make_infos;
using pmixcpp::testing::set_info;

namespace {

const pmix_info_t *find(const InfoArray &a, const char *key) {
    for (size_t i = 0; i < a.size(); ++i)
        if (strcmp(a[i].key, key) == 0) return &a[i];
    return nullptr;
}

}  // namespace

// --- kv_store ------------------------------------------------------------------------------

TEST(KvStore, ScopesDecideVisibility) {
    kv_store kvs;
    auto infos = make_infos(3);
    uint32_t v = 7;
    set_info(infos[0], "loc", &v, PMIX_UINT32);
    set_info(infos[1], "rem", &v, PMIX_UINT32);
    set_info(infos[2], "glob", &v, PMIX_UINT32);
    uint8_t scopes[] = {PMIX_LOCAL, PMIX_REMOTE, PMIX_GLOBAL};
    ASSERT_TRUE(kvs.commit(1, scopes, infos.data(), infos.size()).ok());

    EXPECT_TRUE(kvs.has(1, "loc", relation::same_node));
    EXPECT_FALSE(kvs.has(1, "rem", relation::same_node));
    EXPECT_TRUE(kvs.has(1, "glob", relation::same_node));
    EXPECT_FALSE(kvs.has(1, "loc", relation::other_node));
    EXPECT_TRUE(kvs.has(1, "rem", relation::other_node));
    EXPECT_TRUE(kvs.has(1, "loc", relation::self));
    EXPECT_TRUE(kvs.has(1, "rem", relation::self));
    EXPECT_FALSE(kvs.has(2, "glob", relation::same_node));

    auto local = kvs.visible_data(1, relation::same_node);
    ASSERT_TRUE(local.ok());
    EXPECT_EQ(local->size(), 2u);
    EXPECT_NE(find(local.value(), "loc"), nullptr);
    EXPECT_EQ(find(local.value(), "rem"), nullptr);
}

// A fence's contribution when every node holds what came before: only what was committed after a
// generation, a replaced key included, and no job data.
TEST(KvStore, CommittedSinceAGeneration) {
    kv_store kvs;
    auto job = make_infos(1);
    uint32_t one = 1, two = 2;
    set_info(job[0], "job.key", &one, PMIX_UINT32);
    ASSERT_TRUE(kvs.add_job_data(0, job.data(), job.size()).ok());
    auto a = make_infos(2);
    set_info(a[0], "k.a", &one, PMIX_UINT32);
    set_info(a[1], "k.b", &one, PMIX_UINT32);
    const uint8_t scopes[2] = {PMIX_GLOBAL, PMIX_GLOBAL};
    ASSERT_TRUE(kvs.commit(0, scopes, a.data(), a.size()).ok());
    const uint64_t base = kvs.generation();
    EXPECT_TRUE(kvs.visible_view(0, relation::other_node, false, base).empty());
    auto b = make_infos(2);
    set_info(b[0], "k.b", &two, PMIX_UINT32);  // replaced
    set_info(b[1], "k.c", &two, PMIX_UINT32);  // new
    ASSERT_TRUE(kvs.commit(0, scopes, b.data(), b.size()).ok());
    auto since = kvs.visible_data(0, relation::other_node, true, base);
    ASSERT_TRUE(since.ok());
    ASSERT_EQ(since->size(), 2u);
    ASSERT_NE(find(since.value(), "k.b"), nullptr);
    EXPECT_EQ(find(since.value(), "k.b")->value.data.uint32, 2u);
    EXPECT_NE(find(since.value(), "k.c"), nullptr);
    EXPECT_EQ(find(since.value(), "k.a"), nullptr);
    EXPECT_EQ(find(since.value(), "job.key"), nullptr);
    auto all = kvs.visible_data(0, relation::other_node, false);
    ASSERT_TRUE(all.ok());
    EXPECT_EQ(all->size(), 3u);
}

TEST(KvStore, LaterCommitReplacesAndJobDataIsShared) {
    kv_store kvs;
    auto job = make_infos(1);
    set_info(job[0], PMIX_HOSTNAME, "n1", PMIX_STRING);
    ASSERT_TRUE(kvs.add_job_data(0, job.data(), job.size()).ok());
    EXPECT_TRUE(kvs.has(0, PMIX_HOSTNAME, relation::other_node));
    EXPECT_FALSE(kvs.has_committed(0));

    auto a = make_infos(1);
    set_info(a[0], "k", "first", PMIX_STRING);
    uint8_t g = PMIX_GLOBAL;
    ASSERT_TRUE(kvs.commit(0, &g, a.data(), 1).ok());
    auto b = make_infos(1);
    set_info(b[0], "k", "second", PMIX_STRING);
    ASSERT_TRUE(kvs.commit(0, &g, b.data(), 1).ok());
    auto data = kvs.visible_data(0, relation::same_node);
    ASSERT_TRUE(data.ok());
    ASSERT_EQ(data->size(), 2u);
    const pmix_info_t *k = find(data.value(), "k");
    ASSERT_NE(k, nullptr);
    EXPECT_STREQ(k->value.data.string, "second");
}

TEST(KvStore, BadScopeChangesNothing) {
    kv_store kvs;
    auto a = make_infos(2);
    uint32_t v = 1;
    set_info(a[0], "ok", &v, PMIX_UINT32);
    set_info(a[1], "bad", &v, PMIX_UINT32);
    uint8_t scopes[] = {PMIX_GLOBAL, 9};
    Status st = kvs.commit(0, scopes, a.data(), 2);
    EXPECT_EQ(st.code(), PMIX_ERR_BAD_PARAM);
    EXPECT_FALSE(kvs.has(0, "ok", relation::self));
    EXPECT_EQ(kvs.generation(), 0u);  // a refused commit is no change
}

namespace {
// One segment of a snapshot, read back through its descriptor and parsed.
std::vector<uint8_t> read_segment(const modex_snapshot &snap, size_t i) {
    auto [offset, length] = snap.segments.at(i);
    std::vector<uint8_t> bytes(length);
    EXPECT_EQ(pread(snap.fd->get(), bytes.data(), bytes.size(), static_cast<off_t>(offset)),
              static_cast<ssize_t>(bytes.size()));
    return bytes;
}

bool segment_has(const modex_snapshot &snap, size_t i, uint32_t rank, const char *key, uint32_t *value = nullptr) {
    auto bytes = read_segment(snap, i);
    auto view = wire::snapshot_view::parse(bytes);
    EXPECT_TRUE(view.ok()) << view.status().message();
    if (!view.ok()) return false;
    pmix_value_t got;
    PMIX_VALUE_CONSTRUCT(&got);
    if (!view->value(rank, key, &got).ok()) return false;
    if (value != nullptr) *value = got.data.uint32;
    value_destruct(&got);
    return true;
}
}  // namespace

// The snapshot is a log in a sealed memory file: the first is whole, each change after it appends
// a segment with only what changed, a fence that brought nothing new leaves it as it was. No one
// but the server's own mapping can write it, grow it or shrink it.
TEST(ModexSnapshot, SegmentsOfWhatChangedInASealedFile) {
    modex_snapshot_writer w({0, 0}, 0);
    kv_store kvs;
    auto a = make_infos(1);
    uint32_t v = 1;
    set_info(a[0], "k", &v, PMIX_UINT32);
    uint8_t scope[] = {PMIX_GLOBAL};
    ASSERT_TRUE(kvs.commit(0, scope, a.data(), 1).ok());
    auto first = w.write(kvs);
    ASSERT_TRUE(first.ok()) << first.status().message();
    ASSERT_TRUE(first->fd);
    ASSERT_EQ(first->segments.size(), 1u);
    const int fd = first->fd->get();
    const int seals = fcntl(fd, F_GET_SEALS);
    const int want = F_SEAL_FUTURE_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL;
    EXPECT_EQ(seals & want, want);
    EXPECT_EQ(pwrite(fd, "x", 1, 0), -1);
    EXPECT_EQ(ftruncate(fd, 0), -1);
    EXPECT_EQ(ftruncate(fd, 1 << 30), -1);
    EXPECT_EQ(fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE), -1);  // nor can a client stop the server's writes
    EXPECT_EQ(mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), MAP_FAILED);
    void *ro = mmap(nullptr, 4096, PROT_READ, MAP_SHARED, fd, 0);
    ASSERT_NE(ro, MAP_FAILED);
    EXPECT_NE(mprotect(ro, 4096, PROT_READ | PROT_WRITE), 0);
    munmap(ro, 4096);
    uint32_t got = 0;
    EXPECT_TRUE(segment_has(*first, 0, 0, "k", &got));
    EXPECT_EQ(got, 1u);

    auto again = w.write(kvs);  // nothing new
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->id, first->id);
    EXPECT_EQ(again->segments, first->segments);

    v = 2;
    set_info(a[0], "k", &v, PMIX_UINT32);
    ASSERT_TRUE(kvs.commit(1, scope, a.data(), 1).ok());
    auto next = w.write(kvs);
    ASSERT_TRUE(next.ok());
    EXPECT_EQ(next->id, first->id);  // the same file
    EXPECT_EQ(next->fd, first->fd);
    ASSERT_EQ(next->segments.size(), 2u);
    EXPECT_EQ(next->segments[0], first->segments[0]);  // written once, never again
    EXPECT_GE(next->segments[1].first, next->segments[0].first + next->segments[0].second);
    EXPECT_TRUE(segment_has(*next, 1, 1, "k", &got));
    EXPECT_EQ(got, 2u);
    EXPECT_FALSE(segment_has(*next, 1, 0, "k"));  // rank 0 did not change

    // Data forgotten, or a key that became invisible to the node: a segment cannot say so, the
    // next snapshot is whole, in a new file.
    kvs.forget_committed(1);
    auto after_forget = w.write(kvs);
    ASSERT_TRUE(after_forget.ok());
    EXPECT_NE(after_forget->id, next->id);
    ASSERT_EQ(after_forget->segments.size(), 1u);
    EXPECT_TRUE(segment_has(*after_forget, 0, 0, "k"));
    EXPECT_FALSE(segment_has(*after_forget, 0, 1, "k"));
    uint8_t remote[] = {PMIX_REMOTE};
    ASSERT_TRUE(kvs.commit(0, remote, a.data(), 1).ok());
    auto hidden = w.write(kvs);
    ASSERT_TRUE(hidden.ok());
    EXPECT_NE(hidden->id, after_forget->id);
    EXPECT_FALSE(segment_has(*hidden, 0, 0, "k"));

    // Many segments: the next one is whole again.
    std::string id = hidden->id;
    size_t segments = hidden->segments.size();
    for (uint32_t i = 0; i < modex_snapshot_writer::kMaxSegments + 1; ++i) {
        v = 10 + i;
        set_info(a[0], "k", &v, PMIX_UINT32);
        ASSERT_TRUE(kvs.commit(1, scope, a.data(), 1).ok());
        auto s = w.write(kvs);
        ASSERT_TRUE(s.ok());
        EXPECT_LE(s->segments.size(), modex_snapshot_writer::kMaxSegments);
        if (s->id != id) {
            EXPECT_EQ(s->segments.size(), 1u);
            EXPECT_EQ(segments, modex_snapshot_writer::kMaxSegments);
            EXPECT_TRUE(segment_has(*s, 0, 1, "k", &got));
            EXPECT_EQ(got, v);
        }
        id = s->id;
        segments = s->segments.size();
    }
}

// --- fence_tracker -------------------------------------------------------------------------

namespace {
struct counting_remote : remote_fences {
    int started = 0;
    Status start(uint64_t, const std::vector<uint32_t> &, bool) override {
        ++started;
        return Status::success();
    }
};
}  // namespace

TEST(FenceTracker, CompletesWhenAllLocalRanksEnter) {
    fence_tracker t("ns", 3, {0, 1, 2}, nullptr);
    auto all = t.normalise({});
    ASSERT_TRUE(all.ok());
    EXPECT_TRUE(t.enter(all.value(), {10, 1, 0}, false, std::nullopt).empty());
    EXPECT_TRUE(t.enter(all.value(), {11, 1, 1}, false, std::nullopt).empty());
    auto out = t.enter(all.value(), {12, 1, 2}, true, std::nullopt);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].status, PMIX_SUCCESS);
    EXPECT_EQ(out[0].waiters.size(), 3u);
    EXPECT_EQ(t.pending(), 0u);
}

TEST(FenceTracker, DistinctSetsInFlightAndRepeatedEntries) {
    fence_tracker t("ns", 4, {0, 1, 2, 3}, nullptr);
    auto pair01 = t.normalise({1, 0, 1}).value();
    ASSERT_EQ(pair01, (std::vector<uint32_t>{0, 1}));
    auto all = t.normalise({PMIX_RANK_WILDCARD}).value();
    EXPECT_TRUE(t.enter(all, {1, 1, 0}, false, std::nullopt).empty());
    EXPECT_TRUE(t.enter(pair01, {1, 2, 0}, false, std::nullopt).empty());
    EXPECT_TRUE(t.enter(pair01, {1, 3, 0}, false, std::nullopt).empty());  // second instance of {0,1}
    EXPECT_EQ(t.pending(), 3u);
    auto done = t.enter(pair01, {2, 2, 1}, false, std::nullopt);
    ASSERT_EQ(done.size(), 1u);
    EXPECT_EQ(done[0].waiters[0].request_id, 2u);  // the first instance completes first
    done = t.enter(pair01, {2, 3, 1}, false, std::nullopt);
    ASSERT_EQ(done.size(), 1u);
    EXPECT_EQ(done[0].waiters[0].request_id, 3u);
    EXPECT_EQ(t.pending(), 1u);
}

TEST(FenceTracker, DeadRankFailsPendingAndLaterFences) {
    fence_tracker t("ns", 2, {0, 1}, nullptr);
    auto all = t.normalise({}).value();
    EXPECT_TRUE(t.enter(all, {1, 5, 0}, false, std::nullopt).empty());
    auto out = t.rank_gone(1, PMIX_ERR_PROC_ABORTED);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].status, PMIX_ERR_PROC_ABORTED);
    ASSERT_EQ(out[0].waiters.size(), 1u);
    EXPECT_EQ(out[0].waiters[0].request_id, 5u);
    out = t.enter(all, {1, 6, 0}, false, std::nullopt);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].status, PMIX_ERR_PROC_ABORTED);
    t.rank_back(1);
    EXPECT_TRUE(t.enter(all, {1, 7, 0}, false, std::nullopt).empty());
}

TEST(FenceTracker, TimeoutAndRemoteHook) {
    fence_tracker t("ns", 2, {0, 1}, nullptr);
    auto all = t.normalise({}).value();
    auto now = server_clock::now();
    EXPECT_TRUE(t.enter(all, {1, 1, 0}, false, now + std::chrono::seconds(1)).empty());
    ASSERT_TRUE(t.next_deadline().has_value());
    EXPECT_TRUE(t.expire(now).empty());
    auto out = t.expire(now + std::chrono::seconds(2));
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].status, PMIX_ERR_TIMEOUT);

    no_remote_fences refuse;
    fence_tracker multi("ns", 3, {0, 1}, &refuse);  // rank 2 lives elsewhere
    auto every = multi.normalise({}).value();
    EXPECT_TRUE(multi.enter(every, {1, 1, 0}, false, std::nullopt).empty());
    out = multi.enter(every, {1, 2, 1}, false, std::nullopt);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].status, PMIX_ERR_NOT_SUPPORTED);

    counting_remote remote;
    fence_tracker hooked("ns", 3, {0, 1}, &remote);
    EXPECT_TRUE(hooked.enter(every, {1, 1, 0}, false, std::nullopt).empty());
    EXPECT_TRUE(hooked.enter(every, {1, 2, 1}, false, std::nullopt).empty());
    EXPECT_EQ(remote.started, 1);
    out = hooked.remote_done(1, PMIX_SUCCESS, "");
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].waiters.size(), 2u);
}

TEST(FenceTracker, RejectsNonParticipantsAndBadRanks) {
    fence_tracker t("ns", 3, {0, 1, 2}, nullptr);
    EXPECT_FALSE(t.normalise({5}).ok());
    auto out = t.enter(t.normalise({0, 1}).value(), {1, 1, 2}, false, std::nullopt);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].status, PMIX_ERR_BAD_PARAM);
    EXPECT_EQ(t.pending(), 0u);
}

// --- get_waits -----------------------------------------------------------------------------

TEST(GetWaits, ReadyTargetConnectionAndTimeout) {
    get_waits g;
    auto now = server_clock::now();
    g.add({1, 1, 0, 1, "a", std::nullopt});
    g.add({1, 2, 0, 1, "b", std::nullopt});
    g.add({2, 3, 2, 1, "a", now + std::chrono::seconds(1)});
    g.add({3, 4, 0, 2, "x", std::nullopt});
    auto ready = g.take_ready(1, [](const get_waiter &w) { return w.key == "a"; });
    EXPECT_EQ(ready.size(), 2u);
    EXPECT_EQ(g.size(), 2u);
    EXPECT_EQ(g.drop_connection(3), 1u);
    g.add({2, 5, 2, 1, "c", now + std::chrono::seconds(1)});
    EXPECT_EQ(g.take_expired(now + std::chrono::seconds(2)).size(), 1u);
    EXPECT_EQ(g.take_target(1).size(), 1u);
    EXPECT_EQ(g.size(), 0u);
}

// --- job data ------------------------------------------------------------------------------

namespace {
step_info sample_step() {
    step_info s;
    s.nspace = make_namespace(42, 3);
    s.job_id = 42;
    s.step_id = 3;
    s.ntasks = 5;
    s.node_id = 1;
    s.node_names = {"n1", "n2"};
    s.node_ranks = {{0, 1, 2}, {3, 4}};
    s.universe_size = 5;
    s.step_dir = "/tmp/stepdir";
    s.server_socket = "/tmp/stepdir/server.sock";
    return s;
}

const pmix_info_t *entry_key(const std::vector<wire::jobdata_entry> &e, uint32_t rank, const char *key) {
    for (const auto &x : e)
        if (x.rank == rank) return find(x.infos, key);
    return nullptr;
}
}  // namespace

TEST(JobData, KeysAndTypesMatchTheOpenMpiContract) {
    node_topology topo{"0-1", "SK0:L30:L20-1:L10-1:CR0-1:HT0-1", 0};
    auto e = build_jobdata(sample_step(), topo);
    ASSERT_TRUE(e.ok()) << e.status().message();
    ASSERT_EQ(e->size(), 6u);
    const uint32_t W = PMIX_RANK_WILDCARD;
    struct {
        uint32_t rank;
        const char *key;
        pmix_data_type_t type;
    } expect[] = {
        {W, PMIX_JOB_SIZE, PMIX_UINT32},     {W, PMIX_MAX_PROCS, PMIX_UINT32},   {W, PMIX_UNIV_SIZE, PMIX_UINT32},
        {W, PMIX_LOCAL_SIZE, PMIX_UINT32},   {W, PMIX_LOCAL_PEERS, PMIX_STRING}, {W, PMIX_NUM_NODES, PMIX_UINT32},
        {W, PMIX_TMPDIR, PMIX_STRING},       {W, PMIX_NSDIR, PMIX_STRING},       {W, PMIX_TDIR_RMCLEAN, PMIX_BOOL},
        {W, "slurm.jobid", PMIX_UINT32},     {W, "slurm.stepid", PMIX_UINT32},   {W, PMIX_NODE_MAP, PMIX_STRING},
        {W, PMIX_PROC_MAP, PMIX_STRING},     {W, PMIX_ANL_MAP, PMIX_STRING},     {W, PMIX_JOBID, PMIX_STRING},
        {3, PMIX_LOCAL_RANK, PMIX_UINT16},   {3, PMIX_NODE_RANK, PMIX_UINT16},   {3, PMIX_APPNUM, PMIX_UINT32},
        {3, PMIX_LOCALITY_STRING, PMIX_STRING}, {3, PMIX_CPUSET, PMIX_STRING},   {3, PMIX_PROCDIR, PMIX_STRING},
        {0, PMIX_HOSTNAME, PMIX_STRING},     {0, PMIX_NODEID, PMIX_UINT32},      {0, PMIX_LOCAL_RANK, PMIX_UINT16},
        {4, PMIX_GLOBAL_RANK, PMIX_PROC_RANK},
    };
    for (const auto &x : expect) {
        const pmix_info_t *i = entry_key(e.value(), x.rank, x.key);
        ASSERT_NE(i, nullptr) << x.key << " of rank " << x.rank;
        EXPECT_EQ(i->value.type, x.type) << x.key;
    }
    EXPECT_STREQ(entry_key(e.value(), W, PMIX_LOCAL_PEERS)->value.data.string, "3,4");
    ASSERT_NE(entry_key(e.value(), W, PMIX_SERVER_URI), nullptr);
    EXPECT_STREQ(entry_key(e.value(), W, PMIX_SERVER_URI)->value.data.string, "unix:/tmp/stepdir/server.sock");
    ASSERT_NE(entry_key(e.value(), W, PMIX_MYSERVER_URI), nullptr);
    EXPECT_EQ(entry_key(e.value(), W, PMIX_LOCAL_SIZE)->value.data.uint32, 2u);
    EXPECT_STREQ(entry_key(e.value(), 1, PMIX_HOSTNAME)->value.data.string, "n1");
    EXPECT_EQ(entry_key(e.value(), 1, PMIX_LOCAL_RANK)->value.data.uint16, 1);
    EXPECT_EQ(entry_key(e.value(), 4, PMIX_NODE_RANK)->value.data.uint16, 1);
    EXPECT_EQ(entry_key(e.value(), 1, PMIX_LOCALITY_STRING), nullptr);  // remote: no locality
    EXPECT_STREQ(entry_key(e.value(), W, PMIX_PROC_MAP)->value.data.string, "0,1,2;3,4");
    EXPECT_STREQ(entry_key(e.value(), W, PMIX_ANL_MAP)->value.data.string, "(vector,(0,1,3),(1,1,2))");

    auto bytes = wire::encode_jobdata(e.value());
    ASSERT_TRUE(bytes.ok());
    std::vector<wire::jobdata_entry> back;
    ASSERT_TRUE(wire::decode_jobdata(bytes.value(), &back).ok());
    EXPECT_EQ(back.size(), 6u);
}

TEST(JobData, SeveralAppsNumberTheRanksInOrder) {
    step_info s = sample_step();
    s.job_env = {"PMIXCPP_SPAWN_APP_SIZES=2,3"};
    auto e = build_jobdata(s, {});
    ASSERT_TRUE(e.ok()) << e.status().message();
    const uint32_t W = PMIX_RANK_WILDCARD;
    EXPECT_EQ(entry_key(e.value(), W, PMIX_JOB_NUM_APPS)->value.data.uint32, 2u);
    const uint32_t appnum[] = {0, 0, 1, 1, 1}, apprank[] = {0, 1, 0, 1, 2}, ldr[] = {0, 0, 2, 2, 2},
                   size[] = {2, 2, 3, 3, 3};
    for (uint32_t r = 0; r < 5; ++r) {
        EXPECT_EQ(entry_key(e.value(), r, PMIX_APPNUM)->value.data.uint32, appnum[r]) << r;
        EXPECT_EQ(entry_key(e.value(), r, PMIX_APP_RANK)->value.data.rank, apprank[r]) << r;
        EXPECT_EQ(entry_key(e.value(), r, PMIX_APPLDR)->value.data.rank, ldr[r]) << r;
        EXPECT_EQ(entry_key(e.value(), r, PMIX_APP_SIZE)->value.data.uint32, size[r]) << r;
    }
    // sizes that do not add up to the step (or are malformed) are one app
    for (const char *bad : {"PMIXCPP_SPAWN_APP_SIZES=2,2", "PMIXCPP_SPAWN_APP_SIZES=2,x3", "PMIXCPP_SPAWN_APP_SIZES=0,5"}) {
        s.job_env = {bad};
        e = build_jobdata(s, {});
        ASSERT_TRUE(e.ok());
        EXPECT_EQ(entry_key(e.value(), W, PMIX_JOB_NUM_APPS)->value.data.uint32, 1u) << bad;
        EXPECT_EQ(entry_key(e.value(), 4, PMIX_APPNUM)->value.data.uint32, 0u) << bad;
        EXPECT_EQ(entry_key(e.value(), 4, PMIX_APP_RANK)->value.data.rank, 4u) << bad;
    }
}

TEST(JobData, ServersOfOneNodeShareItsNodeData) {
    // A heterogeneous step whose components share n1: two servers there (0 and 2), one on n2.
    step_info s = sample_step();
    s.ntasks = 6;
    s.node_names = {"n1", "n2", "n1"};
    s.node_ranks = {{0, 1}, {2, 3}, {4, 5}};
    s.node_id = 2;
    s.app_of_rank = {0, 0, 0, 0, 1, 1};
    s.app_argv = {"./a", "./b x"};
    auto e = build_jobdata(s, {});
    ASSERT_TRUE(e.ok()) << e.status().message();
    const uint32_t W = PMIX_RANK_WILDCARD;
    EXPECT_EQ(entry_key(e.value(), W, PMIX_NUM_NODES)->value.data.uint32, 2u);
    EXPECT_STREQ(entry_key(e.value(), W, PMIX_NODE_LIST)->value.data.string, "n1,n2");
    EXPECT_STREQ(entry_key(e.value(), W, PMIX_PROC_MAP)->value.data.string, "0,1,4,5;2,3");
    EXPECT_STREQ(entry_key(e.value(), W, PMIX_LOCAL_PEERS)->value.data.string, "0,1,4,5");
    EXPECT_EQ(entry_key(e.value(), W, PMIX_LOCAL_SIZE)->value.data.uint32, 4u);
    EXPECT_EQ(entry_key(e.value(), W, PMIX_NODEID)->value.data.uint32, 0u);
    EXPECT_EQ(entry_key(e.value(), W, PMIX_LOCALLDR)->value.data.rank, 0u);
    const uint16_t lrank[] = {0, 1, 0, 1, 2, 3};
    const uint32_t nodeid[] = {0, 0, 1, 1, 0, 0};
    for (uint32_t r = 0; r < 6; ++r) {
        EXPECT_EQ(entry_key(e.value(), r, PMIX_LOCAL_RANK)->value.data.uint16, lrank[r]) << r;
        EXPECT_EQ(entry_key(e.value(), r, PMIX_NODEID)->value.data.uint32, nodeid[r]) << r;
    }
    EXPECT_NE(entry_key(e.value(), 0, PMIX_PROCDIR), nullptr);  // a local peer of another server
    EXPECT_EQ(entry_key(e.value(), 2, PMIX_PROCDIR), nullptr);
    // the components are the apps
    EXPECT_EQ(entry_key(e.value(), W, PMIX_JOB_NUM_APPS)->value.data.uint32, 2u);
    EXPECT_EQ(entry_key(e.value(), 5, PMIX_APPNUM)->value.data.uint32, 1u);
    EXPECT_EQ(entry_key(e.value(), 5, PMIX_APP_RANK)->value.data.rank, 1u);
    EXPECT_EQ(entry_key(e.value(), 5, PMIX_APPLDR)->value.data.rank, 4u);
    EXPECT_EQ(entry_key(e.value(), 5, PMIX_APP_SIZE)->value.data.uint32, 2u);
    EXPECT_EQ(entry_key(e.value(), 3, PMIX_APP_SIZE)->value.data.uint32, 4u);
    EXPECT_STREQ(entry_key(e.value(), 4, PMIX_APP_ARGV)->value.data.string, "./b x");
    EXPECT_STREQ(entry_key(e.value(), 0, PMIX_APP_ARGV)->value.data.string, "./a");
}

TEST(JobData, AppsNeedNotBeContiguous) {
    // --multi-prog "0,3 ./a" / "* ./b": app 0 = ranks 0 and 3, app 1 = ranks 1, 2, 4
    step_info s = sample_step();
    s.app_of_rank = {0, 1, 1, 0, 1};
    auto e = build_jobdata(s, {});
    ASSERT_TRUE(e.ok()) << e.status().message();
    const uint32_t apprank[] = {0, 0, 1, 1, 2}, ldr[] = {0, 1, 1, 0, 1}, size[] = {2, 3, 3, 2, 3};
    for (uint32_t r = 0; r < 5; ++r) {
        EXPECT_EQ(entry_key(e.value(), r, PMIX_APP_RANK)->value.data.rank, apprank[r]) << r;
        EXPECT_EQ(entry_key(e.value(), r, PMIX_APPLDR)->value.data.rank, ldr[r]) << r;
        EXPECT_EQ(entry_key(e.value(), r, PMIX_APP_SIZE)->value.data.uint32, size[r]) << r;
    }
    s.app_of_rank = {0, 2, 2, 0, 2};  // app 1 has no rank
    EXPECT_FALSE(build_jobdata(s, {}).ok());
}

TEST(JobData, RejectsBrokenMaps) {
    step_info s = sample_step();
    s.node_ranks = {{0, 1}, {3, 4}};  // rank 2 nowhere
    EXPECT_FALSE(build_jobdata(s, {}).ok());
    s.node_ranks = {{0, 1, 2}, {3, 9}};
    EXPECT_FALSE(build_jobdata(s, {}).ok());
    s.node_ranks = {{0, 1, 2}, {2, 3, 4}};  // rank 2 on two nodes
    EXPECT_FALSE(build_jobdata(s, {}).ok());
}

// --- checkpoint_methods, heartbeat_monitors -------------------------------------------------

namespace {

pmix_value_t method_value(std::vector<pmix_info_t> &infos) {
    static pmix_data_array_t darray;
    darray.type = PMIX_INFO;
    darray.size = infos.size();
    darray.array = infos.data();
    pmix_value_t v{};
    v.type = PMIX_DATA_ARRAY;
    v.data.darray = &darray;
    return v;
}

pmix_info_t int_info(const char *key, int n, pmix_data_type_t type) {
    pmix_info_t i{};
    strncpy(i.key, key, PMIX_MAX_KEYLEN);
    i.value.type = type;
    if (type == PMIX_STATUS) i.value.data.status = n;
    else if (type == PMIX_BOOL) i.value.data.flag = n != 0;
    else i.value.data.integer = n;
    return i;
}

}  // namespace

TEST(JobControls, CheckpointMethods) {
    checkpoint_methods j(4);
    EXPECT_EQ(j.method_of(1), nullptr);
    std::vector<pmix_info_t> sig{int_info(PMIX_JOB_CTRL_CHECKPOINT_SIGNAL, 12, PMIX_INT)};
    ASSERT_TRUE(j.set_checkpoint_method(1, method_value(sig)).ok());
    ASSERT_NE(j.method_of(1), nullptr);
    EXPECT_EQ(j.method_of(1)->signal, 12);
    EXPECT_EQ(j.method_of(1)->event, PMIX_SUCCESS);

    std::vector<pmix_info_t> both{int_info(PMIX_JOB_CTRL_CHECKPOINT_SIGNAL, 10, PMIX_INT),
                                  int_info(PMIX_JOB_CTRL_CHECKPOINT_EVENT, PMIX_JCTRL_CHECKPOINT, PMIX_STATUS)};
    ASSERT_TRUE(j.set_checkpoint_method(2, method_value(both)).ok());
    EXPECT_EQ(j.method_of(2)->event, PMIX_JCTRL_CHECKPOINT);
    std::vector<pmix_info_t> flag{int_info(PMIX_JOB_CTRL_CHECKPOINT_EVENT, 1, PMIX_BOOL)};
    ASSERT_TRUE(j.set_checkpoint_method(3, method_value(flag)).ok());
    EXPECT_EQ(j.method_of(3)->event, PMIX_JCTRL_CHECKPOINT);

    std::vector<pmix_info_t> bad{int_info(PMIX_JOB_CTRL_CHECKPOINT_SIGNAL, 70, PMIX_INT)};
    EXPECT_EQ(j.set_checkpoint_method(0, method_value(bad)).code(), PMIX_ERR_BAD_PARAM);
    std::vector<pmix_info_t> none{int_info(PMIX_JOB_CTRL_CHECKPOINT_EVENT, 0, PMIX_BOOL)};
    EXPECT_EQ(j.set_checkpoint_method(0, method_value(none)).code(), PMIX_ERR_BAD_PARAM);
    pmix_value_t str{};
    str.type = PMIX_STRING;
    str.data.string = const_cast<char *>("signal");
    EXPECT_EQ(j.set_checkpoint_method(0, str).code(), PMIX_ERR_BAD_PARAM);
    pmix_value_t undef{};
    EXPECT_EQ(j.set_checkpoint_method(0, undef).code(), PMIX_ERR_NOT_FOUND);
    EXPECT_EQ(j.set_checkpoint_method(9, method_value(sig)).code(), PMIX_ERR_BAD_PARAM);
    EXPECT_EQ(j.method_of(0), nullptr);

    j.rank_gone(1);
    EXPECT_EQ(j.method_of(1), nullptr);
}

TEST(JobControls, HeartbeatTripsOnceAndRearms) {
    heartbeat_monitors j(3);
    auto t0 = server_clock::now();
    EXPECT_FALSE(j.next_deadline());
    EXPECT_FALSE(j.beat(0, t0));  // no monitor
    ASSERT_TRUE(j.add_heartbeat(0, "a", 2, 1, PMIX_MONITOR_HEARTBEAT_ALERT, t0).ok());
    ASSERT_TRUE(j.add_heartbeat(1, "b", 1, 0, PMIX_SUCCESS, t0).ok());  // default code
    EXPECT_EQ(j.monitors(), 2u);
    ASSERT_TRUE(j.next_deadline());
    EXPECT_EQ(*j.next_deadline(), t0 + std::chrono::seconds(1));

    EXPECT_TRUE(j.expire(t0 + std::chrono::milliseconds(900)).empty());
    auto a = j.expire(t0 + std::chrono::seconds(1));
    ASSERT_EQ(a.size(), 1u);
    EXPECT_EQ(a[0].rank, 1u);
    EXPECT_EQ(a[0].id, "b");
    EXPECT_EQ(a[0].code, PMIX_MONITOR_HEARTBEAT_ALERT);
    EXPECT_TRUE(j.expire(t0 + std::chrono::seconds(2)).empty());  // tripped once, not again

    // rank 0 beats in time: 2 s period, 1 drop = 4 s of silence allowed
    EXPECT_TRUE(j.beat(0, t0 + std::chrono::seconds(3)));
    EXPECT_TRUE(j.expire(t0 + std::chrono::seconds(6)).empty());
    a = j.expire(t0 + std::chrono::seconds(7));
    ASSERT_EQ(a.size(), 1u);
    EXPECT_EQ(a[0].rank, 0u);
    EXPECT_EQ(a[0].silent_sec, 4u);

    // a beat re-arms a tripped monitor
    EXPECT_TRUE(j.beat(1, t0 + std::chrono::seconds(8)));
    EXPECT_EQ(j.expire(t0 + std::chrono::seconds(9)).size(), 1u);

    EXPECT_EQ(j.cancel(0, "nope"), 0u);
    EXPECT_EQ(j.cancel(0, "a"), 1u);
    j.rank_gone(1);
    EXPECT_EQ(j.monitors(), 0u);
    EXPECT_FALSE(j.next_deadline());
}

TEST(JobControls, HeartbeatLimits) {
    heartbeat_monitors j(1);
    auto t0 = server_clock::now();
    EXPECT_EQ(j.add_heartbeat(0, "x", 0, 0, PMIX_SUCCESS, t0).code(), PMIX_ERR_BAD_PARAM);
    EXPECT_EQ(j.add_heartbeat(0, "x", heartbeat_monitors::kMaxPeriodSec + 1, 0, PMIX_SUCCESS, t0).code(), PMIX_ERR_BAD_PARAM);
    EXPECT_EQ(j.add_heartbeat(1, "x", 1, 0, PMIX_SUCCESS, t0).code(), PMIX_ERR_BAD_PARAM);
    for (size_t i = 0; i < heartbeat_monitors::kMaxMonitorsPerRank; ++i)
        ASSERT_TRUE(j.add_heartbeat(0, "m" + std::to_string(i), 1, 0, PMIX_SUCCESS, t0).ok());
    EXPECT_EQ(j.add_heartbeat(0, "one-more", 1, 0, PMIX_SUCCESS, t0).code(), PMIX_ERR_OUT_OF_RESOURCE);
    ASSERT_TRUE(j.add_heartbeat(0, "m0", 5, 0, PMIX_SUCCESS, t0).ok());  // same id: replaced
    EXPECT_EQ(j.monitors(), heartbeat_monitors::kMaxMonitorsPerRank);
    EXPECT_EQ(j.cancel(0, ""), heartbeat_monitors::kMaxMonitorsPerRank);
}
