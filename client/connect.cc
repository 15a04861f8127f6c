// PMIx_Connect / PMIx_Disconnect (blocking and _nb): a collective of every listed proc, across
// namespaces (steps of one job). The node's server gathers its local participants and meets the
// other namespaces' servers through the job's rendezvous beside srun (plugin/server/connect.h).
// A connect reply carries the other namespaces' job data and the procs' committed data visible
// to us; it is kept beside PMIx_Store_internal's data, so a later Get (also an optional one) of
// a connected proc is answered locally.
#include <pmix.h>

#include <cstring>
#include <memory>

#include "api.h"

using namespace pmixcpp;
using namespace pmixcpp::client;

namespace {

using done_fn = std::function<void(pmix_status_t)>;

Status send_connect(Client &c, wire::msg_type type, const pmix_proc_t procs[], size_t nprocs,
                    const pmix_info_t info[], size_t ninfo, done_fn done) {
    if (procs == nullptr || nprocs == 0) return Status(PMIX_ERR_BAD_PARAM, "no procs to connect");
    PMIXCPP_RETURN_IF_ERROR(check_infos(info, ninfo));
    PMIXCPP_ASSIGN_OR_RETURN(auto t, info_timeout(info, ninfo));
    wire::fence_request req;
    for (size_t i = 0; i < nprocs; ++i) {
        PMIXCPP_RETURN_IF_ERROR(check_proc(&procs[i]));
        pmix_proc_t p = procs[i];
        if (p.nspace[0] == '\0') memcpy(p.nspace, c.self().nspace, sizeof(p.nspace));
        if (p.rank == PMIX_RANK_UNDEF) return Status(PMIX_ERR_BAD_PARAM, "connect participant with PMIX_RANK_UNDEF");
        req.procs.push_back(p);
    }
    PMIXCPP_RETURN_IF_ERROR(info_array_copy(info, ninfo, &req.infos));
    wire::Writer w;
    PMIXCPP_RETURN_IF_ERROR(wire::encode(w, req));
    // The server enforces PMIX_TIMEOUT and says why; our own bound only catches a lost server.
    double timeout = t > 0 ? t + 5 : 0;
    Client *cp = &c;
    const bool is_connect = type == wire::msg_type::xconnect;
    return c.request(
        type, w,
        [cp, is_connect, done](pmix_status_t st, const std::string &msg, wire::Reader &body) {
            if (st == PMIX_SUCCESS && is_connect) {
                wire::connect_data data;
                Status s = wire::decode(body, &data);
                if (!s.ok()) {
                    PMIXCPP_LOG_ERROR("malformed connect reply: %s", s.message().c_str());
                    st = PMIX_ERR_UNPACK_FAILURE;
                }
                for (auto &e : data.entries)
                    for (size_t i = 0; i < e.infos.size() && st == PMIX_SUCCESS; ++i)
                        // best effort: a key not kept here is asked of the server by a later Get
                        (void)cp->data().store_internal(
                            e.proc, std::string_view(e.infos[i].key, strnlen(e.infos[i].key, PMIX_MAX_KEYLEN)),
                            &e.infos[i].value);
            } else if (st != PMIX_SUCCESS) {
                PMIXCPP_LOG_DEBUG("%s: %s %s", is_connect ? "connect" : "disconnect", PMIx_Error_string(st),
                                  msg.c_str());
            }
            done(st);
        },
        timeout);
}

pmix_status_t blocking(wire::msg_type type, const char *fn, const pmix_proc_t procs[], size_t nprocs,
                       const pmix_info_t info[], size_t ninfo) {
    return api_guard(fn, [&]() -> Status {
        PMIXCPP_ASSIGN_OR_RETURN(auto c, require_client());
        if (on_progress_thread(c))
            return Status(PMIX_ERR_WOULD_BLOCK, std::string(fn) + " called from a callback");
        auto sync = std::make_shared<Sync<pmix_status_t>>();
        PMIXCPP_RETURN_IF_ERROR(
            send_connect(*c, type, procs, nprocs, info, ninfo, [sync](pmix_status_t st) { sync->set(st); }));
        return Status(sync->wait(), std::string(fn) + " failed");
    });
}

pmix_status_t non_blocking(wire::msg_type type, const char *fn, const pmix_proc_t procs[], size_t nprocs,
                           const pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata) {
    return api_guard(fn, [&]() -> Status {
        PMIXCPP_ASSIGN_OR_RETURN(auto c, require_client());
        return send_connect(*c, type, procs, nprocs, info, ninfo, [cbfunc, cbdata](pmix_status_t st) {
            if (cbfunc) cbfunc(st, cbdata);
        });
    });
}

}  // namespace

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_Connect(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                                       size_t ninfo) {
    return blocking(wire::msg_type::xconnect, __func__, procs, nprocs, info, ninfo);
}
PMIX_EXPORT pmix_status_t PMIx_Connect_nb(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                                          size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata) {
    return non_blocking(wire::msg_type::xconnect, __func__, procs, nprocs, info, ninfo, cbfunc, cbdata);
}
PMIX_EXPORT pmix_status_t PMIx_Disconnect(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                                          size_t ninfo) {
    return blocking(wire::msg_type::xdisconnect, __func__, procs, nprocs, info, ninfo);
}
PMIX_EXPORT pmix_status_t PMIx_Disconnect_nb(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                                             size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata) {
    return non_blocking(wire::msg_type::xdisconnect, __func__, procs, nprocs, info, ninfo, cbfunc, cbdata);
}

}  // extern "C"
