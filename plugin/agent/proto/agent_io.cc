#include "agent_io.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>

#include <algorithm>
#include <cstdlib>
#include <cerrno>
#include <cstring>
#include <string>
#include <thread>

#include "../../net/handshake.h"
#include "sys.h"

namespace pmixcpp::agent_io {

namespace {
Status link_error(const char *what) { return pmixcpp::sys_error(what, errno, PMIX_ERR_UNREACH); }
}  // namespace

Status wait_fd(int fd, short events, clock_type::time_point deadline, const std::atomic<bool> *cancel) {
    for (;;) {
        if (cancel && cancel->load()) return Status(PMIX_ERR_TIMEOUT, "cancelled");
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_type::now()).count();
        if (left <= 0) return Status(PMIX_ERR_TIMEOUT, "timed out");
        pollfd p{fd, events, 0};
        int n = poll(&p, 1, static_cast<int>(std::min<long long>(left, 100)));
        if (n > 0) return Status::success();
        if (n < 0 && errno != EINTR) return link_error("poll");
    }
}

Status send_all(int fd, std::span<const uint8_t> bytes, clock_type::time_point deadline,
                const std::atomic<bool> *cancel) {
    size_t off = 0;
    while (off < bytes.size()) {
        ssize_t n = send(fd, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR) {
                PMIXCPP_RETURN_IF_ERROR(wait_fd(fd, POLLOUT, deadline, cancel), "send");
                continue;
            }
            return link_error("send");
        }
        off += static_cast<size_t>(n);
    }
    return Status::success();
}

Result<int> connect_to(const sockaddr_storage &host, uint16_t port, clock_type::time_point deadline,
                       const std::atomic<bool> *cancel) {
    sockaddr_storage addr = host;
    socklen_t len = 0;
    if (addr.ss_family == AF_INET) {
        reinterpret_cast<sockaddr_in *>(&addr)->sin_port = htons(port);
        len = sizeof(sockaddr_in);
    } else if (addr.ss_family == AF_INET6) {
        reinterpret_cast<sockaddr_in6 *>(&addr)->sin6_port = htons(port);
        len = sizeof(sockaddr_in6);
    } else {
        return Status(PMIX_ERR_BAD_PARAM, "unsupported address family");
    }
    int fd = socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) return link_error("socket");
    fd_guard guard{fd};
    // Small messages back to back (the handshake's response, then the request): without this,
    // Nagle holds the second until the agent's delayed ACK, 40 ms later.
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (connect(fd, reinterpret_cast<sockaddr *>(&addr), len) != 0 && errno != EINPROGRESS)
        return link_error("connect");
    PMIXCPP_RETURN_IF_ERROR(wait_fd(fd, POLLOUT, deadline, cancel), "connect");
    int err = 0;
    socklen_t elen = sizeof(err);
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen);
    if (err) {
        errno = err;
        return link_error("connect");
    }
    guard.fd = -1;  // the caller owns it now
    return fd;
}

namespace {

// A listener sheds pending connections beyond its caps (listener_guard.h): a node's burst of
// calls (every task querying at once) loses some to that and they try again, with a pause that
// grows with the attempt and is spread at random so the burst does not come back at once.
constexpr int kHandshakeTries = 10;
constexpr int kMaxRetryPauseMs = 1000;

// One handshake frame, read byte-exactly (nothing after it is consumed).
Status read_handshake_frame(int fd, net::auth::frame_reader *r, clock_type::time_point deadline,
                            const std::atomic<bool> *cancel) {
    r->reset();
    while (!r->complete()) {
        PMIXCPP_RETURN_IF_ERROR(wait_fd(fd, POLLIN, deadline, cancel));
        uint8_t buf[net::auth::kMaxHandshakeFrame];
        ssize_t n = read(fd, buf, r->wanted());
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
        if (n <= 0) return Status(PMIX_ERR_UNREACH, "the connection closed during the handshake");
        PMIXCPP_RETURN_IF_ERROR(r->feed(buf, static_cast<size_t>(n)));
    }
    return Status::success();
}

}  // namespace

