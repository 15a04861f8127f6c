/* Allocation requests and queries on a real cluster (run by tests/integration/t-alloc.sh).
 *
 *   pmix_alloc queries          self-queries (one or more ranks)
 *   pmix_alloc grow             one rank inside an sbatch job of 2 exclusive nodes with 2+ idle
 *                               nodes left: EXTEND by 2 (and its event), RELEASE of the own node
 *                               refused, NEW + status + give back, pending NEWs cancelled (by
 *                               id, by name, all of mine), pmix.timeout on a pending request, a
 *                               request beyond the partition, an unknown partition, bad attributes
 *   pmix_alloc shrink           one rank inside an sbatch job of 4 exclusive nodes: RELEASE 2 with
 *                               a lease, REACQUIRE them, RELEASE again
 *   pmix_alloc time-ok|time-denied
 *                               EXTEND with PMIX_ALLOC_TIME: granted (operator) or refused with
 *                               Slurm's reason (an ordinary user); with PMIX_ALLOC_EXPECT_UNREACH
 *                               (and PMIX_ALLOC_WAIT, to stop slurmctld first): PMIX_ERR_UNREACH
 *   pmix_alloc proposal         the PMIx allocation proposal's example, 4 ranks:
 *                               rank 0 asks for a new allocation, rank 1 waits for the completion
 *                               event, the others poll with PMIx_Query_info
 *   pmix_alloc cycle            one rank in a job of 2 nodes with 2+ idle nodes: EXTEND 1, RELEASE 1
 *                               (lease), REACQUIRE, EXTEND 1 again (grow, shrink, reacquire, grow)
 *   pmix_alloc new-own|new-keep|new-hold
 *                               NEW of 1 node (PMIX_ALLOC_TIME from $PMIX_ALLOC_SECS, if set) not
 *                               given back: listed by PMIX_QUERY_ALLOC_STATUS; new-keep asks
 *                               pmixcpp.alloc.keep; new-hold then sleeps (for SIGKILL of srun)
 *   pmix_alloc refuse           $PMIX_ALLOC_DIR (new|extend) of $PMIX_ALLOC_NODES nodes (default 1)
 *                               in partition $PMIX_ALLOC_QUEUE (if set), expected to be refused:
 *                               "REFUSED <status> <Slurm's reason>"
 *   pmix_alloc psets            the server's process sets: "PSET <name> <members>" per name of
 *                               PMIX_QUERY_PSET_NAMES (PMIX_QUERY_PSET_MEMBERSHIP), "PSETS <n>"
 * Lines "NODELIST <what> <list>" and "ALLOC <what> <id> <jobid>" let the script check Slurm's
 * view with squeue/scontrol.
 */
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "ptest.h"

static pmix_proc_t self;

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* --- small helpers ------------------------------------------------------------------------ */

static const pmix_info_t *find(const pmix_info_t *info, size_t n, const char *key) {
    for (size_t i = 0; i < n; ++i)
        if (strncmp(info[i].key, key, PMIX_MAX_KEYLEN) == 0) return &info[i];
    return NULL;
}

static const char *str_of(const pmix_info_t *info, size_t n, const char *key) {
    const pmix_info_t *i = find(info, n, key);
    return (i && i->value.type == PMIX_STRING && i->value.data.string) ? i->value.data.string : "";
}

static int count_nodes(const char *list) {
    /* "n[3-4]" or "n3,n5" or "n[1-2,5]": count names, good enough for our node names */
    int count = 0;
    const char *p = list;
    if (!*p) return 0;
    while (*p) {
        const char *br = strchr(p, '[');
        const char *comma = strchr(p, ',');
        if (br && (!comma || br < comma)) {
            const char *end = strchr(br, ']');
            if (!end) return -1;
            const char *q = br + 1;
            while (q < end) {
                long a = strtol(q, (char **)&q, 10), b = a;
                if (*q == '-') b = strtol(q + 1, (char **)&q, 10);
                count += (int)(b - a + 1);
                if (*q == ',') q++;
            }
            p = end + 1;
            if (*p == ',') p++;
        } else {
            count++;
            if (!comma) break;
            p = comma + 1;
        }
    }
    return count;
}

typedef struct {
    pmix_info_t *info;
    size_t n;
} infos_t;

static void infos_init(infos_t *in, size_t max) {
    PMIX_INFO_CREATE(in->info, max);
    in->n = 0;
}
static pmix_info_t *infos_add(infos_t *in, const char *key, const void *v, pmix_data_type_t t) {
    PMIx_Info_load(&in->info[in->n], key, v, t);
    return &in->info[in->n++];
}
static void infos_free(infos_t *in, size_t max) { PMIX_INFO_FREE(in->info, max); }

static pmix_status_t alloc_req(pmix_alloc_directive_t dir, infos_t *in, pmix_info_t **res, size_t *nres) {
    return PMIx_Allocation_request(dir, in ? in->info : NULL, in ? in->n : 0, res, nres);
}

/* --- the completion event ------------------------------------------------------------------- */

static pthread_mutex_t ev_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ev_cond = PTHREAD_COND_INITIALIZER;
static int ev_count = 0;
static char ev_last_id[128];
static char ev_last_text[512];

static void alloc_event(size_t ref, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                        size_t ninfo, pmix_info_t results[], size_t nresults, pmix_event_notification_cbfunc_fn_t cbfunc,
                        void *cbdata) {
    pthread_mutex_lock(&ev_lock);
    if (status == PMIX_NOTIFY_ALLOC_COMPLETE) {
        snprintf(ev_last_id, sizeof(ev_last_id), "%s", str_of(info, ninfo, PMIX_ALLOC_ID));
        snprintf(ev_last_text, sizeof(ev_last_text), "%s", str_of(info, ninfo, PMIX_EVENT_TEXT_MESSAGE));
        ev_count++;
        pthread_cond_broadcast(&ev_cond);
    }
    pthread_mutex_unlock(&ev_lock);
    if (cbfunc) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static void register_alloc_event(void) {
    pmix_status_t code = PMIX_NOTIFY_ALLOC_COMPLETE;
    pmix_status_t rc = PMIx_Register_event_handler(&code, 1, NULL, 0, alloc_event, NULL, NULL);
    CHECK(rc >= 0, "registered for PMIX_NOTIFY_ALLOC_COMPLETE (%s)", rc >= 0 ? "ok" : PMIx_Error_string(rc));
}

/* Wait until ev_count reaches `want` (or `seconds` pass). */
static int wait_events(int want, int seconds) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += seconds;
    pthread_mutex_lock(&ev_lock);
    while (ev_count < want)
        if (pthread_cond_timedwait(&ev_cond, &ev_lock, &ts) != 0) break;
    int got = ev_count;
    pthread_mutex_unlock(&ev_lock);
    return got >= want;
}

