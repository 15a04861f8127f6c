// The authentication of the node listeners and srun's agent (plugin/net/handshake.h), the limits
// on unauthenticated peers (plugin/net/listener_guard.h), and both listeners under attack over
// real loopback sockets: garbage, a wrong key, a forged or replayed credential, a replayed
// handshake, a 4 GiB length, idle connections, a flood.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <thread>

#include "log.h"
#include "plugin/agent/proto/agent_io.h"
#include "plugin/agent/srun/srun_agent.h"
#include "plugin/agent/stepd/agent_client.h"
#include "plugin/net/handshake.h"
#include "plugin/net/listener_guard.h"
#include "plugin/net/identity.h"
#include "plugin/net/transport.h"
#include "tests/net/test_channels.h"
#include "tests/net/test_credentials.h"
#include "wire/codec.h"
#include "wire/frame.h"

using namespace pmixcpp;
using namespace pmixcpp::net;

namespace {

template <typename T>
T must(Result<T> r) {
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? std::move(r.value()) : T{};
}

// A key named for the test (distinct names, distinct keys).
auth::key key_of(const std::string &name, auth::purpose p = auth::purpose::node) {
    auth::key base{};
    auto k = auth::derive_key(base, name + " " + auth::to_string(p), 0);
    EXPECT_TRUE(k.ok());
    return k.value();
}

// Split a complete handshake frame into (type, payload).
std::pair<uint16_t, std::vector<uint8_t>> parse(const std::vector<uint8_t> &frame) {
    auth::frame_reader r;
    EXPECT_EQ(r.wanted(), wire::kFrameHeaderSize);
    EXPECT_TRUE(r.feed(frame.data(), wire::kFrameHeaderSize).ok());
    EXPECT_EQ(r.wanted(), frame.size() - wire::kFrameHeaderSize);
    EXPECT_TRUE(r.feed(frame.data() + wire::kFrameHeaderSize, r.wanted()).ok());
    EXPECT_TRUE(r.complete());
    return {r.type(), std::vector<uint8_t>(r.payload().begin(), r.payload().end())};
}

std::vector<uint8_t> header_announcing(uint16_t type, uint32_t length) {
    std::vector<uint8_t> h(wire::kFrameHeaderSize);
    wire::FrameHeader fh;
    fh.type = type;
    fh.length = length;
    wire::encode_frame_header(fh, h.data());
    return h;
}

}  // namespace

// --- the state machines, no sockets -------------------------------------------------------

// --- the library's primitives as we call them ------------------------------------------------

namespace {
std::string hex(std::span<const uint8_t> d) {
    static const char *x = "0123456789abcdef";
    std::string s;
    for (uint8_t b : d) {
        s += x[b >> 4];
        s += x[b & 15];
    }
    return s;
}
std::vector<uint8_t> bytes(std::string_view s) { return {s.begin(), s.end()}; }
// HMAC pads a short key with zeros to the block size: a 32-byte key holding a shorter one
// followed by zeros is that key.
auth::key padded(std::span<const uint8_t> k) {
    auth::key out{};
    std::copy(k.begin(), k.end(), out.bytes.begin());
    return out;
}
}  // namespace

