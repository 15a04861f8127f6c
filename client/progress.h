// The client's progress thread: one poll() loop over an eventfd (wake-ups and posted work), the
// server socket and a timer list. Every callback into the application runs on this thread.
//
// Threading: post(), send() and add_timer()/cancel_timer() may be called from any thread; the
// handlers given to attach() and the posted tasks run on the progress thread only.
//
// Direct waits: an application thread blocked in a call (PMIx_Fence, PMIx_Get) may read the socket
// itself instead of sleeping until the progress thread has read the reply and woken it: a reply
// then costs one thread wake-up instead of two. Only one thread at a time (claim_socket); while
// an application thread owns the socket the progress thread does not read it (it still writes).
// The owner keeps the socket for kReclaimDelay after its wait ends (a loop of fences pays no
// hand-over), then the progress thread takes it back by itself; hand_back_socket() gives it back at
// once (an asynchronous request whose reply the progress thread must see).
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

    // Create the eventfd and start the thread. The thread is started when first needed: by
    // post() and add_timer() themselves, by send() for what it could not write, by the client
    // before a request whose reply the thread must read. Until then a socket may be attached,
    // written to (send() writes from the caller's thread) and read by direct waits, so PMIx_Init
    // and a program of blocking calls start no thread.
    Status start();
    void ensure_started();  // start() unless running; a failure is logged
    // Stop the thread and wait for it (must not be called from the thread). Pending tasks are
    // dropped; the socket (if any) is closed. The loop does not start again.
    void stop();
    // stop(), after writing `last` behind everything queued (blocking up to `timeout`): the
    // closing message of a connection whose answer nobody waits for.
    void finish(std::vector<uint8_t> last, std::chrono::milliseconds timeout);
    bool running() const { return _running.load(std::memory_order_acquire); }
    bool on_thread() const { return std::this_thread::get_id() == _thread_id.load(); }

    // Hand a connected (blocking or not) stream socket to the loop; it takes ownership. Frames
    // read from it go to on_frame; on EOF, error or a malformed frame on_close runs once and the
    // socket is closed. Call before any send().
    void attach(int fd, FrameHandler on_frame, CloseHandler on_close);
    // Queue bytes for the socket; false if there is no (more) connection. Written from the
    // caller's thread when nothing is queued ahead; what the socket cannot take at once is left
    // to the progress thread (started for it).
    bool send(std::vector<uint8_t> bytes);
    // On the progress thread: write out everything queued, blocking up to `timeout`.
    void flush_blocking(std::chrono::milliseconds timeout);
    bool connected() const { return _connected.load(std::memory_order_acquire); }

    // Run `task` on the progress thread (queued behind earlier tasks).
    void post(Task task);

    // Run `task` on the progress thread after `delay`; returns an id for cancel_timer (never 0).
    uint64_t add_timer(Clock::duration delay, Task task);
    void cancel_timer(uint64_t id);

    // Direct waits (see above). claim_socket: false on the progress thread, when another thread
    // waits directly, or without a connection (then wait as before).
    bool claim_socket();
    // The claiming thread: wait until done() holds. Frames read meanwhile go to on_frame on this
    // thread; a closed or broken connection is handed to the progress thread (which closes it and
    // fails the pending requests), and the wait goes on for done(). Whoever makes done() true on
    // another thread calls wake_direct() afterwards.
    void wait_direct(const std::function<bool()> &done, const FrameHandler &on_frame);
    // The claiming thread, after its wait: keep the socket a while (hand_back false) or give it back.
    void release_socket(bool hand_back);
    // Any thread: the progress thread reads the socket again (now, or when the direct wait ends).
    void hand_back_socket();
    void wake_direct();
    static constexpr auto kReclaimDelay = std::chrono::milliseconds(20);

private:
    void run();
    void join_thread();  // stop the thread only; the loop does not start again
    void wake();
    void handle_readable();
    // Under _read_lock: read what the socket has and cut it into frames. Not ok when the
    // connection is closed or the stream is malformed (the frames read before still count).
    Status read_frames_locked(int fd, std::vector<wire::Frame> *frames);
    void close_fd_locked();  // _lock held: close _fd, or only shut it down while a direct wait polls it
    // Write queued frames without blocking; true if everything went out. Caller holds _lock.
    bool try_write_locked();
    void handle_writable();
    void close_socket(const Status &why);
    int next_poll_timeout_ms();
    void run_due_timers();

    std::mutex _start_lock;  // start() and join_thread()
    bool _finished = false;  // under _start_lock
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

    std::mutex _read_lock;  // guards _reader and reading from _fd (taken before _lock)
    wire::FrameReader _reader;
    // Descriptors received (under _read_lock) and not yet given to their frames.
    static constexpr int kMaxDescriptorsPerRead = 8;
    std::deque<wire::FrameDescriptor> _descriptors;
    // One was lost (the pairing of descriptors with frames cannot be trusted): none is given.
    bool _descriptors_lost = false;

    // Direct waits; written under _lock (and _read_lock when an application thread takes over).
    std::atomic<bool> _app_owns{false};  // an application thread reads the socket, not this loop
    bool _direct_active = false;         // ... and is waiting right now
    bool _hand_back_asked = false;       // give the socket back when that wait ends
    bool _loop_polls_socket = false;     // the loop's current poll() watches the socket for input
    Clock::time_point _released_at{};
    int _waiter_fd = -1;                 // eventfd the direct waiter polls besides the socket
    int _deferred_close = -1;            // socket closed while a direct wait polled it
};

}  // namespace pmixcpp::client
