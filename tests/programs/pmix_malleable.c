/* The failure paths and the two-phase answers of a malleable job (docs/malleability.md), run by
 * tests/integration/t-malleable-fail.sh: one process inside an sbatch job.
 *
 *   pmix_malleable extend N T            EXTEND by N nodes, PMIX_TIMEOUT T s (0: none)
 *   pmix_malleable new N T S             a NEW allocation of N nodes, PMIX_TIMEOUT T s (0: none),
 *                                        PMIX_ALLOC_TIME S s (0: none); granted, it prints both
 *                                        jobs' EndTime as scontrol shows them and gives it back
 *   pmix_malleable two-phase N T         the same with pmixcpp.alloc.two_phase: the call returns
 *                                        at once; the process computes until the completion
 *                                        event (PMIX_NOTIFY_ALLOC_COMPLETE) arrives; granted nodes
 *                                        are given back (RELEASE)
 *   pmix_malleable grow-spawn N T CMD [ARG...]
 *                                        PMIx_Spawn of N processes of CMD ARG... with
 *                                        pmixcpp.spawn.grow = N (and PMIX_TIMEOUT T if > 0); on
 *                                        success the grown nodes are given back once the
 *                                        children ended
 *   pmix_malleable bad                   malformed grows, each refused before Slurm is asked:
 *                                        "BAD <what> <status>"
 *   pmix_malleable bad-env               malformed grows asked through the app's environment
 *                                        (PMIXCPP_SPAWN_GROW): "BAD-ENV <what> <status>"
 *   pmix_malleable pause N               sleeps N s (lets a job's time pass)
 *   pmix_malleable child-events          (as a spawned process) the PMIX_PROCESS_SET_DEFINE events
 *                                        it gets within 10 s, once it has both of its spawn's
 *                                        sets: "CHILD-PSET-EVENT <rank> <name> <members>"
 * Each prints what the program was told:
 *   EXTEND rc <status> ms <ms> added <nodes|-> all <nodes|-> msg <Slurm's reason|->
 *   NEW rc <status> ms <ms> jobid <id|-> time <PMIX_ALLOC_TIME|-> msg <Slurm's reason|->
 *   ENDS new <EndTime> job <EndTime>
 *   FIRST rc <status> reqid <id> ms <ms>
 *   EVENT status <status> reqid <id> added <nodes|-> all <nodes|-> ms <ms> work <iterations> msg <text|->
 *   SPAWN rc <status> ms <ms> nspace <ns|->
 *   PSET <name> <members> / PSETS <count>      the server's process sets afterwards
 *   RELEASED rc <status> nodes <nodes|->
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

static const char *str_of(const pmix_info_t *info, size_t n, const char *key) {
    for (size_t i = 0; i < n; ++i)
        if (strcmp(info[i].key, key) == 0 && info[i].value.type == PMIX_STRING && info[i].value.data.string)
            return info[i].value.data.string;
    return NULL;
}

static const char *or_dash(const char *s) { return s && *s ? s : "-"; }

/* --- the completion event ---------------------------------------------------------------- */
static pthread_mutex_t ev_lock = PTHREAD_MUTEX_INITIALIZER;
static int ev_seen = 0;
static pmix_status_t ev_status = PMIX_ERROR;
static char ev_reqid[128], ev_added[1024], ev_all[1024], ev_msg[1024];

