/* PMIx_Connect / PMIx_Disconnect between steps of one job (tests/integration/t-connect.sh).
 *
 * pair A|B <tag>: two steps started at the same time. Each learns the other's namespace through
 *   publish/lookup (session range), connects (blocking, then _nb), reads the other step's
 *   committed data, job data and hostnames, fences across both namespaces, disconnects (_nb,
 *   then blocking). Error paths: a namespace that does not exist, a set the caller is not in,
 *   a party that never joins (PMIX_TIMEOUT -> PMIX_ERR_TIMEOUT, not a hang).
 * spawn <n>: rank 0 spawns n children (mode child); parents and children connect, exchange
 *   data and disconnect. Prints SPAWN-CONNECT-MS <n> <ms> (spawn call until connected).
 * grow <k>: rank 0 grows the job by k nodes (PMIx_Allocation_request EXTEND), spawns one child
 *   per new node there (PMIX_HOST = the nodes obtained), connects and checks where the children
 *   run (their PMIX_HOSTNAME, from the connect).
 * alloc-spawn: rank 0 obtains a NEW allocation (1 node, 2 CPUs) and spawns 2 into it (PMIX_SPAWN_TARGET,
 *   then PMIX_ALLOC_ID = its PMIX_ALLOC_ID): the children (mode solo) run in that Slurm job and
 *   know their parent; PMIX_EVENT_JOB_END reaches the spawner. An unknown or given-back
 *   allocation: PMIX_ERR_BAD_PARAM. Connect across the two jobs is refused (not supported).
 * orphan <sep> <sec>: rank 0 spawns 2 children (mode solo, sleeping <sec> s), with
 *   PMIX_SPAWN_CHILD_SEP=true if <sep> is 1, and the parents exit at once.
 * solo <sec>: a spawned child: prints its parent, Slurm job and node, sleeps <sec> s.
 * mixed A|B <tag> <their size>: as pair, each side writing its own namespace as a wildcard and
 *   the other's as the list of all its ranks (the same set, written two ways). */
#include <pmix.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "ptest.h"

static pmix_proc_t me;

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static pmix_info_t timeout_info(int sec) {
    pmix_info_t i;
    PMIX_INFO_CONSTRUCT(&i);
    PMIx_Info_load(&i, PMIX_TIMEOUT, &sec, PMIX_INT);
    return i;
}

static void set_pair(pmix_proc_t p[2], const char *other) {
    PMIX_LOAD_PROCID(&p[0], me.nspace, PMIX_RANK_WILDCARD);
    PMIX_LOAD_PROCID(&p[1], other, PMIX_RANK_WILDCARD);
}

static uint32_t job_size(const char *nspace) {
    pmix_proc_t p;
    pmix_value_t *v = NULL;
    uint32_t n = 0;
    PMIX_LOAD_PROCID(&p, nspace, PMIX_RANK_WILDCARD);
    if (PMIx_Get(&p, PMIX_JOB_SIZE, NULL, 0, &v) == PMIX_SUCCESS && v->type == PMIX_UINT32) n = v->data.uint32;
    if (v) PMIX_VALUE_RELEASE(v);
    return n;
}

static void put_mine(void) {
    char val[300];
    pmix_value_t v;
    snprintf(val, sizeof(val), "%s:%u", me.nspace, me.rank);
    v.type = PMIX_STRING;
    v.data.string = val;
    CHECK_RC(PMIX_SUCCESS, PMIx_Put(PMIX_GLOBAL, "conn.val", &v));
    CHECK_RC(PMIX_SUCCESS, PMIx_Commit());
}

