// PMIx_Query_info(_nb): the queries go to the node's server, which answers what the step knows of
// itself at once and asks srun's side for allocation status and remaining time
// (plugin/server/alloc.h lists the keys). Results are a flat list of (key, value) infos.
#include <pmix.h>

#include "api.h"
#include "info_call.h"

using namespace pmixcpp;
using namespace pmixcpp::client;

namespace {

Status build_query(const pmix_query_t queries[], size_t nqueries, wire::Writer *w) {
    if (queries == nullptr || nqueries == 0) return Status(PMIX_ERR_BAD_PARAM, "no queries");
    wire::query_request req;
    req.queries.resize(nqueries);
    for (size_t q = 0; q < nqueries; ++q) {
        const pmix_query_t &in = queries[q];
        if (in.keys == nullptr || in.keys[0] == nullptr)
            return Status(PMIX_ERR_BAD_PARAM, "query " + std::to_string(q) + " has no keys");
        for (char **k = in.keys; *k != nullptr; ++k) {
            PMIXCPP_RETURN_IF_ERROR(check_key(*k));
            req.queries[q].keys.emplace_back(*k);
        }
        PMIXCPP_RETURN_IF_ERROR(check_infos(in.qualifiers, in.nqual));
        PMIXCPP_RETURN_IF_ERROR(info_array_copy(in.qualifiers, in.nqual, &req.queries[q].qualifiers));
    }
    return wire::encode(*w, req);
}

}  // namespace

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_Query_info_nb(pmix_query_t queries[], size_t nqueries, pmix_info_cbfunc_t cbfunc,
                                             void *cbdata) {
    return api_guard(__func__, [&]() -> Status {
        if (cbfunc == nullptr) return Status(PMIX_ERR_BAD_PARAM, "no callback");
        auto c = require_client();
        if (!c.ok()) return c.status();
        wire::Writer w;
        PMIXCPP_RETURN_IF_ERROR(build_query(queries, nqueries, &w));
        return send_info_request(*c.value(), wire::msg_type::query, w, to_info_cbfunc(cbfunc, cbdata));
    });
}

PMIX_EXPORT pmix_status_t PMIx_Query_info(pmix_query_t queries[], size_t nqueries, pmix_info_t **results,
                                          size_t *nresults) {
    return api_guard(__func__, [&]() -> Status {
        if (results != nullptr) *results = nullptr;
        if (nresults != nullptr) *nresults = 0;
        auto c = require_client();
        if (!c.ok()) return c.status();
        if (on_progress_thread(c.value()))
            return Status(PMIX_ERR_WOULD_BLOCK, "PMIx_Query_info called from a callback");
        wire::Writer w;
        PMIXCPP_RETURN_IF_ERROR(build_query(queries, nqueries, &w));
        return wait_info_request(*c.value(), wire::msg_type::query, w, results, nresults, "query");
    });
}

}  // extern "C"
