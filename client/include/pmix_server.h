/*
 * pmixcpp: the PMIx v4 server API, as imported by OpenMPI's mpirun/orted.
 *
 * libpmix.so.2 exports these so that programs linked against OpenPMIx load
 * (also with LD_BIND_NOW=1); our own server lives in the Slurm plugin and
 * does not use this interface.  Until implemented, each call returns
 * PMIX_ERR_NOT_SUPPORTED (or completes its callback with it).
 */
#ifndef PMIXCPP_PMIX_SERVER_H
#define PMIXCPP_PMIX_SERVER_H

#include <pmix_common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* =========================================================================
 * Upcalls from the PMIx server library into its host (the RM daemon)
 * ========================================================================= */

typedef pmix_status_t (*pmix_server_client_connected_fn_t)(const pmix_proc_t *proc,
                                                           void *server_object,
                                                           pmix_op_cbfunc_t cbfunc, void *cbdata);
typedef pmix_status_t (*pmix_server_client_connected2_fn_t)(const pmix_proc_t *proc,
                                                            void *server_object,
                                                            pmix_info_t info[], size_t ninfo,
                                                            pmix_op_cbfunc_t cbfunc, void *cbdata);
typedef pmix_status_t (*pmix_server_client_finalized_fn_t)(const pmix_proc_t *proc,
                                                           void *server_object,
                                                           pmix_op_cbfunc_t cbfunc, void *cbdata);
typedef pmix_status_t (*pmix_server_abort_fn_t)(const pmix_proc_t *proc, void *server_object,
                                                int status, const char msg[],
                                                pmix_proc_t procs[], size_t nprocs,
                                                pmix_op_cbfunc_t cbfunc, void *cbdata);
typedef pmix_status_t (*pmix_server_fencenb_fn_t)(const pmix_proc_t procs[], size_t nprocs,
                                                  const pmix_info_t info[], size_t ninfo,
                                                  char *data, size_t ndata,
                                                  pmix_modex_cbfunc_t cbfunc, void *cbdata);
typedef pmix_status_t (*pmix_server_dmodex_req_fn_t)(const pmix_proc_t *proc,
                                                     const pmix_info_t info[], size_t ninfo,
                                                     pmix_modex_cbfunc_t cbfunc, void *cbdata);
typedef pmix_status_t (*pmix_server_publish_fn_t)(const pmix_proc_t *proc,
                                                  const pmix_info_t info[], size_t ninfo,
                                                  pmix_op_cbfunc_t cbfunc, void *cbdata);
typedef pmix_status_t (*pmix_server_lookup_fn_t)(const pmix_proc_t *proc, char **keys,
                                                 const pmix_info_t info[], size_t ninfo,
                                                 pmix_lookup_cbfunc_t cbfunc, void *cbdata);
typedef pmix_status_t (*pmix_server_unpublish_fn_t)(const pmix_proc_t *proc, char **keys,
                                                    const pmix_info_t info[], size_t ninfo,
                                                    pmix_op_cbfunc_t cbfunc, void *cbdata);
typedef pmix_status_t (*pmix_server_spawn_fn_t)(const pmix_proc_t *proc,
                                                const pmix_info_t job_info[], size_t ninfo,
                                                const pmix_app_t apps[], size_t napps,
                                                pmix_spawn_cbfunc_t cbfunc, void *cbdata);
typedef pmix_status_t (*pmix_server_connect_fn_t)(const pmix_proc_t procs[], size_t nprocs,
                                                  const pmix_info_t info[], size_t ninfo,
                                                  pmix_op_cbfunc_t cbfunc, void *cbdata);
typedef pmix_status_t (*pmix_server_disconnect_fn_t)(const pmix_proc_t procs[], size_t nprocs,
                                                     const pmix_info_t info[], size_t ninfo,
                                                     pmix_op_cbfunc_t cbfunc, void *cbdata);
typedef pmix_status_t (*pmix_server_register_events_fn_t)(pmix_status_t *codes, size_t ncodes,
                                                          const pmix_info_t info[], size_t ninfo,
                                                          pmix_op_cbfunc_t cbfunc, void *cbdata);
typedef pmix_status_t (*pmix_server_deregister_events_fn_t)(pmix_status_t *codes, size_t ncodes,
                                                            pmix_op_cbfunc_t cbfunc, void *cbdata);