/* After connecting: every rank of `other` has its conn.val; its job size and hostnames. */
static void check_other(const char *other, uint32_t want_size) {
    uint32_t n = job_size(other);
    CHECK(n == want_size, "job size of the other namespace %s: %u (want %u)", other, n, want_size);
    int good = 0;
    for (uint32_t r = 0; r < n; ++r) {
        pmix_proc_t p;
        pmix_value_t *v = NULL;
        char want[300];
        PMIX_LOAD_PROCID(&p, other, r);
        snprintf(want, sizeof(want), "%s:%u", other, r);
        if (PMIx_Get(&p, "conn.val", NULL, 0, &v) == PMIX_SUCCESS && v->type == PMIX_STRING &&
            strcmp(v->data.string, want) == 0)
            ++good;
        if (v) PMIX_VALUE_RELEASE(v);
    }
    CHECK(good == (int)n && n > 0, "committed data of all %u ranks of %s read after connect (%d right)", n, other, good);
    /* job data of the other namespace, as OpenMPI asks for it (optional: answered locally) */
    pmix_proc_t p;
    pmix_value_t *v = NULL;
    pmix_info_t opt;
    bool t = true;
    PMIX_INFO_CONSTRUCT(&opt);
    PMIx_Info_load(&opt, PMIX_OPTIONAL, &t, PMIX_BOOL);
    PMIX_LOAD_PROCID(&p, other, 0);
    pmix_status_t rc = PMIx_Get(&p, PMIX_HOSTNAME, &opt, 1, &v);
    CHECK(rc == PMIX_SUCCESS && v && v->type == PMIX_STRING, "optional Get of PMIX_HOSTNAME of %s:0 -> %s (%s)", other,
          PMIx_Error_string(rc), rc == PMIX_SUCCESS && v && v->type == PMIX_STRING ? v->data.string : "-");
    if (v) PMIX_VALUE_RELEASE(v);
    v = NULL;
    rc = PMIx_Get(&p, PMIX_NODEID, NULL, 0, &v);
    CHECK(rc == PMIX_SUCCESS && v && v->type == PMIX_UINT32, "Get of PMIX_NODEID of %s:0 -> %s", other,
          PMIx_Error_string(rc));
    if (v) PMIX_VALUE_RELEASE(v);
    v = NULL;
    /* a key the other proc never committed: asked of its step (direct modex), which waits for
       the commit until the Get's timeout, as for a rank of our own step */
    pmix_info_t short_to = timeout_info(2);
    double t0 = now_ms();
    rc = PMIx_Get(&p, "conn.never", &short_to, 1, &v);
    CHECK(rc == PMIX_ERR_TIMEOUT && now_ms() - t0 < 6000, "Get of a key %s:0 never committed, PMIX_TIMEOUT 2 -> %s",
          other, PMIx_Error_string(rc));
    v = NULL;
    /* ... and an optional one is answered from what the connect brought, at once */
    t0 = now_ms();
    rc = PMIx_Get(&p, "conn.never", &opt, 1, &v);
    CHECK(rc == PMIX_ERR_NOT_FOUND && now_ms() - t0 < 1000, "optional Get of a key %s:0 never committed -> %s",
          other, PMIx_Error_string(rc));
    if (v) PMIX_VALUE_RELEASE(v);
}

static volatile int nb_done = 0;
static volatile pmix_status_t nb_status = PMIX_ERROR;
static void op_cb(pmix_status_t st, void *cbdata) {
    (void)cbdata;
    nb_status = st;
    nb_done = 1;
}
static pmix_status_t wait_nb(pmix_status_t rc) {
    if (rc != PMIX_SUCCESS) return rc;
    for (int i = 0; i < 120000 && !nb_done; ++i) usleep(1000);
    return nb_done ? nb_status : PMIX_ERR_TIMEOUT;
}

static int lookup_nspace(const char *key, char *out, size_t len) {
    pmix_pdata_t pd;
    pmix_info_t w[2];
    bool t = true;
    int sec = 60;
    PMIX_PDATA_CONSTRUCT(&pd);
    PMIX_LOAD_KEY(pd.key, key);
    PMIX_INFO_CONSTRUCT(&w[0]);
    PMIX_INFO_CONSTRUCT(&w[1]);
    PMIx_Info_load(&w[0], PMIX_WAIT, &t, PMIX_BOOL);
    PMIx_Info_load(&w[1], PMIX_TIMEOUT, &sec, PMIX_INT);
    pmix_status_t rc = PMIx_Lookup(&pd, 1, w, 2);
    if (rc == PMIX_SUCCESS && pd.value.type == PMIX_STRING) snprintf(out, len, "%s", pd.value.data.string);
    PMIX_PDATA_DESTRUCT(&pd);
    return rc;
}

