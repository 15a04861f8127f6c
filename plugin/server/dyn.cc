#include "dyn.h"

#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <set>

#include "groups.h"
#include "hostlist.h"
#include "log.h"
#include "../services/alloc/alloc_codec.h"
#include "../services/sessions/session_codec.h"
#include "../services/spawn/spawn_codec.h"
#include "../services/xstep/xstep_codec.h"
#include "value.h"
#include "wire/codec.h"
#include "wire/messages.h"
#include "wire/node_messages.h"

#include "dyn_detail.h"

namespace pmixcpp::server {

using namespace dyn_detail;

dyn_service::dyn_service(const step_info &step, std::vector<uint32_t> node_of, dyn_ops ops)
    : _step(step), _node_of(std::move(node_of)), _ops(std::move(ops)) {
    connect_ops c;
    c.reply = _ops.reply;
    if (_ops.agent) {
        c.rendezvous = [this](std::vector<uint8_t> body, int timeout_ms, connect_ops::done_fn done) {
            _ops.agent(services::service::connect, std::move(body), timeout_ms, std::move(done));
        };
        // Another namespace's size: the key its srun published in the job's store.
        c.ns_size = [this](const std::string &nspace, connect_ops::size_fn done) {
            wire::lookup_request lk;
            lk.keys.push_back(std::string(kNamespaceSizeKey) + nspace);
            wire::Writer w;
            session::agent_request req;
            req.type = static_cast<uint8_t>(wire::msg_type::lookup);
            req.nspace = _step.nspace;
            req.rank = PMIX_RANK_WILDCARD;
            Result<std::vector<uint8_t>> body = Status(PMIX_ERROR, "");
            if (wire::encode(w, lk).ok()) {
                req.payload = w.data();
                body = session::encode_request(req);
            }
            if (!body.ok()) return done(std::nullopt);
            _ops.agent(services::service::session, std::move(body.value()), 10000,
                         [done, nspace](int status, const std::string &, std::vector<uint8_t> reply) {
                             wire::lookup_reply r;
                             if (status != PMIX_SUCCESS || !wire::decode_payload(reply, &r).ok() || r.data.size() != 1)
                                 return done(std::nullopt);
                             auto n = value_to_number<uint32_t>(r.data[0].value);
                             done(n.ok() ? std::optional<uint32_t>(n.value()) : std::nullopt);
                         });
        };
    }
    if (_ops.xstep) c.xstep = _ops.xstep;
    c.data_of = _ops.data_of ? _ops.data_of : [](uint32_t, relation) -> Result<InfoArray> { return InfoArray(); };
    _connect = std::make_unique<connect_service>(_step, _node_of, std::move(c), _ops.connect_timeout_sec);
}

// ------------------------------------------------------------------------------------------
// Connect / disconnect (connect.h)

void dyn_service::on_connect(uint64_t conn, uint32_t rank, uint32_t request_id, connect_op op,
                             std::span<const uint8_t> payload) {
    wire::fence_request m;
    if (Status st = wire::decode_payload(payload, &m); !st.ok()) {
        _ops.reply(conn, request_id, PMIX_ERR_UNPACK_FAILURE, std::string("malformed ") + to_string(op) + ": " + st.message(), {});
        return;
    }
    _connect->on_request(conn, rank, request_id, op, m.procs, m.infos);
}

void dyn_service::foreign_get(uint64_t conn, uint32_t request_id, const pmix_proc_t &proc, const std::string &key,
                              const InfoArray &infos) {
    _connect->get(conn, request_id, proc, key, infos);
}

void dyn_service::rank_left(uint32_t rank) {
    _connect->rank_left(rank);
    if (_ops.agent && rank < _session_publishers.size() && _session_publishers[rank]) {
        _session_publishers[rank] = false;
        session::agent_request req;
        req.type = 0;
        req.nspace = _step.nspace;
        req.rank = rank;
        auto body = session::encode_request(req);
        if (body.ok())
            _ops.agent(services::service::session, std::move(body.value()), 10000,
                         [](int, const std::string &, std::vector<uint8_t>) {});
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

// ------------------------------------------------------------------------------------------
// Node messages and deadlines

Status dyn_service::add_channels(node_channels &table) {
    PMIXCPP_RETURN_IF_ERROR(table.add(node_channel::pubsub_request, "pubsub request",
                                      [this](uint32_t from, std::span<const uint8_t> body) { on_pubsub_request(from, body); }));
    PMIXCPP_RETURN_IF_ERROR(table.add(node_channel::pubsub_reply, "pubsub reply",
                                      [this](uint32_t from, std::span<const uint8_t> body) { on_pubsub_reply(from, body); }));
    return table.add(node_channel::job_control, "job control",
                     [this](uint32_t from, std::span<const uint8_t> body) { on_job_control(from, body); });
}

void dyn_service::expire(server_clock::time_point now) {
    _connect->expire(now);
    for (const auto &a : _store.expire(now)) answer_lookup(a);
    for (auto it = _kills.begin(); it != _kills.end();) {
        if (it->when <= now) {
            if (_ops.signal(*it->proc, 0) == 0) _ops.signal(*it->proc, SIGKILL);
            it = _kills.erase(it);
        } else {
            ++it;
        }
    }
}

std::optional<server_clock::time_point> dyn_service::next_deadline() const {
    auto next = _store.next_deadline();
    for (const auto &k : _kills)
        if (!next || k.when < *next) next = k.when;
    if (auto c = _connect->next_deadline(); c && (!next || *c < *next)) next = c;
    return next;
}

}  // namespace pmixcpp::server