static void alloc_event(size_t ref, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[], size_t ninfo,
                        pmix_info_t *results, size_t nresults, pmix_event_notification_cbfunc_fn_t cbfunc,
                        void *cbdata) {
    (void)ref, (void)status, (void)source, (void)results, (void)nresults;
    pthread_mutex_lock(&ev_lock);
    ev_status = PMIX_ERROR;
    for (size_t i = 0; i < ninfo; ++i)
        if (strcmp(info[i].key, "pmixcpp.alloc.status") == 0 && info[i].value.type == PMIX_STATUS)
            ev_status = info[i].value.data.status;
    snprintf(ev_reqid, sizeof(ev_reqid), "%s", or_dash(str_of(info, ninfo, PMIX_ALLOC_REQ_ID)));
    snprintf(ev_added, sizeof(ev_added), "%s", or_dash(str_of(info, ninfo, PMIX_ALLOC_NODE_LIST)));
    snprintf(ev_all, sizeof(ev_all), "%s", or_dash(str_of(info, ninfo, PMIX_ALLOCATED_NODELIST)));
    snprintf(ev_msg, sizeof(ev_msg), "%s", or_dash(str_of(info, ninfo, PMIX_EVENT_TEXT_MESSAGE)));
    ++ev_seen;
    pthread_mutex_unlock(&ev_lock);
    if (cbfunc) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

/* --- the process set events of a spawned process ------------------------------------------- */
static int pset_events = 0;
static char pset_lines[4][512];

static void pset_event(size_t ref, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[], size_t ninfo,
                       pmix_info_t *results, size_t nresults, pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)ref, (void)status, (void)source, (void)results, (void)nresults;
    size_t members = 0;
    for (size_t i = 0; i < ninfo; ++i)
        if (strcmp(info[i].key, PMIX_PSET_MEMBERS) == 0 && info[i].value.type == PMIX_DATA_ARRAY && info[i].value.data.darray)
            members = info[i].value.data.darray->size;
    pthread_mutex_lock(&ev_lock);
    if (pset_events < 4)
        snprintf(pset_lines[pset_events++], sizeof(pset_lines[0]), "%s %zu", or_dash(str_of(info, ninfo, PMIX_PSET_NAME)),
                 members);
    pthread_mutex_unlock(&ev_lock);
    if (cbfunc) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static int run_child_events(void) {
    pmix_status_t code = PMIX_PROCESS_SET_DEFINE;
    pmix_status_t rc = PMIx_Register_event_handler(&code, 1, NULL, 0, pset_event, NULL, NULL);
    CHECK(rc >= 0, "register for PMIX_PROCESS_SET_DEFINE -> %d", (int)rc);
    double t0 = now_ms();
    int n = 0;
    while (n < 2 && now_ms() - t0 < 10e3) {
        usleep(10000);
        pthread_mutex_lock(&ev_lock);
        n = pset_events;
        pthread_mutex_unlock(&ev_lock);
    }
    pthread_mutex_lock(&ev_lock);
    for (int i = 0; i < pset_events; ++i) printf("CHILD-PSET-EVENT %u %s\n", self.rank, pset_lines[i]);
    pthread_mutex_unlock(&ev_lock);
    CHECK(n == 2, "spawned process %u: %d set events", self.rank, n);
    fflush(stdout);
    return 0;
}

static pmix_status_t extend(uint64_t nodes, int timeout, int two_phase, pmix_info_t **res, size_t *nres) {
    pmix_info_t in[3];
    size_t n = 0;
    PMIX_INFO_LOAD(&in[n], PMIX_ALLOC_NUM_NODES, &nodes, PMIX_UINT64);
    ++n;
    if (timeout > 0) {
        PMIX_INFO_LOAD(&in[n], PMIX_TIMEOUT, &timeout, PMIX_INT);
        ++n;
    }
    if (two_phase) {
        bool yes = true;
        PMIX_INFO_LOAD(&in[n], "pmixcpp.alloc.two_phase", &yes, PMIX_BOOL);
        ++n;
    }
    pmix_status_t rc = PMIx_Allocation_request(PMIX_ALLOC_EXTEND, in, n, res, nres);
    for (size_t i = 0; i < n; ++i) PMIX_INFO_DESTRUCT(&in[i]);
    return rc;
}

static void release(const char *nodes) {
    pmix_info_t in, *res = NULL;
    size_t nres = 0;
    PMIX_INFO_LOAD(&in, PMIX_ALLOC_NODE_LIST, nodes, PMIX_STRING);
    pmix_status_t rc = PMIx_Allocation_request(PMIX_ALLOC_RELEASE, &in, 1, &res, &nres);
    printf("RELEASED rc %s nodes %s\n", PMIx_Error_string(rc), or_dash(str_of(res, nres, PMIX_ALLOC_NODE_LIST)));
    CHECK(rc == PMIX_SUCCESS, "RELEASE %s -> %s", nodes, PMIx_Error_string(rc));
    if (res) PMIX_INFO_FREE(res, nres);
    PMIX_INFO_DESTRUCT(&in);
}

static void print_psets(void) {
    char *keys[] = {PMIX_QUERY_PSET_NAMES, NULL};
    pmix_query_t q;
    memset(&q, 0, sizeof(q));
    q.keys = keys;
    pmix_info_t *res = NULL;
    size_t nres = 0, n = 0;
    pmix_status_t rc = PMIx_Query_info(&q, 1, &res, &nres);
    char *names = strdup(rc == PMIX_SUCCESS && str_of(res, nres, PMIX_QUERY_PSET_NAMES) ? str_of(res, nres, PMIX_QUERY_PSET_NAMES) : "");
    if (res) PMIX_INFO_FREE(res, nres);
    for (char *save = NULL, *name = strtok_r(names, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
        printf("PSET %s\n", name);
        ++n;
    }
    free(names);
    printf("PSETS %zu\n", n);
}

/* 1 if the server lists the union set of the spawn `ns` */
static int pset_listed(const char *ns) {
    char *keys[] = {PMIX_QUERY_PSET_NAMES, NULL};
    pmix_query_t q;
    memset(&q, 0, sizeof(q));
    q.keys = keys;
    pmix_info_t *res = NULL;
    size_t nres = 0;
    char want[PMIX_MAX_NSLEN + 32];
    snprintf(want, sizeof(want), "pmixcpp://union/%s", ns);
    int found = 0;
    if (PMIx_Query_info(&q, 1, &res, &nres) == PMIX_SUCCESS) {
        const char *names = str_of(res, nres, PMIX_QUERY_PSET_NAMES);
        found = names && strstr(names, want) != NULL;
    }
    if (res) PMIX_INFO_FREE(res, nres);
    return found;
}

static int run_extend(uint64_t nodes, int timeout) {
    pmix_info_t *res = NULL;
    size_t nres = 0;
    double t0 = now_ms();
    pmix_status_t rc = extend(nodes, timeout, 0, &res, &nres);
    double ms = now_ms() - t0;
    const char *added = str_of(res, nres, PMIX_ALLOC_NODE_LIST);
    printf("EXTEND rc %s ms %.0f added %s all %s msg %s\n", PMIx_Error_string(rc), ms, or_dash(added),
           or_dash(str_of(res, nres, PMIX_ALLOCATED_NODELIST)), or_dash(str_of(res, nres, PMIX_EVENT_TEXT_MESSAGE)));
    fflush(stdout);
    if (rc == PMIX_SUCCESS && added) release(added);
    if (res) PMIX_INFO_FREE(res, nres);
    return 0;
}

/* scontrol's EndTime=... of a job, into `out` */
static void end_time_of(const char *jobid, char *out, size_t len) {
    char cmd[128];
    snprintf(out, len, "-");
    snprintf(cmd, sizeof(cmd), "scontrol -o show job %s", jobid);
    FILE *f = popen(cmd, "r");
    if (!f) return;
    char line[8192];
    while (fgets(line, sizeof(line), f)) {
        const char *e = strstr(line, " EndTime=");
        if (e) sscanf(e + 9, "%63s", out);
    }
    pclose(f);
}

static int run_new(uint64_t nodes, int timeout, uint32_t secs) {
    pmix_info_t in[3], *res = NULL;
    size_t n = 0, nres = 0;
    PMIX_INFO_LOAD(&in[n], PMIX_ALLOC_NUM_NODES, &nodes, PMIX_UINT64);
    ++n;
    if (timeout > 0) {
        PMIX_INFO_LOAD(&in[n], PMIX_TIMEOUT, &timeout, PMIX_INT);
        ++n;
    }
    if (secs > 0) {
        PMIX_INFO_LOAD(&in[n], PMIX_ALLOC_TIME, &secs, PMIX_UINT32);
        ++n;
    }
    double t0 = now_ms();
    pmix_status_t rc = PMIx_Allocation_request(PMIX_ALLOC_NEW, in, n, &res, &nres);
    double ms = now_ms() - t0;
    char granted_time[32] = "-";
    for (size_t i = 0; i < nres; ++i)
        if (strcmp(res[i].key, PMIX_ALLOC_TIME) == 0) snprintf(granted_time, sizeof(granted_time), "%u", res[i].value.data.uint32);
    const char *jobid = str_of(res, nres, PMIX_JOBID);
    printf("NEW rc %s ms %.0f jobid %s time %s msg %s\n", PMIx_Error_string(rc), ms, or_dash(jobid), granted_time,
           or_dash(str_of(res, nres, PMIX_EVENT_TEXT_MESSAGE)));
    fflush(stdout);
    if (rc == PMIX_SUCCESS && jobid) {
        char mine[64], theirs[64];
        end_time_of(jobid, theirs, sizeof(theirs));
        end_time_of(getenv("SLURM_JOB_ID") ? getenv("SLURM_JOB_ID") : "0", mine, sizeof(mine));
        printf("ENDS new %s job %s\n", theirs, mine);
        const char *id = str_of(res, nres, PMIX_ALLOC_ID);
        if (id) {
            pmix_info_t back, *r2 = NULL;
            size_t n2 = 0;
            PMIX_INFO_LOAD(&back, PMIX_ALLOC_ID, id, PMIX_STRING);
            rc = PMIx_Allocation_request(PMIX_ALLOC_RELEASE, &back, 1, &r2, &n2);
            printf("RELEASED rc %s nodes -\n", PMIx_Error_string(rc));
            if (r2) PMIX_INFO_FREE(r2, n2);
            PMIX_INFO_DESTRUCT(&back);
        }
    }
    if (res) PMIX_INFO_FREE(res, nres);
    for (size_t i = 0; i < n; ++i) PMIX_INFO_DESTRUCT(&in[i]);
    return 0;
}

static int run_two_phase(uint64_t nodes, int timeout) {
    pmix_status_t code = PMIX_NOTIFY_ALLOC_COMPLETE;
    pmix_status_t rc = PMIx_Register_event_handler(&code, 1, NULL, 0, alloc_event, NULL, NULL);
    CHECK(rc >= 0, "register for PMIX_NOTIFY_ALLOC_COMPLETE -> %d", (int)rc);
    pmix_info_t *res = NULL;
    size_t nres = 0;
    double t0 = now_ms();
    rc = extend(nodes, timeout, 1, &res, &nres);
    double first = now_ms() - t0;
    char reqid[128];
    snprintf(reqid, sizeof(reqid), "%s", or_dash(str_of(res, nres, PMIX_ALLOC_REQ_ID)));
    printf("FIRST rc %s reqid %s ms %.1f\n", PMIx_Error_string(rc), reqid, first);
    fflush(stdout);
    if (res) PMIX_INFO_FREE(res, nres);
    if (rc != PMIX_OPERATION_IN_PROGRESS) return 1;
    /* keep computing while Slurm works: iterations of ~1 ms of arithmetic */
    long work = 0;
    volatile double x = 0;
    int seen = 0;
    while (!seen && now_ms() - t0 < 300e3) {
        double until = now_ms() + 1;
        while (now_ms() < until) x += 1e-9;
        ++work;
        pthread_mutex_lock(&ev_lock);
        seen = ev_seen;
        pthread_mutex_unlock(&ev_lock);
    }
    double ms = now_ms() - t0;
    pthread_mutex_lock(&ev_lock);
    printf("EVENT status %s reqid %s added %s all %s ms %.0f work %ld msg %s\n", seen ? PMIx_Error_string(ev_status) : "none",
           ev_reqid[0] ? ev_reqid : "-", ev_added[0] ? ev_added : "-", ev_all[0] ? ev_all : "-", ms, work,
           ev_msg[0] ? ev_msg : "-");
    char added[1024];
    snprintf(added, sizeof(added), "%s", ev_added);
    pmix_status_t st = ev_status;
    pthread_mutex_unlock(&ev_lock);
    fflush(stdout);
    if (seen && st == PMIX_SUCCESS && strcmp(added, "-") != 0) release(added);
    return 0;
}

static int run_grow_spawn(uint64_t nodes, int timeout, char **cmd_argv, int procs) {
    pmix_info_t job[2];
    size_t nj = 0;
    PMIX_INFO_LOAD(&job[nj], "pmixcpp.spawn.grow", &nodes, PMIX_UINT64);
    ++nj;
    if (timeout > 0) {
        PMIX_INFO_LOAD(&job[nj], PMIX_TIMEOUT, &timeout, PMIX_INT);
        ++nj;
    }
    pmix_app_t app;
    PMIX_APP_CONSTRUCT(&app);
    size_t nargs = 0;
    while (cmd_argv[nargs]) ++nargs;
    app.cmd = strdup(cmd_argv[0]);
    app.argv = calloc(nargs + 1, sizeof(char *));
    for (size_t i = 0; i < nargs; ++i) app.argv[i] = strdup(cmd_argv[i]);
    app.maxprocs = procs;
    pmix_nspace_t ns = {0};
    double t0 = now_ms();
    pmix_status_t rc = PMIx_Spawn(job, nj, &app, 1, ns);
    printf("SPAWN rc %s ms %.0f nspace %s\n", PMIx_Error_string(rc), now_ms() - t0, rc == PMIX_SUCCESS ? ns : "-");
    fflush(stdout);
    PMIX_APP_DESTRUCT(&app);
    for (size_t i = 0; i < nj; ++i) PMIX_INFO_DESTRUCT(&job[i]);
    print_psets();
    if (rc == PMIX_SUCCESS) {
        /* the grown nodes: the EXTEND the spawn made is this process's request */
        char *keys[] = {PMIX_QUERY_ALLOC_STATUS, NULL};
        pmix_query_t q;
        memset(&q, 0, sizeof(q));
        q.keys = keys;
        pmix_info_t *res = NULL;
        size_t nres = 0;
        char grown[1024] = "";
        if (PMIx_Query_info(&q, 1, &res, &nres) == PMIX_SUCCESS) {
            const char *s = str_of(res, nres, PMIX_QUERY_ALLOC_STATUS);
            printf("STATUS %s\n", or_dash(s));
            const char *n = s ? strstr(s, " added=") : NULL;
            if (n) sscanf(n + 7, "%1023s", grown);
        }
        if (res) PMIX_INFO_FREE(res, nres);
        /* the children are short: once their step has ended the server deletes the sets; then
         * the nodes go back */
        double t1 = now_ms();
        int gone = 0;
        while (!gone && now_ms() - t1 < 30e3) {
            usleep(50000);
            gone = !pset_listed(ns);
        }
        printf("PSETS-DELETED %s\n", gone ? "yes" : "NO");
        if (grown[0]) release(grown);
    }
    fflush(stdout);
    return 0;
}

/* A spawn of /bin/true with these job infos; its status. */
static pmix_status_t spawn_with(pmix_info_t *job, size_t nj) {
    pmix_app_t app;
    PMIX_APP_CONSTRUCT(&app);
    app.cmd = strdup("/bin/true");
    app.argv = calloc(2, sizeof(char *));
    app.argv[0] = strdup("/bin/true");
    app.maxprocs = 1;
    pmix_nspace_t ns = {0};
    pmix_status_t rc = PMIx_Spawn(job, nj, &app, 1, ns);
    PMIX_APP_DESTRUCT(&app);
    return rc;
}

/* PMIx_Spawn of /bin/true whose app environment carries `env1` (and `env2`), app info PMIX_HOST
 * = `host` if not NULL, job info pmixcpp.spawn.grow = 2 if `attr` */
static pmix_status_t spawn_env(const char *env1, const char *env2, const char *host, int attr) {
    pmix_app_t app;
    PMIX_APP_CONSTRUCT(&app);
    app.cmd = strdup("/bin/true");
    app.argv = calloc(2, sizeof(char *));
    app.argv[0] = strdup("/bin/true");
    app.env = calloc(3, sizeof(char *));
    app.env[0] = strdup(env1);
    if (env2) app.env[1] = strdup(env2);
    app.maxprocs = 1;
    if (host) {
        PMIX_INFO_CREATE(app.info, 1);
        app.ninfo = 1;
        PMIX_INFO_LOAD(&app.info[0], PMIX_HOST, host, PMIX_STRING);
    }
    pmix_info_t job;
    uint64_t two = 2;
    PMIX_INFO_LOAD(&job, "pmixcpp.spawn.grow", &two, PMIX_UINT64);
    pmix_nspace_t ns = {0};
    pmix_status_t rc = PMIx_Spawn(attr ? &job : NULL, attr ? 1 : 0, &app, 1, ns);
    PMIX_INFO_DESTRUCT(&job);
    PMIX_APP_DESTRUCT(&app);
    return rc;
}

/* The grow through the app's environment (PMIXCPP_SPAWN_GROW), malformed: "BAD-ENV <what> <status>" */
static int run_bad_env(void) {
    static const struct {
        const char *what, *env1, *env2, *host;
        int attr;
    } cases[] = {
        {"zero", "PMIXCPP_SPAWN_GROW=0", NULL, NULL, 0},
        {"70000", "PMIXCPP_SPAWN_GROW=70000", NULL, NULL, 0},
        {"negative", "PMIXCPP_SPAWN_GROW=-1", NULL, NULL, 0},
        {"word", "PMIXCPP_SPAWN_GROW=two", NULL, NULL, 0},
        {"trailing", "PMIXCPP_SPAWN_GROW=2x", NULL, NULL, 0},
        {"empty", "PMIXCPP_SPAWN_GROW=", NULL, NULL, 0},
        {"huge", "PMIXCPP_SPAWN_GROW=99999999999999999999999", NULL, NULL, 0},
        {"twice", "PMIXCPP_SPAWN_GROW=1", "PMIXCPP_SPAWN_GROW=2", NULL, 0},
        {"with-host", "PMIXCPP_SPAWN_GROW=1", NULL, "n1", 0},
        {"with-attribute", "PMIXCPP_SPAWN_GROW=1", NULL, NULL, 1},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i)
        printf("BAD-ENV %s %s\n", cases[i].what,
               PMIx_Error_string(spawn_env(cases[i].env1, cases[i].env2, cases[i].host, cases[i].attr)));
    print_psets();
    fflush(stdout);
    return 0;
}

static int run_bad(void) {
    pmix_info_t job[2];
    uint64_t zero = 0, huge = 70000, two = 2;
    PMIX_INFO_LOAD(&job[0], "pmixcpp.spawn.grow", &zero, PMIX_UINT64);
    printf("BAD grow-0 %s\n", PMIx_Error_string(spawn_with(job, 1)));
    PMIX_INFO_DESTRUCT(&job[0]);
    PMIX_INFO_LOAD(&job[0], "pmixcpp.spawn.grow", &huge, PMIX_UINT64);
    printf("BAD grow-70000 %s\n", PMIx_Error_string(spawn_with(job, 1)));
    PMIX_INFO_DESTRUCT(&job[0]);
    PMIX_INFO_LOAD(&job[0], "pmixcpp.spawn.grow", "2", PMIX_STRING);
    printf("BAD grow-string %s\n", PMIx_Error_string(spawn_with(job, 1)));
    PMIX_INFO_DESTRUCT(&job[0]);
    PMIX_INFO_LOAD(&job[0], "pmixcpp.spawn.grow", &two, PMIX_UINT64);
    PMIX_INFO_LOAD(&job[1], PMIX_HOST, "n1", PMIX_STRING);
    printf("BAD grow-with-host %s\n", PMIx_Error_string(spawn_with(job, 2)));
    PMIX_INFO_DESTRUCT(&job[0]);
    PMIX_INFO_DESTRUCT(&job[1]);
    pmix_info_t in[2], *res = NULL;
    size_t nres = 0;
    PMIX_INFO_LOAD(&in[0], PMIX_ALLOC_NUM_NODES, &two, PMIX_UINT64);
    PMIX_INFO_LOAD(&in[1], "pmixcpp.alloc.two_phase", "yes", PMIX_STRING);
    printf("BAD two-phase-string %s\n", PMIx_Error_string(PMIx_Allocation_request(PMIX_ALLOC_EXTEND, in, 2, &res, &nres)));
    if (res) PMIX_INFO_FREE(res, nres);
    PMIX_INFO_DESTRUCT(&in[1]);
    bool yes = true;
    PMIX_INFO_LOAD(&in[1], "pmixcpp.alloc.two_phase", &yes, PMIX_BOOL);
    res = NULL, nres = 0;
    printf("BAD two-phase-cancel %s\n", PMIx_Error_string(PMIx_Allocation_request(PMIX_ALLOC_REQ_CANCEL, &in[1], 1, &res, &nres)));
    if (res) PMIX_INFO_FREE(res, nres);
    PMIX_INFO_DESTRUCT(&in[0]);
    PMIX_INFO_DESTRUCT(&in[1]);
    print_psets();
    fflush(stdout);
    return 0;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    pmix_status_t rc = PMIx_Init(&self, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "PMIx_Init: %s\n", PMIx_Error_string(rc));
        return 2;
    }
    ptest_rank = (int)self.rank;
    uint64_t nodes = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
    int timeout = argc > 3 ? atoi(argv[3]) : 0;
    if (strcmp(mode, "extend") == 0)
        run_extend(nodes, timeout);
    else if (strcmp(mode, "new") == 0)
        run_new(nodes, timeout, argc > 4 ? (uint32_t)strtoul(argv[4], NULL, 10) : 0);
    else if (strcmp(mode, "two-phase") == 0)
        run_two_phase(nodes, timeout);
    else if (strcmp(mode, "bad") == 0)
        run_bad();
    else if (strcmp(mode, "bad-env") == 0)
        run_bad_env();
    else if (strcmp(mode, "pause") == 0)
        sleep((unsigned)nodes);
    else if (strcmp(mode, "child-events") == 0)
        run_child_events();
    else if (strcmp(mode, "grow-spawn") == 0 && argc > 4)
        run_grow_spawn(nodes, timeout, argv + 4, (int)nodes);
    else
        CHECK(0, "unknown mode or missing arguments: %s", mode);
    fflush(stdout);
    PMIx_Finalize(NULL, 0);
    return ptest_exit();
}