/* --- queries -------------------------------------------------------------------------------- */

static pmix_status_t query1(const char *key, const char *qual_key, const char *qual_value, pmix_info_t **res,
                            size_t *nres) {
    pmix_query_t q;
    PMIX_QUERY_CONSTRUCT(&q);
    char *keys[2] = {(char *)key, NULL};
    q.keys = keys;
    pmix_info_t qual;
    if (qual_key) {
        PMIx_Info_load(&qual, qual_key, qual_value, PMIX_STRING);
        q.qualifiers = &qual;
        q.nqual = 1;
    }
    pmix_status_t rc = PMIx_Query_info(&q, 1, res, nres);
    if (qual_key) PMIX_INFO_DESTRUCT(&qual);
    return rc;
}

/* --- grow and shrink -------------------------------------------------------------------------- */

typedef struct {
    pmix_status_t status;
    int done;
    char text[512];
} nb_result_t;

static void nb_cb(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata, pmix_release_cbfunc_t release,
                  void *release_cbdata) {
    nb_result_t *r = (nb_result_t *)cbdata;
    pthread_mutex_lock(&ev_lock);
    r->status = status;
    snprintf(r->text, sizeof(r->text), "%s", str_of(info, ninfo, PMIX_EVENT_TEXT_MESSAGE));
    r->done = 1;
    pthread_cond_broadcast(&ev_cond);
    pthread_mutex_unlock(&ev_lock);
    if (release) release(release_cbdata);
}

static int wait_nb(nb_result_t *r, int seconds) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += seconds;
    pthread_mutex_lock(&ev_lock);
    while (!r->done)
        if (pthread_cond_timedwait(&ev_cond, &ev_lock, &ts) != 0) break;
    int done = r->done;
    pthread_mutex_unlock(&ev_lock);
    return done;
}

static int run_queries(void) {
    char *keys0[] = {PMIX_QUERY_NAMESPACES, PMIX_QUERY_JOB_STATUS, PMIX_QUERY_PROC_TABLE, PMIX_QUERY_LOCAL_PROC_TABLE,
                     NULL};
    char *keys1[] = {PMIX_QUERY_SPAWN_SUPPORT, PMIX_QUERY_DEBUG_SUPPORT, PMIX_QUERY_NUM_PSETS, PMIX_QUERY_PSET_NAMES,
                     PMIX_TIME_REMAINING, NULL};
    pmix_query_t q[2];
    memset(q, 0, sizeof(q));
    q[0].keys = keys0;
    q[1].keys = keys1;
    pmix_info_t *res = NULL;
    size_t nres = 0;
    pmix_status_t rc = PMIx_Query_info(q, 2, &res, &nres);
    CHECK(rc == PMIX_SUCCESS, "PMIx_Query_info of 9 self keys -> %s", PMIx_Error_string(rc));
    /* v4.1: a PMIX_QUERY_RESULTS per query, then the 9 answers as a flat list */
    size_t nwrapped = 0;
    for (size_t i = 0; i < nres; ++i) nwrapped += PMIX_CHECK_KEY(&res[i], PMIX_QUERY_RESULTS);
    CHECK(nres - nwrapped == 9 && nwrapped == 2, "9 flat results and 2 PMIX_QUERY_RESULTS (got %zu, %zu)",
          nres - nwrapped, nwrapped);
    CHECK(strcmp(str_of(res, nres, PMIX_QUERY_NAMESPACES), self.nspace) == 0, "namespaces = %s",
          str_of(res, nres, PMIX_QUERY_NAMESPACES));
    const pmix_info_t *pt = find(res, nres, PMIX_QUERY_PROC_TABLE);
    pmix_value_t *v = NULL;
    uint32_t size = 0;
    if (PMIx_Get(&self, PMIX_JOB_SIZE, NULL, 0, &v) == PMIX_SUCCESS) {
        size = v->data.uint32;
        PMIX_VALUE_RELEASE(v);
    }
    CHECK(pt && pt->value.type == PMIX_DATA_ARRAY && pt->value.data.darray->type == PMIX_PROC_INFO &&
              pt->value.data.darray->size == size,
          "proc table has the %u ranks", size);
    if (pt && pt->value.type == PMIX_DATA_ARRAY && pt->value.data.darray->size > self.rank) {
        pmix_proc_info_t *pi = (pmix_proc_info_t *)pt->value.data.darray->array;
        CHECK(pi[self.rank].pid == getpid(), "proc table: my pid %d (got %d)", (int)getpid(), (int)pi[self.rank].pid);
        CHECK(pi[self.rank].executable_name && strstr(pi[self.rank].executable_name, "pmix_alloc"),
              "proc table: my executable %s", pi[self.rank].executable_name ? pi[self.rank].executable_name : "(null)");
    }
    const pmix_info_t *tr = find(res, nres, PMIX_TIME_REMAINING);
    CHECK(tr && tr->value.type == PMIX_UINT32 && tr->value.data.uint32 > 0, "time remaining %u s",
          tr ? tr->value.data.uint32 : 0);
    printf("TIME_REMAINING %u\n", tr ? tr->value.data.uint32 : 0);
    if (res) PMIX_INFO_FREE(res, nres);

    /* many queries at once, each answered by srun's side */
    enum { kConcurrent = 32 };
    static nb_result_t many[kConcurrent];
    static char *tr_keys[] = {PMIX_TIME_REMAINING, NULL};
    static pmix_query_t tq[kConcurrent];
    for (int i = 0; i < kConcurrent; ++i) {
        memset(&tq[i], 0, sizeof(tq[i]));
        tq[i].keys = tr_keys;
        many[i].done = 0;
        rc = PMIx_Query_info_nb(&tq[i], 1, nb_cb, &many[i]);
        if (rc != PMIX_SUCCESS) many[i].done = -1;
    }
    int answered = 0;
    for (int i = 0; i < kConcurrent; ++i) {
        int ok = wait_nb(&many[i], 30) == 1 && many[i].status == PMIX_SUCCESS;
        answered += ok;
        if (!ok)
            printf("QUERY-FAILED rank %u: query %d: %s%s%s\n", self.rank, i,
                   many[i].done == 1 ? PMIx_Error_string(many[i].status) : "no answer within 30 s",
                   many[i].text[0] ? ": " : "", many[i].text);
    }
    CHECK(answered == kConcurrent, "%d concurrent PMIX_TIME_REMAINING queries answered (of %d)", answered, kConcurrent);

    /* one unknown key among known ones: partial success */
    char *keys2[] = {PMIX_QUERY_NAMESPACES, "pmix.qry.nosuch", NULL};
    pmix_query_t q2[1];
    memset(q2, 0, sizeof(q2));
    q2[0].keys = keys2;
    rc = PMIx_Query_info(q2, 1, &res, &nres);
    CHECK(rc == PMIX_QUERY_PARTIAL_SUCCESS && nres == 2 && find(res, nres, PMIX_QUERY_RESULTS) &&
              find(res, nres, PMIX_QUERY_NAMESPACES),
          "partial answer -> %s, %zu result(s): PMIX_QUERY_RESULTS and the flat one", PMIx_Error_string(rc), nres);
    if (res) PMIX_INFO_FREE(res, nres);
    return 0;
}

