// The directory route without Slurm: its messages' codec, and several directories in one process
// whose sending function delivers to each other (a node that is not up fails, as slurmd's
// forwarding to a missing socket does).
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>
#include <tuple>

#include "plugin/net/directory.h"
#include "plugin/common/directory_socket.h"
#include "wire/directory_messages.h"

using namespace pmixcpp;
using namespace pmixcpp::net;
using wire::directory_kind;
using wire::directory_message;

TEST(DirectoryCodec, RoundTrip) {
    for (auto kind : {directory_kind::tell, directory_kind::ask}) {
        directory_message m{kind, 3, 8, "signed record"};
        auto bytes = wire::encode_directory_message(m);
        ASSERT_TRUE(bytes.ok());
        directory_message back;
        ASSERT_TRUE(wire::decode_directory_message(bytes.value(), &back).ok());
        EXPECT_EQ(back, m);
    }
}

TEST(DirectoryCodec, StrictDecoding) {
    directory_message m{directory_kind::tell, 1, 4, "rec"};
    auto good = wire::encode_directory_message(m).value();
    directory_message out;
    for (size_t n = 0; n < good.size(); ++n)  // every truncation
        EXPECT_FALSE(wire::decode_directory_message(std::span(good.data(), n), &out).ok()) << n;
    auto longer = good;
    longer.push_back(0);
    EXPECT_FALSE(wire::decode_directory_message(longer, &out).ok());
    auto bad_magic = good;
    bad_magic[0] ^= 1;
    EXPECT_FALSE(wire::decode_directory_message(bad_magic, &out).ok());
    auto bad_version = good;
    bad_version[4] = 2;
    EXPECT_FALSE(wire::decode_directory_message(bad_version, &out).ok());
    for (uint8_t k : {0, 3, 255}) {
        auto bad_kind = good;
        bad_kind[5] = k;
        EXPECT_FALSE(wire::decode_directory_message(bad_kind, &out).ok());
    }
    auto beyond = good;  // sender 4 of 4 nodes
    beyond[6] = 4;
    EXPECT_FALSE(wire::decode_directory_message(beyond, &out).ok());
    EXPECT_FALSE(wire::encode_directory_message({directory_kind::tell, 1, 4, ""}).ok());
    EXPECT_FALSE(wire::encode_directory_message({directory_kind::tell, 4, 4, "r"}).ok());
    EXPECT_FALSE(wire::encode_directory_message({directory_kind::tell, 0, 4, std::string(wire::kMaxDirectoryRecord + 1, 'r')}).ok());
}

