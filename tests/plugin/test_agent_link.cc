// The multiplexed connection of a slurmstepd to srun's agent (plugin/agent/stepd/agent_link.h):
// ids, answers out of order, a connection broken mid-call, malformed frames, timeouts and late
// answers, the idle close, the bound on calls in flight, the gate. The far end is played by the
// test on a socket pair (frames read and written by hand, so that it can misbehave); the last
// tests run the real srun agent and client over TCP with the test credential service.
#include "plugin/agent/proto/agent_io.h"
#include "plugin/agent/proto/agent_proto.h"
#include "plugin/services/service_ids.h"
#include "plugin/agent/srun/srun_agent.h"
#include "plugin/agent/stepd/agent_client.h"
#include "plugin/agent/stepd/agent_link.h"
#include "tests/net/test_credentials.h"
#include "wire/frame.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

using namespace pmixcpp;
using namespace std::chrono_literals;
using agent::call_link;
using agent::reply;

namespace {

// The services' ids (plugin/services/service_ids.h) by their names.
namespace service {
constexpr agent::service_id alloc = services::id_of(services::service::alloc);
constexpr agent::service_id spawn = services::id_of(services::service::spawn);
constexpr agent::service_id spawn_watch = services::id_of(services::service::spawn_watch);
constexpr agent::service_id session = services::id_of(services::service::session);
constexpr agent::service_id connect = services::id_of(services::service::connect);
constexpr agent::service_id fabric = services::id_of(services::service::fabric);
constexpr agent::service_id xstep = services::id_of(services::service::xstep);
}  // namespace service

using clock_type = agent_io::clock_type;

// The test's side of each connection the link opens: a socket pair per connect.
struct fake_srun {
    std::mutex mutex;
    std::condition_variable cv;
    std::vector<int> ends;  // our end of each connection, in order
    int refuse = 0;         // connects still to fail
    ~fake_srun();
    call_link::connect_fn connector() {
        return [this](clock_type::time_point, const std::atomic<bool> *) -> Result<int> {
            std::lock_guard<std::mutex> g(mutex);
            if (refuse > 0) {
                --refuse;
                return Status(PMIX_ERR_UNREACH, "connect: refused (test)");
            }
            int sv[2];
            if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) != 0)
                return Status(PMIX_ERROR, "socketpair");
            ends.push_back(sv[1]);
            cv.notify_all();
            return sv[0];
        };
    }
    // Our end of connection number `n` (waits for it).
    int end(size_t n) {
        std::unique_lock<std::mutex> g(mutex);
        cv.wait_for(g, 5s, [&] { return ends.size() > n; });
        return ends.size() > n ? ends[n] : -1;
    }
};

// Frames the link sent, read from our end of a connection (a reader per end: the requests come
// back to back).
std::map<int, std::unique_ptr<wire::FrameReader>> g_readers;

Result<wire::Frame> read_request(int fd, int ms = 5000) {
    auto &reader = g_readers[fd];
    if (!reader) reader = std::make_unique<wire::FrameReader>(agent::kMaxPayload);
    auto deadline = clock_type::now() + std::chrono::milliseconds(ms);
    uint8_t buf[8192];
    for (;;) {
        auto f = reader->next();
        if (!f.ok()) return f.status();
        if (f->has_value()) return std::move(**f);
        PMIXCPP_RETURN_IF_ERROR(agent_io::wait_fd(fd, POLLIN, deadline));
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
        if (n <= 0) return Status(PMIX_ERR_UNREACH, "the connection closed");
        PMIXCPP_RETURN_IF_ERROR(reader->feed(buf, static_cast<size_t>(n)));
    }
}

fake_srun::~fake_srun() {
    for (int fd : ends) {
        g_readers.erase(fd);
        close(fd);
    }
}

void answer(int fd, uint32_t id, reply r) {
    auto f = agent::reply_frame(r, id);
    ASSERT_TRUE(f.ok());
    ASSERT_TRUE(agent_io::send_all(fd, f.value(), clock_type::now() + 5s).ok());
}

void send_raw(int fd, std::span<const uint8_t> bytes) {
    ASSERT_TRUE(agent_io::send_all(fd, bytes, clock_type::now() + 5s).ok());
}

