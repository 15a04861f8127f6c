// Node transport: the envelope checks, TCP between two transports in one event loop, and the
// address rendezvous through the srun agent.
#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <future>

#include <atomic>
#include <set>
#include <thread>

#include "plugin/agent/srun/srun_agent.h"
#include "plugin/agent/stepd/agent_client.h"
#include "plugin/net/transport.h"
#include "tests/net/test_channels.h"
#include "tests/net/test_credentials.h"
#include "wire/frame.h"

using namespace pmixcpp;
using namespace pmixcpp::net;

namespace {
// The node keys of the step's transports (what their verified records carry, identity.h).
const std::vector<auth::key> &step_keys() {
    static const std::vector<auth::key> k = pmixcpp::testing::node_keys(16);
    return k;
}
std::vector<auth::key> keys_for(size_t n) { return {step_keys().begin(), step_keys().begin() + n}; }
}  // namespace

TEST(envelope, round_trip_and_checks) {
    step_identity id{"slurm.1.0"};
    const channel_names *above = pmixcpp::testing::channels();
    std::vector<uint8_t> body{1, 2, 3};
    auto frame = encode_node_frame(id, 2, pmixcpp::testing::chan::dmodex_request, body);
    ASSERT_TRUE(frame.ok());
    envelope e;
    ASSERT_TRUE(decode_node_frame(*frame, id, 4, above, &e).ok());
    EXPECT_EQ(e.src_node, 2u);
    EXPECT_EQ(e.chan, pmixcpp::testing::chan::dmodex_request);
    EXPECT_EQ(e.body, body);
    EXPECT_EQ(frame->at(wire::kFrameHeaderSize), kEnvelopeVersion);
    EXPECT_EQ(decode_node_frame(*frame, {"slurm.2.0"}, 4, above, &e).code(), PMIX_ERR_NO_PERMISSIONS);
    auto old = *frame;  // an envelope of version 1 (secret in clear) is refused
    old[wire::kFrameHeaderSize] = 1;
    EXPECT_EQ(decode_node_frame(old, id, 4, above, &e).code(), PMIX_ERR_NOT_SUPPORTED);
    EXPECT_FALSE(decode_node_frame(*frame, id, 2, above, &e).ok());  // source node out of range
    auto cut = *frame;
    cut.pop_back();
    EXPECT_FALSE(decode_node_frame(cut, id, 4, above, &e).ok());
}

// net knows no channel but its own link channel: the layer above says which ids are channels.
TEST(envelope, a_channel_the_layer_above_does_not_name_is_refused) {
    step_identity id{"slurm.1.0"};
    const channel_names *above = pmixcpp::testing::channels();
    envelope e;
    auto unknown = encode_node_frame(id, 1, pmixcpp::testing::chan::unknown, std::vector<uint8_t>{1});
    ASSERT_TRUE(unknown.ok());
    Status st = decode_node_frame(*unknown, id, 4, above, &e);
    EXPECT_EQ(st.code(), PMIX_ERR_BAD_PARAM);
    EXPECT_NE(st.message().find("unknown channel 9"), std::string::npos) << st.message();
    auto coll = encode_node_frame(id, 1, pmixcpp::testing::chan::coll, std::vector<uint8_t>{1});
    ASSERT_TRUE(coll.ok());
    EXPECT_FALSE(decode_node_frame(*coll, id, 4, nullptr, &e).ok()) << "no layer above: only the link channel";
    auto link = encode_node_frame(id, 1, kLinkChannel, std::vector<uint8_t>{1});
    ASSERT_TRUE(link.ok());
    EXPECT_TRUE(decode_node_frame(*link, id, 4, nullptr, &e).ok());
    EXPECT_EQ(e.chan, kLinkChannel);
    EXPECT_STREQ(channel_name(above, kLinkChannel), "link");
    EXPECT_STREQ(channel_name(above, pmixcpp::testing::chan::coll), "test collective");
    EXPECT_STREQ(channel_name(above, pmixcpp::testing::chan::unknown), "unknown");
    EXPECT_STREQ(channel_name(nullptr, pmixcpp::testing::chan::coll), "unknown");
}

