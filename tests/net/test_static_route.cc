// Static wire-up (plugin/net/static_route.h, transport.h): the checks of the reserved port that
// the step's environment names, and TCP transports that know every address without a table and
// take each peer's node key from the record its listener presents.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include "plugin/net/identity.h"
#include "plugin/net/static_route.h"
#include "plugin/net/transport.h"
#include "tests/net/test_channels.h"
#include "tests/net/test_credentials.h"

using namespace pmixcpp;
using namespace pmixcpp::net;
using pmixcpp::testing::authority;
using pmixcpp::testing::test_credentials;

TEST(static_route, the_configured_range) {
    auto r = reserved_port_range("ports=12000-12999");
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->lo, 12000);
    EXPECT_EQ(r->hi, 12999);
    r = reserved_port_range("other=1,ports=20000-20010,more");
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->lo, 20000);
    EXPECT_EQ(r->hi, 20010);
    for (const char *bad : {"", "ports=", "ports=5", "ports=9-3", "xports=1-2", "ports=1-70000", "ports=-3-5",
                            "ports=10-20x", "ports=1 -2"})
        EXPECT_FALSE(reserved_port_range(bad).ok()) << bad;
}

TEST(static_route, the_step_port_must_be_in_range_unprivileged_and_well_formed) {
    port_range range{12000, 12999}, wide{1, 65535};
    auto p = step_static_port("12004-12008", range);
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p.value(), 12004);
    p = step_static_port("12010,12003-12004", range);
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p.value(), 12010);
    EXPECT_FALSE(step_static_port("13000", range).ok()) << "outside the range";
    EXPECT_FALSE(step_static_port("11999-12001", range).ok()) << "first port outside the range";
    EXPECT_FALSE(step_static_port("22", wide).ok()) << "privileged";
    EXPECT_FALSE(step_static_port("1023", wide).ok()) << "privileged";
    for (const char *bad : {"", "abc", "12000-", "12000,", ",12000", "12000,,12001", "-12000", "12001-12000",
                            "12000 ", "+12000", "0", "99999", "12000-12001-12002", "12000;rm"})
        EXPECT_FALSE(step_static_port(bad, range).ok()) << bad;
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

step_binding binding_of(uint32_t nnodes) {
    step_binding b;
    b.job_id = 42;
    b.step_id = 3;
    b.nspace = "slurm.42.3";
    b.nnodes = nnodes;
    b.trusted_uids = {0, 64030};
    return b;
}

// A port free on 127.0.1.1..n (every node of the test listens on the same one, as on a cluster).
uint16_t free_port(int n) {
    for (int attempt = 0; attempt < 20; ++attempt) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        inet_pton(AF_INET, "127.0.1.1", &a.sin_addr);
        socklen_t len = sizeof(a);
        bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof(a));
        getsockname(fd, reinterpret_cast<sockaddr *>(&a), &len);
        uint16_t port = ntohs(a.sin_port);
        close(fd);
        bool all = true;
        for (int k = 2; k <= n && all; ++k) {
            int f = socket(AF_INET, SOCK_STREAM, 0);
            sockaddr_in b{};
            b.sin_family = AF_INET;
            b.sin_port = htons(port);
            inet_pton(AF_INET, ("127.0.1." + std::to_string(k)).c_str(), &b.sin_addr);
            all = bind(f, reinterpret_cast<sockaddr *>(&b), sizeof(b)) == 0;
            close(f);
        }
        if (all) return port;
    }
    return 0;
}

struct node {
    std::unique_ptr<node_identity> id;
    std::unique_ptr<node_transport> t;
    std::vector<envelope> got;
};

// Node `i` of `n`: its identity signed by `creds`, listening on 127.0.1.(i+1):port.
std::unique_ptr<node> make_node(loop &l, credential_service &creds, uint32_t i, uint32_t n, uint16_t port) {
    auto nd = std::make_unique<node>();
    nd->id = std::make_unique<node_identity>(creds, binding_of(n), i);
    transport_options o;
    o.channels = pmixcpp::testing::channels();
    o.id = {"slurm.42.3"};
    o.node_key = nd->id->node_key();
    o.node_id = i;
    for (uint32_t k = 0; k < n; ++k) o.node_names.push_back("n" + std::to_string(k));
    o.bind_address = "127.0.1." + std::to_string(i + 1);
    o.listen_port = port;
    node *raw = nd.get();
    o.on_receive = [raw](envelope &&e) { raw->got.push_back(std::move(e)); };
    auto t = make_tcp_transport(l.base, o);
    EXPECT_TRUE(t.ok()) << t.status().message();
    if (!t.ok()) return nullptr;
    nd->t = std::move(t.value());
    return nd;
}

