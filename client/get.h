// The PMIx_Get engine: local lookup first (store.h order), then a get request to the server.
#pragma once

#include <pmix_common.h>

#include <functional>

#include "client.h"

namespace pmixcpp::client {

struct GetOptions {
    bool optional = false;  // pmix.optional or pmix.immediate: local data only
    bool refresh = false;   // pmix.get.refresh: skip the cache of fetched data
    double timeout = 0;     // pmix.timeout (s), 0 = none
};
Result<GetOptions> parse_get_options(const pmix_info_t *info, size_t ninfo);

enum class local_outcome { found, not_found, ask_server };

// True for an attribute name of the PMIx standard (a PMIX_* attribute string of pmix_common.h).
bool standard_key(const char *key);

// Try to answer from local data. key == nullptr asks for all of the proc's data (a
// PMIX_DATA_ARRAY of PMIX_INFO). On `found` *out holds a copy. may_wait: the node's modex
// snapshot may be asked for first (a round trip; not from a non-blocking call or a callback).
local_outcome get_local(Client &c, const pmix_proc_t &target, const char *key, const GetOptions &opt,
                        pmix_value_t *out, Status *error, bool may_wait = true);

// Ask the server; `done` runs once with the status and (on success) the value, which `done` may
// take over (it is destructed afterwards): on the progress thread, or with `wait` before this
// returns (Client::request_wait, usually on the calling thread).
using GetDone = std::function<void(pmix_status_t status, pmix_value_t *value)>;
Status get_remote(Client &c, const pmix_proc_t &target, const char *key, const pmix_info_t *info,
                  size_t ninfo, const GetOptions &opt, GetDone done, bool wait);

}  // namespace pmixcpp::client
