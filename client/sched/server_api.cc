// The C boundary of the scheduler context: PMIx_server_init/finalize, the scheduler-side fabric
// calls and the inventory calls. Every function validates, calls C++ and maps failures (Status
// values and exceptions) to a status here. Other PMIx_server_* stay in client/unsupported.cc.
#include <pmix.h>
#include <pmix_server.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>

#include "c_boundary.h"
#include "inventory.h"
#include "log.h"
#include "sched.h"

using namespace pmixcpp;
using namespace pmixcpp::sched;

namespace {

std::mutex g_ctx_lock;
std::unique_ptr<scheduler_context> g_ctx;


bool info_true(const pmix_info_t *info, size_t n, const char *key) {
    const pmix_info_t *i = find_info(info, n, key);
    return i != nullptr &&
           (i->value.type == PMIX_UNDEF || (i->value.type == PMIX_BOOL && i->value.data.flag));
}

Result<unsigned> poll_seconds(const pmix_info_t *info, size_t n) {
    if (const pmix_info_t *i = find_info(info, n, PMIXCPP_SCHED_POLL)) {
        auto v = value_to_number<uint32_t>(i->value);
        if (!v.ok()) return Status(PMIX_ERR_BAD_PARAM, PMIXCPP_SCHED_POLL " must be a number of seconds");
        return unsigned(v.value());
    }
    if (const char *e = getenv("PMIXCPP_FABRIC_POLL"); e != nullptr && *e != '\0') {
        char *end = nullptr;
        unsigned long v = strtoul(e, &end, 10);
        if (end == e || *end != '\0' || v > 86400)
            return Status(PMIX_ERR_BAD_PARAM, std::string("PMIXCPP_FABRIC_POLL=") + e + " is not 0..86400");
        return unsigned(v);
    }
    return 10u;
}

// The scheduler context, or the status refusing the call.
Result<scheduler_context *> require_scheduler() {
    if (!g_ctx) return Status(PMIX_ERR_INIT, "PMIx_server_init was not called");
    if (!g_ctx->scheduler())
        return Status(PMIX_ERR_NOT_SUPPORTED, "needs PMIx_server_init with PMIX_SERVER_SCHEDULER");
    return g_ctx.get();
}

void release_infos(void *cbdata) { delete static_cast<InfoArray *>(cbdata); }

}  // namespace

namespace pmixcpp::sched {
scheduler_context *current_context() { return g_ctx.get(); }
}  // namespace pmixcpp::sched

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_server_init(pmix_server_module_t *module, pmix_info_t info[], size_t ninfo) {
    return c_boundary(__func__, [&]() -> Status {
        if (ninfo > 0 && info == nullptr) return Status(PMIX_ERR_BAD_PARAM, "info is NULL");
        std::lock_guard<std::mutex> g(g_ctx_lock);
        if (g_ctx) return Status(PMIX_ERR_INIT, "PMIx_server_init called twice");
        log_init_from_env("PMIXCPP_DEBUG");
        PMIXCPP_ASSIGN_OR_RETURN(auto poll, poll_seconds(info, ninfo));
        g_ctx = std::make_unique<scheduler_context>(info_true(info, ninfo, PMIX_SERVER_SCHEDULER), poll);
        return Status::success();
    });
}

PMIX_EXPORT pmix_status_t PMIx_server_finalize(void) {
    return c_boundary(__func__, [&]() -> Status {
        std::unique_ptr<scheduler_context> ctx;
        {
            std::lock_guard<std::mutex> g(g_ctx_lock);
            if (!g_ctx) return Status(PMIX_ERR_INIT, "not initialized");
            ctx = std::move(g_ctx);
        }
        ctx.reset();
        return Status::success();
    });
}

PMIX_EXPORT pmix_status_t PMIx_server_register_fabric(pmix_fabric_t *fabric, const pmix_info_t directives[],
                                                      size_t ndirs) {
    return c_boundary(__func__, [&]() -> Status {
        PMIXCPP_ASSIGN_OR_RETURN(auto ctx, require_scheduler());
        if (ndirs > 0 && directives == nullptr) return Status(PMIX_ERR_BAD_PARAM, "directives is NULL");
        return ctx->register_fabric(fabric, directives, ndirs);
    });
}

PMIX_EXPORT pmix_status_t PMIx_server_deregister_fabric(pmix_fabric_t *fabric) {
    return c_boundary(__func__, [&]() -> Status {
        PMIXCPP_ASSIGN_OR_RETURN(auto ctx, require_scheduler());
        return ctx->deregister_fabric(fabric);
    });
}