static const char *my_node(void) {
    static char node[256];
    const char *n = getenv("SLURMD_NODENAME");
    if (n) return n;
    pmix_value_t *hv = NULL;
    if (PMIx_Get(&self, PMIX_HOSTNAME, NULL, 0, &hv) == PMIX_SUCCESS) {
        snprintf(node, sizeof(node), "%s", hv->data.string);
        PMIX_VALUE_RELEASE(hv);
    }
    return node;
}

static void release_own_node(void) {
    pmix_info_t *res = NULL;
    size_t nres = 0;
    infos_t in;
    infos_init(&in, 1);
    infos_add(&in, PMIX_ALLOC_NODE_LIST, my_node(), PMIX_STRING);
    pmix_status_t rc = alloc_req(PMIX_ALLOC_RELEASE, &in, &res, &nres);
    infos_free(&in, 1);
    CHECK(rc == PMIX_ERR_BAD_PARAM, "RELEASE of my own node %s refused -> %s (%s)", my_node(), PMIx_Error_string(rc),
          str_of(res, nres, PMIX_EVENT_TEXT_MESSAGE));
    if (res) PMIX_INFO_FREE(res, nres);
}

static int run_grow(void) {
    pmix_info_t *res = NULL;
    size_t nres = 0;
    pmix_status_t rc;
    infos_t in;
    register_alloc_event();

    /* 1. EXTEND by 2 nodes */
    uint64_t two = 2;
    infos_init(&in, 4);
    PMIX_INFO_REQUIRED(infos_add(&in, PMIX_ALLOC_NUM_NODES, &two, PMIX_UINT64));
    infos_add(&in, PMIX_ALLOC_REQ_ID, "grow", PMIX_STRING);
    double t0 = now_ms();
    rc = alloc_req(PMIX_ALLOC_EXTEND, &in, &res, &nres);
    printf("TIMING extend2 %.0f ms\n", now_ms() - t0);
    infos_free(&in, 4);
    CHECK(rc == PMIX_SUCCESS, "EXTEND by 2 nodes -> %s", PMIx_Error_string(rc));
    char added[256] = "", all[256] = "", grow_id[128] = "";
    snprintf(added, sizeof(added), "%s", str_of(res, nres, PMIX_ALLOC_NODE_LIST));
    snprintf(all, sizeof(all), "%s", str_of(res, nres, PMIX_ALLOCATED_NODELIST));
    snprintf(grow_id, sizeof(grow_id), "%s", str_of(res, nres, PMIX_ALLOC_ID));
    CHECK(count_nodes(added) == 2, "2 nodes added: %s", added);
    CHECK(count_nodes(all) == 4, "the job now has 4 nodes: %s", all);
    printf("NODELIST extended %s\nNODELIST added %s\n", all, added);
    fflush(stdout);
    if (res) PMIX_INFO_FREE(res, nres);
    CHECK(wait_events(1, 10) && strcmp(ev_last_id, grow_id) == 0, "PMIX_NOTIFY_ALLOC_COMPLETE for %s (got '%s')",
          grow_id, ev_last_id);

    /* RELEASE of the requester's own node: refused before Slurm */
    release_own_node();

    /* 6. NEW allocation of one node, then give it back */
    uint64_t one = 1;
    uint32_t secs = 300;
    infos_init(&in, 2);
    infos_add(&in, PMIX_ALLOC_NUM_NODES, &one, PMIX_UINT64);
    infos_add(&in, PMIX_ALLOC_TIME, &secs, PMIX_UINT32);
    t0 = now_ms();
    rc = alloc_req(PMIX_ALLOC_NEW, &in, &res, &nres);
    printf("TIMING new1 %.0f ms\n", now_ms() - t0);
    infos_free(&in, 2);
    CHECK(rc == PMIX_SUCCESS, "NEW allocation of 1 node -> %s", PMIx_Error_string(rc));
    char new_id[128] = "";
    snprintf(new_id, sizeof(new_id), "%s", str_of(res, nres, PMIX_ALLOC_ID));
    CHECK(atoi(str_of(res, nres, PMIX_JOBID)) > 0, "the new allocation has its own job id %s",
          str_of(res, nres, PMIX_JOBID));
    CHECK(count_nodes(str_of(res, nres, PMIX_ALLOC_NODE_LIST)) == 1, "on one node: %s",
          str_of(res, nres, PMIX_ALLOC_NODE_LIST));
    printf("ALLOC new %s %s %s\n", new_id, str_of(res, nres, PMIX_JOBID), str_of(res, nres, PMIX_ALLOC_NODE_LIST));
    fflush(stdout);
    if (res) PMIX_INFO_FREE(res, nres);
    /* its status */
    rc = query1(PMIX_QUERY_ALLOC_STATUS, PMIX_ALLOC_ID, new_id, &res, &nres);
    CHECK(rc == PMIX_SUCCESS && strstr(str_of(res, nres, PMIX_QUERY_ALLOC_STATUS), "granted"),
          "status of %s: %s", new_id, str_of(res, nres, PMIX_QUERY_ALLOC_STATUS));
    if (res) PMIX_INFO_FREE(res, nres);
    if (getenv("PMIX_ALLOC_HOLD")) sleep(atoi(getenv("PMIX_ALLOC_HOLD")));  /* for squeue in the script */
    infos_init(&in, 1);
    infos_add(&in, PMIX_ALLOC_ID, new_id, PMIX_STRING);
    rc = alloc_req(PMIX_ALLOC_RELEASE, &in, &res, &nres);
    infos_free(&in, 1);
    CHECK(rc == PMIX_SUCCESS, "RELEASE of the NEW allocation %s -> %s", new_id, PMIx_Error_string(rc));
    if (res) PMIX_INFO_FREE(res, nres);

    /* 7. A NEW allocation of a busy node stays pending; cancel it */
    nb_result_t pending = {PMIX_ERROR, 0, ""};
    infos_init(&in, 2);
    infos_add(&in, PMIX_ALLOC_NODE_LIST, my_node(), PMIX_STRING);
    infos_add(&in, PMIX_ALLOC_REQ_ID, "blocked", PMIX_STRING);
    rc = PMIx_Allocation_request_nb(PMIX_ALLOC_NEW, in.info, in.n, nb_cb, &pending);
    infos_free(&in, 2);
    CHECK(rc == PMIX_SUCCESS, "NEW on busy node %s submitted -> %s", my_node(), PMIx_Error_string(rc));
    char line[512] = "";
    for (int i = 0; i < 20; ++i) {
        sleep(1);
        rc = query1(PMIX_QUERY_ALLOC_STATUS, PMIX_ALLOC_REQ_ID, "blocked", &res, &nres);
        snprintf(line, sizeof(line), "%s", rc == PMIX_SUCCESS ? str_of(res, nres, PMIX_QUERY_ALLOC_STATUS) : "");
        if (res) PMIX_INFO_FREE(res, nres);
        if (strstr(line, "pending")) break;
    }
    CHECK(strstr(line, "pending") != NULL, "the request waits in Slurm: %s", line);
    printf("PENDING %s\n", line);
    fflush(stdout);
    char pending_id[128] = "";
    sscanf(line, "%127s", pending_id);
    infos_init(&in, 1);
    infos_add(&in, PMIX_ALLOC_ID, pending_id, PMIX_STRING);
    rc = alloc_req(PMIX_ALLOC_REQ_CANCEL, &in, &res, &nres);
    infos_free(&in, 1);
    CHECK(rc == PMIX_SUCCESS, "CANCEL %s -> %s", pending_id, PMIx_Error_string(rc));
    if (res) PMIX_INFO_FREE(res, nres);
    CHECK(wait_nb(&pending, 10) && pending.status == PMIX_ERR_JOB_CANCELED,
          "the pending request ends PMIX_ERR_JOB_CANCELED (got %s: %s)", PMIx_Error_string(pending.status),
          pending.text);
    /* the same by the request's name (PMIX_ALLOC_REQ_ID) */
    nb_result_t pending2 = {PMIX_ERROR, 0, ""};
    infos_init(&in, 2);
    infos_add(&in, PMIX_ALLOC_NODE_LIST, my_node(), PMIX_STRING);
    infos_add(&in, PMIX_ALLOC_REQ_ID, "blocked2", PMIX_STRING);
    rc = PMIx_Allocation_request_nb(PMIX_ALLOC_NEW, in.info, in.n, nb_cb, &pending2);
    infos_free(&in, 2);
    sleep(1);
    infos_init(&in, 1);
    infos_add(&in, PMIX_ALLOC_REQ_ID, "blocked2", PMIX_STRING);
    rc = alloc_req(PMIX_ALLOC_REQ_CANCEL, &in, &res, &nres);
    infos_free(&in, 1);
    CHECK(rc == PMIX_SUCCESS, "CANCEL by PMIX_ALLOC_REQ_ID blocked2 -> %s %s", PMIx_Error_string(rc),
          str_of(res, nres, PMIX_EVENT_TEXT_MESSAGE));
    if (res) PMIX_INFO_FREE(res, nres);
    CHECK(wait_nb(&pending2, 10) && pending2.status == PMIX_ERR_JOB_CANCELED, "blocked2 ends PMIX_ERR_JOB_CANCELED (%s)",
          PMIx_Error_string(pending2.status));
    /* CANCEL without an id: every open request of mine */
    nb_result_t p3 = {PMIX_ERROR, 0, ""}, p4 = {PMIX_ERROR, 0, ""};
    infos_init(&in, 1);
    infos_add(&in, PMIX_ALLOC_NODE_LIST, my_node(), PMIX_STRING);
    PMIx_Allocation_request_nb(PMIX_ALLOC_NEW, in.info, in.n, nb_cb, &p3);
    PMIx_Allocation_request_nb(PMIX_ALLOC_NEW, in.info, in.n, nb_cb, &p4);
    infos_free(&in, 1);
    sleep(1);
    rc = alloc_req(PMIX_ALLOC_REQ_CANCEL, NULL, &res, &nres);
    const pmix_info_t *nc = find(res, nres, "pmixcpp.alloc.ncancelled");
    CHECK(rc == PMIX_SUCCESS && nc && nc->value.data.size == 2, "CANCEL of all my open requests -> %s, %zu cancelled",
          PMIx_Error_string(rc), nc ? nc->value.data.size : (size_t)0);
    if (res) PMIX_INFO_FREE(res, nres);
    CHECK(wait_nb(&p3, 10) && wait_nb(&p4, 10) && p3.status == PMIX_ERR_JOB_CANCELED &&
              p4.status == PMIX_ERR_JOB_CANCELED,
          "both end PMIX_ERR_JOB_CANCELED");

    /* pmix.timeout bounds how long a request may stay pending */
    int tmo = 3;
    infos_init(&in, 2);
    infos_add(&in, PMIX_ALLOC_NODE_LIST, my_node(), PMIX_STRING);
    infos_add(&in, PMIX_TIMEOUT, &tmo, PMIX_INT);
    double t1 = now_ms();
    rc = alloc_req(PMIX_ALLOC_NEW, &in, &res, &nres);
    infos_free(&in, 2);
    CHECK(rc == PMIX_ERR_TIMEOUT && now_ms() - t1 < 15000, "pending NEW with pmix.timeout=3 -> %s after %.1f s",
          PMIx_Error_string(rc), (now_ms() - t1) / 1000);
    if (res) PMIX_INFO_FREE(res, nres);
    /* CANCEL of nothing */
    infos_init(&in, 1);
    infos_add(&in, PMIX_ALLOC_ID, pending_id, PMIX_STRING);
    rc = alloc_req(PMIX_ALLOC_REQ_CANCEL, &in, &res, &nres);
    infos_free(&in, 1);
    CHECK(rc == PMIX_ERR_NOT_FOUND, "a second CANCEL of %s -> %s", pending_id, PMIx_Error_string(rc));
    if (res) PMIX_INFO_FREE(res, nres);

    /* 8. Beyond what the partition allows: refused with Slurm's reason */
    uint64_t many = 1000;
    infos_init(&in, 1);
    infos_add(&in, PMIX_ALLOC_NUM_NODES, &many, PMIX_UINT64);
    rc = alloc_req(PMIX_ALLOC_NEW, &in, &res, &nres);
    infos_free(&in, 1);
    CHECK(rc == PMIX_ERR_OUT_OF_RESOURCE, "NEW of 1000 nodes refused -> %s", PMIx_Error_string(rc));
    CHECK(strstr(str_of(res, nres, PMIX_EVENT_TEXT_MESSAGE), "slurmctld") != NULL, "with Slurm's reason: %s",
          str_of(res, nres, PMIX_EVENT_TEXT_MESSAGE));
    printf("REFUSED %s\n", str_of(res, nres, PMIX_EVENT_TEXT_MESSAGE));
    if (res) PMIX_INFO_FREE(res, nres);

    /* a partition that does not exist: Slurm's refusal */
    infos_init(&in, 1);
    infos_add(&in, PMIX_ALLOC_QUEUE, "nosuchpartition", PMIX_STRING);
    rc = alloc_req(PMIX_ALLOC_NEW, &in, &res, &nres);
    infos_free(&in, 1);
    CHECK(rc == PMIX_ERR_BAD_PARAM && strstr(str_of(res, nres, PMIX_EVENT_TEXT_MESSAGE), "partition"),
          "NEW in an unknown partition -> %s: %s", PMIx_Error_string(rc), str_of(res, nres, PMIX_EVENT_TEXT_MESSAGE));
    if (res) PMIX_INFO_FREE(res, nres);

    /* 9. Bad attribute: refused before Slurm */
    infos_init(&in, 1);
    infos_add(&in, PMIX_ALLOC_NUM_NODES, "two", PMIX_STRING);
    rc = alloc_req(PMIX_ALLOC_EXTEND, &in, &res, &nres);
    infos_free(&in, 1);
    CHECK(rc == PMIX_ERR_BAD_PARAM, "EXTEND with a string node count -> %s", PMIx_Error_string(rc));
    if (res) PMIX_INFO_FREE(res, nres);
    infos_init(&in, 1);
    PMIX_INFO_REQUIRED(infos_add(&in, PMIX_ALLOC_CPU_LIST, "0-3", PMIX_STRING));
    rc = alloc_req(PMIX_ALLOC_NEW, &in, &res, &nres);
    infos_free(&in, 1);
    CHECK(rc == PMIX_ERR_NOT_SUPPORTED, "NEW with a required CPU list -> %s", PMIx_Error_string(rc));
    if (res) PMIX_INFO_FREE(res, nres);

    /* every request of mine, as Slurm's side keeps them */
    rc = query1(PMIX_QUERY_ALLOC_STATUS, NULL, NULL, &res, &nres);
    CHECK(rc == PMIX_SUCCESS, "status of all my requests -> %s", PMIx_Error_string(rc));
    printf("STATUS\n%s\n", str_of(res, nres, PMIX_QUERY_ALLOC_STATUS));
    if (res) PMIX_INFO_FREE(res, nres);
    return 0;
}

