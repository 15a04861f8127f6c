#include "jctrl.h"

#include <algorithm>
#include <cstring>

#include "value.h"

namespace pmixcpp::server {

namespace {

std::optional<int64_t> integer_of(const pmix_value_t &v) {
    if (v.type == PMIX_STATUS) return v.data.status;
    auto n = value_to_number<int64_t>(v);
    if (!n.ok()) return std::nullopt;
    return n.value();
}

}  // namespace

Status checkpoint_methods::set_checkpoint_method(uint32_t rank, const pmix_value_t &v) {
    if (rank >= _ranks.size()) return Status(PMIX_ERR_BAD_PARAM, "no such rank");
    if (v.type == PMIX_UNDEF)
        return Status(PMIX_ERR_NOT_FOUND, "no method given");  // informational: not an error
    if (v.type != PMIX_DATA_ARRAY || v.data.darray == nullptr || v.data.darray->type != PMIX_INFO ||
        (v.data.darray->size > 0 && v.data.darray->array == nullptr))
        return Status(PMIX_ERR_BAD_PARAM, "PMIX_JOB_CTRL_CHECKPOINT_METHOD needs an array of infos");
    checkpoint_method m;
    const auto *infos = static_cast<const pmix_info_t *>(v.data.darray->array);
    for (size_t i = 0; i < v.data.darray->size; ++i) {
        const pmix_info_t &in = infos[i];
        auto n = integer_of(in.value);
        if (key_is(in, PMIX_JOB_CTRL_CHECKPOINT_SIGNAL)) {
            if (!n || *n <= 0 || *n >= 65)
                return Status(PMIX_ERR_BAD_PARAM, "invalid PMIX_JOB_CTRL_CHECKPOINT_SIGNAL");
            m.signal = static_cast<int>(*n);
        } else if (key_is(in, PMIX_JOB_CTRL_CHECKPOINT_EVENT)) {
            // The standard's header types it bool and its examples pass a status: a status is the
            // event code, true means PMIX_JCTRL_CHECKPOINT.
            if (in.value.type == PMIX_BOOL) {
                if (in.value.data.flag) m.event = PMIX_JCTRL_CHECKPOINT;
            } else if (!n || *n == PMIX_SUCCESS || *n < INT32_MIN || *n > INT32_MAX) {
                return Status(PMIX_ERR_BAD_PARAM, "invalid PMIX_JOB_CTRL_CHECKPOINT_EVENT");
            } else {
                m.event = static_cast<pmix_status_t>(*n);
            }
        }
    }
    if (!m.any())
        return Status(PMIX_ERR_BAD_PARAM,
                      "PMIX_JOB_CTRL_CHECKPOINT_METHOD names neither a signal nor an event");
    _ranks[rank].method = m;
    return Status::success();
}

const checkpoint_method *checkpoint_methods::method_of(uint32_t rank) const {
    if (rank >= _ranks.size() || !_ranks[rank].method.any()) return nullptr;
    return &_ranks[rank].method;
}

void checkpoint_methods::set_preemptible(uint32_t rank, bool on) {
    if (rank < _ranks.size()) _ranks[rank].preemptible = on;
}

Status heartbeat_monitors::add_heartbeat(uint32_t rank, const std::string &id, uint32_t period_sec, uint32_t drops,
                                   pmix_status_t code, server_clock::time_point now) {
    if (rank >= _ranks.size()) return Status(PMIX_ERR_BAD_PARAM, "no such rank");
    if (period_sec == 0 || period_sec > kMaxPeriodSec)
        return Status(PMIX_ERR_BAD_PARAM,
                      "PMIX_MONITOR_HEARTBEAT_TIME must be 1.." + std::to_string(kMaxPeriodSec) + " s");
    if (drops > 1000) return Status(PMIX_ERR_BAD_PARAM, "PMIX_MONITOR_HEARTBEAT_DROPS must be at most 1000");
    auto &beats = _ranks[rank];
    auto it = std::find_if(beats.begin(), beats.end(), [&](const heartbeat &h) { return h.id == id; });
    if (it == beats.end()) {
        if (beats.size() >= kMaxMonitorsPerRank)
            return Status(PMIX_ERR_OUT_OF_RESOURCE,
                          "more than " + std::to_string(kMaxMonitorsPerRank) + " monitors");
        beats.emplace_back();
        it = beats.end() - 1;
        ++_monitors;
    }
    it->id = id;
    it->period = std::chrono::seconds(period_sec);
    it->drops = drops;
    it->code = code == PMIX_SUCCESS ? PMIX_MONITOR_HEARTBEAT_ALERT : code;
    it->last = now;
    it->tripped = false;
    return Status::success();
}

bool heartbeat_monitors::beat(uint32_t rank, server_clock::time_point now) {
    if (rank >= _ranks.size() || _ranks[rank].empty()) return false;
    for (auto &h : _ranks[rank]) {
        h.last = now;
        h.tripped = false;
    }
    return true;
}

size_t heartbeat_monitors::cancel(uint32_t rank, const std::string &id) {
    if (rank >= _ranks.size()) return 0;
    auto &beats = _ranks[rank];
    size_t before = beats.size();
    beats.erase(std::remove_if(beats.begin(), beats.end(),
                               [&](const heartbeat &h) { return id.empty() || h.id == id; }),
                beats.end());
    _monitors -= before - beats.size();
    return before - beats.size();
}

void heartbeat_monitors::rank_gone(uint32_t rank) {
    if (rank >= _ranks.size()) return;
    _monitors -= _ranks[rank].size();
    _ranks[rank].clear();
}

void checkpoint_methods::rank_gone(uint32_t rank) {
    if (rank < _ranks.size()) _ranks[rank] = rank_controls{};
}

std::optional<server_clock::time_point> heartbeat_monitors::next_deadline() const {
    std::optional<server_clock::time_point> next;
    if (_monitors == 0) return next;
    for (const auto &r : _ranks)
        for (const auto &h : r)
            if (!h.tripped && (!next || h.deadline() < *next)) next = h.deadline();
    return next;
}

std::vector<heartbeat_alert> heartbeat_monitors::expire(server_clock::time_point now) {
    std::vector<heartbeat_alert> out;
    if (_monitors == 0) return out;
    for (uint32_t rank = 0; rank < _ranks.size(); ++rank)
        for (auto &h : _ranks[rank]) {
            if (h.tripped || now < h.deadline()) continue;
            h.tripped = true;
            auto silent = std::chrono::duration_cast<std::chrono::seconds>(now - h.last).count();
            out.push_back({rank, h.id, h.code, static_cast<uint32_t>(std::max<int64_t>(silent, 0))});
        }
    return out;
}

}  // namespace pmixcpp::server
