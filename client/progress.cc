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

namespace pmixcpp::client {

ProgressLoop::~ProgressLoop() { stop(); }

Status ProgressLoop::start() {
    if (running()) return Status::success();
    _event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (_event_fd < 0) return Status(PMIX_ERR_OUT_OF_RESOURCE, std::string("eventfd: ") + strerror(errno));
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

void ProgressLoop::stop() {
    if (!_thread.joinable()) return;
    _stop.store(true);
    wake();
    _thread.join();
    _running.store(false, std::memory_order_release);
    _thread_id.store(std::thread::id());
    if (_fd >= 0) {
        close(_fd);
        _fd = -1;
    }
    _connected.store(false);
    if (_event_fd >= 0) close(_event_fd);
    _event_fd = -1;
    std::lock_guard<std::mutex> g(_lock);
    _tasks.clear();
    _out.clear();
    _out_offset = 0;
    _timers.clear();
    _timer_order.clear();
}

void ProgressLoop::wake() {
    if (_event_fd < 0) return;
    uint64_t one = 1;
    ssize_t n = write(_event_fd, &one, sizeof(one));
    (void)n;
}

void ProgressLoop::attach(int fd, FrameHandler on_frame, CloseHandler on_close) {
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
    if (!flushed && !on_thread()) wake();
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
    {
        std::lock_guard<std::mutex> g(_lock);
        _tasks.push_back(std::move(task));
    }
    wake();
}

uint64_t ProgressLoop::add_timer(Clock::duration delay, Task task) {
    uint64_t id;
    {
        std::lock_guard<std::mutex> g(_lock);
        id = _next_timer++;
        auto when = Clock::now() + delay;
        _timers.emplace(id, std::make_pair(when, std::move(task)));
        _timer_order.emplace(when, id);
    }
    wake();
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

void ProgressLoop::close_socket(const Status &why) {
    CloseHandler handler;
    {
        std::lock_guard<std::mutex> g(_lock);
        if (_fd < 0) return;
        close(_fd);
        _fd = -1;
        _connected.store(false, std::memory_order_release);
        _out.clear();
        _out_offset = 0;
        handler = std::move(_on_close);
        _on_close = nullptr;
    }
    PMIXCPP_LOG_DEBUG("connection to the server closed: %s", why.message().c_str());
    if (handler) handler(why);
}

void ProgressLoop::handle_readable() {
    uint8_t buf[65536];
    for (;;) {
        ssize_t n = recv(_fd, buf, sizeof(buf), 0);
        if (n > 0) {
            Status st = _reader.feed(buf, static_cast<size_t>(n));
            if (!st.ok()) {
                PMIXCPP_LOG_ERROR("malformed frame from the server: %s", st.message().c_str());
                close_socket(Status(PMIX_ERR_LOST_CONNECTION, "malformed frame: " + st.message()));
                return;
            }
            for (;;) {
                auto next = _reader.next();
                if (!next.ok()) {
                    PMIXCPP_LOG_ERROR("malformed frame from the server: %s", next.status().message().c_str());
                    close_socket(Status(PMIX_ERR_LOST_CONNECTION, "malformed frame"));
                    return;
                }
                if (!next.value().has_value()) break;
                if (_on_frame) _on_frame(std::move(*next.value()));
                if (_fd < 0) return;
            }
            if (static_cast<size_t>(n) < sizeof(buf)) return;
            continue;
        }
        if (n == 0) {
            close_socket(Status(PMIX_ERR_LOST_CONNECTION, "server closed the connection"));
            return;
        }
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return;
        close_socket(Status(PMIX_ERR_LOST_CONNECTION, std::string("recv: ") + strerror(errno)));
        return;
    }
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
        bool want_write;
        {
            std::lock_guard<std::mutex> g(_lock);
            want_write = !_out.empty();
        }
        if (_fd >= 0) {
            fds[1] = {_fd, static_cast<short>(POLLIN | (want_write ? POLLOUT : 0)), 0};
            nfds = 2;
        }
        int rc = poll(fds, nfds, next_poll_timeout_ms());
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
            if (_fd >= 0 && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) handle_readable();
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
