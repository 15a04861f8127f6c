// publish_service: PMIx_Publish / Lookup / Unpublish (the step's store on node 0, pubsub.h; the
// job's store beside srun for the session range, plugin/services/sessions/).
#include "dyn_publish.h"

#include <cstring>

#include "dyn_detail.h"
#include "log.h"
#include "../services/sessions/session_codec.h"
#include "value.h"
#include "wire/codec.h"
#include "wire/messages.h"
#include "wire/node_messages.h"

namespace pmixcpp::server {

using namespace dyn_detail;

publish_service::publish_service(const step_info &step, std::vector<uint32_t> node_of, publish_ops ops)
    : _step(step), _node_of(std::move(node_of)), _ops(std::move(ops)) {}

void publish_service::on_client(uint64_t conn, uint32_t rank, uint16_t type, uint32_t request_id,
                            std::span<const uint8_t> payload) {
    if (to_session(conn, rank, type, request_id, payload)) return;
    pubsub_requester who{_step.node_id, conn, request_id, rank};
    if (_step.node_id == 0) {
        handle_pubsub(who, static_cast<uint8_t>(type), payload);
        return;
    }
    if (!_ops.send_node) {
        _ops.reply(conn, request_id, PMIX_ERR_UNREACH, "node 0's server is not reachable", {});
        return;
    }
    // Forward to node 0 (wire::pubsub_forward).
    wire::Writer w;
    wire::pubsub_forward fwd;
    fwd.type = static_cast<uint8_t>(type);
    fwd.conn = conn;
    fwd.request_id = request_id;
    fwd.rank = rank;
    fwd.payload.assign(payload.begin(), payload.end());
    if (Status st = wire::encode(w, fwd); !st.ok()) {
        _ops.reply(conn, request_id, st.code(), st.message(), {});
        return;
    }
    if (type == static_cast<uint16_t>(wire::msg_type::publish)) _step_publishers.insert(rank);
    _ops.send_node(0, node_channel::pubsub_request, w.data());
}

void publish_service::answer(const pubsub_requester &to, pmix_status_t status, const std::string &message,
                         std::span<const uint8_t> body) {
    if (to.node == _step.node_id) {
        _ops.reply(to.conn, to.request_id, status, message, body);
        return;
    }
    if (!_ops.send_node) return;
    wire::Writer w;
    wire::pubsub_answer a;
    a.conn = to.conn;
    a.request_id = to.request_id;
    a.status = status;
    a.message = message;
    a.body.assign(body.begin(), body.end());
    if (!wire::encode(w, a).ok()) return;
    _ops.send_node(to.node, node_channel::pubsub_reply, w.data());
}

void publish_service::answer_lookup(const lookup_answer &a) {
    if (a.status != PMIX_SUCCESS) {
        answer(a.to, a.status, a.message, {});
        return;
    }
    std::vector<wire::encoded_lookup_entry> found(a.found.size());
    for (size_t i = 0; i < a.found.size(); ++i) {
        strncpy(found[i].owner.nspace, _step.nspace.c_str(), PMIX_MAX_NSLEN);
        found[i].owner.rank = a.found[i].owner;
        found[i].info = a.found[i].info;
    }
    wire::Writer w;
    if (Status st = wire::encode_lookup_reply(w, found); !st.ok()) {
        answer(a.to, st.code(), st.message(), {});
        return;
    }
    answer(a.to, PMIX_SUCCESS, {}, w.data());
}

void publish_service::handle_pubsub(const pubsub_requester &who, uint8_t type, std::span<const uint8_t> payload) {
    const char *ns = _step.nspace.c_str();
    switch (static_cast<wire::msg_type>(type)) {
    case wire::msg_type::publish: {
        wire::publish_request m;
        if (Status st = wire::decode_payload(payload, &m); !st.ok()) {
            answer(who, PMIX_ERR_UNPACK_FAILURE, "malformed publish: " + st.message(), {});
            return;
        }
        uint8_t range = PMIX_RANGE_SESSION, persistence = PMIX_PERSIST_PROC;
        if (const pmix_info_t *r = find_info(m.directives, PMIX_RANGE)) {
            auto n = number_of(r->value);
            if (!n || *n < 0 || *n > PMIX_RANGE_PROC_LOCAL || *n == PMIX_RANGE_INVALID) {
                answer(who, PMIX_ERR_BAD_PARAM, "invalid PMIX_RANGE", {});
                return;
            }
            range = static_cast<uint8_t>(*n);
        }
        if (const pmix_info_t *p = find_info(m.directives, PMIX_PERSISTENCE)) {
            auto n = number_of(p->value);
            if (!n || *n < 0 || *n > PMIX_PERSIST_SESSION) {
                answer(who, PMIX_ERR_BAD_PARAM, "invalid PMIX_PERSISTENCE", {});
                return;
            }
            persistence = static_cast<uint8_t>(*n);
        }
        if (m.data.empty()) {
            answer(who, PMIX_ERR_BAD_PARAM, "nothing to publish", {});
            return;
        }
        std::vector<pubsub_entry> entries;
        for (size_t i = 0; i < m.data.size(); ++i) {
            pubsub_entry e;
            e.key = key_of(m.data[i]);
            e.owner = who.rank;
            e.owner_node = who.node;
            e.range = range;
            e.persistence = persistence;
            wire::Writer w;
            if (Status st = wire::encode_info(w, m.data[i]); !st.ok()) {
                answer(who, st.code(), st.message(), {});
                return;
            }
            e.info = w.data();
            entries.push_back(std::move(e));
        }
        auto ready = _store.publish(std::move(entries));
        if (!ready.ok()) {
            PMIXCPP_LOG_VERBOSE("%s: publish by rank %u refused: %s", ns, who.rank, ready.status().message().c_str());
            answer(who, ready.status().code(), ready.status().message(), {});
            return;
        }
        PMIXCPP_LOG_DEBUG("%s: rank %u published %zu key(s) (range %u, persistence %u)", ns, who.rank,
                          m.data.size(), range, persistence);
        answer(who, PMIX_SUCCESS, {}, {});
        for (const auto &a : ready.value()) answer_lookup(a);
        return;
    }
    case wire::msg_type::lookup: {
        wire::lookup_request m;
        if (Status st = wire::decode_payload(payload, &m); !st.ok()) {
            answer(who, PMIX_ERR_UNPACK_FAILURE, "malformed lookup: " + st.message(), {});
            return;
        }
        if (m.keys.empty()) {
            answer(who, PMIX_ERR_BAD_PARAM, "no keys to look up", {});
            return;
        }
        size_t wait_for = 0;
        if (const pmix_info_t *w = find_info(m.directives, PMIX_WAIT)) {
            if (w->value.type == PMIX_BOOL || w->value.type == PMIX_UNDEF) {
                wait_for = flag_of(w) ? m.keys.size() : 0;
            } else {
                auto n = number_of(w->value);
                if (!n || *n < 0) {
                    answer(who, PMIX_ERR_BAD_PARAM, "invalid PMIX_WAIT", {});
                    return;
                }
                wait_for = *n == 0 ? m.keys.size() : static_cast<size_t>(*n);
            }
        }
        auto a = _store.lookup(who, std::move(m.keys), wait_for, deadline_of(m.directives));
        if (a) answer_lookup(*a);
        else PMIXCPP_LOG_DEBUG("%s: rank %u waits for %zu published key(s)", ns, who.rank, wait_for);
        return;
    }
    case wire::msg_type::unpublish: {
        wire::unpublish_request m;
        if (Status st = wire::decode_payload(payload, &m); !st.ok()) {
            answer(who, PMIX_ERR_UNPACK_FAILURE, "malformed unpublish: " + st.message(), {});
            return;
        }
        size_t n = _store.unpublish(who.rank, m.keys);
        if (n == 0 && !m.keys.empty()) answer(who, PMIX_ERR_NOT_FOUND, "none of the keys is published by this rank", {});
        else answer(who, PMIX_SUCCESS, {}, {});
        return;
    }
    default: answer(who, PMIX_ERR_BAD_PARAM, "not a publish/lookup/unpublish request", {});
    }
}

void publish_service::on_pubsub_request(uint32_t from, std::span<const uint8_t> body) {
    const char *ns = _step.nspace.c_str();
    wire::pubsub_forward m;
    Status st = wire::decode(body, &m);
    const uint8_t type = m.type;
    pubsub_requester who;
    who.node = from;
    who.conn = m.conn;
    who.request_id = m.request_id;
    who.rank = m.rank;
    std::span<const uint8_t> payload(m.payload);
    if (!st.ok() || _step.node_id != 0 || who.rank >= _step.ntasks || _node_of[who.rank] != from) {
        PMIXCPP_LOG_ERROR("%s: bad pubsub request from node %u dropped: %s", ns, from,
                          st.ok() ? "wrong node or rank" : st.message().c_str());
        return;
    }
    if (type == kRankLeft) {
        _store.rank_left(who.rank);
        return;
    }
    handle_pubsub(who, type, payload);
}

void publish_service::on_pubsub_reply(uint32_t from, std::span<const uint8_t> body) {
    wire::pubsub_answer m;
    Status st = wire::decode(body, &m);
    if (!st.ok() || from != 0) {
        PMIXCPP_LOG_ERROR("%s: bad pubsub reply from node %u dropped: %s", _step.nspace.c_str(), from,
                          st.ok() ? "not from node 0" : st.message().c_str());
        return;
    }
    _ops.reply(m.conn, m.request_id, m.status, m.message, m.body);
}

// Requests whose range is the session (PMIX_RANGE_SESSION, GLOBAL, UNDEF, or none: the default)
// go to the job's store beside srun, when the step has one. True if sent there.
bool publish_service::to_session(uint64_t conn, uint32_t rank, uint16_t type, uint32_t request_id,
                             std::span<const uint8_t> payload) {
    if (!_ops.job_store) return false;
    const InfoArray *dirs = nullptr;
    wire::publish_request pub;
    wire::lookup_request lk;
    if (type == static_cast<uint16_t>(wire::msg_type::publish)) {
        if (!wire::decode_payload(payload, &pub).ok()) return false;  // the step store reports it
        dirs = &pub.directives;
    } else {
        if (!wire::decode_payload(payload, &lk).ok()) return false;
        dirs = &lk.directives;
    }
    if (const pmix_info_t *r = find_info(*dirs, PMIX_RANGE)) {
        auto n = number_of(r->value);
        if (!n) return false;  // the step's store answers the malformed directive
        switch (*n) {
            case PMIX_RANGE_SESSION:
            case PMIX_RANGE_GLOBAL:
            case PMIX_RANGE_UNDEF: break;
            case PMIX_RANGE_RM:
            case PMIX_RANGE_LOCAL:
            case PMIX_RANGE_NAMESPACE:
            case PMIX_RANGE_CUSTOM:
            case PMIX_RANGE_PROC_LOCAL: return false;
            default:
                // Not a range of the standard: the default range, the session. OpenMPI 5.0's
                // MPI_Lookup_name sends one when its MPI_Info names no "range", while its
                // MPI_Publish_name says PMIX_RANGE_SESSION: they must meet.
                PMIXCPP_LOG_DEBUG("%s: rank %u: PMIX_RANGE %lld is no range of the standard: the session",
                                  _step.nspace.c_str(), rank, static_cast<long long>(*n));
                break;
        }
    }
    int timeout_ms = (session::kMaxWaitSec + 30) * 1000;
    if (const pmix_info_t *t = find_info(*dirs, PMIX_TIMEOUT)) {
        auto n = number_of(t->value);
        if (n && *n > 0 && *n < session::kMaxWaitSec) timeout_ms = static_cast<int>(*n + 30) * 1000;
    }
    session::agent_request req;
    req.type = static_cast<uint8_t>(type);
    req.nspace = _step.nspace;
    req.rank = rank;
    req.payload.assign(payload.begin(), payload.end());
    auto body = session::encode_request(req);
    if (!body.ok()) return false;
    if (type == static_cast<uint16_t>(wire::msg_type::publish)) {
        if (_session_publishers.size() < _step.ntasks) _session_publishers.resize(_step.ntasks, false);
        if (rank < _session_publishers.size()) _session_publishers[rank] = true;
    }
    _ops.job_store(std::move(body.value()), timeout_ms,
                   [this, conn, request_id](int status, const std::string &message, std::vector<uint8_t> reply) {
                       _ops.reply(conn, request_id, status, message, reply);
                   });
    return true;
}

void publish_service::rank_left(uint32_t rank) {
    if (_ops.job_store && rank < _session_publishers.size() && _session_publishers[rank]) {
        _session_publishers[rank] = false;
        session::agent_request req;
        req.type = 0;
        req.nspace = _step.nspace;
        req.rank = rank;
        auto body = session::encode_request(req);
        if (body.ok()) _ops.job_store(std::move(body.value()), 10000, [](int, const std::string &, std::vector<uint8_t>) {});
    }
    if (_step.node_id == 0) {
        size_t n = _store.rank_left(rank);
        if (n > 0) PMIXCPP_LOG_DEBUG("%s: %zu published key(s) of rank %u removed", _step.nspace.c_str(), n, rank);
        return;
    }
    // Only a rank that published into the step's store has anything to remove there: no node
    // traffic at every rank's exit (the peer's server may be ending too).
    if (!_ops.send_node || _step_publishers.erase(rank) == 0) return;
    wire::Writer w;
    wire::pubsub_forward left;
    left.type = kRankLeft;
    left.rank = rank;
    if (!wire::encode(w, left).ok()) return;
    _ops.send_node(0, node_channel::pubsub_request, w.data());
}

Status publish_service::add_channels(node_channels &table) {
    PMIXCPP_RETURN_IF_ERROR(table.add(node_channel::pubsub_request, "pubsub request",
                                      [this](uint32_t from, std::span<const uint8_t> body) { on_pubsub_request(from, body); }));
    return table.add(node_channel::pubsub_reply, "pubsub reply",
                     [this](uint32_t from, std::span<const uint8_t> body) { on_pubsub_reply(from, body); });
}

void publish_service::expire(server_clock::time_point now) {
    for (const auto &a : _store.expire(now)) answer_lookup(a);
}

std::optional<server_clock::time_point> publish_service::next_deadline() const { return _store.next_deadline(); }

}  // namespace pmixcpp::server
