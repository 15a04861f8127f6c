/* Error paths: calls before init, NULL and over-long arguments, bad types and scopes,
 * NOT_FOUND, optional, timeout on a key never committed, not-supported calls, blocking calls
 * from a callback, reference-counted init/finalize, events, log, job control.
 * Run with: srun --mpi=pmixcpp -N1 -n8 pmix_errors */
#include <pmix_tool.h>
#include <unistd.h>

#include "ptest.h"

static pmix_proc_t me;

static volatile int flag_reg, flag_dereg, flag_event, flag_log, flag_notify, flag_cb_rc_set;
static volatile size_t reg_ref;
static volatile pmix_status_t cb_rc;

static void reg_cb(pmix_status_t status, size_t ref, void *cbdata) {
    reg_ref = ref;
    flag_reg = status == PMIX_SUCCESS ? 1 : -1;
}
static void op_cb(pmix_status_t status, void *cbdata) { *(volatile int *)cbdata = status == PMIX_SUCCESS ? 1 : -1; }
static void event_fn(size_t ref, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[], size_t ninfo,
                     pmix_info_t *results, size_t nresults, pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    flag_event = status == -2000 ? 1 : -1;
    if (cbfunc) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}
/* Runs on the progress thread: a blocking call must not deadlock. */
static void get_cb(pmix_status_t status, pmix_value_t *kv, void *cbdata) {
    cb_rc = PMIx_Fence(NULL, 0, NULL, 0);
    flag_cb_rc_set = 1;
}

static int wait_flag(volatile int *f) {
    for (int i = 0; i < 10000 && *f == 0; i++) usleep(1000);
    return *f == 1;
}

