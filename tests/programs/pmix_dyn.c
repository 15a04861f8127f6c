/* Dynamic-process calls under srun --mpi=pmixcpp (tests/integration/t-dyn.sh):
 *   pmix_dyn pubsub   (-N2 -n4): publish on one node, lookup with PMIX_WAIT on the other, _nb
 *                      forms, duplicate keys, timeouts, unpublish, FIRST_READ and PROC persistence
 *   pmix_dyn jobctl   (-N2 -n4): signal ranks across nodes, error paths, then kill rank 2 and
 *                      terminate rank 3 (ranks 0 and 1 report; 2 and 3 must never report)
 *   pmix_dyn log <tag>: PMIx_Log to stderr, syslog, Slurm's log, PMIX_LOG_ONCE, Log_nb
 *   pmix_dyn spawn <n> <markdir>: rank 0 spawns <n> copies of this program ("child" mode) as a
 *                      new step; the children check PMIX_PARENT_ID / PMIX_SPAWNED and touch
 *                      <markdir>/child.<rank>; rank 0 waits for them; error paths; timing
 *   pmix_dyn spawnmulti <markdir> [hostA hostB]: rank 0 spawns two apps in one call (2 + 3
 *                      copies, "mchild A|B"), each with its own argv, environment and directory
 *                      (and host, if given); the children check their app number, app rank,
 *                      app leader and size, the environment, directory and host of their app
 *   pmix_dyn ctlother <markdir>: rank 0 spawns 3 "victim" children (a step of their own), then
 *                      PMIx_Job_control of that other namespace: SIGUSR1 to child rank 1 only,
 *                      error paths (unknown namespace, rank out of range), then KILL of the
 *                      whole namespace; its end comes back as PMIX_EVENT_JOB_END */
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <unistd.h>

#include "ptest.h"

static pmix_proc_t me;

static void fence_all(void) {
    pmix_proc_t all;
    PMIX_PROC_LOAD(&all, me.nspace, PMIX_RANK_WILDCARD);
    pmix_status_t rc = PMIx_Fence(&all, 1, NULL, 0);
    if (rc != PMIX_SUCCESS) CHECK(0, "fence: %s", PMIx_Error_string(rc));
}

/* --- non-blocking helpers ---------------------------------------------------------------------- */
struct op_wait {
    pthread_mutex_t m;
    pthread_cond_t cv;
    bool done;
    pmix_status_t status;
    char value[256];
    pmix_rank_t owner;
};
static void op_init(struct op_wait *w) {
    memset(w, 0, sizeof(*w));
    pthread_mutex_init(&w->m, NULL);
    pthread_cond_init(&w->cv, NULL);
}
static void op_finish(struct op_wait *w, pmix_status_t st) {
    pthread_mutex_lock(&w->m);
    w->status = st;
    w->done = true;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->m);
}
static pmix_status_t op_wait_for(struct op_wait *w) {
    pthread_mutex_lock(&w->m);
    while (!w->done) pthread_cond_wait(&w->cv, &w->m);
    pthread_mutex_unlock(&w->m);
    return w->status;
}
static void op_cb(pmix_status_t st, void *cbdata) { op_finish(cbdata, st); }
static void lookup_cb(pmix_status_t st, pmix_pdata_t data[], size_t ndata, void *cbdata) {
    struct op_wait *w = cbdata;
    if (st == PMIX_SUCCESS && ndata > 0 && data[0].value.type == PMIX_STRING) {
        snprintf(w->value, sizeof(w->value), "%s", data[0].value.data.string);
        w->owner = data[0].proc.rank;
    }
    op_finish(w, st);
}

static pmix_status_t publish_str(const char *key, const char *val, int range, int persist) {
    pmix_info_t info[3];
    size_t n = 0;
    PMIX_INFO_LOAD(&info[n], key, val, PMIX_STRING);
    n++;
    if (range >= 0) {
        pmix_data_range_t r = (pmix_data_range_t)range;
        PMIX_INFO_LOAD(&info[n], PMIX_RANGE, &r, PMIX_DATA_RANGE);
        n++;
    }
    if (persist >= 0) {
        pmix_persistence_t p = (pmix_persistence_t)persist;
        PMIX_INFO_LOAD(&info[n], PMIX_PERSISTENCE, &p, PMIX_PERSIST);
        n++;
    }
    pmix_status_t rc = PMIx_Publish(info, n);
    for (size_t i = 0; i < n; ++i) PMIX_INFO_DESTRUCT(&info[i]);
    return rc;
}

/* Blocking lookup of one key; wait = PMIX_WAIT, timeout seconds (0 = none), range (-1 = the
 * default, the session: every step of the job). */
