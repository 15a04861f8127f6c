/* PMIx_Group_leave on OpenPMIx's own client library (tests/integration/t-native-leave.sh): every
 * rank constructs group "g.leave" of all ranks; the last rank leaves it; the others get
 * PMIX_GROUP_LEFT naming the leaver, then destruct the group without it (a destruct that still
 * counted the leaver would wait for it forever), and everyone meets in a fence of the job. First,
 * leaving a group it is not in must fail.
 * Built against the system's OpenPMIx (pkg-config pmix), as an application that brings its own.
 * Prints "LEAVE-OK rank R" on success, "LEAVE-FAIL rank R: why" otherwise; exit status 0/1. */
#include <pmix.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pmix_proc_t me;
static volatile int left_seen = 0;
static volatile pmix_rank_t left_rank = PMIX_RANK_UNDEF;
static volatile int handler_ready = 0;
static const char *step = "start";

static void fail(const char *why, pmix_status_t rc) {
    printf("LEAVE-FAIL rank %u: %s (%s)\n", me.rank, why, PMIx_Error_string(rc));
    fflush(stdout);
    exit(1);
}

static void on_alarm(int sig) {
    (void)sig;
    printf("LEAVE-FAIL rank %u: stuck in %s for 60 s\n", me.rank, step);
    fflush(stdout);
    _exit(2);
}

static void on_left(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[], size_t ninfo,
                    pmix_info_t results[], size_t nresults, pmix_event_notification_cbfunc_fn_t cbfunc,
                    void *cbdata) {
    (void)id, (void)source, (void)results, (void)nresults;
    if (status == PMIX_GROUP_LEFT) {
        for (size_t i = 0; i < ninfo; i++)
            if (strcmp(info[i].key, PMIX_EVENT_AFFECTED_PROC) == 0 && info[i].value.type == PMIX_PROC)
                left_rank = info[i].value.data.proc->rank;
        left_seen = 1;
    }
    if (cbfunc) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static void registered(pmix_status_t status, size_t ref, void *cbdata) {
    (void)ref, (void)cbdata;
    handler_ready = status == PMIX_SUCCESS ? 1 : -1;
}

int main(void) {
    pmix_status_t rc;
    pmix_value_t *val = NULL;
    pmix_proc_t wild;
    setvbuf(stdout, NULL, _IOLBF, 0);
    signal(SIGALRM, on_alarm);
    alarm(60);
    if ((rc = PMIx_Init(&me, NULL, 0)) != PMIX_SUCCESS) fail("PMIx_Init", rc);
    PMIX_PROC_CONSTRUCT(&wild);
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    if ((rc = PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &val)) != PMIX_SUCCESS) fail("PMIx_Get(PMIX_JOB_SIZE)", rc);
    uint32_t n = val->data.uint32;
    PMIX_VALUE_RELEASE(val);
    if (n < 2) fail("needs two ranks or more", PMIX_ERR_BAD_PARAM);
    const pmix_rank_t leaver = n - 1;

    pmix_status_t code = PMIX_GROUP_LEFT;
    step = "PMIx_Register_event_handler";
    PMIx_Register_event_handler(&code, 1, NULL, 0, on_left, registered, NULL);
    for (int i = 0; i < 10000 && handler_ready == 0; i++) usleep(1000);
    if (handler_ready != 1) fail("PMIX_GROUP_LEFT handler not registered", PMIX_ERROR);

    step = "PMIx_Group_leave of a group it is not in";
    if ((rc = PMIx_Group_leave("g.none", NULL, 0)) == PMIX_SUCCESS) fail("leaving a group it is not in succeeded", rc);
    printf("rank %u: leaving a group it is not in: %s\n", me.rank, PMIx_Error_string(rc));

    step = "PMIx_Group_construct";
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    if ((rc = PMIx_Group_construct("g.leave", &wild, 1, NULL, 0, &results, &nresults)) != PMIX_SUCCESS)
        fail("PMIx_Group_construct", rc);
    if (results) PMIX_INFO_FREE(results, nresults);

    if (me.rank == leaver) {
        step = "PMIx_Group_leave";
        if ((rc = PMIx_Group_leave("g.leave", NULL, 0)) != PMIX_SUCCESS) fail("PMIx_Group_leave", rc);
    } else {
        step = "waiting for PMIX_GROUP_LEFT";
        for (int i = 0; i < 20000 && !left_seen; i++) usleep(1000);
        if (!left_seen) fail("no PMIX_GROUP_LEFT within 20 s", PMIX_ERR_TIMEOUT);
        if (left_rank != leaver) fail("PMIX_GROUP_LEFT names another rank than the leaver", PMIX_ERROR);
        step = "PMIx_Group_destruct";
        if ((rc = PMIx_Group_destruct("g.leave", NULL, 0)) != PMIX_SUCCESS) fail("PMIx_Group_destruct", rc);
    }
    step = "PMIx_Fence";
    if ((rc = PMIx_Fence(NULL, 0, NULL, 0)) != PMIX_SUCCESS) fail("PMIx_Fence", rc);
    printf("LEAVE-OK rank %u%s\n", me.rank, me.rank == leaver ? " (left)" : "");
    alarm(0);
    PMIx_Finalize(NULL, 0);
    return 0;
}
