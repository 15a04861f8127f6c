#include "listener_guard.h"

#include <arpa/inet.h>

#include <cerrno>
#include <cstring>

#include "log.h"

namespace pmixcpp::net {

std::string peer_address(const sockaddr_storage &peer) {
    char ip[INET6_ADDRSTRLEN] = "?";
    if (peer.ss_family == AF_INET)
        inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in *>(&peer)->sin_addr, ip, sizeof(ip));
    else if (peer.ss_family == AF_INET6)
        inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6 *>(&peer)->sin6_addr, ip, sizeof(ip));
    return ip;
}

listener_guard::listener_guard(std::string name, listener_limits limits)
    : _name(std::move(name)), _limits(limits) {}

std::vector<uint64_t> listener_guard::admit(uint64_t id, const std::string &peer, clock::time_point now) {
    std::vector<uint64_t> evict;
    auto drop = [&](std::map<uint64_t, pending_conn>::iterator it, const char *why) {
        refused(it->second.peer, why, now);
        ++_stats.evicted;
        evict.push_back(it->first);
        if (--_per_peer[it->second.peer] == 0) _per_peer.erase(it->second.peer);
        _pending.erase(it);
    };
    if (_limits.max_pending_per_peer > 0 && _per_peer[peer] >= _limits.max_pending_per_peer) {
        for (auto it = _pending.begin(); it != _pending.end(); ++it)
            if (it->second.peer == peer) {
                drop(it, "too many unauthenticated connections from this address (oldest dropped)");
                break;
            }
    }
    if (_limits.max_pending > 0 && _pending.size() >= _limits.max_pending)
        drop(_pending.begin(), "too many unauthenticated connections (oldest dropped)");
    _pending.emplace(id, pending_conn{peer, now});
    ++_per_peer[peer];
    return evict;
}

void listener_guard::authenticated(uint64_t id) { closed(id); }

void listener_guard::closed(uint64_t id) {
    auto it = _pending.find(id);
    if (it == _pending.end()) return;
    auto p = _per_peer.find(it->second.peer);
    if (p != _per_peer.end() && --p->second == 0) _per_peer.erase(p);
    _pending.erase(it);
}

std::vector<uint64_t> listener_guard::expired(clock::time_point now) {
    std::vector<uint64_t> out;
    for (auto it = _pending.begin(); it != _pending.end();) {
        if (now - it->second.since < _limits.auth_timeout) {
            ++it;
            continue;
        }
        refused(it->second.peer, "no authentication within " + std::to_string(_limits.auth_timeout.count()) + " ms",
                now);
        ++_stats.timed_out;
        out.push_back(it->first);
        auto p = _per_peer.find(it->second.peer);
        if (p != _per_peer.end() && --p->second == 0) _per_peer.erase(p);
        it = _pending.erase(it);
    }
    flush_suppressed(now);
    return out;
}

std::optional<listener_guard::clock::time_point> listener_guard::next_deadline() const {
    std::optional<clock::time_point> best;
    for (auto &[id, p] : _pending)
        if (!best || p.since + _limits.auth_timeout < *best) best = p.since + _limits.auth_timeout;
    return best;
}

void listener_guard::flush_suppressed(clock::time_point now) {
    if (now - _window_start < _limits.log_window) return;
    if (_window_suppressed > 0)
        PMIXCPP_LOG_ERROR("%s: %llu more connection(s) refused in the last %lld s (not logged one by one)",
                          _name.c_str(), static_cast<unsigned long long>(_window_suppressed),
                          static_cast<long long>(
                              std::chrono::duration_cast<std::chrono::seconds>(now - _window_start).count()));
    _window_start = now;
    _window_logged = 0;
    _window_suppressed = 0;
}

void listener_guard::refused(const std::string &peer, const std::string &why, clock::time_point now) {
    ++_stats.refused;
    flush_suppressed(now);
    if (_window_logged < _limits.log_burst) {
        ++_window_logged;
        ++_stats.logged;
        PMIXCPP_LOG_ERROR("%s: refused a connection from %s: %s", _name.c_str(), peer.c_str(), why.c_str());
        return;
    }
    ++_window_suppressed;
    ++_stats.suppressed;
}

bool listener_guard::abandoned(const std::string &peer, int err, clock::time_point now) {
    if (err != 0 && err != ECONNRESET) {
        refused(peer, std::string("before authenticating: ") + strerror(err), now);
        return false;
    }
    ++_stats.abandoned;
    PMIXCPP_LOG_DEBUG("%s: %s closed its connection before authenticating%s", _name.c_str(), peer.c_str(),
                      err ? " (reset)" : "");
    return true;
}

bool listener_guard::accept_failed(int err, clock::time_point now) {
    if (err != EMFILE && err != ENFILE && err != ENOBUFS && err != ENOMEM) return false;
    ++_stats.accept_pauses;
    refused("?", std::string("accept: ") + strerror(err) + "; not accepting for " +
                     std::to_string(_limits.accept_pause.count()) + " ms",
            now);
    return true;
}

}  // namespace pmixcpp::net