static pmix_status_t lookup_in(int range, const char *key, bool wait, int timeout, char *out, size_t outlen,
                               pmix_rank_t *owner) {
    pmix_pdata_t pd;
    PMIX_PDATA_CONSTRUCT(&pd);
    PMIX_LOAD_KEY(pd.key, key);
    pmix_info_t info[3];
    size_t n = 0;
    if (range >= 0) {
        pmix_data_range_t r = (pmix_data_range_t)range;
        PMIX_INFO_LOAD(&info[n], PMIX_RANGE, &r, PMIX_DATA_RANGE);
        n++;
    }
    if (wait) {
        PMIX_INFO_LOAD(&info[n], PMIX_WAIT, &wait, PMIX_BOOL);
        n++;
    }
    if (timeout > 0) {
        PMIX_INFO_LOAD(&info[n], PMIX_TIMEOUT, &timeout, PMIX_INT);
        n++;
    }
    pmix_status_t rc = PMIx_Lookup(&pd, 1, n ? info : NULL, n);
    if (rc == PMIX_SUCCESS && out != NULL) {
        if (pd.value.type == PMIX_STRING) snprintf(out, outlen, "%s", pd.value.data.string);
        else snprintf(out, outlen, "(type %d)", pd.value.type);
        if (owner) *owner = pd.proc.rank;
    }
    PMIX_PDATA_DESTRUCT(&pd);
    return rc;
}
/* step-scope lookup */
#define lookup_str(...) lookup_in(PMIX_RANGE_NAMESPACE, __VA_ARGS__)

static void test_pubsub(void) {
    char val[256] = "";
    pmix_rank_t owner = PMIX_RANK_UNDEF;
    char expect[320];
    snprintf(expect, sizeof(expect), "addr-of-rank-2-%s", me.nspace);

    /* 1. Lookup with PMIX_WAIT before the data exists: rank 2 (node 2) publishes after a delay. */
    fence_all();
    if (me.rank == 2) {
        usleep(300000);
        CHECK_RC(PMIX_SUCCESS, publish_str("dyn.addr", expect, PMIX_RANGE_NAMESPACE, -1));
    } else if (me.rank == 0) {
        CHECK_RC(PMIX_SUCCESS, lookup_str("dyn.addr", true, 20, val, sizeof(val), &owner));
        CHECK(strcmp(val, expect) == 0 && owner == 2, "lookup with wait (other node) got '%s' from rank %u", val, owner);
    } else if (me.rank == 3) {
        struct op_wait w;
        op_init(&w);
        pmix_info_t winfo[2];
        bool yes = true;
        PMIX_INFO_LOAD(&winfo[0], PMIX_WAIT, &yes, PMIX_BOOL);
        pmix_data_range_t ns_range = PMIX_RANGE_NAMESPACE;
        PMIX_INFO_LOAD(&winfo[1], PMIX_RANGE, &ns_range, PMIX_DATA_RANGE);
        char *keys[] = {"dyn.addr", NULL};
        CHECK_RC(PMIX_SUCCESS, PMIx_Lookup_nb(keys, winfo, 2, lookup_cb, &w));
        CHECK_RC(PMIX_SUCCESS, op_wait_for(&w));
        CHECK(strcmp(w.value, expect) == 0 && w.owner == 2, "Lookup_nb with wait (same node) got '%s'", w.value);
    }
    fence_all();

    /* 2. Error paths. */
    if (me.rank == 1) {
        CHECK_RC(PMIX_ERR_NOT_FOUND, lookup_str("dyn.never", false, 0, NULL, 0, NULL));
        CHECK_RC(PMIX_ERR_TIMEOUT, lookup_str("dyn.never", true, 1, NULL, 0, NULL));
        CHECK_RC(PMIX_ERR_NOT_FOUND, lookup_in(-1, "dyn.never", false, 0, NULL, 0, NULL));
        CHECK_RC(PMIX_ERR_TIMEOUT, lookup_in(-1, "dyn.never", true, 1, NULL, 0, NULL));
        CHECK_RC(PMIX_ERR_DUPLICATE_KEY, publish_str("dyn.addr", "other", PMIX_RANGE_NAMESPACE, -1));
        CHECK_RC(PMIX_ERR_BAD_PARAM, PMIx_Publish(NULL, 0));
        char *mine[] = {"dyn.addr", NULL};
        pmix_info_t nsr;
        pmix_data_range_t ns_range = PMIX_RANGE_NAMESPACE;
        PMIX_INFO_LOAD(&nsr, PMIX_RANGE, &ns_range, PMIX_DATA_RANGE);
        CHECK_RC(PMIX_ERR_NOT_FOUND, PMIx_Unpublish(mine, &nsr, 1));  /* not rank 1's */
    }
    fence_all();

    /* 3. Unpublish by the owner: gone for everyone. */
    if (me.rank == 2) {
        char *mine[] = {"dyn.addr", NULL};
        pmix_info_t nsr;
        pmix_data_range_t ns_range = PMIX_RANGE_NAMESPACE;
        PMIX_INFO_LOAD(&nsr, PMIX_RANGE, &ns_range, PMIX_DATA_RANGE);
        CHECK_RC(PMIX_SUCCESS, PMIx_Unpublish(mine, &nsr, 1));
    }
    fence_all();
    if (me.rank == 0) CHECK_RC(PMIX_ERR_NOT_FOUND, lookup_str("dyn.addr", false, 0, NULL, 0, NULL));
    fence_all();

    /* 4. _nb forms and FIRST_READ persistence: read once, then gone. */
    if (me.rank == 1) {
        struct op_wait w;
        op_init(&w);
        pmix_info_t info[2];
        PMIX_INFO_LOAD(&info[0], "dyn.once", "one-shot", PMIX_STRING);
        pmix_persistence_t p = PMIX_PERSIST_FIRST_READ;
        PMIX_INFO_LOAD(&info[1], PMIX_PERSISTENCE, &p, PMIX_PERSIST);
        CHECK_RC(PMIX_SUCCESS, PMIx_Publish_nb(info, 2, op_cb, &w));
        CHECK_RC(PMIX_SUCCESS, op_wait_for(&w));
    }
    fence_all();
    if (me.rank == 3) {
        CHECK_RC(PMIX_SUCCESS, lookup_in(-1, "dyn.once", false, 0, val, sizeof(val), NULL));
        CHECK(strcmp(val, "one-shot") == 0, "first read got '%s'", val);
    }
    fence_all();
    if (me.rank == 2) CHECK_RC(PMIX_ERR_NOT_FOUND, lookup_in(-1, "dyn.once", false, 0, NULL, 0, NULL));
    fence_all();

    /* 5. Persistence PROC (default) vs INDEF: rank 3 publishes both and leaves. */
    if (me.rank == 3) {
        CHECK_RC(PMIX_SUCCESS, publish_str("dyn.proc3", "gone-with-3", -1, -1));
        /* APP: outlives the publisher, not the step (nothing is left in the job's store) */
        CHECK_RC(PMIX_SUCCESS, publish_str("dyn.keep3", "stays", PMIX_RANGE_SESSION, PMIX_PERSIST_APP));
        struct op_wait w;
        op_init(&w);
        char *none[] = {"dyn.nothing", NULL};
        CHECK_RC(PMIX_SUCCESS, PMIx_Unpublish_nb(none, NULL, 0, op_cb, &w));
        CHECK_RC(PMIX_ERR_NOT_FOUND, op_wait_for(&w));
    }
    fence_all();
    if (me.rank == 0) CHECK_RC(PMIX_SUCCESS, lookup_in(-1, "dyn.proc3", false, 0, NULL, 0, NULL));
    fence_all();
}

