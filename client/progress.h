// The client's progress thread: one poll() loop over an eventfd (wake-ups and posted work), the
// server socket and a timer list. Every callback into the application runs on this thread.
//
// Threading: post(), send() and add_timer()/cancel_timer() may be called from any thread; the
// handlers given to attach() and the posted tasks run on the progress thread only.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "status.h"
#include "wire/frame.h"

namespace pmixcpp::client {

class ProgressLoop {
public:
    using Task = std::function<void()>;
    using FrameHandler = std::function<void(wire::Frame &&)>;
    using CloseHandler = std::function<void(const Status &why)>;
    using Clock = std::chrono::steady_clock;

    ProgressLoop() = default;
    ~ProgressLoop();
    ProgressLoop(const ProgressLoop &) = delete;
    ProgressLoop &operator=(const ProgressLoop &) = delete;

    // Create the eventfd and start the thread.
    Status start();
    // Stop the thread and wait for it (must not be called from the thread). Pending tasks are
    // dropped; the socket (if any) is closed.
    void stop();
    bool running() const { return _running.load(std::memory_order_acquire); }
    bool on_thread() const { return std::this_thread::get_id() == _thread_id.load(); }

    // Hand a connected (blocking or not) stream socket to the loop; it takes ownership. Frames
    // read from it go to on_frame; on EOF, error or a malformed frame on_close runs once and the
    // socket is closed. Call before any send().
    void attach(int fd, FrameHandler on_frame, CloseHandler on_close);
    // Queue bytes for the socket; false if there is no (more) connection.
    bool send(std::vector<uint8_t> bytes);
    // On the progress thread: write out everything queued, blocking up to `timeout`.
    void flush_blocking(std::chrono::milliseconds timeout);
    bool connected() const { return _connected.load(std::memory_order_acquire); }

    // Run `task` on the progress thread (queued behind earlier tasks).
    void post(Task task);

    // Run `task` on the progress thread after `delay`; returns an id for cancel_timer (never 0).
    uint64_t add_timer(Clock::duration delay, Task task);
    void cancel_timer(uint64_t id);

private:
    void run();
    void wake();
    void handle_readable();
    // Write queued frames without blocking; true if everything went out. Caller holds _lock.
    bool try_write_locked();
    void handle_writable();
    void close_socket(const Status &why);
    int next_poll_timeout_ms();
    void run_due_timers();

    std::thread _thread;
    std::atomic<std::thread::id> _thread_id{};
    std::atomic<bool> _running{false};
    std::atomic<bool> _stop{false};
    int _event_fd = -1;

    std::mutex _lock;  // guards _tasks, _out, _timers, _fd for senders
    std::deque<Task> _tasks;
    std::deque<std::vector<uint8_t>> _out;
    size_t _out_offset = 0;  // bytes of _out.front() already written
    std::multimap<Clock::time_point, uint64_t> _timer_order;
    std::map<uint64_t, std::pair<Clock::time_point, Task>> _timers;
    uint64_t _next_timer = 1;

    int _fd = -1;
    std::atomic<bool> _connected{false};
    FrameHandler _on_frame;
    CloseHandler _on_close;
    wire::FrameReader _reader;
};

}  // namespace pmixcpp::client