static int publish_nspace(const char *key, const char *value) {
    pmix_info_t i[2];
    pmix_persistence_t per = PMIX_PERSIST_APP;
    PMIX_INFO_CONSTRUCT(&i[0]);
    PMIX_INFO_CONSTRUCT(&i[1]);
    PMIx_Info_load(&i[0], key, value, PMIX_STRING);
    PMIx_Info_load(&i[1], PMIX_PERSISTENCE, &per, PMIX_PERSIST);
    return PMIx_Publish(i, 2);
}

static void test_pair(const char *role, const char *tag) {
    int a = strcmp(role, "A") == 0;
    char mine[128], theirs[128], other[PMIX_MAX_NSLEN + 1] = "";
    snprintf(mine, sizeof(mine), "conn.%s.%s", tag, a ? "a" : "b");
    snprintf(theirs, sizeof(theirs), "conn.%s.%s", tag, a ? "b" : "a");
    put_mine();
    if (me.rank == 0) CHECK_RC(PMIX_SUCCESS, publish_nspace(mine, me.nspace));
    CHECK_RC(PMIX_SUCCESS, lookup_nspace(theirs, other, sizeof(other)));
    uint32_t their_size = 0, my_size = job_size(me.nspace);
    pmix_proc_t set[2];
    set_pair(set, other);
    pmix_info_t to = timeout_info(60);

    double t0 = now_ms();
    pmix_status_t rc = PMIx_Connect(set, 2, &to, 1);
    CHECK(rc == PMIX_SUCCESS, "PMIx_Connect(%s, %s) -> %s in %.1f ms", me.nspace, other, PMIx_Error_string(rc),
          now_ms() - t0);
    their_size = job_size(other);
    check_other(other, their_size ? their_size : 1);
    (void)my_size;

    nb_done = 0;
    CHECK_RC(PMIX_SUCCESS, wait_nb(PMIx_Connect_nb(set, 2, &to, 1, op_cb, NULL)));
    /* a fence over both namespaces (OpenMPI's MPI_Comm_disconnect is one) */
    CHECK_RC(PMIX_SUCCESS, PMIx_Fence(set, 2, &to, 1));

    /* error paths */
    pmix_proc_t ghost[2];
    PMIX_LOAD_PROCID(&ghost[0], me.nspace, PMIX_RANK_WILDCARD);
    PMIX_LOAD_PROCID(&ghost[1], "slurm.999999.7", PMIX_RANK_WILDCARD);
    t0 = now_ms();
    rc = PMIx_Connect(ghost, 2, &to, 1);
    CHECK(rc == PMIX_ERR_NOT_FOUND && now_ms() - t0 < 10000,
          "PMIx_Connect naming an unknown namespace -> %s (want PMIX_ERR_NOT_FOUND) in %.0f ms",
          PMIx_Error_string(rc), now_ms() - t0);
    pmix_proc_t not_me;
    PMIX_LOAD_PROCID(&not_me, other, PMIX_RANK_WILDCARD);
    CHECK_RC(PMIX_ERR_BAD_PARAM, PMIx_Connect(&not_me, 1, NULL, 0));
    if (!a) {
        /* A never joins this set: the timeout ends it */
        pmix_proc_t lonely[2];
        pmix_info_t short_to = timeout_info(3);
        PMIX_LOAD_PROCID(&lonely[0], me.nspace, PMIX_RANK_WILDCARD);
        PMIX_LOAD_PROCID(&lonely[1], other, 0);
        t0 = now_ms();
        rc = PMIx_Connect(lonely, 2, &short_to, 1);
        CHECK(rc == PMIX_ERR_TIMEOUT && now_ms() - t0 < 30000,
              "PMIx_Connect with a party that never joins, PMIX_TIMEOUT 3 -> %s after %.1f s (want PMIX_ERR_TIMEOUT)",
              PMIx_Error_string(rc), (now_ms() - t0) / 1e3);
    }

    nb_done = 0;
    CHECK_RC(PMIX_SUCCESS, wait_nb(PMIx_Disconnect_nb(set, 2, &to, 1, op_cb, NULL)));
    CHECK_RC(PMIX_SUCCESS, PMIx_Disconnect(set, 2, &to, 1));
}

