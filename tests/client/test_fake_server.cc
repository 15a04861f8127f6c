// The whole client (PMIx_Init .. PMIx_Finalize) against a scripted in-process server speaking
// shared/PROTOCOL.md: job data mapping, server gets and the cache, fences (also concurrent and
// non-blocking), the modex snapshot passed as a descriptor, timeouts, the progress thread, lost
// connections.
#include <gtest/gtest.h>
#include <pmix.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include "wire/frame.h"
#include "wire/messages.h"
#include "wire/snapshot.h"

using namespace pmixcpp;
using namespace std::chrono_literals;

namespace {

InfoArray make_infos(std::vector<std::pair<std::string, std::string>> kv) {
    auto *arr = static_cast<pmix_info_t *>(calloc(kv.size(), sizeof(pmix_info_t)));
    for (size_t i = 0; i < kv.size(); ++i) {
        strncpy(arr[i].key, kv[i].first.c_str(), PMIX_MAX_KEYLEN);
        EXPECT_TRUE(value_load(&arr[i].value, kv[i].second.c_str(), PMIX_STRING).ok());
    }
    return InfoArray(arr, kv.size());
}

// How the scripted server treats fences.
struct FenceScript {
    bool close = false;               // close the connection instead of answering
    bool event_first = false;         // send an event (status -2001) just before the reply
    int event_after_ms = -1;          // >= 0: send an event (status -2002) that long after the reply
    bool snapshot = false;            // answer with a modex snapshot (a sealed memfd): rank 1's
                                      // "snap.key" is "round-<n>" at the n-th fence
    bool withhold_descriptor = false;  // send no descriptor with fences (as to a client with four
                                       // unread): only a snapshot request gets it
};

class FakeServer {
public:
    explicit FakeServer(bool close_on_fence = false) : FakeServer(FenceScript{close_on_fence}) {}
    explicit FakeServer(FenceScript fence) : _fence(fence) {
        char tmpl[] = "/tmp/pmixcpp-client-test-XXXXXX";
        _dir = mkdtemp(tmpl);
        _sock = _dir + "/server.sock";
        std::vector<wire::jobdata_entry> entries(3);
        entries[0].rank = PMIX_RANK_WILDCARD;
        {
            auto *arr = static_cast<pmix_info_t *>(calloc(2, sizeof(pmix_info_t)));
            uint32_t two = 2;
            strcpy(arr[0].key, PMIX_JOB_SIZE);
            EXPECT_TRUE(value_load(&arr[0].value, &two, PMIX_UINT32).ok());
            strcpy(arr[1].key, PMIX_LOCAL_PEERS);
            EXPECT_TRUE(value_load(&arr[1].value, "0,1", PMIX_STRING).ok());
            entries[0].infos = InfoArray(arr, 2);
        }
        for (uint16_t r = 0; r < 2; ++r) {
            auto *arr = static_cast<pmix_info_t *>(calloc(2, sizeof(pmix_info_t)));
            strcpy(arr[0].key, PMIX_HOSTNAME);
            EXPECT_TRUE(value_load(&arr[0].value, "nodeA", PMIX_STRING).ok());
            strcpy(arr[1].key, PMIX_LOCAL_RANK);
            EXPECT_TRUE(value_load(&arr[1].value, &r, PMIX_UINT16).ok());
            entries[r + 1].rank = r;
            entries[r + 1].infos = InfoArray(arr, 2);
        }
        auto bytes = wire::encode_jobdata(entries);
        _jobdata = _dir + "/jobdata";
        std::ofstream(_jobdata, std::ios::binary)
            .write(reinterpret_cast<const char *>(bytes.value().data()),
                   static_cast<std::streamsize>(bytes.value().size()));
        _listen = socket(AF_UNIX, SOCK_STREAM, 0);
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        strcpy(a.sun_path, _sock.c_str());
        EXPECT_EQ(bind(_listen, reinterpret_cast<sockaddr *>(&a), sizeof(a)), 0);
        EXPECT_EQ(listen(_listen, 4), 0);
        _thread = std::thread([this] { serve(); });
        setenv("PMIX_NAMESPACE", "test.ns", 1);
        setenv("PMIX_RANK", "0", 1);
        setenv("PMIXCPP_SERVER_URI", ("unix:" + _sock).c_str(), 1);
        setenv("PMIXCPP_CLIENT_TOKEN", "secret", 1);
    }
    ~FakeServer() {
        shutdown(_listen, SHUT_RDWR);
        close(_listen);
        // A test that failed before PMIx_Finalize left the client connected: end the connection
        // so that the serving thread returns instead of waiting for it.
        {
            std::lock_guard<std::mutex> g(_conn_lock);
            if (_conn >= 0) shutdown(_conn, SHUT_RDWR);
        }
        if (_thread.joinable()) _thread.join();
        if (_snap_map) munmap(_snap_map, 1 << 16);
        if (_snap_fd >= 0) close(_snap_fd);
        std::string cmd = "rm -rf " + _dir;
        (void)system(cmd.c_str());
    }
    int gets() const { return _gets.load(); }
    int snapshot_requests() const { return _snapshot_requests.load(); }
    int commits() const { return _commits.load(); }
    std::string last_key() {
        std::lock_guard<std::mutex> g(_m);
        return _last_key;
    }

private:
    void send_event(int fd, pmix_status_t status) {
        wire::event_notification ev;
        ev.id = ++_events;
        ev.status = status;
        strcpy(ev.source.nspace, "test.ns");
        ev.source.rank = 1;
        ev.range = PMIX_RANGE_NAMESPACE;
        wire::Writer w;
        ASSERT_TRUE(wire::encode(w, ev).ok());
        auto f = wire::encode_frame(static_cast<uint16_t>(wire::msg_type::event), 0, 0, w.data());
        ssize_t n = send(fd, f.value().data(), f.value().size(), MSG_NOSIGNAL);  // the client may be gone
        (void)n;
    }

