// PMIx_Query_info(_nb): the queries go to the node's server, which answers what the step knows of
// itself (the process table gathered from every node) and asks srun's side for allocation status
// and remaining time (plugin/server/alloc.h lists the keys). Results: a PMIX_QUERY_RESULTS per
// query (PMIx v4.1), then the same answers as flat (key, value) infos; the ABI-level keys this
// library answers itself come flat only.
#include <pmix.h>

#include <cstdlib>
#include <cstring>

#include "api.h"
#include "info_call.h"

using namespace pmixcpp;
using namespace pmixcpp::client;

namespace {

// Keys the library answers itself, also before PMIx_Init: the Standard ABI levels it implements
// (those of OpenPMIx 4.2.2, whose ABI it follows).
constexpr const char *kStableAbi = "0.0";
constexpr const char *kProvisionalAbi = "0.0";

bool local_key(const char *k) {
    return strcmp(k, PMIX_QUERY_STABLE_ABI_VERSION) == 0 || strcmp(k, PMIX_QUERY_PROVISIONAL_ABI_VERSION) == 0;
}

Status check_queries(const pmix_query_t queries[], size_t nqueries) {
    if (queries == nullptr || nqueries == 0) return Status(PMIX_ERR_BAD_PARAM, "no queries");
    for (size_t q = 0; q < nqueries; ++q) {
        const pmix_query_t &in = queries[q];
        if (in.keys == nullptr || in.keys[0] == nullptr)
            return Status(PMIX_ERR_BAD_PARAM, "query " + std::to_string(q) + " has no keys");
        for (char **k = in.keys; *k != nullptr; ++k) PMIXCPP_RETURN_IF_ERROR(check_key(*k));
        PMIXCPP_RETURN_IF_ERROR(check_infos(in.qualifiers, in.nqual));
    }
    return Status::success();
}

// The queries for the server: every key but the local ones; *sent = how many queries remain.
Status build_query(const pmix_query_t queries[], size_t nqueries, wire::Writer *w, size_t *sent) {
    wire::query_request req;
    for (size_t q = 0; q < nqueries; ++q) {
        const pmix_query_t &in = queries[q];
        wire::query_entry one;
        for (char **k = in.keys; *k != nullptr; ++k)
            if (!local_key(*k)) one.keys.emplace_back(*k);
        if (one.keys.empty()) continue;
        PMIXCPP_RETURN_IF_ERROR(info_array_copy(in.qualifiers, in.nqual, &one.qualifiers));
        req.queries.push_back(std::move(one));
    }
    *sent = req.queries.size();
    if (req.queries.empty()) return Status::success();
    return wire::encode(*w, req);
}

// The answers to the local keys, in query order.
Result<InfoArray> local_answers(const pmix_query_t queries[], size_t nqueries) {
    std::vector<const char *> keys;
    for (size_t q = 0; q < nqueries; ++q)
        for (char **k = queries[q].keys; *k != nullptr; ++k)
            if (local_key(*k)) keys.push_back(*k);
    if (keys.empty()) return InfoArray();
    auto *arr = static_cast<pmix_info_t *>(calloc(keys.size(), sizeof(pmix_info_t)));
    if (arr == nullptr) return Status(PMIX_ERR_NOMEM, "out of memory");
    InfoArray out(arr, keys.size());
    for (size_t i = 0; i < keys.size(); ++i) {
        strncpy(arr[i].key, keys[i], PMIX_MAX_KEYLEN);
        const char *v = strcmp(keys[i], PMIX_QUERY_STABLE_ABI_VERSION) == 0 ? kStableAbi : kProvisionalAbi;
        PMIXCPP_RETURN_IF_ERROR(value_load(&arr[i].value, v, PMIX_STRING));
    }
    return out;
}

// a followed by b (the infos move; both arrays end empty).
InfoArray concat(InfoArray &&a, InfoArray &&b) {
    if (b.size() == 0) return std::move(a);
    if (a.size() == 0) return std::move(b);
    size_t na = a.size(), nb = b.size();
    auto *arr = static_cast<pmix_info_t *>(calloc(na + nb, sizeof(pmix_info_t)));
    if (arr == nullptr) return std::move(a);
    memcpy(arr, a.data(), na * sizeof(pmix_info_t));
    memcpy(arr + na, b.data(), nb * sizeof(pmix_info_t));
    free(a.release());
    free(b.release());
    return InfoArray(arr, na + nb);
}

void release_local(void *cbdata) { delete static_cast<InfoArray *>(cbdata); }

}  // namespace

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_Query_info_nb(pmix_query_t queries[], size_t nqueries, pmix_info_cbfunc_t cbfunc,
                                             void *cbdata) {
    return api_guard(__func__, [&]() -> Status {
        if (cbfunc == nullptr) return Status(PMIX_ERR_BAD_PARAM, "no callback");
        PMIXCPP_RETURN_IF_ERROR(check_queries(queries, nqueries));
        wire::Writer w;
        size_t sent = 0;
        PMIXCPP_RETURN_IF_ERROR(build_query(queries, nqueries, &w, &sent));
        PMIXCPP_ASSIGN_OR_RETURN(auto local, local_answers(queries, nqueries));
        if (sent == 0) {  // all answered here, before PMIx_Init too
            auto *keep = new InfoArray(std::move(local));
            cbfunc(PMIX_SUCCESS, keep->data(), keep->size(), cbdata, release_local, keep);
            return Status::success();
        }
        PMIXCPP_ASSIGN_OR_RETURN(auto c, require_client());
        auto mine = std::make_shared<InfoArray>(std::move(local));
        auto deliver = to_info_cbfunc(cbfunc, cbdata);
        return send_info_request(
            *c, wire::msg_type::query, w,
            [deliver, mine](pmix_status_t status, const std::string &msg, InfoArray &&r) {
                if (status == PMIX_SUCCESS || status == PMIX_QUERY_PARTIAL_SUCCESS)
                    r = concat(std::move(r), std::move(*mine));
                deliver(status, msg, std::move(r));
            });
    });
}

PMIX_EXPORT pmix_status_t PMIx_Query_info(pmix_query_t queries[], size_t nqueries, pmix_info_t **results,
                                          size_t *nresults) {
    return api_guard(__func__, [&]() -> Status {
        if (results != nullptr) *results = nullptr;
        if (nresults != nullptr) *nresults = 0;
        PMIXCPP_RETURN_IF_ERROR(check_queries(queries, nqueries));
        wire::Writer w;
        size_t sent = 0;
        PMIXCPP_RETURN_IF_ERROR(build_query(queries, nqueries, &w, &sent));
        PMIXCPP_ASSIGN_OR_RETURN(auto local, local_answers(queries, nqueries));
        InfoArray remote;
        Status st = Status::success();
        if (sent > 0) {
            PMIXCPP_ASSIGN_OR_RETURN(auto c, require_client());
            if (on_progress_thread(c))
                return Status(PMIX_ERR_WOULD_BLOCK, "PMIx_Query_info called from a callback");
            pmix_info_t *r = nullptr;
            size_t n = 0;
            st = wait_info_request(*c, wire::msg_type::query, w, &r, &n, "query");
            if (!st.ok() && st.code() != PMIX_QUERY_PARTIAL_SUCCESS) {
                if (results != nullptr) *results = r;
                if (nresults != nullptr) *nresults = n;
                return st;
            }
            remote = InfoArray(r, n);
        }
        InfoArray all = concat(std::move(remote), std::move(local));
        if (nresults != nullptr) *nresults = all.size();
        if (results != nullptr) *results = all.size() ? all.release() : nullptr;
        return st;
    });
}

}  // extern "C"
