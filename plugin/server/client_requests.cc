// The handlers of pmixcpp's clients' requests that are the shell's own: connect (and the rank's
// admission, shared with the native route), finalize, abort, commit, fence, log, notify, and the
// requests handed to a service as they are (allocation, query, groups, fabric). The Get is
// get_policy.cc's, job control jctrl_requests.cc's, monitoring monitor.cc's. Part of the server's
// class (server_impl.h).
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

void server_impl::handle_connect(connection &c, const wire::Frame &f) {
    DECODE_OR_CLOSE(wire::connect_request, "connect");
    const char *ns = _step.nspace.c_str();
    std::string why;
    if (m.protocol != wire::kClientProtocol)
        why = "client speaks protocol " + std::to_string(m.protocol) + ", server " +
              std::to_string(wire::kClientProtocol);
    else if (m.nspace != _step.nspace)
        why = "unknown namespace '" + m.nspace + "'";
    else if (m.token.size() != _step.client_token.size() ||
             !std::equal(m.token.begin(), m.token.end(), _step.client_token.begin()))
        why = "wrong step token";
    else
        why = rank_claim_refusal(c, m.rank);
    if (!why.empty()) {
        PMIXCPP_LOG_ERROR("%s: refusing client pid %d (uid %u) claiming rank %u: %s", ns, static_cast<int>(c.pid),
                          static_cast<unsigned>(c.uid), m.rank, why.c_str());
        c.close_after_flush = true;
        send_reply(c.id, f.id, PMIX_ERR_NO_PERMISSIONS, why);
        return;
    }
    admit_rank(c, m.rank);
    wire::connect_reply r;
    r.jobdata_path = _jobdata_path;
    r.jobdata_size = _jobdata_size;
    r.local_rank = _local_index[m.rank];
    send_reply(c.id, f.id, PMIX_SUCCESS, {}, [&](wire::Writer &w) { return wire::encode(w, r); });
    _events->rank_connected(m.rank);  // cached events in its range, after the connect reply
}

void server_impl::handle_finalize(connection &c, const wire::Frame &f) {
    DECODE_OR_CLOSE(wire::finalize_request, "finalize");
    PMIXCPP_LOG_DEBUG("%s: rank %u finalized", _step.nspace.c_str(), c.rank);
    c.state = conn_state::finalized;
    // Gone for new fences and Gets from now on; for those in flight only once its process exits
    // without connecting again (watch_finalized).
    _rank_state[c.rank] = rank_state::finalized;
    send_reply(c.id, f.id, PMIX_SUCCESS, {});
}

void server_impl::handle_abort(connection &c, const wire::Frame &f) {
    DECODE_OR_CLOSE(wire::abort_request, "abort");
    PMIXCPP_LOG_ERROR("%s: rank %u (pid %d) called PMIx_Abort(status %d, %zu procs): %s", _step.nspace.c_str(),
                      c.rank, static_cast<int>(c.pid), m.status, m.procs.size(), m.message.c_str());
    _events->job_aborting(c.rank, m.status, m.message);  // queued before the host starts killing
    Status st = _host ? _host->abort(_step.nspace, c.rank, m.status, m.message, m.procs)
                      : Status(PMIX_ERR_NOT_SUPPORTED, "no host to abort the job");
    if (!st.ok())
        PMIXCPP_LOG_ERROR("%s: abort requested by rank %u failed: %s", _step.nspace.c_str(), c.rank,
                          st.message().c_str());
    send_reply(c.id, f.id, st.ok() ? PMIX_SUCCESS : st.code(), st.message());
}

