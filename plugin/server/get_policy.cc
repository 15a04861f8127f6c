// The Get policy of pmixcpp's clients: what a Get is answered with, when and from where (the
// store, a local rank's commit it waits for, the node's topology, direct modex from another node,
// the data of another step); the modex snapshot a client asks for again; the ops of direct modex
// (dmodex.h), whose waiting Gets are answered here. Part of the server's class (server_impl.h).
#include "server_impl.h"

namespace pmixcpp::server {

// A client may have kMaxWaitingGets Gets waiting; the next one fails at once.
bool server_impl::room_for_get(const get_waiter &w) {
    if (_gets.count_of(w.conn) + _dmodex->waiting_of(w.conn) < kMaxWaitingGets) return true;
    fail_get(w, PMIX_ERR_OUT_OF_RESOURCE,
             "too many Gets waiting (" + std::to_string(kMaxWaitingGets) + " per client)");
    return false;
}

void server_impl::handle_get(connection &c, const wire::Frame &f) {
    DECODE_OR_CLOSE(wire::get_request, "get");
    const char *ns = _step.nspace.c_str();
    get_waiter w;
    w.conn = c.id;
    w.request_id = f.id;
    w.requester = c.rank;
    w.target = m.proc.rank;
    w.key = m.key;
    w.deadline = info_deadline(m.infos);
    const bool immediate = info_flag(m.infos, PMIX_OPTIONAL) || info_flag(m.infos, PMIX_IMMEDIATE);
    const std::string what = m.key.empty() ? std::string("(all data)") : m.key;

    if (strncmp(m.proc.nspace, _step.nspace.c_str(), sizeof(m.proc.nspace)) != 0) {
        // What PMIx_Connect brought, else direct modex from the proc's step (connect.h).
        _dyn->foreign_get(c.id, f.id, m.proc, m.key, m.infos);
        return;
    }
    if (w.target == PMIX_RANK_WILDCARD && m.key == PMIX_LOCAL_TOPO) {
        get_topology(w);
        return;
    }
    if (w.target == PMIX_RANK_WILDCARD) {  // job-level data: present or not, never waits
        if (m.key.empty() || _kvs.has(PMIX_RANK_WILDCARD, m.key, relation::same_node))
            answer_get(w);
        else
            fail_get(w, PMIX_ERR_NOT_FOUND, "no job-level key " + m.key + " in " + _step.nspace);
        return;
    }
    if (w.target >= _step.ntasks) {
        fail_get(w, PMIX_ERR_NOT_FOUND,
                 "rank " + std::to_string(w.target) + " is not in " + _step.nspace + " (" +
                     std::to_string(_step.ntasks) + " ranks)");
        return;
    }
    relation rel = relation_of(w.requester, w.target);
    if (m.key.empty() || _kvs.has(w.target, m.key, rel)) {
        answer_get(w);
        return;
    }
    if (immediate) {
        fail_get(w, PMIX_ERR_NOT_FOUND, "rank " + std::to_string(w.target) + " has no " + what);
        return;
    }
    if (is_local(w.target)) {
        rank_state rs = _rank_state[w.target];
        if (rs == rank_state::finalized || rs == rank_state::died) {
            fail_get(w, PMIX_ERR_NOT_FOUND,
                     "rank " + std::to_string(w.target) + (rs == rank_state::died ? " died" : " finalized") +
                         " without committing " + what);
            return;
        }
        if (!room_for_get(w)) return;
        PMIXCPP_LOG_TRACE("%s: rank %u waits for %s of rank %u", ns, w.requester, what.c_str(), w.target);
        _gets.add(std::move(w));
        return;
    }
    // The data lives on another node: direct modex. Also for a new key of a rank whose earlier
    // data came with a collecting fence: what we hold may be older than what it committed since.
    if (!_multinode || !_net || !_net_error.empty()) {
        fail_get(w, _net_error.empty() ? PMIX_ERR_NOT_SUPPORTED : PMIX_ERR_UNREACH,
                 "rank " + std::to_string(w.target) + " is on another node and the node transport is not running" +
                     (_net_error.empty() ? std::string() : ": " + _net_error));
        return;
    }
    uint32_t target_node = _node_of[w.target];
    if (node_is_lost(target_node)) {
        fail_get(w, PMIX_ERR_NODE_DOWN,
                 "rank " + std::to_string(w.target) + " is on node " + _step.node_names.at(target_node) + ", which is lost");
        return;
    }
    if (!room_for_get(w)) return;
    PMIXCPP_LOG_TRACE("%s: rank %u waits for %s of remote rank %u", ns, w.requester, what.c_str(), w.target);
    _dmodex->get(std::move(w), server_clock::now());
}

void server_impl::answer_get(const get_waiter &w) {
    relation rel = relation_of(w.requester, w.target);
    uint32_t data_rank = w.target;
    auto data = _kvs.visible_data(data_rank, rel);
    if (!data.ok()) {
        fail_get(w, data.status().code(), data.status().message());
        return;
    }
    send_reply(w.conn, w.request_id, PMIX_SUCCESS, {}, [&](wire::Writer &wr) {
        return wire::encode_info_array(wr, data->data(), data->size());
    });
}

void server_impl::fail_get(const get_waiter &w, pmix_status_t status, const std::string &message) {
    send_reply(w.conn, w.request_id, status, message);
}

// The modex snapshot of the node's data as it is now, with its file's descriptor: asked for by a
// client's Get after a collecting fence whose reply it could not use (no snapshot made, or the
// file's descriptor did not reach it).
void server_impl::handle_snapshot(connection &c, const wire::Frame &f) {
    if (!f.payload.empty()) {
        close_connection(c.id, "malformed snapshot request: unexpected payload");
        return;
    }
    auto made = _snapshots->write(_kvs);
    if (!made.ok()) {
        PMIXCPP_LOG_WARNING("%s: %s", _step.nspace.c_str(), made.status().message().c_str());
        send_reply(c.id, f.id, made.status().code(), made.status().message());
        return;
    }
    send_snapshot_reply(c.id, f.id, &made.value(), /*resend=*/true);
}

dmodex_config server_impl::make_dmodex_config() const {
    dmodex_config c;
    c.nspace = _step.nspace;
    c.self_node = _step.node_id;
    c.node_names = _step.node_names;
    c.node_of = _node_of;
    c.local_ranks = _step.local_ranks();
    c.timeout_sec = _opts.multinode.timeout_sec;
    c.whole_node = _opts.multinode.dmodex_node;
    return c;
}

dmodex_ops server_impl::make_dmodex_ops() {
    dmodex_ops o;
    o.send_request = [this](uint32_t node, std::vector<uint8_t> body) {
        send_node(node, node_channel::dmodex_request, body);
    };
    o.send_reply = [this](uint32_t node, std::vector<uint8_t> body) {
        send_node(node, node_channel::dmodex_reply, body);
    };
    o.answer = [this](const get_waiter &w) { answer_get(w); };
    o.fail = [this](const get_waiter &w, pmix_status_t status, const std::string &message) {
        fail_get(w, status, message);
    };
    // The requests of one round of client messages go out together, one message per node.
    o.defer = [this](std::function<void()> fn) { post(std::move(fn)); };
    o.gone = [this](uint32_t rank) -> std::string {
        if (rank >= _rank_state.size()) return {};
        if (_rank_state[rank] == rank_state::died) return "died";
        if (_rank_state[rank] == rank_state::finalized) return "finalized";
        return {};
    };
    return o;
}

}  // namespace pmixcpp::server