PMIX_EXPORT pmix_status_t PMIx_server_get_vertex_info(pmix_fabric_t *fabric, uint32_t i, pmix_value_t *vertex,
                                                      char **nodename) {
    return c_boundary(__func__, [&]() -> Status {
        PMIXCPP_ASSIGN_OR_RETURN(auto ctx, require_scheduler());
        return ctx->vertex_info(fabric, i, vertex, nodename);
    });
}

PMIX_EXPORT pmix_status_t PMIx_server_get_index(pmix_fabric_t *fabric, pmix_value_t *vertex, uint32_t *i) {
    return c_boundary(__func__, [&]() -> Status {
        PMIXCPP_ASSIGN_OR_RETURN(auto ctx, require_scheduler());
        return ctx->vertex_index(fabric, vertex, i);
    });
}

// The seed layout's entry points (PMIXCPP_FABRIC_SEED_LAYOUT, pmix_common.h): the caller's struct
// is a seed_fabric; vertex lookups read only the module, which both layouts share.
PMIX_EXPORT pmix_status_t PMIx_server_register_fabric_seed(pmix_fabric_t *fabric, const pmix_info_t directives[],
                                                           size_t ndirs) {
    return c_boundary(__func__, [&]() -> Status {
        PMIXCPP_ASSIGN_OR_RETURN(auto ctx, require_scheduler());
        if (ndirs > 0 && directives == nullptr) return Status(PMIX_ERR_BAD_PARAM, "directives is NULL");
        return ctx->register_fabric(fabric, directives, ndirs, true);
    });
}

PMIX_EXPORT pmix_status_t PMIx_server_deregister_fabric_seed(pmix_fabric_t *fabric) {
    return PMIx_server_deregister_fabric(fabric);
}

PMIX_EXPORT pmix_status_t PMIx_server_get_vertex_info_seed(pmix_fabric_t *fabric, uint32_t i, pmix_value_t *vertex,
                                                           char **nodename) {
    return PMIx_server_get_vertex_info(fabric, i, vertex, nodename);
}

PMIX_EXPORT pmix_status_t PMIx_server_get_index_seed(pmix_fabric_t *fabric, pmix_value_t *vertex, uint32_t *i) {
    return PMIx_server_get_index(fabric, vertex, i);
}

PMIX_EXPORT pmix_status_t PMIx_server_collect_inventory(pmix_info_t directives[], size_t ndirs,
                                                        pmix_info_cbfunc_t cbfunc, void *cbdata) {
    return c_boundary(__func__, [&]() -> Status {
        if (cbfunc == nullptr) return Status(PMIX_ERR_BAD_PARAM, "cbfunc is NULL");
        if (ndirs > 0 && directives == nullptr) return Status(PMIX_ERR_BAD_PARAM, "directives is NULL");
        std::unique_ptr<InfoArray> result;
        {
            std::lock_guard<std::mutex> g(g_ctx_lock);
            if (!g_ctx) return Status(PMIX_ERR_INIT, "PMIx_server_init was not called");
            if (info_true(directives, ndirs, PMIXCPP_INV_ALL)) {
                if (!g_ctx->scheduler())
                    return Status(PMIX_ERR_NOT_SUPPORTED, PMIXCPP_INV_ALL " needs PMIX_SERVER_SCHEDULER");
                PMIXCPP_ASSIGN_OR_RETURN(auto all, g_ctx->delivered_inventories());
                result = std::make_unique<InfoArray>(std::move(all));
            }
        }
        if (!result) {
            PMIXCPP_ASSIGN_OR_RETURN(auto inv, collect_local_inventory());
            result = std::make_unique<InfoArray>(std::move(inv));
        }
        // The answer comes from another thread, never from inside this call.
        InfoArray *keep = result.release();
        std::thread([keep, cbfunc, cbdata] {
            cbfunc(PMIX_SUCCESS, keep->data(), keep->size(), cbdata, release_infos, keep);
        }).detach();
        return Status::success();
    });
}

PMIX_EXPORT pmix_status_t PMIx_server_deliver_inventory(pmix_info_t info[], size_t ninfo, pmix_info_t directives[],
                                                        size_t ndirs, pmix_op_cbfunc_t cbfunc, void *cbdata) {
    return c_boundary(__func__, [&]() -> Status {
        std::lock_guard<std::mutex> g(g_ctx_lock);
        PMIXCPP_ASSIGN_OR_RETURN(auto ctx, require_scheduler());
        PMIXCPP_RETURN_IF_ERROR(ctx->deliver_inventory(info, ninfo));
        // Stored at once: PMIX_OPERATION_SUCCEEDED, the callback is not called.
        return Status(PMIX_OPERATION_SUCCEEDED, "stored");
    });
}

}  // extern "C"