std::vector<std::string> addresses_of(uint32_t n, uint16_t port) {
    std::vector<std::string> a;
    for (uint32_t k = 0; k < n; ++k) a.push_back("tcp:127.0.1." + std::to_string(k + 1) + ":" + std::to_string(port));
    return a;
}

Status connect_static(node &nd, const std::vector<std::string> &addresses) {
    auto rec = nd.id->sign(nd.t->address());
    if (!rec.ok()) return rec.status();
    node_identity *id = nd.id.get();
    return nd.t->set_static_peers(addresses, rec.value(), [id, addresses](uint32_t peer, std::string_view r) -> Result<auth::key> {
        auto v = id->verify_record(r, peer);
        PMIXCPP_RETURN_IF_ERROR(v);
        if (v->address != addresses[peer]) return Status(PMIX_ERR_NO_PERMISSIONS, "record of another address");
        return v->node_key;
    });
}
}  // namespace

// Three nodes, no table: node 2 starts after node 0 already sent to it (its connection is tried
// again until it listens); messages go both ways once each side checked the other's record.
TEST(static_route, tcp_nodes_find_each_other_without_a_table) {
    uint16_t port = free_port(3);
    if (port == 0) GTEST_SKIP() << "no port free on 127.0.1.1-3";
    loop l;
    auto a = std::make_shared<authority>();
    test_credentials root(a, 0);
    auto addrs = addresses_of(3, port);
    auto n0 = make_node(l, root, 0, 3, port);
    auto n1 = make_node(l, root, 1, 3, port);
    ASSERT_TRUE(n0 && n1);
    EXPECT_EQ(n0->t->address(), addrs[0]);
    ASSERT_TRUE(connect_static(*n0, addrs).ok());
    ASSERT_TRUE(connect_static(*n1, addrs).ok());
    n0->t->send(2, pmixcpp::testing::chan::coll, std::vector<uint8_t>{1, 2, 3});
    n0->t->send(1, pmixcpp::testing::chan::coll, std::vector<uint8_t>{4});
    l.run_until([] { return false; }, 300);  // node 2 is not there yet
    auto n2 = make_node(l, root, 2, 3, port);
    ASSERT_TRUE(n2);
    ASSERT_TRUE(connect_static(*n2, addrs).ok());
    n2->t->send(0, pmixcpp::testing::chan::dmodex_reply, std::vector<uint8_t>{9});
    auto has = [](node &nd, uint8_t first) {
        for (auto &e : nd.got)
            if (!e.body.empty() && e.body[0] == first) return true;
        return false;
    };
    ASSERT_TRUE(l.run_until([&] { return has(*n2, 1) && has(*n1, 4) && has(*n0, 9); }, 5000));
    for (auto &e : n2->got)
        if (e.body[0] == 1) EXPECT_EQ(e.src_node, 0u);
    EXPECT_TRUE(n0->t->peer_alive(2));
    // A second set of peers is refused; so is a table of another size.
    EXPECT_FALSE(connect_static(*n0, addrs).ok());
}

// Node 1's port is held by a listener whose record the job's user signed (not root): node 0
// refuses it at the record check, and nothing of node 0's reaches it.
TEST(static_route, a_listener_with_a_record_not_signed_by_root_is_refused) {
    uint16_t port = free_port(2);
    if (port == 0) GTEST_SKIP() << "no port free on 127.0.1.1-2";
    loop l;
    auto a = std::make_shared<authority>();
    test_credentials root(a, 0), user(a, 1000);
    auto addrs = addresses_of(2, port);
    auto n0 = make_node(l, root, 0, 2, port);
    auto fake = make_node(l, user, 1, 2, port);
    ASSERT_TRUE(n0 && fake);
    ASSERT_TRUE(connect_static(*n0, addrs).ok());
    ASSERT_TRUE(connect_static(*fake, addrs).ok());
    n0->t->send(1, pmixcpp::testing::chan::coll, std::vector<uint8_t>{5});
    l.run_until([] { return false; }, 1000);
    EXPECT_TRUE(fake->got.empty());
    EXPECT_FALSE(n0->t->peer_alive(1));  // taken as gone: it never proved itself
}
