// slurmstepd's one connection to srun's agent, carrying every call at once (agent_proto.h: the
// frame id numbers the call, a reply carries its request's id, replies come in any order).
//
//  - Opened on first need (the `connect` function: connect and authenticate, agent_io.h), on the
//    link's one I/O thread, which also sends the requests, reads the replies and runs each
//    call's `done`; no thread per call. Closed after `idle_close` without a call in flight, so
//    that srun holds no connection for a node that has nothing to ask; the next call opens a
//    new one. (A node whose cross-step inbox waits, a long poll, always has a call in flight:
//    that connection stays open for the step, by design, ../README.md "The inbox and the idle
//    close".)
//  - Everything srun sends is untrusted input to root: a frame is at most kMaxPayload; a frame
//    that is not a reply, a reply for a call never made on this connection or one that does not
//    decode closes the connection with a log line saying why. A connection that closes or
//    breaks fails its calls in flight with PMIX_ERR_UNREACH; a reply that comes after its call
//    timed out is ignored.
//  - Each call has its own deadline (PMIX_ERR_TIMEOUT); at most max_in_flight calls at once
//    (one more: PMIX_ERR_OUT_OF_RESOURCE at once).
//  - close(): every call in flight or queued ends with the given status, new calls are refused
//    (PMIX_ERR_NOT_AVAILABLE), the thread is joined.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
#include <vector>

#include "../proto/agent_io.h"
#include "../proto/agent_proto.h"
#include "status.h"
#include "wire/frame.h"

namespace pmixcpp::agent {

class call_link {
public:
    using clock_type = agent_io::clock_type;
    // Connect and authenticate before `deadline` (or when `cancel` is set): the descriptor.
    using connect_fn = std::function<Result<int>(clock_type::time_point deadline, const std::atomic<bool> *cancel)>;
    using done_fn = std::function<void(Result<reply>)>;
    struct options {
        std::chrono::milliseconds idle_close{30000};
        std::chrono::milliseconds connect_timeout{60000};  // at most; a call's own deadline may be sooner
        size_t max_in_flight = kMaxCallsPerConnection;
    };
    struct counters {
        uint64_t connects = 0;      // connections opened
        uint64_t idle_closes = 0;   // closed for want of calls
        uint64_t broken = 0;        // closed by the peer, an error or a malformed frame
        uint64_t calls = 0;         // calls answered by srun
    };

    explicit call_link(connect_fn connect, options opts);
    explicit call_link(connect_fn connect) : call_link(std::move(connect), options{}) {}
    ~call_link();  // close(PMIX_ERR_JOB_CANCELED)
    call_link(const call_link &) = delete;
    call_link &operator=(const call_link &) = delete;

    // Queue one call; `done` runs once, on the link's thread (or at once, on the caller's, when
    // refused). Never blocks.
    void call(service_id s, std::vector<uint8_t> body, int timeout_ms, done_fn done);
    // End every call with `why`, refuse new ones, close the connection, join the thread
    // (idempotent; within about 100 ms even while connecting). Not from a `done`.
    void close(Status why);

    bool connected() const { return _connected.load(); }
    counters stats() const;

private:
    struct pending {
        service_id what = 0;
        std::vector<uint8_t> body;  // until sent
        bool sent = false;
        clock_type::time_point deadline;
        int timeout_ms = 0;
        done_fn done;
    };
    void run();
    // The connection is gone: its calls end with `why`, the descriptor is closed.
    void disconnect(const Status &why, std::vector<std::pair<done_fn, Result<reply>>> *finished);
    // The same for a connection that broke (counted in stats().broken).
    void broke(const Status &why, std::vector<std::pair<done_fn, Result<reply>>> *finished);
    // One whole frame read: false if it broke the connection's rules (already closed then).
    bool on_frame(const wire::Frame &f, std::vector<std::pair<done_fn, Result<reply>>> *finished);

    connect_fn _connect;
    options _opts;
    std::atomic<bool> _closing{false};
    std::atomic<bool> _connected{false};
    Status _why_closed;

    mutable std::mutex _mutex;  // _queue, _closed, _thread start, _stats
    std::deque<pending> _queue;  // submitted, not yet taken by the thread
    bool _closed = false;
    size_t _count = 0;  // calls queued or in flight
    counters _stats;
    std::thread _thread;
    int _wake[2] = {-1, -1};

    // The I/O thread's own.
    int _fd = -1;
    uint32_t _next_id = 1;
    uint32_t _first_id_on_fd = 0;  // replies on this connection name ids in [first, _next_id)
    std::map<uint32_t, pending> _calls;  // taken from the queue: unsent (frame not empty) or sent
    std::vector<uint8_t> _out;
    size_t _out_off = 0;
    wire::FrameReader _reader{kMaxPayload};
    clock_type::time_point _last_activity{};
};

}  // namespace pmixcpp::agent
