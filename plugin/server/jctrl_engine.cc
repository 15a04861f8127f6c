// The job control engine (jctrl_engine.h): what a process says of itself, the dyn service's
// actions, clean-up registrations and their removal, checkpoint requests to local ranks.
#include "jctrl_engine.h"

#include "../common/safe_fs.h"
#include "log.h"
#include "value.h"

namespace pmixcpp::server {

job_control_engine::job_control_engine(job_control_config config, job_control_ops ops, reply_sink &sink)
    : _cfg(std::move(config)), _ops(std::move(ops)), _sink(sink), _methods(_cfg.ntasks) {}

void job_control_engine::answer(uint64_t conn, uint32_t request_id, pmix_status_t status, const std::string &message) {
    _sink.reply(conn, request_id, status, message);
}

void job_control_engine::request(uint64_t conn, uint32_t rank, uint32_t request_id, std::span<const uint8_t> payload) {
    wire::job_control_request m;
    if (Status st = wire::decode_payload(payload, &m, _cfg.max_procs); !st.ok()) {
        _sink.refuse(conn, "malformed job_control payload: " + st.message());
        return;
    }
    const char *ns = _cfg.nspace.c_str();
    // What the caller says of itself (targets do not apply: the standard calls these informational).
    size_t informed = 0;
    for (size_t i = 0; i < m.infos.size(); ++i) {
        std::string key = key_of(m.infos[i]);
        if (key == PMIX_JOB_CTRL_CHECKPOINT_METHOD) {
            Status st = _methods.set_checkpoint_method(rank, m.infos[i].value);
            if (st.code() == PMIX_ERR_NOT_FOUND) {
                // A key without a value (the caller never set its type): nothing to record.
                PMIXCPP_LOG_VERBOSE("%s: rank %u: %s without a value: no checkpoint method recorded", ns, rank,
                                    PMIX_JOB_CTRL_CHECKPOINT_METHOD);
                ++informed;
                continue;
            }
            if (!st.ok()) {
                answer(conn, request_id, st.code(), st.message());
                return;
            }
            const checkpoint_method *cm = _methods.method_of(rank);
            PMIXCPP_LOG_VERBOSE("%s: rank %u checkpoints on%s%s", ns, rank,
                                cm->signal ? (" signal " + std::to_string(cm->signal)).c_str() : "",
                                cm->event != PMIX_SUCCESS ? (" event " + std::to_string(cm->event)).c_str() : "");
            ++informed;
        } else if (key == PMIX_JOB_CTRL_PREEMPTIBLE) {
            bool on = info_flag(m.infos, PMIX_JOB_CTRL_PREEMPTIBLE);
            _methods.set_preemptible(rank, on);
            // Slurm preempts by the site's partition and QOS policy, not by what a process says.
            PMIXCPP_LOG_VERBOSE("%s: rank %u says it is%s preemptible (Slurm's preemption policy decides)", ns, rank,
                                on ? "" : " not");
            ++informed;
        }
    }
    if (_ops.actions(conn, rank, request_id, m)) return;  // kill, terminate, signal, checkpoint
    bool recursive = info_flag(m.infos, PMIX_CLEANUP_RECURSIVE);
    size_t registered = 0;
    std::string unsupported;
    for (size_t i = 0; i < m.infos.size(); ++i) {
        std::string key = key_of(m.infos[i]);
        if (key == PMIX_REGISTER_CLEANUP || key == PMIX_REGISTER_CLEANUP_DIR) {
            std::string path = value_text(m.infos[i].value);
            if (path.empty() || path[0] != '/') {
                answer(conn, request_id, PMIX_ERR_BAD_PARAM, key + " needs an absolute path");
                return;
            }
            // The server removes, as root, only what lies in the user's own step directory.
            std::string rel;
            if (!safe_fs::lexically_inside(path, _cfg.step_dir, &rel) || rel.empty()) {
                std::string why = "clean-up path " + path + " is not inside the step directory " + _cfg.step_dir;
                PMIXCPP_LOG_VERBOSE("%s: rank %u: %s", ns, rank, why.c_str());
                answer(conn, request_id, PMIX_ERR_NO_PERMISSIONS, why);
                return;
            }
            if (_cleanups.size() >= kMaxCleanups) {
                answer(conn, request_id, PMIX_ERR_OUT_OF_RESOURCE,
                       "more than " + std::to_string(kMaxCleanups) + " clean-up registrations");
                return;
            }
            _cleanups.push_back({rel, key == PMIX_REGISTER_CLEANUP_DIR, recursive});
            ++registered;
            PMIXCPP_LOG_DEBUG("%s: rank %u registered %s for clean-up", ns, rank, path.c_str());
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
        PMIXCPP_LOG_VERBOSE("%s: rank %u: %s", ns, rank, why.c_str());
        answer(conn, request_id, PMIX_ERR_NOT_SUPPORTED, why);
        return;
    }
    _sink.reply(conn, request_id, PMIX_SUCCESS, {}, [](wire::Writer &w) {
        wire::job_control_reply r;
        return wire::encode(w, r);
    });
}

void job_control_engine::checkpoint(const std::vector<uint32_t> &ranks, const std::string &why) {
    const char *ns = _cfg.nspace.c_str();
    for (uint32_t r : ranks) {
        const checkpoint_method *cm = _methods.method_of(r);
        if (cm == nullptr) {
            PMIXCPP_LOG_VERBOSE("%s: rank %u registered no checkpoint method: not told (%s)", ns, r, why.c_str());
            continue;
        }
        if (cm->signal != 0) {
            if (Status st = _ops.signal_rank(r, cm->signal); !st.ok())
                PMIXCPP_LOG_WARNING("%s: checkpoint signal %d to rank %u: %s", ns, cm->signal, r, st.message().c_str());
        }
        if (cm->event != PMIX_SUCCESS) _ops.checkpoint_event(r, cm->event, why);
        PMIXCPP_LOG_VERBOSE("%s: rank %u asked to checkpoint (%s)", ns, r, why.c_str());
    }
}

void job_control_engine::remove_cleanups() {
    // Registered paths were checked to lie in the user's step directory; they are resolved again
    // beneath its descriptor, never through a link or "..", whatever the job did since.
    for (const auto &c : _cleanups) {
        Status st = _ops.remove_beneath(c.relpath);
        if (!st.ok())
            PMIXCPP_LOG_VERBOSE("%s: clean-up of %s/%s: %s", _cfg.nspace.c_str(), _cfg.step_dir.c_str(),
                                c.relpath.c_str(), st.message().c_str());
    }
}

}  // namespace pmixcpp::server