    void reply(int fd, uint32_t id, pmix_status_t st, const wire::Writer *body = nullptr) {
        wire::Writer w;
        wire::reply_header h;
        h.status = st;
        h.message = st == PMIX_SUCCESS ? "" : "scripted failure";
        (void)wire::encode(w, h);
        if (body) w.put_raw(body->data().data(), body->size());
        auto f = wire::encode_frame(static_cast<uint16_t>(wire::msg_type::reply), 0, id, w.data());
        ssize_t n = send(fd, f.value().data(), f.value().size(), MSG_NOSIGNAL);  // the client may be gone
        (void)n;
    }

    // A fence reply naming the snapshot as the real server does: a sealed memfd that each round
    // appends a segment to (rank 1's "snap.key" = "round-<n>"; the first segment of a file also
    // holds "snap.first"), its descriptor sent with the first reply that names the file only.
    // Round 3 starts a new file.
    void reply_with_snapshot(int fd, uint32_t id, int round) {
        const bool new_file = round == 1 || round == 3;
        std::vector<std::pair<std::string, std::string>> keys = {{"snap.key", "round-" + std::to_string(round)}};
        if (new_file) keys.push_back({"snap.first", "first-" + std::to_string(round)});
        InfoArray data = make_infos(keys);
        auto bytes = wire::encode_snapshot({{1u, &data}});
        ASSERT_TRUE(bytes.ok());
        constexpr size_t kCapacity = 1 << 16;
        if (new_file) {
            if (_snap_map) munmap(_snap_map, kCapacity);
            if (_snap_fd >= 0) close(_snap_fd);
            _snap_fd = memfd_create("fake-modex", MFD_CLOEXEC | MFD_ALLOW_SEALING);
            ASSERT_GE(_snap_fd, 0);
            ASSERT_EQ(ftruncate(_snap_fd, kCapacity), 0);
            void *m = mmap(nullptr, kCapacity, PROT_READ | PROT_WRITE, MAP_SHARED, _snap_fd, 0);
            ASSERT_NE(m, MAP_FAILED);
            _snap_map = static_cast<uint8_t *>(m);
            ASSERT_EQ(fcntl(_snap_fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE | F_SEAL_SEAL), 0);
            _snap_segments.clear();
            _snap_used = 0;
        }
        ASSERT_LE(_snap_used + bytes->size(), kCapacity);
        memcpy(_snap_map + _snap_used, bytes->data(), bytes->size());
        _snap_segments.emplace_back(_snap_used, bytes->size());
        _snap_used = (_snap_used + bytes->size() + 63) / 64 * 64;
        _snap_id = "modex." + std::to_string(round < 3 ? 1 : 3);
        send_snapshot(fd, id, new_file && !_fence.withhold_descriptor);
    }

    // A reply naming the current file and its segments, with the file's descriptor or without.
    void send_snapshot(int fd, uint32_t id, bool with_descriptor) {
        wire::Writer w;
        wire::reply_header h;
        (void)wire::encode(w, h);
        ASSERT_TRUE(w.put_string(_snap_id).ok());
        w.put_u32(static_cast<uint32_t>(_snap_segments.size()));
        for (auto [offset, length] : _snap_segments) {
            w.put_u64(offset);
            w.put_u64(length);
        }
        auto f = wire::encode_frame(static_cast<uint16_t>(wire::msg_type::reply),
                                    with_descriptor ? wire::kFrameFlagDescriptor : 0, id, w.data());
        if (with_descriptor)
            EXPECT_EQ(wire::send_with_descriptor(fd, f.value().data(), f.value().size(), _snap_fd),
                      static_cast<ssize_t>(f.value().size()));
        else
            EXPECT_EQ(send(fd, f.value().data(), f.value().size(), MSG_NOSIGNAL), static_cast<ssize_t>(f.value().size()));
    }

