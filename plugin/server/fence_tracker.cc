#include "fence_tracker.h"

#include <algorithm>

#include "log.h"

namespace pmixcpp::server {

const char *to_string(fence_state s) {
    switch (s) {
    case fence_state::collecting: return "collecting";
    case fence_state::remote: return "remote";
    case fence_state::done: return "done";
    }
    return "unknown";
}

Status no_remote_fences::start(uint64_t instance, const std::vector<uint32_t> &participants, bool collect) {
    return Status(PMIX_ERR_NOT_SUPPORTED, "fence " + std::to_string(instance) + " over " +
                                              std::to_string(participants.size()) +
                                              " ranks spans several nodes; the multi-node transport is not "
                                              "implemented yet");
}

fence_tracker::fence_tracker(std::string nspace, uint32_t ntasks, const std::vector<uint32_t> &local_ranks,
                             remote_fences *remote)
    : _nspace(std::move(nspace)), _ntasks(ntasks), _local(ntasks, false), _remote(remote) {
    for (uint32_t r : local_ranks)
        if (r < ntasks) _local[r] = true;
}

bool fence_tracker::is_local(uint32_t rank) const { return rank < _ntasks && _local[rank]; }

Result<std::vector<uint32_t>> fence_tracker::normalise(const std::vector<uint32_t> &ranks) const {
    bool all = ranks.empty() ||
               std::find(ranks.begin(), ranks.end(), static_cast<uint32_t>(PMIX_RANK_WILDCARD)) != ranks.end();
    std::vector<uint32_t> out;
    if (all) {
        out.resize(_ntasks);
        for (uint32_t r = 0; r < _ntasks; ++r) out[r] = r;
        return out;
    }
    out = ranks;
    for (uint32_t r : out)
        if (r >= _ntasks)
            return Status(PMIX_ERR_BAD_PARAM, "fence names rank " + std::to_string(r) + " of " + _nspace +
                                                  ", which has " + std::to_string(_ntasks) + " ranks");
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

std::string fence_tracker::describe(const instance &inst) const {
    std::string s = "fence " + std::to_string(inst.id) + " of " + _nspace + " (" +
                    std::to_string(inst.participants.size()) + " ranks";
    if (inst.participants.size() <= 8) {
        s += ":";
        for (uint32_t r : inst.participants) s += " " + std::to_string(r);
    }
    return s + ")";
}

fence_outcome fence_tracker::finish(instance &inst, pmix_status_t status, std::string message) {
    fence_outcome o;
    o.instance = inst.id;
    o.status = status;
    o.message = std::move(message);
    o.waiters = std::move(inst.waiters);
    inst.waiters.clear();
    inst.state = fence_state::done;
    if (status == PMIX_SUCCESS)
        PMIXCPP_LOG_DEBUG("%s complete", describe(inst).c_str());
    else
        PMIXCPP_LOG_ERROR("%s failed: %s", describe(inst).c_str(), o.message.c_str());
    return o;
}

void fence_tracker::erase_done() {
    _instances.remove_if([](const instance &i) { return i.state == fence_state::done; });
}

void fence_tracker::advance(instance &inst, std::vector<fence_outcome> &out) {
    if (inst.state != fence_state::collecting) return;
    if (inst.entered.size() < inst.local_participants.size()) return;
    if (!inst.has_remote) {
        out.push_back(finish(inst, PMIX_SUCCESS, {}));
        return;
    }
    Status st = _remote ? _remote->start(inst.id, inst.participants, inst.collect)
                        : Status(PMIX_ERR_NOT_SUPPORTED, "no multi-node backend");
    if (!st.ok()) {
        out.push_back(finish(inst, st.code(), st.message()));
        return;
    }
    inst.state = fence_state::remote;
    PMIXCPP_LOG_DEBUG("%s: local part complete, waiting for other nodes", describe(inst).c_str());
}

std::vector<fence_outcome> fence_tracker::enter(const std::vector<uint32_t> &participants, const fence_waiter &waiter,
                                                bool collect, std::optional<server_clock::time_point> deadline) {
    std::vector<fence_outcome> out;
    // The first instance of this set that the rank has not entered yet.
    instance *inst = nullptr;
    for (auto &i : _instances) {
        if (i.state == fence_state::collecting && i.participants == participants && !i.entered.count(waiter.rank)) {
            inst = &i;
            break;
        }
    }
    if (!inst) {
        instance fresh;
        fresh.id = _next_id++;
        fresh.participants = participants;
        for (uint32_t r : participants) {
            if (is_local(r))
                fresh.local_participants.push_back(r);
            else
                fresh.has_remote = true;
        }
        _instances.push_back(std::move(fresh));
        inst = &_instances.back();
        PMIXCPP_LOG_TRACE("%s: new instance", describe(*inst).c_str());
    }
    if (!is_local(waiter.rank) ||
        !std::binary_search(inst->participants.begin(), inst->participants.end(), waiter.rank)) {
        // The caller is not a participant: OpenPMIx refuses this too.
        fence_outcome o;
        o.status = PMIX_ERR_BAD_PARAM;
        o.message = "rank " + std::to_string(waiter.rank) + " is not among the participants of " + describe(*inst);
        o.waiters.push_back(waiter);
        if (inst->entered.empty()) _instances.remove_if([&](const instance &i) { return &i == inst; });
        out.push_back(std::move(o));
        return out;
    }
    inst->entered.insert(waiter.rank);
    inst->waiters.push_back(waiter);
    inst->collect = inst->collect || collect;
    if (deadline && (!inst->deadline || *deadline < *inst->deadline)) inst->deadline = deadline;
    PMIXCPP_LOG_TRACE("%s: rank %u entered (%zu of %zu local)", describe(*inst).c_str(), waiter.rank,
                      inst->entered.size(), inst->local_participants.size());

    // A participant that already left can never enter.
    for (uint32_t r : inst->local_participants) {
        auto g = _gone.find(r);
        if (g != _gone.end() && !inst->entered.count(r)) {
            out.push_back(finish(*inst, g->second,
                                 "rank " + std::to_string(r) + " of " + _nspace +
                                     (g->second == PMIX_ERR_PROC_ABORTED ? " died" : " finalized") +
                                     " before entering the fence"));
            erase_done();
            return out;
        }
    }
    advance(*inst, out);
    erase_done();
    return out;
}

std::vector<fence_outcome> fence_tracker::rank_gone(uint32_t rank, pmix_status_t why) {
    std::vector<fence_outcome> out;
    if (!is_local(rank)) return out;
    _gone[rank] = why;
    for (auto &inst : _instances) {
        if (inst.state != fence_state::collecting) continue;
        if (!std::binary_search(inst.participants.begin(), inst.participants.end(), rank)) continue;
        if (inst.entered.count(rank)) continue;
        out.push_back(finish(inst, why,
                             "rank " + std::to_string(rank) + " of " + _nspace +
                                 (why == PMIX_ERR_PROC_ABORTED ? " died (lost connection)" : " finalized") +
                                 " before entering the fence"));
    }
    erase_done();
    return out;
}

void fence_tracker::rank_back(uint32_t rank) { _gone.erase(rank); }

std::vector<fence_outcome> fence_tracker::remote_done(uint64_t id, pmix_status_t status, const std::string &message) {
    std::vector<fence_outcome> out;
    for (auto &inst : _instances) {
        if (inst.id != id) continue;
        if (inst.state != fence_state::remote) {
            PMIXCPP_LOG_WARNING("%s: remote completion in state %s ignored", describe(inst).c_str(),
                                to_string(inst.state));
            break;
        }
        out.push_back(finish(inst, status, message));
        break;
    }
    erase_done();
    return out;
}

std::vector<fence_outcome> fence_tracker::expire(server_clock::time_point now) {
    std::vector<fence_outcome> out;
    for (auto &inst : _instances) {
        if (inst.state == fence_state::done || !inst.deadline || *inst.deadline > now) continue;
        if (inst.state == fence_state::remote && _remote) {
            std::string nodes = _remote->describe_missing(inst.id);
            _remote->cancel(inst.id);
            out.push_back(finish(inst, PMIX_ERR_TIMEOUT,
                                 "timed out waiting for other nodes" + (nodes.empty() ? std::string() : ": " + nodes)));
            continue;
        }
        std::string missing;
        size_t n = 0;
        for (uint32_t r : inst.local_participants) {
            if (inst.entered.count(r)) continue;
            if (n++ < 8) missing += (missing.empty() ? "" : ",") + std::to_string(r);
        }
        out.push_back(finish(inst, PMIX_ERR_TIMEOUT,
                             "timed out" + (missing.empty() ? std::string(" waiting for other nodes")
                                                            : " waiting for local ranks " + missing +
                                                                  (n > 8 ? ",..." : ""))));
    }
    erase_done();
    return out;
}

std::optional<server_clock::time_point> fence_tracker::next_deadline() const {
    std::optional<server_clock::time_point> best;
    for (const auto &inst : _instances)
        if (inst.deadline && (!best || *inst.deadline < *best)) best = inst.deadline;
    return best;
}

std::vector<fence_outcome> fence_tracker::fail_all(pmix_status_t status, const std::string &message) {
    std::vector<fence_outcome> out;
    for (auto &inst : _instances)
        if (inst.state != fence_state::done) out.push_back(finish(inst, status, message));
    erase_done();
    return out;
}

}  // namespace pmixcpp::server
