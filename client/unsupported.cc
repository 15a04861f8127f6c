// Calls not implemented yet: exported (so LD_BIND_NOW=1 loads programs built against OpenPMIx)
// and answering PMIX_ERR_NOT_SUPPORTED at once, without calling any callback. Generated from the
// public headers; move a function out of here when it becomes real.
#include <pmix.h>
#include <pmix_server.h>
#include <pmix_tool.h>

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_Get_credential(const pmix_info_t info[], size_t ninfo,
                                              pmix_byte_object_t *credential) {
    return PMIX_ERR_NOT_SUPPORTED;
}
PMIX_EXPORT pmix_status_t PMIx_Get_credential_nb(const pmix_info_t info[], size_t ninfo,
                                                 pmix_credential_cbfunc_t cbfunc, void *cbdata) {
    return PMIX_ERR_NOT_SUPPORTED;
}
PMIX_EXPORT pmix_status_t PMIx_Validate_credential(const pmix_byte_object_t *cred, const pmix_info_t info[],
                                                   size_t ninfo, pmix_info_t **results, size_t *nresults) {
    return PMIX_ERR_NOT_SUPPORTED;
}
PMIX_EXPORT pmix_status_t PMIx_Validate_credential_nb(const pmix_byte_object_t *cred,
                                                      const pmix_info_t info[], size_t ninfo,
                                                      pmix_validation_cbfunc_t cbfunc, void *cbdata) {
    return PMIX_ERR_NOT_SUPPORTED;
}
PMIX_EXPORT pmix_status_t PMIx_Compute_distances(pmix_topology_t *topo, pmix_cpuset_t *cpuset,
                                                 pmix_info_t info[], size_t ninfo,
                                                 pmix_device_distance_t *distances[], size_t *ndist) {
    return PMIX_ERR_NOT_SUPPORTED;
}
PMIX_EXPORT pmix_status_t PMIx_Compute_distances_nb(pmix_topology_t *topo, pmix_cpuset_t *cpuset,
                                                    pmix_info_t info[], size_t ninfo,
                                                    pmix_device_dist_cbfunc_t cbfunc, void *cbdata) {
    return PMIX_ERR_NOT_SUPPORTED;
}
PMIX_EXPORT pmix_status_t PMIx_IOF_pull(const pmix_proc_t procs[], size_t nprocs,
                                        const pmix_info_t directives[], size_t ndirs,
                                        pmix_iof_channel_t channel, pmix_iof_cbfunc_t cbfunc,
                                        pmix_hdlr_reg_cbfunc_t regcbfunc, void *regcbdata) {
    return PMIX_ERR_NOT_SUPPORTED;
}
PMIX_EXPORT pmix_status_t PMIx_IOF_deregister(size_t iofhdlr, const pmix_info_t directives[], size_t ndirs,
                                              pmix_op_cbfunc_t cbfunc, void *cbdata) {
    return PMIX_ERR_NOT_SUPPORTED;
}
PMIX_EXPORT pmix_status_t PMIx_IOF_push(const pmix_proc_t targets[], size_t ntargets, pmix_byte_object_t *bo,
                                        const pmix_info_t directives[], size_t ndirs, pmix_op_cbfunc_t cbfunc,
                                        void *cbdata) {
    return PMIX_ERR_NOT_SUPPORTED;
}
PMIX_EXPORT pmix_status_t PMIx_generate_regex(const char *input, char **regex) {
    return PMIX_ERR_NOT_SUPPORTED;
}
PMIX_EXPORT pmix_status_t PMIx_generate_ppn(const char *input, char **ppn) { return PMIX_ERR_NOT_SUPPORTED; }
PMIX_EXPORT pmix_status_t PMIx_server_register_nspace(const pmix_nspace_t nspace, int nlocalprocs,
                                                      pmix_info_t info[], size_t ninfo,
                                                      pmix_op_cbfunc_t cbfunc, void *cbdata) {
    return PMIX_ERR_NOT_SUPPORTED;
}
PMIX_EXPORT void PMIx_server_deregister_nspace(const pmix_nspace_t nspace, pmix_op_cbfunc_t cbfunc,
                                               void *cbdata) {}
PMIX_EXPORT pmix_status_t PMIx_server_register_client(const pmix_proc_t *proc, uid_t uid, gid_t gid,
                                                      void *server_object, pmix_op_cbfunc_t cbfunc,
                                                      void *cbdata) {
    return PMIX_ERR_NOT_SUPPORTED;
}
PMIX_EXPORT void PMIx_server_deregister_client(const pmix_proc_t *proc, pmix_op_cbfunc_t cbfunc,
                                               void *cbdata) {}
