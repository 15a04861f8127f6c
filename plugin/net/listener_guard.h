// What a listener grants a peer that has not authenticated yet (handshake.h), shared by the node
// transport's listener (tcp_transport.cc) and srun's agent (srun_agent.cc). No I/O: the listener
// asks admit() for every accepted connection, reports authenticated()/closed(), sweeps expired()
// connections, and logs refusals through refused().
//
//   - at most max_pending unauthenticated connections in all, max_pending_per_peer from one peer
//     (peer_label: a local process counts by its uid, whatever address it uses; a remote one by
//     its address): a new one beyond the peer's cap evicts that peer's own oldest pending
//     connection, one beyond the total cap the oldest of the peer that holds the most. A flood
//     costs the flooder its own connections only; another peer's pending handshake is never
//     evicted while the flooder holds at least as many;
//   - a pending connection older than auth_timeout is dropped;
//   - every refusal is one line, at most log_burst error lines per log_window; past that they are
//     counted and one summary line per window says how many were suppressed;
//   - accept() failing with EMFILE/ENFILE/ENOBUFS/ENOMEM: stop accepting for accept_pause (the
//     listener takes its fd out of the loop), rather than spin on a listen queue it cannot drain.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace pmixcpp::net {

struct listener_limits {
    // A pending connection costs a descriptor and about 1 KiB (the handshake's fixed buffer and
    // state): 256 of them, 256 KiB. Per address, room for a burst of real clients (a node's
    // concurrent allocation calls; on a test cluster every node of a step shares 127.0.0.1).
    size_t max_pending = 256;
    size_t max_pending_per_peer = 64;
    std::chrono::milliseconds auth_timeout{3000};
    size_t log_burst = 5;
    std::chrono::milliseconds log_window{10000};
    std::chrono::milliseconds accept_pause{250};
};

// "1.2.3.4" / "::1" (no port).
std::string peer_address(const sockaddr_storage &peer);

// The uid owning the local socket at the other end of TCP connection `fd`, if there is one on
// this host: a sock_diag query for the exact connection seen from the peer's side (its source is
// our destination). -1 if the peer is remote or the kernel does not say.
// `inode` (if not null): the inode of the peer's socket (to find the process holding it).
long local_peer_uid(int fd, uint64_t *inode = nullptr);

// Who is at the other end of accepted TCP connection `fd` from `peer`, the unit of the per-peer
// cap: "local uid U (1.2.3.4)" when the peer's socket is on this host (the kernel's socket table,
// sock_diag, names its owner), else the address. A local user cannot pass for several peers by
// binding other loopback addresses, nor hide among the step's own slurmstepds (root).
std::string peer_label(int fd, const sockaddr_storage &peer);

// The per-peer cap's key of a label: "local uid U" for a local peer, the address otherwise.
std::string peer_key(const std::string &label);

class listener_guard {
public:
    using clock = std::chrono::steady_clock;
    explicit listener_guard(std::string name, listener_limits limits = {});

    // A new connection `id` from `peer`. Returns the ids of pending connections the caller must
    // now close (evicted to make room; they were already logged).
    std::vector<uint64_t> admit(uint64_t id, const std::string &peer, clock::time_point now = clock::now());
    // `id` finished its handshake: it no longer counts as pending.
    void authenticated(uint64_t id);
    // `id` is gone (either kind).
    void closed(uint64_t id);
    // Pending connections past their deadline (the caller closes them; already logged).
    std::vector<uint64_t> expired(clock::time_point now = clock::now());
    // The earliest deadline of a pending connection, if any.
    std::optional<clock::time_point> next_deadline() const;
    size_t pending() const { return _pending.size(); }

    // One refusal: logs "<name>: refused a connection from <peer>: <why>" within the rate limit.
    void refused(const std::string &peer, const std::string &why, clock::time_point now = clock::now());
    // Read before authentication ended (`err`: 0 for EOF, else errno): the peer closed or reset a
    // connection it opened, as a peer whose step ends does in the middle of its handshake. Nothing
    // was refused; counted, and logged only for debugging. Returns true if that is what happened
    // (any other error is a refusal, logged as such).
    bool abandoned(const std::string &peer, int err, clock::time_point now = clock::now());
    // accept() failed with `err`: true if the listener should pause (resource exhaustion).
    bool accept_failed(int err, clock::time_point now = clock::now());

    struct counters {
        uint64_t refused = 0, logged = 0, suppressed = 0, evicted = 0, timed_out = 0, accept_pauses = 0,
                 abandoned = 0;
    };
    const counters &stats() const { return _stats; }
    const listener_limits &limits() const { return _limits; }

private:
    struct pending_conn {
        std::string peer;  // the label, for the log
        std::string key;   // peer_key(peer)
        clock::time_point since;
    };
    void forget(std::map<uint64_t, pending_conn>::iterator it);
    void flush_suppressed(clock::time_point now);

    std::string _name;
    listener_limits _limits;
    std::map<uint64_t, pending_conn> _pending;  // id -> peer (ids grow: oldest first)
    std::map<std::string, size_t> _per_peer;  // by peer_key
    clock::time_point _window_start{};
    size_t _window_logged = 0;
    uint64_t _window_suppressed = 0;
    counters _stats;
};

}  // namespace pmixcpp::net