/* PMIX_EVENT_JOB_END of the spawned namespace, seen by the spawner */
static volatile int job_end_seen = 0;
static char job_end_ns[PMIX_MAX_NSLEN + 1];
static volatile pmix_status_t job_end_term = -1;
static void job_end_cb(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[], size_t ninfo,
                       pmix_info_t results[], size_t nresults, pmix_event_notification_cbfunc_fn_t cbfunc,
                       void *cbdata) {
    (void)id; (void)source; (void)results; (void)nresults;
    if (status == PMIX_EVENT_JOB_END) {
        for (size_t i = 0; i < ninfo; ++i) {
            if (strcmp(info[i].key, PMIX_EVENT_AFFECTED_PROC) == 0 && info[i].value.type == PMIX_PROC)
                snprintf(job_end_ns, sizeof(job_end_ns), "%s", info[i].value.data.proc->nspace);
            if (strcmp(info[i].key, PMIX_JOB_TERM_STATUS) == 0 && info[i].value.type == PMIX_STATUS)
                job_end_term = info[i].value.data.status;
        }
        job_end_seen = 1;
    }
    if (cbfunc) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}
static void reg_cb(pmix_status_t st, size_t ref, void *cbdata) { (void)st; (void)ref; *(volatile int *)cbdata = 1; }

/* spawn <n>: parents (this step) and children (a new step) connect. */
static void test_spawn(const char *self, int n) {
    char child_ns[PMIX_MAX_NSLEN + 1] = "";
    char key[PMIX_MAX_NSLEN + 16];
    snprintf(key, sizeof(key), "spawned.%s", me.nspace);
    put_mine();
    if (me.rank == 0) {
        pmix_status_t code = PMIX_EVENT_JOB_END;
        volatile int registered = 0;
        PMIx_Register_event_handler(&code, 1, NULL, 0, job_end_cb, reg_cb, (void *)&registered);
        for (int i = 0; i < 5000 && !registered; ++i) usleep(1000);
    }
    double t0 = now_ms();
    if (me.rank == 0) {
        pmix_app_t app;
        char *argv[] = {(char *)self, "child", NULL};
        PMIX_APP_CONSTRUCT(&app);
        app.cmd = strdup(self);
        app.argv = argv;
        app.maxprocs = n;
        pmix_status_t rc = PMIx_Spawn(NULL, 0, &app, 1, child_ns);
        app.argv = NULL;
        free(app.cmd);
        app.cmd = NULL;
        CHECK(rc == PMIX_SUCCESS, "PMIx_Spawn of %d -> %s (%s)", n, PMIx_Error_string(rc), child_ns);
        CHECK_RC(PMIX_SUCCESS, publish_nspace(key, child_ns));
    } else {
        CHECK_RC(PMIX_SUCCESS, lookup_nspace(key, child_ns, sizeof(child_ns)));
    }
    pmix_proc_t set[2];
    set_pair(set, child_ns);
    pmix_info_t to = timeout_info(120);
    pmix_status_t rc = PMIx_Connect(set, 2, &to, 1);
    double ms = now_ms() - t0;
    CHECK(rc == PMIX_SUCCESS, "PMIx_Connect to the children %s -> %s", child_ns, PMIx_Error_string(rc));
    if (me.rank == 0) printf("SPAWN-CONNECT-MS %d %.1f\n", n, ms);
    check_other(child_ns, (uint32_t)n);
    CHECK_RC(PMIX_SUCCESS, PMIx_Disconnect(set, 2, &to, 1));
    if (me.rank == 0) {
        t0 = now_ms();
        for (int i = 0; i < 60000 && !job_end_seen; ++i) usleep(1000);
        CHECK(job_end_seen && strcmp(job_end_ns, child_ns) == 0 && job_end_term == PMIX_SUCCESS,
              "PMIX_EVENT_JOB_END for %s (affected %s, PMIX_JOB_TERM_STATUS %s) %.0f ms after the disconnect",
              child_ns, job_end_ns, PMIx_Error_string(job_end_term), now_ms() - t0);
    }
}

static const char *str_of(pmix_info_t *info, size_t n, const char *key) {
    for (size_t i = 0; i < n; ++i)
        if (strcmp(info[i].key, key) == 0 && info[i].value.type == PMIX_STRING) return info[i].value.data.string;
    return "";
}