Result<int> connect_authenticated(const sockaddr_storage &host, uint16_t port, const call_credential_fn &credential,
                                  clock_type::time_point deadline, const std::atomic<bool> *cancel) {
    if (!credential) return Status(PMIX_ERR_NO_PERMISSIONS, "handshake: no credential for srun's agent");
    Status last;
    for (int attempt = 0; attempt < kHandshakeTries; ++attempt) {
        if (attempt > 0) {
            // Spread the retries of many callers shed at once (50..150 ms, times the attempt).
            auto pause = std::chrono::milliseconds(std::min(kMaxRetryPauseMs, (50 + std::rand() % 101) * attempt));
            if (clock_type::now() + pause >= deadline || (cancel && cancel->load())) break;
            std::this_thread::sleep_for(pause);
        }
        // A new credential each attempt (the agent refuses one opened before), made before the
        // connection: making it can wait (munge, and in slurmstepd the effective uid's return to
        // root while tasks launch), and the agent gives a connection only a few seconds to
        // authenticate.
        auto cred = credential();
        PMIXCPP_RETURN_IF_ERROR(cred);
        PMIXCPP_ASSIGN_OR_RETURN(auto fd, connect_to(host, port, deadline, cancel));
        fd_guard guard{fd};
        net::auth::client_handshake hs(cred->key, net::auth::purpose::agent, {}, UINT32_MAX, std::move(cred->credential));
        PMIXCPP_ASSIGN_OR_RETURN(auto hello, hs.hello_frame());
        last = send_all(fd, hello, deadline, cancel).with_context("handshake");
        if (last.code() == PMIX_ERR_UNREACH) continue;  // shed already (EPIPE, ECONNRESET)
        PMIXCPP_RETURN_IF_ERROR(last);
        net::auth::frame_reader r;
        last = read_handshake_frame(fd, &r, deadline, cancel);
        if (last.code() == PMIX_ERR_UNREACH) continue;  // dropped before our turn: try again
        PMIXCPP_RETURN_IF_ERROR(last);
        PMIXCPP_ASSIGN_OR_RETURN(auto response, hs.on_frame(r.type(), r.payload()));
        PMIXCPP_RETURN_IF_ERROR(send_all(fd, response, deadline, cancel), "handshake");
        guard.fd = -1;
        return fd;
    }
    return last.ok() ? Status(PMIX_ERR_TIMEOUT, "handshake: timed out") : last;
}

Status accept_authenticated(int fd, const net::auth::key_source &keys, clock_type::time_point deadline) {
    net::auth::server_handshake hs(keys, net::auth::purpose::agent, {});
    net::auth::frame_reader r;
    while (!hs.done()) {
        PMIXCPP_RETURN_IF_ERROR(read_handshake_frame(fd, &r, deadline, nullptr));
        auto reply = hs.on_frame(r.type(), r.payload());
        PMIXCPP_RETURN_IF_ERROR(reply);
        if (!reply->empty()) PMIXCPP_RETURN_IF_ERROR(send_all(fd, reply.value(), deadline, nullptr));
    }
    return Status::success();
}

Result<wire::Frame> read_frame(int fd, uint32_t max_payload, clock_type::time_point deadline,
                               const std::atomic<bool> *cancel) {
    wire::FrameReader reader(max_payload);
    uint8_t buf[8192];
    for (;;) {
        auto f = reader.next();
        PMIXCPP_RETURN_IF_ERROR(f);
        if (f->has_value()) return std::move(**f);
        PMIXCPP_RETURN_IF_ERROR(wait_fd(fd, POLLIN, deadline, cancel));
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
        if (n <= 0) return Status(PMIX_ERR_UNREACH, "the connection closed");
        PMIXCPP_RETURN_IF_ERROR(reader.feed(buf, static_cast<size_t>(n)));
    }
}

Status send_reply_and_close(int fd, const agent::reply &r, int timeout_ms) {
    fd_guard guard{fd};
    PMIXCPP_ASSIGN_OR_RETURN(auto frame, agent::reply_frame(r));
    return send_all(fd, frame, clock_type::now() + std::chrono::milliseconds(timeout_ms), nullptr);
}

Status send_reply_bytes_and_close(int fd, std::span<const uint8_t> encoded_reply, int timeout_ms) {
    fd_guard guard{fd};
    PMIXCPP_ASSIGN_OR_RETURN(auto frame,
                             wire::encode_frame(agent::kReplyFrame, 0, 1, encoded_reply, agent::kMaxPayload));
    return send_all(fd, frame, clock_type::now() + std::chrono::milliseconds(timeout_ms), nullptr);
}

}  // namespace pmixcpp::agent_io