    void serve() {
        int fd = accept(_listen, nullptr, nullptr);
        if (fd < 0) return;
        {
            std::lock_guard<std::mutex> g(_conn_lock);
            _conn = fd;
        }
        wire::FrameReader reader;
        uint8_t buf[65536];
        for (;;) {
            ssize_t n = read(fd, buf, sizeof(buf));
            if (n <= 0) break;
            ASSERT_TRUE(reader.feed(buf, static_cast<size_t>(n)).ok());
            for (;;) {
                auto f = reader.next();
                ASSERT_TRUE(f.ok());
                if (!f.value()) break;
                wire::Frame &fr = *f.value();
                auto type = static_cast<wire::msg_type>(fr.type);
                switch (type) {
                    case wire::msg_type::connect: {
                        wire::connect_request req;
                        ASSERT_TRUE(wire::decode_payload(fr.payload, &req).ok());
                        if (req.token != "secret") {  // like the real server: refuse and close
                            reply(fd, fr.id, PMIX_ERR_NO_PERMISSIONS);
                            close_conn(fd);
                            return;
                        }
                        wire::connect_reply rep;
                        rep.jobdata_path = _jobdata;
                        wire::Writer w;
                        (void)wire::encode(w, rep);
                        reply(fd, fr.id, PMIX_SUCCESS, &w);
                        break;
                    }
                    case wire::msg_type::commit: {
                        wire::commit_request req;
                        ASSERT_TRUE(wire::decode_payload(fr.payload, &req).ok());
                        _commits++;
                        reply(fd, fr.id, PMIX_SUCCESS);
                        break;
                    }
                    case wire::msg_type::get: {
                        wire::get_request req;
                        ASSERT_TRUE(wire::decode_payload(fr.payload, &req).ok());
                        _gets++;
                        {
                            std::lock_guard<std::mutex> g(_m);
                            _last_key = req.key;
                        }
                        if (req.key == "slow") break;  // never answered: the client times out
                        if (req.key == "peer.key" || req.key == "peer.other") {
                            wire::get_reply rep;
                            rep.data = make_infos({{"peer.key", "v1"}, {"peer.other", "v2"}});
                            wire::Writer w;
                            (void)wire::encode(w, rep);
                            reply(fd, fr.id, PMIX_SUCCESS, &w);
                        } else {
                            reply(fd, fr.id, PMIX_ERR_NOT_FOUND);
                        }
                        break;
                    }
                    case wire::msg_type::fence:
                        if (_fence.close) {
                            close_conn(fd);
                            return;
                        }
                        if (_fence.event_first) send_event(fd, -2001);
                        if (_fence.snapshot) {
                            // As the real server: a collecting fence appends a segment; one that
                            // collects nothing (nothing committed on the node) names the same
                            // segments again; a fence before any snapshot names none.
                            wire::fence_request req;
                            ASSERT_TRUE(wire::decode_payload(fr.payload, &req).ok());
                            bool collect = false;
                            for (size_t i = 0; i < req.infos.size(); ++i)
                                if (strcmp(req.infos[i].key, PMIX_COLLECT_DATA) == 0) collect = true;
                            if (collect) reply_with_snapshot(fd, fr.id, ++_fences);
                            else if (_snap_segments.empty()) reply(fd, fr.id, PMIX_SUCCESS);
                            else send_snapshot(fd, fr.id, false);
                            break;
                        }
                        reply(fd, fr.id, PMIX_SUCCESS);
                        if (_fence.event_after_ms >= 0) {
                            std::this_thread::sleep_for(std::chrono::milliseconds(_fence.event_after_ms));
                            send_event(fd, -2002);
                        }
                        break;
                    case wire::msg_type::job_control: {
                        wire::job_control_reply rep;
                        wire::Writer w;
                        (void)wire::encode(w, rep);
                        reply(fd, fr.id, PMIX_SUCCESS, &w);
                        break;
                    }
                    case wire::msg_type::notify: {
                        // Like the real server with the sender in range: answer, then send the
                        // event back unsolicited (request id 0).
                        wire::event_notification ev;
                        ASSERT_TRUE(wire::decode_payload(fr.payload, &ev).ok());
                        reply(fd, fr.id, PMIX_SUCCESS);
                        ev.id = ++_events;
                        wire::Writer w;
                        ASSERT_TRUE(wire::encode(w, ev).ok());
                        auto f = wire::encode_frame(static_cast<uint16_t>(wire::msg_type::event), 0, 0, w.data());
                        ssize_t n = send(fd, f.value().data(), f.value().size(), MSG_NOSIGNAL);  // the client may be gone
                        (void)n;
                        break;
                    }
                    case wire::msg_type::snapshot:
                        _snapshot_requests++;
                        if (_snap_fd >= 0) send_snapshot(fd, fr.id, true);
                        else reply(fd, fr.id, PMIX_ERR_NOT_FOUND);
                        break;
                    default:
                        reply(fd, fr.id, PMIX_SUCCESS);
                        break;
                }
            }
        }
        close_conn(fd);
    }

    void close_conn(int fd) {
        std::lock_guard<std::mutex> g(_conn_lock);
        _conn = -1;
        close(fd);
    }

    FenceScript _fence;
    std::string _dir, _sock, _jobdata;
    int _listen = -1;
    std::thread _thread;
    std::atomic<int> _gets{0}, _commits{0}, _snapshot_requests{0};
    std::mutex _conn_lock;
    int _conn = -1;  // the accepted client connection, until serve() closes it
    uint64_t _events = 0;
    int _fences = 0;
    int _snap_fd = -1;
    uint8_t *_snap_map = nullptr;
    size_t _snap_used = 0;
    std::vector<std::pair<uint64_t, uint64_t>> _snap_segments;
    std::string _snap_id;
    std::mutex _m;
    std::string _last_key;
};

pmix_proc_t peer1() {
    pmix_proc_t p{};
    strcpy(p.nspace, "test.ns");
    p.rank = 1;
    return p;
}

}  // namespace

