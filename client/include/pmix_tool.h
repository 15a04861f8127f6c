/*
 * pmixcpp: the PMIx v4 tool API (launchers, debuggers, monitors).
 * Exported by libpmix.so.2 for link compatibility; returns
 * PMIX_ERR_NOT_SUPPORTED until implemented.
 */
#ifndef PMIXCPP_PMIX_TOOL_H
#define PMIXCPP_PMIX_TOOL_H

#include <pmix.h>
#include <pmix_server.h>

#ifdef __cplusplus
extern "C" {
#endif

PMIX_EXPORT pmix_status_t PMIx_tool_init(pmix_proc_t *proc, pmix_info_t info[], size_t ninfo);
PMIX_EXPORT pmix_status_t PMIx_tool_finalize(void);
PMIX_EXPORT pmix_status_t PMIx_tool_set_server_module(pmix_server_module_t *module);
PMIX_EXPORT bool PMIx_tool_is_connected(void);
PMIX_EXPORT pmix_status_t PMIx_tool_disconnect(const pmix_proc_t *server);
PMIX_EXPORT pmix_status_t PMIx_tool_attach_to_server(pmix_proc_t *myproc, pmix_proc_t *server,
                                                     pmix_info_t info[], size_t ninfo);
PMIX_EXPORT pmix_status_t PMIx_tool_get_servers(pmix_proc_t *servers[], size_t *nservers);
PMIX_EXPORT pmix_status_t PMIx_tool_set_server(const pmix_proc_t *server,
                                               pmix_info_t info[], size_t ninfo);
/* Older name of PMIx_tool_attach_to_server (still exported by OpenPMIx 4.2). */
PMIX_EXPORT pmix_status_t PMIx_tool_connect_to_server(pmix_proc_t *proc,
                                                      pmix_info_t info[], size_t ninfo);

/* PMIx_IOF_pull / PMIx_IOF_push / PMIx_IOF_deregister: see pmix.h */

#ifdef __cplusplus
}
#endif

#endif /* PMIXCPP_PMIX_TOOL_H */