static int run_shrink(void) {
    pmix_info_t *res = NULL;
    size_t nres = 0;
    pmix_status_t rc;
    infos_t in;
    uint64_t two = 2, one = 1;
    release_own_node();

    /* RELEASE 2 nodes by count, lent for 10 minutes */
    uint32_t lease = 600;
    infos_init(&in, 2);
    infos_add(&in, PMIX_ALLOC_NUM_NODES, &two, PMIX_UINT64);
    infos_add(&in, PMIX_ALLOC_TIME, &lease, PMIX_UINT32);
    rc = alloc_req(PMIX_ALLOC_RELEASE, &in, &res, &nres);
    infos_free(&in, 2);
    CHECK(rc == PMIX_SUCCESS, "RELEASE 2 nodes with a lease -> %s %s", PMIx_Error_string(rc),
          str_of(res, nres, PMIX_EVENT_TEXT_MESSAGE));
    char release_id[128] = "";
    snprintf(release_id, sizeof(release_id), "%s", str_of(res, nres, PMIX_ALLOC_ID));
    CHECK(count_nodes(str_of(res, nres, PMIX_ALLOC_NODE_LIST)) == 2, "2 nodes given back: %s",
          str_of(res, nres, PMIX_ALLOC_NODE_LIST));
    CHECK(count_nodes(str_of(res, nres, PMIX_ALLOCATED_NODELIST)) == 2, "2 nodes kept: %s",
          str_of(res, nres, PMIX_ALLOCATED_NODELIST));
    printf("NODELIST released %s\nNODELIST kept %s\n", str_of(res, nres, PMIX_ALLOC_NODE_LIST),
           str_of(res, nres, PMIX_ALLOCATED_NODELIST));
    fflush(stdout);
    if (res) PMIX_INFO_FREE(res, nres);
    if (getenv("PMIX_ALLOC_HOLD")) sleep(atoi(getenv("PMIX_ALLOC_HOLD")));  /* for squeue in the script */
    sleep(1);

    /* REACQUIRE what was lent (the expansion path) */
    infos_init(&in, 1);
    infos_add(&in, PMIX_ALLOC_ID, release_id, PMIX_STRING);
    rc = alloc_req(PMIX_ALLOC_REAQUIRE, &in, &res, &nres);
    infos_free(&in, 1);
    CHECK(rc == PMIX_SUCCESS, "REACQUIRE %s -> %s %s", release_id, PMIx_Error_string(rc),
          str_of(res, nres, PMIX_EVENT_TEXT_MESSAGE));
    CHECK(count_nodes(str_of(res, nres, PMIX_ALLOCATED_NODELIST)) == 4, "4 nodes again: %s",
          str_of(res, nres, PMIX_ALLOCATED_NODELIST));
    printf("NODELIST reacquired %s\n", str_of(res, nres, PMIX_ALLOCATED_NODELIST));
    fflush(stdout);
    if (res) PMIX_INFO_FREE(res, nres);
    infos_init(&in, 1);
    infos_add(&in, PMIX_ALLOC_ID, release_id, PMIX_STRING);
    rc = alloc_req(PMIX_ALLOC_REAQUIRE, &in, &res, &nres);
    infos_free(&in, 1);
    CHECK(rc == PMIX_ERR_NOT_FOUND, "a second REACQUIRE of %s -> %s", release_id, PMIx_Error_string(rc));
    if (res) PMIX_INFO_FREE(res, nres);

    /* Another RELEASE of the resized job (Slurm 22.05 needs slurmdbd for it: without, a clear
     * "DB index is being set" answer). */
    infos_init(&in, 1);
    infos_add(&in, PMIX_ALLOC_NUM_NODES, &one, PMIX_UINT64);
    rc = alloc_req(PMIX_ALLOC_RELEASE, &in, &res, &nres);
    infos_free(&in, 1);
    const char *why = str_of(res, nres, PMIX_EVENT_TEXT_MESSAGE);
    CHECK(rc == PMIX_SUCCESS || strstr(why, "db_index") != NULL, "second RELEASE -> %s %s", PMIx_Error_string(rc), why);
    printf("SECOND_RELEASE %s %s\n", PMIx_Error_string(rc), rc == PMIX_SUCCESS ? str_of(res, nres, PMIX_ALLOCATED_NODELIST) : why);
    if (res) PMIX_INFO_FREE(res, nres);
    return 0;
}