namespace {
struct loop {
    event_base *base = event_base_new();
    ~loop() { event_base_free(base); }
    template <typename Pred>
    bool run_until(Pred done, int ms = 3000) {
        for (int i = 0; i < ms && !done(); ++i) {
            event_base_loop(base, EVLOOP_NONBLOCK);
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        return done();
    }
};
std::string port_of(const node_transport &t) { return t.address().substr(t.address().rfind(':') + 1); }
}  // namespace

// Node 2 holds a key of its own, not the one node 0's record would give it (a forger who never
// saw the verified records): its hello to node 0 fails, nothing of it is delivered.
TEST(tcp_transport, delivers_both_ways_and_drops_a_wrong_link_key) {
    loop l;
    std::vector<envelope> got0, got1;
    std::vector<auth::key> good = keys_for(3), evil = pmixcpp::testing::node_keys(3);
    auto make = [&](uint32_t node, const std::vector<auth::key> &keys, std::vector<envelope> *sink) {
        transport_options o;
        o.channels = pmixcpp::testing::channels();
        o.id = {"slurm.1.0"};
        o.node_key = keys[node];
        o.node_id = node;
        o.node_names = {"n1", "n2", "n3"};
        o.on_receive = [sink](envelope &&e) { sink->push_back(std::move(e)); };
        auto t = make_tcp_transport(l.base, o);
        EXPECT_TRUE(t.ok());
        return std::move(t.value());
    };
    auto t0 = make(0, good, &got0);
    auto t1 = make(1, good, &got1);
    std::vector<envelope> got2;
    auto t2 = make(2, evil, &got2);
    std::vector<std::string> table = {"tcp:127.0.0.1:" + port_of(*t0), "tcp:127.0.0.1:" + port_of(*t1),
                                      "tcp:127.0.0.1:" + port_of(*t2)};
    std::vector<uint8_t> big(1 << 20, 7);
    t0->send(1, pmixcpp::testing::chan::coll, big);  // queued until the table is known
    ASSERT_TRUE(t0->set_peers(table, good).ok());
    ASSERT_TRUE(t1->set_peers(table, good).ok());
    ASSERT_TRUE(t2->set_peers(table, evil).ok());
    t1->send(0, pmixcpp::testing::chan::dmodex_reply, std::vector<uint8_t>{9});
    t2->send(0, pmixcpp::testing::chan::coll, std::vector<uint8_t>{6});  // wrong key: refused by node 0
    ASSERT_TRUE(l.run_until([&] { return got1.size() == 1 && got0.size() == 1; }));
    EXPECT_EQ(got1[0].body, big);
    EXPECT_EQ(got1[0].src_node, 0u);
    EXPECT_EQ(got0[0].body, std::vector<uint8_t>{9});
    l.run_until([] { return false; }, 100);
    EXPECT_EQ(got0.size(), 1u);
    EXPECT_FALSE(t0->set_peers({"tcp:127.0.0.1:1"}, keys_for(1)).ok());  // wrong size
}

// A fan-out: one frame shared by the connections to three nodes, written in pieces as their
// sockets take them, then a small message behind it on each: all arrive whole and in order.
TEST(tcp_transport, fan_out_shares_one_frame_and_keeps_the_order) {
    loop l;
    std::vector<std::vector<envelope>> got(4);
    std::vector<std::unique_ptr<node_transport>> t;
    for (uint32_t node = 0; node < 4; ++node) {
        transport_options o;
        o.channels = pmixcpp::testing::channels();
        o.id = {"slurm.1.0"};
        o.node_key = step_keys()[node];
        o.node_id = node;
        o.node_names = {"n1", "n2", "n3", "n4"};
        o.on_receive = [&got, node](envelope &&e) { got[node].push_back(std::move(e)); };
        auto r = make_tcp_transport(l.base, o);
        ASSERT_TRUE(r.ok());
        t.push_back(std::move(r.value()));
    }
    std::vector<std::string> table;
    for (auto &x : t) table.push_back("tcp:127.0.0.1:" + port_of(*x));
    for (auto &x : t) ASSERT_TRUE(x->set_peers(table, keys_for(table.size())).ok());
    std::vector<uint8_t> big(4 << 20);
    for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<uint8_t>(i * 7 + i / 4096);
    const uint32_t kids[] = {1, 2, 3};
    t[0]->send_to(kids, pmixcpp::testing::chan::coll, big);
    t[0]->send_to(kids, pmixcpp::testing::chan::coll, std::vector<uint8_t>{42});
    ASSERT_TRUE(l.run_until([&] { return got[1].size() == 2 && got[2].size() == 2 && got[3].size() == 2; }, 10000));
    for (uint32_t n : kids) {
        EXPECT_EQ(got[n][0].body, big) << "node " << n;
        EXPECT_EQ(got[n][1].body, std::vector<uint8_t>{42}) << "node " << n;
    }
}

TEST(ucx_transport, delivers_small_and_large) {
    loop l;
    std::vector<envelope> got[2];
    std::unique_ptr<node_transport> t[2];
    for (uint32_t n = 0; n < 2; ++n) {
        transport_options o;
        o.channels = pmixcpp::testing::channels();
        o.id = {"slurm.1.0"};
        o.node_key = step_keys()[n];
        o.node_id = n;
        o.node_names = {"n1", "n2"};
        o.ucx_tls = "tcp";
        o.on_receive = [&, n](envelope &&e) { got[n].push_back(std::move(e)); };
        auto r = make_ucx_transport(l.base, o);
        if (!r.ok()) GTEST_SKIP() << "UCX unavailable: " << r.status().message();
        t[n] = std::move(r.value());
    }
    std::vector<std::string> table = {t[0]->address(), t[1]->address()};
    std::vector<uint8_t> big(4 << 20, 5);
    t[0]->send(1, pmixcpp::testing::chan::coll, big);  // queued until the table is known; rendezvous-size
    // Addresses that UCX would read past or misparse never reach ucp_ep_create.
    EXPECT_FALSE(t[0]->set_peers({table[0], "ucx:3101020304"}, keys_for(2)).ok()) << "too short";
    EXPECT_FALSE(t[0]->set_peers({table[0], "ucx:" + std::string(2 * 8200, 'a')}, keys_for(2)).ok()) << "too long";
    std::string other = table[1];
    other[4] = other[4] == 'f' ? '0' : 'f';  // another header byte
    EXPECT_FALSE(t[0]->set_peers({table[0], other}, keys_for(2)).ok()) << "another format";
    ASSERT_TRUE(t[0]->set_peers(table, keys_for(table.size())).ok());
    ASSERT_TRUE(t[1]->set_peers(table, keys_for(table.size())).ok());
    t[1]->send(0, pmixcpp::testing::chan::dmodex_request, std::vector<uint8_t>{1, 2});
    bool ok = l.run_until([&] { return got[0].size() == 1 && got[1].size() == 1; }, 10000);
    ASSERT_TRUE(ok) << got[0].size() << " " << got[1].size();
    EXPECT_EQ(got[1][0].body, big);
    EXPECT_EQ(got[0][0].body, (std::vector<uint8_t>{1, 2}));
    EXPECT_FALSE(t[0]->set_peers({"tcp:127.0.0.1:5", "tcp:127.0.0.1:6"}, keys_for(2)).ok());
}

namespace {
// One node's rendezvous through a client of its own (agent_client.h), waited for.
Result<std::vector<std::string>> rendezvous_of(const sockaddr_storage &host, uint16_t port,
                                               const agent_io::call_credential_fn &credential,
                                               uint32_t node, uint32_t nnodes, const std::string &address,
                                               int timeout_ms) {
    agent::client c(host, port, credential);
    std::promise<Result<std::vector<std::string>>> p;
    c.rendezvous(node, nnodes, address, timeout_ms, [&](Result<std::vector<std::string>> r) { p.set_value(std::move(r)); });
    return p.get_future().get();
}
}  // namespace

// The agent relays the records as they came: it cannot read them (identity.h) and changes none.
TEST(rendezvous, every_node_gets_the_table) {
    pmixcpp::testing::agent_auth auth;
    auto agent = srun_agent::start(nullptr, auth.keys());
    ASSERT_TRUE(agent.ok());
    sockaddr_storage host{};
    auto *in = reinterpret_cast<sockaddr_in *>(&host);
    in->sin_family = AF_INET;
    in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const uint32_t n = 3;
    std::vector<Result<std::vector<std::string>>> results(n, Status(PMIX_ERROR, "not run"));
    std::vector<std::thread> threads;
    for (uint32_t i = 0; i < n; ++i)
        threads.emplace_back([&, i] {
            results[i] = rendezvous_of(host, (*agent)->port(), auth.client(i), i, n,
                                       i == 1 ? "ucx:abcd" : "tcp:*:" + std::to_string(1000 + i), 5000);
        });
    for (auto &t : threads) t.join();
    for (uint32_t i = 0; i < n; ++i) {
        ASSERT_TRUE(results[i].ok()) << results[i].status().message();
        EXPECT_EQ(results[i].value(), (std::vector<std::string>{"tcp:*:1000", "ucx:abcd", "tcp:*:1002"}));
    }
    // a credential the agent's service cannot open (another authority: not made by root's
    // munged): the agent refuses the hello, we stop before sending anything
    pmixcpp::testing::agent_auth forger;
    auto bad = rendezvous_of(host, (*agent)->port(), forger.client(0), 0, 1, "tcp:*:1", 2000);
    EXPECT_FALSE(bad.ok());  // the agent closed at the hello: unreachable for this caller
    // the client's shutdown gate: a rendezvous that waits for a node that never comes ends
    // promptly, as cancelled, and a new one is refused (a fresh agent: this one has its table)
    auto idle = srun_agent::start(nullptr, auth.keys());
    ASSERT_TRUE(idle.ok());
    agent::client c(host, (*idle)->port(), auth.client(0));
    std::promise<Result<std::vector<std::string>>> p;
    c.rendezvous(0, 2, "tcp:*:1", 60000, [&](Result<std::vector<std::string>> r) { p.set_value(std::move(r)); });
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    auto t0 = std::chrono::steady_clock::now();
    c.shutdown();
    auto got = p.get_future().get();
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.status().code(), PMIX_ERR_JOB_CANCELED);
    std::promise<Result<std::vector<std::string>>> p2;
    c.rendezvous(0, 2, "tcp:*:1", 1000, [&](Result<std::vector<std::string>> r) { p2.set_value(std::move(r)); });
    auto refused = p2.get_future().get();
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.status().code(), PMIX_ERR_NOT_AVAILABLE);
}

