// UCX, loaded when a step first asks for the UCX node transport (dlopen of libucp.so.0), not
// linked: a step over TCP (and srun, which never runs a transport) does not map UCX's libraries
// or run their constructors, which cost a slurmstepd more start-up time than the rest of the
// plugin; a node without UCX runs the plugin all the same and falls back to TCP. The types and
// the signatures come from UCX's headers, so the table cannot disagree with them.
#pragma once

#include <ucp/api/ucp.h>

#include "status.h"

namespace pmixcpp::net {

struct ucx_api {
    decltype(&::ucp_config_read) config_read;
    decltype(&::ucp_config_modify) config_modify;
    decltype(&::ucp_config_release) config_release;
    decltype(&::ucp_init_version) init_version;
    decltype(&::ucp_cleanup) cleanup;
    decltype(&::ucp_worker_create) worker_create;
    decltype(&::ucp_worker_destroy) worker_destroy;
    decltype(&::ucp_worker_get_address) worker_get_address;
    decltype(&::ucp_worker_release_address) worker_release_address;
    decltype(&::ucp_worker_get_efd) worker_get_efd;
    decltype(&::ucp_worker_arm) worker_arm;
    decltype(&::ucp_worker_progress) worker_progress;
    decltype(&::ucp_worker_set_am_recv_handler) worker_set_am_recv_handler;
    decltype(&::ucp_ep_create) ep_create;
    decltype(&::ucp_ep_close_nbx) ep_close_nbx;
    decltype(&::ucp_ep_flush_nbx) ep_flush_nbx;
    decltype(&::ucp_am_send_nbx) am_send_nbx;
    decltype(&::ucp_am_recv_data_nbx) am_recv_data_nbx;
    decltype(&::ucp_request_check_status) request_check_status;
    decltype(&::ucp_request_cancel) request_cancel;
    decltype(&::ucp_request_free) request_free;
    decltype(&::ucs_status_string) status_string;
};

// The table, loaded on the first call (thread-safe; the library stays loaded for the process's
// life, as UCX's memory hooks require). An error names the library or the missing symbol.
Result<const ucx_api *> load_ucx();

}  // namespace pmixcpp::net
