// PMIx_Allocation_request(_nb): checked here for shape (the server checks the attributes, see
// plugin/services/alloc/alloc_codec.h), sent to the node's server, which has srun's side ask slurmctld
// with the user's own credential. The answer may take as long as Slurm keeps the request pending.
#include <pmix.h>

#include "api.h"
#include "info_call.h"

using namespace pmixcpp;
using namespace pmixcpp::client;

namespace {

Status build_alloc(pmix_alloc_directive_t directive, const pmix_info_t *info, size_t ninfo, wire::Writer *w) {
    PMIXCPP_RETURN_IF_ERROR(check_infos(info, ninfo));
    wire::alloc_request req;
    req.directive = directive;
    PMIXCPP_RETURN_IF_ERROR(info_array_copy(info, ninfo, &req.infos));
    return wire::encode(*w, req);
}

}  // namespace

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_Allocation_request_nb(pmix_alloc_directive_t directive, pmix_info_t *info,
                                                     size_t ninfo, pmix_info_cbfunc_t cbfunc, void *cbdata) {
    return api_guard(__func__, [&]() -> Status {
        PMIXCPP_ASSIGN_OR_RETURN(auto c, require_client());
        wire::Writer w;
        PMIXCPP_RETURN_IF_ERROR(build_alloc(directive, info, ninfo, &w));
        return send_info_request(*c, wire::msg_type::alloc, w, to_info_cbfunc(cbfunc, cbdata));
    });
}

PMIX_EXPORT pmix_status_t PMIx_Allocation_request(pmix_alloc_directive_t directive, pmix_info_t *info,
                                                  size_t ninfo, pmix_info_t **results, size_t *nresults) {
    return api_guard(__func__, [&]() -> Status {
        if (results != nullptr) *results = nullptr;
        if (nresults != nullptr) *nresults = 0;
        PMIXCPP_ASSIGN_OR_RETURN(auto c, require_client());
        if (on_progress_thread(c))
            return Status(PMIX_ERR_WOULD_BLOCK, "PMIx_Allocation_request called from a callback");
        wire::Writer w;
        PMIXCPP_RETURN_IF_ERROR(build_alloc(directive, info, ninfo, &w));
        return wait_info_request(*c, wire::msg_type::alloc, w, results, nresults, "allocation request");
    });
}

}  // extern "C"
