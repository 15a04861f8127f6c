// The request engine's wiring (requests.h: connect, finalize, abort, log, notify, the snapshot
// asked for again, the requests handed to a service): its configuration, its routes into the
// shell and the services, and a rank's admission (shared with the native route). Commit, fence
// and Get are the protocol engine's (engine.h, get_policy.cc), job control the job-control
// engine's (jctrl_engine.h), monitoring the monitor engine's (monitor_engine.h). Part of the
// server's class (server_impl.h).
#include "server_impl.h"

#include <algorithm>

namespace pmixcpp::server {

std::string server_impl::rank_claim_refusal(const connection &c, uint32_t rank) {
    if (!is_local(rank)) return "rank " + std::to_string(rank) + " is not a rank of this node";
    if (connection *old = find(_rank_conn[rank]); old && old->state != conn_state::finalized)
        return "rank " + std::to_string(rank) + " is already connected";
    if (pid_t was = finalized_pid(rank); was != 0 && was != c.pid)
        return "rank " + std::to_string(rank) + " finalized in pid " + std::to_string(was) +
               ", which still runs: only that process may connect as it again";
    return {};
}

void server_impl::admit_rank(connection &c, uint32_t rank) {
    const char *ns = _step.nspace.c_str();
    // A rank that finalized connects again (PMIx_Init after its last PMIx_Finalize): its old
    // connection, if the server has not seen it close yet, no longer stands for the rank.
    if (connection *old = find(_rank_conn[rank]); old && old != &c) old->rank = PMIX_RANK_UNDEF;
    _finalized.erase(rank);
    c.rank = rank;
    c.state = conn_state::active;
    c.reader.set_max_payload(_opts.max_payload);  // connected: frames up to the configured size
    _rank_conn[rank] = c.id;
    _rank_pid[rank] = c.pid;
    if (_rank_state[rank] != rank_state::not_connected)
        PMIXCPP_LOG_VERBOSE("%s: rank %u connects again (pid %d)", ns, rank, static_cast<int>(c.pid));
    _rank_state[rank] = rank_state::connected;
    _fences.rank_back(rank);
    PMIXCPP_LOG_DEBUG("%s: rank %u connected (pid %d%s)", ns, rank, static_cast<int>(c.pid),
                      c.native ? ", OpenPMIx client" : "");
}

request_config server_impl::make_request_config() const {
    request_config c;
    c.nspace = _step.nspace;
    c.client_token = _step.client_token;
    c.max_procs = max_procs();
    c.cross_step = _opts.agent != nullptr;
    return c;
}

// The routes of the request engine (requests.h) to the shell, the host and the services.
request_routes server_impl::make_request_routes() {
    request_routes r;
    r.claim_refusal = [this](uint64_t conn, uint32_t rank) -> std::string {
        connection *c = find(conn);
        return c ? rank_claim_refusal(*c, rank) : "the connection is gone";
    };
    r.admit = [this](uint64_t conn, uint32_t rank) {
        wire::connect_reply reply;
        connection *c = find(conn);
        if (!c) return reply;
        admit_rank(*c, rank);
        reply.jobdata_path = _jobdata_path;
        reply.jobdata_size = _jobdata_size;
        reply.local_rank = _local_index[rank];
        return reply;
    };
    r.connected = [this](uint32_t rank) { _events->rank_connected(rank); };
    r.finalized = [this](uint64_t conn, uint32_t rank) {
        if (connection *c = find(conn)) c->state = conn_state::finalized;
        if (rank < _rank_state.size()) _rank_state[rank] = rank_state::finalized;
    };
    r.aborting = [this](uint32_t rank, int status, const std::string &message) {
        _events->job_aborting(rank, status, message);
    };
    r.abort = [this](uint32_t rank, int status, const std::string &message, const std::vector<pmix_proc_t> &procs) {
        return _host ? _host->abort(_step.nspace, rank, status, message, procs)
                     : Status(PMIX_ERR_NOT_SUPPORTED, "no host to abort the job");
    };
    r.log = [this](uint32_t rank, const std::string &channel, const std::string &text) {
        if (_host) _host->log(_step.nspace, rank, channel, text);
    };
    r.notify = [this](uint32_t rank, wire::event_notification &&ev) {
        return _events->notify_from_client(rank, std::move(ev));
    };
    r.to_other_steps = [this](xstep::message m) { _xstep->send(std::move(m), "event"); };
    r.alloc = [this](uint64_t conn, uint32_t id, uint32_t rank, wire::alloc_request &&m) {
        _alloc->allocate(conn, id, rank, std::move(m));
    };
    r.query = [this](uint64_t conn, uint32_t id, uint32_t rank, wire::query_request &&m) {
        _alloc->query(conn, id, rank, std::move(m));
    };
    r.group = [this](uint64_t conn, uint32_t id, uint32_t rank, wire::group_request &&m) {
        _groups->on_request(conn, rank, id, std::move(m));
        rearm_timer();
    };
    r.fabric = [this](uint64_t conn, uint32_t id, std::span<const uint8_t> payload) {
        return _fabric->on_client(conn, id, payload);
    };
    return r;
}

}  // namespace pmixcpp::server