static int run_time(int expect_ok) {
    register_alloc_event();
    uint32_t secs = 600;
    infos_t in;
    infos_init(&in, 1);
    infos_add(&in, PMIX_ALLOC_TIME, &secs, PMIX_UINT32);
    pmix_info_t *res = NULL;
    size_t nres = 0;
    pmix_status_t rc = alloc_req(PMIX_ALLOC_EXTEND, &in, &res, &nres);
    infos_free(&in, 1);
    if (expect_ok) {
        const pmix_info_t *t = find(res, nres, PMIX_ALLOC_TIME);
        CHECK(rc == PMIX_SUCCESS, "EXTEND time by 600 s -> %s", PMIx_Error_string(rc));
        CHECK(t && t->value.data.uint32 > 600, "new limit %u s", t ? t->value.data.uint32 : 0);
        printf("TIMELIMIT %u\n", t ? t->value.data.uint32 : 0);
    } else if (getenv("PMIX_ALLOC_EXPECT_UNREACH")) {
        CHECK(rc == PMIX_ERR_UNREACH, "EXTEND time with slurmctld stopped -> %s: %s", PMIx_Error_string(rc),
              str_of(res, nres, PMIX_EVENT_TEXT_MESSAGE));
        printf("UNREACH %s\n", str_of(res, nres, PMIX_EVENT_TEXT_MESSAGE));
    } else {
        CHECK(rc == PMIX_ERR_NO_PERMISSIONS, "EXTEND time by 600 s refused -> %s", PMIx_Error_string(rc));
        const char *why = str_of(res, nres, PMIX_EVENT_TEXT_MESSAGE);
        CHECK(strstr(why, "Access/permission denied") != NULL, "with Slurm's reason: %s", why);
        printf("REFUSED %s\n", why);
        CHECK(wait_events(1, 10) && strstr(ev_last_text, "denied"), "the completion event tells it too: %s",
              ev_last_text);
    }
    if (res) PMIX_INFO_FREE(res, nres);
    return 0;
}