void server_impl::handle_log(connection &c, const wire::Frame &f) {
    DECODE_OR_CLOSE(wire::log_request, "log");
    size_t forwarded = 0, dropped = 0;
    for (size_t i = 0; i < m.data.size(); ++i) {
        std::string key = key_of(m.data[i]);
        std::string text = value_text(m.data[i].value);
        if (text.empty()) continue;
        if (key == PMIX_LOG_MSG || key == PMIX_LOG_STDERR || key == PMIX_LOG_STDOUT || key == PMIX_LOG_SYSLOG ||
            key == PMIX_LOG_LOCAL_SYSLOG || key == PMIX_LOG_GLOBAL_SYSLOG) {
            ++forwarded;
            // Cut, escaped and rate-limited (log_gate.h): the job writes one line per message
            // into slurmd's log, never a line of slurmd's own, never without bound.
            auto v = _log_gate.admit(text);
            if (v.summary) PMIXCPP_LOG_ERROR("%s: %s", _step.nspace.c_str(), v.summary->c_str());  // the admin should know
            if (!v.pass) {
                ++dropped;
                continue;
            }
            if (_host) _host->log(_step.nspace, c.rank, key, v.text);
        }
    }
    if (forwarded == 0) {
        send_reply(c.id, f.id, PMIX_ERR_NOT_SUPPORTED, "no log data the server can forward");
        return;
    }
    if (dropped == forwarded) {
        send_reply(c.id, f.id, PMIX_ERR_OUT_OF_RESOURCE, "the step's log rate limit is reached: message dropped");
        return;
    }
    send_reply(c.id, f.id, PMIX_SUCCESS, {});
}

void server_impl::handle_notify(connection &c, const wire::Frame &f) {
    DECODE_OR_CLOSE(wire::event_notification, "notify");
    // Only the originating server hands an event to the other steps: what arrives from another
    // node or step is never sent on.
    xstep::message out;
    out.what = xstep::op::event;
    bool cross = false;
    // A spawn's process sets are the servers' to announce to other steps (server_impl::adopt_pset_event):
    // a client's event of that kind stays in its step.
    const pmix_info_t *pset = (m.status == PMIX_PROCESS_SET_DEFINE || m.status == PMIX_PROCESS_SET_DELETE)
                                  ? find_info(m.infos, PMIX_PSET_NAME)
                                  : nullptr;
    const bool ours = pset != nullptr && pset->value.type == PMIX_STRING && pset->value.data.string != nullptr &&
                      strncmp(pset->value.data.string, "pmixcpp://", 10) == 0;
    if (_opts.agent && !ours && reaches_other_steps(m, _step.nspace, &out.nspaces)) {
        wire::Writer w;
        cross = wire::encode(w, m).ok();
        out.payload = w.data();
    }
    Status st = _events->notify_from_client(c.rank, std::move(m));
    if (!st.ok())
        PMIXCPP_LOG_VERBOSE("%s: notify from rank %u refused: %s", _step.nspace.c_str(), c.rank, st.message().c_str());
    else if (cross)
        _xstep->send(std::move(out), "event");
    send_reply(c.id, f.id, st.ok() ? PMIX_SUCCESS : st.code(), st.message());
}

void server_impl::handle_alloc(connection &c, const wire::Frame &f) {
    DECODE_OR_CLOSE(wire::alloc_request, "alloc");
    _alloc->allocate(c.id, f.id, c.rank, std::move(m));
}

// PMIx_Group_* (groups.h): construct / destruct / join as one collective of the members' servers.
void server_impl::handle_group(connection &c, const wire::Frame &f) {
    DECODE_OR_CLOSE(wire::group_request, "group");
    _groups->on_request(c.id, c.rank, f.id, std::move(m));
    rearm_timer();
}

void server_impl::handle_query(connection &c, const wire::Frame &f) {
    DECODE_OR_CLOSE(wire::query_request, "query");
    _alloc->query(c.id, f.id, c.rank, std::move(m));
}

// PMIx_Fabric_register/update (fabric_relay.h).
void server_impl::handle_fabric(connection &c, const wire::Frame &f) {
    if (Status st = _fabric->on_client(c.id, f.id, f.payload); !st.ok())
        close_connection(c.id, "malformed fabric payload: " + st.message());
}

}  // namespace pmixcpp::server