TEST(FakeServer, InitGetCacheFenceFinalize) {
    FakeServer server;
    pmix_proc_t me;
    ASSERT_EQ(PMIx_Init(&me, nullptr, 0), PMIX_SUCCESS);
    EXPECT_STREQ(me.nspace, "test.ns");
    EXPECT_EQ(me.rank, 0u);
    EXPECT_EQ(PMIx_Initialized(), 1);

    // Job data: local, no server round trip.
    pmix_value_t *v = nullptr;
    pmix_proc_t wild = me;
    wild.rank = PMIX_RANK_WILDCARD;
    ASSERT_EQ(PMIx_Get(&wild, PMIX_JOB_SIZE, nullptr, 0, &v), PMIX_SUCCESS);
    EXPECT_EQ(v->type, PMIX_UINT32);
    EXPECT_EQ(v->data.uint32, 2u);
    PMIX_VALUE_RELEASE(v);
    pmix_proc_t p1 = peer1();
    ASSERT_EQ(PMIx_Get(&p1, PMIX_HOSTNAME, nullptr, 0, &v), PMIX_SUCCESS);
    EXPECT_STREQ(v->data.string, "nodeA");
    PMIX_VALUE_RELEASE(v);
    EXPECT_EQ(server.gets(), 0);

    // A local Get costs a hash lookup and the copy of the value (target: well under 1 us).
    {
        constexpr int kIters = 200000;
        auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < kIters; ++i) {
            pmix_value_t *x = nullptr;
            if (PMIx_Get(&p1, PMIX_HOSTNAME, nullptr, 0, &x) != PMIX_SUCCESS) break;
            PMIX_VALUE_RELEASE(x);
        }
        auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0)
                      .count();
        double per_get = static_cast<double>(ns) / kIters;
        RecordProperty("local_get_ns", static_cast<int>(per_get));
        printf("local PMIx_Get: %.0f ns per call\n", per_get);
        EXPECT_LT(per_get, 20000.0);  // loose: sanitizer and loaded CI builds
    }

    // Server get; the reply carries all of the peer's data, which is cached.
    ASSERT_EQ(PMIx_Get(&p1, "peer.key", nullptr, 0, &v), PMIX_SUCCESS);
    EXPECT_STREQ(v->data.string, "v1");
    PMIX_VALUE_RELEASE(v);
    EXPECT_EQ(server.gets(), 1);
    ASSERT_EQ(PMIx_Get(&p1, "peer.other", nullptr, 0, &v), PMIX_SUCCESS);
    PMIX_VALUE_RELEASE(v);
    EXPECT_EQ(server.gets(), 1);  // from the cache
    EXPECT_EQ(PMIx_Get(&p1, "missing", nullptr, 0, &v), PMIX_ERR_NOT_FOUND);
    EXPECT_EQ(server.gets(), 2);
    pmix_info_t opt;
    bool t = true;
    PMIX_INFO_LOAD(&opt, PMIX_OPTIONAL, &t, PMIX_BOOL);
    EXPECT_EQ(PMIx_Get(&p1, "missing", &opt, 1, &v), PMIX_ERR_NOT_FOUND);
    EXPECT_EQ(server.gets(), 2);  // optional: local only
    // Reserved are the standard's attribute names, not every key starting with "pmix": a user
    // key built from a namespace such as "pmixjob.1-1-local" is asked of the server...
    EXPECT_EQ(PMIx_Get(&p1, "pmixjob.1-1-local", nullptr, 0, &v), PMIX_ERR_NOT_FOUND);
    EXPECT_EQ(server.gets(), 3);
    // ... a standard attribute the job data does not hold is answered locally
    EXPECT_EQ(PMIx_Get(&p1, PMIX_TMPDIR, nullptr, 0, &v), PMIX_ERR_NOT_FOUND);
    EXPECT_EQ(server.gets(), 3);

    // Put/Commit/Fence; the cache is dropped by a fence.
    uint32_t x = 9;
    pmix_value_t val;
    PMIX_VALUE_LOAD(&val, &x, PMIX_UINT32);
    ASSERT_EQ(PMIx_Put(PMIX_GLOBAL, "mine", &val), PMIX_SUCCESS);
    ASSERT_EQ(PMIx_Commit(), PMIX_SUCCESS);
    pmix_info_t collect;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &t, PMIX_BOOL);
    ASSERT_EQ(PMIx_Fence(nullptr, 0, &collect, 1), PMIX_SUCCESS);
    EXPECT_EQ(server.commits(), 1);
    ASSERT_EQ(PMIx_Get(&p1, "peer.other", nullptr, 0, &v), PMIX_SUCCESS);
    PMIX_VALUE_RELEASE(v);
    EXPECT_EQ(server.gets(), 4);
    ASSERT_EQ(PMIx_Get(&me, "mine", nullptr, 0, &v), PMIX_SUCCESS);  // own put, local
    EXPECT_EQ(v->data.uint32, 9u);
    PMIX_VALUE_RELEASE(v);

    // Concurrent non-blocking fences complete independently.
    std::atomic<int> done{0};
    auto cb = [](pmix_status_t st, void *cbdata) {
        if (st == PMIX_SUCCESS) static_cast<std::atomic<int> *>(cbdata)->fetch_add(1);
    };
    for (int i = 0; i < 3; ++i) ASSERT_EQ(PMIx_Fence_nb(nullptr, 0, nullptr, 0, cb, &done), PMIX_SUCCESS);
    for (int i = 0; i < 2000 && done.load() < 3; ++i) std::this_thread::sleep_for(1ms);
    EXPECT_EQ(done.load(), 3);

    // Get_nb: local data answered on the progress thread.
    struct GetState {
        std::atomic<int> done{0};
        uint32_t value = 0;
        bool on_caller = true;
        std::thread::id caller;
    } gs;
    gs.caller = std::this_thread::get_id();
    ASSERT_EQ(PMIx_Get_nb(
                  &wild, PMIX_JOB_SIZE, nullptr, 0,
                  [](pmix_status_t st, pmix_value_t *kv, void *cbdata) {
                      auto *s = static_cast<GetState *>(cbdata);
                      s->value = st == PMIX_SUCCESS ? kv->data.uint32 : 0;
                      s->on_caller = std::this_thread::get_id() == s->caller;
                      s->done = 1;
                  },
                  &gs),
              PMIX_SUCCESS);
    for (int i = 0; i < 2000 && !gs.done.load(); ++i) std::this_thread::sleep_for(1ms);
    EXPECT_EQ(gs.value, 2u);
    EXPECT_FALSE(gs.on_caller);

    // A timeout the server ignores is enforced by the client.
    pmix_info_t tmo;
    double secs = 0.2;
    PMIX_INFO_LOAD(&tmo, PMIX_TIMEOUT, &secs, PMIX_DOUBLE);
    auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(PMIx_Get(&p1, "slow", &tmo, 1, &v), PMIX_ERR_TIMEOUT);
    EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);

    // Resolve peers/nodes from the job data.
    pmix_proc_t *procs = nullptr;
    size_t nprocs = 0;
    ASSERT_EQ(PMIx_Resolve_peers("nodeA", nullptr, &procs, &nprocs), PMIX_SUCCESS);
    EXPECT_EQ(nprocs, 2u);
    PMIX_PROC_FREE(procs, nprocs);
    char *nodes = nullptr;
    ASSERT_EQ(PMIx_Resolve_nodes("test.ns", &nodes), PMIX_SUCCESS);
    EXPECT_STREQ(nodes, "nodeA");
    free(nodes);

    // Job control without a callback, as OpenMPI does it.
    pmix_info_t jc;
    PMIX_INFO_LOAD(&jc, PMIX_REGISTER_CLEANUP_DIR, "/tmp/x", PMIX_STRING);
    EXPECT_EQ(PMIx_Job_control_nb(&me, 1, &jc, 1, nullptr, nullptr), PMIX_SUCCESS);
    PMIX_INFO_DESTRUCT(&jc);

    // Reference-counted init/finalize.
    ASSERT_EQ(PMIx_Init(nullptr, nullptr, 0), PMIX_SUCCESS);
    ASSERT_EQ(PMIx_Finalize(nullptr, 0), PMIX_SUCCESS);
    EXPECT_EQ(PMIx_Initialized(), 1);
    ASSERT_EQ(PMIx_Get(&wild, PMIX_JOB_SIZE, nullptr, 0, &v), PMIX_SUCCESS);
    PMIX_VALUE_RELEASE(v);
    ASSERT_EQ(PMIx_Finalize(nullptr, 0), PMIX_SUCCESS);
    EXPECT_EQ(PMIx_Initialized(), 0);
    EXPECT_EQ(PMIx_Finalize(nullptr, 0), PMIX_ERR_INIT);
}