static void test_pubsub_after(void) {
    /* rank 3 has finalized: its PROC data must disappear, the APP data stay */
    if (me.rank != 0) return;
    pmix_status_t rc = PMIX_SUCCESS;
    for (int i = 0; i < 100 && rc == PMIX_SUCCESS; ++i) {
        rc = lookup_in(-1, "dyn.proc3", false, 0, NULL, 0, NULL);
        if (rc == PMIX_SUCCESS) usleep(100000);
    }
    CHECK(rc == PMIX_ERR_NOT_FOUND, "PROC data of a finalized rank removed: %s", PMIx_Error_string(rc));
    char val[64] = "";
    CHECK_RC(PMIX_SUCCESS, lookup_in(-1, "dyn.keep3", false, 0, val, sizeof(val), NULL));
}

/* --- job control ------------------------------------------------------------------------------ */
static volatile sig_atomic_t got_usr1 = 0;
static void on_usr1(int sig) { got_usr1 = 1; }

static void test_jobctl(void) {
    signal(SIGUSR1, on_usr1);
    fence_all();
    if (me.rank == 0) {
        pmix_proc_t targets[2];
        PMIX_PROC_LOAD(&targets[0], me.nspace, 1);
        PMIX_PROC_LOAD(&targets[1], me.nspace, 3);
        pmix_info_t sig;
        int s = SIGUSR1;
        PMIX_INFO_LOAD(&sig, PMIX_JOB_CTRL_SIGNAL, &s, PMIX_INT);
        CHECK_RC(PMIX_SUCCESS, PMIx_Job_control(targets, 2, &sig, 1, NULL, NULL));
        /* error paths */
        pmix_proc_t bad;
        PMIX_PROC_LOAD(&bad, me.nspace, 99);
        CHECK_RC(PMIX_ERR_BAD_PARAM, PMIx_Job_control(&bad, 1, &sig, 1, NULL, NULL));
        PMIX_PROC_LOAD(&bad, "no.such.namespace", 0);
        CHECK_RC(PMIX_ERR_NOT_FOUND, PMIx_Job_control(&bad, 1, &sig, 1, NULL, NULL));
    }
    if (me.rank == 1 || me.rank == 3) {
        for (int i = 0; i < 200 && !got_usr1; ++i) usleep(50000);
        CHECK(got_usr1, "SIGUSR1 from rank 0 arrived");
    }
    fence_all();
    if (me.rank == 0) {
        /* kill rank 2 (other node) with the _nb form, terminate rank 3 (same) */
        struct op_wait w;
        op_init(&w);
        pmix_proc_t t2;
        PMIX_PROC_LOAD(&t2, me.nspace, 2);
        pmix_info_t kill;
        bool yes = true;
        PMIX_INFO_LOAD(&kill, PMIX_JOB_CTRL_KILL, &yes, PMIX_BOOL);
        CHECK_RC(PMIX_SUCCESS, PMIx_Job_control_nb(&t2, 1, &kill, 1, NULL, NULL));
        pmix_proc_t t3;
        PMIX_PROC_LOAD(&t3, me.nspace, 3);
        pmix_info_t term;
        PMIX_INFO_LOAD(&term, PMIX_JOB_CTRL_TERMINATE, &yes, PMIX_BOOL);
        CHECK_RC(PMIX_SUCCESS, PMIx_Job_control(&t3, 1, &term, 1, NULL, NULL));
    }
    if (me.rank == 2 || me.rank == 3) {
        signal(SIGTERM, SIG_DFL);
        sleep(60);
        CHECK(0, "rank %u survived its kill", me.rank);  /* never reached */
    }
}

