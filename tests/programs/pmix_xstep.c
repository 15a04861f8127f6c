/* Two steps of one job talking after PMIx_Connect (tests/integration/t-xstep.sh):
 *
 *   pmix_xstep A|B <tag> [rounds]   (started at the same time, A first)
 *
 * 1. Both find the other's namespace (publish/lookup, session range) and connect.
 * 2. Direct modex across namespaces: every rank of A commits a NEW key "late.<rank>" after the
 *    connect (300 ms later, no fence); B's first rank on each node Gets every one of them (it
 *    waits at A's server for the commit), B fences, then B's other ranks Get them too (answered
 *    from the data B's node server kept: no second trip). A Get of a key nobody commits with
 *    PMIX_TIMEOUT 2 fails with PMIX_ERR_TIMEOUT within 5 s; one of a namespace that is no step of the
 *    job with PMIX_ERR_NOT_FOUND at once.
 * 3. Events: A's rank 0 notifies range SESSION (every rank of both steps runs its handler, the
 *    source being A:0), CUSTOM naming B:1 (only B's rank 1), NAMESPACE (none of B), and a SESSION
 *    marker; B checks what arrived.
 * 4. `rounds` rounds of latency: A's rank 1 commits a new key, both steps fence; A's rank 0 and
 *    B's rank 0 time a Get of it (same step across nodes / other step); A's rank 0 notifies range
 *    SESSION with its clock, A's rank 1 (other node) and B's rank 0 (other step) print the delay.
 *    Lines: XS-GET-MS same|cross <ms>, XS-EVENT-MS same|cross <ms>.
 * 5. A ends; B's Gets of A's procs then fail cleanly (PMIX_ERR_NOT_FOUND, at once). */
#include <pmix.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "ptest.h"

enum { X_SESSION, X_CUSTOM, X_NS, X_MARK, X_LAT, X_N };
static const pmix_status_t xcodes[X_N] = {-5201, -5202, -5203, -5204, -5205};
static atomic_int xcount[X_N];
static atomic_int bad_source;
static char a_ns[PMIX_MAX_NSLEN + 1];
static double lat_ms[64];

