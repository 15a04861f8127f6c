// PMIx_Fabric_register / _update / _deregister (and _nb) in an application process: the matrix
// comes from the step's server, which asks srun's side (plugin/services/fabric/fabric_codec.h); it is
// the same cost matrix over the same vertices as the scheduler API (client/sched). The fabric's
// memory (info, module) is ours until PMIx_Fabric_deregister. In a process initialised with
// PMIx_server_init(PMIX_SERVER_SCHEDULER) and no client connection, the calls go to the
// scheduler context instead.
#include <pmix.h>
#include <pmix_server.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>

#include "fabric/fabric_wire.h"
#include "sched/sched.h"
#include "api.h"
#include "info_call.h"

using namespace pmixcpp;
using namespace pmixcpp::client;

namespace {

std::mutex g_lock;
std::set<pmix_fabric_t *> g_fabrics;  // registered through the step's server
size_t g_next_index = 1;

Result<std::string> plane_of(const pmix_info_t *dirs, size_t ndirs) {
    PMIXCPP_RETURN_IF_ERROR(check_infos(dirs, ndirs));
    for (const char *key : {PMIX_NETWORK_PLANE, PMIX_FABRIC_PLANE}) {
        const pmix_info_t *i = find_info(dirs, ndirs, key);
        if (i == nullptr) continue;
        if (i->value.type != PMIX_STRING || i->value.data.string == nullptr)
            return Status(PMIX_ERR_BAD_PARAM, std::string(key) + " must be a string");
        return std::string(i->value.data.string);
    }
    return std::string("default");
}

// The scheduler context when this process has no client connection (else nullptr).
sched::scheduler_context *scheduler_fallback() {
    if (current() != nullptr) return nullptr;
    sched::scheduler_context *ctx = sched::current_context();
    return ctx != nullptr && ctx->scheduler() ? ctx : nullptr;
}

// The server's answer into the caller's fabric (progress thread).
Status install(pmix_fabric_t *f, sched::fabric_op op, const InfoArray &results, bool seed_layout) {
    auto st = std::make_unique<sched::fabric_state>();
    st->seed_layout = seed_layout;
    sched::cost_matrix matrix;
    PMIXCPP_RETURN_IF_ERROR(sched::matrix_from_results(results.data(), results.size(), &matrix, &st->plane));
    std::lock_guard<std::mutex> g(g_lock);
    if (op == sched::fabric_op::update) {
        if (g_fabrics.count(f) == 0) return Status(PMIX_ERR_BAD_PARAM, "fabric deregistered during the update");
        auto *cur = static_cast<sched::fabric_state *>(f->module);
        st->seed_layout = cur->seed_layout;
        // Swap in the new matrix only once the new info exists (the old rows stay valid until then).
        pmix_fabric_t copy = *f;
        copy.info = nullptr;
        copy.ninfo = 0;
        PMIXCPP_RETURN_IF_ERROR(sched::fill_fabric_info(&copy, st.get(), std::move(matrix)));
        sched::clear_fabric_fields(f, st->seed_layout);
        f->info = copy.info;
        f->ninfo = copy.ninfo;
        delete cur;
        f->module = st.release();
        return Status::success();
    }
    if (g_fabrics.count(f)) return Status(PMIX_ERR_BAD_PARAM, "fabric already registered");
    pmix_fabric_t copy = *f;
    copy.info = nullptr;
    copy.ninfo = 0;
    copy.index = g_next_index;
    PMIXCPP_RETURN_IF_ERROR(sched::fill_fabric_info(&copy, st.get(), std::move(matrix)));
    copy.name = strdup(st->plane.c_str());
    if (copy.name == nullptr) {
        sched::clear_fabric_fields(&copy, st->seed_layout);
        return Status(PMIX_ERR_NOMEM, "out of memory");
    }
    ++g_next_index;
    free(f->name);
    copy.module = st.release();
    *f = copy;
    g_fabrics.insert(f);
    return Status::success();
}

using fabric_done = std::function<void(pmix_status_t)>;

Status ask_server(Client &c, pmix_fabric_t *f, sched::fabric_op op, std::string plane, bool seed_layout,
                  fabric_done done) {
    wire::Writer w;
    PMIXCPP_RETURN_IF_ERROR(sched::encode_client_request(w, {op, std::move(plane)}));
    return send_info_request(c, wire::msg_type::fabric, w,
                             [f, op, done, seed_layout](pmix_status_t status, const std::string &msg,
                                                        InfoArray &&results) {
                                 if (status == PMIX_SUCCESS) {
                                     Status st = install(f, op, results, seed_layout);
                                     if (!st.ok()) PMIXCPP_LOG_DEBUG("fabric: %s", st.message().c_str());
                                     status = st.code();
                                 } else {
                                     PMIXCPP_LOG_DEBUG("fabric: %s: %s", PMIx_Error_string(status), msg.c_str());
                                 }
                                 done(status);
                             });
}

// Both forms: `cbfunc` == nullptr = blocking.
Status start(pmix_fabric_t *f, sched::fabric_op op, const pmix_info_t *dirs, size_t ndirs, pmix_op_cbfunc_t cbfunc,
             void *cbdata, bool *answered_now, bool seed_layout) {
    *answered_now = false;
    if (f == nullptr) return Status(PMIX_ERR_BAD_PARAM, "fabric is NULL");
    std::string plane = "default";
    if (op == sched::fabric_op::registration) {
        PMIXCPP_ASSIGN_OR_RETURN(auto p, plane_of(dirs, ndirs));
        plane = p;
    }
    if (auto *ctx = scheduler_fallback()) {
        *answered_now = true;
        if (op == sched::fabric_op::registration) return ctx->register_fabric(f, dirs, ndirs, seed_layout);
        // The scheduler context keeps its matrices current itself (its poller).
        return f->module != nullptr ? Status::success() : Status(PMIX_ERR_BAD_PARAM, "fabric not registered");
    }
    PMIXCPP_ASSIGN_OR_RETURN(auto c, require_client());
    if (op == sched::fabric_op::update) {
        std::lock_guard<std::mutex> g(g_lock);
        if (g_fabrics.count(f) == 0) return Status(PMIX_ERR_BAD_PARAM, "fabric not registered");
        plane = static_cast<sched::fabric_state *>(f->module)->plane;
    }
    if (cbfunc != nullptr)
        return ask_server(*c, f, op, plane, seed_layout,
                          [cbfunc, cbdata](pmix_status_t s) { cbfunc(s, cbdata); });
    if (on_progress_thread(c)) return Status(PMIX_ERR_WOULD_BLOCK, "blocking fabric call from a callback");
    auto sync = std::make_shared<Sync<pmix_status_t>>();
    PMIXCPP_RETURN_IF_ERROR(
        ask_server(*c, f, op, plane, seed_layout, [sync](pmix_status_t s) { sync->set(s); }));
    *answered_now = true;
    pmix_status_t s = sync->wait();
    return s == PMIX_SUCCESS ? Status::success() : Status(s, "fabric request failed");
}

Status deregister(pmix_fabric_t *f) {
    if (f == nullptr) return Status(PMIX_ERR_BAD_PARAM, "fabric is NULL");
    {
        std::lock_guard<std::mutex> g(g_lock);
        if (g_fabrics.erase(f)) {
            sched::release_fabric(f);
            return Status::success();
        }
    }
    if (sched::scheduler_context *ctx = sched::current_context()) return ctx->deregister_fabric(f);
    return Status(PMIX_ERR_BAD_PARAM, "fabric not registered");
}


// The entry points of both pmix_fabric_t layouts (pmix_common.h): the same code, told which one.
pmix_status_t fabric_register(const char *fn, pmix_fabric_t *fabric, const pmix_info_t *dirs, size_t ndirs,
                              bool seed) {
    return api_guard(fn, [&]() -> Status {
        bool now = false;
        return start(fabric, sched::fabric_op::registration, dirs, ndirs, nullptr, nullptr, &now, seed);
    });
}

pmix_status_t fabric_register_nb(const char *fn, pmix_fabric_t *fabric, const pmix_info_t *dirs, size_t ndirs,
                                 pmix_op_cbfunc_t cbfunc, void *cbdata, bool seed) {
    return api_guard(fn, [&]() -> pmix_status_t {
        if (cbfunc == nullptr) return PMIX_ERR_BAD_PARAM;
        bool now = false;
        Status st = start(fabric, sched::fabric_op::registration, dirs, ndirs, cbfunc, cbdata, &now, seed);
        if (!st.ok()) return boundary_code(fn, st);
        return now ? PMIX_OPERATION_SUCCEEDED : PMIX_SUCCESS;
    });
}

pmix_status_t fabric_update(const char *fn, pmix_fabric_t *fabric, bool seed) {
    return api_guard(fn, [&]() -> Status {
        bool now = false;
        return start(fabric, sched::fabric_op::update, nullptr, 0, nullptr, nullptr, &now, seed);
    });
}

pmix_status_t fabric_update_nb(const char *fn, pmix_fabric_t *fabric, pmix_op_cbfunc_t cbfunc, void *cbdata,
                               bool seed) {
    return api_guard(fn, [&]() -> pmix_status_t {
        if (cbfunc == nullptr) return PMIX_ERR_BAD_PARAM;
        bool now = false;
        Status st = start(fabric, sched::fabric_op::update, nullptr, 0, cbfunc, cbdata, &now, seed);
        if (!st.ok()) return boundary_code(fn, st);
        return now ? PMIX_OPERATION_SUCCEEDED : PMIX_SUCCESS;
    });
}

pmix_status_t fabric_deregister(const char *fn, pmix_fabric_t *fabric) {
    return api_guard(fn, [&]() -> Status { return deregister(fabric); });
}

// Local work only: done at once (PMIX_OPERATION_SUCCEEDED, the callback is not called).
pmix_status_t fabric_deregister_nb(const char *fn, pmix_fabric_t *fabric) {
    return api_guard(fn, [&]() -> pmix_status_t {
        Status st = deregister(fabric);
        return st.ok() ? PMIX_OPERATION_SUCCEEDED : boundary_code(fn, st);
    });
}

}  // namespace

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_Fabric_register(pmix_fabric_t *fabric, const pmix_info_t directives[], size_t ndirs) {
    return fabric_register(__func__, fabric, directives, ndirs, false);
}
PMIX_EXPORT pmix_status_t PMIx_Fabric_register_nb(pmix_fabric_t *fabric, const pmix_info_t directives[], size_t ndirs,
                                                  pmix_op_cbfunc_t cbfunc, void *cbdata) {
    return fabric_register_nb(__func__, fabric, directives, ndirs, cbfunc, cbdata, false);
}
PMIX_EXPORT pmix_status_t PMIx_Fabric_update(pmix_fabric_t *fabric) { return fabric_update(__func__, fabric, false); }
PMIX_EXPORT pmix_status_t PMIx_Fabric_update_nb(pmix_fabric_t *fabric, pmix_op_cbfunc_t cbfunc, void *cbdata) {
    return fabric_update_nb(__func__, fabric, cbfunc, cbdata, false);
}
PMIX_EXPORT pmix_status_t PMIx_Fabric_deregister(pmix_fabric_t *fabric) { return fabric_deregister(__func__, fabric); }
PMIX_EXPORT pmix_status_t PMIx_Fabric_deregister_nb(pmix_fabric_t *fabric, pmix_op_cbfunc_t, void *) {
    return fabric_deregister_nb(__func__, fabric);
}