PMIX_EXPORT pmix_status_t PMIx_server_setup_fork(const pmix_proc_t *proc, char ***env) {
    return PMIX_ERR_NOT_SUPPORTED;
}
PMIX_EXPORT pmix_status_t PMIx_server_dmodex_request(const pmix_proc_t *proc,
                                                     pmix_dmodex_response_fn_t cbfunc, void *cbdata) {
    return PMIX_ERR_NOT_SUPPORTED;
}
PMIX_EXPORT pmix_status_t PMIx_server_setup_application(const pmix_nspace_t nspace, pmix_info_t info[],
                                                        size_t ninfo, pmix_setup_application_cbfunc_t cbfunc,
                                                        void *cbdata) {
    return PMIX_ERR_NOT_SUPPORTED;
}
PMIX_EXPORT pmix_status_t PMIx_server_setup_local_support(const pmix_nspace_t nspace, pmix_info_t info[],
                                                          size_t ninfo, pmix_op_cbfunc_t cbfunc,
                                                          void *cbdata) {
    return PMIX_ERR_NOT_SUPPORTED;
}
PMIX_EXPORT pmix_status_t PMIx_server_IOF_deliver(const pmix_proc_t *source, pmix_iof_channel_t channel,
                                                  const pmix_byte_object_t *bo, const pmix_info_t info[],
                                                  size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata) {
    return PMIX_ERR_NOT_SUPPORTED;
}
PMIX_EXPORT pmix_status_t PMIx_server_register_resources(pmix_info_t info[], size_t ninfo,
                                                         pmix_op_cbfunc_t cbfunc, void *cbdata) {
    return PMIX_ERR_NOT_SUPPORTED;
}
PMIX_EXPORT pmix_status_t PMIx_server_deregister_resources(pmix_info_t info[], size_t ninfo,
                                                           pmix_op_cbfunc_t cbfunc, void *cbdata) {
    return PMIX_ERR_NOT_SUPPORTED;
}
PMIX_EXPORT pmix_status_t PMIx_Register_attributes(char *function, char *attrs[]) {
    return PMIX_ERR_NOT_SUPPORTED;
}
PMIX_EXPORT pmix_status_t PMIx_server_generate_locality_string(const pmix_cpuset_t *cpuset, char **locality) {
    return PMIX_ERR_NOT_SUPPORTED;
}
PMIX_EXPORT pmix_status_t PMIx_server_generate_cpuset_string(const pmix_cpuset_t *cpuset,
                                                             char **cpuset_string) {
    return PMIX_ERR_NOT_SUPPORTED;
}
PMIX_EXPORT pmix_status_t PMIx_server_define_process_set(const pmix_proc_t *members, size_t nmembers,
                                                         const char *pset_name) {
    return PMIX_ERR_NOT_SUPPORTED;
}
PMIX_EXPORT pmix_status_t PMIx_server_delete_process_set(char *pset_name) { return PMIX_ERR_NOT_SUPPORTED; }
PMIX_EXPORT pmix_status_t PMIx_tool_init(pmix_proc_t *proc, pmix_info_t info[], size_t ninfo) {
    return PMIX_ERR_NOT_SUPPORTED;
}
PMIX_EXPORT pmix_status_t PMIx_tool_finalize(void) { return PMIX_ERR_NOT_SUPPORTED; }
PMIX_EXPORT pmix_status_t PMIx_tool_disconnect(const pmix_proc_t *server) { return PMIX_ERR_NOT_SUPPORTED; }
PMIX_EXPORT pmix_status_t PMIx_tool_attach_to_server(pmix_proc_t *myproc, pmix_proc_t *server,
                                                     pmix_info_t info[], size_t ninfo) {
    return PMIX_ERR_NOT_SUPPORTED;
}
PMIX_EXPORT pmix_status_t PMIx_tool_get_servers(pmix_proc_t *servers[], size_t *nservers) {
    return PMIX_ERR_NOT_SUPPORTED;
}
PMIX_EXPORT pmix_status_t PMIx_tool_set_server(const pmix_proc_t *server, pmix_info_t info[], size_t ninfo) {
    return PMIX_ERR_NOT_SUPPORTED;
}
PMIX_EXPORT pmix_status_t PMIx_tool_connect_to_server(pmix_proc_t *proc, pmix_info_t info[], size_t ninfo) {
    return PMIX_ERR_NOT_SUPPORTED;
}


// PMIx v5 additions
PMIX_EXPORT pmix_status_t PMIx_Session_control(uint32_t sessionID, const pmix_info_t directives[], size_t ndirs,
                                               pmix_info_cbfunc_t cbfunc, void *cbdata) {
    (void)sessionID, (void)directives, (void)ndirs, (void)cbfunc, (void)cbdata;
    return PMIX_ERR_NOT_SUPPORTED;  // session control belongs to a scheduler's PMIx server
}
PMIX_EXPORT pmix_status_t PMIx_tool_set_server_module(pmix_server_module_t *module) {
    (void)module;
    return PMIX_ERR_NOT_SUPPORTED;  // no tool library: there is no server module to set
}
PMIX_EXPORT bool PMIx_tool_is_connected(void) { return false; }

}  // extern "C"