/* --- log ------------------------------------------------------------------------------------- */
static void test_log(const char *tag) {
    char msg[256];
    pmix_info_t data[2], dir;
    bool yes = true;
    snprintf(msg, sizeof(msg), "dyn-log-stderr %s rank %u", tag, me.rank);
    PMIX_INFO_LOAD(&data[0], PMIX_LOG_STDERR, msg, PMIX_STRING);
    CHECK_RC(PMIX_SUCCESS, PMIx_Log(data, 1, NULL, 0));
    PMIX_INFO_DESTRUCT(&data[0]);

    snprintf(msg, sizeof(msg), "dyn-log-syslog %s rank %u", tag, me.rank);
    PMIX_INFO_LOAD(&data[0], PMIX_LOG_SYSLOG, msg, PMIX_STRING);
    int pri = 4; /* LOG_WARNING */
    PMIX_INFO_LOAD(&dir, PMIX_LOG_SYSLOG_PRI, &pri, PMIX_INT);
    CHECK_RC(PMIX_SUCCESS, PMIx_Log(data, 1, &dir, 1));
    PMIX_INFO_DESTRUCT(&data[0]);

    /* PMIX_LOG_ONCE: stderr takes it, the server (Slurm's log) must not see it */
    snprintf(msg, sizeof(msg), "dyn-log-once %s rank %u", tag, me.rank);
    PMIX_INFO_LOAD(&data[0], PMIX_LOG_STDERR, msg, PMIX_STRING);
    snprintf(msg, sizeof(msg), "dyn-log-once-second %s rank %u", tag, me.rank);
    PMIX_INFO_LOAD(&data[1], PMIX_LOG_STDERR, msg, PMIX_STRING);
    PMIX_INFO_LOAD(&dir, PMIX_LOG_ONCE, &yes, PMIX_BOOL);
    CHECK_RC(PMIX_SUCCESS, PMIx_Log(data, 2, &dir, 1));
    PMIX_INFO_DESTRUCT(&data[0]);
    PMIX_INFO_DESTRUCT(&data[1]);

    /* Slurm's log of the step via the non-blocking form */
    struct op_wait w;
    op_init(&w);
    snprintf(msg, sizeof(msg), "dyn-log-slurm %s rank %u", tag, me.rank);
    PMIX_INFO_LOAD(&data[0], PMIX_LOG_GLOBAL_SYSLOG, msg, PMIX_STRING);
    CHECK_RC(PMIX_SUCCESS, PMIx_Log_nb(data, 1, NULL, 0, op_cb, &w));
    CHECK_RC(PMIX_SUCCESS, op_wait_for(&w));
    PMIX_INFO_DESTRUCT(&data[0]);
    CHECK_RC(PMIX_ERR_BAD_PARAM, PMIx_Log(NULL, 0, NULL, 0));
    fence_all();
}

/* --- spawn ------------------------------------------------------------------------------------ */
#include <sys/stat.h>
#include <time.h>

/* <markdir>/<what>.<rank>: how children tell the spawner they got somewhere */
static void touch_mark(const char *markdir, const char *what, unsigned rank) {
    char f[512];
    snprintf(f, sizeof(f), "%s/%s.%u", markdir, what, rank);
    FILE *fp = fopen(f, "w");
    if (fp) fclose(fp);
}
/* how many of ranks 0..n-1 left <markdir>/<what>.<rank> */
static int marks(const char *markdir, const char *what, int n) {
    int seen = 0;
    for (int r = 0; r < n; ++r) {
        char f[512];
        struct stat st;
        snprintf(f, sizeof(f), "%s/%s.%d", markdir, what, r);
        if (stat(f, &st) == 0) seen++;
    }
    return seen;
}


static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void spawn_cb(pmix_status_t st, pmix_nspace_t nspace, void *cbdata) {
    struct op_wait *w = cbdata;
    if (nspace) snprintf(w->value, sizeof(w->value), "%s", nspace);
    op_finish(w, st);
}