static pmix_proc_t me;

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}
static uint64_t wall_ns(void) {  /* one host: every virtual node shares this clock */
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void handler(size_t ref, pmix_status_t st, const pmix_proc_t *src, pmix_info_t info[], size_t ni,
                    pmix_info_t *results, size_t nres, pmix_event_notification_cbfunc_fn_t cb, void *cbd) {
    for (int i = 0; i < X_N; ++i) {
        if (xcodes[i] != st) continue;
        if (!src || strcmp(src->nspace, a_ns) != 0 || src->rank != 0) atomic_fetch_add(&bad_source, 1);
        if (i == X_LAT) {
            for (size_t k = 0; k < ni; ++k)
                if (strcmp(info[k].key, "xs.t0") == 0 && info[k].value.type == PMIX_UINT64) {
                    int n = atomic_load(&xcount[X_LAT]);
                    if (n < 64) lat_ms[n] = (double)(wall_ns() - info[k].value.data.uint64) / 1e6;
                }
        }
        atomic_fetch_add(&xcount[i], 1);
    }
    cb(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbd);
}

static volatile int reg_done;
static void reg_cb(pmix_status_t st, size_t ref, void *cbdata) { reg_done = 1; }

static int lookup_nspace(const char *key, char *out, size_t len) {
    pmix_pdata_t pd;
    pmix_info_t w[2];
    bool t = true;
    int sec = 60;
    PMIX_PDATA_CONSTRUCT(&pd);
    PMIX_LOAD_KEY(pd.key, key);
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
    PMIx_Info_load(&i[0], key, value, PMIX_STRING);
    PMIx_Info_load(&i[1], PMIX_PERSISTENCE, &per, PMIX_PERSIST);
    return PMIx_Publish(i, 2);
}

static pmix_status_t get_str(const char *ns, pmix_rank_t r, const char *key, int timeout, char *out, size_t len,
                             double *ms) {
    pmix_proc_t p;
    pmix_value_t *v = NULL;
    pmix_info_t to;
    PMIX_LOAD_PROCID(&p, ns, r);
    PMIx_Info_load(&to, PMIX_TIMEOUT, &timeout, PMIX_INT);
    double t0 = now_ms();
    pmix_status_t rc = PMIx_Get(&p, key, &to, 1, &v);
    if (ms) *ms = now_ms() - t0;
    if (out) out[0] = '\0';
    if (rc == PMIX_SUCCESS && v && v->type == PMIX_STRING && out) snprintf(out, len, "%s", v->data.string);
    if (v) PMIX_VALUE_RELEASE(v);
    return rc;
}

static void put_str(const char *key, const char *val) {
    pmix_value_t v;
    v.type = PMIX_STRING;
    v.data.string = (char *)val;
    PMIx_Put(PMIX_GLOBAL, key, &v);
    PMIx_Commit();
}

static pmix_status_t fence_both(pmix_proc_t set[2]) {
    pmix_info_t to;
    int sec = 60;
    PMIx_Info_load(&to, PMIX_TIMEOUT, &sec, PMIX_INT);
    return PMIx_Fence(set, 2, &to, 1);
}

static void notify(int code, pmix_data_range_t range, pmix_info_t *info, size_t ninfo) {
    pmix_status_t rc = PMIx_Notify_event(xcodes[code], &me, range, info, ninfo, NULL, NULL);
    CHECK(rc == PMIX_SUCCESS, "notify %d range %s -> %s", xcodes[code], PMIx_Data_range_string(range),
          PMIx_Error_string(rc));
}

static int wait_count(int code, int want, int ms) {
    for (int i = 0; i < ms && atomic_load(&xcount[code]) < want; ++i) usleep(1000);
    return atomic_load(&xcount[code]) >= want;
}

static uint32_t u32_of(const char *ns, pmix_rank_t r, const char *key) {
    pmix_proc_t p;
    pmix_value_t *v = NULL;
    uint32_t n = 0;
    PMIX_LOAD_PROCID(&p, ns, r);
    if (PMIx_Get(&p, key, NULL, 0, &v) == PMIX_SUCCESS) {
        if (v->type == PMIX_UINT32) n = v->data.uint32;
        else if (v->type == PMIX_UINT16) n = v->data.uint16;
    }
    if (v) PMIX_VALUE_RELEASE(v);
    return n;
}

int main(int argc, char **argv) {
    const char *role = argc > 1 ? argv[1] : "A";
    const char *tag = argc > 2 ? argv[2] : "t";
    int rounds = argc > 3 ? atoi(argv[3]) : 3;
    if (rounds > 60) rounds = 60;
    int is_a = strcmp(role, "A") == 0;
    if (ptest_init(&me)) return 1;
    uint32_t my_size = ptest_job_size(&me);
    uint32_t local_rank = u32_of(me.nspace, me.rank, PMIX_LOCAL_RANK);

    pmix_status_t codes[X_N];
    for (int i = 0; i < X_N; ++i) codes[i] = xcodes[i];
    reg_done = 0;
    CHECK_RC(PMIX_SUCCESS, PMIx_Register_event_handler(codes, X_N, NULL, 0, handler, reg_cb, NULL));
    while (!reg_done) usleep(100);

    char mine[128], theirs[128], other[PMIX_MAX_NSLEN + 1] = "";
    snprintf(mine, sizeof(mine), "xs.%s.%s", tag, is_a ? "a" : "b");
    snprintf(theirs, sizeof(theirs), "xs.%s.%s", tag, is_a ? "b" : "a");
    if (me.rank == 0) CHECK_RC(PMIX_SUCCESS, publish_nspace(mine, me.nspace));
    CHECK_RC(PMIX_SUCCESS, lookup_nspace(theirs, other, sizeof(other)));
    snprintf(a_ns, sizeof(a_ns), "%s", is_a ? me.nspace : other);
    pmix_proc_t set[2];
    PMIX_LOAD_PROCID(&set[0], me.nspace, PMIX_RANK_WILDCARD);
    PMIX_LOAD_PROCID(&set[1], other, PMIX_RANK_WILDCARD);
    pmix_info_t to;
    int sec = 60;
    PMIx_Info_load(&to, PMIX_TIMEOUT, &sec, PMIX_INT);
    pmix_status_t rc = PMIx_Connect(set, 2, &to, 1);
    CHECK(rc == PMIX_SUCCESS, "PMIx_Connect(%s, %s) -> %s", me.nspace, other, PMIx_Error_string(rc));
    uint32_t a_size = is_a ? my_size : u32_of(other, PMIX_RANK_WILDCARD, PMIX_JOB_SIZE);

    /* --- 2. direct modex across namespaces --- */
    if (is_a) {
        char key[64], val[PMIX_MAX_NSLEN + 32];
        usleep(300 * 1000);  /* B's Gets wait at our server for the commit */
        snprintf(key, sizeof(key), "late.%u", me.rank);
        snprintf(val, sizeof(val), "late-%s-%u", me.nspace, me.rank);
        put_str(key, val);
    } else {
        for (int phase = 0; phase < 2; ++phase) {
            if ((phase == 0) == (local_rank == 0)) {
                int good = 0;
                for (uint32_t r = 0; r < a_size; ++r) {
                    char key[64], want[PMIX_MAX_NSLEN + 32], got[PMIX_MAX_NSLEN + 32];
                    double ms = 0;
                    snprintf(key, sizeof(key), "late.%u", r);
                    snprintf(want, sizeof(want), "late-%s-%u", other, r);
                    rc = get_str(other, r, key, 30, got, sizeof(got), &ms);
                    if (rc == PMIX_SUCCESS && strcmp(got, want) == 0) ++good;
                    else CHECK(0, "Get %s of %s:%u -> %s '%s'", key, other, r, PMIx_Error_string(rc), got);
                }
                CHECK(good == (int)a_size && a_size > 0,
                      "%s: Get of the key each of the %u ranks of %s committed after the connect -> right value",
                      phase == 0 ? "first rank of the node" : "second rank of the node", a_size, other);
            }
            PMIx_Fence(NULL, 0, NULL, 0);
        }
        double ms = 0;
        rc = get_str(other, 0, "never.committed", 2, NULL, 0, &ms);
        CHECK(rc == PMIX_ERR_TIMEOUT && ms < 5000, "Get of a key nobody commits, PMIX_TIMEOUT 2 -> %s in %.0f ms",
              PMIx_Error_string(rc), ms);
        rc = get_str("slurm.999999.7", 0, "late.0", 30, NULL, 0, &ms);
        CHECK(rc == PMIX_ERR_NOT_FOUND && ms < 3000, "Get of a proc of a namespace that is no step of the job -> %s in %.0f ms",
              PMIx_Error_string(rc), ms);
    }
    CHECK_RC(PMIX_SUCCESS, fence_both(set));

    /* --- 3. events across namespaces --- */
    if (is_a && me.rank == 0) {
        pmix_info_t cr;
        pmix_proc_t b1;
        PMIX_LOAD_PROCID(&b1, other, 1);
        PMIx_Info_load(&cr, PMIX_EVENT_CUSTOM_RANGE, &b1, PMIX_PROC);
        notify(X_SESSION, PMIX_RANGE_SESSION, NULL, 0);
        notify(X_CUSTOM, PMIX_RANGE_CUSTOM, &cr, 1);
        notify(X_NS, PMIX_RANGE_NAMESPACE, NULL, 0);
        notify(X_MARK, PMIX_RANGE_SESSION, NULL, 0);
    }
    int got_mark = wait_count(X_MARK, 1, 20000) && wait_count(X_SESSION, 1, 5000);
    if (!is_a && me.rank == 1) wait_count(X_CUSTOM, 1, 5000);
    usleep(1000 * 1000);  /* anything that should not come has had its chance */
    CHECK(got_mark, "SESSION events of %s reached this rank", a_ns);
    if (!is_a) {
        CHECK(atomic_load(&xcount[X_SESSION]) == 1, "range SESSION from %s:0: handler ran %d time(s) (want 1)", a_ns,
              atomic_load(&xcount[X_SESSION]));
        int want_custom = me.rank == 1;
        CHECK(atomic_load(&xcount[X_CUSTOM]) == want_custom, "range CUSTOM naming %s:1: handler ran %d time(s) (want %d)",
              other, atomic_load(&xcount[X_CUSTOM]), want_custom);
        CHECK(atomic_load(&xcount[X_NS]) == 0, "range NAMESPACE of %s: handler ran %d time(s) here (want 0)", a_ns,
              atomic_load(&xcount[X_NS]));
    } else {
        CHECK(atomic_load(&xcount[X_NS]) == 1, "range NAMESPACE reached our own step (%d)", atomic_load(&xcount[X_NS]));
        CHECK(atomic_load(&xcount[X_CUSTOM]) == 0, "range CUSTOM naming only %s:1 stayed away (%d)", other,
              atomic_load(&xcount[X_CUSTOM]));
    }
    CHECK(atomic_load(&bad_source) == 0, "every event's source was %s:0 (%d wrong)", a_ns, atomic_load(&bad_source));
    CHECK_RC(PMIX_SUCCESS, fence_both(set));

    /* --- 4. latency rounds --- */
    for (int i = 0; i < rounds; ++i) {
        char key[64], val[128], got[128];
        snprintf(key, sizeof(key), "bench.%d", i);
        snprintf(val, sizeof(val), "bench-%d", i);
        if (is_a && me.rank == 1) put_str(key, val);
        fence_both(set);
        usleep(100 * 1000);  /* let the fence's aftermath (srun threads, wakeups) settle: 2 cores */
        double ms = 0;
        if (me.rank == 0 && a_size > 1) {
            rc = get_str(a_ns, 1, key, 10, got, sizeof(got), &ms);
            if (rc == PMIX_SUCCESS && strcmp(got, val) == 0) printf("XS-GET-MS %s %.3f\n", is_a ? "same" : "cross", ms);
            else CHECK(0, "bench Get %s -> %s", key, PMIx_Error_string(rc));
        }
        fence_both(set);
        usleep(100 * 1000);
        if (is_a && me.rank == 0) {
            pmix_info_t t;
            uint64_t w = wall_ns();
            PMIx_Info_load(&t, "xs.t0", &w, PMIX_UINT64);
            PMIx_Notify_event(xcodes[X_LAT], &me, PMIX_RANGE_SESSION, &t, 1, NULL, NULL);
        }
        if ((is_a && me.rank == 1) || (!is_a && me.rank == 0)) {
            if (wait_count(X_LAT, i + 1, 10000)) printf("XS-EVENT-MS %s %.3f\n", is_a ? "same" : "cross", lat_ms[i]);
            else CHECK(0, "latency event %d did not arrive", i);
        }
        fflush(stdout);
        fence_both(set);
    }

    /* --- 5. A ends; B's Gets of A's procs fail cleanly --- */
    if (!is_a && me.rank == 0) {
        double ms = 0;
        int i = 0;
        for (; i < 30; ++i) {
            char key[64];
            snprintf(key, sizeof(key), "gone.%d", i);
            rc = get_str(other, 0, key, 2, NULL, 0, &ms);
            if (rc != PMIX_ERR_TIMEOUT) break;
        }
        CHECK(rc == PMIX_ERR_NOT_FOUND, "Get of a proc of %s after it finished -> %s", other, PMIx_Error_string(rc));
        sleep(3);  /* A's srun is gone by now: its step ended */
        rc = get_str(other, 1, "gone.final", 10, NULL, 0, &ms);
        CHECK(rc == PMIX_ERR_NOT_FOUND && ms < 3000, "Get of a proc of the ended step %s -> %s in %.0f ms", other,
              PMIx_Error_string(rc), ms);
    }
    PMIx_Finalize(NULL, 0);
    return ptest_exit();
}