// The far end sees the connection close (EOF) within `ms`.
bool closed_by_link(int fd, int ms = 3000) {
    auto f = read_request(fd, ms);
    return !f.ok() && f.status().code() == PMIX_ERR_UNREACH;
}

// One call's outcome, waited for.
struct outcome {
    std::promise<Result<reply>> p;
    std::future<Result<reply>> f = p.get_future();
    call_link::done_fn done() {
        return [this](Result<reply> r) { p.set_value(std::move(r)); };
    }
    Result<reply> get(std::chrono::milliseconds within = 5s) {
        if (f.wait_for(within) != std::future_status::ready) return Status(PMIX_ERR_TIMEOUT, "test: no outcome");
        return f.get();
    }
};

std::vector<uint8_t> bytes_of(const std::string &s) { return {s.begin(), s.end()}; }
std::string text_of(const std::vector<uint8_t> &b) { return {b.begin(), b.end()}; }

call_link::options quick(std::chrono::milliseconds idle = 30s) {
    call_link::options o;
    o.idle_close = idle;
    return o;
}

}  // namespace

TEST(AgentLink, CallsShareOneConnectionAndAnswersComeInAnyOrder) {
    fake_srun srun;
    call_link l(srun.connector(), quick());
    outcome a, b, c;
    l.call(service::session, bytes_of("first"), 5000, a.done());
    l.call(service::spawn, bytes_of("second"), 5000, b.done());
    l.call(service::xstep, bytes_of("third"), 5000, c.done());
    int fd = srun.end(0);
    ASSERT_GE(fd, 0);
    std::map<std::string, wire::Frame> got;
    for (int i = 0; i < 3; ++i) {
        auto f = read_request(fd);
        ASSERT_TRUE(f.ok()) << f.status().message();
        got[text_of(f->payload)] = std::move(f.value());
    }
    ASSERT_EQ(got.size(), 3u);
    EXPECT_EQ(got["first"].type, static_cast<uint16_t>(service::session));
    EXPECT_EQ(got["second"].type, static_cast<uint16_t>(service::spawn));
    EXPECT_EQ(got["third"].type, static_cast<uint16_t>(service::xstep));
    EXPECT_NE(got["first"].id, got["second"].id);
    EXPECT_NE(got["second"].id, got["third"].id);
    EXPECT_NE(got["first"].id, got["third"].id);
    // Answered backwards: each call gets its own answer.
    answer(fd, got["third"].id, reply{PMIX_SUCCESS, "", bytes_of("for third")});
    auto rc = c.get();
    ASSERT_TRUE(rc.ok()) << rc.status().message();
    EXPECT_EQ(text_of(rc->body), "for third");
    EXPECT_EQ(a.f.wait_for(50ms), std::future_status::timeout) << "the others still wait";
    answer(fd, got["second"].id, reply{PMIX_ERR_NOT_FOUND, "no such thing", {}});
    answer(fd, got["first"].id, reply{PMIX_SUCCESS, "", bytes_of("for first")});
    auto ra = a.get(), rb = b.get();
    ASSERT_TRUE(ra.ok() && rb.ok());
    EXPECT_EQ(text_of(ra->body), "for first");
    EXPECT_EQ(rb->status, PMIX_ERR_NOT_FOUND);
    EXPECT_EQ(rb->message, "no such thing");
    EXPECT_EQ(l.stats().connects, 1u);
    EXPECT_EQ(l.stats().calls, 3u);
}

TEST(AgentLink, ConnectsOnFirstNeedOnly) {
    fake_srun srun;
    call_link l(srun.connector(), quick());
    std::this_thread::sleep_for(100ms);
    EXPECT_EQ(l.stats().connects, 0u);
    EXPECT_FALSE(l.connected());
}

