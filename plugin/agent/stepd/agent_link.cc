#include "agent_link.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "log.h"
#include "sys.h"

namespace pmixcpp::agent {

namespace {
using finished_list = std::vector<std::pair<call_link::done_fn, Result<reply>>>;
// Bytes read from the connection per round of the loop: a flood of replies does not starve the
// timers and the queue.
constexpr size_t kReadPerRound = 1u << 20;

std::string seconds_of(int ms) {
    return ms >= 1000 ? std::to_string(ms / 1000) + " s" : std::to_string(ms) + " ms";
}
}  // namespace

call_link::call_link(connect_fn connect, options opts) : _connect(std::move(connect)), _opts(opts) {
    if (pipe2(_wake, O_CLOEXEC | O_NONBLOCK) != 0) _wake[0] = _wake[1] = -1;
}

call_link::~call_link() {
    close(Status(PMIX_ERR_JOB_CANCELED, "the step is ending"));
    for (int fd : _wake)
        if (fd >= 0) ::close(fd);
}

call_link::counters call_link::stats() const {
    std::lock_guard<std::mutex> g(_mutex);
    return _stats;
}

void call_link::call(service_id s, std::vector<uint8_t> body, int timeout_ms, done_fn done) {
    Status refused;
    {
        std::lock_guard<std::mutex> g(_mutex);
        if (_closed)
            refused = Status(PMIX_ERR_NOT_AVAILABLE, "srun agent: the connection is closed for good");
        else if (_wake[1] < 0)
            refused = Status(PMIX_ERR_OUT_OF_RESOURCE, "srun agent: no wake-up pipe");
        else if (_count >= _opts.max_in_flight)
            refused = Status(PMIX_ERR_OUT_OF_RESOURCE, "srun agent: " + std::to_string(_opts.max_in_flight) +
                                                           " calls in flight already");
        else if (body.size() > kMaxPayload)
            refused = Status(PMIX_ERR_BAD_PARAM, "srun agent: a request of " + std::to_string(body.size()) + " bytes");
        if (refused.ok() && !_thread.joinable()) {
            try {
                _thread = std::thread([this] { run(); });
            } catch (const std::exception &e) {
                refused = Status(PMIX_ERR_OUT_OF_RESOURCE, std::string("srun agent: no I/O thread: ") + e.what());
            }
        }
        if (refused.ok()) {
            pending p;
            p.what = s;
            p.body = std::move(body);
            p.timeout_ms = timeout_ms;
            p.deadline = clock_type::now() + std::chrono::milliseconds(std::max(timeout_ms, 0));
            p.done = std::move(done);
            _queue.push_back(std::move(p));
            ++_count;
        }
    }
    if (!refused.ok()) return done(refused);
    char c = 1;
    (void)!write(_wake[1], &c, 1);  // a full pipe already wakes the thread
}

void call_link::close(Status why) {
    std::deque<pending> queued;
    {
        std::lock_guard<std::mutex> g(_mutex);
        if (!_closed) {
            _closed = true;
            _why_closed = why;
            _closing = true;
            if (!_thread.joinable()) queued.swap(_queue);  // no thread to end them
        }
    }
    if (_wake[1] >= 0) {
        char c = 1;
        (void)!write(_wake[1], &c, 1);
    }
    if (_thread.joinable() && _thread.get_id() != std::this_thread::get_id()) _thread.join();
    for (auto &p : queued) p.done(why);
}

void call_link::broke(const Status &why, finished_list *finished) {
    {
        std::lock_guard<std::mutex> g(_mutex);
        ++_stats.broken;
    }
    disconnect(why, finished);
}

// The state and the counters change before the descriptor is closed: whoever sees the close (srun,
// or a test playing it) then sees them too.
void call_link::disconnect(const Status &why, finished_list *finished) {
    const int fd = _fd;
    _fd = -1;
    _connected = false;
    _out.clear();
    _out_off = 0;
    _reader = wire::FrameReader(kMaxPayload);
    for (auto &[id, p] : _calls) finished->emplace_back(std::move(p.done), why);
    {
        std::lock_guard<std::mutex> g(_mutex);
        _count -= _calls.size();
        if (why.ok() && fd >= 0) ++_stats.idle_closes;
    }
    _calls.clear();
    if (fd >= 0) ::close(fd);
}

bool call_link::on_frame(const wire::Frame &f, finished_list *finished) {
    Status bad;
    auto it = _calls.end();
    if (f.type != kReplyFrame) {
        bad = Status(PMIX_ERR_UNPACK_FAILURE, "a frame of type " + std::to_string(f.type) + " where a reply belongs");
    } else if (f.id < _first_id_on_fd || f.id >= _next_id) {
        bad = Status(PMIX_ERR_UNPACK_FAILURE, "a reply to call " + std::to_string(f.id) +
                                                  ", never made on this connection");
    } else if (it = _calls.find(f.id); it == _calls.end()) {
        // Its call timed out here already: srun answered late.
        PMIXCPP_LOG_DEBUG("srun agent: a late reply to call %u ignored", f.id);
        return true;
    } else if (!it->second.sent) {
        bad = Status(PMIX_ERR_UNPACK_FAILURE, "a reply to call " + std::to_string(f.id) + " before its request");
    }
    reply r;
    if (bad.ok()) {
        if (Status st = decode_reply(f.payload, &r); !st.ok())
            bad = Status(PMIX_ERR_UNPACK_FAILURE, "a reply to call " + std::to_string(f.id) + " that does not decode: " +
                                                      st.message());
    }
    if (!bad.ok()) {
        PMIXCPP_LOG_ERROR("srun agent: closing the connection: it sent %s", bad.message().c_str());
        broke(Status(PMIX_ERR_UNPACK_FAILURE, "srun agent: malformed reply (" + bad.message() + ")"), finished);
        return false;
    }
    finished->emplace_back(std::move(it->second.done), std::move(r));
    _calls.erase(it);
    std::lock_guard<std::mutex> g(_mutex);
    --_count;
    ++_stats.calls;
    return true;
}

void call_link::run() {
    std::vector<uint8_t> buf(64 * 1024);
    for (;;) {
        finished_list finished;
        {
            std::lock_guard<std::mutex> g(_mutex);
            if (_closed) break;
            while (!_queue.empty()) {
                uint32_t id = _next_id++;
                if (_next_id == 0) _next_id = 1;  // after four billion calls
                _calls.emplace(id, std::move(_queue.front()));
                _queue.pop_front();
            }
        }
        auto now = clock_type::now();
        // Calls past their deadline end here; a reply that comes later is ignored.
        for (auto it = _calls.begin(); it != _calls.end();) {
            if (it->second.deadline > now) {
                ++it;
                continue;
            }
            finished.emplace_back(std::move(it->second.done),
                                  Status(PMIX_ERR_TIMEOUT, "srun agent: no answer within " + seconds_of(it->second.timeout_ms)));
            it = _calls.erase(it);
            std::lock_guard<std::mutex> g(_mutex);
            --_count;
        }
        const bool unsent = std::any_of(_calls.begin(), _calls.end(), [](const auto &c) { return !c.second.sent; });
        if (unsent && _fd < 0) {
            auto latest = now;
            for (auto &[id, p] : _calls) latest = std::max(latest, p.deadline);
            auto fd = _connect(std::min(latest, now + _opts.connect_timeout), &_closing);
            if (_closing.load()) {
                if (fd.ok()) ::close(fd.value());
                for (auto &[d, r] : finished) d(std::move(r));
                break;
            }
            if (!fd.ok()) {
                PMIXCPP_LOG_DEBUG("srun agent: cannot connect: %s", fd.status().message().c_str());
                disconnect(fd.status().code() == PMIX_SUCCESS ? Status(PMIX_ERR_UNREACH, "srun agent: cannot connect")
                                                               : fd.status().with_context("srun agent"),
                           &finished);
            } else {
                _fd = fd.value();
                _connected = true;
                _first_id_on_fd = _calls.empty() ? _next_id : _calls.begin()->first;
                _last_activity = clock_type::now();
                std::lock_guard<std::mutex> g(_mutex);
                ++_stats.connects;
            }
        }
        if (_fd >= 0) {
            for (auto &[id, p] : _calls) {
                if (p.sent) continue;
                auto frame = request_frame(p.what, p.body, id);
                p.sent = true;
                p.body = {};
                if (!frame.ok()) {  // sizes were checked at the call: not expected
                    p.deadline = now;  // ends at the next round
                    continue;
                }
                _out.insert(_out.end(), frame->begin(), frame->end());
                _last_activity = now;
            }
        }
        for (auto &[d, r] : finished) d(std::move(r));
        finished.clear();

        // Wait for the wake-up pipe, the connection, the next deadline or the idle close.
        std::optional<clock_type::time_point> wake;
        for (auto &[id, p] : _calls)
            if (!wake || p.deadline < *wake) wake = p.deadline;
        const bool idle = _fd >= 0 && _calls.empty() && _out_off == _out.size();
        if (idle && (!wake || _last_activity + _opts.idle_close < *wake)) wake = _last_activity + _opts.idle_close;
        pollfd fds[2] = {{_wake[0], POLLIN, 0}, {_fd, static_cast<short>(POLLIN | (_out_off < _out.size() ? POLLOUT : 0)), 0}};
        int timeout = -1;
        now = clock_type::now();
        if (wake)
            timeout = static_cast<int>(std::clamp<long long>(
                std::chrono::duration_cast<std::chrono::milliseconds>(*wake - now).count() + 1, 0, 60000));
        int n = poll(fds, _fd >= 0 ? 2 : 1, timeout);
        if (n < 0 && errno != EINTR) {
            PMIXCPP_LOG_ERROR("srun agent: poll: %m");
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
            continue;
        }
        if (n > 0 && (fds[0].revents & POLLIN)) {
            char drain[64];
            while (read(_wake[0], drain, sizeof(drain)) > 0) {
            }
        }
        if (n > 0 && _fd >= 0 && (fds[1].revents & POLLOUT) && _out_off < _out.size()) {
            ssize_t k = send(_fd, _out.data() + _out_off, _out.size() - _out_off, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (k > 0) {
                _out_off += static_cast<size_t>(k);
                if (_out_off == _out.size()) {
                    _out.clear();
                    _out_off = 0;
                }
            } else if (k < 0 && errno != EAGAIN && errno != EINTR) {
                PMIXCPP_LOG_VERBOSE("srun agent: the connection broke: %m");
                broke(sys_error("srun agent: send", errno, PMIX_ERR_UNREACH), &finished);
            }
        }
        if (n > 0 && _fd >= 0 && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) {
            size_t taken = 0;
            while (_fd >= 0 && taken < kReadPerRound) {
                ssize_t k = read(_fd, buf.data(), buf.size());
                if (k < 0 && (errno == EAGAIN || errno == EINTR)) break;
                if (k <= 0) {
                    const bool quiet = _calls.empty();
                    if (quiet) PMIXCPP_LOG_DEBUG("srun agent: closed the idle connection");
                    else PMIXCPP_LOG_VERBOSE("srun agent: the connection closed with %zu call(s) in flight", _calls.size());
                    broke(Status(PMIX_ERR_UNREACH, "srun agent closed the connection without an answer"), &finished);
                    break;
                }
                taken += static_cast<size_t>(k);
                _last_activity = clock_type::now();
                if (!_reader.feed(buf.data(), static_cast<size_t>(k)).ok()) {
                    PMIXCPP_LOG_ERROR("srun agent: closing the connection: malformed frame: %s",
                                      _reader.error().message().c_str());
                    broke(Status(PMIX_ERR_UNPACK_FAILURE, "srun agent: malformed frame (" + _reader.error().message() + ")"),
                               &finished);
                    break;
                }
                for (;;) {
                    auto f = _reader.next();
                    if (!f.ok()) {
                        PMIXCPP_LOG_ERROR("srun agent: closing the connection: malformed frame: %s",
                                          f.status().message().c_str());
                        broke(Status(PMIX_ERR_UNPACK_FAILURE, "srun agent: malformed frame (" + f.status().message() + ")"),
                                   &finished);
                        break;
                    }
                    if (!f.value()) break;
                    if (!on_frame(*f.value(), &finished)) break;
                }
            }
        }
        now = clock_type::now();
        if (_fd >= 0 && _calls.empty() && _out_off == _out.size() && now >= _last_activity + _opts.idle_close) {
            PMIXCPP_LOG_DEBUG("srun agent: connection idle for %lld ms: closed",
                              static_cast<long long>(_opts.idle_close.count()));
            disconnect(Status::success(), &finished);  // counted there, as an idle close
        }
        for (auto &[d, r] : finished) d(std::move(r));
    }
    // Closed: everything still here ends with the reason.
    finished_list finished;
    std::deque<pending> queued;
    Status why;
    {
        std::lock_guard<std::mutex> g(_mutex);
        queued.swap(_queue);
        why = _why_closed;
        _count = 0;
    }
    if (_fd >= 0) ::close(_fd);
    _fd = -1;
    _connected = false;
    for (auto &[id, p] : _calls) finished.emplace_back(std::move(p.done), why);
    _calls.clear();
    for (auto &p : queued) finished.emplace_back(std::move(p.done), why);
    for (auto &[d, r] : finished) d(std::move(r));
}

}  // namespace pmixcpp::agent