TEST(FakeServer, EventHandlersAndBlockingFromCallback) {
    FakeServer server;
    ASSERT_EQ(PMIx_Init(nullptr, nullptr, 0), PMIX_SUCCESS);
    struct State {
        std::atomic<int> reg{0}, events{0}, notified{0}, dereg{0};
        std::atomic<pmix_status_t> nested{PMIX_SUCCESS};
        size_t ref = 0;
    } s;
    static State *sp;
    sp = &s;
    pmix_status_t code = -2000;
    ASSERT_EQ(PMIx_Register_event_handler(
                  &code, 1, nullptr, 0,
                  [](size_t, pmix_status_t status, const pmix_proc_t *, pmix_info_t *, size_t, pmix_info_t *,
                     size_t, pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
                      sp->events++;
                      // Blocking call on the progress thread: refused, not a deadlock.
                      sp->nested = PMIx_Fence(nullptr, 0, nullptr, 0);
                      cbfunc(PMIX_EVENT_ACTION_COMPLETE, nullptr, 0, nullptr, nullptr, cbdata);
                  },
                  [](pmix_status_t st, size_t ref, void *) {
                      sp->ref = ref;
                      sp->reg = 1;
                  },
                  nullptr),
              PMIX_SUCCESS);
    for (int i = 0; i < 2000 && !s.reg.load(); ++i) std::this_thread::sleep_for(1ms);
    ASSERT_EQ(s.reg.load(), 1);
    // Blocking registration returns the reference.
    pmix_status_t ref2 = PMIx_Register_event_handler(
        nullptr, 0, nullptr, 0,
        [](size_t, pmix_status_t, const pmix_proc_t *, pmix_info_t *, size_t, pmix_info_t *, size_t,
           pmix_event_notification_cbfunc_fn_t cbfunc,
           void *cbdata) { cbfunc(PMIX_SUCCESS, nullptr, 0, nullptr, nullptr, cbdata); },
        nullptr, nullptr);
    EXPECT_GT(ref2, 0);
    ASSERT_EQ(PMIx_Notify_event(
                  code, nullptr, PMIX_RANGE_PROC_LOCAL, nullptr, 0,
                  [](pmix_status_t, void *) { sp->notified = 1; }, nullptr),
              PMIX_SUCCESS);
    for (int i = 0; i < 2000 && !s.notified.load(); ++i) std::this_thread::sleep_for(1ms);
    EXPECT_EQ(s.events.load(), 1);
    EXPECT_EQ(s.nested.load(), PMIX_ERR_WOULD_BLOCK);
    // Other ranges go through the server, which sends the event back: the handler runs again.
    s.notified = 0;
    EXPECT_EQ(PMIx_Notify_event(
                  code, nullptr, PMIX_RANGE_GLOBAL, nullptr, 0,
                  [](pmix_status_t st, void *) { sp->notified = st == PMIX_SUCCESS ? 1 : 2; }, nullptr),
              PMIX_SUCCESS);
    for (int i = 0; i < 2000 && s.events.load() < 2; ++i) std::this_thread::sleep_for(1ms);
    EXPECT_EQ(s.notified.load(), 1);
    EXPECT_EQ(s.events.load(), 2);
    // A handler registered later gets the cached server event replayed, to it alone.
    static std::atomic<int> late{0};
    pmix_status_t late_ref = PMIx_Register_event_handler(
        &code, 1, nullptr, 0,
        [](size_t, pmix_status_t, const pmix_proc_t *, pmix_info_t *, size_t, pmix_info_t *, size_t,
           pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
            late++;
            cbfunc(PMIX_SUCCESS, nullptr, 0, nullptr, nullptr, cbdata);
        },
        nullptr, nullptr);
    EXPECT_GT(late_ref, 0);
    for (int i = 0; i < 2000 && late.load() < 1; ++i) std::this_thread::sleep_for(1ms);
    EXPECT_EQ(late.load(), 1);
    EXPECT_EQ(s.events.load(), 2);
    EXPECT_EQ(PMIx_Deregister_event_handler(static_cast<size_t>(late_ref), nullptr, nullptr), PMIX_SUCCESS);
    ASSERT_EQ(PMIx_Deregister_event_handler(
                  s.ref, [](pmix_status_t, void *) { sp->dereg = 1; }, nullptr),
              PMIX_SUCCESS);
    for (int i = 0; i < 2000 && !s.dereg.load(); ++i) std::this_thread::sleep_for(1ms);
    EXPECT_EQ(s.dereg.load(), 1);
    EXPECT_EQ(PMIx_Deregister_event_handler(s.ref, nullptr, nullptr), PMIX_ERR_NOT_FOUND);
    EXPECT_EQ(PMIx_Deregister_event_handler(static_cast<size_t>(ref2), nullptr, nullptr), PMIX_SUCCESS);
    // Abort blocks until the server answered.
    testing::internal::CaptureStderr();
    EXPECT_EQ(PMIx_Abort(7, "unit test abort", nullptr, 0), PMIX_SUCCESS);
    std::string err = testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("PMIx_Abort by test.ns:0: unit test abort"), std::string::npos);
    ASSERT_EQ(PMIx_Finalize(nullptr, 0), PMIX_SUCCESS);
}

TEST(FakeServer, LostConnectionFailsPendingRequests) {
    FakeServer server(/*close_on_fence=*/true);
    ASSERT_EQ(PMIx_Init(nullptr, nullptr, 0), PMIX_SUCCESS);
    EXPECT_EQ(PMIx_Fence(nullptr, 0, nullptr, 0), PMIX_ERR_LOST_CONNECTION);
    pmix_value_t *v = nullptr;
    pmix_proc_t p1 = peer1();
    EXPECT_EQ(PMIx_Get(&p1, "peer.key", nullptr, 0, &v), PMIX_ERR_LOST_CONNECTION);
    ASSERT_EQ(PMIx_Finalize(nullptr, 0), PMIX_SUCCESS);
}

