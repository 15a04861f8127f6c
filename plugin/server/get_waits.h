// Gets that wait for data a local rank has not committed yet. No I/O: the server adds waiters
// and takes them back out when the rank commits, leaves, or the deadline passes.
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "fence_tracker.h"  // server_clock

namespace pmixcpp::server {

struct get_waiter {
    uint64_t conn = 0;
    uint32_t request_id = 0;
    uint32_t requester = 0;  // rank asking
    uint32_t target = 0;     // rank whose data is wanted
    std::string key;
    std::optional<server_clock::time_point> deadline;
};

class get_waits {
public:
    void add(get_waiter w) {
        ++_per_conn[w.conn];
        _waiters.push_back(std::move(w));
    }
    // Waiters a connection has (the server caps them per client: kMaxWaitingGets).
    size_t count_of(uint64_t conn) const {
        auto it = _per_conn.find(conn);
        return it == _per_conn.end() ? 0 : it->second;
    }

    // Waiters on `target` for which ready(waiter) is true (called after `target` committed).
    std::vector<get_waiter> take_ready(uint32_t target, const std::function<bool(const get_waiter &)> &ready);
    // Every waiter on `target` (it finalized or died).
    std::vector<get_waiter> take_target(uint32_t target);
    // Forget the waiters of a closed connection (nobody to answer).
    size_t drop_connection(uint64_t conn);
    std::vector<get_waiter> take_expired(server_clock::time_point now);
    std::vector<get_waiter> take_all();
    std::optional<server_clock::time_point> next_deadline() const;
    size_t size() const { return _waiters.size(); }
    // The distinct ranks waited on, in order.
    std::vector<uint32_t> targets() const;

private:
    template <typename Pred>
    std::vector<get_waiter> take_if(Pred pred);

    std::list<get_waiter> _waiters;
    std::map<uint64_t, size_t> _per_conn;
};

}  // namespace pmixcpp::server
