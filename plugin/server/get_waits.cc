#include "get_waits.h"

#include <algorithm>

namespace pmixcpp::server {

template <typename Pred>
std::vector<get_waiter> get_waits::take_if(Pred pred) {
    std::vector<get_waiter> out;
    for (auto it = _waiters.begin(); it != _waiters.end();) {
        if (pred(*it)) {
            if (auto c = _per_conn.find(it->conn); c != _per_conn.end() && --c->second == 0) _per_conn.erase(c);
            out.push_back(std::move(*it));
            it = _waiters.erase(it);
        } else {
            ++it;
        }
    }
    return out;
}

std::vector<get_waiter> get_waits::take_ready(uint32_t target, const std::function<bool(const get_waiter &)> &ready) {
    return take_if([&](const get_waiter &w) { return w.target == target && ready(w); });
}

std::vector<get_waiter> get_waits::take_target(uint32_t target) {
    return take_if([&](const get_waiter &w) { return w.target == target; });
}

size_t get_waits::drop_connection(uint64_t conn) {
    return take_if([&](const get_waiter &w) { return w.conn == conn; }).size();
}

std::vector<get_waiter> get_waits::take_expired(server_clock::time_point now) {
    return take_if([&](const get_waiter &w) { return w.deadline && *w.deadline <= now; });
}

std::vector<get_waiter> get_waits::take_all() {
    return take_if([](const get_waiter &) { return true; });
}

std::optional<server_clock::time_point> get_waits::next_deadline() const {
    std::optional<server_clock::time_point> best;
    for (const auto &w : _waiters)
        if (w.deadline && (!best || *w.deadline < *best)) best = w.deadline;
    return best;
}

std::vector<uint32_t> get_waits::targets() const {
    std::vector<uint32_t> out;
    for (const auto &w : _waiters) out.push_back(w.target);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

}  // namespace pmixcpp::server