TEST(AgentLink, ABrokenConnectionFailsItsCallsAndTheNextCallReconnects) {
    fake_srun srun;
    call_link l(srun.connector(), quick());
    outcome a, b;
    l.call(service::session, bytes_of("a"), 10000, a.done());
    l.call(service::session, bytes_of("b"), 10000, b.done());
    int fd = srun.end(0);
    ASSERT_TRUE(read_request(fd).ok());
    ASSERT_TRUE(read_request(fd).ok());
    auto t0 = clock_type::now();
    shutdown(fd, SHUT_RDWR);  // srun goes away mid-call
    auto ra = a.get(), rb = b.get();
    EXPECT_LT(clock_type::now() - t0, 5s) << "failed at once, not at the deadline";
    ASSERT_FALSE(ra.ok());
    EXPECT_EQ(ra.status().code(), PMIX_ERR_UNREACH);
    ASSERT_FALSE(rb.ok());
    EXPECT_EQ(rb.status().code(), PMIX_ERR_UNREACH);
    // The next call opens a new connection and is answered there.
    outcome c;
    l.call(service::session, bytes_of("c"), 5000, c.done());
    int fd2 = srun.end(1);
    ASSERT_GE(fd2, 0);
    auto f = read_request(fd2);
    ASSERT_TRUE(f.ok());
    answer(fd2, f->id, reply{PMIX_SUCCESS, "", bytes_of("again")});
    auto rc = c.get();
    ASSERT_TRUE(rc.ok());
    EXPECT_EQ(text_of(rc->body), "again");
    EXPECT_EQ(l.stats().connects, 2u);
}

// Everything srun sends is untrusted: each kind of bad frame closes the connection, fails the
// calls in flight with an error (never a hang), and the link serves the next call anew.
TEST(AgentLink, AMalformedFrameClosesTheConnectionAndFailsTheCalls) {
    struct bad_case {
        const char *what;
        std::function<std::vector<uint8_t>(uint32_t id)> frame;
    };
    std::vector<bad_case> cases = {
        {"garbage (bad magic)", [](uint32_t) { return std::vector<uint8_t>(32, 0x5a); }},
        {"a reply to a call never made",
         [](uint32_t id) { return agent::reply_frame(reply{}, id + 1000).value(); }},
        {"a request where a reply belongs",
         [](uint32_t id) { return agent::request_frame(service::spawn, bytes_of("x"), id).value(); }},
        {"a reply that does not decode",
         [](uint32_t id) {
             std::vector<uint8_t> junk = {1, 2, 3};
             return wire::encode_frame(agent::kReplyFrame, 0, id, junk).value();
         }},
        {"a frame longer than the limit",
         [](uint32_t id) {
             wire::FrameHeader h;
             h.type = agent::kReplyFrame;
             h.id = id;
             h.length = agent::kMaxPayload + 1;
             std::vector<uint8_t> out(wire::kFrameHeaderSize);
             wire::encode_frame_header(h, out.data());
             return out;
         }},
    };
    for (size_t i = 0; i < cases.size(); ++i) {
        SCOPED_TRACE(cases[i].what);
        fake_srun srun;
        call_link l(srun.connector(), quick());
        outcome a, b;
        l.call(service::session, bytes_of("a"), 10000, a.done());
        l.call(service::fabric, bytes_of("b"), 10000, b.done());
        int fd = srun.end(0);
        auto fa = read_request(fd);
        ASSERT_TRUE(fa.ok());
        ASSERT_TRUE(read_request(fd).ok());
        send_raw(fd, cases[i].frame(std::max(fa->id, 1u)));
        auto ra = a.get(), rb = b.get();
        ASSERT_FALSE(ra.ok());
        ASSERT_FALSE(rb.ok());
        EXPECT_EQ(ra.status().code(), PMIX_ERR_UNPACK_FAILURE) << ra.status().message();
        EXPECT_NE(ra.status().message().find("malformed"), std::string::npos) << ra.status().message();
        EXPECT_TRUE(closed_by_link(fd)) << "the link closed the connection";
        EXPECT_EQ(l.stats().broken, 1u);
        // Served anew.
        outcome c;
        l.call(service::session, bytes_of("c"), 5000, c.done());
        int fd2 = srun.end(1);
        auto f = read_request(fd2);
        ASSERT_TRUE(f.ok());
        answer(fd2, f->id, reply{});
        EXPECT_TRUE(c.get().ok());
    }
}