typedef pmix_status_t (*pmix_server_notify_event_fn_t)(pmix_status_t code,
                                                       const pmix_proc_t *source,
                                                       pmix_data_range_t range,
                                                       pmix_info_t info[], size_t ninfo,
                                                       pmix_op_cbfunc_t cbfunc, void *cbdata);
typedef void (*pmix_connection_cbfunc_t)(int incoming_sd, void *cbdata);
typedef pmix_status_t (*pmix_server_listener_fn_t)(int listening_sd,
                                                   pmix_connection_cbfunc_t cbfunc,
                                                   void *cbdata);
typedef pmix_status_t (*pmix_server_query_fn_t)(pmix_proc_t *proct,
                                                pmix_query_t *queries, size_t nqueries,
                                                pmix_info_cbfunc_t cbfunc, void *cbdata);
typedef void (*pmix_tool_connection_cbfunc_t)(pmix_status_t status,
                                              pmix_proc_t *proc, void *cbdata);
typedef void (*pmix_server_tool_connection_fn_t)(pmix_info_t *info, size_t ninfo,
                                                 pmix_tool_connection_cbfunc_t cbfunc,
                                                 void *cbdata);
typedef void (*pmix_server_log_fn_t)(const pmix_proc_t *client,
                                     const pmix_info_t data[], size_t ndata,
                                     const pmix_info_t directives[], size_t ndirs,
                                     pmix_op_cbfunc_t cbfunc, void *cbdata);
typedef pmix_status_t (*pmix_server_alloc_fn_t)(const pmix_proc_t *client,
                                                pmix_alloc_directive_t directive,
                                                const pmix_info_t data[], size_t ndata,
                                                pmix_info_cbfunc_t cbfunc, void *cbdata);
typedef pmix_status_t (*pmix_server_job_control_fn_t)(const pmix_proc_t *requestor,
                                                      const pmix_proc_t targets[], size_t ntargets,
                                                      const pmix_info_t directives[], size_t ndirs,
                                                      pmix_info_cbfunc_t cbfunc, void *cbdata);
typedef pmix_status_t (*pmix_server_monitor_fn_t)(const pmix_proc_t *requestor,
                                                  const pmix_info_t *monitor, pmix_status_t error,
                                                  const pmix_info_t directives[], size_t ndirs,
                                                  pmix_info_cbfunc_t cbfunc, void *cbdata);
typedef pmix_status_t (*pmix_server_get_cred_fn_t)(const pmix_proc_t *proc,
                                                   const pmix_info_t directives[], size_t ndirs,
                                                   pmix_credential_cbfunc_t cbfunc, void *cbdata);
typedef pmix_status_t (*pmix_server_validate_cred_fn_t)(const pmix_proc_t *proc,
                                                        const pmix_byte_object_t *cred,
                                                        const pmix_info_t directives[], size_t ndirs,
                                                        pmix_validation_cbfunc_t cbfunc,
                                                        void *cbdata);
typedef pmix_status_t (*pmix_server_iof_fn_t)(const pmix_proc_t procs[], size_t nprocs,
                                              const pmix_info_t directives[], size_t ndirs,
                                              pmix_iof_channel_t channels,
                                              pmix_op_cbfunc_t cbfunc, void *cbdata);
typedef pmix_status_t (*pmix_server_stdin_fn_t)(const pmix_proc_t *source,
                                                const pmix_proc_t targets[], size_t ntargets,
                                                const pmix_info_t directives[], size_t ndirs,
                                                const pmix_byte_object_t *bo,
                                                pmix_op_cbfunc_t cbfunc, void *cbdata);
typedef pmix_status_t (*pmix_server_grp_fn_t)(pmix_group_operation_t op, char grp[],
                                              const pmix_proc_t procs[], size_t nprocs,
                                              const pmix_info_t directives[], size_t ndirs,
                                              pmix_info_cbfunc_t cbfunc, void *cbdata);
typedef pmix_status_t (*pmix_server_fabric_fn_t)(const pmix_proc_t *requestor,
                                                 pmix_fabric_operation_t op,
                                                 const pmix_info_t directives[], size_t ndirs,
                                                 pmix_info_cbfunc_t cbfunc, void *cbdata);