// Lost peers (transport.h): a peer whose transport goes away without leave() is reported once
// by its ring neighbour; one that leaves first is not; messages to a lost peer are dropped.
namespace {
void lost_peer_case(bool ucx, bool say_goodbye) {
    loop l;
    std::vector<std::pair<uint32_t, std::string>> lost[3];
    std::unique_ptr<node_transport> t[3];
    for (uint32_t n = 0; n < 3; ++n) {
        transport_options o;
        o.channels = pmixcpp::testing::channels();
        o.id = {"slurm.1.0"};
        o.node_key = step_keys()[n];
        o.node_id = n;
        o.node_names = {"n1", "n2", "n3"};
        o.ucx_tls = "tcp";
        o.on_peer_lost = [&, n](uint32_t node, const std::string &why) { lost[n].emplace_back(node, why); };
        auto r = ucx ? make_ucx_transport(l.base, o) : make_tcp_transport(l.base, o);
        if (!r.ok()) GTEST_SKIP() << "transport unavailable: " << r.status().message();
        t[n] = std::move(r.value());
    }
    std::vector<std::string> table;
    for (auto &x : t) table.push_back(ucx ? x->address() : "tcp:127.0.0.1:" + port_of(*x));
    for (auto &x : t) ASSERT_TRUE(x->set_peers(table, keys_for(table.size())).ok());
    l.run_until([] { return false; }, 300);  // the neighbours greet each other
    if (say_goodbye) t[2]->leave(200);
    t[2].reset();
    bool noticed = l.run_until([&] { return !lost[0].empty() || !lost[1].empty(); }, say_goodbye ? 1000 : 8000);
    if (say_goodbye) {
        EXPECT_FALSE(noticed) << lost[0].size() << " " << lost[1].size();
        return;
    }
    ASSERT_TRUE(noticed);
    l.run_until([] { return false; }, 200);
    for (int n = 0; n < 2; ++n) {
        EXPECT_LE(lost[n].size(), 1u);
        for (const auto &[node, why] : lost[n]) EXPECT_EQ(node, 2u) << why;
    }
    t[0]->forget(2);
    t[0]->send(2, pmixcpp::testing::chan::coll, std::vector<uint8_t>{1});  // dropped quietly
    t[1]->send(2, pmixcpp::testing::chan::coll, std::vector<uint8_t>{1});
    l.run_until([] { return false; }, 100);
    EXPECT_LE(lost[0].size(), 1u);
    EXPECT_LE(lost[1].size(), 1u);
}
}  // namespace

