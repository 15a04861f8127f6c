// Argument checks and status mapping shared by the C API functions (see api.h).
#include "api.h"

#include <pmix.h>

namespace pmixcpp::client {

Status check_key(const char *key) {
    if (key == nullptr) return Status(PMIX_ERR_BAD_PARAM, "key is NULL");
    size_t n = strnlen(key, PMIX_MAX_KEYLEN + 1);
    if (n == 0) return Status(PMIX_ERR_BAD_PARAM, "key is empty");
    if (n > PMIX_MAX_KEYLEN) return Status(PMIX_ERR_BAD_PARAM, "key longer than PMIX_MAX_KEYLEN");
    return Status::success();
}

Status check_nspace(const char *nspace) {
    if (nspace == nullptr) return Status(PMIX_ERR_BAD_PARAM, "namespace is NULL");
    if (strnlen(nspace, PMIX_MAX_NSLEN + 1) > PMIX_MAX_NSLEN)
        return Status(PMIX_ERR_BAD_PARAM, "namespace longer than PMIX_MAX_NSLEN");
    return Status::success();
}

Status check_proc(const pmix_proc_t *proc) {
    if (proc == nullptr) return Status(PMIX_ERR_BAD_PARAM, "proc is NULL");
    return check_nspace(proc->nspace);
}

Status check_infos(const pmix_info_t *info, size_t ninfo) {
    if (ninfo == 0) return Status::success();
    if (info == nullptr) return Status(PMIX_ERR_BAD_PARAM, "info array is NULL but ninfo > 0");
    for (size_t i = 0; i < ninfo; ++i)
        if (strnlen(info[i].key, PMIX_MAX_KEYLEN + 1) > PMIX_MAX_KEYLEN)
            return Status(PMIX_ERR_BAD_PARAM, "info key not terminated");
    return Status::success();
}

Status check_scope(pmix_scope_t scope) {
    switch (scope) {
        case PMIX_LOCAL:
        case PMIX_REMOTE:
        case PMIX_GLOBAL:
        case PMIX_INTERNAL:
            return Status::success();
        default:
            return Status(PMIX_ERR_BAD_PARAM, "invalid scope " + std::to_string(scope));
    }
}


bool info_true(const pmix_info_t *info, size_t ninfo, const char *key) {
    const pmix_info_t *i = find_info(info, ninfo, key);
    return i != nullptr && pmix_check_true(&i->value) == PMIX_BOOL_TRUE;
}

Result<double> info_timeout(const pmix_info_t *info, size_t ninfo) {
    const pmix_info_t *i = find_info(info, ninfo, PMIX_TIMEOUT);
    if (i == nullptr) return 0.0;
    double t = 0;
    Status st = value_get_number(&i->value, &t, PMIX_DOUBLE);
    if (!st.ok()) return Status(PMIX_ERR_BAD_PARAM, "pmix.timeout is not a number");
    if (t < 0) return Status(PMIX_ERR_BAD_PARAM, "pmix.timeout is negative");
    return t;
}

Result<Client *> require_client() {
    Client *c = current();
    if (c == nullptr) return Status(PMIX_ERR_INIT, "PMIx_Init has not been called");
    return c;
}

}  // namespace pmixcpp::client
