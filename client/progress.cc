// Progress thread of the client library (see progress.h).
#include "progress.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include "log.h"
#include "sys.h"
#include "wire/messages.h"

namespace pmixcpp::client {

ProgressLoop::~ProgressLoop() {
    stop();
    if (_waiter_fd >= 0) close(_waiter_fd);
}

Status ProgressLoop::start() {
    std::lock_guard<std::mutex> s(_start_lock);
    if (running()) return Status::success();
    if (_finished) return Status(PMIX_ERR_INIT, "the progress loop was stopped");
    _event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (_event_fd < 0) return sys_error("eventfd", errno, PMIX_ERR_OUT_OF_RESOURCE);
    _stop.store(false);
    _running.store(true, std::memory_order_release);
    try {
        _thread = std::thread([this] { run(); });
    } catch (...) {
        _running.store(false);
        close(_event_fd);
        _event_fd = -1;
        return Status(PMIX_ERR_OUT_OF_RESOURCE, "cannot start the progress thread");
    }
    return Status::success();
}

void ProgressLoop::ensure_started() {
    if (running()) return;
    Status st = start();
    if (!st.ok()) PMIXCPP_LOG_ERROR("progress thread: %s", st.message().c_str());
}

void ProgressLoop::join_thread() {
    std::lock_guard<std::mutex> s(_start_lock);
    _finished = true;
    if (!_thread.joinable()) return;
    _stop.store(true);
    wake();
    _thread.join();
    _running.store(false, std::memory_order_release);
    _thread_id.store(std::thread::id());
}

void ProgressLoop::stop() {
    join_thread();
    std::lock_guard<std::mutex> g(_lock);
    if (_fd >= 0) close_fd_locked();
    _connected.store(false);
    if (_event_fd >= 0) close(_event_fd);
    _event_fd = -1;
    _tasks.clear();
    _out.clear();
    _out_offset = 0;
    _timers.clear();
    _timer_order.clear();
}

void ProgressLoop::finish(std::vector<uint8_t> last, std::chrono::milliseconds timeout) {
    join_thread();
    {
        std::lock_guard<std::mutex> g(_lock);
        if (_connected.load() && _fd >= 0) _out.push_back(std::move(last));
    }
    flush_blocking(timeout);
    stop();
}

void ProgressLoop::wake() {
    if (_event_fd < 0) return;
    uint64_t one = 1;
    ssize_t n = write(_event_fd, &one, sizeof(one));
    (void)n;
}

void ProgressLoop::attach(int fd, FrameHandler on_frame, CloseHandler on_close) {
    if (_waiter_fd < 0) _waiter_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);  // direct waits only if it exists
    int flags = fcntl(fd, F_GETFL);
    if (flags >= 0) fcntl(fd, F_SETFL, flags | O_NONBLOCK);
    {
        std::lock_guard<std::mutex> g(_lock);
        _fd = fd;
        _on_frame = std::move(on_frame);
        _on_close = std::move(on_close);
        _connected.store(true, std::memory_order_release);
    }
    wake();
}

bool ProgressLoop::send(std::vector<uint8_t> bytes) {
    bool flushed = false;
    {
        std::lock_guard<std::mutex> g(_lock);
        if (!_connected.load()) return false;
        _out.push_back(std::move(bytes));
        // Write from the caller's thread when nothing is queued ahead: a request
        // then reaches the server without waking the progress thread (which
        // already polls the socket for the reply). Errors are left to that thread.
        if (_out.size() == 1 && _fd >= 0) flushed = try_write_locked();
    }
    if (!flushed && !on_thread()) {
        ensure_started();  // the rest is written by the progress thread
        wake();
    }
    return true;
}

bool ProgressLoop::try_write_locked() {
    while (!_out.empty()) {
        auto &front = _out.front();
        ssize_t n = ::send(_fd, front.data() + _out_offset, front.size() - _out_offset, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;  // EAGAIN or an error: the progress thread takes over
        }
        _out_offset += static_cast<size_t>(n);
        if (_out_offset < front.size()) return false;
        _out.pop_front();
        _out_offset = 0;
    }
    return true;
}

void ProgressLoop::post(Task task) {
    ensure_started();
    {
        std::lock_guard<std::mutex> g(_lock);
        _tasks.push_back(std::move(task));
    }
    wake();
}

