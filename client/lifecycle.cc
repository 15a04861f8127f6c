// PMIx_Init / PMIx_Finalize (reference counted), PMIx_Initialized, PMIx_Abort, PMIx_Get_version,
// PMIx_Progress.
#include <pmix.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <mutex>

#include "api.h"
#include "events_signals.h"

using namespace pmixcpp;
using namespace pmixcpp::client;

namespace {
std::mutex g_life_lock;  // serialises Init/Finalize
std::atomic<int> g_refs{0};

constexpr auto kAbortTimeout = std::chrono::seconds(120);
}  // namespace

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_Init(pmix_proc_t *proc, pmix_info_t info[], size_t ninfo) {
    return api_guard(__func__, [&]() -> Status {
        PMIXCPP_RETURN_IF_ERROR(check_infos(info, ninfo));
        std::lock_guard<std::mutex> g(g_life_lock);
        if (g_refs.load() > 0) {
            g_refs.fetch_add(1);
            if (proc != nullptr) *proc = current()->self();
            return Status::success();
        }
        log_init_from_env("PMIXCPP_DEBUG");
        auto env = read_client_env();
        if (!env.ok()) {
            PMIXCPP_LOG_DEBUG("PMIx_Init: %s", env.status().message().c_str());
            return Status(PMIX_ERR_INIT, env.status().message());
        }
        auto c = std::make_unique<Client>();
        Status st = c->start(env.value());
        if (!st.ok()) {
            PMIXCPP_LOG_ERROR("PMIx_Init of %s:%u failed: %s", env->nspace.c_str(), env->rank,
                              st.message().c_str());
            return st;
        }
        if (proc != nullptr) *proc = c->self();
        install_signal_events(*c);
        set_current(c.release());
        g_refs.store(1);
        return Status::success();
    });
}

PMIX_EXPORT pmix_status_t PMIx_Finalize(const pmix_info_t info[], size_t ninfo) {
    return api_guard(__func__, [&]() -> Status {
        PMIXCPP_RETURN_IF_ERROR(check_infos(info, ninfo));
        std::lock_guard<std::mutex> g(g_life_lock);
        if (g_refs.load() == 0) return Status(PMIX_ERR_INIT, "not initialized");
        Client *c = current();
        if (g_refs.load() > 1) {
            g_refs.fetch_sub(1);
            return Status::success();
        }
        if (on_progress_thread(c))
            return Status(PMIX_ERR_WOULD_BLOCK, "PMIx_Finalize called from a callback");
        remove_signal_events();  // while the progress thread still runs what the signals posted
        c->stop();
        g_refs.store(0);
        set_current(nullptr);
        delete c;
        return Status::success();
    });
}

PMIX_EXPORT int PMIx_Initialized(void) { return g_refs.load() > 0 ? 1 : 0; }

PMIX_EXPORT pmix_status_t PMIx_Abort(int status, const char msg[], pmix_proc_t procs[], size_t nprocs) {
    return api_guard(__func__, [&]() -> Status {
        PMIXCPP_ASSIGN_OR_RETURN(auto cr, require_client());
        Client *c = cr;
        if (nprocs > 0 && procs == nullptr) return Status(PMIX_ERR_BAD_PARAM, "procs is NULL but nprocs > 0");
        for (size_t i = 0; i < nprocs; ++i) PMIXCPP_RETURN_IF_ERROR(check_proc(&procs[i]));
        fprintf(stderr, "PMIx_Abort by %s:%u: %s\n", c->self().nspace, c->self().rank, msg ? msg : "");
        fflush(stderr);

        wire::abort_request req;
        req.status = status;
        req.message = msg ? msg : "";
        req.procs.assign(procs, procs + nprocs);
        wire::Writer w;
        PMIXCPP_RETURN_IF_ERROR(wire::encode(w, req));
        auto sync = std::make_shared<Sync<pmix_status_t>>();
        PMIXCPP_RETURN_IF_ERROR(c->request(
            wire::msg_type::abort, w, [sync](pmix_status_t st, const std::string &m, wire::Reader &) {
                if (st != PMIX_SUCCESS)
                    PMIXCPP_LOG_ERROR("abort: server answered %s %s", PMIx_Error_string(st), m.c_str());
                sync->set(st);
            }));
        if (on_progress_thread(c)) {
            // Cannot wait for our own thread: at least make sure the request left the process.
            c->loop().flush_blocking(std::chrono::milliseconds(5000));
            return Status::success();
        }
        if (!sync->wait_for(kAbortTimeout))
            return Status(PMIX_ERR_TIMEOUT, "no answer from the server to abort");
        return Status(sync->value(), "");
    });
}

PMIX_EXPORT const char *PMIx_Get_version(void) { return "4.2.2 (pmixcpp)"; }

PMIX_EXPORT void PMIx_Progress(void) {}

}  // extern "C"
