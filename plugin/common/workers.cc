#include "workers.h"

#include <string>
#include <system_error>

namespace pmixcpp {

void bounded_workers::reap() {
    for (auto it = _workers.begin(); it != _workers.end();) {
        if (it->done->load()) {
            if (it->thread.joinable()) it->thread.join();
            it = _workers.erase(it);
        } else {
            ++it;
        }
    }
}

Status bounded_workers::start(std::function<void()> fn, const char *what) {
    std::lock_guard<std::mutex> g(_mutex);
    if (_closed) return Status(PMIX_ERR_NOT_AVAILABLE, std::string(what) + ": the step ends");
    reap();
    if (_workers.size() >= _limit)
        return Status(PMIX_ERR_OUT_OF_RESOURCE, std::string("too many ") + what + " in flight on this node (" +
                                                    std::to_string(_limit) + ")");
    auto done = std::make_shared<std::atomic<bool>>(false);
    try {
        std::thread t([fn = std::move(fn), done] {
            fn();
            done->store(true);
        });
        _workers.push_back(worker{std::move(t), done});
    } catch (const std::system_error &e) {
        return Status(PMIX_ERR_OUT_OF_RESOURCE, std::string("cannot start a thread for ") + what + ": " + e.what());
    }
    return Status::success();
}

size_t bounded_workers::running() {
    std::lock_guard<std::mutex> g(_mutex);
    reap();
    return _workers.size();
}

void bounded_workers::close() {
    std::list<worker> workers;
    {
        std::lock_guard<std::mutex> g(_mutex);
        _closed = true;
        workers.swap(_workers);
    }
    for (auto &w : workers)
        if (w.thread.joinable()) w.thread.join();
}

}  // namespace pmixcpp