// Init does not wait for the server (instant on): a refused connect shows at the first call
// that needs the server, while the job data still answers.
TEST(FakeServer, WrongTokenIsRefused) {
    FakeServer server;
    setenv("PMIXCPP_CLIENT_TOKEN", "wrong", 1);
    ASSERT_EQ(PMIx_Init(nullptr, nullptr, 0), PMIX_SUCCESS);
    pmix_proc_t wild{};
    strcpy(wild.nspace, "test.ns");
    wild.rank = PMIX_RANK_WILDCARD;
    pmix_value_t *v = nullptr;
    ASSERT_EQ(PMIx_Get(&wild, PMIX_JOB_SIZE, nullptr, 0, &v), PMIX_SUCCESS);
    EXPECT_EQ(v->data.uint32, 2u);
    PMIX_VALUE_RELEASE(v);
    EXPECT_EQ(PMIx_Fence(nullptr, 0, nullptr, 0), PMIX_ERR_LOST_CONNECTION);
    EXPECT_EQ(PMIx_Finalize(nullptr, 0), PMIX_SUCCESS);
    EXPECT_EQ(PMIx_Initialized(), 0);
    setenv("PMIXCPP_CLIENT_TOKEN", "secret", 1);
}

// Instant on: PMIx_Init starts no thread, nor do blocking calls (they read their own replies);
// the first asynchronous call starts the progress thread; a corrupt or missing job-data file fails
// Init.
namespace {
int thread_count() {
    int n = 0;
    std::ifstream st("/proc/self/status");
    std::string line;
    while (std::getline(st, line))
        if (line.rfind("Threads:", 0) == 0) n = atoi(line.c_str() + 8);
    return n;
}
}  // namespace

// The modex snapshot comes as a descriptor with the fence reply; each reply's descriptor goes with
// it, also when replies follow one another on the socket (two non-blocking fences); a peer's key is
// then read from the mapping, without asking the server. A fence that collects nothing (OpenMPI's
// barrier after its modex) names the same segments: its data is still read from there.
TEST(FakeServer, SnapshotDescriptorsComeWithTheirFences) {
    FenceScript script;
    script.snapshot = true;
    FakeServer server(script);
    ASSERT_EQ(PMIx_Init(nullptr, nullptr, 0), PMIX_SUCCESS);
    pmix_proc_t peer = peer1();
    pmix_info_t optional;
    PMIX_INFO_LOAD(&optional, PMIX_OPTIONAL, nullptr, PMIX_BOOL);
    auto snap_key = [&](const char *key, const char *expect) {
        pmix_value_t *v = nullptr;
        ASSERT_EQ(PMIx_Get(&peer, key, &optional, 1, &v), PMIX_SUCCESS);
        ASSERT_EQ(v->type, PMIX_STRING);
        EXPECT_STREQ(v->data.string, expect);
        PMIX_VALUE_RELEASE(v);
    };
    pmix_info_t collect;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, nullptr, PMIX_BOOL);
    ASSERT_EQ(PMIx_Fence(nullptr, 0, nullptr, 0), PMIX_SUCCESS);  // before any snapshot: none named
    ASSERT_EQ(PMIx_Fence(nullptr, 0, &collect, 1), PMIX_SUCCESS);
    ASSERT_EQ(PMIx_Fence(nullptr, 0, nullptr, 0), PMIX_SUCCESS);  // the same segments, no descriptor
    snap_key("snap.key", "round-1");
    ASSERT_EQ(PMIx_Fence(nullptr, 0, &collect, 1), PMIX_SUCCESS);  // the same file, no descriptor
    snap_key("snap.key", "round-2");
    snap_key("snap.first", "first-1");  // from the older segment
    std::atomic<int> done{0};
    auto cb = [](pmix_status_t, void *cbdata) { ++*static_cast<std::atomic<int> *>(cbdata); };
    // Round 3 brings a new file, round 4 a segment of it: both replies read before any Get.
    ASSERT_EQ(PMIx_Fence_nb(nullptr, 0, &collect, 1, cb, &done), PMIX_SUCCESS);
    ASSERT_EQ(PMIx_Fence_nb(nullptr, 0, &collect, 1, cb, &done), PMIX_SUCCESS);
    for (int i = 0; i < 5000 && done.load() < 2; ++i) std::this_thread::sleep_for(1ms);
    ASSERT_EQ(done.load(), 2);
    snap_key("snap.key", "round-4");
    snap_key("snap.first", "first-3");
    EXPECT_EQ(server.gets(), 0);  // every value came from a snapshot
    ASSERT_EQ(PMIx_Finalize(nullptr, 0), PMIX_SUCCESS);
}

// A reply that names a file whose descriptor did not come with it (the server sends none to a
// client with four unread): the first Get that needs the snapshot asks for it once, and the
// reply to that request brings the descriptor; the values then come from the snapshot.
TEST(FakeServer, SnapshotFileWithoutItsDescriptorIsAskedFor) {
    FenceScript script;
    script.snapshot = true;
    script.withhold_descriptor = true;
    FakeServer server(script);
    ASSERT_EQ(PMIx_Init(nullptr, nullptr, 0), PMIX_SUCCESS);
    pmix_proc_t peer = peer1();
    pmix_info_t collect, optional;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, nullptr, PMIX_BOOL);
    PMIX_INFO_LOAD(&optional, PMIX_OPTIONAL, nullptr, PMIX_BOOL);
    ASSERT_EQ(PMIx_Fence(nullptr, 0, &collect, 1), PMIX_SUCCESS);
    EXPECT_EQ(server.snapshot_requests(), 0);  // asked for only when a Get needs it
    for (const char *key : {"snap.key", "snap.first"}) {
        pmix_value_t *v = nullptr;
        ASSERT_EQ(PMIx_Get(&peer, key, &optional, 1, &v), PMIX_SUCCESS) << key;
        ASSERT_EQ(v->type, PMIX_STRING);
        EXPECT_STREQ(v->data.string, strcmp(key, "snap.key") == 0 ? "round-1" : "first-1");
        PMIX_VALUE_RELEASE(v);
    }
    EXPECT_EQ(server.snapshot_requests(), 1);
    EXPECT_EQ(server.gets(), 0);
    // The next fence names the same file, now held: nothing more to ask.
    ASSERT_EQ(PMIx_Fence(nullptr, 0, &collect, 1), PMIX_SUCCESS);
    pmix_value_t *v = nullptr;
    ASSERT_EQ(PMIx_Get(&peer, "snap.key", &optional, 1, &v), PMIX_SUCCESS);
    EXPECT_STREQ(v->data.string, "round-2");
    PMIX_VALUE_RELEASE(v);
    EXPECT_EQ(server.snapshot_requests(), 1);
    EXPECT_EQ(server.gets(), 0);
    ASSERT_EQ(PMIx_Finalize(nullptr, 0), PMIX_SUCCESS);
}

