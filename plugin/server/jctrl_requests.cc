// Job control requests of the node's processes (PMIx_Job_control): what a process says of itself
// (checkpoint method, preemptible), the actions the dyn service carries out (kill, terminate,
// signal, checkpoint; dyn.h), the paths registered for clean-up and their removal as root at the
// step's end (only beneath the user's step directory), and the checkpoint requests to local ranks.
// Part of the server's class (server_impl.h); the bookkeeping is jctrl.h.
#include "server_impl.h"

namespace pmixcpp::server {

void server_impl::handle_job_control(connection &c, const wire::Frame &f) {
    DECODE_OR_CLOSE(wire::job_control_request, "job_control");
    // What the caller says of itself (targets do not apply: the standard calls these informational).
    size_t informed = 0;
    for (size_t i = 0; i < m.infos.size(); ++i) {
        std::string key = key_of(m.infos[i]);
        if (key == PMIX_JOB_CTRL_CHECKPOINT_METHOD) {
            Status st = _jctrl.set_checkpoint_method(c.rank, m.infos[i].value);
            if (st.code() == PMIX_ERR_NOT_FOUND) {
                // A key without a value (the caller never set its type): nothing to record.
                PMIXCPP_LOG_VERBOSE("%s: rank %u: %s without a value: no checkpoint method recorded",
                                    _step.nspace.c_str(), c.rank, PMIX_JOB_CTRL_CHECKPOINT_METHOD);
                ++informed;
                continue;
            }
            if (!st.ok()) {
                send_reply(c.id, f.id, st.code(), st.message());
                return;
            }
            const checkpoint_method *cm = _jctrl.method_of(c.rank);
            PMIXCPP_LOG_VERBOSE("%s: rank %u checkpoints on%s%s", _step.nspace.c_str(), c.rank,
                                cm->signal ? (" signal " + std::to_string(cm->signal)).c_str() : "",
                                cm->event != PMIX_SUCCESS ? (" event " + std::to_string(cm->event)).c_str() : "");
            ++informed;
        } else if (key == PMIX_JOB_CTRL_PREEMPTIBLE) {
            bool on = info_flag(m.infos, PMIX_JOB_CTRL_PREEMPTIBLE);
            _jctrl.set_preemptible(c.rank, on);
            // Slurm preempts by the site's partition and QOS policy, not by what a process says.
            PMIXCPP_LOG_VERBOSE("%s: rank %u says it is%s preemptible (Slurm's preemption policy decides)",
                                _step.nspace.c_str(), c.rank, on ? "" : " not");
            ++informed;
        }
    }
    if (_dyn->job_control(c.id, c.rank, f.id, m)) return;  // kill, terminate, signal, checkpoint
    bool recursive = info_flag(m.infos, PMIX_CLEANUP_RECURSIVE);
    size_t registered = 0;
    std::string unsupported;
    for (size_t i = 0; i < m.infos.size(); ++i) {
        std::string key = key_of(m.infos[i]);
        if (key == PMIX_REGISTER_CLEANUP || key == PMIX_REGISTER_CLEANUP_DIR) {
            std::string path = value_text(m.infos[i].value);
            if (path.empty() || path[0] != '/') {
                send_reply(c.id, f.id, PMIX_ERR_BAD_PARAM, key + " needs an absolute path");
                return;
            }
            // The server removes, as root, only what lies in the user's own step directory.
            std::string rel;
            if (!safe_fs::lexically_inside(path, _step.step_dir, &rel) || rel.empty()) {
                std::string why = "clean-up path " + path + " is not inside the step directory " + _step.step_dir;
                PMIXCPP_LOG_VERBOSE("%s: rank %u: %s", _step.nspace.c_str(), c.rank, why.c_str());
                send_reply(c.id, f.id, PMIX_ERR_NO_PERMISSIONS, why);
                return;
            }
            if (_cleanups.size() >= kMaxCleanups) {
                send_reply(c.id, f.id, PMIX_ERR_OUT_OF_RESOURCE,
                           "more than " + std::to_string(kMaxCleanups) + " clean-up registrations");
                return;
            }
            _cleanups.push_back({rel, key == PMIX_REGISTER_CLEANUP_DIR, recursive});
            ++registered;
            PMIXCPP_LOG_DEBUG("%s: rank %u registered %s for clean-up", _step.nspace.c_str(), c.rank, path.c_str());
        } else if (key.rfind("pmix.clnup.", 0) == 0 || key == PMIX_TIMEOUT || key == PMIX_JOB_CTRL_CHECKPOINT_METHOD ||
                   key == PMIX_JOB_CTRL_PREEMPTIBLE) {
            // directives of a clean-up registration, and what the caller said of itself
        } else if (unsupported.empty()) {
            unsupported = key;
        }
    }
    if (registered == 0 && informed == 0) {
        std::string why = "job control " + (unsupported.empty() ? std::string("without an action") : unsupported) +
                          " is not supported";
        PMIXCPP_LOG_VERBOSE("%s: rank %u: %s", _step.nspace.c_str(), c.rank, why.c_str());
        send_reply(c.id, f.id, PMIX_ERR_NOT_SUPPORTED, why);
        return;
    }
    send_reply(c.id, f.id, PMIX_SUCCESS, {}, [](wire::Writer &w) {
        wire::job_control_reply r;
        return wire::encode(w, r);
    });
}

void server_impl::checkpoint_local(const std::vector<uint32_t> &ranks, const std::string &why) {
    for (uint32_t r : ranks) {
        const checkpoint_method *cm = _jctrl.method_of(r);
        if (cm == nullptr) {
            PMIXCPP_LOG_VERBOSE("%s: rank %u registered no checkpoint method: not told (%s)", _step.nspace.c_str(), r,
                                why.c_str());
            continue;
        }
        if (cm->signal != 0) {
            connection *c = r < _rank_conn.size() ? find(_rank_conn[r]) : nullptr;
            if (c == nullptr || !c->proc || c->proc->send_signal(cm->signal) != 0)
                PMIXCPP_LOG_WARNING("%s: checkpoint signal %d to rank %u: %s", _step.nspace.c_str(), cm->signal, r,
                                    c && c->proc ? strerror(errno) : "not connected");
        }
        if (cm->event != PMIX_SUCCESS) _events->checkpoint_requested(r, cm->event, why);
        PMIXCPP_LOG_VERBOSE("%s: rank %u asked to checkpoint (%s)", _step.nspace.c_str(), r, why.c_str());
    }
}

void server_impl::remove_cleanup_paths() {
    // Registered paths were checked to lie in the user's step directory; they are resolved again
    // beneath its descriptor, never through a link or "..", whatever the job did since.
    for (const auto &c : _cleanups) {
        Status st = _step.dirs->user.remove_beneath(c.relpath, _step.uid);  // only the user's entries
        if (!st.ok())
            PMIXCPP_LOG_VERBOSE("%s: clean-up of %s/%s: %s", _step.nspace.c_str(), _step.step_dir.c_str(),
                                c.relpath.c_str(), st.message().c_str());
    }
}

}  // namespace pmixcpp::server
