#include "liveness.h"

#include <algorithm>

#include "log.h"
#include "wire/node_messages.h"

namespace pmixcpp::net {

const char *to_string(peer_state s) {
    switch (s) {
    case peer_state::alive: return "alive";
    case peer_state::left: return "left";
    case peer_state::lost: return "lost";
    }
    return "unknown";
}

peer_liveness::peer_liveness(liveness_options opts, liveness_ops ops) : _opts(std::move(opts)), _ops(std::move(ops)) {
    const size_t n = _opts.node_names.size();
    _state.assign(n, peer_state::alive);
    _reached.assign(n, false);
    _heard.assign(n, false);
    _bye.assign(n, false);
    _unlinked.assign(n, false);
}

void peer_liveness::start() {
    _started = true;
    const uint32_t n = static_cast<uint32_t>(_state.size());
    if (!_opts.watch_neighbours || n < 2) return;
    _ops.greet((_opts.self + 1) % n);
    if (!_opts.two_way_links && n > 2) _ops.greet((_opts.self + n - 1) % n);
}

void peer_liveness::reached(uint32_t node) {
    if (node < _reached.size()) _reached[node] = true;
}

void peer_liveness::heard(uint32_t node) {
    if (node < _heard.size()) _heard[node] = true;
}

void peer_liveness::link_message(uint32_t node, std::span<const uint8_t> body) {
    wire::link_kind kind;
    if (!valid(node) || !wire::decode(body, &kind).ok() || kind != wire::link_kind::bye) return;
    _bye[node] = true;
    if (_state[node] != peer_state::alive) return;
    _state[node] = peer_state::left;
    PMIXCPP_LOG_DEBUG("%s transport: node %s left (step ended there)", _opts.kind, name(node));
    if (_ops.left) _ops.left(node);
}

// A peer we never talked to may have ended normally before we came (a short step): that is no
// loss to report; if it did die, a fence that needs it finds out (liveness probe). Once a loss
// was seen, the server asks around whether it ended normally, and we watch the next one.
void peer_liveness::gone_untalked(uint32_t node, const std::string &why) {
    PMIXCPP_LOG_DEBUG("%s transport: node %s unreachable before we ever talked (%s): taken as gone", _opts.kind,
                      name(node), why.c_str());
    _state[node] = peer_state::left;
    _ops.close(node);
    if (_ops.left) _ops.left(node);
    if (!_seen_loss) return;
    if (_ops.unreachable) _ops.unreachable(node, why);
    rewatch();
}

void peer_liveness::declare_lost(uint32_t node, const std::string &why) {
    _state[node] = peer_state::lost;
    _ops.close(node);
    PMIXCPP_LOG_ERROR("%s transport: node %s (%u) lost: %s", _opts.kind, name(node), node, why.c_str());
    if (_ops.lost) _ops.lost(node, why);
    _seen_loss = true;
    rewatch();
}

void peer_liveness::unlinked(uint32_t node) {
    if (valid(node)) _unlinked[node] = true;
}

void peer_liveness::connect_failed(uint32_t node, const std::string &why, clock::time_point now) {
    if (!valid(node)) return;
    if (_state[node] != peer_state::alive) {
        _ops.close(node);
        return;
    }
    if (!talked(node)) return gone_untalked(node, why);
    suspect(node, why, now, unlinked_grace(node));
}

void peer_liveness::broken(uint32_t node, const std::string &why, clock::time_point now) {
    if (!valid(node)) return;
    if (_state[node] != peer_state::alive) {  // after its goodbye (or a loss): quietly
        _ops.close(node);
        return;
    }
    if (!talked(node)) return gone_untalked(node, why);
    suspect(node, why, now, std::max(_opts.bye_grace, unlinked_grace(node)));
}

// A talked-to peer's link failed: lost now, or once its goodbye did not come within `grace`.
void peer_liveness::suspect(uint32_t node, const std::string &why, clock::time_point now,
                            std::chrono::milliseconds grace) {
    if (grace.count() <= 0) return declare_lost(node, why);
    // Nothing more is sent to it meanwhile.
    _state[node] = peer_state::left;
    _ops.close(node);
    if (_ops.left) _ops.left(node);
    _suspects.emplace_back(node, now + grace, why);
    PMIXCPP_LOG_DEBUG("%s transport: node %s: %s; waiting for its goodbye", _opts.kind, name(node), why.c_str());
}

void peer_liveness::tick(clock::time_point now) {
    std::vector<std::pair<uint32_t, std::string>> lost;
    std::erase_if(_suspects, [&](const auto &s) {
        const auto &[node, deadline, why] = s;
        if (_bye[node]) {
            PMIXCPP_LOG_DEBUG("%s transport: node %s left (its goodbye followed the endpoint error)", _opts.kind,
                              name(node));
            return true;
        }
        if (now < deadline) return false;
        lost.emplace_back(node, why);
        return true;
    });
    for (auto &[node, why] : lost)
        if (_state[node] == peer_state::left) declare_lost(node, why + " (no goodbye followed)");
}

// No address of it ever came (the directory route gave up on it): it cannot have left, as it
// never ran with us; lost, reported once.
void peer_liveness::never_reached(uint32_t node, const std::string &why) {
    if (!valid(node) || _state[node] == peer_state::lost) return;
    declare_lost(node, why);
}

void peer_liveness::forget(uint32_t node) {
    if (!valid(node) || _state[node] == peer_state::lost) return;
    _state[node] = peer_state::lost;
    _ops.close(node);
    _seen_loss = true;
    rewatch();
}

// After a loss: watch the nearest live node on each side (transport.h), greeting it unless a
// link to it is open already.
void peer_liveness::rewatch() {
    if (!_opts.watch_neighbours || !_started || !_seen_loss) return;
    const uint32_t n = static_cast<uint32_t>(_state.size());
    for (uint32_t side = 0; side < 2; ++side) {
        for (uint32_t k = 1; k < n; ++k) {
            uint32_t i = side == 0 ? (_opts.self + k) % n : (_opts.self + n - k) % n;
            if (_state[i] != peer_state::alive) continue;
            if (!_ops.linked(i)) {
                PMIXCPP_LOG_DEBUG("%s transport: watching node %s now", _opts.kind, name(i));
                _ops.greet(i);
            }
            break;
        }
    }
}

bool peer_liveness::watched(uint32_t node) const {
    if (!_opts.watch_neighbours || !_started || !valid(node)) return false;
    const uint32_t n = static_cast<uint32_t>(_state.size());
    for (uint32_t side = 0; side < (_opts.two_way_links ? 1u : 2u); ++side) {
        for (uint32_t k = 1; k < n; ++k) {
            uint32_t i = side == 0 ? (_opts.self + k) % n : (_opts.self + n - k) % n;
            if (_state[i] != peer_state::alive) continue;
            if (i == node) return true;
            break;
        }
    }
    return false;
}

std::optional<peer_liveness::clock::time_point> peer_liveness::next_deadline() const {
    std::optional<clock::time_point> next;
    for (const auto &[node, deadline, why] : _suspects)
        if (!next || deadline < *next) next = deadline;
    return next;
}

}  // namespace pmixcpp::net