/* --- the proposal's example ----------------------------------------------------------------- */

static int run_proposal(void) {
    pmix_info_t *res = NULL;
    size_t nres = 0;
    pmix_status_t rc;
    if (self.rank == 1) register_alloc_event();
    CHECK_RC(PMIX_SUCCESS, PMIx_Fence(NULL, 0, NULL, 0));
    if (self.rank == 0) {
        uint64_t one = 1;
        infos_t in;
        infos_init(&in, 2);
        infos_add(&in, PMIX_ALLOC_NUM_NODES, &one, PMIX_UINT64);
        infos_add(&in, PMIX_ALLOC_REQ_ID, "proposal", PMIX_STRING);
        nb_result_t r = {PMIX_ERROR, 0, ""};
        rc = PMIx_Allocation_request_nb(PMIX_ALLOC_NEW, in.info, in.n, nb_cb, &r);
        infos_free(&in, 2);
        CHECK(rc == PMIX_SUCCESS, "rank 0: NEW submitted -> %s", PMIx_Error_string(rc));
        CHECK(wait_nb(&r, 60) && r.status == PMIX_SUCCESS, "rank 0: allocation granted (%s)",
              PMIx_Error_string(r.status));
    } else if (self.rank == 1) {
        CHECK(wait_events(1, 60), "rank 1: PMIX_NOTIFY_ALLOC_COMPLETE arrived for %s", ev_last_id);
    } else {
        char line[512] = "";
        for (int i = 0; i < 60; ++i) {
            rc = query1(PMIX_QUERY_ALLOC_STATUS, PMIX_ALLOC_REQ_ID, "proposal", &res, &nres);
            snprintf(line, sizeof(line), "%s", rc == PMIX_SUCCESS ? str_of(res, nres, PMIX_QUERY_ALLOC_STATUS) : "");
            if (res) PMIX_INFO_FREE(res, nres);
            if (strstr(line, "granted")) break;
            usleep(200000);
        }
        CHECK(strstr(line, "granted") != NULL, "rank %u: polled the status: %s", self.rank, line);
    }
    CHECK_RC(PMIX_SUCCESS, PMIx_Fence(NULL, 0, NULL, 0));
    if (self.rank == 0) {
        /* give the allocation back */
        rc = query1(PMIX_QUERY_ALLOC_STATUS, PMIX_ALLOC_REQ_ID, "proposal", &res, &nres);
        char id[128] = "";
        sscanf(str_of(res, nres, PMIX_QUERY_ALLOC_STATUS), "%127s", id);
        if (res) PMIX_INFO_FREE(res, nres);
        infos_t in;
        infos_init(&in, 1);
        infos_add(&in, PMIX_ALLOC_ID, id, PMIX_STRING);
        rc = alloc_req(PMIX_ALLOC_RELEASE, &in, &res, &nres);
        infos_free(&in, 1);
        CHECK(rc == PMIX_SUCCESS, "rank 0: released %s -> %s", id, PMIx_Error_string(rc));
        if (res) PMIX_INFO_FREE(res, nres);
    }
    return 0;
}