static void test_spawn(const char *self, int n, const char *markdir) {
    if (me.rank != 0) return;
    char *argv[] = {(char *)self, "child", (char *)markdir, NULL};
    char env0[512];
    snprintf(env0, sizeof(env0), "PMIX_DYN_SPAWNED_BY=%s", me.nspace);
    char *env[] = {env0, NULL};
    pmix_app_t app;
    memset(&app, 0, sizeof(app));
    app.cmd = (char *)self;
    app.argv = argv;
    app.env = env;
    app.maxprocs = n;
    pmix_nspace_t child;
    double t0 = now_ms();
    pmix_status_t rc = PMIx_Spawn(NULL, 0, &app, 1, child);
    double t1 = now_ms();
    CHECK(rc == PMIX_SUCCESS && strncmp(child, "slurm.", 6) == 0 && strcmp(child, me.nspace) != 0,
          "PMIx_Spawn of %d -> %s, namespace %s", n, PMIx_Error_string(rc), rc == PMIX_SUCCESS ? child : "-");
    printf("SPAWN-STEP-MS %d %.1f\n", n, t1 - t0);
    /* wait for every child to have run PMIx_Init and checked its parent */
    int seen = 0;
    for (int i = 0; i < 1200 && rc == PMIX_SUCCESS && (seen = marks(markdir, "child", n)) < n; ++i) usleep(50000);
    double t2 = now_ms();
    CHECK(seen == n, "%d of %d children initialized and saw their parent", seen, n);
    printf("SPAWN-READY-MS %d %.1f\n", n, t2 - t0);
    fflush(stdout);

    /* error paths: a missing executable, a required attribute Slurm cannot honour, no apps, _nb */
    struct op_wait w;
    op_init(&w);
    pmix_app_t bad = app;
    bad.cmd = "/nonexistent/pmix_dyn_no_such_program";
    CHECK_RC(PMIX_SUCCESS, PMIx_Spawn_nb(NULL, 0, &bad, 1, spawn_cb, &w));
    CHECK_RC(PMIX_ERR_JOB_EXE_NOT_FOUND, op_wait_for(&w));
    pmix_info_t reqd;
    PMIX_INFO_LOAD(&reqd, "pmix.cpus.list", "0-3", PMIX_STRING);
    reqd.flags |= PMIX_INFO_REQD;
    CHECK_RC(PMIX_ERR_NOT_SUPPORTED, PMIx_Spawn(&reqd, 1, &app, 1, child));
    CHECK_RC(PMIX_ERR_BAD_PARAM, PMIx_Spawn(NULL, 0, NULL, 0, child));
    /* more processes than the job has CPUs: Slurm refuses the step, the caller hears it */
    pmix_app_t huge = app;
    huge.maxprocs = 100000;
    t0 = now_ms();
    CHECK_RC(PMIX_ERR_JOB_FAILED_TO_LAUNCH, PMIx_Spawn(NULL, 0, &huge, 1, child));
    printf("SPAWN-REFUSED-MS %.1f\n", now_ms() - t0);
}

static void run_child(const char *markdir) {
    pmix_value_t *val = NULL;
    pmix_proc_t wild;
    PMIX_PROC_LOAD(&wild, me.nspace, PMIX_RANK_WILDCARD);
    pmix_status_t rc = PMIx_Get(&wild, PMIX_PARENT_ID, NULL, 0, &val);
    const char *by = getenv("PMIX_DYN_SPAWNED_BY");
    int ok = rc == PMIX_SUCCESS && val && val->type == PMIX_PROC && by &&
             strcmp(val->data.proc->nspace, by) == 0 && val->data.proc->rank == 0;
    CHECK(ok, "child %s: PMIX_PARENT_ID %s:%u (spawned by %s)", me.nspace,
          ok ? val->data.proc->nspace : "?", ok ? val->data.proc->rank : 0, by ? by : "?");
    if (val) PMIX_VALUE_RELEASE(val);
    val = NULL;
    rc = PMIx_Get(&wild, PMIX_SPAWNED, NULL, 0, &val);
    CHECK(rc == PMIX_SUCCESS && val && val->type == PMIX_BOOL && val->data.flag, "child: PMIX_SPAWNED is true");
    if (val) PMIX_VALUE_RELEASE(val);
    fence_all();
    if (ptest_failures == 0) touch_mark(markdir, "child", me.rank);
}

