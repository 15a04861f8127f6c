#include "engine.h"

#include <algorithm>
#include <cstring>

#include "log.h"
#include "wire/messages.h"

namespace pmixcpp::server {

std::optional<server_clock::time_point> info_deadline(const InfoArray &infos) {
    const pmix_info_t *i = find_info(infos, PMIX_TIMEOUT);
    if (!i) return std::nullopt;
    auto n = value_to_number<int64_t>(i->value);
    if (!n.ok() || n.value() <= 0) return std::nullopt;
    return server_clock::now() + std::chrono::seconds(std::min<int64_t>(n.value(), 365LL * 86400));
}

protocol_engine::protocol_engine(engine_config config, engine_routes routes, kv_store &kvs,
                                 const kvs_rank_store &store, fence_tracker &fences, reply_sink &sink)
    : _cfg(std::move(config)), _routes(std::move(routes)), _kvs(kvs), _store(store), _fences(fences), _sink(sink) {
    _local.assign(_cfg.ntasks, false);
    for (uint32_t r : _cfg.local_ranks)
        if (r < _local.size()) _local[r] = true;
}

// Decode the payload into `m`, or refuse the connection with the reason.
#define ENGINE_DECODE_OR_REFUSE(msg_struct, what)                                                       \
    msg_struct m;                                                                                       \
    if (Status _st = wire::decode_payload(payload, &m, _cfg.max_procs); !_st.ok()) {                   \
        _sink.refuse(c.conn, std::string("malformed ") + (what) + " payload: " + _st.message());         \
        return;                                                                                         \
    }

// ------------------------------------------------------------------------------------------
// Commit

void protocol_engine::commit(const client_ref &c, uint32_t request_id, std::span<const uint8_t> payload) {
    ENGINE_DECODE_OR_REFUSE(wire::commit_request, "commit");
    if (m.scopes.size() != m.infos.size()) {
        _sink.refuse(c.conn, "malformed commit payload: scope count differs from value count");
        return;
    }
    const uint32_t rank = c.rank;
    Status st = _kvs.commit(rank, m.scopes.data(), m.infos.data(), m.infos.size());
    if (!st.ok()) {
        PMIXCPP_LOG_ERROR("%s: commit of rank %u refused: %s", _cfg.nspace.c_str(), rank, st.message().c_str());
        _sink.reply(c.conn, request_id, st.code(), st.message());
        return;
    }
    PMIXCPP_LOG_TRACE("%s: rank %u committed %zu keys", _cfg.nspace.c_str(), rank, m.infos.size());
    _sink.reply(c.conn, request_id, PMIX_SUCCESS, {});
    auto ready = _gets.take_ready(rank, [&](const get_waiter &w) {
        return w.key.empty() || _kvs.has(rank, w.key, _store.relation_of(w.requester, rank));
    });
    for (const auto &w : ready) answer(w);
    _routes.committed(rank);
}

// ------------------------------------------------------------------------------------------
// Fence

std::optional<server_clock::time_point> protocol_engine::remote_deadline(
    std::optional<server_clock::time_point> asked) const {
    auto limit = server_clock::now() + std::chrono::seconds(_cfg.remote_timeout_sec);
    if (!asked || *asked > limit) return limit;
    return asked;
}

void protocol_engine::fence(const client_ref &c, uint32_t request_id, std::span<const uint8_t> payload) {
    ENGINE_DECODE_OR_REFUSE(wire::fence_request, "fence");
    std::vector<uint32_t> ranks;
    for (const auto &p : m.procs) {
        if (strncmp(p.nspace, _cfg.nspace.c_str(), sizeof(p.nspace)) != 0) {
            // Procs of other steps of the job (OpenMPI's MPI_Comm_disconnect): a barrier through
            // the job's rendezvous (connect.h); data is not collected across namespaces.
            _routes.foreign_fence(c.conn, c.rank, request_id, payload);
            return;
        }
        ranks.push_back(p.rank);
    }
    auto participants = _fences.normalise(ranks);
    if (!participants.ok()) {
        _sink.reply(c.conn, request_id, participants.status().code(), participants.status().message());
        return;
    }
    if (c.fences && *c.fences >= kMaxFencesInFlight) {
        _sink.reply(c.conn, request_id, PMIX_ERR_OUT_OF_RESOURCE,
                    "too many fences in flight (" + std::to_string(kMaxFencesInFlight) + " per client)");
        return;
    }
    if (c.fences) ++*c.fences;
    fence_waiter w{c.conn, request_id, c.rank};
    auto deadline = info_deadline(m.infos);
    if (_cfg.multinode) deadline = remote_deadline(deadline);
    // A multi-node fence's completion never comes inside enter() (it is posted: README.md).
    _sink.fence_outcomes(_fences.enter(participants.value(), w, info_flag(m.infos, PMIX_COLLECT_DATA), deadline));
}

// ------------------------------------------------------------------------------------------
// Get: the store, a local rank's commit waited for, the node's topology, direct modex to another
// node, another namespace's data.

// A client may have kMaxWaitingGets Gets waiting; the next one fails at once.
bool protocol_engine::room_for_get(const get_waiter &w) {
    if (_gets.count_of(w.conn) + _routes.remote_waiting(w.conn) < kMaxWaitingGets) return true;
    fail(w, PMIX_ERR_OUT_OF_RESOURCE, "too many Gets waiting (" + std::to_string(kMaxWaitingGets) + " per client)");
    return false;
}

void protocol_engine::get(const client_ref &c, uint32_t request_id, std::span<const uint8_t> payload) {
    ENGINE_DECODE_OR_REFUSE(wire::get_request, "get");
    const char *ns = _cfg.nspace.c_str();
    get_waiter w;
    w.conn = c.conn;
    w.request_id = request_id;
    w.requester = c.rank;
    w.target = m.proc.rank;
    w.key = m.key;
    w.deadline = info_deadline(m.infos);
    const bool immediate = info_flag(m.infos, PMIX_OPTIONAL) || info_flag(m.infos, PMIX_IMMEDIATE);
    const std::string what = m.key.empty() ? std::string("(all data)") : m.key;

    if (strncmp(m.proc.nspace, ns, sizeof(m.proc.nspace)) != 0) {
        _routes.foreign_get(c.conn, request_id, m.proc, m.key, m.infos);
        return;
    }
    if (w.target == PMIX_RANK_WILDCARD && m.key == PMIX_LOCAL_TOPO) {
        _routes.topology(w);
        return;
    }
    if (w.target == PMIX_RANK_WILDCARD) {  // job-level data: present or not, never waits
        if (m.key.empty() || _kvs.has(PMIX_RANK_WILDCARD, m.key, relation::same_node))
            answer(w);
        else
            fail(w, PMIX_ERR_NOT_FOUND, "no job-level key " + m.key + " in " + _cfg.nspace);
        return;
    }
    if (w.target >= _cfg.ntasks) {
        fail(w, PMIX_ERR_NOT_FOUND,
             "rank " + std::to_string(w.target) + " is not in " + _cfg.nspace + " (" + std::to_string(_cfg.ntasks) +
                 " ranks)");
        return;
    }
    if (m.key.empty() || _kvs.has(w.target, m.key, _store.relation_of(w.requester, w.target))) {
        answer(w);
        return;
    }
    if (immediate) {
        fail(w, PMIX_ERR_NOT_FOUND, "rank " + std::to_string(w.target) + " has no " + what);
        return;
    }
    if (is_local(w.target)) {
        const std::string gone = _routes.gone(w.target);
        if (!gone.empty()) {
            fail(w, PMIX_ERR_NOT_FOUND, "rank " + std::to_string(w.target) + " " + gone + " without committing " + what);
            return;
        }
        if (!room_for_get(w)) return;
        PMIXCPP_LOG_TRACE("%s: rank %u waits for %s of rank %u", ns, w.requester, what.c_str(), w.target);
        _gets.add(std::move(w));
        return;
    }
    // The data lives on another node: direct modex. Also for a new key of a rank whose earlier
    // data came with a collecting fence: what we hold may be older than what it committed since.
    if (Status remote = _routes.remote_state(); !remote.ok()) {
        const bool failed = remote.code() != PMIX_ERR_NOT_SUPPORTED;
        fail(w, failed ? remote.code() : PMIX_ERR_NOT_SUPPORTED,
             "rank " + std::to_string(w.target) + " is on another node and the node transport is not running" +
                 (failed ? ": " + remote.message() : std::string()));
        return;
    }
    const uint32_t target_node = _cfg.node_of[w.target];
    if (_routes.node_lost(target_node)) {
        fail(w, PMIX_ERR_NODE_DOWN,
             "rank " + std::to_string(w.target) + " is on node " + _cfg.node_names.at(target_node) + ", which is lost");
        return;
    }
    if (!room_for_get(w)) return;
    PMIXCPP_LOG_TRACE("%s: rank %u waits for %s of remote rank %u", ns, w.requester, what.c_str(), w.target);
    _routes.remote_get(std::move(w));
}

void protocol_engine::answer(const get_waiter &w) {
    auto data = _kvs.visible_data(w.target, _store.relation_of(w.requester, w.target));
    if (!data.ok()) {
        fail(w, data.status().code(), data.status().message());
        return;
    }
    _sink.reply(w.conn, w.request_id, PMIX_SUCCESS, {},
                [&](wire::Writer &wr) { return wire::encode_info_array(wr, data->data(), data->size()); });
}

void protocol_engine::fail(const get_waiter &w, pmix_status_t status, const std::string &message) {
    _sink.reply(w.conn, w.request_id, status, message);
}

void protocol_engine::rank_left(uint32_t rank, bool died) {
    for (const auto &w : _gets.take_target(rank))
        fail(w, PMIX_ERR_NOT_FOUND,
             "rank " + std::to_string(rank) + (died ? " died" : " finalized") + " without committing " + w.key);
}

void protocol_engine::expire(server_clock::time_point now) {
    for (const auto &w : _gets.take_expired(now)) {
        // A Get that times out is an answer the application asked for, not a server error.
        PMIXCPP_LOG_DEBUG("%s: get of %s of rank %u by rank %u timed out", _cfg.nspace.c_str(),
                          w.key.empty() ? "(all data)" : w.key.c_str(), w.target, w.requester);
        fail(w, PMIX_ERR_TIMEOUT, "timed out waiting for rank " + std::to_string(w.target) + " to commit " + w.key);
    }
}

}  // namespace pmixcpp::server
