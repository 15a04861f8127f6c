#include "dmodex.h"

#include <pmix_common.h>

#include <algorithm>

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

dmodex_engine::dmodex_engine(dmodex_config config, dmodex_ops ops, rank_data_store &store)
    : _cfg(std::move(config)), _ops(std::move(ops)), _store(store) {
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

uint32_t dmodex_engine::next_id() {
    uint32_t id = _next_id++;
    if (_next_id == 0) _next_id = 1;
    return id;
}

void dmodex_engine::set_pending(uint32_t target, uint32_t id, time_point sent) {
    auto [it, fresh] = _pending.try_emplace(target);
    it->second = {id, sent};
    if (!fresh) return;
    const uint32_t node = _cfg.node_of[target];
    ++_outstanding[node];
}

void dmodex_engine::clear_pending(uint32_t target) {
    auto it = _pending.find(target);
    if (it == _pending.end()) return;
    _pending.erase(it);
    const uint32_t node = _cfg.node_of[target];
    auto o = _outstanding.find(node);
    if (o == _outstanding.end()) return;
    if (--o->second == 0) _outstanding.erase(o);
}

void dmodex_engine::request_for(uint32_t target, const std::string &key, time_point now, bool coalesce_by_node) {
    if (target >= _cfg.node_of.size()) return;
    const auto fresh = [&](const pending &p) { return now - p.sent < std::chrono::seconds(_cfg.timeout_sec); };
    auto it = _pending.find(target);
    if (it != _pending.end() && fresh(it->second)) return;  // coalesced with the request in flight (or this round's)
    if (coalesce_by_node) {
        auto n = _pending_node.find(_cfg.node_of[target]);
        if (n != _pending_node.end() && fresh(n->second)) return;  // the node's answer carries this rank too
    }
    const uint32_t node = _cfg.node_of[target];
    // Id 0 until the round's message goes out (flush): no reply matches it meanwhile.
    set_pending(target, 0, now);
    if (_cfg.whole_node) _pending_node[node] = {0, now};
    _outbox[node].push_back({target, key});
    if (!_ops.defer) {
        flush();
    } else if (!_flush_scheduled) {
        _flush_scheduled = true;
        _ops.defer([this] { flush(); });
    }
}

void dmodex_engine::flush() {
    _flush_scheduled = false;
    auto box = std::move(_outbox);
    _outbox.clear();
    for (auto &[node, items] : box) {
        for (size_t first = 0; first < items.size(); first += wire::kMaxDmodexBatch) {
            const size_t end = std::min(items.size(), first + wire::kMaxDmodexBatch);
            wire::dmodex_request m;
            m.id = next_id();
            m.target = items[first].target;
            m.key = items[first].key;
            m.more.assign(items.begin() + static_cast<std::ptrdiff_t>(first) + 1,
                          items.begin() + static_cast<std::ptrdiff_t>(end));
            for (size_t i = first; i < end; ++i)
                if (auto p = _pending.find(items[i].target); p != _pending.end() && p->second.request_id == 0)
                    p->second.request_id = m.id;
            if (auto pn = _pending_node.find(node); pn != _pending_node.end() && pn->second.request_id == 0)
                pn->second.request_id = m.id;
            wire::Writer w;
            if (!wire::encode(w, m).ok()) continue;
            PMIXCPP_LOG_TRACE("%s: dmodex request %u for %s of rank %u%s to node %s", _cfg.nspace.c_str(), m.id,
                              m.key.empty() ? "(all data)" : m.key.c_str(), m.target,
                              m.more.empty() ? "" : (" and " + std::to_string(m.more.size()) + " more ranks").c_str(),
                              name_of(node).c_str());
            ++_request_messages;
            _requested_ranks += end - first;
            _ops.send_request(node, w.take());
        }
    }
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
    if (st.ok() && status == PMIX_SUCCESS) st = _store.store(from, m.data, &ranks);
    if (!st.ok()) {
        PMIXCPP_LOG_ERROR("%s: malformed dmodex reply from node %s dropped: %s", _cfg.nspace.c_str(),
                          name_of(from).c_str(), st.message().c_str());
        return;
    }
    // The requests this reply answers: its target's, and those of every rank it carries that
    // were asked for in the same request (a batch).
    std::vector<uint32_t> answered;
    const auto answers = [&](uint32_t r) {
        auto p = _pending.find(r);
        if (p == _pending.end() || p->second.request_id != id) return;
        clear_pending(r);
        answered.push_back(r);
    };
    answers(target);
    if (status == PMIX_SUCCESS)
        for (uint32_t rk : ranks)
            if (rk != target) answers(rk);
    auto pn = _pending_node.find(from);
    const bool node_answer = pn != _pending_node.end() && pn->second.request_id == id;
    if (node_answer) _pending_node.erase(pn);
    for (uint32_t rk : ranks) answer_ready(rk);
    if (status != PMIX_SUCCESS) {
        for (const auto &w : _waiting.take_target(target)) _ops.fail(w, status, m.message);
    } else {
        ask_again(target, now, false);  // Gets of keys the reply did not hold
        for (uint32_t rk : answered)
            if (rk != target) ask_again(rk, now, false);
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
    auto ready = _waiting.take_ready(rank, [&](const get_waiter &w) { return _store.has(w.requester, rank, w.key); });
    for (const auto &w : ready) _ops.answer(w);
}

void dmodex_engine::data_stored(uint32_t rank) { answer_ready(rank); }

size_t dmodex_engine::node_lost(uint32_t node, const std::string &text) {
    size_t failed = 0;
    _pending_node.erase(node);
    _outbox.erase(node);
    for (uint32_t rank = 0; rank < _cfg.node_of.size(); ++rank) {
        if (_cfg.node_of[rank] != node) continue;
        clear_pending(rank);
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
    // The ranks ready now are answered together, in one reply about the first of them.
    std::vector<uint32_t> ready;
    serve_item(from, m.id, m.target, m.key, now, &ready);
    for (const auto &it : m.more) serve_item(from, m.id, it.target, it.key, now, &ready);
    if (!ready.empty()) reply_data(from, m.id, ready.front(), ready);
}

void dmodex_engine::serve_item(uint32_t from, uint32_t id, uint32_t target, const std::string &key, time_point now,
                               std::vector<uint32_t> *ready) {
    get_waiter w;
    w.conn = from;
    w.request_id = id;
    w.requester = PMIX_RANK_UNDEF;  // another node
    w.target = target;
    w.key = key;
    if (!is_local(target)) {
        fail_serving(w, PMIX_ERR_NOT_FOUND,
                     "rank " + std::to_string(target) + " is not served by node " + name_of(_cfg.self_node));
        return;
    }
    if (_store.has(PMIX_RANK_UNDEF, target, key)) {
        if (std::find(ready->begin(), ready->end(), target) == ready->end()) ready->push_back(target);
        return;
    }
    std::string gone = _ops.gone(target);
    if (!gone.empty()) {
        fail_serving(w, PMIX_ERR_NOT_FOUND,
                     "rank " + std::to_string(target) + " " + gone + " without committing " +
                         (key.empty() ? std::string("anything") : key));
        return;
    }
    w.deadline = deadline(std::nullopt, now);
    _serving.add(std::move(w));  // answered when the rank commits the key
}

void dmodex_engine::reply(uint32_t node, uint32_t request_id, uint32_t target, pmix_status_t status,
                          const std::string &message) {
    if (status == PMIX_SUCCESS) {
        reply_data(node, request_id, target, {target});
        return;
    }
    wire::Writer w;
    wire::dmodex_reply head;
    head.id = request_id;
    head.target = target;
    head.status = status;
    head.message = message;
    (void)wire::encode_head(w, head);
    _ops.send_reply(node, w.take());
}

void dmodex_engine::reply_data(uint32_t node, uint32_t request_id, uint32_t target, const std::vector<uint32_t> &ranks) {
    auto data = _store.encode(_cfg.whole_node ? _cfg.local_ranks : ranks);
    if (_cfg.whole_node && data.ok() && data->size() > _cfg.whole_node_max_bytes) data = _store.encode(ranks);
    if (!data.ok()) {
        reply(node, request_id, target, data.status().code(), data.status().message());
        return;
    }
    wire::Writer w;
    wire::dmodex_reply head;
    head.id = request_id;
    head.target = target;
    (void)wire::encode_head(w, head);
    w.put_raw(data->data(), data->size());
    _ops.send_reply(node, w.take());
}

void dmodex_engine::fail_serving(const get_waiter &w, pmix_status_t status, const std::string &message) {
    reply(static_cast<uint32_t>(w.conn), w.request_id, w.target, status, message);
}

void dmodex_engine::rank_committed(uint32_t rank) {
    auto ready = _serving.take_ready(rank, [&](const get_waiter &w) {
        return w.key.empty() || _store.has(PMIX_RANK_UNDEF, rank, w.key);
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
    // Requests never answered, that no Get waits for any more: not outstanding.
    std::vector<uint32_t> stale;
    const auto waited = _waiting.targets();
    for (const auto &[target, p] : _pending)
        if (now - p.sent >= std::chrono::seconds(_cfg.timeout_sec) &&
            std::find(waited.begin(), waited.end(), target) == waited.end())
            stale.push_back(target);
    for (uint32_t t : stale) clear_pending(t);
}

std::optional<dmodex_engine::time_point> dmodex_engine::next_deadline() const {
    auto a = _waiting.next_deadline(), b = _serving.next_deadline();
    if (a && (!b || *a < *b)) return a;
    return b;
}

}  // namespace pmixcpp::server