/* --- several apps in one spawn ------------------------------------------------------------------ */
static void test_spawn_multi(const char *self, const char *markdir, const char *host_a, const char *host_b) {
    if (me.rank != 0) return;
    char *argv_a[] = {(char *)self, "mchild", "A", (char *)markdir, (char *)(host_a ? host_a : "-"), NULL};
    char *argv_b[] = {(char *)self, "mchild", "B", (char *)markdir, (char *)(host_b ? host_b : "-"), NULL};
    char *env_a[] = {"PMIX_DYN_APP=A", NULL};
    char *env_b[] = {"PMIX_DYN_APP=B", "PMIX_DYN_APP_B_ONLY=yes", NULL};
    pmix_app_t apps[2];
    memset(apps, 0, sizeof(apps));
    apps[0].cmd = (char *)self;
    apps[0].argv = argv_a;
    apps[0].env = env_a;
    apps[0].cwd = "/tmp";
    apps[0].maxprocs = 2;
    apps[1].cmd = (char *)self;
    apps[1].argv = argv_b;
    apps[1].env = env_b;
    apps[1].maxprocs = 3;
    /* app B's directory comes from its PMIX_WDIR; hosts per app when given */
    PMIX_INFO_CREATE(apps[1].info, 2);
    PMIX_INFO_LOAD(&apps[1].info[0], PMIX_WDIR, "/", PMIX_STRING);
    apps[1].ninfo = 1;
    if (host_a && host_b) {
        PMIX_INFO_CREATE(apps[0].info, 1);
        PMIX_INFO_LOAD(&apps[0].info[0], PMIX_HOST, host_a, PMIX_STRING);
        apps[0].ninfo = 1;
        PMIX_INFO_LOAD(&apps[1].info[1], PMIX_HOST, host_b, PMIX_STRING);
        apps[1].ninfo = 2;
    }
    pmix_nspace_t child;
    double t0 = now_ms();
    pmix_status_t rc = PMIx_Spawn(NULL, 0, apps, 2, child);
    CHECK(rc == PMIX_SUCCESS && strncmp(child, "slurm.", 6) == 0, "PMIx_Spawn of 2 apps (2 + 3) -> %s, namespace %s",
          PMIx_Error_string(rc), rc == PMIX_SUCCESS ? child : "-");
    int seen = 0;
    for (int i = 0; i < 1200 && rc == PMIX_SUCCESS && (seen = marks(markdir, "mchild", 5)) < 5; ++i) usleep(50000);
    CHECK(seen == 5, "%d of 5 children of the two apps passed their checks", seen);
    printf("SPAWN-MULTI-READY-MS %.1f\n", now_ms() - t0);
    /* one missing executable among the apps fails the whole spawn before anything starts */
    apps[1].cmd = "/nonexistent/pmix_dyn_no_such_program";
    CHECK_RC(PMIX_ERR_JOB_EXE_NOT_FOUND, PMIx_Spawn(NULL, 0, apps, 2, child));
    /* an app without processes */
    apps[1].cmd = (char *)self;
    apps[1].maxprocs = 0;
    CHECK_RC(PMIX_ERR_BAD_PARAM, PMIx_Spawn(NULL, 0, apps, 2, child));
    PMIX_INFO_FREE(apps[1].info, 2);
    if (apps[0].info) PMIX_INFO_FREE(apps[0].info, 1);
}

static uint32_t get_u32_of(pmix_rank_t rank, const char *key, pmix_data_type_t type) {
    pmix_proc_t p;
    PMIX_PROC_LOAD(&p, me.nspace, rank);
    pmix_value_t *val = NULL;
    uint32_t out = 0xFFFFFFFFu;
    if (PMIx_Get(&p, key, NULL, 0, &val) == PMIX_SUCCESS && val && val->type == type)
        out = type == PMIX_PROC_RANK ? val->data.rank : val->data.uint32;
    if (val) PMIX_VALUE_RELEASE(val);
    return out;
}

static void run_mchild(const char *app, const char *markdir, const char *host) {
    const int a = strcmp(app, "B") == 0;
    const uint32_t first = a ? 2 : 0, size = a ? 3 : 2;
    const char *env = getenv("PMIX_DYN_APP"), *only_b = getenv("PMIX_DYN_APP_B_ONLY");
    CHECK(env && strcmp(env, app) == 0 && (only_b != NULL) == a, "app %s: its own environment (PMIX_DYN_APP=%s, B_ONLY %s)",
          app, env ? env : "unset", only_b ? only_b : "unset");
    char cwd[512] = "";
    CHECK(getcwd(cwd, sizeof(cwd)) && strcmp(cwd, a ? "/" : "/tmp") == 0, "app %s: directory %s", app, cwd);
    CHECK(get_u32_of(me.rank, PMIX_APPNUM, PMIX_UINT32) == (uint32_t)a, "app %s: PMIX_APPNUM %u", app,
          get_u32_of(me.rank, PMIX_APPNUM, PMIX_UINT32));
    CHECK(me.rank >= first && me.rank < first + size, "app %s: rank %u in [%u, %u)", app, me.rank, first, first + size);
    CHECK(get_u32_of(me.rank, PMIX_APP_RANK, PMIX_PROC_RANK) == me.rank - first, "app %s: PMIX_APP_RANK %u", app,
          get_u32_of(me.rank, PMIX_APP_RANK, PMIX_PROC_RANK));
    CHECK(get_u32_of(me.rank, PMIX_APPLDR, PMIX_PROC_RANK) == first, "app %s: PMIX_APPLDR %u", app,
          get_u32_of(me.rank, PMIX_APPLDR, PMIX_PROC_RANK));
    CHECK(get_u32_of(me.rank, PMIX_APP_SIZE, PMIX_UINT32) == size, "app %s: PMIX_APP_SIZE %u", app,
          get_u32_of(me.rank, PMIX_APP_SIZE, PMIX_UINT32));
    CHECK(get_u32_of(PMIX_RANK_WILDCARD, PMIX_JOB_NUM_APPS, PMIX_UINT32) == 2, "PMIX_JOB_NUM_APPS 2");
    CHECK(get_u32_of(PMIX_RANK_WILDCARD, PMIX_JOB_SIZE, PMIX_UINT32) == 5, "PMIX_JOB_SIZE 5");
    /* the other app's ranks too (rank 4 is B, rank 0 is A) */
    CHECK(get_u32_of(4, PMIX_APPNUM, PMIX_UINT32) == 1 && get_u32_of(0, PMIX_APPNUM, PMIX_UINT32) == 0,
          "app numbers of ranks 0 and 4: %u %u", get_u32_of(0, PMIX_APPNUM, PMIX_UINT32),
          get_u32_of(4, PMIX_APPNUM, PMIX_UINT32));
    if (host && strcmp(host, "-") != 0) {
        pmix_proc_t self;
        PMIX_PROC_LOAD(&self, me.nspace, me.rank);
        pmix_value_t *val = NULL;
        pmix_status_t rc = PMIx_Get(&self, PMIX_HOSTNAME, NULL, 0, &val);
        CHECK(rc == PMIX_SUCCESS && val && val->type == PMIX_STRING && strcmp(val->data.string, host) == 0,
              "app %s: runs on its host %s (PMIX_HOSTNAME %s)", app, host,
              rc == PMIX_SUCCESS && val && val->type == PMIX_STRING ? val->data.string : "?");
        if (val) PMIX_VALUE_RELEASE(val);
    }
    fence_all();
    if (ptest_failures == 0) touch_mark(markdir, "mchild", me.rank);
}