// auth::hmac is HMAC-SHA-256 (libsodium): RFC 4231 test cases 1 and 2.
TEST(crypto, hmac_is_hmac_sha256) {
    std::vector<uint8_t> k1(20, 0x0b);
    EXPECT_EQ(hex(auth::hmac(padded(k1), {bytes("Hi There")}).value()),
              "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
    EXPECT_EQ(hex(auth::hmac(padded(bytes("Jefe")), {bytes("what do ya "), bytes("want for nothing?")}).value()),
              "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    EXPECT_TRUE(auth::equal(bytes("same"), bytes("same")));
    EXPECT_FALSE(auth::equal(bytes("same"), bytes("sane")));
    EXPECT_FALSE(auth::equal(bytes("same"), bytes("sam")));
    // The KDF: distinct labels and nodes give distinct keys; the same inputs the same key.
    auth::key base = auth::random_key();
    EXPECT_TRUE(auth::equal(link_key(base, "tcp", 1).value().bytes, link_key(base, "tcp", 1).value().bytes));
    EXPECT_FALSE(auth::equal(link_key(base, "tcp", 1).value().bytes, link_key(base, "tcp", 2).value().bytes));
    EXPECT_FALSE(auth::equal(link_key(base, "tcp", 1).value().bytes, link_key(base, "ucx", 1).value().bytes));
    EXPECT_FALSE(auth::equal(auth::random_key().bytes, auth::random_key().bytes));
}

TEST(handshake, same_key_both_sides_done) {
    auth::server_handshake srv(key_of("s3cret"), auth::purpose::node, "pmixcpp.1.0");
    auth::client_handshake cli(key_of("s3cret"), auth::purpose::node, "pmixcpp.1.0", 3);
    auto hello = cli.hello_frame();
    ASSERT_TRUE(hello.ok());
    auto [t1, p1] = parse(*hello);
    EXPECT_EQ(t1, auth::kHelloFrame);
    auto challenge = srv.on_frame(t1, p1);
    ASSERT_TRUE(challenge.ok()) << challenge.status().message();
    auto [t2, p2] = parse(*challenge);
    auto response = cli.on_frame(t2, p2);
    ASSERT_TRUE(response.ok()) << response.status().message();
    EXPECT_TRUE(cli.done());
    auto [t3, p3] = parse(*response);
    auto last = srv.on_frame(t3, p3);
    ASSERT_TRUE(last.ok()) << last.status().message();
    EXPECT_TRUE(last->empty());
    EXPECT_TRUE(srv.done());
    EXPECT_EQ(srv.peer_node(), 3u);
    for (auto *f : {&hello.value(), &challenge.value(), &response.value()}) EXPECT_LE(f->size(), auth::kMaxHandshakeFrame);
}

TEST(handshake, wrong_key_fails_on_both_sides) {
    // The client has the wrong key: it finds out from the server's proof and sends nothing.
    {
        auth::server_handshake srv(key_of("right"), auth::purpose::node, "ns");
        auth::client_handshake cli(key_of("wrong"), auth::purpose::node, "ns", 0);
        auto [t1, p1] = parse(must(cli.hello_frame()));
        auto [t2, p2] = parse(must(srv.on_frame(t1, p1)));
        auto r = cli.on_frame(t2, p2);
        EXPECT_EQ(r.status().code(), PMIX_ERR_NO_PERMISSIONS);
        EXPECT_FALSE(cli.done());
    }
    // A client that skips the check and answers anyway (an attacker guessing): the server refuses.
    {
        auth::server_handshake srv(key_of("right"), auth::purpose::node, "ns");
        auth::client_handshake cli(key_of("wrong"), auth::purpose::node, "ns", 0);
        auto [t1, p1] = parse(must(cli.hello_frame()));
        ASSERT_TRUE(srv.on_frame(t1, p1).ok());
        std::vector<uint8_t> guess(auth::kMacSize, 0x5a);
        EXPECT_EQ(srv.on_response(guess).code(), PMIX_ERR_NO_PERMISSIONS);
        EXPECT_FALSE(srv.done());
        EXPECT_EQ(srv.current(), auth::server_handshake::state::failed);
    }
    // Another step's namespace, another purpose: refused at the hello.
    {
        auth::server_handshake srv(key_of("right"), auth::purpose::node, "pmixcpp.1.0");
        auth::client_handshake cli(key_of("right"), auth::purpose::node, "pmixcpp.2.0", 0);
        auto [t1, p1] = parse(must(cli.hello_frame()));
        EXPECT_FALSE(srv.on_frame(t1, p1).ok());
        auth::server_handshake agent(key_of("right", auth::purpose::agent), auth::purpose::agent, "");
        EXPECT_FALSE(agent.on_frame(t1, p1).ok());
    }
    // The node and agent keys differ.
    EXPECT_FALSE(auth::equal(key_of("x", auth::purpose::node).bytes, key_of("x", auth::purpose::agent).bytes));
}

TEST(handshake, replayed_client_run_fails) {
    // Record a complete, successful client run against one server...
    auth::key k = key_of("s3cret");
    auth::server_handshake first(k, auth::purpose::node, "ns");
    auth::client_handshake cli(k, auth::purpose::node, "ns", 1);
    auto hello = must(cli.hello_frame());
    auto [t1, p1] = parse(hello);
    auto [t2, p2] = parse(must(first.on_frame(t1, p1)));
    auto response = must(cli.on_frame(t2, p2));
    auto [t3, p3] = parse(response);
    ASSERT_TRUE(first.on_frame(t3, p3).ok());
    // ...and replay it byte for byte: the new server's nonce differs, so the old proof is wrong.
    auth::server_handshake again(k, auth::purpose::node, "ns");
    ASSERT_TRUE(again.on_frame(t1, p1).ok());
    EXPECT_EQ(again.on_frame(t3, p3).status().code(), PMIX_ERR_NO_PERMISSIONS);
    EXPECT_FALSE(again.done());
    // A recorded server challenge does not convince a new client (its nonce is new).
    auth::client_handshake fresh(k, auth::purpose::node, "ns", 1);
    ASSERT_TRUE(fresh.hello_frame().ok());
    EXPECT_FALSE(fresh.on_frame(t2, p2).ok());
    // Reflection: the server's proof is not a client's proof.
    auth::server_handshake srv(k, auth::purpose::node, "ns");
    auto [h1, hp1] = parse(must(auth::client_handshake(k, auth::purpose::node, "ns", 1).hello_frame()));
    auto [c1, cp1] = parse(must(srv.on_frame(h1, hp1)));
    auth::challenge ch;
    ASSERT_TRUE(auth::decode_challenge(cp1, &ch).ok());
    EXPECT_FALSE(srv.on_response(ch.server_mac).ok());
    // Out of order: a response before the hello.
    auth::server_handshake early(k, auth::purpose::node, "ns");
    EXPECT_FALSE(early.on_frame(t3, p3).ok());
}

TEST(handshake, truncated_oversized_and_garbage_frames) {
    auth::client_handshake cli(key_of("s"), auth::purpose::node, "ns", 0);
    auto hello = must(cli.hello_frame());
    // Truncated: never complete, and the payload decoder refuses every prefix.
    auth::frame_reader r;
    ASSERT_TRUE(r.feed(hello.data(), wire::kFrameHeaderSize).ok());
    ASSERT_TRUE(r.feed(hello.data() + wire::kFrameHeaderSize, hello.size() - wire::kFrameHeaderSize - 1).ok());
    EXPECT_FALSE(r.complete());
    EXPECT_EQ(r.wanted(), 1u);
    auto payload = std::span<const uint8_t>(hello).subspan(wire::kFrameHeaderSize);
    for (size_t n = 0; n < payload.size(); ++n) {
        auth::hello h;
        EXPECT_FALSE(auth::decode_hello(payload.first(n), &h).ok()) << n;
    }
    auth::hello whole;
    EXPECT_TRUE(auth::decode_hello(payload, &whole).ok());
    // Trailing bytes are refused too.
    std::vector<uint8_t> longer(payload.begin(), payload.end());
    longer.push_back(0);
    EXPECT_FALSE(auth::decode_hello(longer, &whole).ok());
    // 4 GiB announced: refused with the header, before any payload byte is read or reserved.
    auth::frame_reader big;
    auto h = header_announcing(auth::kHelloFrame, 0xFFFFFFFFu);
    EXPECT_FALSE(big.feed(h.data(), h.size()).ok());
    auth::frame_reader just_over;
    h = header_announcing(auth::kHelloFrame, auth::kMaxHandshakePayload + 1);
    EXPECT_FALSE(just_over.feed(h.data(), h.size()).ok());
    // An ordinary frame before authentication: refused by type.
    auth::frame_reader early;
    h = header_announcing(0x100, 10);
    EXPECT_FALSE(early.feed(h.data(), h.size()).ok());
    // Garbage: refused with its first byte.
    auth::frame_reader junk;
    const uint8_t get[] = {'G'};
    EXPECT_FALSE(junk.feed(get, 1).ok());
    // More than wanted is a caller error, refused.
    auth::frame_reader over;
    std::vector<uint8_t> two(hello);
    two.insert(two.end(), hello.begin(), hello.end());
    EXPECT_FALSE(over.feed(two.data(), two.size()).ok());
}

TEST(handshake, frame_seal_and_replay_window) {
    auth::key k = key_of("link");
    std::vector<uint8_t> frame = {1, 2, 3, 4};
    auto sealed = auth::seal_frame(k, frame, 5, 2, 7);
    ASSERT_TRUE(sealed.ok());
    EXPECT_EQ(sealed->size(), frame.size() + auth::kSealSize);
    std::span<const uint8_t> inner;
    uint64_t seq = 0;
    uint32_t src = 0;
    ASSERT_TRUE(auth::sealed_source(*sealed, &src).ok());
    EXPECT_EQ(src, 5u);
    ASSERT_TRUE(auth::open_sealed_frame(k, *sealed, 2, &inner, &src, &seq).ok());
    EXPECT_EQ(std::vector<uint8_t>(inner.begin(), inner.end()), frame);
    EXPECT_EQ(seq, 7u);
    EXPECT_EQ(src, 5u);
    EXPECT_FALSE(auth::open_sealed_frame(k, *sealed, 3, &inner, &src, &seq).ok());  // for another node
    EXPECT_FALSE(auth::open_sealed_frame(key_of("other"), *sealed, 2, &inner, &src, &seq).ok());
    for (size_t i = 0; i < sealed->size(); ++i) {  // any flipped bit breaks the MAC
        auto bad = *sealed;
        bad[i] ^= 0x10;
        EXPECT_FALSE(auth::open_sealed_frame(k, bad, 2, &inner, &src, &seq).ok()) << i;
    }
    EXPECT_FALSE(auth::open_sealed_frame(k, std::span<const uint8_t>(*sealed).first(10), 2, &inner, &src, &seq).ok());

    auth::replay_window w;
    EXPECT_TRUE(w.accept(5));
    EXPECT_FALSE(w.accept(5));  // replay
    EXPECT_TRUE(w.accept(9));
    EXPECT_TRUE(w.accept(7));   // late but new
    EXPECT_FALSE(w.accept(7));
    EXPECT_TRUE(w.accept(200));
    EXPECT_FALSE(w.accept(9));   // too old to tell: dropped
    EXPECT_TRUE(w.accept(150));  // within 64 of the highest
    EXPECT_FALSE(w.accept(150));
}

// --- the listener guard -------------------------------------------------------------------

TEST(listener_guard, caps_evict_oldest_and_deadlines_expire) {
    listener_limits lim;
    lim.max_pending = 4;
    lim.max_pending_per_peer = 2;
    lim.auth_timeout = std::chrono::milliseconds(100);
    lim.log_burst = 2;
    lim.log_window = std::chrono::seconds(60);
    listener_guard g("test listener", lim);
    auto t0 = listener_guard::clock::now();
    EXPECT_TRUE(g.admit(1, "10.0.0.1", t0).empty());
    EXPECT_TRUE(g.admit(2, "10.0.0.1", t0).empty());
    EXPECT_EQ(g.admit(3, "10.0.0.1", t0), std::vector<uint64_t>{1});  // per-peer cap: its oldest goes
    EXPECT_TRUE(g.admit(4, "10.0.0.2", t0).empty());
    EXPECT_TRUE(g.admit(5, "10.0.0.3", t0).empty());
    EXPECT_EQ(g.admit(6, "10.0.0.4", t0), std::vector<uint64_t>{2});  // total cap: the oldest goes
    EXPECT_EQ(g.pending(), 4u);
    g.authenticated(3);
    g.closed(4);
    EXPECT_EQ(g.pending(), 2u);
    EXPECT_TRUE(g.expired(t0 + std::chrono::milliseconds(50)).empty());
    auto gone = g.expired(t0 + std::chrono::milliseconds(150));
    EXPECT_EQ(gone, (std::vector<uint64_t>{5, 6}));
    EXPECT_EQ(g.pending(), 0u);
    EXPECT_FALSE(g.next_deadline().has_value());
    // Four refusals, two logged, the rest counted.
    EXPECT_EQ(g.stats().refused, 4u);
    EXPECT_EQ(g.stats().logged, 2u);
    EXPECT_EQ(g.stats().suppressed, 2u);
    EXPECT_TRUE(g.accept_failed(EMFILE, t0));
    EXPECT_TRUE(g.accept_failed(ENFILE, t0));
    EXPECT_FALSE(g.accept_failed(EAGAIN, t0));
    // A peer that closed or reset its own connection before authenticating (a step that ended in
    // its handshake) was refused nothing; another read error is a refusal.
    const uint64_t refused = g.stats().refused;  // the two paused accepts count as refusals
    EXPECT_TRUE(g.abandoned("10.0.0.5", 0, t0));
    EXPECT_TRUE(g.abandoned("10.0.0.5", ECONNRESET, t0));
    EXPECT_EQ(g.stats().abandoned, 2u);
    EXPECT_EQ(g.stats().refused, refused);
    EXPECT_FALSE(g.abandoned("10.0.0.5", ETIMEDOUT, t0));
    EXPECT_EQ(g.stats().abandoned, 2u);
    EXPECT_EQ(g.stats().refused, refused + 1);
}

TEST(listener_guard, a_flood_never_evicts_another_peers_handshake) {
    listener_limits lim;
    lim.max_pending = 8;
    lim.max_pending_per_peer = 4;
    listener_guard g("test listener", lim);
    auto t0 = listener_guard::clock::now();
    // The step's slurmstepds (root, all on 127.0.0.1 in a one-host cluster) and a remote node.
    ASSERT_TRUE(g.admit(1, "local uid 0 (127.0.0.1)", t0).empty());
    ASSERT_TRUE(g.admit(2, "local uid 0 (127.0.0.1)", t0).empty());
    ASSERT_TRUE(g.admit(3, "10.1.2.3", t0).empty());
    // A local user floods, from one address, then from many (all of 127/8 is local), and a
    // second user joins; the oldest connections are always the legitimate ones.
    uint64_t id = 100;
    std::vector<uint64_t> evicted;
    for (int i = 0; i < 2000; ++i) {
        std::string from = i % 3 == 2 ? "local uid 7 (127.0.0.9)"
                                       : "local uid 65534 (127.0." + std::to_string(i % 250) + "." + std::to_string(i % 7) + ")";
        for (uint64_t e : g.admit(id++, from, t0)) evicted.push_back(e);
    }
    for (uint64_t e : evicted) EXPECT_GE(e, 100u) << "a legitimate pending handshake was evicted";
    EXPECT_EQ(g.pending(), 8u);
    // Their handshakes complete after the flood.
    g.authenticated(1);
    g.authenticated(2);
    g.authenticated(3);
    EXPECT_EQ(g.pending(), 5u);
    // Keys: a local peer by uid, whatever its address; a remote one by address.
    EXPECT_EQ(peer_key("local uid 65534 (127.0.0.5)"), "local uid 65534");
    EXPECT_EQ(peer_key("10.1.2.3"), "10.1.2.3");
}

// --- real sockets ---------------------------------------------------------------------------

namespace {

int connect_loopback(uint16_t port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    if (connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof(a)) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

// Whether the peer closes `fd` within `ms` (reading and discarding whatever it sends).
bool closed_within(int fd, int ms, std::function<void()> pump = nullptr) {
    auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (std::chrono::steady_clock::now() < end) {
        if (pump) pump();
        pollfd p{fd, POLLIN, 0};
        if (poll(&p, 1, pump ? 1 : 50) > 0) {
            char buf[256];
            ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
            if (n == 0 || (n < 0 && errno != EAGAIN)) return true;
        }
    }
    return false;
}

sockaddr_storage loopback() {
    sockaddr_storage ss{};
    auto *in = reinterpret_cast<sockaddr_in *>(&ss);
    in->sin_family = AF_INET;
    in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return ss;
}

void send_bytes(int fd, const std::vector<uint8_t> &b) { ASSERT_EQ(send(fd, b.data(), b.size(), MSG_NOSIGNAL), static_cast<ssize_t>(b.size())); }

struct loop {
    event_base *base = event_base_new();
    ~loop() { event_base_free(base); }
    void pump() { event_base_loop(base, EVLOOP_NONBLOCK); }
    template <typename Pred>
    bool run_until(Pred done, int ms = 3000) {
        for (int i = 0; i < ms && !done(); ++i) {
            pump();
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        return done();
    }
};

}  // namespace

TEST(tcp_listener, refuses_attacks_and_keeps_serving_its_peers) {
    loop l;
    std::vector<envelope> got0, got1;
    std::unique_ptr<node_transport> t[2];
    auto keys = pmixcpp::testing::node_keys(2);
    for (uint32_t n = 0; n < 2; ++n) {
        transport_options o;
        o.channels = pmixcpp::testing::channels();
        o.id = {"pmixcpp.1.0"};
        o.node_key = keys[n];
        o.node_id = n;
        o.node_names = {"n1", "n2"};
        o.bind_address = "127.0.0.1";
        o.on_receive = [&, n](envelope &&e) { (n == 0 ? got0 : got1).push_back(std::move(e)); };
        auto r = make_tcp_transport(l.base, o);
        ASSERT_TRUE(r.ok()) << r.status().message();
        t[n] = std::move(r.value());
    }
    EXPECT_EQ(t[0]->address().rfind("tcp:127.0.0.1:", 0), 0u);  // bound to the node's address
    uint16_t port0 = static_cast<uint16_t>(std::stoi(t[0]->address().substr(t[0]->address().rfind(':') + 1)));
    auto pump = [&] { l.pump(); };

    // Garbage, a 4 GiB length, an ordinary frame without a handshake: each closed at once.
    int g = connect_loopback(port0);
    send_bytes(g, std::vector<uint8_t>{'G', 'E', 'T', ' ', '/'});
    EXPECT_TRUE(closed_within(g, 2000, pump));
    close(g);
    int huge = connect_loopback(port0);
    send_bytes(huge, header_announcing(auth::kHelloFrame, 0xFFFFFFFFu));
    EXPECT_TRUE(closed_within(huge, 2000, pump));
    close(huge);
    int plain = connect_loopback(port0);
    auto frame = encode_node_frame({"pmixcpp.1.0"}, 1, pmixcpp::testing::chan::coll, std::vector<uint8_t>{1});
    send_bytes(plain, frame.value());
    EXPECT_TRUE(closed_within(plain, 2000, pump));
    close(plain);
    // A client without the link key: it gets a challenge it cannot answer; a guess is refused.
    int wrong = connect_loopback(port0);
    auth::client_handshake evil(key_of("evil"), auth::purpose::node, "pmixcpp.1.0", 1);
    send_bytes(wrong, must(evil.hello_frame()));
    l.run_until([] { return false; }, 50);
    uint8_t chal[auth::kMaxHandshakeFrame];
    ssize_t n = recv(wrong, chal, sizeof(chal), MSG_DONTWAIT);
    ASSERT_GT(n, 0);
    auto guess = wire::encode_frame(auth::kResponseFrame, 0, 0, std::vector<uint8_t>(auth::kMacSize, 1), 64);
    send_bytes(wrong, guess.value());
    EXPECT_TRUE(closed_within(wrong, 2000, pump));
    close(wrong);
    // Idle connections (more than the cap): the oldest are dropped, the rest time out.
    std::vector<int> idle;
    for (int i = 0; i < 100; ++i) idle.push_back(connect_loopback(port0));
    l.run_until([] { return false; }, 200);

    // Meanwhile the real peers authenticate and talk.
    std::vector<std::string> table = {t[0]->address(), t[1]->address()};
    ASSERT_TRUE(t[0]->set_peers(table, keys).ok());
    ASSERT_TRUE(t[1]->set_peers(table, keys).ok());
    t[1]->send(0, pmixcpp::testing::chan::coll, std::vector<uint8_t>{42});
    t[0]->send(1, pmixcpp::testing::chan::coll, std::vector<uint8_t>{43});
    ASSERT_TRUE(l.run_until([&] { return got0.size() == 1 && got1.size() == 1; }, 5000));
    EXPECT_EQ(got0[0].body, std::vector<uint8_t>{42});
    EXPECT_EQ(got1[0].body, std::vector<uint8_t>{43});
    EXPECT_TRUE(t[0]->peer_alive(1));

    size_t dropped = 0;
    auto end = std::chrono::steady_clock::now() + std::chrono::seconds(6);
    while (dropped < idle.size() && std::chrono::steady_clock::now() < end) {
        l.run_until([] { return false; }, 100);
        dropped = 0;
        for (int fd : idle) {
            char c;
            if (recv(fd, &c, 1, MSG_DONTWAIT) == 0) ++dropped;
        }
    }
    EXPECT_EQ(dropped, idle.size()) << "idle unauthenticated connections outlived the deadline";
    for (int fd : idle) close(fd);
    // Still serving after all that.
    t[1]->send(0, pmixcpp::testing::chan::coll, std::vector<uint8_t>{44});
    ASSERT_TRUE(l.run_until([&] { return got0.size() == 2; }, 3000));
}

TEST(agent_listener, idle_and_hostile_peers_hold_nobody_up) {
    int reports = 0;
    pmixcpp::testing::agent_auth auth;
    auto agent = srun_agent::start([&](const agent::report &) { ++reports; }, auth.keys(), {"127.0.0.1"});
    ASSERT_TRUE(agent.ok()) << agent.status().message();
    const uint16_t port = agent.value()->port();
    // Ten idle connections and one announcing a 4 GiB frame.
    std::vector<int> idle;
    for (int i = 0; i < 10; ++i) idle.push_back(connect_loopback(port));
    int huge = connect_loopback(port);
    send_bytes(huge, header_announcing(auth::kHelloFrame, 0xFFFFFFFFu));
    EXPECT_TRUE(closed_within(huge, 5000));  // at once; the bound only allows for a loaded machine
    close(huge);
    // A real report goes through without waiting for the idle ones' 10 s authentication deadline
    // (the agent is not stuck on them; the bound allows for a loaded machine, where this test
    // runs at low priority beside others).
    agent::report r;
    r.status = 4;
    r.node = "n1";
    r.message = "boom";
    auto t0 = std::chrono::steady_clock::now();
    ASSERT_TRUE(agent::client(loopback(), port, auth.client()).report(r, 8000).ok());
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(8000));
    EXPECT_EQ(reports, 1);
    // Replay: record a successful client's bytes with a proxy-less trick, sending its hello and
    // response again on a new connection. Its credential was opened before: refused.
    auto cred = must(auth.client()());
    int rec = connect_loopback(port);
    auth::client_handshake cli(cred.key, auth::purpose::agent, "", UINT32_MAX, cred.credential);
    auto hello = must(cli.hello_frame());
    send_bytes(rec, hello);
    auth::frame_reader fr;
    while (!fr.complete()) {
        uint8_t b[auth::kMaxHandshakeFrame];
        ssize_t n = recv(rec, b, fr.wanted(), 0);
        ASSERT_GT(n, 0);
        ASSERT_TRUE(fr.feed(b, n).ok());
    }
    auto response = must(cli.on_frame(fr.type(), fr.payload()));
    send_bytes(rec, response);
    close(rec);
    int replay = connect_loopback(port);
    send_bytes(replay, hello);
    send_bytes(replay, response);
    // The agent refuses the replayed credential and closes.
    EXPECT_TRUE(closed_within(replay, 2000));
    close(replay);
    // The idle ones are dropped after the agent's deadline (10 s from their connect).
    size_t dropped = 0;
    for (int fd : idle) dropped += closed_within(fd, 12000) ? 1 : 0;
    EXPECT_EQ(dropped, idle.size());
    for (int fd : idle) close(fd);
    EXPECT_TRUE(agent::client(loopback(), port, auth.client()).report(r, 2000).ok());
    EXPECT_EQ(reports, 2);
    // A credential the service refuses (not made by it), one signed by the job's user (uid 1000,
    // not root: what the user can make), and one for another step: the agent closes at the hello
    // (the caller cannot tell that from a shed connection: it tries again, fresh, and gives up).
    pmixcpp::testing::agent_auth forger;
    EXPECT_FALSE(agent::client(loopback(), port, forger.client()).report(r, 2000).ok());
    auto as_user = std::make_shared<pmixcpp::testing::test_credentials>(auth.a, 1000);
    agent_io::call_credential_fn user_made = [as_user, ns = auth.nspace] { return make_agent_credential(*as_user, ns, 0); };
    EXPECT_FALSE(agent::client(loopback(), port, user_made).report(r, 2000).ok());
    agent_io::call_credential_fn other_step = [s = auth.stepd] { return make_agent_credential(*s, "slurm.2.0", 0); };
    EXPECT_FALSE(agent::client(loopback(), port, other_step).report(r, 2000).ok());
    EXPECT_EQ(reports, 2);
}

TEST(agent_listener, out_of_descriptors_pauses_instead_of_spinning) {
    pmixcpp::testing::agent_auth auth;
    auto agent = srun_agent::start(nullptr, auth.keys(), {"127.0.0.1"});
    ASSERT_TRUE(agent.ok()) << agent.status().message();
    const uint16_t port = agent.value()->port();
    rlimit old{};
    ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &old), 0);
    size_t open_now = 0;
    for (int fd = 0; fd < 4096; ++fd) open_now += fcntl(fd, F_GETFD) != -1 ? 1 : 0;
    rlimit low = old;
    low.rlim_cur = open_now + 24;
    ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
    // Fill the descriptor table (the agent accepting some of these connections helps), then open
    // two more connections it cannot accept: its listening socket stays readable.
    std::vector<int> socks;
    for (int i = 0; i < 64; ++i) {
        int fd = connect_loopback(port);
        if (fd < 0) break;
        socks.push_back(fd);
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    ASSERT_GE(socks.size(), 2u);
    for (int i = 0; i < 2; ++i) {
        close(socks.back());
        socks.pop_back();
    }
    for (int i = 0; i < 2; ++i) {
        int fd = connect_loopback(port);
        if (fd >= 0) socks.push_back(fd);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    rusage r0{}, r1{};
    getrusage(RUSAGE_SELF, &r0);
    std::this_thread::sleep_for(std::chrono::milliseconds(1000));
    getrusage(RUSAGE_SELF, &r1);
    auto cpu_us = [](const rusage &r) {
        return (r.ru_utime.tv_sec + r.ru_stime.tv_sec) * 1000000L + r.ru_utime.tv_usec + r.ru_stime.tv_usec;
    };
    EXPECT_LT(cpu_us(r1) - cpu_us(r0), 250000) << "the agent spins on accept() failing with EMFILE";
    for (int fd : socks) close(fd);
    ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &old), 0);
    // Serving again once descriptors are back.
    agent::report rep;
    rep.status = 2;
    EXPECT_TRUE(agent::client(loopback(), port, auth.client()).report(rep, 3000).ok());
}

TEST(listener_guard, a_local_peer_is_known_by_its_uid) {
    int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(bind(lfd, reinterpret_cast<sockaddr *>(&a), sizeof(a)), 0);
    ASSERT_EQ(listen(lfd, 4), 0);
    socklen_t al = sizeof(a);
    ASSERT_EQ(getsockname(lfd, reinterpret_cast<sockaddr *>(&a), &al), 0);
    int c = connect_loopback(ntohs(a.sin_port));
    ASSERT_GE(c, 0);
    sockaddr_storage peer{};
    socklen_t pl = sizeof(peer);
    int fd = accept(lfd, reinterpret_cast<sockaddr *>(&peer), &pl);
    ASSERT_GE(fd, 0);
    const std::string label = peer_label(fd, peer);
    EXPECT_EQ(label, "local uid " + std::to_string(getuid()) + " (127.0.0.1)");
    EXPECT_EQ(peer_key(label), "local uid " + std::to_string(getuid()));
    close(fd);
    close(c);
    close(lfd);
}