/* The host's table of upcalls; NULL entries mean "not supported".  Member
 * order is ABI (v4.0 module). */
typedef struct pmix_server_module_4_0_0_t {
    pmix_server_client_connected_fn_t client_connected;
    pmix_server_client_finalized_fn_t client_finalized;
    pmix_server_abort_fn_t abort;
    pmix_server_fencenb_fn_t fence_nb;
    pmix_server_dmodex_req_fn_t direct_modex;
    pmix_server_publish_fn_t publish;
    pmix_server_lookup_fn_t lookup;
    pmix_server_unpublish_fn_t unpublish;
    pmix_server_spawn_fn_t spawn;
    pmix_server_connect_fn_t connect;
    pmix_server_disconnect_fn_t disconnect;
    pmix_server_register_events_fn_t register_events;
    pmix_server_deregister_events_fn_t deregister_events;
    pmix_server_listener_fn_t listener;
    pmix_server_notify_event_fn_t notify_event;
    pmix_server_query_fn_t query;
    pmix_server_tool_connection_fn_t tool_connected;
    pmix_server_log_fn_t log;
    pmix_server_alloc_fn_t allocate;
    pmix_server_job_control_fn_t job_control;
    pmix_server_monitor_fn_t monitor;
    pmix_server_get_cred_fn_t get_credential;
    pmix_server_validate_cred_fn_t validate_credential;
    pmix_server_iof_fn_t iof_pull;
    pmix_server_stdin_fn_t push_stdin;
    pmix_server_grp_fn_t group;
    pmix_server_fabric_fn_t fabric;
    pmix_server_client_connected2_fn_t client_connected2;
} pmix_server_module_t;

/* Answers to PMIx_server_dmodex_request / PMIx_server_setup_application. */
typedef void (*pmix_dmodex_response_fn_t)(pmix_status_t status,
                                          char *data, size_t sz, void *cbdata);
typedef void (*pmix_setup_application_cbfunc_t)(pmix_status_t status,
                                                pmix_info_t info[], size_t ninfo,
                                                void *provided_cbdata,
                                                pmix_op_cbfunc_t cbfunc, void *cbdata);

/* =========================================================================
 * Calls from the host into the server library
 * ========================================================================= */

/* ---- lifecycle ---- */
PMIX_EXPORT pmix_status_t PMIx_server_init(pmix_server_module_t *module,
                                           pmix_info_t info[], size_t ninfo);
PMIX_EXPORT pmix_status_t PMIx_server_finalize(void);

/* ---- compact node/ppn descriptions ---- */
PMIX_EXPORT pmix_status_t PMIx_generate_regex(const char *input, char **regex);
PMIX_EXPORT pmix_status_t PMIx_generate_ppn(const char *input, char **ppn);

/* ---- jobs and clients ---- */
PMIX_EXPORT pmix_status_t PMIx_server_register_nspace(const pmix_nspace_t nspace, int nlocalprocs,
                                                      pmix_info_t info[], size_t ninfo,
                                                      pmix_op_cbfunc_t cbfunc, void *cbdata);