namespace {

// N directories; records are "rec:<node>", checked for the slot they claim; `up[i]` says
// whether node i's socket takes messages.
struct fake_step {
    explicit fake_step(uint32_t n) : dirs(n), up(n), learned(n, std::vector<bool>(n, false)) {
        for (auto &u : up) u = false;
    }
    ~fake_step() {
        for (auto &d : dirs)
            if (d) d->stop();
    }
    void start(uint32_t i, std::vector<uint32_t> neighbours) {
        directory_options o;
        o.self = i;
        o.nnodes = static_cast<uint32_t>(dirs.size());
        o.own_record = "rec:" + std::to_string(i);
        o.neighbours = std::move(neighbours);
        o.first_retry = std::chrono::milliseconds(10);
        o.max_retry = std::chrono::milliseconds(40);
        o.give_up = give_up;
        o.answer_wait = answer_wait;
        for (uint32_t k = 0; k < dirs.size(); ++k) o.node_names.push_back("n" + std::to_string(k));
        o.unreachable = [this, i](uint32_t node, const std::string &why) {
            std::lock_guard<std::mutex> lk(mu);
            never.emplace_back(i, node, why);
        };
        o.send = [this, i](const std::vector<uint32_t> &nodes, const std::vector<uint8_t> &msg) {
            std::vector<uint32_t> failed;
            for (uint32_t n : nodes) {
                ++sends[i];
                if (!up[n]) {
                    failed.push_back(n);
                    continue;
                }
                if (dirs[n]) dirs[n]->receive(msg);  // up without a directory: taken in, never answered
            }
            return failed;
        };
        o.verify = [](uint32_t node, std::string_view rec) -> Result<directory_options::checked> {
            if (rec != "rec:" + std::to_string(node)) return Status(PMIX_ERR_NO_PERMISSIONS, "not this node's record");
            directory_options::checked c;
            c.address = "addr:" + std::to_string(node);
            return c;
        };
        o.learned = [this, i](uint32_t node, const std::string &address, const auth::key &) {
            std::lock_guard<std::mutex> lk(mu);
            EXPECT_EQ(address, "addr:" + std::to_string(node));
            EXPECT_FALSE(learned[i][node]) << "node " << node << " learnt twice by " << i;
            learned[i][node] = true;
        };
        auto d = directory::start(std::move(o));
        ASSERT_TRUE(d.ok()) << d.status().message();
        dirs[i] = std::move(d.value());
        up[i] = true;
    }
    bool knows(uint32_t i, uint32_t node) {
        std::lock_guard<std::mutex> lk(mu);
        return learned[i][node];
    }
    // Polls (generous limit: a loaded machine), never a fixed sleep that must suffice.
    bool eventually(const std::function<bool()> &cond) {
        for (int k = 0; k < 3000; ++k) {
            if (cond()) return true;
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        return cond();
    }
    std::vector<std::unique_ptr<directory>> dirs;
    std::vector<std::atomic<bool>> up;
    std::mutex mu;
    std::vector<std::vector<bool>> learned;
    std::atomic<uint64_t> sends[16] = {};
    std::chrono::milliseconds give_up{300000};
    std::chrono::milliseconds answer_wait{2000};
    std::vector<std::tuple<uint32_t, uint32_t, std::string>> never;  // who gave up on whom, why
    size_t nevers() {
        std::lock_guard<std::mutex> lk(mu);
        return never.size();
    }
};

std::vector<uint32_t> ring_of(uint32_t i, uint32_t n) { return {(i + 1) % n, (i + n - 1) % n}; }

}  // namespace

TEST(Directory, NeighboursTellEachOther) {
    constexpr uint32_t n = 6;
    fake_step s(n);
    for (uint32_t i = 0; i < n; ++i) s.start(i, ring_of(i, n));
    for (uint32_t i = 0; i < n; ++i) {
        for (uint32_t nb : ring_of(i, n)) EXPECT_TRUE(s.eventually([&] { return s.knows(i, nb); })) << i << " of " << nb;
    }
    for (uint32_t i = 0; i < n; ++i) {
        ASSERT_TRUE(s.dirs[i]->wait_idle(std::chrono::seconds(30)));
        EXPECT_FALSE(s.knows(i, (i + 3) % n)) << "node " << i << " learnt a node it never needed";
        EXPECT_EQ(s.dirs[i]->stats().asks_sent, 0u);
        EXPECT_EQ(s.dirs[i]->stats().refused, 0u);
    }
}

TEST(Directory, AskOnNeedAnswersAndCaches) {
    constexpr uint32_t n = 6;
    fake_step s(n);
    for (uint32_t i = 0; i < n; ++i) s.start(i, ring_of(i, n));
    s.dirs[0]->need(3);
    ASSERT_TRUE(s.eventually([&] { return s.knows(0, 3); }));
    EXPECT_TRUE(s.eventually([&] { return s.knows(3, 0); })) << "the ask carries the asker's record";
    ASSERT_TRUE(s.dirs[0]->wait_idle(std::chrono::seconds(30)));
    auto before = s.dirs[0]->stats();
    EXPECT_EQ(before.asks_sent, 1u);
    s.dirs[0]->need(3);  // known: nothing sent
    s.dirs[0]->need(1);  // a neighbour: known from its tell
    s.dirs[0]->need(0);  // ourselves
    ASSERT_TRUE(s.eventually([&] { return s.knows(0, 1); }));
    ASSERT_TRUE(s.dirs[0]->wait_idle(std::chrono::seconds(30)));
    EXPECT_EQ(s.dirs[0]->stats().asks_sent, 1u);
    EXPECT_EQ(s.dirs[0]->stats().send_calls, before.send_calls);
}

TEST(Directory, RetriesANeighbourThatStartsLate) {
    constexpr uint32_t n = 4;
    fake_step s(n);
    for (uint32_t i = 0; i < n; ++i)
        if (i != 2) s.start(i, ring_of(i, n));
    // Node 1 and 3 fail to reach 2 and try again with backoff.
    ASSERT_TRUE(s.eventually([&] { return s.dirs[1]->stats().retries >= 2; }));
    s.start(2, ring_of(2, n));
    for (uint32_t i : {1u, 3u}) {
        EXPECT_TRUE(s.eventually([&] { return s.knows(i, 2); }));
        EXPECT_TRUE(s.eventually([&] { return s.knows(2, i); }));
    }
    EXPECT_EQ(s.nevers(), 0u) << "a node that starts late is no loss";
    // Once reached, no more retries.
    ASSERT_TRUE(s.eventually([&] { return s.dirs[1]->wait_idle(std::chrono::milliseconds(100)); }));
    auto r = s.dirs[1]->stats().retries;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    EXPECT_EQ(s.dirs[1]->stats().retries, r);
}

// A node that never comes up (its slurmstepd died before it listened, or its slurmd refuses):
// the nodes that ask for it or tell it try again with backoff until give_up, then give it up
// once each with a reason naming it; nothing more is sent to it, and nobody is given up whose
// record did come (only our messages to it failed).
TEST(Directory, GivesUpANodeThatNeverAnswers) {
    constexpr uint32_t n = 4;
    fake_step s(n);
    s.give_up = std::chrono::milliseconds(300);
    for (uint32_t i = 0; i < n; ++i)
        if (i != 2) s.start(i, ring_of(i, n));
    s.dirs[0]->need(2);  // node 0 needs it (an ask); nodes 1 and 3 tell it (ring neighbours)
    ASSERT_TRUE(s.eventually([&] { return s.nevers() == 3; }));
    for (uint32_t i : {0u, 1u, 3u}) ASSERT_TRUE(s.dirs[i]->wait_idle(std::chrono::seconds(30)));
    {
        std::lock_guard<std::mutex> lk(s.mu);
        ASSERT_EQ(s.never.size(), 3u);
        std::set<uint32_t> who;
        for (const auto &[i, node, why] : s.never) {
            who.insert(i);
            EXPECT_EQ(node, 2u);
            const std::string kind = i == 0 ? "ask" : "tell";
            EXPECT_EQ(why.rfind("node 2 (n2) never answered the directory " + kind + " after ", 0), 0u) << why;
            EXPECT_NE(why.find(" s ("), std::string::npos) << why;
        }
        EXPECT_EQ(who, (std::set<uint32_t>{0, 1, 3}));
    }
    for (uint32_t i : {0u, 1u, 3u}) {
        EXPECT_EQ(s.dirs[i]->stats().given_up, 1u);
        EXPECT_GE(s.dirs[i]->stats().retries, 2u) << "tried again before giving up";
        EXPECT_FALSE(s.knows(i, 2));
    }
    // Given up: no more tries, and a new need sends nothing.
    const uint64_t sent = s.sends[0];
    s.dirs[0]->need(2);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    ASSERT_TRUE(s.dirs[0]->wait_idle(std::chrono::seconds(30)));
    EXPECT_EQ(s.sends[0].load(), sent);
    EXPECT_EQ(s.nevers(), 3u);
}

// An ask that slurmd delivered but that is never answered (the target's slurmstepd died, or hangs,
// after taking it in): asked again every answer_wait, then given up with a reason that says so.
TEST(Directory, AsksAgainWhenAnAskThatGotThereIsNotAnswered) {
    constexpr uint32_t n = 4;
    fake_step s(n);
    s.give_up = std::chrono::milliseconds(300);
    s.answer_wait = std::chrono::milliseconds(20);
    s.up[2] = true;  // its socket takes messages, nobody answers them
    for (uint32_t i : {0u, 1u, 3u}) s.start(i, {});
    s.dirs[0]->need(2);
    ASSERT_TRUE(s.eventually([&] { return s.nevers() == 1; }));
    ASSERT_TRUE(s.dirs[0]->wait_idle(std::chrono::seconds(30)));
    auto st = s.dirs[0]->stats();
    EXPECT_GE(st.asked_again, 2u);
    EXPECT_EQ(st.asks_sent, st.asked_again + 1);
    EXPECT_EQ(st.retries, 0u) << "every ask got there";
    EXPECT_EQ(st.given_up, 1u);
    {
        std::lock_guard<std::mutex> lk(s.mu);
        const auto &[who, node, why] = s.never.front();
        EXPECT_EQ(who, 0u);
        EXPECT_EQ(node, 2u);
        EXPECT_EQ(why.rfind("node 2 (n2) took the directory ask but never answered it in ", 0), 0u) << why;
    }
    // Given up: nothing more goes to it.
    const uint64_t sent = s.sends[0];
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_EQ(s.sends[0].load(), sent);
}

// An ask answered in time is not asked again, even when the answer comes after our send returned.
TEST(Directory, AnAnsweredAskIsNotAskedAgain) {
    constexpr uint32_t n = 4;
    fake_step s(n);
    s.answer_wait = std::chrono::milliseconds(20);
    for (uint32_t i = 0; i < n; ++i) s.start(i, {});
    s.dirs[0]->need(2);
    ASSERT_TRUE(s.eventually([&] { return s.knows(0, 2); }));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // several answer_waits
    ASSERT_TRUE(s.dirs[0]->wait_idle(std::chrono::seconds(30)));
    auto st = s.dirs[0]->stats();
    // one ask, and at most the asks sent before the answer was handled (a loaded machine)
    EXPECT_EQ(st.asks_sent, st.asked_again + 1);
    const uint64_t asks = st.asks_sent;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_EQ(s.dirs[0]->stats().asks_sent, asks) << "asked again after the answer";
    EXPECT_EQ(s.nevers(), 0u);
}

TEST(Directory, DoesNotGiveUpANodeWhoseRecordCame) {
    constexpr uint32_t n = 4;
    fake_step s(n);
    s.give_up = std::chrono::milliseconds(300);
    s.start(2, {0, 1, 3});
    s.up[2] = false;  // it reaches the others, they never reach it
    for (uint32_t i = 0; i < n; ++i)
        if (i != 2) s.start(i, {(i + 1) % n, (i + n - 1) % n, 2});
    for (uint32_t i : {0u, 1u, 3u}) ASSERT_TRUE(s.eventually([&] { return s.knows(i, 2); }));
    // Each gives up its tell to node 2 after give_up (logged): its retries stop (they come every
    // 40 ms at most before), but node 2 is no loss.
    for (uint32_t i : {0u, 1u, 3u}) {
        ASSERT_TRUE(s.eventually([&] {
            const uint64_t r = s.dirs[i]->stats().retries;
            std::this_thread::sleep_for(std::chrono::milliseconds(150));
            return r > 0 && s.dirs[i]->stats().retries == r;
        }));
    }
    EXPECT_EQ(s.nevers(), 0u);
    for (uint32_t i : {0u, 1u, 3u}) EXPECT_EQ(s.dirs[i]->stats().given_up, 0u);
}

// A node whose step ended (the transport's goodbye, or lost): the tells that wait for it are
// dropped, nothing more is sent to it, and a need of it asks nothing.
TEST(Directory, DoneWithANodeSendsItNothingMore) {
    constexpr uint32_t n = 3;
    fake_step s(n);
    s.start(0, {1, 2});  // 1 and 2 never come up: tried again and again
    ASSERT_TRUE(s.eventually([&] { return s.dirs[0]->stats().retries >= 4; }));
    s.dirs[0]->done_with(1);
    s.dirs[0]->done_with(2);
    s.dirs[0]->done_with(2);  // once is enough
    EXPECT_LE(s.dirs[0]->stats().dropped_done, 2u);  // one may have been under way
    ASSERT_TRUE(s.dirs[0]->wait_idle(std::chrono::seconds(30)));
    const uint64_t sent = s.sends[0];
    s.dirs[0]->need(1);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // several retry periods
    EXPECT_EQ(s.sends[0].load(), sent) << "nothing sent after done_with";
    EXPECT_EQ(s.dirs[0]->stats().given_up, 0u);
    EXPECT_EQ(s.nevers(), 0u);
}

TEST(Directory, RefusesForgedAndMalformed) {
    constexpr uint32_t n = 3;
    fake_step s(n);
    s.start(0, {});
    s.start(1, {});
    // Node 2's slot claimed with node 1's record; a step of another size; garbage; ourselves.
    s.dirs[0]->receive(wire::encode_directory_message({directory_kind::tell, 2, n, "rec:1"}).value());
    s.dirs[0]->receive(wire::encode_directory_message({directory_kind::tell, 1, n + 1, "rec:1"}).value());
    s.dirs[0]->receive({1, 2, 3});
    s.dirs[0]->receive(wire::encode_directory_message({directory_kind::ask, 0, n, "rec:0"}).value());
    ASSERT_TRUE(s.eventually([&] { return s.dirs[0]->stats().refused == 4; }));
    ASSERT_TRUE(s.dirs[0]->wait_idle(std::chrono::seconds(30)));
    EXPECT_FALSE(s.knows(0, 2));
    EXPECT_FALSE(s.knows(0, 1));
    EXPECT_EQ(s.dirs[0]->stats().tells_sent, 0u) << "a refused ask is not answered";
}

TEST(Directory, BoundedInbox) {
    directory_options o;
    o.self = 0;
    o.nnodes = 2;
    o.own_record = "r";
    o.max_inbox = 4;
    std::atomic<bool> release{false};
    o.send = [](const std::vector<uint32_t> &, const std::vector<uint8_t> &) { return std::vector<uint32_t>{}; };
    o.verify = [&](uint32_t, std::string_view) -> Result<directory_options::checked> {
        while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(5));
        return Status(PMIX_ERR_NO_PERMISSIONS, "no");
    };
    o.learned = [](uint32_t, const std::string &, const auth::key &) {};
    auto d = directory::start(std::move(o));
    ASSERT_TRUE(d.ok());
    auto msg = wire::encode_directory_message({directory_kind::tell, 1, 2, "x"}).value();
    for (int i = 0; i < 20; ++i) d.value()->receive(msg);
    EXPECT_GE(d.value()->stats().dropped, 12u);
    release = true;
    d.value()->stop();
}