/* --- job control of another namespace ----------------------------------------------------------- */
static volatile int job_end_seen = 0;
static volatile pmix_status_t job_end_term = -1;
static void job_end_cb(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[], size_t ninfo,
                       pmix_info_t results[], size_t nresults, pmix_event_notification_cbfunc_fn_t cbfunc,
                       void *cbdata) {
    (void)id; (void)source; (void)results; (void)nresults;
    for (size_t i = 0; i < ninfo; ++i)
        if (strcmp(info[i].key, PMIX_JOB_TERM_STATUS) == 0 && info[i].value.type == PMIX_STATUS)
            job_end_term = info[i].value.data.status;
    if (status == PMIX_EVENT_JOB_END) job_end_seen = 1;
    if (cbfunc) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}
static void reg_done(pmix_status_t st, size_t ref, void *cbdata) { (void)st; (void)ref; *(volatile int *)cbdata = 1; }

static pmix_status_t ctl(const pmix_proc_t *targets, size_t n, const char *key, int sig) {
    pmix_info_t d;
    if (strcmp(key, PMIX_JOB_CTRL_SIGNAL) == 0) PMIX_INFO_LOAD(&d, key, &sig, PMIX_INT);
    else {
        bool t = true;
        PMIX_INFO_LOAD(&d, key, &t, PMIX_BOOL);
    }
    pmix_status_t rc = PMIx_Job_control(targets, n, &d, 1, NULL, NULL);
    PMIX_INFO_DESTRUCT(&d);
    return rc;
}

static void test_ctl_other(const char *self, const char *markdir) {
    if (me.rank != 0) return;
    pmix_status_t code = PMIX_EVENT_JOB_END;
    volatile int registered = 0;
    PMIx_Register_event_handler(&code, 1, NULL, 0, job_end_cb, reg_done, (void *)&registered);
    for (int i = 0; i < 5000 && !registered; ++i) usleep(1000);
    char *argv[] = {(char *)self, "victim", (char *)markdir, NULL};
    pmix_app_t app;
    memset(&app, 0, sizeof(app));
    app.cmd = (char *)self;
    app.argv = argv;
    app.maxprocs = 3;
    pmix_nspace_t child;
    pmix_status_t rc = PMIx_Spawn(NULL, 0, &app, 1, child);
    CHECK(rc == PMIX_SUCCESS, "PMIx_Spawn of 3 victims -> %s (%s)", PMIx_Error_string(rc), rc == PMIX_SUCCESS ? child : "-");
    if (rc != PMIX_SUCCESS) return;
    for (int i = 0; i < 600 && marks(markdir, "ready", 3) < 3; ++i) usleep(50000);
    CHECK(marks(markdir, "ready", 3) == 3, "the 3 victims are ready");

    pmix_proc_t one;
    PMIX_PROC_LOAD(&one, child, 1);
    CHECK_RC(PMIX_SUCCESS, ctl(&one, 1, PMIX_JOB_CTRL_SIGNAL, SIGUSR1));
    for (int i = 0; i < 200 && marks(markdir, "usr1", 3) < 1; ++i) usleep(25000);
    usleep(300000);
    char f[512];
    struct stat st;
    snprintf(f, sizeof(f), "%s/usr1.1", markdir);
    CHECK(stat(f, &st) == 0 && marks(markdir, "usr1", 3) == 1, "SIGUSR1 reached child rank 1 of %s, and only it (%d marks)",
          child, marks(markdir, "usr1", 3));

    /* refusals leave everything alone */
    pmix_proc_t bad;
    PMIX_PROC_LOAD(&bad, child, 7);
    CHECK_RC(PMIX_ERR_BAD_PARAM, ctl(&bad, 1, PMIX_JOB_CTRL_SIGNAL, SIGUSR1));
    char ghost[PMIX_MAX_NSLEN + 1];
    snprintf(ghost, sizeof(ghost), "%.*s.4242", (int)(strrchr(me.nspace, '.') - me.nspace), me.nspace);
    PMIX_PROC_LOAD(&bad, ghost, PMIX_RANK_WILDCARD);
    CHECK_RC(PMIX_ERR_NOT_FOUND, ctl(&bad, 1, PMIX_JOB_CTRL_KILL, 0));
    CHECK(marks(markdir, "usr1", 3) == 1, "no other signal arrived");

    double t0 = now_ms();
    pmix_proc_t all;
    PMIX_PROC_LOAD(&all, child, PMIX_RANK_WILDCARD);
    CHECK_RC(PMIX_SUCCESS, ctl(&all, 1, PMIX_JOB_CTRL_KILL, 0));
    for (int i = 0; i < 30000 && !job_end_seen; ++i) usleep(1000);
    CHECK(job_end_seen && job_end_term != PMIX_SUCCESS, "the killed namespace %s ended (PMIX_EVENT_JOB_END, term status %s) %.0f ms after the kill",
          child, PMIx_Error_string(job_end_term), now_ms() - t0);
    CHECK(marks(markdir, "survived", 3) == 0, "no victim outlived the kill");
}


