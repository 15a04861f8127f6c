// job_control_service: PMIx_Job_control's kill, terminate, signal and checkpoint of the step's
// ranks on every node, and of other steps' ranks through srun (plugin/services/xstep/).
#include "dyn_jctrl.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <set>

#include "dyn_detail.h"
#include "log.h"
#include "../services/xstep/xstep_codec.h"
#include "value.h"
#include "wire/codec.h"
#include "wire/node_messages.h"

namespace pmixcpp::server {

using namespace dyn_detail;

job_control_service::job_control_service(const step_info &step, std::vector<uint32_t> node_of, job_control_service_ops ops)
    : _step(step), _node_of(std::move(node_of)), _ops(std::move(ops)) {}

bool job_control_service::job_control(uint64_t conn, uint32_t rank, uint32_t request_id, const wire::job_control_request &m) {
    int sig = 0;
    bool terminate = false;
    bool checkpoint = false;
    std::string what;
    if (flag_of(find_info(m.infos, PMIX_JOB_CTRL_KILL))) {
        sig = SIGKILL;
        what = "kill";
    } else if (flag_of(find_info(m.infos, PMIX_JOB_CTRL_TERMINATE))) {
        sig = SIGTERM;
        terminate = true;
        what = "terminate";
    } else if (const pmix_info_t *s = find_info(m.infos, PMIX_JOB_CTRL_SIGNAL)) {
        auto n = number_of(s->value);
        if (!n || *n <= 0 || *n >= 65) {
            _ops.reply(conn, request_id, PMIX_ERR_BAD_PARAM, "invalid PMIX_JOB_CTRL_SIGNAL", {});
            return true;
        }
        sig = static_cast<int>(*n);
        what = "signal " + std::to_string(sig);
    } else if (find_info(m.infos, PMIX_JOB_CTRL_CHECKPOINT) != nullptr) {
        if (!_ops.checkpoint_local) {
            _ops.reply(conn, request_id, PMIX_ERR_NOT_SUPPORTED, "checkpoint requests are not supported here", {});
            return true;
        }
        checkpoint = true;
        what = "checkpoint";
    } else {
        return false;
    }
    // Targets: none or {nspace, WILDCARD} = every rank of the step; other namespaces: steps of
    // the job, each with its ranks (empty = all of them).
    std::vector<bool> chosen(_step.ntasks, m.targets.empty());
    std::map<std::string, std::vector<uint32_t>> others;
    std::set<std::string> whole;  // other namespaces named with PMIX_RANK_WILDCARD
    for (const auto &t : m.targets) {
        std::string ns(t.nspace, strnlen(t.nspace, PMIX_MAX_NSLEN + 1));
        if (!ns.empty() && ns != _step.nspace) {
            if (t.rank == PMIX_RANK_WILDCARD) whole.insert(ns);
            else if (!PMIX_RANK_IS_VALID(t.rank)) {
                _ops.reply(conn, request_id, PMIX_ERR_BAD_PARAM, "invalid rank of " + ns, {});
                return true;
            }
            auto &ranks = others[ns];
            if (t.rank != PMIX_RANK_WILDCARD) ranks.push_back(t.rank);
            continue;
        }
        if (t.rank == PMIX_RANK_WILDCARD) {
            chosen.assign(_step.ntasks, true);
        } else if (t.rank < _step.ntasks) {
            chosen[t.rank] = true;
        } else {
            _ops.reply(conn, request_id, PMIX_ERR_BAD_PARAM, "no rank " + std::to_string(t.rank) + " in " + _step.nspace,
                       {});
            return true;
        }
    }
    for (const auto &ns : whole) others[ns].clear();
    PMIXCPP_LOG_VERBOSE("%s: rank %u asks to %s %zu rank(s) here and %zu other namespace(s)", _step.nspace.c_str(),
                        rank, what.c_str(), static_cast<size_t>(std::count(chosen.begin(), chosen.end(), true)),
                        others.size());
    wire::Writer body;
    wire::job_control_reply reply;
    if (!wire::encode(body, reply).ok()) return true;
    if (others.empty()) {
        // Answer first: the caller may be among the targets.
        _ops.reply(conn, request_id, PMIX_SUCCESS, {}, body.data());
        signal_step(chosen, sig, terminate, checkpoint);
        return true;
    }
    if (checkpoint) {
        // A checkpoint method lives with the process's own server; the cross-step router carries
        // signals only.
        _ops.reply(conn, request_id, PMIX_ERR_NOT_SUPPORTED,
                   "checkpoint of another namespace (" + others.begin()->first + ") is not supported", {});
        return true;
    }
    if (!_ops.xstep) {
        _ops.reply(conn, request_id, PMIX_ERR_NOT_SUPPORTED,
                   "job control of another namespace (" + others.begin()->first + "): no cross-step router", {});
        return true;
    }
    // The other steps first: one refusal (not a step of this job, no such rank) fails the call
    // and our own targets are left alone.
    struct gather {
        size_t left = 0;
        pmix_status_t status = PMIX_SUCCESS;
        std::string message;
    };
    auto g = std::make_shared<gather>();
    g->left = others.size();
    auto reply_bytes = std::make_shared<std::vector<uint8_t>>(body.data());
    for (const auto &[ns, ranks] : others) {
        xstep::message x;
        x.what = xstep::op::jobctl;
        x.nspace = ns;
        x.ranks = ranks;
        x.signal = sig;
        x.terminate = terminate;
        auto bytes = xstep::encode(x);
        if (!bytes.ok()) {
            _ops.reply(conn, request_id, bytes.status().code(), bytes.status().message(), {});
            return true;
        }
        _ops.xstep(std::move(bytes.value()), 10000,
                   [this, g, ns, conn, request_id, chosen, sig, terminate, reply_bytes](
                       int status, const std::string &message, std::vector<uint8_t>) {
                       if (status != PMIX_SUCCESS && g->status == PMIX_SUCCESS) {
                           g->status = status;
                           g->message = "job control of " + ns + ": " + message;
                       }
                       if (--g->left > 0) return;
                       if (g->status != PMIX_SUCCESS) {
                           _ops.reply(conn, request_id, g->status, g->message, {});
                           return;
                       }
                       _ops.reply(conn, request_id, PMIX_SUCCESS, {}, *reply_bytes);
                       signal_step(chosen, sig, terminate);
                   });
    }
    return true;
}

void job_control_service::signal_step(const std::vector<bool> &chosen, int sig, bool terminate, bool checkpoint) {
    std::vector<std::vector<uint32_t>> by_node(_step.node_names.size());
    for (uint32_t r = 0; r < _step.ntasks && r < chosen.size(); ++r)
        if (chosen[r] && r < _node_of.size() && _node_of[r] < by_node.size()) by_node[_node_of[r]].push_back(r);
    for (uint32_t n = 0; n < by_node.size(); ++n) {
        if (n == _step.node_id || by_node[n].empty() || !_ops.send_node) continue;
        wire::Writer w;
        (void)wire::encode(w, wire::job_control_forward{sig, terminate, by_node[n], checkpoint});  // cannot fail
        _ops.send_node(n, node_channel::job_control, w.data());
    }
    if (_step.node_id < by_node.size()) signal_local(by_node[_step.node_id], sig, terminate, checkpoint);
}

void job_control_service::job_control_of_other_step(const std::vector<uint32_t> &ranks, int sig, bool terminate) {
    std::vector<uint32_t> mine;
    for (uint32_t r : _step.local_ranks())
        if (ranks.empty() || std::find(ranks.begin(), ranks.end(), r) != ranks.end()) mine.push_back(r);
    PMIXCPP_LOG_VERBOSE("%s: another step asks for signal %d to %zu rank(s) here", _step.nspace.c_str(), sig, mine.size());
    signal_local(mine, sig, terminate);
}

void job_control_service::signal_local(const std::vector<uint32_t> &ranks, int sig, bool terminate, bool checkpoint) {
    if (checkpoint) {
        if (_ops.checkpoint_local) _ops.checkpoint_local(ranks);
        return;
    }
    for (uint32_t r : ranks) {
        process_handle proc = _ops.process_of ? _ops.process_of(r) : nullptr;
        if (!proc) {
            PMIXCPP_LOG_WARNING("%s: cannot signal rank %u: it has no connection to the server", _step.nspace.c_str(), r);
            continue;
        }
        const int pid = static_cast<int>(proc->pid());
        if (_ops.signal(*proc, sig) != 0) {
            PMIXCPP_LOG_WARNING("%s: signal %d to rank %u (pid %d): %s", _step.nspace.c_str(), sig, r, pid,
                                strerror(errno));
            continue;
        }
        PMIXCPP_LOG_DEBUG("%s: signal %d sent to rank %u (pid %d)", _step.nspace.c_str(), sig, r, pid);
        if (terminate) _kills.push_back({server_clock::now() + std::chrono::seconds(kTerminateGraceSec), std::move(proc)});
    }
}

void job_control_service::on_job_control(uint32_t from, std::span<const uint8_t> body) {
    wire::job_control_forward m;
    Status st = wire::decode(body, _step.ntasks, &m);
    for (size_t i = 0; st.ok() && i < m.ranks.size(); ++i)
        if (_node_of[m.ranks[i]] != _step.node_id)
            st = Status(PMIX_ERR_BAD_PARAM, "rank " + std::to_string(m.ranks[i]) + " is not on this node");
    if (!st.ok()) {
        PMIXCPP_LOG_ERROR("%s: bad job control from node %u dropped: %s", _step.nspace.c_str(), from,
                          st.message().c_str());
        return;
    }
    signal_local(m.ranks, m.signal, m.terminate, m.checkpoint);
}

Status job_control_service::add_channels(node_channels &table) {
    return table.add(node_channel::job_control, "job control",
                     [this](uint32_t from, std::span<const uint8_t> body) { on_job_control(from, body); });
}

void job_control_service::expire(server_clock::time_point now) {
    for (auto it = _kills.begin(); it != _kills.end();) {
        if (it->when <= now) {
            if (_ops.signal(*it->proc, 0) == 0) _ops.signal(*it->proc, SIGKILL);
            it = _kills.erase(it);
        } else {
            ++it;
        }
    }
}

std::optional<server_clock::time_point> job_control_service::next_deadline() const {
    std::optional<server_clock::time_point> next;
    for (const auto &k : _kills)
        if (!next || k.when < *next) next = k.when;
    return next;
}

}  // namespace pmixcpp::server
