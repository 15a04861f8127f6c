// Threads started per request, bounded: in slurmstepd (calls to srun's agent that block) and in
// srun (the agent's services: session store, spawn, fabric, cross-step). At most `limit` run at once, a request beyond that is refused at once (the caller answers it with
// PMIX_ERR_OUT_OF_RESOURCE) instead of starting another thread. Finished threads are joined at
// the next start; the rest when the owner closes the pool (after cancelling their calls).
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <thread>

#include "status.h"

namespace pmixcpp {

// Threads of one service of srun's agent at once (the node side's lanes have as many).
inline constexpr size_t kServiceThreads = 256;

class bounded_workers {
public:
    explicit bounded_workers(size_t limit) : _limit(limit) {}
    ~bounded_workers() { close(); }
    bounded_workers(const bounded_workers &) = delete;
    bounded_workers &operator=(const bounded_workers &) = delete;

    // Run fn on a thread of its own. PMIX_ERR_OUT_OF_RESOURCE (fn not run) when `limit` threads
    // still run or no thread can be started, PMIX_ERR_NOT_AVAILABLE once closed. `what` names the
    // work in the error.
    Status start(std::function<void()> fn, const char *what);
    // Threads still running (after joining the finished ones).
    size_t running();
    size_t limit() const { return _limit; }
    // Refuse new work and join every thread (the owner cancels their calls first).
    void close();

private:
    void reap();  // under _mutex

    struct worker {
        std::thread thread;
        std::shared_ptr<std::atomic<bool>> done;
    };
    const size_t _limit;
    std::mutex _mutex;
    std::list<worker> _workers;
    bool _closed = false;
};

}  // namespace pmixcpp