TEST(tcp_transport, reports_a_peer_lost_without_goodbye) { lost_peer_case(false, false); }
TEST(tcp_transport, a_peer_that_says_goodbye_is_not_lost) { lost_peer_case(false, true); }
TEST(ucx_transport, reports_a_peer_lost_without_goodbye) { lost_peer_case(true, false); }
TEST(ucx_transport, a_peer_that_says_goodbye_is_not_lost) { lost_peer_case(true, true); }

// The ring closes over the survivors (transport.h): of five nodes, 1, 2 and 3 go away at once
// without goodbye. Node 2's ring neighbours die with it: only the cascade finds it, as a peer
// that refuses us after a loss (on_peer_unreachable; the server then asks around). Then a node
// that ended normally: its neighbours know it said goodbye (what the server asks them).
namespace {
void dead_run_case(bool ucx) {
    constexpr uint32_t N = 5;
    loop l;
    std::set<uint32_t> gone[N];  // lost or unreachable, as seen by each node
    std::set<uint32_t> unreachable[N];
    std::unique_ptr<node_transport> t[N];
    auto make = [&](uint32_t n) {
        transport_options o;
        o.channels = pmixcpp::testing::channels();
        o.id = {"slurm.1.0"};
        o.node_key = step_keys()[n];
        o.node_id = n;
        o.node_names = {"n1", "n2", "n3", "n4", "n5"};
        o.ucx_tls = "tcp";
        o.on_peer_lost = [&, n](uint32_t node, const std::string &) { gone[n].insert(node); };
        o.on_peer_unreachable = [&, n](uint32_t node, const std::string &) {
            gone[n].insert(node);
            unreachable[n].insert(node);
        };
        return ucx ? make_ucx_transport(l.base, o) : make_tcp_transport(l.base, o);
    };
    for (uint32_t n = 0; n < N; ++n) {
        auto r = make(n);
        if (!r.ok()) GTEST_SKIP() << "transport unavailable: " << r.status().message();
        t[n] = std::move(r.value());
    }
    std::vector<std::string> table;
    for (auto &x : t) table.push_back(ucx ? x->address() : "tcp:127.0.0.1:" + port_of(*x));
    for (auto &x : t) ASSERT_TRUE(x->set_peers(table, keys_for(table.size())).ok());
    l.run_until([] { return false; }, 300);  // the neighbours greet each other
    for (uint32_t n : {1u, 2u, 3u}) t[n].reset();
    auto all_found = [&] {
        std::set<uint32_t> u = gone[0];
        u.insert(gone[4].begin(), gone[4].end());
        return u == std::set<uint32_t>{1, 2, 3};
    };
    ASSERT_TRUE(l.run_until(all_found, 8000)) << gone[0].size() << " " << gone[4].size();
    EXPECT_TRUE(unreachable[0].count(2) || unreachable[4].count(2));  // found by the cascade
    EXPECT_FALSE(gone[0].count(0) || gone[4].count(4) || gone[0].count(4) || gone[4].count(0));
    EXPECT_TRUE(t[0]->peer_alive(4));
    EXPECT_FALSE(t[0]->peer_alive(2));

    // A fresh ring: node 2 ends normally, then node 1 dies. Node 0 finds node 2 gone, but node 3
    // got its goodbye.
    for (auto &s : gone) s.clear();
    for (auto &s : unreachable) s.clear();
    for (auto &x : t) x.reset();
    table.clear();
    for (uint32_t n = 0; n < N; ++n) t[n] = std::move(make(n).value());
    for (auto &x : t) table.push_back(ucx ? x->address() : "tcp:127.0.0.1:" + port_of(*x));
    for (auto &x : t) ASSERT_TRUE(x->set_peers(table, keys_for(table.size())).ok());
    l.run_until([] { return false; }, 300);
    t[2]->leave(200);
    t[2].reset();
    l.run_until([] { return false; }, 300);
    EXPECT_TRUE(t[3]->said_goodbye(2));
    EXPECT_TRUE(gone[3].empty());
    t[1].reset();
    ASSERT_TRUE(l.run_until([&] { return gone[0].count(1) && gone[0].count(2); }, 8000));
    EXPECT_TRUE(unreachable[0].count(2));  // for the server to ask: node 3 says it said goodbye
    EXPECT_FALSE(t[0]->said_goodbye(2));
}
}  // namespace

