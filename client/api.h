// The thin C boundary: argument checks, and api_guard, the library's name for the product's one
// C-boundary guard (shared/c_boundary.h) where failures (Status values and C++ exceptions) become
// PMIx status codes. Every extern "C" function of the library goes through it so that no
// exception crosses into the caller.
#pragma once

#include <pmix_common.h>

#include <cstring>
#include <new>
#include <utility>

#include "c_boundary.h"
#include "client.h"
#include "log.h"
#include "status.h"

namespace pmixcpp::client {

// Run `body` (returning pmix_status_t or Status) through the C-boundary guard.
template <typename F>
pmix_status_t api_guard(const char *function, F &&body) noexcept {
    return c_boundary(function, std::forward<F>(body));
}

// Key: not NULL, 1..PMIX_MAX_KEYLEN characters.
Status check_key(const char *key);
// Namespace: terminated within PMIX_MAX_NSLEN + 1 bytes (may be empty = own namespace where noted).
Status check_nspace(const char *nspace);
Status check_proc(const pmix_proc_t *proc);
// An info array argument: count 0 or a non-NULL array of well-formed keys.
Status check_infos(const pmix_info_t *info, size_t ninfo);
// Scope of a Put.
Status check_scope(pmix_scope_t scope);

// Lookups in caller-supplied directive arrays.
using pmixcpp::find_info;  // shared/value.h
// A boolean directive present and true (PMIX_UNDEF counts as true, as in the standard).
bool info_true(const pmix_info_t *info, size_t ninfo, const char *key);
// pmix.timeout in seconds (0 = none); BAD_PARAM if not a number or negative.
Result<double> info_timeout(const pmix_info_t *info, size_t ninfo);

// The live client or PMIX_ERR_INIT.
Result<Client *> require_client();

// Blocking calls made on the progress thread would wait for themselves.
inline bool on_progress_thread(Client *c) { return c != nullptr && c->loop().on_thread(); }

}  // namespace pmixcpp::client
