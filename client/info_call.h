// A request whose answer is a list of result infos (PMIx_Allocation_request, PMIx_Query_info):
// send it, and hand the results to a pmix_info_cbfunc_t with a release function, or wait for them.
#pragma once

#include <pmix.h>

#include <functional>
#include <memory>

#include "api.h"

namespace pmixcpp::client {

using info_done_fn = std::function<void(pmix_status_t status, const std::string &message, InfoArray &&results)>;

// Send `payload` as `type`; `done` runs once on the progress thread with the decoded results.
// A result info "pmixcpp.query.status" (PMIX_STATUS) replaces the status (partial answers).
Status send_info_request(Client &c, wire::msg_type type, const wire::Writer &payload, info_done_fn done);

// The non-blocking form's callback: results stay valid until the caller calls release_fn.
info_done_fn to_info_cbfunc(pmix_info_cbfunc_t cbfunc, void *cbdata);

// The blocking form: wait for the results and hand them out as a PMIX_INFO_FREE-able array.
Status wait_info_request(Client &c, wire::msg_type type, const wire::Writer &payload, pmix_info_t **results,
                         size_t *nresults, const char *what);

}  // namespace pmixcpp::client