static void test_grow(const char *self, int k) {
    if (me.rank != 0) return;
    pmix_info_t in, *res = NULL;
    size_t nres = 0;
    uint64_t nodes = (uint64_t)k;
    PMIX_INFO_CONSTRUCT(&in);
    PMIx_Info_load(&in, PMIX_ALLOC_NUM_NODES, &nodes, PMIX_UINT64);
    PMIX_INFO_REQUIRED(&in);
    double t0 = now_ms();
    pmix_status_t rc = PMIx_Allocation_request(PMIX_ALLOC_EXTEND, &in, 1, &res, &nres);
    char added[256] = "";
    snprintf(added, sizeof(added), "%s", str_of(res, nres, PMIX_ALLOC_NODE_LIST));
    CHECK(rc == PMIX_SUCCESS && added[0], "EXTEND by %d node(s) -> %s, added %s, job now on %s (%.0f ms)", k,
          PMIx_Error_string(rc), added, str_of(res, nres, PMIX_ALLOCATED_NODELIST), now_ms() - t0);
    if (res) PMIX_INFO_FREE(res, nres);
    if (rc != PMIX_SUCCESS) return;
    printf("GROWN-ONTO %s\n", added);

    /* one child per new node, there */
    pmix_app_t app;
    pmix_info_t host;
    char child_ns[PMIX_MAX_NSLEN + 1] = "";
    char *argv[] = {(char *)self, "child", "parent-rank", NULL};
    PMIX_APP_CONSTRUCT(&app);
    app.cmd = strdup(self);
    app.argv = argv;
    app.maxprocs = k;
    PMIX_INFO_CONSTRUCT(&host);
    PMIx_Info_load(&host, PMIX_HOST, added, PMIX_STRING);
    PMIX_INFO_REQUIRED(&host);
    app.info = &host;
    app.ninfo = 1;
    t0 = now_ms();
    rc = PMIx_Spawn(NULL, 0, &app, 1, child_ns);
    app.argv = NULL;
    app.info = NULL;
    app.ninfo = 0;
    free(app.cmd);
    app.cmd = NULL;
    CHECK(rc == PMIX_SUCCESS, "PMIx_Spawn of %d onto %s -> %s (%s, %.0f ms)", k, added, PMIx_Error_string(rc),
          child_ns, now_ms() - t0);
    if (rc != PMIX_SUCCESS) return;
    pmix_proc_t set[2];
    PMIX_LOAD_PROCID(&set[0], me.nspace, 0);
    PMIX_LOAD_PROCID(&set[1], child_ns, PMIX_RANK_WILDCARD);
    pmix_info_t to = timeout_info(120);
    CHECK_RC(PMIX_SUCCESS, PMIx_Connect(set, 2, &to, 1));
    int named = 0;
    for (int r = 0; r < k; ++r) {  /* the shell compares them with the nodes obtained */
        pmix_proc_t p;
        pmix_value_t *v = NULL;
        PMIX_LOAD_PROCID(&p, child_ns, r);
        if (PMIx_Get(&p, PMIX_HOSTNAME, NULL, 0, &v) == PMIX_SUCCESS && v->type == PMIX_STRING) {
            printf("CHILD %d ON %s\n", r, v->data.string);
            ++named;
        }
        if (v) PMIX_VALUE_RELEASE(v);
    }
    CHECK(named == k, "the hostnames of all %d children came with the connect", k);
    CHECK_RC(PMIX_SUCCESS, PMIx_Disconnect(set, 2, &to, 1));
}

/* mixed A|B <tag> <their size>: like pair, but each side writes its own namespace as
 * PMIX_RANK_WILDCARD and the other as the explicit list of all its ranks: the same set. */