TEST(AgentLink, ACallTimesOutAloneAndItsLateAnswerIsIgnored) {
    fake_srun srun;
    call_link l(srun.connector(), quick());
    outcome slow, other;
    l.call(service::alloc, bytes_of("slow"), 300, slow.done());
    l.call(service::session, bytes_of("other"), 10000, other.done());
    int fd = srun.end(0);
    auto f1 = read_request(fd), f2 = read_request(fd);
    ASSERT_TRUE(f1.ok() && f2.ok());
    uint32_t slow_id = text_of(f1->payload) == "slow" ? f1->id : f2->id;
    uint32_t other_id = slow_id == f1->id ? f2->id : f1->id;
    auto rs = slow.get();
    ASSERT_FALSE(rs.ok());
    EXPECT_EQ(rs.status().code(), PMIX_ERR_TIMEOUT);
    EXPECT_EQ(other.f.wait_for(0ms), std::future_status::timeout) << "the other call still waits";
    answer(fd, slow_id, reply{PMIX_SUCCESS, "too late", {}});  // ignored, not a protocol error
    answer(fd, other_id, reply{PMIX_SUCCESS, "in time", {}});
    auto ro = other.get();
    ASSERT_TRUE(ro.ok()) << ro.status().message();
    EXPECT_EQ(ro->message, "in time");
    EXPECT_EQ(l.stats().broken, 0u);
    EXPECT_EQ(l.stats().connects, 1u);
}

TEST(AgentLink, AnIdleConnectionIsClosedAndTheNextCallOpensAnother) {
    fake_srun srun;
    // An idle time long enough that a loaded machine (the suite runs beside the integration tests)
    // does not close the connection between the answer and the first check below.
    call_link l(srun.connector(), quick(1s));
    outcome a;
    l.call(service::session, bytes_of("a"), 5000, a.done());
    int fd = srun.end(0);
    auto f = read_request(fd);
    ASSERT_TRUE(f.ok());
    answer(fd, f->id, reply{});
    ASSERT_TRUE(a.get().ok());
    EXPECT_TRUE(l.connected());
    EXPECT_TRUE(closed_by_link(fd, 6000)) << "closed after the idle time";
    EXPECT_FALSE(l.connected());
    EXPECT_EQ(l.stats().idle_closes, 1u);
    // A call in flight keeps it open past the idle time.
    outcome b;
    l.call(service::spawn_watch, bytes_of("b"), 5000, b.done());
    int fd2 = srun.end(1);
    auto g = read_request(fd2);
    ASSERT_TRUE(g.ok());
    std::this_thread::sleep_for(1500ms);
    EXPECT_TRUE(l.connected());
    answer(fd2, g->id, reply{});
    ASSERT_TRUE(b.get().ok());
    EXPECT_EQ(l.stats().connects, 2u);
}

TEST(AgentLink, CallsInFlightAreBounded) {
    fake_srun srun;
    call_link::options o = quick();
    o.max_in_flight = 2;
    call_link l(srun.connector(), o);
    outcome a, b, c;
    l.call(service::session, bytes_of("a"), 5000, a.done());
    l.call(service::session, bytes_of("b"), 5000, b.done());
    l.call(service::session, bytes_of("c"), 5000, c.done());
    auto rc = c.get(100ms);
    ASSERT_FALSE(rc.ok());
    EXPECT_EQ(rc.status().code(), PMIX_ERR_OUT_OF_RESOURCE);
    int fd = srun.end(0);
    for (int i = 0; i < 2; ++i) {
        auto f = read_request(fd);
        ASSERT_TRUE(f.ok());
        answer(fd, f->id, reply{});
    }
    EXPECT_TRUE(a.get().ok());
    EXPECT_TRUE(b.get().ok());
    outcome d;  // room again
    l.call(service::session, bytes_of("d"), 5000, d.done());
    auto f = read_request(fd);
    ASSERT_TRUE(f.ok());
    answer(fd, f->id, reply{});
    EXPECT_TRUE(d.get().ok());
}

TEST(AgentLink, AFailedConnectFailsTheWaitingCallsAndIsTriedAgain) {
    fake_srun srun;
    srun.refuse = 1;
    call_link l(srun.connector(), quick());
    outcome a;
    l.call(service::session, bytes_of("a"), 5000, a.done());
    auto ra = a.get();
    ASSERT_FALSE(ra.ok());
    EXPECT_EQ(ra.status().code(), PMIX_ERR_UNREACH);
    EXPECT_NE(ra.status().message().find("refused (test)"), std::string::npos) << ra.status().message();
    outcome b;
    l.call(service::session, bytes_of("b"), 5000, b.done());
    int fd = srun.end(0);
    auto f = read_request(fd);
    ASSERT_TRUE(f.ok());
    answer(fd, f->id, reply{});
    EXPECT_TRUE(b.get().ok());
}

