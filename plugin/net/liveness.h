// The liveness of a transport's peers: one policy for every node transport (transport.h,
// "Lost peers"). No I/O: a transport reports what its links tell it (a peer reached or heard
// from, a goodbye, a connection that could not be made, an established one that broke) and the
// engine decides what that means for the peer (alive, left, lost) and what follows: a loss
// reported once (`lost`), a peer that refused us after a loss handed to the server
// (`unreachable`), links closed (`close`), the nearest live neighbours watched (`greet`).
//
//   alive --goodbye--------------------------------------> left
//   alive --could not connect, never talked to it--------> left (+ unreachable once a loss was seen)
//   alive --could not connect after talking / link broke-> lost
//   (after a link between us was closed idle: the grace below first, `unlinked_grace`)
//   alive --link broke, goodbye may still come (grace)---> left while waiting; its goodbye: left,
//                                                          none within the grace: lost
//   any   --forget (the server decided)------------------> lost
//
// A transport whose links deliver a goodbye before their close (TCP: one stream) has no grace;
// one whose goodbye may be read after the error its peer's closing caused (UCX: other lanes)
// waits `bye_grace` for it. A transport that closes idle links for a cap on their number
// (tcp_transport) may have had no link to a peer when it left, so the goodbye went nowhere or
// comes on another link, later than the error: after such a close (`unlinked`), a failing link
// to that peer waits `unlinked_grace` for the goodbye too. A transport whose link to a peer
// also watches the peer's link to us (TCP: an accepted connection is read to its end) greets
// only its successor in the ring at the start; otherwise both neighbours.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <vector>

namespace pmixcpp::net {

enum class peer_state : uint8_t { alive, left, lost };
const char *to_string(peer_state s);

struct liveness_options {
    const char *kind = "node";  // "tcp" / "ucx", for log lines
    uint32_t self = 0;
    std::vector<std::string> node_names;  // size = number of nodes
    bool watch_neighbours = true;
    bool two_way_links = false;                   // see above
    std::chrono::milliseconds bye_grace{0};       // see above
    std::chrono::milliseconds unlinked_grace{0};  // see above
};

struct liveness_ops {
    std::function<void(uint32_t node)> close;  // drop every link to `node` (nothing more goes there)
    std::function<void(uint32_t node)> greet;   // say hello to `node` (opens a link to it)
    std::function<bool(uint32_t node)> linked;  // whether a link to `node` of ours is open
    std::function<void(uint32_t node, const std::string &why)> lost;
    std::function<void(uint32_t node, const std::string &why)> unreachable;
    // `node` is no longer alive here for a reason other than a loss (its goodbye, gone before we
    // talked, a broken link waiting for its goodbye): once per node at most. May be empty.
    std::function<void(uint32_t node)> left;
};

class peer_liveness {
public:
    using clock = std::chrono::steady_clock;

    peer_liveness(liveness_options opts, liveness_ops ops);

    // Facts.
    void start();                   // the address table is known: greet the neighbours
    void reached(uint32_t node);    // something we sent arrived / our link is authenticated
    void heard(uint32_t node);      // it sent us something / its link to us is authenticated
    void link_message(uint32_t node, std::span<const uint8_t> body);  // a `link` body (hello, bye)
    void unlinked(uint32_t node);   // a link between us was closed idle (for a cap): see above
    void connect_failed(uint32_t node, const std::string &why, clock::time_point now);  // could not reach it
    void broken(uint32_t node, const std::string &why, clock::time_point now);  // a link to it broke
    void forget(uint32_t node);     // the server took it for lost
    void never_reached(uint32_t node, const std::string &why);  // its address never came: lost
    void tick(clock::time_point now);  // the grace of broken links

    // Views.
    peer_state state(uint32_t node) const { return node < _state.size() ? _state[node] : peer_state::lost; }
    bool alive(uint32_t node) const { return state(node) == peer_state::alive; }
    bool said_goodbye(uint32_t node) const { return node < _bye.size() && _bye[node]; }
    bool talked(uint32_t node) const { return node < _reached.size() && (_reached[node] || _heard[node]); }
    bool was_unlinked(uint32_t node) const { return node < _unlinked.size() && _unlinked[node]; }
    bool has_heard(uint32_t node) const { return node < _heard.size() && _heard[node]; }
    bool waiting_for_goodbyes() const { return !_suspects.empty(); }
    // Whether our link to `node` watches it: it is our nearest live successor in the ring (or,
    // without two-way links, predecessor). Such a link is never closed for being idle.
    bool watched(uint32_t node) const;
    std::optional<clock::time_point> next_deadline() const;

private:
    bool valid(uint32_t node) const { return node < _state.size() && node != _opts.self; }
    void gone_untalked(uint32_t node, const std::string &why);
    void declare_lost(uint32_t node, const std::string &why);
    void suspect(uint32_t node, const std::string &why, clock::time_point now, std::chrono::milliseconds grace);
    std::chrono::milliseconds unlinked_grace(uint32_t node) const {
        return was_unlinked(node) ? _opts.unlinked_grace : std::chrono::milliseconds(0);
    }
    void rewatch();
    const char *name(uint32_t node) const { return _opts.node_names[node].c_str(); }

    liveness_options _opts;
    liveness_ops _ops;
    bool _started = false;
    bool _seen_loss = false;  // a node was lost: the ring closes over the survivors
    std::vector<peer_state> _state;
    std::vector<bool> _reached, _heard, _bye, _unlinked;
    // Links broken, waiting for the peer's goodbye: node, deadline, the error.
    std::vector<std::tuple<uint32_t, clock::time_point, std::string>> _suspects;
};

}  // namespace pmixcpp::net
