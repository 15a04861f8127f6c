#include "xstep_relay.h"

#include "log.h"
#include "wire/codec.h"

namespace pmixcpp::server {

xstep_relay::xstep_relay(const step_info &step, uint32_t timeout_sec, xstep_relay_ops ops)
    : _nspace(step.nspace), _node_name(step.node_name()), _timeout_sec(timeout_sec), _ops(std::move(ops)) {
    _local.assign(step.ntasks, false);
    for (uint32_t r : step.local_ranks())
        if (r < _local.size()) _local[r] = true;
}

void xstep_relay::send(xstep::message m, const char *what) {
    if (!_ops.send) return;  // no other steps to reach
    auto body = xstep::encode(m);
    if (!body.ok()) {
        PMIXCPP_LOG_ERROR("%s: cross-step %s: %s", _nspace.c_str(), what, body.status().message().c_str());
        return;
    }
    std::string ns = _nspace;
    std::string tag = what;
    _ops.send(std::move(body.value()), 15000, [ns, tag](int status, const std::string &message, std::vector<uint8_t>) {
        if (status != PMIX_SUCCESS)
            PMIXCPP_LOG_VERBOSE("%s: cross-step %s: %s (status %d)", ns.c_str(), tag.c_str(), message.c_str(), status);
    });
}

void xstep_relay::on_item(const xstep::inbox_item &item, time_point now) {
    xstep::message m;
    Status st = xstep::decode(item.body, &m);
    if (st.ok() && m.what == xstep::op::get && item.id == 0) st = Status(PMIX_ERR_BAD_PARAM, "get without an id");
    if (st.ok() && m.what != xstep::op::get && m.what != xstep::op::event && m.what != xstep::op::jobctl)
        st = Status(PMIX_ERR_BAD_PARAM, std::string("unexpected ") + xstep::to_string(m.what));
    if (st.ok() && m.what == xstep::op::jobctl && m.nspace != _nspace)
        st = Status(PMIX_ERR_BAD_PARAM, "job control of " + m.nspace);
    if (!st.ok()) {
        PMIXCPP_LOG_ERROR("%s: dropped a message of another step: %s", _nspace.c_str(), st.message().c_str());
        return;
    }
    if (m.what == xstep::op::jobctl) {  // our local ranks among the targets
        _ops.job_control(m.ranks, m.signal, m.terminate);
        return;
    }
    if (m.what == xstep::op::event) {  // to our local ranks in range; never sent on
        if (Status s = _ops.event(m.payload); !s.ok())
            PMIXCPP_LOG_VERBOSE("%s: event of another step: %s", _nspace.c_str(), s.message().c_str());
        return;
    }
    // Direct modex of one of our ranks for another step: as for another node of ours.
    uint64_t local = _next++;
    const relation rel = m.from_node == _node_name ? relation::same_node : relation::other_node;
    _pending[local] = {item.id, rel};
    get_waiter w;
    w.conn = local;
    w.request_id = 0;
    w.requester = PMIX_RANK_UNDEF;
    w.target = m.rank;
    w.key = m.key;
    const std::string what = m.key.empty() ? std::string("anything") : m.key;
    if (m.rank == PMIX_RANK_WILDCARD && m.key == xstep::kJobdataKey && m.nspace == _nspace && _ops.jobdata) {
        // The step's job data (another step's server gives it to an OpenPMIx client that
        // spawned this step): known from the start, answered now.
        xstep::message a;
        a.what = xstep::op::answer;
        a.id = item.id;
        auto bytes = _ops.jobdata();
        a.status = bytes.ok() ? PMIX_SUCCESS : bytes.status().code();
        if (bytes.ok()) a.payload = std::move(bytes.value());
        else a.text = _nspace + ": " + bytes.status().message();
        _pending.erase(local);
        PMIXCPP_LOG_DEBUG("%s: the job data asked for by %s", _nspace.c_str(), m.from_nspace.c_str());
        send(std::move(a), "answer");
        return;
    }
    if (m.nspace != _nspace || !is_local(m.rank)) {
        answer(w, std::make_pair(PMIX_ERR_NOT_FOUND,
                                 "rank " + std::to_string(m.rank) + " is not served by node " + _node_name));
        return;
    }
    if (_ops.has(m.rank, m.key, rel)) {
        answer(w, std::nullopt);
        return;
    }
    std::string gone = _ops.gone(m.rank);
    if (!gone.empty()) {
        answer(w, std::make_pair(PMIX_ERR_NOT_FOUND,
                                 "rank " + std::to_string(m.rank) + " " + gone + " without committing " + what));
        return;
    }
    PMIXCPP_LOG_TRACE("%s: %s:* waits for %s of rank %u", _nspace.c_str(), m.from_nspace.c_str(), what.c_str(), m.rank);
    w.deadline = m.timeout_ms > 0 ? now + std::chrono::milliseconds(m.timeout_ms) : now + std::chrono::seconds(_timeout_sec);
    _gets.add(std::move(w));  // answered when the rank commits the key
}

void xstep_relay::answer(const get_waiter &w, const std::optional<std::pair<pmix_status_t, std::string>> &failure) {
    auto it = _pending.find(w.conn);
    if (it == _pending.end()) return;
    xstep::message m;
    m.what = xstep::op::answer;
    m.id = it->second.srun_id;
    if (failure) {
        m.status = failure->first;
        m.text = _nspace + ": " + failure->second;
    } else {
        auto data = _ops.data(w.target, it->second.rel);
        wire::Writer wr;
        Status st = data.ok() ? wire::encode_info_array(wr, data->data(), data->size()) : data.status();
        m.status = st.ok() ? PMIX_SUCCESS : st.code();
        m.text = st.message();
        if (st.ok()) m.payload = wr.data();
    }
    _pending.erase(it);
    PMIXCPP_LOG_DEBUG("%s: cross-step get of %s of rank %u %s%s", _nspace.c_str(),
                      w.key.empty() ? "(all data)" : w.key.c_str(), w.target, failure ? "failed: " : "answered",
                      failure ? failure->second.c_str() : "");
    send(std::move(m), "answer");
}

void xstep_relay::rank_committed(uint32_t rank) {
    auto ready = _gets.take_ready(rank, [&](const get_waiter &w) {
        auto it = _pending.find(w.conn);
        return w.key.empty() || (it != _pending.end() && _ops.has(rank, w.key, it->second.rel));
    });
    for (const auto &w : ready) answer(w, std::nullopt);
}

void xstep_relay::rank_left(uint32_t rank, bool died) {
    for (const auto &w : _gets.take_target(rank))
        answer(w, std::make_pair(PMIX_ERR_NOT_FOUND, "rank " + std::to_string(rank) + (died ? " died" : " finalized") +
                                                         " without committing " + w.key));
}

void xstep_relay::expire(time_point now) {
    for (const auto &w : _gets.take_expired(now)) {
        // A Get that times out is an answer the application asked for, not a server error.
        PMIXCPP_LOG_DEBUG("%s: get of %s of rank %u by rank %u timed out", _nspace.c_str(),
                          w.key.empty() ? "(all data)" : w.key.c_str(), w.target, w.requester);
        answer(w, std::make_pair(PMIX_ERR_TIMEOUT,
                                 "timed out waiting for rank " + std::to_string(w.target) + " to commit " + w.key));
    }
}

}  // namespace pmixcpp::server
