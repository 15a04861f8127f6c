#include "srun_agent.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "log.h"
#include "step_env.h"
#include "wire/codec.h"
#include "wire/frame.h"

namespace pmixcpp {

namespace {

constexpr uint16_t kReportFrame = 1;
constexpr uint8_t kAck = 0x06;
constexpr int kServeTimeoutMs = 5000;
constexpr uint32_t kMaxReport = 1u << 16;

Status sys_error(const std::string &what) { return Status(PMIX_ERROR, what + ": " + std::strerror(errno)); }

// Wait until fd is readable/writable or the deadline passes.
Status wait_fd(int fd, short events, std::chrono::steady_clock::time_point deadline) {
    for (;;) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) return Status(PMIX_ERR_TIMEOUT, "timed out");
        pollfd p{fd, events, 0};
        int n = poll(&p, 1, static_cast<int>(left.count()));
        if (n > 0) return Status::success();
        if (n < 0 && errno != EINTR) return sys_error("poll");
    }
}

}  // namespace

Result<std::unique_ptr<srun_agent>> srun_agent::start(report_fn on_report) {
    std::unique_ptr<srun_agent> a(new srun_agent());
    a->_on_report = std::move(on_report);
    auto secret = random_token();
    if (!secret.ok()) return secret.status();
    a->_secret = secret.value();

    a->_listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (a->_listen_fd < 0) return sys_error("agent socket");
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_ANY);
    addr.sin_port = 0;
    if (bind(a->_listen_fd, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) != 0) return sys_error("agent bind");
    if (listen(a->_listen_fd, 64) != 0) return sys_error("agent listen");
    socklen_t len = sizeof(addr);
    if (getsockname(a->_listen_fd, reinterpret_cast<sockaddr *>(&addr), &len) != 0)
        return sys_error("agent getsockname");
    a->_port = ntohs(addr.sin_port);
    if (pipe2(a->_wake_fd, O_CLOEXEC) != 0) return sys_error("agent pipe");
    a->_thread = std::thread([p = a.get()] { p->run(); });
    return a;
}

srun_agent::~srun_agent() {
    stop();
    if (_listen_fd >= 0) close(_listen_fd);
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

void srun_agent::run() {
    for (;;) {
        pollfd fds[2] = {{_listen_fd, POLLIN, 0}, {_wake_fd[0], POLLIN, 0}};
        int n = poll(fds, 2, -1);
        if (n < 0) {
            if (errno == EINTR) continue;
            PMIXCPP_LOG_ERROR("srun agent: poll: %m");
            return;
        }
        if (fds[1].revents) return;
        if (!(fds[0].revents & POLLIN)) continue;
        int fd = accept4(_listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0) continue;
        serve(fd);  // reports are rare and small: one at a time, each bounded in time
        close(fd);
    }
}

void srun_agent::serve(int fd) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kServeTimeoutMs);
    wire::FrameReader reader(kMaxReport);
    uint8_t buf[4096];
    for (;;) {
        auto frame = reader.next();
        if (!frame.ok()) {
            PMIXCPP_LOG_ERROR("srun agent: dropped a malformed report: %s", frame.status().message().c_str());
            return;
        }
        if (frame.value()) {
            const wire::Frame &f = *frame.value();
            wire::Reader r(f.payload.data(), f.payload.size());
            std::string secret;
            uint16_t what = 0;
            agent_report rep;
            Status st = r.get_string(&secret, 256);
            if (st.ok()) st = r.get_u16(&what);
            if (st.ok()) st = r.get_i32(&rep.status);
            if (st.ok()) st = r.get_string(&rep.node, 256);
            if (st.ok()) st = r.get_string(&rep.message, kMaxReport);
            if (st.ok()) st = r.expect_end();
            if (!st.ok() || f.type != kReportFrame || (what != 1 && what != 2)) {
                PMIXCPP_LOG_ERROR("srun agent: dropped a malformed report: %s", st.message().c_str());
                return;
            }
            if (secret != _secret) {
                PMIXCPP_LOG_ERROR("srun agent: dropped a report with a wrong step secret");
                return;
            }
            rep.what = static_cast<agent_report::kind>(what);
            if (rep.status == 0) rep.status = 1;
            int expected = 0;
            _exit_code.compare_exchange_strong(expected, rep.status);
            if (_on_report) _on_report(rep);
            uint8_t ack = kAck;
            (void)!write(fd, &ack, 1);
            return;
        }
        if (!wait_fd(fd, POLLIN, deadline).ok()) {
            PMIXCPP_LOG_ERROR("srun agent: a reporter sent an incomplete report within %d ms", kServeTimeoutMs);
            return;
        }
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n <= 0) return;
        if (!reader.feed(buf, static_cast<size_t>(n)).ok()) {
            PMIXCPP_LOG_ERROR("srun agent: dropped a malformed report: %s", reader.error().message().c_str());
            return;
        }
    }
}

Status send_agent_report(const sockaddr_storage &agent_host, uint16_t port, const std::string &secret,
                         const agent_report &report, int timeout_ms) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
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
    w.put_u16(static_cast<uint16_t>(report.what));
    w.put_i32(report.status);
    PMIXCPP_RETURN_IF_ERROR(w.put_string(report.node));
    PMIXCPP_RETURN_IF_ERROR(w.put_string(report.message.substr(0, kMaxReport / 2)));
    auto frame = wire::encode_frame(kReportFrame, 0, 1, w.data(), kMaxReport);
    if (!frame.ok()) return frame.status();

    int fd = socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) return sys_error("srun agent: socket");
    struct closer {
        int fd;
        ~closer() { close(fd); }
    } guard{fd};
    if (connect(fd, reinterpret_cast<sockaddr *>(&addr), len) != 0 && errno != EINPROGRESS)
        return sys_error("srun agent: connect");
    PMIXCPP_RETURN_IF_ERROR(wait_fd(fd, POLLOUT, deadline).with_context("srun agent: connect"));
    int err = 0;
    socklen_t elen = sizeof(err);
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen);
    if (err) {
        errno = err;
        return sys_error("srun agent: connect");
    }
    const auto &bytes = frame.value();
    size_t off = 0;
    while (off < bytes.size()) {
        ssize_t n = send(fd, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR) {
                PMIXCPP_RETURN_IF_ERROR(wait_fd(fd, POLLOUT, deadline).with_context("srun agent: send"));
                continue;
            }
            return sys_error("srun agent: send");
        }
        off += static_cast<size_t>(n);
    }
    for (;;) {
        PMIXCPP_RETURN_IF_ERROR(wait_fd(fd, POLLIN, deadline).with_context("srun agent: no acknowledgement"));
        uint8_t ack = 0;
        ssize_t n = read(fd, &ack, 1);
        if (n == 1 && ack == kAck) return Status::success();
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
        return Status(PMIX_ERR_UNREACH, "srun agent: report refused");
    }
}

}  // namespace pmixcpp