uint64_t ProgressLoop::add_timer(Clock::duration delay, Task task) {
    ensure_started();
    uint64_t id;
    bool earliest;
    {
        std::lock_guard<std::mutex> g(_lock);
        id = _next_timer++;
        auto when = Clock::now() + delay;
        _timers.emplace(id, std::make_pair(when, std::move(task)));
        // The loop already wakes up for an earlier timer and then looks again.
        earliest = _timer_order.empty() || when < _timer_order.begin()->first;
        _timer_order.emplace(when, id);
    }
    if (earliest && !on_thread()) wake();
    return id;
}

void ProgressLoop::cancel_timer(uint64_t id) {
    std::lock_guard<std::mutex> g(_lock);
    _timers.erase(id);  // its _timer_order entry is skipped when it comes due
}

int ProgressLoop::next_poll_timeout_ms() {
    std::lock_guard<std::mutex> g(_lock);
    if (!_tasks.empty()) return 0;
    while (!_timer_order.empty() && _timers.find(_timer_order.begin()->second) == _timers.end())
        _timer_order.erase(_timer_order.begin());
    if (_timer_order.empty()) return -1;
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(_timer_order.begin()->first - Clock::now());
    if (left.count() <= 0) return 0;
    return static_cast<int>(std::min<int64_t>(left.count() + 1, 60000));
}

void ProgressLoop::run_due_timers() {
    for (;;) {
        Task task;
        {
            std::lock_guard<std::mutex> g(_lock);
            if (_timer_order.empty()) return;
            auto it = _timer_order.begin();
            if (it->first > Clock::now()) return;
            auto t = _timers.find(it->second);
            _timer_order.erase(it);
            if (t == _timers.end()) continue;
            task = std::move(t->second.second);
            _timers.erase(t);
        }
        if (task) task();
    }
}

void ProgressLoop::close_fd_locked() {
    if (_direct_active) {
        // The direct waiter polls this descriptor: wake it (end of file) and close the descriptor
        // when its wait ends, so the number cannot be reused under it.
        shutdown(_fd, SHUT_RDWR);
        _deferred_close = _fd;
    } else {
        close(_fd);
    }
    _fd = -1;
}

void ProgressLoop::close_socket(const Status &why) {
    CloseHandler handler;
    {
        std::lock_guard<std::mutex> g(_lock);
        if (_fd < 0) return;
        close_fd_locked();
        _connected.store(false, std::memory_order_release);
        _out.clear();
        _out_offset = 0;
        handler = std::move(_on_close);
        _on_close = nullptr;
    }
    PMIXCPP_LOG_DEBUG("connection to the server closed: %s", why.message().c_str());
    if (handler) handler(why);
}