PMIX_EXPORT void PMIx_server_deregister_nspace(const pmix_nspace_t nspace,
                                               pmix_op_cbfunc_t cbfunc, void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_server_register_client(const pmix_proc_t *proc,
                                                      uid_t uid, gid_t gid, void *server_object,
                                                      pmix_op_cbfunc_t cbfunc, void *cbdata);
PMIX_EXPORT void PMIx_server_deregister_client(const pmix_proc_t *proc,
                                               pmix_op_cbfunc_t cbfunc, void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_server_setup_fork(const pmix_proc_t *proc, char ***env);
PMIX_EXPORT pmix_status_t PMIx_server_dmodex_request(const pmix_proc_t *proc,
                                                     pmix_dmodex_response_fn_t cbfunc,
                                                     void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_server_setup_application(const pmix_nspace_t nspace,
                                                        pmix_info_t info[], size_t ninfo,
                                                        pmix_setup_application_cbfunc_t cbfunc,
                                                        void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_server_setup_local_support(const pmix_nspace_t nspace,
                                                          pmix_info_t info[], size_t ninfo,
                                                          pmix_op_cbfunc_t cbfunc, void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_server_IOF_deliver(const pmix_proc_t *source,
                                                  pmix_iof_channel_t channel,
                                                  const pmix_byte_object_t *bo,
                                                  const pmix_info_t info[], size_t ninfo,
                                                  pmix_op_cbfunc_t cbfunc, void *cbdata);

/* ---- scheduler side: inventory and resources ---- */
PMIX_EXPORT pmix_status_t PMIx_server_collect_inventory(pmix_info_t directives[], size_t ndirs,
                                                        pmix_info_cbfunc_t cbfunc, void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_server_deliver_inventory(pmix_info_t info[], size_t ninfo,
                                                        pmix_info_t directives[], size_t ndirs,
                                                        pmix_op_cbfunc_t cbfunc, void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_server_register_resources(pmix_info_t info[], size_t ninfo,
                                                         pmix_op_cbfunc_t cbfunc, void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_server_deregister_resources(pmix_info_t info[], size_t ninfo,
                                                           pmix_op_cbfunc_t cbfunc, void *cbdata);

/* ---- scheduler side: fabric (PMIx v4; pmixcpp implements them in a scheduler-mode context:
 *      PMIx_server_init with PMIX_SERVER_SCHEDULER; without it they return
 *      PMIX_ERR_NOT_SUPPORTED). The cost matrix is reported in fabric->info:
 *      PMIX_FABRIC_COST_MATRIX (PMIX_POINTER to uint16_t *rows[nverts], row-major, not assumed
 *      symmetric) and PMIX_FABRIC_NUM_VERTICES (PMIX_SIZE) -- or, in a program compiled with
 *      PMIXCPP_FABRIC_SEED_LAYOUT (pmix_common.h), in fabric->commcost[i][j] and
 *      fabric->nverts, the PMIx standard v4.0 layout.
 *      A scheduler written to that layout (fabric.commcost, fabric.nverts) compiles ONLY with
 *      -DPMIXCPP_FABRIC_SEED_LAYOUT, defined before the first PMIx header is included: without
 *      it pmix_fabric_t has info/ninfo and no commcost/nverts members. The fabric calls then map
 *      to PMIx_..._seed symbols of the same libpmix.so.2. A complete example built both ways:
 *      contrib/examples/fabric_scheduler.c in the source tree.
 *      The vertices: one per node of Slurm's switch topology (or per NIC of a node whose
 *      inventory was delivered); on a cluster without a switch topology (topology/none), one per
 *      node of slurm.conf at a uniform cost of 2 (the flat cluster; its switch is "flat"). ---- */
#ifndef PMIX_NETWORK_PLANE
#define PMIX_NETWORK_PLANE                      "pmix.net.plane"            /* char* */
#endif
#ifndef PMIX_FABRIC_NUM_VERTICES
#define PMIX_FABRIC_NUM_VERTICES                "pmix.fab.nverts"           /* size_t */
#endif
PMIX_EXPORT pmix_status_t PMIx_server_register_fabric(pmix_fabric_t *fabric,
                                                      const pmix_info_t directives[], size_t ndirs);
PMIX_EXPORT pmix_status_t PMIx_server_deregister_fabric(pmix_fabric_t *fabric);
PMIX_EXPORT pmix_status_t PMIx_server_get_vertex_info(pmix_fabric_t *fabric, uint32_t i,
                                                      pmix_value_t *vertex, char **nodename);
PMIX_EXPORT pmix_status_t PMIx_server_get_index(pmix_fabric_t *fabric, pmix_value_t *vertex,
                                                uint32_t *i);

/* ---- attributes, locality, process sets ---- */
PMIX_EXPORT pmix_status_t PMIx_Register_attributes(char *function, char *attrs[]);
PMIX_EXPORT pmix_status_t PMIx_server_generate_locality_string(const pmix_cpuset_t *cpuset,
                                                               char **locality);
PMIX_EXPORT pmix_status_t PMIx_server_generate_cpuset_string(const pmix_cpuset_t *cpuset,
                                                             char **cpuset_string);
PMIX_EXPORT pmix_status_t PMIx_server_define_process_set(const pmix_proc_t *members,
                                                         size_t nmembers, const char *pset_name);
PMIX_EXPORT pmix_status_t PMIx_server_delete_process_set(char *pset_name);

#ifdef __cplusplus
}
#endif

#endif /* PMIXCPP_PMIX_SERVER_H */