// The seed layout's (PMIXCPP_FABRIC_SEED_LAYOUT): the caller's struct is a sched::seed_fabric.
PMIX_EXPORT pmix_status_t PMIx_Fabric_register_seed(pmix_fabric_t *fabric, const pmix_info_t directives[],
                                                    size_t ndirs) {
    return fabric_register(__func__, fabric, directives, ndirs, true);
}
PMIX_EXPORT pmix_status_t PMIx_Fabric_register_nb_seed(pmix_fabric_t *fabric, const pmix_info_t directives[],
                                                       size_t ndirs, pmix_op_cbfunc_t cbfunc, void *cbdata) {
    return fabric_register_nb(__func__, fabric, directives, ndirs, cbfunc, cbdata, true);
}
PMIX_EXPORT pmix_status_t PMIx_Fabric_update_seed(pmix_fabric_t *fabric) { return fabric_update(__func__, fabric, true); }
PMIX_EXPORT pmix_status_t PMIx_Fabric_update_nb_seed(pmix_fabric_t *fabric, pmix_op_cbfunc_t cbfunc, void *cbdata) {
    return fabric_update_nb(__func__, fabric, cbfunc, cbdata, true);
}
PMIX_EXPORT pmix_status_t PMIx_Fabric_deregister_seed(pmix_fabric_t *fabric) {
    return fabric_deregister(__func__, fabric);
}
PMIX_EXPORT pmix_status_t PMIx_Fabric_deregister_nb_seed(pmix_fabric_t *fabric, pmix_op_cbfunc_t, void *) {
    return fabric_deregister_nb(__func__, fabric);
}

}  // extern "C"
