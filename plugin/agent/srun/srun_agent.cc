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

#include "../proto/agent_io.h"
#include "../../net/handshake.h"
#include "../../common/step_env.h"
#include "log.h"
#include "wire/codec.h"
#include "wire/frame.h"
#include "sys.h"

namespace pmixcpp {

namespace {

constexpr int kServeTimeoutMs = 5000;
// Connections taken from a listening socket per round of the poll loop.
constexpr int kAcceptBatch = 16;



}  // namespace

struct srun_agent::conn {
    int fd = -1;                                // owned by `out`
    std::shared_ptr<agent::connection_out> out;  // shared with the responders of its calls
    uint64_t id = 0;
    std::string peer;
    std::optional<net::auth::server_handshake> hs;  // until authenticated
    net::auth::frame_reader hs_reader;
    wire::FrameReader reader{agent::kMaxPayload};
    // Authenticated, a frame begun: it must be complete by then. Unset between frames: the
    // connection carries the slurmstepd's calls until it closes it.
    std::optional<agent_io::clock_type::time_point> deadline;
};

namespace {
// The slurmstepds' calls authenticate with a munge credential each; on a heavily loaded node a
// handshake can take seconds (seen: over 3 s at a load of 40 on two cores). The caps bound what
// slow or silent peers can hold meanwhile.
net::listener_limits agent_limits() {
    net::listener_limits l;
    l.auth_timeout = std::chrono::milliseconds(10000);
    return l;
}
}  // namespace

srun_agent::srun_agent() : _guard("srun agent", agent_limits()) {}

Result<std::unique_ptr<srun_agent>> srun_agent::start(report_fn on_report, net::auth::key_source keys,
                                                     std::vector<std::string> bind_addresses) {
    if (!keys) return Status(PMIX_ERR_BAD_PARAM, "agent: no way to open slurmstepd credentials");
    std::unique_ptr<srun_agent> a(new srun_agent());
    a->_on_report = std::move(on_report);
    a->_keys = std::move(keys);
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
    for (auto &[n, c] : _rdv) c.first->shut();
    for (auto &[id, c] : _conns) c->out->shut();  // the descriptors close with their last call
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
    if (close_fd) it->second->out->shut();
    _conns.erase(it);
}

void srun_agent::accept_batch() {
    for (int lfd : _listen_fds) {
        // A few per round: the connections already accepted (responses, hellos waiting for their
        // challenge) are served before the rest of a flood's queue is taken in.
        for (int batch = 0; batch < kAcceptBatch; ++batch) {
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
            c->out = std::make_shared<agent::connection_out>(fd);
            c->id = _next_conn++;
            c->peer = net::peer_address(peer);
            c->hs.emplace(_keys, net::auth::purpose::agent, std::string());
            const uint64_t id = c->id;
            for (uint64_t old : _guard.admit(id, net::peer_label(fd, peer))) drop(old);
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
            if (!c->hs && c->deadline && (!wake || *c->deadline < *wake)) wake = c->deadline;
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
        if (incoming) accept_batch();
        now = agent_io::clock_type::now();
        // The handshake deadline counts silence, not this loop's own delay: serving the round
        // above (munge decodes under load) can take seconds, meanwhile a peer's bytes arrive.
        // A connection due to expire with something to read is served before it is judged.
        if (auto due = _guard.next_deadline(); due && *due <= now) {
            serve_waiting_handshakes();
            now = agent_io::clock_type::now();
        }
        for (uint64_t id : _guard.expired(now)) drop(id);
        std::vector<uint64_t> late;
        for (auto &[id, c] : _conns)
            if (!c->hs && c->deadline && *c->deadline <= now) late.push_back(id);
        for (uint64_t id : late) {
            PMIXCPP_LOG_ERROR("srun agent: a slurmstepd sent an incomplete message within %d ms", kServeTimeoutMs);
            drop(id);
        }
    }
}

void srun_agent::rendezvous_complete() {
    std::vector<std::string> table;
    for (auto &[n, c] : _rdv) table.push_back(c.second);
    agent::reply rep;
    auto body = agent::encode_table(table);
    if (body.ok()) rep.body = std::move(body.value());
    else rep = {body.status().code(), body.status().message(), {}};
    auto frame = agent::reply_frame(rep);
    auto deadline = agent_io::clock_type::now() + std::chrono::milliseconds(kServeTimeoutMs);
    for (auto &[n, c] : _rdv) {
        if (frame.ok()) {
            Status st = agent_io::send_all(c.first->fd(), frame.value(), deadline);
            if (!st.ok()) PMIXCPP_LOG_ERROR("srun agent: address table to node %u: %s", n, st.message().c_str());
        }
        c.first->shut();
    }
    PMIXCPP_LOG_DEBUG("srun agent: address table of %u nodes sent", _rdv_nodes);
    _rdv.clear();
}

void srun_agent::serve_waiting_handshakes() {
    std::vector<pollfd> fds;
    std::vector<uint64_t> ids;
    for (auto &[id, c] : _conns) {
        if (!c->hs) continue;
        fds.push_back({c->fd, POLLIN, 0});
        ids.push_back(id);
    }
    if (fds.empty() || poll(fds.data(), fds.size(), 0) <= 0) return;
    for (size_t i = 0; i < fds.size(); ++i)
        if (fds[i].revents) serve(ids[i]);
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
            (void)_guard.abandoned(c.peer, n == 0 ? 0 : errno);  // logged there either way
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
        // Between frames the connection may rest; a frame begun must be complete in time.
        if (c.reader.buffered() == 0) c.deadline.reset();
        else if (!c.deadline) c.deadline = agent_io::clock_type::now() + std::chrono::milliseconds(kServeTimeoutMs);
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
    c.deadline.reset();
    const agent::service_id what = f.type;
    if (!agent::is_service(_services.names(), what)) {
        PMIXCPP_LOG_ERROR("srun agent: dropped a request for unknown service %u", static_cast<unsigned>(f.type));
        drop(id);
        return true;
    }
    if (what == agent::kRendezvous) {
        agent::rendezvous_request rq;
        Status st = agent::decode_rendezvous(f.payload, &rq);
        if (!st.ok()) {
            PMIXCPP_LOG_ERROR("srun agent: dropped a malformed rendezvous: %s", st.message().c_str());
            drop(id);
            return true;
        }
        if ((_rdv_nodes && rq.nnodes != _rdv_nodes) || _rdv.count(rq.node)) {
            PMIXCPP_LOG_ERROR("srun agent: dropped a rendezvous of node %u of %u (conflicts with earlier reports)",
                              rq.node, rq.nnodes);
            drop(id);
            return true;
        }
        _rdv_nodes = rq.nnodes;
        _rdv[rq.node] = {c.out, rq.address};
        drop(id, false);
        if (_rdv.size() == _rdv_nodes) rendezvous_complete();
        return true;
    }
    if (what == agent::kReport) {
        agent::report rep;
        Status st = agent::decode_report(f.payload, &rep);
        if (!st.ok()) {
            PMIXCPP_LOG_ERROR("srun agent: dropped a malformed report: %s", st.message().c_str());
            drop(id);
            return true;
        }
        int expected = 0;
        _exit_code.compare_exchange_strong(expected, rep.status);
        if (_on_report) _on_report(rep);
        (void)agent::responder(c.out, f.id).send(agent::reply{}, kServeTimeoutMs);
        return false;  // the slurmstepd closes it (or sends more)
    }
    // A service's call: its handler takes the call's responder and answers when done, from a
    // thread of its own; the connection goes on carrying the slurmstepd's other calls.
    if (c.out->in_flight.load() >= agent::kMaxCallsPerConnection) {
        PMIXCPP_LOG_ERROR("srun agent: a slurmstepd has %u calls in flight; refusing one more", agent::kMaxCallsPerConnection);
        (void)agent::responder(c.out, f.id)
            .send(agent::reply{PMIX_ERR_OUT_OF_RESOURCE, "srun agent: too many calls in flight", {}}, kServeTimeoutMs);
        return false;
    }
    agent::responder answer(c.out, f.id);
    std::vector<uint8_t> body(f.payload.begin(), f.payload.end());
    if (const agent::service_table::handler *h = _services.find(what)) {
        (*h)(std::move(answer), std::move(body));
        return false;
    }
    (void)answer.send(
        agent::reply{PMIX_ERR_NOT_SUPPORTED, std::string("no ") + agent::service_name(_services.names(), what) + " service in srun", {}});
    return false;
}

}  // namespace pmixcpp