// The receiving socket: root-only mode, the kernel's peer credentials and the uid slurmd writes.
namespace {
int connect_to(const std::string &path) {
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, path.c_str(), sizeof(a.sun_path) - 1);
    if (connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof(a)) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}
void send_slurmd_message(int fd, uint32_t uid, const std::string &data, uint32_t claimed_len = 0) {
    // Header and data in one write: a socket that refuses the header closes at once, and a
    // second write would then end the test with SIGPIPE.
    uint32_t head[2] = {htonl(uid), htonl(claimed_len ? claimed_len : static_cast<uint32_t>(data.size()))};
    std::string msg(reinterpret_cast<const char *>(head), sizeof(head));
    msg += data;
    ASSERT_EQ(send(fd, msg.data(), msg.size(), MSG_NOSIGNAL), static_cast<ssize_t>(msg.size()));
}
}  // namespace

TEST(DirectorySocket, TakesOnlyTrustedUidsThatAgree) {
    char tmpl[] = "/tmp/pmixcpp-dirsock.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    const std::string dir = tmpl;
    std::mutex mu;
    std::vector<std::string> got;
    auto deliver = [&](std::vector<uint8_t> m) {
        std::lock_guard<std::mutex> lk(mu);
        got.emplace_back(m.begin(), m.end());
    };
    const uid_t me = getuid();
    {
        auto s = directory_socket::open(dir, "step.sock", {me}, 64, deliver);
        ASSERT_TRUE(s.ok()) << s.status().message();
        struct stat sb {};
        ASSERT_EQ(stat(s.value()->path().c_str(), &sb), 0);
        EXPECT_TRUE(S_ISSOCK(sb.st_mode));
        EXPECT_EQ(sb.st_mode & 0777, 0600u);
        {  // a stale socket of that name is replaced; a file of that name is refused
            ASSERT_EQ(mkdir((dir + "/stale").c_str(), 0700), 0);
            auto first = directory_socket::open(dir + "/stale", "s", {me}, 64, deliver);
            ASSERT_TRUE(first.ok());
            auto second = directory_socket::open(dir + "/stale", "s", {me}, 64, deliver);
            EXPECT_TRUE(second.ok()) << second.status().message();
            first.value().reset();  // must not remove the second's socket
            EXPECT_EQ(access((dir + "/stale/s").c_str(), F_OK), 0);
            second.value().reset();
            EXPECT_NE(access((dir + "/stale/s").c_str(), F_OK), 0);
            ASSERT_EQ(rmdir((dir + "/stale").c_str()), 0);
            int f = open((dir + "/plain").c_str(), O_CREAT | O_WRONLY, 0600);
            close(f);
            EXPECT_FALSE(directory_socket::open(dir, "plain", {me}, 64, deliver).ok());
            unlink((dir + "/plain").c_str());
        }
        EXPECT_FALSE(directory_socket::open(dir, "../x", {me}, 64, deliver).ok());

        int fd = connect_to(s.value()->path());
        ASSERT_GE(fd, 0);
        send_slurmd_message(fd, me, "hello");
        close(fd);
        fd = connect_to(s.value()->path());  // the uid slurmd writes is not the connection's
        ASSERT_GE(fd, 0);
        send_slurmd_message(fd, me + 1, "forged");
        close(fd);
        fd = connect_to(s.value()->path());  // longer than allowed
        ASSERT_GE(fd, 0);
        send_slurmd_message(fd, me, "x", 65);
        close(fd);
        fd = connect_to(s.value()->path());  // a message that never comes
        ASSERT_GE(fd, 0);
        close(fd);
        for (int i = 0; i < 3000 && s.value()->stats().taken + s.value()->stats().refused < 4; ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        EXPECT_EQ(s.value()->stats().taken, 1u);
        EXPECT_EQ(s.value()->stats().refused, 3u);
        std::lock_guard<std::mutex> lk(mu);
        ASSERT_EQ(got.size(), 1u);
        EXPECT_EQ(got[0], "hello");
    }
    EXPECT_NE(access((dir + "/step.sock").c_str(), F_OK), 0) << "removed with its object";
    {
        // A connection whose process runs as a uid that is not trusted.
        auto s = directory_socket::open(dir, "other.sock", {me + 1}, 64, deliver);
        ASSERT_TRUE(s.ok()) << s.status().message();
        int fd = connect_to(s.value()->path());
        ASSERT_GE(fd, 0);
        send_slurmd_message(fd, me, "hello");
        close(fd);
        for (int i = 0; i < 3000 && s.value()->stats().refused < 1; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
        EXPECT_EQ(s.value()->stats().refused, 1u);
        EXPECT_EQ(s.value()->stats().taken, 0u);
    }
    rmdir(dir.c_str());
}
