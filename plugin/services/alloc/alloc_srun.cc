#include "alloc_srun.h"

#include <algorithm>

namespace pmixcpp::alloc {

const char *to_string(req_state s) {
    switch (s) {
    case req_state::queued: return "queued";
    case req_state::pending: return "pending";
    case req_state::granted: return "granted";
    case req_state::failed: return "failed";
    case req_state::cancelled: return "cancelled";
    }
    return "unknown";
}

bool is_final(req_state s) {
    return s == req_state::granted || s == req_state::failed || s == req_state::cancelled;
}

bool can_transition(req_state from, req_state to) {
    if (is_final(from)) return false;
    if (from == req_state::queued) return to != req_state::queued;
    return is_final(to);  // pending -> final
}

Result<request_record *> request_table::add(spec what, const std::string &requester, alloc_clock::time_point now) {
    if (!what.request_id.empty()) {
        for (const auto &r : _records)
            if (!is_final(r->state) && r->what.request_id == what.request_id)
                return Status(PMIX_ERR_EXISTS, "a request named " + what.request_id + " is still open (" + r->id + ")");
    }
    auto r = std::make_unique<request_record>();
    r->id = _prefix + std::to_string(_next++);
    r->what = std::move(what);
    r->requester = requester;
    r->created = now;
    request_record *p = r.get();
    _records.push_back(std::move(r));
    prune();
    return p;
}

request_record *request_table::find(const std::string &id) {
    if (id.empty()) return nullptr;
    for (auto &r : _records)
        if (r->id == id) return r.get();
    for (auto it = _records.rbegin(); it != _records.rend(); ++it)
        if ((*it)->what.request_id == id) return it->get();
    return nullptr;
}

request_record *request_table::find_by_job(uint32_t slurm_job) {
    if (slurm_job == 0) return nullptr;
    for (auto &r : _records)
        if (r->slurm_job == slurm_job) return r.get();
    return nullptr;
}

Status request_table::transition(request_record &r, req_state to, pmix_status_t status, const std::string &message) {
    if (!can_transition(r.state, to))
        return Status(PMIX_ERR_BAD_PARAM, "request " + r.id + ": no transition from " + to_string(r.state) + " to " +
                                              to_string(to));
    r.state = to;
    if (is_final(to)) {
        r.status = status;
        r.message = message;
    }
    return Status::success();
}

std::vector<request_record *> request_table::open_requests(const std::string &requester) {
    std::vector<request_record *> out;
    for (auto &r : _records)
        if (!is_final(r->state) && (requester.empty() || r->requester == requester)) out.push_back(r.get());
    return out;
}

std::vector<const request_record *> request_table::of(const std::string &requester) const {
    std::vector<const request_record *> out;
    for (const auto &r : _records)
        if (r->requester == requester) out.push_back(r.get());
    return out;
}

void request_table::prune() {
    size_t finals = 0;
    for (const auto &r : _records) finals += is_final(r->state) ? 1 : 0;
    for (auto it = _records.begin(); finals > _keep_final && it != _records.end();) {
        if (is_final((*it)->state)) {
            it = _records.erase(it);
            --finals;
        } else {
            ++it;
        }
    }
}

void request_table::add_lease(const std::string &id, std::vector<std::string> nodes, alloc_clock::time_point until) {
    if (nodes.empty()) return;
    _leases.push_back(lease{id, std::move(nodes), until});
}

std::vector<std::string> request_table::take_leases(const std::string &id, alloc_clock::time_point now) {
    std::vector<std::string> nodes;
    std::vector<lease> keep;
    for (auto &l : _leases) {
        if (l.until <= now) continue;  // expired: forgotten
        if (id.empty() || l.id == id)
            nodes.insert(nodes.end(), l.nodes.begin(), l.nodes.end());
        else
            keep.push_back(std::move(l));
    }
    _leases = std::move(keep);
    return nodes;
}

std::string request_table::status_line(const request_record &r) {
    std::string s = r.id + " " + to_string(r.what.dir) + " " + to_string(r.state);
    if (!r.what.request_id.empty()) s += " reqid=" + r.what.request_id;
    if (r.slurm_job) s += " job=" + std::to_string(r.slurm_job);
    if (!r.node_list.empty()) s += " nodes=" + r.node_list;
    if (!r.added.empty()) s += " added=" + r.added;
    if (r.time_limit_min) s += " timelimit=" + std::to_string(r.time_limit_min) + "min";
    if (is_final(r.state) && r.status != PMIX_SUCCESS) s += " status=" + std::to_string(r.status);
    if (!r.message.empty()) s += " reason=\"" + r.message + "\"";
    return s;
}

}  // namespace pmixcpp::alloc
