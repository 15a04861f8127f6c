#include "srun_agent.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "alloc_agent.h"
#include "agent_io.h"
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
    for (auto &[n, c] : _rdv) close(c.first);
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
        if (!serve(fd)) close(fd);  // reports are rare and small: one at a time, each bounded in time
    }
}

void srun_agent::rendezvous_complete() {
    wire::Writer w;
    w.put_u32(_rdv_nodes);
    for (auto &[n, c] : _rdv) (void)w.put_string(c.second);
    auto frame = wire::encode_frame(kTableFrame, 0, 1, w.data(), kMaxTable);
    for (auto &[n, c] : _rdv) {
        if (frame.ok()) {
            size_t off = 0;
            while (off < frame->size()) {
                ssize_t k = send(c.first, frame->data() + off, frame->size() - off, MSG_NOSIGNAL);
                if (k < 0 && errno == EINTR) continue;
                if (k <= 0) break;
                off += static_cast<size_t>(k);
            }
        }
        close(c.first);
    }
    PMIXCPP_LOG_DEBUG("srun agent: address table of %u nodes sent", _rdv_nodes);
    _rdv.clear();
}

bool srun_agent::serve(int fd) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kServeTimeoutMs);
    wire::FrameReader reader(kMaxTable);
    uint8_t buf[4096];
    for (;;) {
        auto frame = reader.next();
        if (!frame.ok()) {
            PMIXCPP_LOG_ERROR("srun agent: dropped a malformed report: %s", frame.status().message().c_str());
            return false;
        }
        if (frame.value() && frame.value()->type == kRendezvousFrame) {
            const wire::Frame &f = *frame.value();
            wire::Reader r(f.payload.data(), f.payload.size());
            std::string secret, address;
            uint32_t node = 0, nnodes = 0;
            Status st = r.get_string(&secret, 256);
            if (st.ok()) st = r.get_u32(&node);
            if (st.ok()) st = r.get_u32(&nnodes);
            if (st.ok()) st = r.get_string(&address, 1u << 16);
            if (st.ok()) st = r.expect_end();
            if (!st.ok() || nnodes == 0 || node >= nnodes) {
                PMIXCPP_LOG_ERROR("srun agent: dropped a malformed rendezvous: %s", st.message().c_str());
                return false;
            }
            if (secret != _secret) {
                PMIXCPP_LOG_ERROR("srun agent: dropped a rendezvous with a wrong step secret");
                return false;
            }
            if ((_rdv_nodes && nnodes != _rdv_nodes) || _rdv.count(node)) {
                PMIXCPP_LOG_ERROR("srun agent: dropped a rendezvous of node %u of %u (conflicts with earlier reports)",
                                  node, nnodes);
                return false;
            }
            if (address.rfind("tcp:*:", 0) == 0) {
                sockaddr_storage peer{};
                socklen_t len = sizeof(peer);
                char ip[INET6_ADDRSTRLEN] = "127.0.0.1";
                if (getpeername(fd, reinterpret_cast<sockaddr *>(&peer), &len) == 0 && peer.ss_family == AF_INET)
                    inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in *>(&peer)->sin_addr, ip, sizeof(ip));
                address = std::string("tcp:") + ip + address.substr(5);
            }
            _rdv_nodes = nnodes;
            _rdv[node] = {fd, address};
            if (_rdv.size() == _rdv_nodes) rendezvous_complete();
            return true;
        }
        if (frame.value() && frame.value()->type == kAgentAllocFrame) {
            // An allocation request: the bridge takes the connection and answers when done.
            auto body = open_alloc_frame(frame.value()->payload, _secret);
            if (!body.ok()) {
                PMIXCPP_LOG_ERROR("srun agent: dropped an allocation request: %s", body.status().message().c_str());
                return false;
            }
            if (!_on_alloc) return false;
            _on_alloc(fd, std::move(body.value()));
            return true;
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
            if (!st.ok() || f.type != kReportFrame || (what < 1 || what > 3)) {
                PMIXCPP_LOG_ERROR("srun agent: dropped a malformed report: %s", st.message().c_str());
                return false;
            }
            if (secret != _secret) {
                PMIXCPP_LOG_ERROR("srun agent: dropped a report with a wrong step secret");
                return false;
            }
            rep.what = static_cast<agent_report::kind>(what);
            if (rep.status == 0) rep.status = 1;
            int expected = 0;
            _exit_code.compare_exchange_strong(expected, rep.status);
            if (_on_report) _on_report(rep);
            uint8_t ack = kAck;
            (void)!write(fd, &ack, 1);
            return false;
        }
        if (!agent_io::wait_fd(fd, POLLIN, deadline).ok()) {
            PMIXCPP_LOG_ERROR("srun agent: a reporter sent an incomplete report within %d ms", kServeTimeoutMs);
            return false;
        }
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n <= 0) return false;
        if (!reader.feed(buf, static_cast<size_t>(n)).ok()) {
            PMIXCPP_LOG_ERROR("srun agent: dropped a malformed report: %s", reader.error().message().c_str());
            return false;
        }
    }
}

Status send_agent_report(const sockaddr_storage &agent_host, uint16_t port, const std::string &secret,
                         const agent_report &report, int timeout_ms) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    wire::Writer w;
    PMIXCPP_RETURN_IF_ERROR(w.put_string(secret));
    w.put_u16(static_cast<uint16_t>(report.what));
    w.put_i32(report.status);
    PMIXCPP_RETURN_IF_ERROR(w.put_string(report.node));
    PMIXCPP_RETURN_IF_ERROR(w.put_string(report.message.substr(0, kMaxReport / 2)));
    auto frame = wire::encode_frame(kReportFrame, 0, 1, w.data(), kMaxReport);
    if (!frame.ok()) return frame.status();

    auto fd = agent_io::connect_to(agent_host, port, deadline);
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
    PMIXCPP_RETURN_IF_ERROR(w.put_string(secret));
    w.put_u32(node_id);
    w.put_u32(nnodes);
    PMIXCPP_RETURN_IF_ERROR(w.put_string(address));
    auto frame = wire::encode_frame(kRendezvousFrame, 0, 1, w.data(), kMaxTable);
    if (!frame.ok()) return frame.status();

    auto fd = agent_io::connect_to(agent_host, port, deadline, cancel);
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