static void test_mixed(const char *role, const char *tag, uint32_t their_size) {
    int a = strcmp(role, "A") == 0;
    char mine[128], theirs[128], other[PMIX_MAX_NSLEN + 1] = "";
    snprintf(mine, sizeof(mine), "mixed.%s.%s", tag, a ? "a" : "b");
    snprintf(theirs, sizeof(theirs), "mixed.%s.%s", tag, a ? "b" : "a");
    if (me.rank == 0) CHECK_RC(PMIX_SUCCESS, publish_nspace(mine, me.nspace));
    CHECK_RC(PMIX_SUCCESS, lookup_nspace(theirs, other, sizeof(other)));
    pmix_proc_t *set = calloc(1 + their_size, sizeof(pmix_proc_t));
    PMIX_LOAD_PROCID(&set[0], me.nspace, PMIX_RANK_WILDCARD);
    for (uint32_t r = 0; r < their_size; ++r) PMIX_LOAD_PROCID(&set[1 + r], other, r);
    pmix_info_t to = timeout_info(30);
    double t0 = now_ms();
    pmix_status_t rc = PMIx_Connect(set, 1 + their_size, &to, 1);
    CHECK(rc == PMIX_SUCCESS, "PMIx_Connect of %s:* with all %u ranks of %s listed -> %s (%.0f ms)", me.nspace,
          their_size, other, PMIx_Error_string(rc), now_ms() - t0);
    CHECK(job_size(other) == their_size, "the other step's PMIX_JOB_SIZE after connect is %u", job_size(other));
    rc = PMIx_Disconnect(set, 1 + their_size, &to, 1);
    CHECK(rc == PMIX_SUCCESS, "PMIx_Disconnect of the mixed set -> %s", PMIx_Error_string(rc));
    free(set);
}

/* Spawn n of "self solo <sec>" with the given job infos; the children's namespace in child_ns. */
static pmix_status_t spawn_solo(const char *self, int n, int sec, pmix_info_t *info, size_t ninfo, char *child_ns) {
    pmix_app_t app;
    char secs[16];
    snprintf(secs, sizeof(secs), "%d", sec);
    char *argv[] = {(char *)self, "solo", secs, NULL};
    PMIX_APP_CONSTRUCT(&app);
    app.cmd = strdup(self);
    app.argv = argv;
    app.maxprocs = n;
    child_ns[0] = '\0';
    pmix_status_t rc = PMIx_Spawn(info, ninfo, &app, 1, child_ns);
    app.argv = NULL;
    free(app.cmd);
    app.cmd = NULL;
    return rc;
}

static int wait_job_end(const char *child_ns, int seconds) {
    for (int i = 0; i < seconds * 1000 && !(job_end_seen && strcmp(job_end_ns, child_ns) == 0); ++i) usleep(1000);
    return job_end_seen && strcmp(job_end_ns, child_ns) == 0;
}

