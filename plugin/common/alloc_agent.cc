#include "alloc_agent.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "wire/codec.h"
#include "wire/frame.h"

namespace pmixcpp {

namespace {

using clock_type = std::chrono::steady_clock;

Status sys_error(const std::string &what) { return Status(PMIX_ERR_UNREACH, what + ": " + std::strerror(errno)); }

struct fd_closer {
    int fd;
    ~fd_closer() {
        if (fd >= 0) close(fd);
    }
};

// Wait for `events` on fd until `deadline`; with `cancel`, give up when it turns true.
Status wait_fd(int fd, short events, clock_type::time_point deadline, const std::atomic<bool> *cancel) {
    for (;;) {
        if (cancel && cancel->load()) return Status(PMIX_ERR_TIMEOUT, "cancelled");
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_type::now()).count();
        if (left <= 0) return Status(PMIX_ERR_TIMEOUT, "timed out");
        pollfd p{fd, events, 0};
        int n = poll(&p, 1, static_cast<int>(std::min<long long>(left, 100)));
        if (n > 0) return Status::success();
        if (n < 0 && errno != EINTR) return sys_error("poll");
    }
}

Status send_all(int fd, std::span<const uint8_t> bytes, clock_type::time_point deadline,
                const std::atomic<bool> *cancel) {
    size_t off = 0;
    while (off < bytes.size()) {
        ssize_t n = send(fd, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR) {
                PMIXCPP_RETURN_IF_ERROR(wait_fd(fd, POLLOUT, deadline, cancel));
                continue;
            }
            return sys_error("send");
        }
        off += static_cast<size_t>(n);
    }
    return Status::success();
}

}  // namespace

Result<std::vector<uint8_t>> agent_alloc_call(const sockaddr_storage &agent_host, uint16_t port,
                                              const std::string &secret, std::span<const uint8_t> body,
                                              int timeout_ms, const std::atomic<bool> *cancel) {
    auto deadline = clock_type::now() + std::chrono::milliseconds(timeout_ms);
    sockaddr_storage addr = agent_host;
    socklen_t len = 0;
    if (addr.ss_family == AF_INET) {
        reinterpret_cast<sockaddr_in *>(&addr)->sin_port = htons(port);
        len = sizeof(sockaddr_in);
    } else if (addr.ss_family == AF_INET6) {
        reinterpret_cast<sockaddr_in6 *>(&addr)->sin6_port = htons(port);
        len = sizeof(sockaddr_in6);
    } else {
        return Status(PMIX_ERR_BAD_PARAM, "srun agent: unsupported address family");
    }
    wire::Writer w;
    PMIXCPP_RETURN_IF_ERROR(w.put_string(secret));
    PMIXCPP_RETURN_IF_ERROR(w.put_bytes(body.data(), body.size()));
    auto frame = wire::encode_frame(kAgentAllocFrame, 0, 1, w.data(), kAgentAllocMax);
    if (!frame.ok()) return frame.status();

    int fd = socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) return sys_error("srun agent: socket");
    fd_closer guard{fd};
    if (connect(fd, reinterpret_cast<sockaddr *>(&addr), len) != 0 && errno != EINPROGRESS)
        return sys_error("srun agent: connect");
    PMIXCPP_RETURN_IF_ERROR(wait_fd(fd, POLLOUT, deadline, cancel).with_context("srun agent: connect"));
    int err = 0;
    socklen_t elen = sizeof(err);
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen);
    if (err) {
        errno = err;
        return sys_error("srun agent: connect");
    }
    PMIXCPP_RETURN_IF_ERROR(send_all(fd, frame.value(), deadline, cancel).with_context("srun agent"));

    wire::FrameReader reader(kAgentAllocMax);
    uint8_t buf[8192];
    for (;;) {
        Status ws = wait_fd(fd, POLLIN, deadline, cancel);
        if (!ws.ok()) {
            if (ws.code() == PMIX_ERR_TIMEOUT)
                return Status(PMIX_ERR_TIMEOUT, "srun agent: no answer within " + std::to_string(timeout_ms / 1000) + " s");
            return ws.with_context("srun agent");
        }
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
        if (n <= 0) return Status(PMIX_ERR_UNREACH, "srun agent closed the connection without an answer");
        PMIXCPP_RETURN_IF_ERROR(reader.feed(buf, static_cast<size_t>(n)).with_context("srun agent"));
        auto f = reader.next();
        if (!f.ok()) return f.status().with_context("srun agent");
        if (!f->has_value()) continue;
        if ((*f)->type != kAgentAllocReplyFrame)
            return Status(PMIX_ERR_UNPACK_FAILURE, "srun agent: unexpected frame type " + std::to_string((*f)->type));
        return std::move((*f)->payload);
    }
}

Result<std::vector<uint8_t>> open_alloc_frame(std::span<const uint8_t> payload, const std::string &secret) {
    wire::Reader r(payload.data(), payload.size());
    std::string got;
    PMIXCPP_RETURN_IF_ERROR(r.get_string(&got, 256).with_context("alloc frame"));
    std::span<const uint8_t> body;
    PMIXCPP_RETURN_IF_ERROR(r.get_bytes(&body).with_context("alloc frame"));
    PMIXCPP_RETURN_IF_ERROR(r.expect_end().with_context("alloc frame"));
    if (got != secret) return Status(PMIX_ERR_NO_PERMISSIONS, "alloc frame with a wrong step secret");
    return std::vector<uint8_t>(body.begin(), body.end());
}

Status send_alloc_reply_and_close(int fd, std::span<const uint8_t> body, int timeout_ms) {
    fd_closer guard{fd};
    auto frame = wire::encode_frame(kAgentAllocReplyFrame, 0, 1, body, kAgentAllocMax);
    if (!frame.ok()) return frame.status();
    return send_all(fd, frame.value(), clock_type::now() + std::chrono::milliseconds(timeout_ms), nullptr);
}

}  // namespace pmixcpp
