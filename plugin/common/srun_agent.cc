#include "srun_agent.h"

#include <arpa/inet.h>
#include <netinet/tcp.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <algorithm>
#include <cstring>

#include "alloc_agent.h"
#include "agent_io.h"
#include "../net/handshake.h"
#include "log.h"
#include "step_env.h"
#include "wire/codec.h"
#include "wire/frame.h"

namespace pmixcpp {

namespace {

constexpr uint16_t kReportFrame = 1;
constexpr uint16_t kRendezvousFrame = 2;
constexpr uint16_t kTableFrame = 3;
constexpr uint32_t kMaxTable = 16u << 20;
constexpr uint8_t kAck = 0x06;
constexpr int kServeTimeoutMs = 5000;
constexpr uint32_t kMaxReport = 1u << 16;

Status sys_error(const std::string &what) { return Status(PMIX_ERROR, what + ": " + std::strerror(errno)); }


}  // namespace

struct srun_agent::conn {
    int fd = -1;
    uint64_t id = 0;
    std::string peer;
    std::optional<net::auth::server_handshake> hs;  // until authenticated
    net::auth::frame_reader hs_reader;
    wire::FrameReader reader{kMaxTable};
    // Authenticated: its frame must be complete by then (reports are small).
    agent_io::clock_type::time_point deadline{};
};

srun_agent::srun_agent() : _guard("srun agent") {}

Result<std::unique_ptr<srun_agent>> srun_agent::start(report_fn on_report, std::vector<std::string> bind_addresses) {
    std::unique_ptr<srun_agent> a(new srun_agent());
    a->_on_report = std::move(on_report);
    auto secret = random_token();
    if (!secret.ok()) return secret.status();
    a->_secret = secret.value();
    auto k = net::auth::derive_key(a->_secret, net::auth::purpose::agent);
    if (!k.ok()) return k.status();
    a->_key = k.value();
    PMIXCPP_RETURN_IF_ERROR(a->listen_on(bind_addresses));
    if (pipe2(a->_wake_fd, O_CLOEXEC) != 0) return sys_error("agent pipe");
    a->_thread = std::thread([p = a.get()] { p->run(); });
    return a;
}

// One socket per address, all on the port the first one got (tried again with a new port if
// another address has that port taken).
Status srun_agent::listen_on(const std::vector<std::string> &bind_addresses) {
    std::vector<sockaddr_storage> addrs;
    for (const std::string &text : bind_addresses) {
        sockaddr_storage ss{};
        auto *a4 = reinterpret_cast<sockaddr_in *>(&ss);
        auto *a6 = reinterpret_cast<sockaddr_in6 *>(&ss);
        if (inet_pton(AF_INET, text.c_str(), &a4->sin_addr) == 1)
            ss.ss_family = AF_INET;
        else if (inet_pton(AF_INET6, text.c_str(), &a6->sin6_addr) == 1)
            ss.ss_family = AF_INET6;
        else
            return Status(PMIX_ERR_BAD_PARAM, "agent: bad listen address " + text);
        addrs.push_back(ss);
    }
    if (addrs.empty()) {
        sockaddr_storage ss{};
        ss.ss_family = AF_INET;
        reinterpret_cast<sockaddr_in *>(&ss)->sin_addr.s_addr = htonl(INADDR_ANY);
        addrs.push_back(ss);
    }
    for (int attempt = 0; attempt < 8; ++attempt) {
        for (int fd : _listen_fds) close(fd);
        _listen_fds.clear();
        uint16_t port = 0;
        Status st;
        for (sockaddr_storage ss : addrs) {
            int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
            if (fd < 0) return sys_error("agent socket");
            _listen_fds.push_back(fd);
            int one = 1;
            if (ss.ss_family == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
            socklen_t len = ss.ss_family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
            if (ss.ss_family == AF_INET) reinterpret_cast<sockaddr_in *>(&ss)->sin_port = htons(port);
            else reinterpret_cast<sockaddr_in6 *>(&ss)->sin6_port = htons(port);
            if (bind(fd, reinterpret_cast<sockaddr *>(&ss), len) != 0) {
                st = sys_error("agent bind " + net::peer_address(ss));
                break;
            }
            if (listen(fd, 256) != 0) return sys_error("agent listen");
            if (port == 0) {
                sockaddr_storage got{};
                socklen_t glen = sizeof(got);
                if (getsockname(fd, reinterpret_cast<sockaddr *>(&got), &glen) != 0) return sys_error("agent getsockname");
                port = ntohs(got.ss_family == AF_INET ? reinterpret_cast<sockaddr_in *>(&got)->sin_port
                                                      : reinterpret_cast<sockaddr_in6 *>(&got)->sin6_port);
            }
        }
        if (st.ok()) {
            _port = port;
            return Status::success();
        }
        if (errno != EADDRINUSE || _listen_fds.size() == 1) return st;
    }
    return Status(PMIX_ERROR, "agent: no port free on every listen address");
}

srun_agent::~srun_agent() {
    stop();
    for (auto &[n, c] : _rdv) close(c.first);
    for (auto &[id, c] : _conns) close(c->fd);
    for (int fd : _listen_fds) close(fd);
    for (int fd : _wake_fd)
        if (fd >= 0) close(fd);
}

void srun_agent::stop() {
    if (!_thread.joinable()) return;
    char c = 1;
    while (write(_wake_fd[1], &c, 1) < 0 && errno == EINTR) {
    }
    _thread.join();
}

void srun_agent::drop(uint64_t id, bool close_fd) {
    auto it = _conns.find(id);
    if (it == _conns.end()) return;
    _guard.closed(id);
    if (close_fd) close(it->second->fd);
    _conns.erase(it);
}

void srun_agent::accept_all() {
    for (int lfd : _listen_fds) {
        for (;;) {
            sockaddr_storage peer{};
            socklen_t plen = sizeof(peer);
            int fd = accept4(lfd, reinterpret_cast<sockaddr *>(&peer), &plen, SOCK_CLOEXEC | SOCK_NONBLOCK);
            if (fd < 0) {
                if (errno == EINTR || errno == ECONNABORTED) continue;
                if (_guard.accept_failed(errno))  // out of descriptors: pause, do not spin
                    _accept_paused_until = agent_io::clock_type::now() + _guard.limits().accept_pause;
                break;
            }
            int one = 1;  // the challenge and the acknowledgements are small: no Nagle delay
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
            auto c = std::make_unique<conn>();
            c->fd = fd;
            c->id = _next_conn++;
            c->peer = net::peer_address(peer);
            c->hs.emplace(_key, net::auth::purpose::agent, std::string());
            const uint64_t id = c->id;
            for (uint64_t old : _guard.admit(id, c->peer)) drop(old);
            _conns.emplace(id, std::move(c));
            serve(id);  // a real client's hello is usually here already: answer before the next accept
        }
    }
}

void srun_agent::run() {
    std::vector<pollfd> fds;
    std::vector<uint64_t> ids;
    for (;;) {
        auto now = agent_io::clock_type::now();
        if (_accept_paused_until && now >= *_accept_paused_until) _accept_paused_until.reset();
        fds.clear();
        ids.clear();
        fds.push_back({_wake_fd[0], POLLIN, 0});
        if (!_accept_paused_until)
            for (int lfd : _listen_fds) fds.push_back({lfd, POLLIN, 0});
        const size_t first_conn = fds.size();
        std::optional<agent_io::clock_type::time_point> wake = _guard.next_deadline();
        if (_accept_paused_until && (!wake || *_accept_paused_until < *wake)) wake = _accept_paused_until;
        for (auto &[id, c] : _conns) {
            fds.push_back({c->fd, POLLIN, 0});
            ids.push_back(id);
            if (!c->hs && (!wake || c->deadline < *wake)) wake = c->deadline;
        }
        int timeout = -1;
        if (wake)
            timeout = static_cast<int>(std::clamp<long long>(
                std::chrono::duration_cast<std::chrono::milliseconds>(*wake - now).count() + 1, 0, 60000));
        int n = poll(fds.data(), fds.size(), timeout);
        if (n < 0) {
            if (errno == EINTR) continue;
            PMIXCPP_LOG_ERROR("srun agent: poll: %m");
            return;
        }
        if (fds[0].revents) return;
        bool incoming = false;
        for (size_t i = 1; i < first_conn; ++i) incoming |= (fds[i].revents & POLLIN) != 0;
        for (size_t i = first_conn; i < fds.size(); ++i)
            if (fds[i].revents) serve(ids[i - first_conn]);
        if (incoming) accept_all();
        now = agent_io::clock_type::now();
        for (uint64_t id : _guard.expired(now)) drop(id);
        std::vector<uint64_t> late;
        for (auto &[id, c] : _conns)
            if (!c->hs && c->deadline <= now) late.push_back(id);
        for (uint64_t id : late) {
            PMIXCPP_LOG_ERROR("srun agent: a reporter sent an incomplete message within %d ms", kServeTimeoutMs);
            drop(id);
        }
    }
}

void srun_agent::rendezvous_complete() {
    wire::Writer w;
    w.put_u32(_rdv_nodes);
    for (auto &[n, c] : _rdv) (void)w.put_string(c.second);
    auto frame = wire::encode_frame(kTableFrame, 0, 1, w.data(), kMaxTable);
    auto deadline = agent_io::clock_type::now() + std::chrono::milliseconds(kServeTimeoutMs);
    for (auto &[n, c] : _rdv) {
        if (frame.ok()) {
            Status st = agent_io::send_all(c.first, frame.value(), deadline);
            if (!st.ok()) PMIXCPP_LOG_ERROR("srun agent: address table to node %u: %s", n, st.message().c_str());
        }
        close(c.first);
    }
    PMIXCPP_LOG_DEBUG("srun agent: address table of %u nodes sent", _rdv_nodes);
    _rdv.clear();
}

void srun_agent::serve(uint64_t id) {
    auto it = _conns.find(id);
    if (it == _conns.end()) return;  // dropped earlier in this round
    conn &c = *it->second;
    // Before authentication: exactly the handshake frame's bytes, into its fixed buffer.
    while (c.hs) {
        uint8_t buf[net::auth::kMaxHandshakeFrame];
        ssize_t n = read(c.fd, buf, c.hs_reader.wanted());
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
        if (n <= 0) {
            _guard.refused(c.peer, n == 0 ? "closed before authenticating"
                                          : std::string("before authenticating: ") + strerror(errno));
            drop(id);
            return;
        }
        Status st = c.hs_reader.feed(buf, static_cast<size_t>(n));
        if (st.ok() && c.hs_reader.complete()) {
            auto reply = c.hs->on_frame(c.hs_reader.type(), c.hs_reader.payload());
            c.hs_reader.reset();
            st = reply.status();
            if (st.ok() && !reply->empty() &&
                send(c.fd, reply->data(), reply->size(), MSG_NOSIGNAL | MSG_DONTWAIT) != static_cast<ssize_t>(reply->size()))
                st = Status(PMIX_ERR_UNREACH, "cannot send the challenge");
            if (st.ok() && c.hs->done()) {
                c.hs.reset();
                _guard.authenticated(id);
                c.deadline = agent_io::clock_type::now() + std::chrono::milliseconds(kServeTimeoutMs);
            }
        }
        if (!st.ok()) {
            _guard.refused(c.peer, st.message());
            drop(id);
            return;
        }
    }
    uint8_t buf[4096];
    for (;;) {
        auto frame = c.reader.next();
        if (!frame.ok()) {
            PMIXCPP_LOG_ERROR("srun agent: dropped a malformed message: %s", frame.status().message().c_str());
            drop(id);
            return;
        }
        if (frame.value()) {
            if (handle_frame(c, *frame.value())) return;
            continue;
        }
        ssize_t n = read(c.fd, buf, sizeof(buf));
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
        if (n <= 0) {
            drop(id);
            return;
        }
        if (!c.reader.feed(buf, static_cast<size_t>(n)).ok()) {
            PMIXCPP_LOG_ERROR("srun agent: dropped a malformed message: %s", c.reader.error().message().c_str());
            drop(id);
            return;
        }
    }
}

bool srun_agent::handle_frame(conn &c, const wire::Frame &f) {
    const uint64_t id = c.id;
    const int fd = c.fd;
    if (f.type == kRendezvousFrame) {
        wire::Reader r(f.payload.data(), f.payload.size());
        std::string address;
        uint32_t node = 0, nnodes = 0;
        Status st = r.get_u32(&node);
        if (st.ok()) st = r.get_u32(&nnodes);
        if (st.ok()) st = r.get_string(&address, 1u << 16);
        if (st.ok()) st = r.expect_end();
        if (!st.ok() || nnodes == 0 || node >= nnodes) {
            PMIXCPP_LOG_ERROR("srun agent: dropped a malformed rendezvous: %s", st.message().c_str());
            drop(id);
            return true;
        }
        if ((_rdv_nodes && nnodes != _rdv_nodes) || _rdv.count(node)) {
            PMIXCPP_LOG_ERROR("srun agent: dropped a rendezvous of node %u of %u (conflicts with earlier reports)",
                              node, nnodes);
            drop(id);
            return true;
        }
        if (address.rfind("tcp:*:", 0) == 0) address = "tcp:" + c.peer + address.substr(5);
        _rdv_nodes = nnodes;
        drop(id, false);
        _rdv[node] = {fd, address};
        if (_rdv.size() == _rdv_nodes) rendezvous_complete();
        return true;
    }
    if (f.type == kAgentAllocFrame) {
        // An allocation request: the bridge takes the connection and answers when done.
        auto body = open_alloc_frame(f.payload);
        if (!body.ok() || !_on_alloc) {
            if (!body.ok())
                PMIXCPP_LOG_ERROR("srun agent: dropped an allocation request: %s", body.status().message().c_str());
            drop(id);
            return true;
        }
        drop(id, false);
        _on_alloc(fd, std::move(body.value()));
        return true;
    }
    wire::Reader r(f.payload.data(), f.payload.size());
    uint16_t what = 0;
    agent_report rep;
    Status st = r.get_u16(&what);
    if (st.ok()) st = r.get_i32(&rep.status);
    if (st.ok()) st = r.get_string(&rep.node, 256);
    if (st.ok()) st = r.get_string(&rep.message, kMaxReport);
    if (st.ok()) st = r.expect_end();
    if (!st.ok() || f.type != kReportFrame || (what < 1 || what > 3)) {
        PMIXCPP_LOG_ERROR("srun agent: dropped a malformed report: %s", st.message().c_str());
        drop(id);
        return true;
    }
    rep.what = static_cast<agent_report::kind>(what);
    if (rep.status == 0) rep.status = 1;
    int expected = 0;
    _exit_code.compare_exchange_strong(expected, rep.status);
    if (_on_report) _on_report(rep);
    uint8_t ack = kAck;
    (void)!write(fd, &ack, 1);
    drop(id);
    return true;
}

Status send_agent_report(const sockaddr_storage &agent_host, uint16_t port, const std::string &secret,
                         const agent_report &report, int timeout_ms) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    wire::Writer w;
    w.put_u16(static_cast<uint16_t>(report.what));
    w.put_i32(report.status);
    PMIXCPP_RETURN_IF_ERROR(w.put_string(report.node));
    PMIXCPP_RETURN_IF_ERROR(w.put_string(report.message.substr(0, kMaxReport / 2)));
    auto frame = wire::encode_frame(kReportFrame, 0, 1, w.data(), kMaxReport);
    if (!frame.ok()) return frame.status();

    auto fd = agent_io::connect_authenticated(agent_host, port, secret, deadline);
    if (!fd.ok()) return fd.status().with_context("srun agent");
    agent_io::fd_guard guard{fd.value()};
    PMIXCPP_RETURN_IF_ERROR(agent_io::send_all(fd.value(), frame.value(), deadline).with_context("srun agent"));
    for (;;) {
        PMIXCPP_RETURN_IF_ERROR(
            agent_io::wait_fd(fd.value(), POLLIN, deadline).with_context("srun agent: no acknowledgement"));
        uint8_t ack = 0;
        ssize_t n = read(fd.value(), &ack, 1);
        if (n == 1 && ack == kAck) return Status::success();
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
        return Status(PMIX_ERR_UNREACH, "srun agent: report refused");
    }
}

Result<std::vector<std::string>> agent_rendezvous(const sockaddr_storage &agent_host, uint16_t port,
                                                  const std::string &secret, uint32_t node_id, uint32_t nnodes,
                                                  const std::string &address, int timeout_ms,
                                                  const std::atomic<bool> *cancel) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    wire::Writer w;
    w.put_u32(node_id);
    w.put_u32(nnodes);
    PMIXCPP_RETURN_IF_ERROR(w.put_string(address));
    auto frame = wire::encode_frame(kRendezvousFrame, 0, 1, w.data(), kMaxTable);
    if (!frame.ok()) return frame.status();