TEST(AgentLink, CloseEndsEveryCallAndRefusesNewOnes) {
    fake_srun srun;
    call_link l(srun.connector(), quick());
    outcome a, b;
    l.call(service::alloc, bytes_of("a"), 60000, a.done());
    l.call(service::spawn, bytes_of("b"), 60000, b.done());
    int fd = srun.end(0);
    ASSERT_TRUE(read_request(fd).ok());
    ASSERT_TRUE(read_request(fd).ok());
    auto t0 = clock_type::now();
    l.close(Status(PMIX_ERR_JOB_CANCELED, "the step is ending"));
    auto ra = a.get(0ms), rb = b.get(0ms);
    EXPECT_LT(clock_type::now() - t0, 3s) << "at once, not at the 60 s deadline";
    ASSERT_FALSE(ra.ok());
    EXPECT_EQ(ra.status().code(), PMIX_ERR_JOB_CANCELED);
    ASSERT_FALSE(rb.ok());
    EXPECT_EQ(rb.status().code(), PMIX_ERR_JOB_CANCELED);
    EXPECT_TRUE(closed_by_link(fd));
    outcome c;
    l.call(service::session, bytes_of("c"), 5000, c.done());
    auto rc = c.get(0ms);
    ASSERT_FALSE(rc.ok());
    EXPECT_EQ(rc.status().code(), PMIX_ERR_NOT_AVAILABLE);
}

// --- the real agent and client over TCP ---------------------------------------------------------

namespace {
sockaddr_storage loopback() {
    sockaddr_storage ss{};
    auto *in = reinterpret_cast<sockaddr_in *>(&ss);
    in->sin_family = AF_INET;
    in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return ss;
}
}  // namespace

// A call that takes long on srun's side (a spawn, an allocation waiting for Slurm) does not hold
// up the others on the same connection; one handshake serves them all.
TEST(AgentLink, ASlowServiceDoesNotHoldUpTheOthers) {
    pmixcpp::testing::agent_auth auth;
    auto agent = srun_agent::start(nullptr, auth.keys());
    ASSERT_TRUE(agent.ok()) << agent.status().message();
    agent.value()->services().set_names(&services::names());
    std::promise<void> release;
    std::shared_future<void> released = release.get_future().share();
    std::vector<std::thread> threads;
    std::mutex tm;
    (void)agent.value()->services().add(service::spawn, [&](agent::responder answer, std::vector<uint8_t>) {
        std::lock_guard<std::mutex> g(tm);
        threads.emplace_back([answer, released] {
            released.wait();
            (void)answer.send(reply{PMIX_SUCCESS, "spawned", {}});
        });
    });
    (void)agent.value()->services().add(service::session, [](agent::responder answer, std::vector<uint8_t> body) {
        (void)answer.send(reply{PMIX_SUCCESS, "", std::move(body)});
    });
    // A handler that drops its call: the caller still gets an answer.
    (void)agent.value()->services().add(service::fabric, [](agent::responder, std::vector<uint8_t>) {});
    agent::client c(loopback(), agent.value()->port(), auth.client());
    outcome slow;
    c.call(service::spawn, bytes_of("spawn"), 10000, slow.done());
    for (int i = 0; i < 20; ++i) {
        auto r = c.call_sync(service::session, bytes_of("lookup " + std::to_string(i)), 5000);
        ASSERT_TRUE(r.ok()) << r.status().message();
        EXPECT_EQ(text_of(r->body), "lookup " + std::to_string(i));
    }
    EXPECT_EQ(slow.f.wait_for(0ms), std::future_status::timeout) << "the spawn still runs";
    auto dropped = c.call_sync(service::fabric, bytes_of("x"), 5000);
    ASSERT_TRUE(dropped.ok()) << dropped.status().message();
    EXPECT_EQ(dropped->status, PMIX_ERROR);
    auto none = c.call_sync(service::connect, bytes_of("x"), 5000);
    ASSERT_TRUE(none.ok());
    EXPECT_EQ(none->status, PMIX_ERR_NOT_SUPPORTED);
    release.set_value();
    auto rs = slow.get();
    ASSERT_TRUE(rs.ok()) << rs.status().message();
    EXPECT_EQ(rs->message, "spawned");
    EXPECT_EQ(c.link_stats().connects, 1u) << "one connection, one handshake, for 23 calls";
    c.shutdown();
    for (auto &t : threads) t.join();
}

