#include "events.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "log.h"
#include "value.h"
#include "wire/frame.h"

namespace pmixcpp::server {

namespace {

void sort_unique(std::vector<uint32_t> &v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
}


const char *range_name(uint8_t r) {
    switch (r) {
    case PMIX_RANGE_UNDEF: return "undef";
    case PMIX_RANGE_RM: return "rm";
    case PMIX_RANGE_LOCAL: return "local";
    case PMIX_RANGE_NAMESPACE: return "namespace";
    case PMIX_RANGE_SESSION: return "session";
    case PMIX_RANGE_GLOBAL: return "global";
    case PMIX_RANGE_CUSTOM: return "custom";
    case PMIX_RANGE_PROC_LOCAL: return "proc-local";
    }
    return "invalid";
}

}  // namespace

bool reaches_other_steps(const wire::event_notification &ev, const std::string &own_nspace,
                         std::vector<std::string> *nspaces) {
    nspaces->clear();
    if (ev.range == PMIX_RANGE_SESSION || ev.range == PMIX_RANGE_GLOBAL) return true;
    if (ev.range != PMIX_RANGE_CUSTOM) return false;
    const pmix_info_t *cr = find_info(ev.infos, PMIX_EVENT_CUSTOM_RANGE);
    for (const auto &p : cr ? procs_of(cr->value) : std::vector<pmix_proc_t>{}) {
        std::string ns(p.nspace, strnlen(p.nspace, PMIX_MAX_NSLEN + 1));
        if (!ns.empty() && ns != own_nspace && std::find(nspaces->begin(), nspaces->end(), ns) == nspaces->end())
            nspaces->push_back(ns);
    }
    return !nspaces->empty();
}

event_engine::event_engine(const step_info &step, event_ops ops, size_t cache_capacity)
    : _step(step), _ops(std::move(ops)), _capacity(cache_capacity) {
    _node_of.assign(step.ntasks, UINT32_MAX);
    for (uint32_t n = 0; n < step.node_ranks.size(); ++n)
        for (uint32_t r : step.node_ranks[n])
            if (r < step.ntasks) _node_of[r] = n;
}

bool event_engine::in_step(const pmix_proc_t &p) const {
    return strncmp(p.nspace, _step.nspace.c_str(), PMIX_MAX_NSLEN) == 0;
}

Result<event_targets> event_engine::route(const wire::event_notification &ev, bool from_remote) const {
    event_targets t;
    auto all_local = [&] {
        const auto &l = _step.local_ranks();
        t.local_ranks.insert(t.local_ranks.end(), l.begin(), l.end());
    };
    auto all_nodes = [&] {
        for (uint32_t n = 0; n < _step.node_ranks.size(); ++n)
            if (n != _step.node_id && !_step.node_ranks[n].empty()) t.nodes.push_back(n);
    };
    switch (ev.range) {
    case PMIX_RANGE_PROC_LOCAL:
        return Status(PMIX_ERR_BAD_PARAM, "PMIX_RANGE_PROC_LOCAL events never leave the process");
    case PMIX_RANGE_RM: break;
    case PMIX_RANGE_LOCAL:
        if (!from_remote) all_local();
        break;
    case PMIX_RANGE_UNDEF:
    case PMIX_RANGE_NAMESPACE:
    case PMIX_RANGE_SESSION:
    case PMIX_RANGE_GLOBAL:
        all_local();
        all_nodes();
        break;
    case PMIX_RANGE_CUSTOM: {
        const pmix_info_t *cr = find_info(ev.infos, PMIX_EVENT_CUSTOM_RANGE);
        auto procs = cr ? procs_of(cr->value) : std::vector<pmix_proc_t>{};
        if (procs.empty())
            return Status(PMIX_ERR_BAD_PARAM, "PMIX_RANGE_CUSTOM needs PMIX_EVENT_CUSTOM_RANGE with procs");
        for (const auto &p : procs) {
            if (!in_step(p)) continue;
            if (p.rank == PMIX_RANK_WILDCARD) {
                all_local();
                all_nodes();
            } else if (p.rank < _step.ntasks) {
                if (local(p.rank))
                    t.local_ranks.push_back(p.rank);
                else if (_node_of[p.rank] != UINT32_MAX)
                    t.nodes.push_back(_node_of[p.rank]);
            }
        }
        break;
    }
    default: return Status(PMIX_ERR_BAD_PARAM, "invalid range " + std::to_string(ev.range));
    }
    if (from_remote) t.nodes.clear();
    sort_unique(t.local_ranks);
    sort_unique(t.nodes);
    return t;
}

Status event_engine::deliver(wire::event_notification &ev, bool from_remote) {
    auto targets = route(ev, from_remote);
    PMIXCPP_RETURN_IF_ERROR(targets);
    ++_stats.routed;
    ev.id = _next_id++;
    if (ev.range == PMIX_RANGE_RM)
        PMIXCPP_LOG_VERBOSE("%s: event %d for the resource manager from %s:%u", _step.nspace.c_str(), ev.status,
                            ev.source.nspace, ev.source.rank);
    wire::Writer w;
    PMIXCPP_RETURN_IF_ERROR(wire::encode(w, ev), "event");
    if (!targets->nodes.empty() && _ops.remote != nullptr) {
        for (uint32_t n : targets->nodes) {
            _ops.remote->forward_event(n, w.data());
            ++_stats.forwarded;
        }
    }
    if (targets->local_ranks.empty()) return Status::success();
    auto frame = wire::encode_frame(static_cast<uint16_t>(wire::msg_type::event), 0, 0, w.data());
    PMIXCPP_RETURN_IF_ERROR(frame, "event");
    cached_event c;
    c.id = ev.id;
    for (uint32_t r : targets->local_ranks) {
        bool sent = _ops.send_to_rank && _ops.send_to_rank(r, frame.value());
        if (sent)
            ++_stats.delivered;
        else {
            ++_stats.dropped;
            c.pending.push_back(r);
        }
    }
    if (_capacity > 0 && !info_flag(ev.infos, PMIX_EVENT_DO_NOT_CACHE)) {
        c.frame = std::move(frame.value());
        _cache.push_back(std::move(c));
        while (_cache.size() > _capacity) _cache.pop_front();
    }
    PMIXCPP_LOG_TRACE("%s: event %d (range %s) from %s:%u: %zu local ranks, %zu nodes", _step.nspace.c_str(),
                      ev.status, range_name(ev.range), ev.source.nspace, ev.source.rank, targets->local_ranks.size(),
                      targets->nodes.size());
    return Status::success();
}

Status event_engine::notify_from_client(uint32_t rank, wire::event_notification &&ev) {
    (void)rank;
    return deliver(ev, false);
}

Status event_engine::add_channels(node_channels &table) {
    return table.add(node_channel::event, "event", [this](uint32_t from, std::span<const uint8_t> body) {
        Status st = from_remote(body);
        if (!st.ok())
            PMIXCPP_LOG_ERROR("%s: event from node %u dropped: %s", _step.nspace.c_str(), from, st.message().c_str());
    });
}

Status event_engine::from_remote(std::span<const uint8_t> payload) {
    wire::event_notification ev;
    PMIXCPP_RETURN_IF_ERROR(wire::decode_payload(payload, &ev), "event from another node");
    return deliver(ev, true);
}

void event_engine::rank_connected(uint32_t rank) {
    for (auto &c : _cache) {
        auto it = std::find(c.pending.begin(), c.pending.end(), rank);
        if (it == c.pending.end()) continue;
        if (_ops.send_to_rank && _ops.send_to_rank(rank, c.frame)) {
            ++_stats.replayed;
            c.pending.erase(it);
        }
    }
}

Status event_engine::raise(pmix_status_t status, pmix_data_range_t range, std::vector<pmix_info_t> infos) {
    auto *array = static_cast<pmix_info_t *>(calloc(infos.size(), sizeof(pmix_info_t)));
    if (array == nullptr) {
        for (auto &i : infos) info_destruct(&i);
        return Status(PMIX_ERR_NOMEM, "out of memory");
    }
    std::copy(infos.begin(), infos.end(), array);
    wire::event_notification ev;
    ev.infos = InfoArray(array, infos.size());
    ev.status = status;
    strncpy(ev.source.nspace, _step.nspace.c_str(), PMIX_MAX_NSLEN);
    ev.source.rank = PMIX_RANK_UNDEF;
    ev.range = range;
    return deliver(ev, false);
}

void event_engine::generate(pmix_status_t status, uint32_t affected_rank, std::vector<pmix_info_t> extra,
                            bool non_default) {
    pmix_proc_t affected{};
    strncpy(affected.nspace, _step.nspace.c_str(), PMIX_MAX_NSLEN);
    affected.rank = affected_rank;
    extra.insert(extra.begin(), make_info(PMIX_EVENT_AFFECTED_PROC, &affected, PMIX_PROC));
    if (non_default) {
        bool t = true;
        extra.push_back(make_info(PMIX_EVENT_NON_DEFAULT, &t, PMIX_BOOL));
    }
    Status st = raise(status, PMIX_RANGE_NAMESPACE, std::move(extra));
    if (!st.ok())
        PMIXCPP_LOG_ERROR("%s: cannot send event %d about rank %u: %s", _step.nspace.c_str(), status, affected_rank,
                          st.message().c_str());
}

void event_engine::rank_terminated(uint32_t rank, bool finalized) {
    if (finalized && !_normal_termination) return;
    pmix_status_t term = finalized ? PMIX_SUCCESS : PMIX_ERR_PROC_ABORTED;
    if (!finalized) {
        std::string text = "rank " + std::to_string(rank) + " on node " + _step.node_name() +
                           " terminated without calling PMIx_Finalize";
        generate(PMIX_ERR_PROC_ABORTED, rank,
                 {make_info(PMIX_PROC_TERM_STATUS, &term, PMIX_STATUS),
                  make_info(PMIX_EVENT_TEXT_MESSAGE, text.c_str(), PMIX_STRING)},
                 false);
    }
    generate(PMIX_EVENT_PROC_TERMINATED, rank, {make_info(PMIX_PROC_TERM_STATUS, &term, PMIX_STATUS)}, true);
}

void event_engine::time_limit_alert(uint32_t seconds_left) {
    std::string text = "the job reaches its time limit in " + std::to_string(seconds_left) + " s";
    Status st = raise(PMIX_JCTRL_PREEMPT_ALERT, PMIX_RANGE_LOCAL,
                      {make_info(PMIX_EVENT_TEXT_MESSAGE, text.c_str(), PMIX_STRING),
                       make_info(PMIX_TIME_REMAINING, &seconds_left, PMIX_UINT32)});
    if (!st.ok()) PMIXCPP_LOG_ERROR("%s: cannot send the time-limit alert: %s", _step.nspace.c_str(), st.message().c_str());
    else PMIXCPP_LOG_VERBOSE("%s: %s", _step.nspace.c_str(), text.c_str());
}

void event_engine::fabric_updated(const std::string &plane) {
    const char *text = "the fabric changed: PMIx_Fabric_update shows the new cost matrix";
    Status st = raise(PMIX_FABRIC_UPDATED, PMIX_RANGE_LOCAL,
                      {make_info(PMIX_FABRIC_PLANE, plane.c_str(), PMIX_STRING),
                       make_info(PMIX_EVENT_TEXT_MESSAGE, text, PMIX_STRING)});
    if (!st.ok()) PMIXCPP_LOG_ERROR("%s: cannot send the fabric update: %s", _step.nspace.c_str(), st.message().c_str());
    else PMIXCPP_LOG_VERBOSE("%s: %s (plane %s)", _step.nspace.c_str(), text, plane.c_str());
}

void event_engine::checkpoint_requested(uint32_t rank, pmix_status_t code, const std::string &why) {
    pmix_proc_t who{};
    strncpy(who.nspace, _step.nspace.c_str(), PMIX_MAX_NSLEN);
    who.rank = rank;
    Status st = raise(code, PMIX_RANGE_CUSTOM,
                      {make_info(PMIX_EVENT_CUSTOM_RANGE, &who, PMIX_PROC),
                       make_info(PMIX_EVENT_AFFECTED_PROC, &who, PMIX_PROC),
                       make_info(PMIX_EVENT_TEXT_MESSAGE, why.c_str(), PMIX_STRING)});
    if (!st.ok())
        PMIXCPP_LOG_ERROR("%s: cannot send the checkpoint request to rank %u: %s", _step.nspace.c_str(), rank,
                          st.message().c_str());
}

void event_engine::monitor_tripped(uint32_t rank, pmix_status_t code, const std::string &id, uint32_t silent_sec) {
    std::string text = "rank " + std::to_string(rank) + " on node " + _step.node_name() + " sent no heartbeat for " +
                       std::to_string(silent_sec) + " s" + (id.empty() ? std::string() : " (monitor " + id + ")");
    PMIXCPP_LOG_VERBOSE("%s: %s", _step.nspace.c_str(), text.c_str());
    generate(code, rank,
             {make_info(PMIX_MONITOR_ID, id.c_str(), PMIX_STRING),
              make_info(PMIX_EVENT_TEXT_MESSAGE, text.c_str(), PMIX_STRING)},
             false);
}

void event_engine::node_down(uint32_t node, const std::string &why) {
    if (node >= _step.node_ranks.size() || node == _step.node_id) return;
    const auto &ranks = _step.node_ranks[node];
    std::vector<pmix_proc_t> procs(ranks.size());
    for (size_t i = 0; i < ranks.size(); ++i) {
        strncpy(procs[i].nspace, _step.nspace.c_str(), PMIX_MAX_NSLEN);
        procs[i].rank = ranks[i];
    }
    pmix_data_array_t darray{};
    darray.type = PMIX_PROC;
    darray.size = procs.size();
    darray.array = procs.data();
    std::string text = "node " + _step.node_names[node] + " of " + _step.nspace + " is lost (" +
                       std::to_string(ranks.size()) + " ranks): " + why;
    Status st = raise(PMIX_ERR_NODE_DOWN, PMIX_RANGE_LOCAL,
                      {make_info(PMIX_EVENT_AFFECTED_PROCS, &darray, PMIX_DATA_ARRAY),
                       make_info(PMIX_HOSTNAME, _step.node_names[node].c_str(), PMIX_STRING),
                       make_info(PMIX_NODEID, &node, PMIX_UINT32),
                       make_info(PMIX_EVENT_TEXT_MESSAGE, text.c_str(), PMIX_STRING)});
    if (!st.ok())
        PMIXCPP_LOG_ERROR("%s: cannot send the node-down event: %s", _step.nspace.c_str(), st.message().c_str());
}

void event_engine::job_aborting(uint32_t rank, int status, const std::string &message) {
    pmix_status_t st = status;
    std::string text = "rank " + std::to_string(rank) + " called PMIx_Abort: " + message;
    // The job's end: affects the whole namespace. Non-default, as the end of a job is in OpenPMIx
    // servers' hosts: only handlers registered for this code see it, not a default handler (OpenMPI's
    // reports any event it gets as an error of its own and aborts the process: while the job ends
    // anyway, that hides the aborting rank's message behind "Unknown error").
    generate(PMIX_ERR_JOB_TERMINATED, PMIX_RANK_WILDCARD,
             {make_info(PMIX_JOB_TERM_STATUS, &st, PMIX_STATUS),
              make_info(PMIX_EVENT_TEXT_MESSAGE, text.c_str(), PMIX_STRING)},
             true);
}

}  // namespace pmixcpp::server