/* EXTEND by `n` nodes; prints "NODELIST <tag> <all>" and checks n were added */
static int extend_by(uint64_t n, const char *tag, char *all, size_t all_size) {
    pmix_info_t *res = NULL;
    size_t nres = 0;
    infos_t in;
    infos_init(&in, 1);
    PMIX_INFO_REQUIRED(infos_add(&in, PMIX_ALLOC_NUM_NODES, &n, PMIX_UINT64));
    double t0 = now_ms();
    pmix_status_t rc = alloc_req(PMIX_ALLOC_EXTEND, &in, &res, &nres);
    printf("TIMING %s %.0f ms\n", tag, now_ms() - t0);
    infos_free(&in, 1);
    CHECK(rc == PMIX_SUCCESS, "%s: EXTEND by %lu -> %s %s", tag, (unsigned long)n, PMIx_Error_string(rc),
          str_of(res, nres, PMIX_EVENT_TEXT_MESSAGE));
    const char *added = str_of(res, nres, PMIX_ALLOC_NODE_LIST);
    CHECK(count_nodes(added) == (int)n, "%s: %lu node(s) added: '%s'", tag, (unsigned long)n, added);
    snprintf(all, all_size, "%s", str_of(res, nres, PMIX_ALLOCATED_NODELIST));
    printf("NODELIST %s %s added %s\n", tag, all, added);
    fflush(stdout);
    if (res) PMIX_INFO_FREE(res, nres);
    return rc == PMIX_SUCCESS ? 0 : -1;
}

static int run_cycle(void) {
    pmix_info_t *res = NULL;
    size_t nres = 0;
    pmix_status_t rc;
    infos_t in;
    char all[256] = "";
    /* rank 0 asks; the others wait for it */
    if (self.rank != 0) {
        PMIx_Fence(NULL, 0, NULL, 0);
        return 0;
    }
    const int base = getenv("SLURM_JOB_NUM_NODES") ? atoi(getenv("SLURM_JOB_NUM_NODES")) : 2;
    if (extend_by(1, "grow1", all, sizeof(all)) != 0) goto out;
    CHECK(count_nodes(all) == base + 1, "grow1: %d nodes: %s", base + 1, all);

    uint64_t one = 1;
    uint32_t lease = 600;
    infos_init(&in, 2);
    infos_add(&in, PMIX_ALLOC_NUM_NODES, &one, PMIX_UINT64);
    infos_add(&in, PMIX_ALLOC_TIME, &lease, PMIX_UINT32);
    double t0 = now_ms();
    rc = alloc_req(PMIX_ALLOC_RELEASE, &in, &res, &nres);
    printf("TIMING shrink1 %.0f ms\n", now_ms() - t0);
    infos_free(&in, 2);
    CHECK(rc == PMIX_SUCCESS, "shrink: RELEASE 1 -> %s %s", PMIx_Error_string(rc), str_of(res, nres, PMIX_EVENT_TEXT_MESSAGE));
    char release_id[128] = "";
    snprintf(release_id, sizeof(release_id), "%s", str_of(res, nres, PMIX_ALLOC_ID));
    CHECK(count_nodes(str_of(res, nres, PMIX_ALLOCATED_NODELIST)) == base, "shrink: %d nodes kept: %s", base,
          str_of(res, nres, PMIX_ALLOCATED_NODELIST));
    printf("NODELIST shrink %s released %s\n", str_of(res, nres, PMIX_ALLOCATED_NODELIST),
           str_of(res, nres, PMIX_ALLOC_NODE_LIST));
    if (res) PMIX_INFO_FREE(res, nres);

    infos_init(&in, 1);
    infos_add(&in, PMIX_ALLOC_ID, release_id, PMIX_STRING);
    t0 = now_ms();
    rc = alloc_req(PMIX_ALLOC_REAQUIRE, &in, &res, &nres);
    printf("TIMING reacquire1 %.0f ms\n", now_ms() - t0);
    infos_free(&in, 1);
    CHECK(rc == PMIX_SUCCESS, "reacquire %s -> %s %s", release_id, PMIx_Error_string(rc),
          str_of(res, nres, PMIX_EVENT_TEXT_MESSAGE));
    CHECK(count_nodes(str_of(res, nres, PMIX_ALLOCATED_NODELIST)) == base + 1, "reacquire: %d nodes: %s", base + 1,
          str_of(res, nres, PMIX_ALLOCATED_NODELIST));
    printf("NODELIST reacquire %s\n", str_of(res, nres, PMIX_ALLOCATED_NODELIST));
    if (res) PMIX_INFO_FREE(res, nres);

    if (extend_by(1, "grow2", all, sizeof(all)) != 0) goto out;
    CHECK(count_nodes(all) == base + 2, "grow2: %d nodes: %s", base + 2, all);
    printf("CYCLE_NODES %s\n", all);
out:
    fflush(stdout);
    PMIx_Fence(NULL, 0, NULL, 0);
    return 0;
}

