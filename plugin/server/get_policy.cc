// The Get policy's wiring: the protocol engine's configuration and routes (engine.h: the policy
// itself, what a Get is answered with, when and from where), and the ops of direct modex (dmodex.h), whose waiting Gets the engine answers. Part
// of the server's class (server_impl.h).
#include "server_impl.h"

namespace pmixcpp::server {

engine_config server_impl::make_engine_config() const {
    engine_config c;
    c.nspace = _step.nspace;
    c.ntasks = _step.ntasks;
    c.node_names = _step.node_names;
    c.node_of = _node_of;
    c.local_ranks = _step.local_ranks();
    c.max_procs = max_procs();
    c.multinode = _multinode;
    c.remote_timeout_sec = _opts.multinode.timeout_sec;
    return c;
}

// The routes of the protocol engine (engine.h) to the rest of the server.
engine_routes server_impl::make_engine_routes() {
    engine_routes r;
    // What PMIx_Connect brought, else direct modex from the proc's step (connect.h).
    r.foreign_get = [this](uint64_t conn, uint32_t id, const pmix_proc_t &proc, const std::string &key,
                           const InfoArray &infos) { _dyn->foreign_get(conn, id, proc, key, infos); };
    r.foreign_fence = [this](uint64_t conn, uint32_t rank, uint32_t id, std::span<const uint8_t> payload) {
        _dyn->on_connect(conn, rank, id, connect_op::fence, payload);
    };
    r.topology = [this](const get_waiter &w) { _topology->get(w); };
    r.remote_state = [this]() -> Status {
        if (!_net_error.empty()) return Status(PMIX_ERR_UNREACH, _net_error);
        if (!_multinode || !_net) return Status(PMIX_ERR_NOT_SUPPORTED, "no node transport");
        return Status::success();
    };
    r.node_lost = [this](uint32_t node) { return node_is_lost(node); };
    r.remote_get = [this](get_waiter w) { _dmodex->get(std::move(w), server_clock::now()); };
    r.remote_waiting = [this](uint64_t conn) { return _dmodex->waiting_of(conn); };
    r.gone = [this](uint32_t rank) -> std::string {
        if (rank >= _rank_state.size()) return {};
        if (_rank_state[rank] == rank_state::died) return "died";
        if (_rank_state[rank] == rank_state::finalized) return "finalized";
        return {};
    };
    r.committed = [this](uint32_t rank) {
        _dmodex->rank_committed(rank);
        _xstep->rank_committed(rank);
    };
    return r;
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
