#include "listener_guard.h"

#include <arpa/inet.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

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

long local_peer_uid(int fd, uint64_t *inode) {
    sockaddr_storage me{}, peer{};
    socklen_t ml = sizeof(me), pl = sizeof(peer);
    if (getsockname(fd, reinterpret_cast<sockaddr *>(&me), &ml) != 0 ||
        getpeername(fd, reinterpret_cast<sockaddr *>(&peer), &pl) != 0 || me.ss_family != peer.ss_family ||
        (me.ss_family != AF_INET && me.ss_family != AF_INET6))
        return -1;
    int nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    if (nl < 0) return -1;
    struct {
        nlmsghdr nh;
        inet_diag_req_v2 req;
    } msg{};
    msg.nh.nlmsg_len = sizeof(msg);
    msg.nh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
    msg.nh.nlmsg_flags = NLM_F_REQUEST;
    msg.req.sdiag_family = static_cast<uint8_t>(me.ss_family);
    msg.req.sdiag_protocol = IPPROTO_TCP;
    msg.req.idiag_states = ~0u;
    msg.req.id.idiag_cookie[0] = msg.req.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
    if (me.ss_family == AF_INET) {
        const auto &m = reinterpret_cast<const sockaddr_in &>(me);
        const auto &p = reinterpret_cast<const sockaddr_in &>(peer);
        msg.req.id.idiag_sport = p.sin_port;  // the peer's socket: source = the peer
        msg.req.id.idiag_dport = m.sin_port;
        std::memcpy(msg.req.id.idiag_src, &p.sin_addr, 4);
        std::memcpy(msg.req.id.idiag_dst, &m.sin_addr, 4);
    } else {
        const auto &m = reinterpret_cast<const sockaddr_in6 &>(me);
        const auto &p = reinterpret_cast<const sockaddr_in6 &>(peer);
        msg.req.id.idiag_sport = p.sin6_port;
        msg.req.id.idiag_dport = m.sin6_port;
        std::memcpy(msg.req.id.idiag_src, &p.sin6_addr, 16);
        std::memcpy(msg.req.id.idiag_dst, &m.sin6_addr, 16);
    }
    sockaddr_nl kernel{};
    kernel.nl_family = AF_NETLINK;
    long uid = -1;
    timeval tv{0, 200 * 1000};  // the kernel answers at once; never hang a listener on it
    setsockopt(nl, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    if (sendto(nl, &msg, sizeof(msg), 0, reinterpret_cast<sockaddr *>(&kernel), sizeof(kernel)) ==
        static_cast<ssize_t>(sizeof(msg))) {
        alignas(nlmsghdr) char buf[1024];
        ssize_t n = recv(nl, buf, sizeof(buf), 0);
        auto *h = reinterpret_cast<nlmsghdr *>(buf);
        if (n > 0 && NLMSG_OK(h, static_cast<unsigned>(n)) && h->nlmsg_type == SOCK_DIAG_BY_FAMILY &&
            h->nlmsg_len >= NLMSG_LENGTH(sizeof(inet_diag_msg))) {
            auto *d = static_cast<inet_diag_msg *>(NLMSG_DATA(h));
            uid = d->idiag_uid;
            if (inode) *inode = d->idiag_inode;
        }
    }
    close(nl);
    return uid;
}

std::string peer_label(int fd, const sockaddr_storage &peer) {
    long uid = local_peer_uid(fd);
    if (uid < 0) return peer_address(peer);
    return "local uid " + std::to_string(uid) + " (" + peer_address(peer) + ")";
}

std::string peer_key(const std::string &label) {
    if (label.rfind("local uid ", 0) != 0) return label;
    size_t end = label.find(' ', 10);
    return label.substr(0, end);
}

listener_guard::listener_guard(std::string name, listener_limits limits)
    : _name(std::move(name)), _limits(limits) {}

void listener_guard::forget(std::map<uint64_t, pending_conn>::iterator it) {
    auto p = _per_peer.find(it->second.key);
    if (p != _per_peer.end() && --p->second == 0) _per_peer.erase(p);
    _pending.erase(it);
}

std::vector<uint64_t> listener_guard::admit(uint64_t id, const std::string &peer, clock::time_point now) {
    std::vector<uint64_t> evict;
    auto drop = [&](std::map<uint64_t, pending_conn>::iterator it, const char *why) {
        refused(it->second.peer, why, now);
        ++_stats.evicted;
        evict.push_back(it->first);
        forget(it);
    };
    // The oldest pending connection of `key` (ids grow: the first found).
    auto oldest_of = [&](const std::string &key) {
        for (auto it = _pending.begin(); it != _pending.end(); ++it)
            if (it->second.key == key) return it;
        return _pending.end();
    };
    const std::string key = peer_key(peer);
    if (_limits.max_pending_per_peer > 0 && _per_peer[key] >= _limits.max_pending_per_peer) {
        if (auto it = oldest_of(key); it != _pending.end())
            drop(it, "too many unauthenticated connections from this peer (its oldest dropped)");
    }
    if (_limits.max_pending > 0 && _pending.size() >= _limits.max_pending) {
        // The peer holding the most pays, the newcomer counted as holding one more: a flood never
        // evicts another peer's handshake while it holds as many itself.
        (void)_per_peer[key];  // counted below even with none pending
        std::string heaviest;
        size_t most = 0;
        for (const auto &[k, n] : _per_peer) {
            const size_t count = n + (k == key ? 1 : 0);
            if (count > most || (count == most && k == key)) {  // a tie: the newcomer's peer pays
                most = count;
                heaviest = k;
            }
        }
        auto it = oldest_of(heaviest);
        if (it == _pending.end()) it = _pending.begin();  // the newcomer's peer had none pending
        drop(it, "too many unauthenticated connections (the oldest of the peer holding the most dropped)");
    }
    _pending.emplace(id, pending_conn{peer, key, now});
    ++_per_peer[key];
    return evict;
}

void listener_guard::authenticated(uint64_t id) { closed(id); }

void listener_guard::closed(uint64_t id) {
    auto it = _pending.find(id);
    if (it == _pending.end()) return;
    forget(it);
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
        auto next = std::next(it);
        forget(it);
        it = next;
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