// The client's gate on the link: a call waiting on srun ends at once as cancelled.
TEST(AgentLink, TheClientsGateCancelsCallsInFlight) {
    pmixcpp::testing::agent_auth auth;
    auto agent = srun_agent::start(nullptr, auth.keys());
    ASSERT_TRUE(agent.ok());
    agent.value()->services().set_names(&services::names());
    std::vector<agent::responder> parked;
    std::mutex pm;
    (void)agent.value()->services().add(service::alloc, [&](agent::responder answer, std::vector<uint8_t>) {
        std::lock_guard<std::mutex> g(pm);
        parked.push_back(std::move(answer));
    });
    agent::client c(loopback(), agent.value()->port(), auth.client());
    outcome a;
    c.call(service::alloc, bytes_of("a"), 60000, a.done());
    for (int i = 0; i < 50 && c.link_stats().connects == 0; ++i) std::this_thread::sleep_for(20ms);
    std::this_thread::sleep_for(100ms);
    auto t0 = clock_type::now();
    c.shutdown();
    auto ra = a.get(5s);
    EXPECT_LT(clock_type::now() - t0, 3s) << "at once, not at the 60 s deadline";
    ASSERT_FALSE(ra.ok());
    EXPECT_EQ(ra.status().code(), PMIX_ERR_JOB_CANCELED);
    outcome b;
    c.call(service::alloc, bytes_of("b"), 1000, b.done());
    auto rb = b.get(0ms);
    ASSERT_FALSE(rb.ok());
    EXPECT_EQ(rb.status().code(), PMIX_ERR_NOT_AVAILABLE);
    std::lock_guard<std::mutex> g(pm);
    parked.clear();  // answered into a closed connection: nothing breaks
}

// The lanes of the layer above's services: allocations that wait (here: never answered) fill
// their own lane only; a call of another service still goes through.
TEST(AgentLink, AFullLaneRefusesOnlyItsOwnService) {
    pmixcpp::testing::agent_auth auth;
    auto agent = srun_agent::start(nullptr, auth.keys());
    ASSERT_TRUE(agent.ok());
    agent.value()->services().set_names(&services::names());
    std::vector<agent::responder> parked;
    std::mutex pm;
    ASSERT_TRUE(agent.value()
                    ->services()
                    .add(service::alloc,
                         [&](agent::responder answer, std::vector<uint8_t>) {
                             std::lock_guard<std::mutex> g(pm);
                             parked.push_back(std::move(answer));
                         })
                    .ok());
    ASSERT_TRUE(agent.value()
                    ->services()
                    .add(service::session,
                         [](agent::responder answer, std::vector<uint8_t> body) {
                             (void)answer.send(reply{PMIX_SUCCESS, "", std::move(body)});
                         })
                    .ok());
    agent::client c(loopback(), agent.value()->port(), auth.client(), &services::names());
    std::vector<std::unique_ptr<outcome>> waiting;
    for (size_t i = 0; i < agent::client::kMaxInFlight; ++i) {
        waiting.push_back(std::make_unique<outcome>());
        c.call(service::alloc, bytes_of("grow"), 60000, waiting.back()->done());
    }
    outcome over;
    c.call(service::alloc, bytes_of("one more"), 60000, over.done());
    auto ro = over.get(0ms);
    ASSERT_FALSE(ro.ok());
    EXPECT_EQ(ro.status().code(), PMIX_ERR_OUT_OF_RESOURCE);
    EXPECT_NE(ro.status().message().find("allocation"), std::string::npos) << ro.status().message();
    auto lookup = c.call_sync(service::session, bytes_of("lookup"), 10000);
    ASSERT_TRUE(lookup.ok()) << lookup.status().message();
    EXPECT_EQ(text_of(lookup->body), "lookup");
    c.shutdown();
    for (auto &w : waiting) EXPECT_EQ(w->get(5s).status().code(), PMIX_ERR_JOB_CANCELED);
    std::lock_guard<std::mutex> g(pm);
    parked.clear();
}