static void run_victim(const char *markdir) {
    signal(SIGUSR1, on_usr1);
    touch_mark(markdir, "ready", me.rank);
    for (int i = 0; i < 600; ++i) {  /* 60 s at most: killed long before */
        if (got_usr1 == 1) {
            got_usr1 = 2;
            touch_mark(markdir, "usr1", me.rank);
        }
        usleep(100000);
    }
    touch_mark(markdir, "survived", me.rank);
}

/* --- across steps of one job (session range) ----------------------------------------------------
 * xstep A <tag>: rank 0 publishes xstep.<tag>.a (default range), waits for xstep.<tag>.b
 * xstep B <tag>: rank 0 waits for xstep.<tag>.a, then publishes xstep.<tag>.b */
static void test_xstep(const char *role, const char *tag) {
    if (me.rank != 0) return;
    char mine[128], theirs[128], val[256] = "";
    int a = strcmp(role, "A") == 0;
    snprintf(mine, sizeof(mine), "xstep.%s.%s", tag, a ? "a" : "b");
    snprintf(theirs, sizeof(theirs), "xstep.%s.%s", tag, a ? "b" : "a");
    if (a) CHECK_RC(PMIX_SUCCESS, publish_str(mine, me.nspace, -1, -1));
    pmix_rank_t owner = PMIX_RANK_UNDEF;
    CHECK_RC(PMIX_SUCCESS, lookup_in(-1, theirs, true, 60, val, sizeof(val), &owner));
    CHECK(strncmp(val, "slurm.", 6) == 0 && strcmp(val, me.nspace) != 0,
          "step %s found the other step's key: published by %s", role, val);
    /* B leaves at once: its key must outlive it (the default, PMIX_PERSIST_PROC, would not);
     * FIRST_READ: A's lookup consumes it, so nothing is left behind */
    if (!a) CHECK_RC(PMIX_SUCCESS, publish_str(mine, me.nspace, -1, PMIX_PERSIST_FIRST_READ));
    /* the other step's key is not ours to unpublish */
    char *k[] = {theirs, NULL};
    CHECK_RC(PMIX_ERR_NOT_FOUND, PMIx_Unpublish(k, NULL, 0));
    /* a step-scope lookup does not see it */
    CHECK_RC(PMIX_ERR_NOT_FOUND, lookup_str(theirs, false, 0, NULL, 0, NULL));
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "pubsub";
    if (ptest_init(&me)) return 1;
    if (strcmp(mode, "pubsub") == 0) {
        test_pubsub();
        if (me.rank == 3) {
            PMIx_Finalize(NULL, 0);
            return ptest_exit();
        }
        test_pubsub_after();
    } else if (strcmp(mode, "jobctl") == 0) {
        test_jobctl();
    } else if (strcmp(mode, "xstep") == 0) {
        test_xstep(argc > 2 ? argv[2] : "A", argc > 3 ? argv[3] : "t");
    } else if (strcmp(mode, "spawn") == 0) {
        test_spawn(argv[0], argc > 2 ? atoi(argv[2]) : 4, argc > 3 ? argv[3] : "/tmp");
        fence_all();
    } else if (strcmp(mode, "spawnmulti") == 0) {
        test_spawn_multi(argv[0], argc > 2 ? argv[2] : "/tmp", argc > 4 ? argv[3] : NULL, argc > 4 ? argv[4] : NULL);
        fence_all();
    } else if (strcmp(mode, "ctlother") == 0) {
        test_ctl_other(argv[0], argc > 2 ? argv[2] : "/tmp");
        fence_all();
    } else if (strcmp(mode, "victim") == 0) {
        run_victim(argc > 2 ? argv[2] : "/tmp");
    } else if (strcmp(mode, "mchild") == 0) {
        run_mchild(argc > 2 ? argv[2] : "A", argc > 3 ? argv[3] : "/tmp", argc > 4 ? argv[4] : "-");
    } else if (strcmp(mode, "child") == 0) {
        run_child(argc > 2 ? argv[2] : "/tmp");
    } else if (strcmp(mode, "log") == 0) {
        test_log(argc > 2 ? argv[2] : "untagged");
    } else {
        CHECK(0, "unknown mode %s", mode);
    }
    int out = ptest_exit();
    PMIx_Finalize(NULL, 0);
    return out;
}