static int run_new(int keep, int hold) {
    pmix_info_t *res = NULL;
    size_t nres = 0;
    infos_t in;
    uint64_t one = 1;
    uint32_t secs = getenv("PMIX_ALLOC_SECS") ? (uint32_t)atoi(getenv("PMIX_ALLOC_SECS")) : 0;
    bool yes = true;
    infos_init(&in, 3);
    infos_add(&in, PMIX_ALLOC_NUM_NODES, &one, PMIX_UINT64);
    if (secs) infos_add(&in, PMIX_ALLOC_TIME, &secs, PMIX_UINT32);
    if (keep) infos_add(&in, "pmixcpp.alloc.keep", &yes, PMIX_BOOL);
    double t0 = now_ms();
    pmix_status_t rc = alloc_req(PMIX_ALLOC_NEW, &in, &res, &nres);
    printf("TIMING new %.0f ms\n", now_ms() - t0);
    infos_free(&in, 3);
    CHECK(rc == PMIX_SUCCESS, "NEW of 1 node -> %s %s", PMIx_Error_string(rc), str_of(res, nres, PMIX_EVENT_TEXT_MESSAGE));
    const pmix_info_t *t = find(res, nres, PMIX_ALLOC_TIME);
    uint32_t granted = t && t->value.type == PMIX_UINT32 ? t->value.data.uint32 : 0;
    CHECK(granted > 0, "the allocation has a time limit (PMIX_ALLOC_TIME %u s)", granted);
    if (secs) CHECK(granted <= secs, "no longer than asked: %u <= %u", granted, secs);
    char id[128] = "";
    snprintf(id, sizeof(id), "%s", str_of(res, nres, PMIX_ALLOC_ID));
    const char *jobid = str_of(res, nres, PMIX_JOBID);
    CHECK(atoi(jobid) > 0 && strspn(jobid, "0123456789") == strlen(jobid), "PMIX_JOBID is a Slurm job id: '%s'", jobid);
    printf("ALLOC new %s %s %s %u\n", id, jobid, str_of(res, nres, PMIX_ALLOC_NODE_LIST), granted);
    fflush(stdout);
    if (res) PMIX_INFO_FREE(res, nres);
    /* listed among the requester's allocations */
    rc = query1(PMIX_QUERY_ALLOC_STATUS, NULL, NULL, &res, &nres);
    const char *list = str_of(res, nres, PMIX_QUERY_ALLOC_STATUS);
    CHECK(rc == PMIX_SUCCESS && strstr(list, id) && strstr(list, "granted"), "listed: %s", list);
    printf("LISTED %s\n", list);
    fflush(stdout);
    if (res) PMIX_INFO_FREE(res, nres);
    if (hold) {
        printf("HOLDING\n");
        fflush(stdout);
        sleep(300);
    }
    return 0;
}

static int run_refuse(void) {
    pmix_info_t *res = NULL;
    size_t nres = 0;
    infos_t in;
    const char *dir = getenv("PMIX_ALLOC_DIR") ? getenv("PMIX_ALLOC_DIR") : "new";
    uint64_t n = getenv("PMIX_ALLOC_NODES") ? (uint64_t)atoi(getenv("PMIX_ALLOC_NODES")) : 1;
    const char *queue = getenv("PMIX_ALLOC_QUEUE");
    infos_init(&in, 2);
    infos_add(&in, PMIX_ALLOC_NUM_NODES, &n, PMIX_UINT64);
    if (queue) infos_add(&in, PMIX_ALLOC_QUEUE, queue, PMIX_STRING);
    double t0 = now_ms();
    pmix_status_t rc = alloc_req(strcmp(dir, "extend") == 0 ? PMIX_ALLOC_EXTEND : PMIX_ALLOC_NEW, &in, &res, &nres);
    printf("TIMING refuse %.0f ms\n", now_ms() - t0);
    infos_free(&in, 2);
    CHECK(rc != PMIX_SUCCESS, "%s of %lu node(s)%s%s refused -> %s", dir, (unsigned long)n, queue ? " in " : "",
          queue ? queue : "", PMIx_Error_string(rc));
    printf("REFUSED %s %s\n", PMIx_Error_string(rc), str_of(res, nres, PMIX_EVENT_TEXT_MESSAGE));
    fflush(stdout);
    if (res) PMIX_INFO_FREE(res, nres);
    return 0;
}

static int run_psets(void) {
    char *keys[] = {PMIX_QUERY_PSET_NAMES, NULL};
    pmix_query_t q;
    memset(&q, 0, sizeof(q));
    q.keys = keys;
    pmix_info_t *res = NULL;
    size_t nres = 0, n = 0;
    pmix_status_t rc = PMIx_Query_info(&q, 1, &res, &nres);
    CHECK(rc == PMIX_SUCCESS, "PMIX_QUERY_PSET_NAMES -> %s", PMIx_Error_string(rc));
    char *names = strdup(rc == PMIX_SUCCESS ? str_of(res, nres, PMIX_QUERY_PSET_NAMES) : "");
    if (res) PMIX_INFO_FREE(res, nres);
    for (char *save = NULL, *name = strtok_r(names, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
        pmix_query_t m;
        char *mkeys[] = {PMIX_QUERY_PSET_MEMBERSHIP, NULL};
        pmix_info_t qual;
        memset(&m, 0, sizeof(m));
        m.keys = mkeys;
        PMIX_INFO_LOAD(&qual, PMIX_PSET_NAME, name, PMIX_STRING);
        m.qualifiers = &qual;
        m.nqual = 1;
        long members = -1;
        if (PMIx_Query_info(&m, 1, &res, &nres) == PMIX_SUCCESS) {
            const pmix_info_t *mi = find(res, nres, PMIX_QUERY_PSET_MEMBERSHIP);
            if (mi && mi->value.type == PMIX_DATA_ARRAY) members = (long)mi->value.data.darray->size;
            PMIX_INFO_FREE(res, nres);
        }
        PMIX_INFO_DESTRUCT(&qual);
        printf("PSET %s %ld\n", name, members);
        ++n;
    }
    free(names);
    printf("PSETS %zu\n", n);
    fflush(stdout);
    return 0;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "queries";
    pmix_status_t rc = PMIx_Init(&self, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "PMIx_Init: %s\n", PMIx_Error_string(rc));
        return 2;
    }
    ptest_rank = (int)self.rank;
    if (getenv("PMIX_ALLOC_WAIT")) sleep(atoi(getenv("PMIX_ALLOC_WAIT")));  /* lets a script stop slurmctld first */
    if (strcmp(mode, "queries") == 0)
        run_queries();
    else if (strcmp(mode, "grow") == 0)
        run_grow();
    else if (strcmp(mode, "shrink") == 0)
        run_shrink();
    else if (strcmp(mode, "time-ok") == 0)
        run_time(1);
    else if (strcmp(mode, "time-denied") == 0)
        run_time(0);
    else if (strcmp(mode, "proposal") == 0)
        run_proposal();
    else if (strcmp(mode, "cycle") == 0)
        run_cycle();
    else if (strcmp(mode, "new-own") == 0)
        run_new(0, 0);
    else if (strcmp(mode, "new-keep") == 0)
        run_new(1, 0);
    else if (strcmp(mode, "new-hold") == 0)
        run_new(0, 1);
    else if (strcmp(mode, "refuse") == 0)
        run_refuse();
    else if (strcmp(mode, "psets") == 0)
        run_psets();
    else
        CHECK(0, "unknown mode %s", mode);
    PMIx_Finalize(NULL, 0);
    return ptest_exit();
}