static void test_alloc_spawn(const char *self) {
    if (me.rank != 0) return;
    pmix_status_t code = PMIX_EVENT_JOB_END;
    volatile int registered = 0;
    PMIx_Register_event_handler(&code, 1, NULL, 0, job_end_cb, reg_cb, (void *)&registered);
    for (int i = 0; i < 5000 && !registered; ++i) usleep(1000);

    /* a NEW allocation of one node, 2 CPUs */
    pmix_info_t in[2], *res = NULL;
    size_t nres = 0;
    uint64_t nodes = 1, cpus = 2;
    PMIX_INFO_CONSTRUCT(&in[0]);
    PMIx_Info_load(&in[0], PMIX_ALLOC_NUM_NODES, &nodes, PMIX_UINT64);
    PMIX_INFO_REQUIRED(&in[0]);
    PMIX_INFO_CONSTRUCT(&in[1]);
    PMIx_Info_load(&in[1], PMIX_ALLOC_NUM_CPUS, &cpus, PMIX_UINT64);
    pmix_status_t rc = PMIx_Allocation_request(PMIX_ALLOC_NEW, in, 2, &res, &nres);
    char id[128] = "", jobid[32] = "";
    snprintf(id, sizeof(id), "%s", str_of(res, nres, PMIX_ALLOC_ID));
    snprintf(jobid, sizeof(jobid), "%s", str_of(res, nres, PMIX_JOBID));
    CHECK(rc == PMIX_SUCCESS && id[0] && jobid[0], "NEW allocation -> %s, PMIX_ALLOC_ID %s, job %s on %s",
          PMIx_Error_string(rc), id, jobid, str_of(res, nres, PMIX_ALLOC_NODE_LIST));
    if (res) PMIX_INFO_FREE(res, nres);
    if (rc != PMIX_SUCCESS) return;
    printf("NEW-ALLOC %s JOB %s\n", id, jobid);
    fflush(stdout);
    char prefix[64];
    snprintf(prefix, sizeof(prefix), "slurm.%s.", jobid);

    /* spawn into it: PMIX_SPAWN_TARGET, then PMIX_ALLOC_ID */
    const char *keys[] = {PMIX_SPAWN_TARGET, PMIX_ALLOC_ID};
    for (int k = 0; k < 2; ++k) {
        char child_ns[PMIX_MAX_NSLEN + 1];
        pmix_info_t tgt;
        PMIX_INFO_CONSTRUCT(&tgt);
        PMIx_Info_load(&tgt, keys[k], id, PMIX_STRING);
        PMIX_INFO_REQUIRED(&tgt);
        double t0 = now_ms();
        rc = spawn_solo(self, 2, 0, &tgt, 1, child_ns);
        CHECK(rc == PMIX_SUCCESS && strncmp(child_ns, prefix, strlen(prefix)) == 0,
              "PMIx_Spawn of 2 with %s=%s -> %s, namespace %s (a step of job %s; %.0f ms)", keys[k], id,
              PMIx_Error_string(rc), child_ns, jobid, now_ms() - t0);
        if (rc != PMIX_SUCCESS) continue;
        printf("ALLOC-CHILDREN %s\n", child_ns);
        fflush(stdout);
        int ended = wait_job_end(child_ns, 60);
        CHECK(ended && job_end_term == PMIX_SUCCESS, "PMIX_EVENT_JOB_END for %s (PMIX_JOB_TERM_STATUS %s)", child_ns,
              PMIx_Error_string(job_end_term));
        if (k == 0) {
            /* the children's job is another Slurm job: no PMIx_Connect across jobs */
            pmix_proc_t set[2];
            set_pair(set, child_ns);
            pmix_info_t to = timeout_info(10);
            t0 = now_ms();
            pmix_status_t crc = PMIx_Connect(set, 2, &to, 1);
            CHECK(crc == PMIX_ERR_NOT_FOUND && now_ms() - t0 < 8000,
                  "PMIx_Connect across two Slurm jobs is refused -> %s", PMIx_Error_string(crc));
        }
    }

    /* an allocation this step never obtained */
    char child_ns[PMIX_MAX_NSLEN + 1];
    pmix_info_t bad;
    PMIX_INFO_CONSTRUCT(&bad);
    PMIx_Info_load(&bad, PMIX_SPAWN_TARGET, "99999.0.1", PMIX_STRING);
    CHECK_RC(PMIX_ERR_BAD_PARAM, spawn_solo(self, 1, 0, &bad, 1, child_ns));

    /* given back: no longer a target */
    pmix_info_t rel;
    PMIX_INFO_CONSTRUCT(&rel);
    PMIx_Info_load(&rel, PMIX_ALLOC_ID, id, PMIX_STRING);
    res = NULL;
    nres = 0;
    CHECK_RC(PMIX_SUCCESS, PMIx_Allocation_request(PMIX_ALLOC_RELEASE, &rel, 1, &res, &nres));
    if (res) PMIX_INFO_FREE(res, nres);
    pmix_info_t tgt;
    PMIX_INFO_CONSTRUCT(&tgt);
    PMIx_Info_load(&tgt, PMIX_SPAWN_TARGET, id, PMIX_STRING);
    CHECK_RC(PMIX_ERR_BAD_PARAM, spawn_solo(self, 1, 0, &tgt, 1, child_ns));
}

static void test_orphan(const char *self, int sep, int sec) {
    if (me.rank != 0) return;
    char child_ns[PMIX_MAX_NSLEN + 1];
    pmix_info_t info;
    PMIX_INFO_CONSTRUCT(&info);
    bool flag = true;
    PMIx_Info_load(&info, PMIX_SPAWN_CHILD_SEP, &flag, PMIX_BOOL);
    pmix_status_t rc = spawn_solo(self, 2, sec, &info, sep ? 1 : 0, child_ns);
    CHECK(rc == PMIX_SUCCESS, "PMIx_Spawn of 2 sleeping %d s%s -> %s (%s)", sec,
          sep ? " with PMIX_SPAWN_CHILD_SEP" : "", PMIx_Error_string(rc), child_ns);
    printf("ORPHANS %s\n", child_ns);
    fflush(stdout);
}