TEST(FakeServer, InitStartsNoThread) {
    FakeServer server;
    setenv("PMIXCPP_SIGNAL_EVENTS", "USR1,USR2", 1);
    const int before = thread_count();
    ASSERT_EQ(PMIx_Init(nullptr, nullptr, 0), PMIX_SUCCESS);
    EXPECT_EQ(thread_count(), before);
    pmix_proc_t wild{};
    strcpy(wild.nspace, "test.ns");
    wild.rank = PMIX_RANK_WILDCARD;
    pmix_value_t *v = nullptr;
    ASSERT_EQ(PMIx_Get(&wild, PMIX_LOCAL_PEERS, nullptr, 0, &v), PMIX_SUCCESS);  // local: no thread
    PMIX_VALUE_RELEASE(v);
    EXPECT_EQ(thread_count(), before);
    EXPECT_EQ(PMIx_Fence(nullptr, 0, nullptr, 0), PMIX_SUCCESS);
    EXPECT_EQ(PMIx_Fence(nullptr, 0, nullptr, 0), PMIX_SUCCESS);
    EXPECT_EQ(thread_count(), before);  // blocking calls read their replies themselves
    std::atomic<bool> fenced{false};
    ASSERT_EQ(PMIx_Fence_nb(nullptr, 0, nullptr, 0,
                            [](pmix_status_t, void *cbdata) { static_cast<std::atomic<bool> *>(cbdata)->store(true); },
                            &fenced),
              PMIX_SUCCESS);
    for (int i = 0; i < 2000 && !fenced.load(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    EXPECT_TRUE(fenced.load());
    EXPECT_EQ(thread_count(), before + 1);  // the progress thread; the signal reader waits for a handler
    ASSERT_EQ(PMIx_Finalize(nullptr, 0), PMIX_SUCCESS);
    EXPECT_LE(thread_count(), before);  // the scripted server's thread may end with the connection
    unsetenv("PMIXCPP_SIGNAL_EVENTS");
}

TEST(FakeServer, CorruptJobDataFailsInit) {
    FakeServer server;
    char dir[] = "/tmp/pmixcpp-jd-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    const std::string path = std::string(dir) + "/jobdata";
    std::ofstream(path, std::ios::binary) << "PXJD\x01\0\0\0garbage";
    setenv("PMIXCPP_JOBDATA", path.c_str(), 1);
    EXPECT_EQ(PMIx_Init(nullptr, nullptr, 0), PMIX_ERR_INIT);
    setenv("PMIXCPP_JOBDATA", (std::string(dir) + "/missing").c_str(), 1);
    EXPECT_EQ(PMIx_Init(nullptr, nullptr, 0), PMIX_ERR_INIT);
    unsetenv("PMIXCPP_JOBDATA");
    EXPECT_EQ(PMIx_Initialized(), 0);
    unlink(path.c_str());
    rmdir(dir);
}

// A blocking call reads its reply on the calling thread (ProgressLoop's direct waits); what else
// arrives meanwhile still runs on the progress thread, in order, and the progress thread takes the
// socket back afterwards for events that come later.
namespace {
std::atomic<int> g_first{0}, g_later{0};
std::atomic<bool> g_first_on_caller{false};
std::thread::id g_caller;
void count_event(size_t, pmix_status_t status, const pmix_proc_t *, pmix_info_t *, size_t, pmix_info_t *, size_t,
                 pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    if (status == -2001) {
        g_first_on_caller = std::this_thread::get_id() == g_caller;
        g_first++;
    } else {
        g_later++;
    }
    if (cbfunc) cbfunc(PMIX_EVENT_ACTION_COMPLETE, nullptr, 0, nullptr, nullptr, cbdata);
}
}  // namespace

TEST(FakeServer, DirectWaitKeepsEventOrderAndHandsTheSocketBack) {
    FakeServer server(FenceScript{false, true, 30});
    ASSERT_EQ(PMIx_Init(nullptr, nullptr, 0), PMIX_SUCCESS);
    g_caller = std::this_thread::get_id();
    g_first = 0;
    g_later = 0;
    pmix_status_t codes[] = {-2001, -2002};
    ASSERT_GT(PMIx_Register_event_handler(codes, 2, nullptr, 0, count_event, nullptr, nullptr), 0);
    for (int round = 1; round <= 3; ++round) {
        ASSERT_EQ(PMIx_Fence(nullptr, 0, nullptr, 0), PMIX_SUCCESS);
        // The event came before the reply: its handler has run, on the progress thread.
        EXPECT_EQ(g_first.load(), round);
        EXPECT_FALSE(g_first_on_caller.load());
        // The later event comes while nobody waits: the progress thread must read it.
        for (int i = 0; i < 3000 && g_later.load() < round; ++i) std::this_thread::sleep_for(1ms);
        EXPECT_EQ(g_later.load(), round);
    }
    ASSERT_EQ(PMIx_Finalize(nullptr, 0), PMIX_SUCCESS);
}

TEST(FakeServer, BlockingCallsFromSeveralThreadsWithNonBlockingOnes) {
    FakeServer server;
    ASSERT_EQ(PMIx_Init(nullptr, nullptr, 0), PMIX_SUCCESS);
    std::atomic<int> failures{0}, nb_done{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            pmix_proc_t p1 = peer1();
            for (int i = 0; i < 200; ++i) {
                if (PMIx_Fence(nullptr, 0, nullptr, 0) != PMIX_SUCCESS) failures++;
                if (t == 0 && PMIx_Commit() != PMIX_SUCCESS) failures++;
                if (t == 1) {
                    pmix_value_t *v = nullptr;
                    pmix_info_t refresh;
                    bool yes = true;
                    PMIX_INFO_LOAD(&refresh, PMIX_GET_REFRESH_CACHE, &yes, PMIX_BOOL);
                    if (PMIx_Get(&p1, "peer.key", &refresh, 1, &v) != PMIX_SUCCESS) failures++;
                    else PMIX_VALUE_RELEASE(v);
                }
                if (t == 2 && PMIx_Fence_nb(
                                  nullptr, 0, nullptr, 0,
                                  [](pmix_status_t st, void *cbdata) {
                                      if (st == PMIX_SUCCESS) static_cast<std::atomic<int> *>(cbdata)->fetch_add(1);
                                  },
                                  &nb_done) != PMIX_SUCCESS)
                    failures++;
            }
        });
    for (auto &t : threads) t.join();
    EXPECT_EQ(failures.load(), 0);
    for (int i = 0; i < 3000 && nb_done.load() < 200; ++i) std::this_thread::sleep_for(1ms);
    EXPECT_EQ(nb_done.load(), 200);
    ASSERT_EQ(PMIx_Finalize(nullptr, 0), PMIX_SUCCESS);
}

// A program that exits without PMIx_Finalize (OpenPMIx's examples do after an error) exits with
// its own status: no std::terminate from a library thread still running at exit.
TEST(FakeServer, ExitWithoutFinalizeKeepsTheExitStatus) {
    FakeServer server;
    setenv("PMIXCPP_SIGNAL_EVENTS", "TERM,USR1", 1);
    fflush(nullptr);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        if (PMIx_Init(nullptr, nullptr, 0) != PMIX_SUCCESS) _exit(9);
        exit(3);  // static destructors run with the library's threads alive
    }
    int st = 0;
    ASSERT_EQ(waitpid(pid, &st, 0), pid);
    unsetenv("PMIXCPP_SIGNAL_EVENTS");
    ASSERT_TRUE(WIFEXITED(st)) << "killed by signal " << (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    EXPECT_EQ(WEXITSTATUS(st), 3);
}

// PMIX_EVENT_RETURN_OBJECT given at registration comes back in the info of every call of that
// handler (OpenPMIx's examples/fault waits on it), and only of that handler.
TEST(FakeServer, EventReturnObjectIsHandedBack) {
    FakeServer server;
    ASSERT_EQ(PMIx_Init(nullptr, nullptr, 0), PMIX_SUCCESS);
    static std::atomic<void *> seen_with{nullptr};
    static std::atomic<int> calls_without{0}, calls{0};
    int token = 42;
    pmix_status_t code = -2003;
    pmix_info_t reg;
    PMIX_INFO_LOAD(&reg, PMIX_EVENT_RETURN_OBJECT, &token, PMIX_POINTER);
    auto find_ro = [](pmix_info_t *info, size_t n) -> void * {
        for (size_t i = 0; i < n; ++i)
            if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_RETURN_OBJECT) && info[i].value.type == PMIX_POINTER)
                return info[i].value.data.ptr;
        return nullptr;
    };
    static void *(*find)(pmix_info_t *, size_t) = find_ro;
    pmix_status_t r1 = PMIx_Register_event_handler(
        &code, 1, &reg, 1,
        [](size_t, pmix_status_t, const pmix_proc_t *, pmix_info_t *info, size_t ninfo, pmix_info_t *, size_t,
           pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
            seen_with = find(info, ninfo);
            calls++;
            cbfunc(PMIX_SUCCESS, nullptr, 0, nullptr, nullptr, cbdata);
        },
        nullptr, nullptr);
    ASSERT_GT(r1, 0);
    pmix_status_t r2 = PMIx_Register_event_handler(
        &code, 1, nullptr, 0,
        [](size_t, pmix_status_t, const pmix_proc_t *, pmix_info_t *info, size_t ninfo, pmix_info_t *, size_t,
           pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
            if (find(info, ninfo) == nullptr) calls_without++;
            calls++;
            cbfunc(PMIX_SUCCESS, nullptr, 0, nullptr, nullptr, cbdata);
        },
        nullptr, nullptr);
    ASSERT_GT(r2, 0);
    ASSERT_EQ(PMIx_Notify_event(code, nullptr, PMIX_RANGE_PROC_LOCAL, nullptr, 0, nullptr, nullptr), PMIX_SUCCESS);
    for (int i = 0; i < 2000 && calls.load() < 2; ++i) std::this_thread::sleep_for(1ms);
    EXPECT_EQ(calls.load(), 2);
    EXPECT_EQ(seen_with.load(), &token);
    EXPECT_EQ(calls_without.load(), 1);
    pmix_info_t bad;
    PMIX_INFO_LOAD(&bad, PMIX_EVENT_RETURN_OBJECT, "not a pointer", PMIX_STRING);
    EXPECT_LT(PMIx_Register_event_handler(&code, 1, &bad, 1,
                                          [](size_t, pmix_status_t, const pmix_proc_t *, pmix_info_t *, size_t,
                                             pmix_info_t *, size_t, pmix_event_notification_cbfunc_fn_t, void *) {},
                                          nullptr, nullptr),
              0);
    PMIX_INFO_DESTRUCT(&bad);
    PMIx_Deregister_event_handler(static_cast<size_t>(r1), nullptr, nullptr);
    PMIx_Deregister_event_handler(static_cast<size_t>(r2), nullptr, nullptr);
    ASSERT_EQ(PMIx_Finalize(nullptr, 0), PMIX_SUCCESS);
}