// Descriptors come only from the server, each with the first byte of the one frame flagged
// kFrameFlagDescriptor that it belongs to: so they arrive, in order, no later than their frames,
// and each flagged frame takes the oldest one not yet taken. If the kernel dropped one (this
// process out of descriptors), no flagged frame gets one any more: its snapshot is not used and
// Gets ask the server.
Status ProgressLoop::read_frames_locked(int fd, std::vector<wire::Frame> *frames) {
    uint8_t buf[65536];
    alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxDescriptorsPerRead)];
    for (;;) {
        struct iovec iov = {buf, sizeof(buf)};
        struct msghdr msg {};
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control;
        msg.msg_controllen = sizeof(control);
        ssize_t n = recvmsg(fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
        if (n >= 0 && msg.msg_controllen > 0) {
            for (struct cmsghdr *cm = CMSG_FIRSTHDR(&msg); cm != nullptr; cm = CMSG_NXTHDR(&msg, cm)) {
                if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS) continue;
                const size_t count = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                for (size_t i = 0; i < count; ++i) {
                    int got;
                    memcpy(&got, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
                    _descriptors.push_back(wire::adopt_descriptor(got));
                }
            }
            if ((msg.msg_flags & MSG_CTRUNC) && !_descriptors_lost) {
                // Out of descriptors (or more than room for): which frame lost one is unknown.
                PMIXCPP_LOG_ERROR("descriptors from the server were dropped (out of descriptors?): the "
                                  "frames that carry one get none from now on");
                _descriptors_lost = true;
            }
            if (_descriptors_lost) _descriptors.clear();
        }
        if (n > 0) {
            Status st = _reader.feed(buf, static_cast<size_t>(n));
            if (!st.ok()) {
                PMIXCPP_LOG_ERROR("malformed frame from the server: %s", st.message().c_str());
                return Status(PMIX_ERR_LOST_CONNECTION, "malformed frame: " + st.message());
            }
            for (;;) {
                auto next = _reader.next();
                if (!next.ok()) {
                    PMIXCPP_LOG_ERROR("malformed frame from the server: %s", next.status().message().c_str());
                    return Status(PMIX_ERR_LOST_CONNECTION, "malformed frame");
                }
                if (!next.value().has_value()) break;
                wire::Frame &f = *next.value();
                if ((f.flags & wire::kFrameFlagDescriptor) && !_descriptors_lost) {
                    if (_descriptors.empty()) {
                        PMIXCPP_LOG_ERROR("frame %u from the server came without its descriptor: the frames "
                                          "that carry one get none from now on", f.id);
                        _descriptors_lost = true;
                    } else {
                        f.descriptor = std::move(_descriptors.front());
                        _descriptors.pop_front();
                    }
                }
                frames->push_back(std::move(f));
            }
            if (static_cast<size_t>(n) < sizeof(buf)) return Status::success();
            continue;
        }
        if (n == 0) return Status(PMIX_ERR_LOST_CONNECTION, "server closed the connection");
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return Status::success();
        return sys_error("recv", errno, PMIX_ERR_LOST_CONNECTION);
    }
}

void ProgressLoop::handle_readable() {
    std::vector<wire::Frame> frames;
    Status st;
    {
        std::lock_guard<std::mutex> r(_read_lock);
        if (_app_owns.load() || _fd < 0) return;  // an application thread reads it now
        st = read_frames_locked(_fd, &frames);
    }
    for (auto &f : frames) {
        if (_fd < 0) return;
        if (_on_frame) _on_frame(std::move(f));
    }
    if (!st.ok()) close_socket(st);
}

bool ProgressLoop::claim_socket() {
    if (on_thread() || _waiter_fd < 0) return false;
    bool wake_loop;
    {
        std::lock_guard<std::mutex> r(_read_lock);  // the loop is not in the middle of a read
        std::lock_guard<std::mutex> g(_lock);
        if (_direct_active || _fd < 0 || !_connected.load()) return false;
        _direct_active = true;
        _hand_back_asked = false;
        wake_loop = !_app_owns.load() && _loop_polls_socket;  // let it drop the socket from its poll
        _app_owns.store(true);
    }
    if (wake_loop) wake();
    return true;
}

void ProgressLoop::wait_direct(const std::function<bool()> &done, const FrameHandler &on_frame) {
    int fd;
    {
        std::lock_guard<std::mutex> g(_lock);
        fd = _fd;  // stays open until release_socket (close_fd_locked defers)
    }
    bool reading = fd >= 0;
    while (!done()) {
        pollfd p[2] = {{_waiter_fd, POLLIN, 0}, {fd, POLLIN, 0}};
        // The timeout is only a safety net: every completion elsewhere calls wake_direct().
        int rc = poll(p, reading ? 2 : 1, 1000);
        if (rc < 0 && errno != EINTR) {
            PMIXCPP_LOG_ERROR("direct wait: poll: %m");
            reading = false;
            hand_back_socket();
            continue;
        }
        if (rc <= 0) continue;
        if (p[0].revents & POLLIN) {
            uint64_t v;
            ssize_t n = read(_waiter_fd, &v, sizeof(v));
            (void)n;
        }
        if (!reading || p[1].revents == 0) continue;
        std::vector<wire::Frame> frames;
        Status st;
        {
            std::lock_guard<std::mutex> r(_read_lock);
            st = read_frames_locked(fd, &frames);
        }
        for (auto &f : frames) on_frame(std::move(f));
        if (!st.ok()) {
            // The progress thread closes the connection and fails what is pending, ours included.
            reading = false;
            post([this, st] { close_socket(st); });
        }
    }
}