static void run_solo(int sec) {
    pmix_value_t *v = NULL;
    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    pmix_status_t rc = PMIx_Get(&wild, PMIX_PARENT_ID, NULL, 0, &v);
    CHECK(rc == PMIX_SUCCESS && v && v->type == PMIX_PROC, "solo: PMIX_PARENT_ID -> %s", PMIx_Error_string(rc));
    printf("SOLO rank %u of %s parent %s:%u job %s node %s\n", me.rank, me.nspace,
           rc == PMIX_SUCCESS && v && v->type == PMIX_PROC ? v->data.proc->nspace : "?",
           rc == PMIX_SUCCESS && v && v->type == PMIX_PROC ? v->data.proc->rank : 0,
           getenv("SLURM_JOB_ID") ? getenv("SLURM_JOB_ID") : "?",
           getenv("SLURMD_NODENAME") ? getenv("SLURMD_NODENAME") : "?");
    fflush(stdout);
    if (v) PMIX_VALUE_RELEASE(v);
    if (sec > 0) sleep((unsigned)sec);
    printf("SOLO-DONE rank %u of %s\n", me.rank, me.nspace);
    fflush(stdout);
}

/* child [parent-rank]: connect with all parents (default) or with the spawning rank only */
static void run_child(int parent_rank_only) {
    pmix_value_t *v = NULL;
    pmix_proc_t wild, parent;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    pmix_status_t rc = PMIx_Get(&wild, PMIX_PARENT_ID, NULL, 0, &v);
    CHECK(rc == PMIX_SUCCESS && v && v->type == PMIX_PROC, "child: PMIX_PARENT_ID -> %s", PMIx_Error_string(rc));
    if (rc != PMIX_SUCCESS || !v || v->type != PMIX_PROC) return;
    parent = *v->data.proc;
    PMIX_VALUE_RELEASE(v);
    put_mine();
    pmix_proc_t set[2];
    set_pair(set, parent.nspace);
    if (parent_rank_only) set[1].rank = parent.rank;
    pmix_info_t to = timeout_info(120);
    CHECK_RC(PMIX_SUCCESS, PMIx_Connect(set, 2, &to, 1));
    uint32_t n = job_size(parent.nspace);
    if (!parent_rank_only) {
        check_other(parent.nspace, n ? n : 1);
    } else {
        pmix_value_t *h = NULL;
        pmix_status_t hr = PMIx_Get(&parent, PMIX_HOSTNAME, NULL, 0, &h);
        CHECK(hr == PMIX_SUCCESS, "child: the spawner's PMIX_HOSTNAME after connect -> %s", PMIx_Error_string(hr));
        if (h) PMIX_VALUE_RELEASE(h);
    }
    CHECK_RC(PMIX_SUCCESS, PMIx_Disconnect(set, 2, &to, 1));
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "pair";
    if (ptest_init(&me)) return 1;
    if (strcmp(mode, "pair") == 0) test_pair(argc > 2 ? argv[2] : "A", argc > 3 ? argv[3] : "t");
    else if (strcmp(mode, "spawn") == 0) test_spawn(argv[0], argc > 2 ? atoi(argv[2]) : 4);
    else if (strcmp(mode, "child") == 0) run_child(argc > 2 && strcmp(argv[2], "parent-rank") == 0);
    else if (strcmp(mode, "grow") == 0) test_grow(argv[0], argc > 2 ? atoi(argv[2]) : 2);
    else if (strcmp(mode, "alloc-spawn") == 0) test_alloc_spawn(argv[0]);
    else if (strcmp(mode, "mixed") == 0)
        test_mixed(argc > 2 ? argv[2] : "A", argc > 3 ? argv[3] : "t", argc > 4 ? (uint32_t)atoi(argv[4]) : 1);
    else if (strcmp(mode, "orphan") == 0)
        test_orphan(argv[0], argc > 2 ? atoi(argv[2]) : 0, argc > 3 ? atoi(argv[3]) : 300);
    else if (strcmp(mode, "solo") == 0) run_solo(argc > 2 ? atoi(argv[2]) : 0);
    else CHECK(0, "unknown mode %s", mode);
    int out = ptest_exit();
    PMIx_Finalize(NULL, 0);
    return out;
}
