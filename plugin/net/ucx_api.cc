#include "ucx_api.h"

#include <dlfcn.h>

#include <string>

namespace pmixcpp::net {

namespace {

constexpr const char *kLibrary = "libucp.so.0";  // its own dependencies bring libucs, libuct, libucm

template <typename F>
bool bind(void *lib, const char *name, F *slot, std::string *missing) {
    void *sym = dlsym(lib, name);  // the handle's dependencies are searched too (ucs_status_string)
    if (!sym) {
        *missing = name;
        return false;
    }
    *slot = reinterpret_cast<F>(sym);
    return true;
}

Result<const ucx_api *> load() {
    void *lib = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!lib) {
        const char *e = dlerror();
        return Status(PMIX_ERR_NOT_AVAILABLE, std::string("cannot load ") + kLibrary + ": " + (e ? e : "unknown error"));
    }
    static ucx_api api{};
    std::string missing;
    bool ok = bind(lib, "ucp_config_read", &api.config_read, &missing) &&
              bind(lib, "ucp_config_modify", &api.config_modify, &missing) &&
              bind(lib, "ucp_config_release", &api.config_release, &missing) &&
              bind(lib, "ucp_init_version", &api.init_version, &missing) &&
              bind(lib, "ucp_cleanup", &api.cleanup, &missing) &&
              bind(lib, "ucp_worker_create", &api.worker_create, &missing) &&
              bind(lib, "ucp_worker_destroy", &api.worker_destroy, &missing) &&
              bind(lib, "ucp_worker_get_address", &api.worker_get_address, &missing) &&
              bind(lib, "ucp_worker_release_address", &api.worker_release_address, &missing) &&
              bind(lib, "ucp_worker_get_efd", &api.worker_get_efd, &missing) &&
              bind(lib, "ucp_worker_arm", &api.worker_arm, &missing) &&
              bind(lib, "ucp_worker_progress", &api.worker_progress, &missing) &&
              bind(lib, "ucp_worker_set_am_recv_handler", &api.worker_set_am_recv_handler, &missing) &&
              bind(lib, "ucp_ep_create", &api.ep_create, &missing) &&
              bind(lib, "ucp_ep_close_nbx", &api.ep_close_nbx, &missing) &&
              bind(lib, "ucp_ep_flush_nbx", &api.ep_flush_nbx, &missing) &&
              bind(lib, "ucp_am_send_nbx", &api.am_send_nbx, &missing) &&
              bind(lib, "ucp_am_recv_data_nbx", &api.am_recv_data_nbx, &missing) &&
              bind(lib, "ucp_request_check_status", &api.request_check_status, &missing) &&
              bind(lib, "ucp_request_cancel", &api.request_cancel, &missing) &&
              bind(lib, "ucp_request_free", &api.request_free, &missing) &&
              bind(lib, "ucs_status_string", &api.status_string, &missing);
    if (!ok)
        return Status(PMIX_ERR_NOT_AVAILABLE, std::string(kLibrary) + " has no " + missing + " (UCX too old?)");
    return static_cast<const ucx_api *>(&api);
}

}  // namespace

Result<const ucx_api *> load_ucx() {
    static const Result<const ucx_api *> loaded = load();
    return loaded;
}

}  // namespace pmixcpp::net