void ProgressLoop::release_socket(bool hand_back) {
    bool wake_loop = false;
    {
        std::lock_guard<std::mutex> g(_lock);
        _direct_active = false;
        if (_deferred_close >= 0) {
            close(_deferred_close);
            _deferred_close = -1;
        }
        if (hand_back || _hand_back_asked || _fd < 0) {
            _app_owns.store(false);
            wake_loop = _fd >= 0;
        } else {
            _released_at = Clock::now();  // the loop takes it back after kReclaimDelay
        }
        _hand_back_asked = false;
    }
    if (wake_loop) wake();
}

void ProgressLoop::hand_back_socket() {
    {
        std::lock_guard<std::mutex> g(_lock);
        if (!_app_owns.load()) return;
        if (_direct_active) {
            _hand_back_asked = true;
            return;
        }
        _app_owns.store(false);
    }
    if (!on_thread()) wake();
}

void ProgressLoop::wake_direct() {
    if (_waiter_fd < 0) return;
    uint64_t one = 1;
    ssize_t n = write(_waiter_fd, &one, sizeof(one));
    (void)n;
}

void ProgressLoop::handle_writable() {
    std::unique_lock<std::mutex> g(_lock);
    while (!_out.empty() && _fd >= 0) {
        auto &front = _out.front();
        ssize_t n = ::send(_fd, front.data() + _out_offset, front.size() - _out_offset, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) return;
            std::string why = std::string("send: ") + strerror(errno);
            g.unlock();
            close_socket(Status(PMIX_ERR_LOST_CONNECTION, why));
            return;
        }
        _out_offset += static_cast<size_t>(n);
        if (_out_offset == front.size()) {
            _out.pop_front();
            _out_offset = 0;
        }
    }
}

void ProgressLoop::flush_blocking(std::chrono::milliseconds timeout) {
    auto deadline = Clock::now() + timeout;
    for (;;) {
        handle_writable();
        {
            std::lock_guard<std::mutex> g(_lock);
            if (_out.empty() || _fd < 0) return;
        }
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
        if (left.count() <= 0) return;
        pollfd p{_fd, POLLOUT, 0};
        poll(&p, 1, static_cast<int>(left.count()));
    }
}

void ProgressLoop::run() {
    _thread_id.store(std::this_thread::get_id());
    while (!_stop.load()) {
        pollfd fds[2];
        nfds_t nfds = 1;
        fds[0] = {_event_fd, POLLIN, 0};
        bool want_write, want_read;
        int reclaim_ms = -1;
        {
            std::lock_guard<std::mutex> g(_lock);
            want_write = !_out.empty();
            if (_app_owns.load() && !_direct_active && Clock::now() - _released_at >= kReclaimDelay)
                _app_owns.store(false);  // the application thread has not waited for a while
            want_read = !_app_owns.load() && _fd >= 0;
            _loop_polls_socket = want_read;
            if (_app_owns.load()) reclaim_ms = static_cast<int>(kReclaimDelay.count());
        }
        if (_fd >= 0 && (want_read || want_write)) {
            fds[1] = {_fd, static_cast<short>((want_read ? POLLIN : 0) | (want_write ? POLLOUT : 0)), 0};
            nfds = 2;
        }
        int timeout = next_poll_timeout_ms();
        if (reclaim_ms >= 0 && (timeout < 0 || timeout > reclaim_ms)) timeout = reclaim_ms;
        int rc = poll(fds, nfds, timeout);
        if (rc < 0 && errno != EINTR) {
            PMIXCPP_LOG_ERROR("progress thread: poll: %m");
            break;
        }
        if (_stop.load()) break;
        if (rc > 0 && (fds[0].revents & POLLIN)) {
            uint64_t v;
            ssize_t n = read(_event_fd, &v, sizeof(v));
            (void)n;
        }
        if (nfds == 2 && rc > 0) {
            if (fds[1].revents & POLLOUT) handle_writable();
            if (_fd >= 0 && want_read && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) handle_readable();
        }
        if (_fd >= 0) handle_writable();
        run_due_timers();
        // Posted tasks, one batch at a time (tasks posted by tasks run in the next round).
        std::deque<Task> batch;
        {
            std::lock_guard<std::mutex> g(_lock);
            batch.swap(_tasks);
        }
        for (auto &task : batch) {
            if (_stop.load()) break;
            task();
        }
    }
}

}  // namespace pmixcpp::client
