#include "dmodex.h"

#include <pmix_common.h>

#include "log.h"

namespace pmixcpp::server {

Status dmodex_engine::add_channels(node_channels &table) {
    PMIXCPP_RETURN_IF_ERROR(table.add(node_channel::dmodex_request, "dmodex request",
                                      [this](uint32_t from, std::span<const uint8_t> body) {
                                          on_request(from, body, server_clock::now());
                                      }));
    return table.add(node_channel::dmodex_reply, "dmodex reply", [this](uint32_t from, std::span<const uint8_t> body) {
        on_reply(from, body, server_clock::now());
    });
}

dmodex_engine::dmodex_engine(dmodex_config config, dmodex_ops ops) : _cfg(std::move(config)), _ops(std::move(ops)) {
    _local.assign(_cfg.node_of.size(), false);
    for (uint32_t r : _cfg.local_ranks)
        if (r < _local.size()) _local[r] = true;
}

dmodex_engine::time_point dmodex_engine::deadline(std::optional<time_point> asked, time_point now) const {
    auto limit = now + std::chrono::seconds(_cfg.timeout_sec);
    if (!asked || *asked > limit) return limit;
    return *asked;
}

bool dmodex_engine::is_local(uint32_t rank) const {
    return rank < _local.size() && _local[rank];
}

const std::string &dmodex_engine::name_of(uint32_t node) const {
    static const std::string unknown = "(unknown)";
    return node < _cfg.node_names.size() ? _cfg.node_names[node] : unknown;
}

// ------------------------------------------------------------------------------------------
// Requesting side

void dmodex_engine::get(get_waiter w, time_point now) {
    w.deadline = deadline(w.deadline, now);
    uint32_t target = w.target;
    std::string key = w.key;
    _waiting.add(std::move(w));
    request(target, key, now);
}

void dmodex_engine::request(uint32_t target, const std::string &key, time_point now) {
    request_for(target, key, now, _cfg.whole_node);
}

void dmodex_engine::request_for(uint32_t target, const std::string &key, time_point now, bool coalesce_by_node) {
    if (target >= _cfg.node_of.size()) return;
    const auto fresh = [&](const pending &p) { return now - p.sent < std::chrono::seconds(_cfg.timeout_sec); };
    auto it = _pending.find(target);
    if (it != _pending.end() && fresh(it->second)) return;  // coalesced with the request in flight
    if (coalesce_by_node) {
        auto n = _pending_node.find(_cfg.node_of[target]);
        if (n != _pending_node.end() && fresh(n->second)) return;  // the node's answer carries this rank too
    }
    uint32_t id = _next_id++;
    if (_next_id == 0) _next_id = 1;
    _pending[target] = {id, now};
    if (_cfg.whole_node) _pending_node[_cfg.node_of[target]] = {id, now};
    wire::Writer w;
    if (!wire::encode(w, wire::dmodex_request{id, target, key}).ok()) return;
    const uint32_t node = _cfg.node_of[target];
    PMIXCPP_LOG_TRACE("%s: dmodex request %u for %s of rank %u to node %s", _cfg.nspace.c_str(), id,
                      key.empty() ? "(all data)" : key.c_str(), target, name_of(node).c_str());
    _ops.send_request(node, w.take());
}

void dmodex_engine::on_reply(uint32_t from, std::span<const uint8_t> body, time_point now) {
    const uint32_t ntasks = static_cast<uint32_t>(_cfg.node_of.size());
    wire::dmodex_reply m;
    Status st = wire::decode(body, ntasks, &m);
    const uint32_t id = m.id, target = m.target;
    const int32_t status = m.status;
    std::vector<uint32_t> ranks;
    if (st.ok() && (target >= ntasks || _cfg.node_of[target] != from))
        st = Status(PMIX_ERR_BAD_PARAM, "reply about rank " + std::to_string(target) + ", not hosted there");
    if (st.ok() && status == PMIX_SUCCESS) st = _ops.store(from, m.data, &ranks);
    if (!st.ok()) {
        PMIXCPP_LOG_ERROR("%s: malformed dmodex reply from node %s dropped: %s", _cfg.nspace.c_str(),
                          name_of(from).c_str(), st.message().c_str());
        return;
    }
    auto p = _pending.find(target);
    if (p != _pending.end() && p->second.request_id == id) _pending.erase(p);
    auto pn = _pending_node.find(from);
    const bool node_answer = pn != _pending_node.end() && pn->second.request_id == id;
    if (node_answer) _pending_node.erase(pn);
    for (uint32_t rk : ranks) answer_ready(rk);
    if (status != PMIX_SUCCESS) {
        for (const auto &w : _waiting.take_target(target)) _ops.fail(w, status, m.message);
    } else {
        ask_again(target, now, false);  // Gets of keys the reply did not hold
    }
    // The node's other ranks whose Gets waited for this answer and were not satisfied by it: a
    // request each, at once.
    if (node_answer)
        for (uint32_t t : _waiting.targets())
            if (t != target && _cfg.node_of[t] == from) ask_again(t, now, true);
}

void dmodex_engine::ask_again(uint32_t target, time_point now, bool own_request) {
    std::optional<std::string> again;
    auto remaining = _waiting.take_target(target);
    for (auto &w : remaining) {
        if (!again) again = w.key;
        _waiting.add(std::move(w));
    }
    if (again) request_for(target, *again, now, !own_request && _cfg.whole_node);
}

void dmodex_engine::answer_ready(uint32_t rank) {
    auto ready = _waiting.take_ready(rank, [&](const get_waiter &w) { return _ops.has(w.requester, rank, w.key); });
    for (const auto &w : ready) _ops.answer(w);
}

void dmodex_engine::data_stored(uint32_t rank) { answer_ready(rank); }

size_t dmodex_engine::node_lost(uint32_t node, const std::string &text) {
    size_t failed = 0;
    _pending_node.erase(node);
    for (uint32_t rank = 0; rank < _cfg.node_of.size(); ++rank) {
        if (_cfg.node_of[rank] != node) continue;
        _pending.erase(rank);
        for (const auto &w : _waiting.take_target(rank)) {
            _ops.fail(w, PMIX_ERR_NODE_DOWN, text);
            ++failed;
        }
    }
    return failed;
}

void dmodex_engine::drop_connection(uint64_t conn) { _waiting.drop_connection(conn); }

// ------------------------------------------------------------------------------------------
// Serving side

void dmodex_engine::on_request(uint32_t from, std::span<const uint8_t> body, time_point now) {
    wire::dmodex_request m;
    Status st = wire::decode(body, &m);
    if (!st.ok()) {
        PMIXCPP_LOG_ERROR("%s: malformed dmodex request from node %u dropped: %s", _cfg.nspace.c_str(), from,
                          st.message().c_str());
        return;
    }
    get_waiter w;
    w.conn = from;
    w.request_id = m.id;
    w.requester = PMIX_RANK_UNDEF;  // another node
    w.target = m.target;
    w.key = m.key;
    if (!is_local(m.target)) {
        fail_serving(w, PMIX_ERR_NOT_FOUND,
                     "rank " + std::to_string(m.target) + " is not served by node " + name_of(_cfg.self_node));
        return;
    }
    if (_ops.has(PMIX_RANK_UNDEF, m.target, m.key)) {
        reply(from, m.id, m.target, PMIX_SUCCESS, {});
        return;
    }
    std::string gone = _ops.gone(m.target);
    if (!gone.empty()) {
        fail_serving(w, PMIX_ERR_NOT_FOUND,
                     "rank " + std::to_string(m.target) + " " + gone + " without committing " +
                         (m.key.empty() ? std::string("anything") : m.key));
        return;
    }
    w.deadline = deadline(std::nullopt, now);
    _serving.add(std::move(w));  // answered when the rank commits the key
}

void dmodex_engine::reply(uint32_t node, uint32_t request_id, uint32_t target, pmix_status_t status,
                          const std::string &message) {
    wire::Writer w;
    wire::dmodex_reply head;
    head.id = request_id;
    head.target = target;
    head.status = status;
    head.message = message;
    (void)wire::encode_head(w, head);
    if (status == PMIX_SUCCESS) {
        std::vector<uint32_t> ranks{target};
        if (_cfg.whole_node) ranks = _cfg.local_ranks;
        auto data = _ops.encode_ranks(ranks);
        if (_cfg.whole_node && data.ok() && data->size() > _cfg.whole_node_max_bytes) data = _ops.encode_ranks({target});
        if (!data.ok()) {
            reply(node, request_id, target, data.status().code(), data.status().message());
            return;
        }
        w.put_raw(data->data(), data->size());
    }
    _ops.send_reply(node, w.take());
}

void dmodex_engine::fail_serving(const get_waiter &w, pmix_status_t status, const std::string &message) {
    reply(static_cast<uint32_t>(w.conn), w.request_id, w.target, status, message);
}

void dmodex_engine::rank_committed(uint32_t rank) {
    auto ready = _serving.take_ready(rank, [&](const get_waiter &w) {
        return w.key.empty() || _ops.has(PMIX_RANK_UNDEF, rank, w.key);
    });
    for (const auto &w : ready) reply(static_cast<uint32_t>(w.conn), w.request_id, w.target, PMIX_SUCCESS, {});
}

void dmodex_engine::rank_left(uint32_t rank, bool died) {
    for (const auto &w : _serving.take_target(rank))
        fail_serving(w, PMIX_ERR_NOT_FOUND,
                     "rank " + std::to_string(rank) + (died ? " died" : " finalized") + " without committing " + w.key);
}

// ------------------------------------------------------------------------------------------
// Both

void dmodex_engine::expire(time_point now) {
    auto timed_out = [&](const get_waiter &w) {
        // A Get that times out is an answer the application asked for, not a server error.
        PMIXCPP_LOG_DEBUG("%s: get of %s of rank %u by rank %u timed out", _cfg.nspace.c_str(),
                          w.key.empty() ? "(all data)" : w.key.c_str(), w.target, w.requester);
        return "timed out waiting for rank " + std::to_string(w.target) + " to commit " + w.key;
    };
    for (const auto &w : _serving.take_expired(now)) fail_serving(w, PMIX_ERR_TIMEOUT, timed_out(w));
    for (const auto &w : _waiting.take_expired(now)) _ops.fail(w, PMIX_ERR_TIMEOUT, timed_out(w));
}

std::optional<dmodex_engine::time_point> dmodex_engine::next_deadline() const {
    auto a = _waiting.next_deadline(), b = _serving.next_deadline();
    if (a && (!b || *a < *b)) return a;
    return b;
}

}  // namespace pmixcpp::server