TEST(tcp_transport, the_ring_closes_over_a_dead_run) { dead_run_case(false); }
TEST(ucx_transport, the_ring_closes_over_a_dead_run) { dead_run_case(true); }

// The cap on our open connections (transport_options::max_connections): node 0 with a cap of 1
// sends to nodes 2, 3 and 4 in turn, many rounds, and each answers on its own link. Every message
// and every answer arrives once and in order, the idle connections (UCX: endpoints) are closed and
// reopened (no peer takes the close for a loss), the watched ring neighbours (TCP: node 1; UCX,
// which watches both sides: nodes 1 and 4) stay open, and a node with requests outstanding (busy)
// keeps its connection.
namespace {
void cap_case(bool ucx) {
    for (bool busy3 : {false, true}) {
        SCOPED_TRACE(busy3 ? "node 3 busy" : "none busy");
        loop l;
        const uint32_t n = 5;
        std::vector<std::vector<envelope>> got(n);
        std::vector<std::string> lost;
        std::vector<std::unique_ptr<node_transport>> t;
        for (uint32_t node = 0; node < n; ++node) {
            transport_options o;
            o.id = {"slurm.1.0"};
            o.node_key = step_keys()[node];
            o.node_id = node;
            o.node_names = {"n0", "n1", "n2", "n3", "n4"};
            o.channels = pmixcpp::testing::channels();
            o.ucx_tls = "tcp";
            o.on_receive = [&got, &t, node](envelope &&e) {
                if (node != 0) t[node]->send(0, pmixcpp::testing::chan::dmodex_reply, e.body);  // the answer
                got[node].push_back(std::move(e));
            };
            o.on_peer_lost = [&lost](uint32_t who, const std::string &why) { lost.push_back(std::to_string(who) + ": " + why); };
            if (node == 0) {
                o.max_connections = 1;
                o.busy = [busy3](uint32_t who) { return busy3 && who == 3; };
            }
            auto r = ucx ? make_ucx_transport(l.base, o) : make_tcp_transport(l.base, o);
            if (!r.ok()) GTEST_SKIP() << "transport unavailable: " << r.status().message();
            t.push_back(std::move(r.value()));
        }
        std::vector<std::string> table;
        for (auto &x : t) table.push_back(ucx ? x->address() : "tcp:127.0.0.1:" + port_of(*x));
        for (auto &x : t) ASSERT_TRUE(x->set_peers(table, keys_for(table.size())).ok());
        const size_t watched = ucx ? 2 : 1;  // kept open: 1 (and 4)
        const size_t keep = watched + (busy3 ? 1 : 0);
        const int rounds = 8;
        for (int round = 0; round < rounds; ++round) {
            for (uint32_t to : {2u, 3u, 4u}) {
                const uint8_t b = static_cast<uint8_t>(round);
                t[0]->send(to, pmixcpp::testing::chan::dmodex_request, {&b, 1});
                const size_t want = static_cast<size_t>(round) + 1;
                ASSERT_TRUE(l.run_until([&] { return got[to].size() == want; })) << "round " << round << " node " << to;
                EXPECT_LE(t[0]->open_connections(), keep + 1);  // the kept ones, the one in use
            }
        }
        ASSERT_TRUE(l.run_until([&] { return got[0].size() == size_t(3 * rounds); }, 8000)) << got[0].size() << " answers";
        l.run_until([] { return false; }, 200);
        for (uint32_t to : {2u, 3u, 4u}) {
            ASSERT_EQ(got[to].size(), size_t(rounds)) << "node " << to;
            for (int round = 0; round < rounds; ++round) EXPECT_EQ(got[to][round].body, std::vector<uint8_t>{uint8_t(round)});
        }
        EXPECT_EQ(got[0].size(), size_t(3 * rounds));  // every answer, none twice
        EXPECT_TRUE(lost.empty()) << lost.front();
        // no cap would have kept 4 open (1, 2, 3, 4)
        // (UCX: the last one sent to, node 4, is a kept one)
        EXPECT_EQ(t[0]->open_connections(), ucx ? keep : keep + 1);
        EXPECT_EQ(t[0]->peak_connections(), ucx && busy3 ? keep + 1 : keep + 2);
        // every switch to a node not kept closed one (TCP: 2 -> 3 -> 4 -> 2 ...; UCX: 2 -> 3, 3 -> 4),
        // except those of the busy node
        const uint64_t per_round = (ucx ? 2 : 3) - (busy3 ? 1 : 0);
        EXPECT_GE(t[0]->idle_closes(), per_round * rounds - 2);
        for (uint32_t node = 1; node < n; ++node) EXPECT_TRUE(t[node]->peer_alive(0));
        for (auto &x : t) x->leave(100);
    }
}
}  // namespace

TEST(tcp_transport, a_cap_closes_idle_connections_and_reopens_them) { cap_case(false); }
TEST(ucx_transport, a_cap_closes_idle_endpoints_and_reopens_them) { cap_case(true); }