int main(void) {
    pmix_value_t val, *v = NULL;
    uint32_t u = 5;
    PMIX_VALUE_LOAD(&val, &u, PMIX_UINT32);
    char longkey[PMIX_MAX_KEYLEN + 20];
    memset(longkey, 'k', sizeof(longkey) - 1);
    longkey[sizeof(longkey) - 1] = '\0';

    /* before init */
    CHECK_RC(PMIX_ERR_INIT, PMIx_Put(PMIX_GLOBAL, "x", &val));
    CHECK_RC(PMIX_ERR_INIT, PMIx_Commit());
    CHECK_RC(PMIX_ERR_INIT, PMIx_Fence(NULL, 0, NULL, 0));
    CHECK_RC(PMIX_ERR_INIT, PMIx_Get(NULL, "x", NULL, 0, &v));
    CHECK_RC(PMIX_ERR_INIT, PMIx_Finalize(NULL, 0));
    CHECK_RC(PMIX_ERR_INIT, PMIx_Abort(1, "no", NULL, 0));

    if (ptest_init(&me)) return 1;
    pmix_proc_t wild = me;
    wild.rank = PMIX_RANK_WILDCARD;
    CHECK_RC(PMIX_SUCCESS, PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &v));
    uint32_t size = v ? v->data.uint32 : 1;
    if (v) PMIX_VALUE_RELEASE(v);

    /* reference counted init/finalize: a second pair keeps the connection */
    pmix_proc_t me2;
    CHECK_RC(PMIX_SUCCESS, PMIx_Init(&me2, NULL, 0));
    CHECK(me2.rank == me.rank && strcmp(me2.nspace, me.nspace) == 0, "second PMIx_Init returns the same proc");
    CHECK_RC(PMIX_SUCCESS, PMIx_Finalize(NULL, 0));
    CHECK(PMIx_Initialized(), "still initialized after the inner finalize");
    v = NULL;
    CHECK_RC(PMIX_SUCCESS, PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &v));
    if (v) PMIX_VALUE_RELEASE(v);

    /* Put */
    CHECK_RC(PMIX_ERR_BAD_PARAM, PMIx_Put(PMIX_GLOBAL, NULL, &val));
    CHECK_RC(PMIX_ERR_BAD_PARAM, PMIx_Put(PMIX_GLOBAL, "", &val));
    CHECK_RC(PMIX_ERR_BAD_PARAM, PMIx_Put(PMIX_GLOBAL, longkey, &val));
    CHECK_RC(PMIX_ERR_BAD_PARAM, PMIx_Put(PMIX_GLOBAL, "x", NULL));
    CHECK_RC(PMIX_ERR_BAD_PARAM, PMIx_Put((pmix_scope_t)99, "x", &val));
    pmix_value_t bad;
    memset(&bad, 0, sizeof(bad));
    bad.type = PMIX_UNDEF;
    CHECK_RC(PMIX_ERR_BAD_PARAM, PMIx_Put(PMIX_GLOBAL, "x", &bad));
    bad.type = 250;
    CHECK_RC(PMIX_ERR_BAD_PARAM, PMIx_Put(PMIX_GLOBAL, "x", &bad));

    /* Get */
    CHECK_RC(PMIX_ERR_BAD_PARAM, PMIx_Get(&me, "x", NULL, 0, NULL));
    v = NULL;
    CHECK_RC(PMIX_ERR_BAD_PARAM, PMIx_Get(&me, longkey, NULL, 0, &v));
    pmix_proc_t badproc;
    memset(badproc.nspace, 'n', sizeof(badproc.nspace));
    badproc.rank = 0;
    CHECK_RC(PMIX_ERR_BAD_PARAM, PMIx_Get(&badproc, "x", NULL, 0, &v));
    CHECK_RC(PMIX_ERR_BAD_PARAM, PMIx_Get(&me, "x", NULL, 3, &v));
    CHECK_RC(PMIX_ERR_NOT_FOUND, PMIx_Get(&wild, "no.such.job.key", NULL, 0, &v));
    CHECK_RC(PMIX_ERR_NOT_FOUND, PMIx_Get(&me, "no.such.own.key", NULL, 0, &v));
    CHECK_RC(PMIX_ERR_BAD_PARAM, PMIx_Get_nb(&me, "x", NULL, 0, NULL, NULL));
    if (size > 1) {
        pmix_proc_t peer = me;
        peer.rank = (me.rank + 1) % size;
        pmix_info_t *opt = ptest_bool_info(PMIX_OPTIONAL, 1);
        CHECK_RC(PMIX_ERR_NOT_FOUND, PMIx_Get(&peer, "never.put", opt, 1, &v));
        pmix_info_t *imm = ptest_bool_info(PMIX_IMMEDIATE, 1);
        CHECK_RC(PMIX_ERR_NOT_FOUND, PMIx_Get(&peer, "never.put", imm, 1, &v));
        pmix_info_t tmo;
        int secs = 1;
        PMIX_INFO_LOAD(&tmo, PMIX_TIMEOUT, &secs, PMIX_INT);
        CHECK_RC(PMIX_ERR_TIMEOUT, PMIx_Get(&peer, "never.put", &tmo, 1, &v));
        /* a peer's reserved key (one of the standard's attribute names) that is not in the job
         * data is not waited for; any other name is an application key, even with a "pmix"
         * prefix, and would be */
        CHECK_RC(PMIX_ERR_NOT_FOUND, PMIx_Get(&peer, PMIX_CREDENTIAL, NULL, 0, &v));
    }

    /* Store_internal / Fence / Resolve argument checks */
    CHECK_RC(PMIX_ERR_BAD_PARAM, PMIx_Store_internal(NULL, "x", &val));
    CHECK_RC(PMIX_ERR_BAD_PARAM, PMIx_Store_internal(&me, longkey, &val));
    CHECK_RC(PMIX_ERR_BAD_PARAM, PMIx_Store_internal(&me, "x", NULL));
    CHECK_RC(PMIX_ERR_BAD_PARAM, PMIx_Fence(NULL, 2, NULL, 0));
    CHECK_RC(PMIX_ERR_BAD_PARAM, PMIx_Fence(NULL, 0, NULL, 1));
    CHECK_RC(PMIX_ERR_BAD_PARAM, PMIx_Fence_nb(&badproc, 1, NULL, 0, NULL, NULL));
    size_t nprocs;
    CHECK_RC(PMIX_ERR_BAD_PARAM, PMIx_Resolve_peers(NULL, NULL, NULL, &nprocs));
    pmix_proc_t *procs;
    CHECK_RC(PMIX_ERR_NOT_FOUND, PMIx_Resolve_peers("no-such-node", NULL, &procs, &nprocs));
    pmix_nspace_t other;
    PMIX_LOAD_NSPACE(other, "other.nspace");
    CHECK_RC(PMIX_ERR_NOT_FOUND, PMIx_Resolve_peers(NULL, other, &procs, &nprocs));
    CHECK_RC(PMIX_ERR_BAD_PARAM, PMIx_Resolve_nodes(NULL, NULL));

    /* value helpers */
    CHECK_RC(PMIX_ERR_BAD_PARAM, PMIx_Value_xfer(NULL, &val));
    pmix_info_t info;
    CHECK_RC(PMIX_ERR_BAD_PARAM, PMIx_Info_load(&info, NULL, &u, PMIX_UINT32));
    CHECK_RC(PMIX_ERR_BAD_PARAM, PMIx_Info_load(&info, longkey, &u, PMIX_UINT32));

    /* publish/lookup and spawn are real: their error paths */
    CHECK_RC(PMIX_ERR_BAD_PARAM, PMIx_Publish(NULL, 0));
    CHECK_RC(PMIX_SUCCESS, PMIx_Unpublish(NULL, NULL, 0)); /* all of mine: none */
    pmix_pdata_t pd;
    memset(&pd, 0, sizeof(pd));
    CHECK_RC(PMIX_ERR_BAD_PARAM, PMIx_Lookup(&pd, 1, NULL, 0));
    pmix_nspace_t newns;
    CHECK_RC(PMIX_ERR_BAD_PARAM, PMIx_Spawn(NULL, 0, NULL, 0, newns));
    /* connect: a set without the caller, a NULL set; one with only the caller completes */
    pmix_proc_t peer = me;
    peer.rank = me.rank == 0 ? 1 : 0;
    CHECK_RC(PMIX_ERR_BAD_PARAM, PMIx_Connect(&peer, 1, NULL, 0));
    CHECK_RC(PMIX_ERR_BAD_PARAM, PMIx_Connect(NULL, 0, NULL, 0));
    CHECK_RC(PMIX_SUCCESS, PMIx_Connect(&me, 1, NULL, 0));
    CHECK_RC(PMIX_SUCCESS, PMIx_Disconnect(&me, 1, NULL, 0));
    /* a group of the caller alone completes at once (no results asked); a group's name is the
     * group's own (another rank's group of the same name is refused), so each rank names its own */
    char gname[32];
    snprintf(gname, sizeof(gname), "g.%u", (unsigned)me.rank);
    CHECK_RC(PMIX_SUCCESS, PMIx_Group_construct(gname, &me, 1, NULL, 0, NULL, NULL));
    CHECK_RC(PMIX_SUCCESS, PMIx_Group_destruct(gname, NULL, 0));
    /* not supported: exported, immediate error, no callback */
    pmix_byte_object_t cred;
    CHECK_RC(PMIX_ERR_NOT_SUPPORTED, PMIx_Get_credential(NULL, 0, &cred));
    /* allocation requests are real: an unknown directive is refused before Slurm */
    CHECK_RC(PMIX_ERR_BAD_PARAM, PMIx_Allocation_request((pmix_alloc_directive_t)99, NULL, 0, NULL, NULL));
    CHECK_RC(PMIX_ERR_NOT_SUPPORTED, PMIx_tool_init(NULL, NULL, 0));
    CHECK_RC(PMIX_SUCCESS, PMIx_Notify_event(-2000, &me, PMIX_RANGE_GLOBAL, NULL, 0, NULL, NULL)); /* through the server */
    CHECK_RC(PMIX_ERR_BAD_PARAM, PMIx_Notify_event(-2000, &me, PMIX_RANGE_CUSTOM, NULL, 0, NULL, NULL));

    /* events: registration callback, local notification, deregistration callback */
    pmix_status_t code = -2000;
    CHECK_RC(PMIX_SUCCESS, PMIx_Register_event_handler(&code, 1, NULL, 0, event_fn, reg_cb, NULL));
    CHECK(wait_flag(&flag_reg), "registration callback ran (ref %zu)", reg_ref);
    CHECK_RC(PMIX_SUCCESS, PMIx_Notify_event(-2000, &me, PMIX_RANGE_PROC_LOCAL, NULL, 0, op_cb, (void *)&flag_notify));
    CHECK(wait_flag(&flag_notify), "notification completed");
    CHECK(flag_event == 1, "own handler got the local event");
    CHECK_RC(PMIX_SUCCESS, PMIx_Deregister_event_handler(reg_ref, op_cb, (void *)&flag_dereg));
    CHECK(wait_flag(&flag_dereg), "deregistration callback ran");
    CHECK_RC(PMIX_ERR_NOT_FOUND, PMIx_Deregister_event_handler(reg_ref, NULL, NULL));

    /* job control with the cleanup directive and no callback (OpenMPI does this in MPI_Init) */
    pmix_info_t jc[2];
    PMIX_INFO_LOAD(&jc[0], PMIX_REGISTER_CLEANUP_DIR, "/tmp/pmixcpp-does-not-matter", PMIX_STRING);
    bool t = true;
    PMIX_INFO_LOAD(&jc[1], PMIX_CLEANUP_RECURSIVE, &t, PMIX_BOOL);
    CHECK_RC(PMIX_SUCCESS, PMIx_Job_control_nb(&me, 1, jc, 2, NULL, NULL));
    PMIX_INFO_DESTRUCT(&jc[0]);

    /* log: printed to stderr, callback called */
    pmix_info_t logi;
    pmix_byte_object_t bo;
    char msg[] = "pmix_errors: this is a PMIx_Log_nb test message";
    bo.bytes = msg;
    bo.size = sizeof(msg);
    PMIX_INFO_LOAD(&logi, PMIX_LOG_MSG, &bo, PMIX_BYTE_OBJECT);
    CHECK_RC(PMIX_SUCCESS, PMIx_Log_nb(&logi, 1, NULL, 0, op_cb, (void *)&flag_log));
    CHECK(wait_flag(&flag_log), "log callback ran");
    PMIX_INFO_DESTRUCT(&logi);

    /* a blocking call from a callback on the progress thread does not deadlock */
    CHECK_RC(PMIX_SUCCESS, PMIx_Get_nb(&wild, PMIX_JOB_SIZE, NULL, 0, get_cb, NULL));
    for (int i = 0; i < 10000 && !flag_cb_rc_set; i++) usleep(1000);
    CHECK(flag_cb_rc_set && cb_rc == PMIX_ERR_WOULD_BLOCK, "PMIx_Fence inside a callback -> %s",
          PMIx_Error_string(cb_rc));

    CHECK_RC(PMIX_SUCCESS, PMIx_Fence(NULL, 0, NULL, 0));
    CHECK_RC(PMIX_SUCCESS, PMIx_Finalize(NULL, 0));
    CHECK_RC(PMIX_ERR_INIT, PMIx_Finalize(NULL, 0));
    CHECK_RC(PMIX_ERR_INIT, PMIx_Put(PMIX_GLOBAL, "x", &val));
    return ptest_exit();
}
