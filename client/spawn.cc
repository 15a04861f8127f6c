// PMIx_Spawn(_nb): the apps and job infos go to the node's server, which has srun's side of the
// step start them as a new Slurm step of the same job (plugin/services/spawn/spawn_srun.h). The reply
// names the children's namespace.
#include <pmix.h>

#include <cstring>
#include <memory>

#include "api.h"
#include "format.h"
#include "info_call.h"

using namespace pmixcpp;
using namespace pmixcpp::client;

namespace {

using spawn_fn = std::function<void(pmix_status_t, const std::string &nspace)>;

void copy_strings(char **in, std::vector<std::string> *out) {
    if (in == nullptr) return;
    for (size_t i = 0; in[i] != nullptr; ++i) out->emplace_back(in[i]);
}

Status send_spawn(Client &c, const pmix_info_t job_info[], size_t ninfo, const pmix_app_t apps[], size_t napps,
                  spawn_fn done) {
    PMIXCPP_RETURN_IF_ERROR(check_infos(job_info, ninfo));
    if (apps == nullptr || napps == 0) return Status(PMIX_ERR_BAD_PARAM, "no apps to spawn");
    wire::spawn_request req;
    PMIXCPP_RETURN_IF_ERROR(info_array_copy(job_info, ninfo, &req.job_info));
    if (get_log_level() >= log_level::debug)
        PMIXCPP_LOG_DEBUG("spawn: job attributes %s", format_infos_brief(job_info, ninfo).c_str());
    for (size_t i = 0; i < napps; ++i) {
        const pmix_app_t &a = apps[i];
        if (a.cmd == nullptr || a.cmd[0] == '\0') return Status(PMIX_ERR_BAD_PARAM, "app without a command");
        if (get_log_level() >= log_level::debug)
            PMIXCPP_LOG_DEBUG("spawn: app %zu: %s, %d processes, cwd %s, attributes %s", i, a.cmd, a.maxprocs,
                              a.cwd ? a.cwd : "(none)", format_infos_brief(a.info, a.ninfo).c_str());
        if (a.maxprocs < 0) return Status(PMIX_ERR_BAD_PARAM, "negative maxprocs");
        PMIXCPP_RETURN_IF_ERROR(check_infos(a.info, a.ninfo));
        wire::spawn_app w;
        w.cmd = a.cmd;
        copy_strings(a.argv, &w.argv);
        copy_strings(a.env, &w.env);
        if (a.cwd != nullptr) w.cwd = a.cwd;
        w.maxprocs = a.maxprocs;
        PMIXCPP_RETURN_IF_ERROR(info_array_copy(a.info, a.ninfo, &w.info));
        req.apps.push_back(std::move(w));
    }
    wire::Writer w;
    PMIXCPP_RETURN_IF_ERROR(wire::encode(w, req));
    return c.request(wire::msg_type::spawn, w, [done](pmix_status_t st, const std::string &msg, wire::Reader &body) {
        wire::spawn_reply reply;
        if (st == PMIX_SUCCESS) {
            Status s = wire::decode(body, &reply);
            if (!s.ok()) st = PMIX_ERR_UNPACK_FAILURE;
        } else {
            PMIXCPP_LOG_DEBUG("spawn: %s %s", PMIx_Error_string(st), msg.c_str());
        }
        done(st, reply.nspace);
    });
}

}  // namespace

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_Spawn_nb(const pmix_info_t job_info[], size_t ninfo, const pmix_app_t apps[],
                                        size_t napps, pmix_spawn_cbfunc_t cbfunc, void *cbdata) {
    return api_guard(__func__, [&]() -> Status {
        PMIXCPP_ASSIGN_OR_RETURN(auto c, require_client());
        return send_spawn(*c, job_info, ninfo, apps, napps,
                          [cbfunc, cbdata](pmix_status_t st, const std::string &ns) {
                              if (cbfunc == nullptr) return;
                              char nspace[PMIX_MAX_NSLEN + 1] = {0};
                              strncpy(nspace, ns.c_str(), PMIX_MAX_NSLEN);
                              cbfunc(st, nspace, cbdata);
                          });
    });
}

PMIX_EXPORT pmix_status_t PMIx_Spawn(const pmix_info_t job_info[], size_t ninfo, const pmix_app_t apps[],
                                     size_t napps, pmix_nspace_t nspace) {
    return api_guard(__func__, [&]() -> Status {
        PMIXCPP_ASSIGN_OR_RETURN(auto c, require_client());
        if (on_progress_thread(c)) return Status(PMIX_ERR_WOULD_BLOCK, "PMIx_Spawn called from a callback");
        struct Outcome {
            pmix_status_t status = PMIX_ERROR;
            std::string nspace;
        };
        auto sync = std::make_shared<Sync<Outcome>>();
        PMIXCPP_RETURN_IF_ERROR(
            send_spawn(*c, job_info, ninfo, apps, napps, [sync](pmix_status_t st, const std::string &ns) {
                Outcome o;
                o.status = st;
                o.nspace = ns;
                sync->set(std::move(o));
            }));
        Outcome &o = sync->wait();
        if (o.status == PMIX_SUCCESS && nspace != nullptr) {
            memset(nspace, 0, PMIX_MAX_NSLEN + 1);
            strncpy(nspace, o.nspace.c_str(), PMIX_MAX_NSLEN);
        }
        return Status(o.status, "spawn failed");
    });
}

}  // extern "C"
