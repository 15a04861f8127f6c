/* One namespace of several apps (a heterogeneous step's components, --multi-prog lines): every rank
 * prints what the server says about it, its app and its node in one "APPS" line, then checks that
 * data moves between all ranks whatever their app: a put/fence/get of every peer (direct modex)
 * and an event of range NAMESPACE from the last rank that every rank receives. */
#include "ptest.h"

#include <stdint.h>

#define APPS_EVENT (PMIX_EXTERNAL_ERR_BASE - 77)

static volatile int got_event = 0;

static void on_event(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[], size_t ninfo,
                     pmix_info_t *results, size_t nresults, pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    got_event = 1;
    if (cbfunc) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static void reg_done(pmix_status_t status, size_t id, void *cbdata) { *(volatile int *)cbdata = 1; }

/* The value of `key` for `rank` as an unsigned number (UINT32, UINT16 or PROC_RANK); -1 if missing. */
static long get_num(const pmix_proc_t *me, uint32_t rank, const char *key) {
    pmix_proc_t p = *me;
    pmix_value_t *v = NULL;
    long out = -1;
    p.rank = rank;
    if (PMIx_Get(&p, key, NULL, 0, &v) == PMIX_SUCCESS && v) {
        if (v->type == PMIX_UINT32) out = v->data.uint32;
        else if (v->type == PMIX_UINT16) out = v->data.uint16;
        else if (v->type == PMIX_PROC_RANK) out = v->data.rank;
    }
    if (v) PMIX_VALUE_RELEASE(v);
    return out;
}

static void get_str(const pmix_proc_t *me, uint32_t rank, const char *key, char *out, size_t len) {
    pmix_proc_t p = *me;
    pmix_value_t *v = NULL;
    p.rank = rank;
    snprintf(out, len, "-");
    if (PMIx_Get(&p, key, NULL, 0, &v) == PMIX_SUCCESS && v && v->type == PMIX_STRING && v->data.string)
        snprintf(out, len, "%s", v->data.string);
    if (v) PMIX_VALUE_RELEASE(v);
}

int main(void) {
    pmix_proc_t me;
    if (ptest_init(&me)) return 1;
    const uint32_t size = ptest_job_size(&me);
    char lpeers[4096], host[256], argv[1024];
    get_str(&me, PMIX_RANK_WILDCARD, PMIX_LOCAL_PEERS, lpeers, sizeof(lpeers));
    get_str(&me, me.rank, PMIX_HOSTNAME, host, sizeof(host));
    get_str(&me, me.rank, PMIX_APP_ARGV, argv, sizeof(argv));
    printf("APPS rank=%u size=%u napps=%ld appnum=%ld appsize=%ld apprank=%ld appldr=%ld lrank=%ld nodeid=%ld "
           "nnodes=%ld lsize=%ld lpeers=%s host=%s argv=%s\n",
           me.rank, size, get_num(&me, PMIX_RANK_WILDCARD, PMIX_JOB_NUM_APPS), get_num(&me, me.rank, PMIX_APPNUM),
           get_num(&me, me.rank, PMIX_APP_SIZE), get_num(&me, me.rank, PMIX_APP_RANK),
           get_num(&me, me.rank, PMIX_APPLDR), get_num(&me, me.rank, PMIX_LOCAL_RANK),
           get_num(&me, me.rank, PMIX_NODEID), get_num(&me, PMIX_RANK_WILDCARD, PMIX_NUM_NODES),
           get_num(&me, PMIX_RANK_WILDCARD, PMIX_LOCAL_SIZE), lpeers, host, argv);
    fflush(stdout);

    volatile int registered = 0;
    pmix_status_t code = APPS_EVENT;
    PMIx_Register_event_handler(&code, 1, NULL, 0, on_event, reg_done, (void *)&registered);
    for (int i = 0; i < 5000 && !registered; i++) usleep(1000);
    CHECK(registered, "event handler registered");

    /* every rank's value, read by every rank after one fence without data collection */
    char key[64];
    pmix_value_t val;
    snprintf(key, sizeof(key), "apps.%u", me.rank);
    PMIX_VALUE_LOAD(&val, &me.rank, PMIX_UINT32);
    CHECK_RC(PMIX_SUCCESS, PMIx_Put(PMIX_GLOBAL, key, &val));
    CHECK_RC(PMIX_SUCCESS, PMIx_Commit());
    CHECK_RC(PMIX_SUCCESS, PMIx_Fence(NULL, 0, NULL, 0));
    int bad = 0;
    for (uint32_t r = 0; r < size; r++) {
        pmix_proc_t p = me;
        pmix_value_t *v = NULL;
        p.rank = r;
        snprintf(key, sizeof(key), "apps.%u", r);
        if (PMIx_Get(&p, key, NULL, 0, &v) != PMIX_SUCCESS || !v || v->type != PMIX_UINT32 || v->data.uint32 != r) bad++;
        if (v) PMIX_VALUE_RELEASE(v);
    }
    CHECK(bad == 0, "read every rank's value across the apps (%d wrong)", bad);

    /* an event of range NAMESPACE reaches every rank of every app */
    CHECK_RC(PMIX_SUCCESS, PMIx_Fence(NULL, 0, NULL, 0));
    if (me.rank == size - 1) PMIx_Notify_event(APPS_EVENT, &me, PMIX_RANGE_NAMESPACE, NULL, 0, NULL, NULL);
    for (int i = 0; i < 10000 && !got_event; i++) usleep(1000);
    CHECK(got_event, "event from rank %u received", size - 1);
    CHECK_RC(PMIX_SUCCESS, PMIx_Fence(NULL, 0, NULL, 0));
    int rc = ptest_exit();
    PMIx_Finalize(NULL, 0);
    return rc;
}