    auto fd = agent_io::connect_authenticated(agent_host, port, secret, deadline, cancel);
    if (!fd.ok()) return fd.status().with_context("rendezvous");
    agent_io::fd_guard guard{fd.value()};
    PMIXCPP_RETURN_IF_ERROR(agent_io::send_all(fd.value(), frame.value(), deadline, cancel).with_context("rendezvous"));
    auto f = agent_io::read_frame(fd.value(), kMaxTable, deadline, cancel);
    if (!f.ok()) {
        if (f.status().code() == PMIX_ERR_TIMEOUT && !(cancel && cancel->load()))
            return Status(PMIX_ERR_TIMEOUT, "rendezvous: no address table within " + std::to_string(timeout_ms) +
                                                " ms (a node of the step never reported)");
        return f.status().with_context("rendezvous: the srun agent");
    }
    wire::Reader r(f->payload.data(), f->payload.size());
    uint32_t count = 0;
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&count));
    if (f->type != kTableFrame || count != nnodes)
        return Status(PMIX_ERR_BAD_PARAM, "rendezvous: unexpected answer from the srun agent");
    std::vector<std::string> table(count);
    for (auto &a : table) PMIXCPP_RETURN_IF_ERROR(r.get_string(&a, 1u << 16));
    PMIXCPP_RETURN_IF_ERROR(r.expect_end());
    return table;
}

}  // namespace pmixcpp
