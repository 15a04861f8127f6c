/* Event notification on a real step. One mode per run (argv[1]):
 *   chain    handlers in every class and position; the order the chain ran, results handed on,
 *            PMIX_EVENT_ACTION_COMPLETE, refused second FIRST/LAST (local, PMIX_RANGE_PROC_LOCAL)
 *   ranges   delivery and non-delivery across the local ranks for each range, source and
 *            affected-proc filters, non-default events, a handler registered after the event
 *   kill     the last rank kills itself with SIGKILL: the others get PMIX_ERR_PROC_ABORTED and
 *            PMIX_EVENT_PROC_TERMINATED naming it, within a second
 *   abort    rank 0 calls PMIx_Abort; the others print the PMIX_ERR_JOB_TERMINATED they got (their
 *            default handler, which prints DEFAULT-HANDLER lines, must not get it)
 *   flood    rank 0 sends N events (argv[2], default 100000) to every local rank
 *   latency  rank 0 <-> rank 1 ping-pong of events; notify -> server ack time
 *   timelimit wait (argv[2] s, default 20) for the server's PMIX_JCTRL_PREEMPT_ALERT before the
 *            job's time limit (run with srun -t 1 and SLURM_PMIXCPP_TIMELIMITALERT=57)
 *   nodedown wait (argv[2] s, default 60) for PMIX_ERR_NODE_DOWN about node argv[3] (whose stepd the
 *            test kills), with a fence and a Get of a rank there pending: both must fail promptly;
 *            argv[4] "stopped": the test stops that stepd instead (the fence times out first)
 *   nodesdown wait (argv[2] s) for one PMIX_ERR_NODE_DOWN about each node of the comma-separated
 *            list argv[3] (the test kills their stepds at once), nothing pending, no fence ever; prints
 *            EVENT-AT rank <r> <host> <realtime> per event; the surviving nodes end 0.6 s apart
 *   signal   argv[2] "handler": register for PMIX_JCTRL_PREEMPT_ALERT and PMIX_ERR_JOB_CANCELED and
 *            print the signal events (PMIxCppSignalEvents) until argv[3] s pass or TERM's event
 *            came (or, with argv[4] "usr1", USR1's); "none": register nothing and sleep (a signal
 *            then acts as without pmixcpp)
 *   abuse    10000 handlers, unknown references, bad ranges, custom ranges and affected procs:
 *            errors, never a crash; the server and the chains still work afterwards
 * Run with: srun --mpi=pmixcpp -N1 -n4 pmix_events <mode> */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include "ptest.h"

static pmix_proc_t me;
static uint32_t nprocs = 1;

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* ---- registration helpers ---- */
static pmix_status_t reg_done_status;
static size_t reg_done_ref;
static volatile int reg_done;
static void reg_cb(pmix_status_t st, size_t ref, void *cbdata) {
    reg_done_status = st;
    reg_done_ref = ref;
    reg_done = 1;
}

/* Register and wait for the callback; returns the reference or (size_t)-1 with *rc set. */
static size_t reg(pmix_status_t *codes, size_t ncodes, pmix_info_t *info, size_t ninfo, pmix_notification_fn_t fn,
                  pmix_status_t *rc_out) {
    reg_done = 0;
    pmix_status_t rc = PMIx_Register_event_handler(codes, ncodes, info, ninfo, fn, reg_cb, NULL);
    if (rc_out) *rc_out = rc;
    if (rc != PMIX_SUCCESS) return (size_t)-1;
    while (!reg_done) usleep(100);
    return reg_done_ref;
}

static void op_done(pmix_status_t st, void *cbdata) {
    if (cbdata) *(volatile int *)cbdata = st == PMIX_SUCCESS ? 1 : 2;
}

static void fence(void) { PMIx_Fence(NULL, 0, NULL, 0); }

/* =========================== chain =========================== */
#define C1 -5001
#define C2 -5002
static int order[32];
static atomic_int norder;
static int results_seen_by_last = -1;

#define HANDLER(tag)                                                                                        \
    static void h_##tag(size_t ref, pmix_status_t st, const pmix_proc_t *src, pmix_info_t info[], size_t ni, \
                        pmix_info_t *results, size_t nres, pmix_event_notification_cbfunc_fn_t cb, void *cbd) { \
        order[atomic_fetch_add(&norder, 1)] = tag;                                                           \
        results_seen_by_last = (int)nres;                                                                    \
        pmix_info_t *out = calloc(1, sizeof(pmix_info_t));                                                   \
        int v = tag;                                                                                         \
        PMIx_Info_load(out, "ptest.result", &v, PMIX_INT);                                                   \
        cb(st == C2 && tag == 30 ? PMIX_EVENT_ACTION_COMPLETE : PMIX_SUCCESS, out, 1, NULL, NULL, cbd);       \
        PMIX_INFO_FREE(out, 1);                                                                            \
    }
HANDLER(1)
HANDLER(2)
HANDLER(10)
HANDLER(11)
HANDLER(12)
HANDLER(13)
HANDLER(20)
HANDLER(21)
HANDLER(30)
HANDLER(31)
HANDLER(32)
HANDLER(40)

static int mode_chain(void) {
    pmix_status_t single[1] = {C1}, multi[2] = {C1, C2}, rc;
    pmix_info_t info[2];
    /* registration order deliberately scrambled */
    reg(NULL, 0, NULL, 0, h_31, NULL);                                                      /* default */
    reg(single, 1, ptest_bool_info(PMIX_EVENT_HDLR_LAST, 1), 1, h_40, NULL);                /* last overall */
    PMIx_Info_load(&info[0], PMIX_EVENT_HDLR_NAME, "eleven", PMIX_STRING);
    reg(single, 1, info, 1, h_11, NULL);                                                    /* single */
    reg(multi, 2, NULL, 0, h_21, NULL);                                                     /* multi */
    reg(NULL, 0, ptest_bool_info(PMIX_EVENT_HDLR_FIRST, 1), 1, h_1, NULL);                  /* first overall */
    reg(single, 1, ptest_bool_info(PMIX_EVENT_HDLR_LAST_IN_CATEGORY, 1), 1, h_13, NULL);    /* last single */
    PMIx_Info_load(&info[1], PMIX_EVENT_HDLR_BEFORE, "eleven", PMIX_STRING);
    reg(single, 1, &info[1], 1, h_10, NULL);                                                /* before "eleven" */
    reg(multi, 2, ptest_bool_info(PMIX_EVENT_HDLR_PREPEND, 1), 1, h_20, NULL);              /* prepend multi */
    reg(NULL, 0, ptest_bool_info(PMIX_EVENT_HDLR_FIRST_IN_CATEGORY, 1), 1, h_30, NULL);     /* first default */
    reg(NULL, 0, NULL, 0, h_32, NULL);                                                      /* default */
    reg(single, 1, NULL, 0, h_12, NULL);                                                    /* single, appended */
    size_t r = reg(single, 1, ptest_bool_info(PMIX_EVENT_HDLR_FIRST, 1), 1, h_2, &rc);
    CHECK(r == (size_t)-1 && rc == PMIX_ERR_EVENT_REGISTRATION, "second FIRST handler refused: %s",
          PMIx_Error_string(rc));
    r = reg(NULL, 0, ptest_bool_info(PMIX_EVENT_HDLR_LAST, 1), 1, h_2, &rc);
    CHECK(r == (size_t)-1 && rc == PMIX_ERR_EVENT_REGISTRATION, "second LAST handler refused: %s",
          PMIx_Error_string(rc));

    volatile int done = 0;
    atomic_store(&norder, 0);
    CHECK_RC(PMIX_SUCCESS, PMIx_Notify_event(C1, &me, PMIX_RANGE_PROC_LOCAL, NULL, 0, op_done, (void *)&done));
    for (int i = 0; i < 5000 && !done; ++i) usleep(1000);
    int want[] = {1, 10, 11, 12, 13, 20, 21, 30, 31, 32, 40};
    int n = atomic_load(&norder), ok = n == 11;
    char got[256] = "";
    for (int i = 0; i < n; ++i) {
        snprintf(got + strlen(got), sizeof(got) - strlen(got), "%d ", order[i]);
        if (i < 11 && order[i] != want[i]) ok = 0;
    }
    CHECK(ok, "chain order for a single-code event: %s(want 1 10 11 12 13 20 21 30 31 32 40)", got);
    CHECK(results_seen_by_last == 10, "last handler saw the results of the 10 before it: %d", results_seen_by_last);

    /* C2: multi-code handlers, then default 30 ends the chain with PMIX_EVENT_ACTION_COMPLETE. */
    done = 0;
    atomic_store(&norder, 0);
    PMIx_Notify_event(C2, &me, PMIX_RANGE_PROC_LOCAL, NULL, 0, op_done, (void *)&done);
    for (int i = 0; i < 5000 && !done; ++i) usleep(1000);
    n = atomic_load(&norder);
    got[0] = 0;
    for (int i = 0; i < n; ++i) snprintf(got + strlen(got), sizeof(got) - strlen(got), "%d ", order[i]);
    CHECK(n == 4 && order[0] == 1 && order[1] == 20 && order[2] == 21 && order[3] == 30,
          "ACTION_COMPLETE ends the chain: %s(want 1 20 21 30)", got);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    return 0;
}

/* =========================== ranges =========================== */
enum { E_LOCAL, E_NS, E_CUSTOM, E_RM, E_PROCLOCAL, E_SRCFILTER, E_AFFECTED, E_LATE, E_NONDEF, E_GLOBAL, E_N };
static const pmix_status_t codes[E_N] = {-5101, -5102, -5103, -5104, -5105, -5106, -5107, -5108, -5109, -5110};
static atomic_int count[E_N];
static atomic_int default_count_nondef;

static int idx_of(pmix_status_t st) {
    for (int i = 0; i < E_N; ++i)
        if (codes[i] == st) return i;
    return -1;
}

static void h_count(size_t ref, pmix_status_t st, const pmix_proc_t *src, pmix_info_t info[], size_t ni,
                    pmix_info_t *results, size_t nres, pmix_event_notification_cbfunc_fn_t cb, void *cbd) {
    int i = idx_of(st);
    if (i >= 0) atomic_fetch_add(&count[i], 1);
    cb(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbd);
}
static void h_default(size_t ref, pmix_status_t st, const pmix_proc_t *src, pmix_info_t info[], size_t ni,
                      pmix_info_t *results, size_t nres, pmix_event_notification_cbfunc_fn_t cb, void *cbd) {
    if (st == codes[E_NONDEF]) atomic_fetch_add(&default_count_nondef, 1);
    cb(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbd);
}

static void notify_wait(pmix_status_t code, pmix_data_range_t range, pmix_info_t *info, size_t ninfo) {
    volatile int done = 0;
    pmix_status_t rc = PMIx_Notify_event(code, &me, range, info, ninfo, op_done, (void *)&done);
    if (rc != PMIX_SUCCESS) {
        CHECK(0, "notify %d range %d: %s", code, range, PMIx_Error_string(rc));
        return;
    }
    for (int i = 0; i < 5000 && !done; ++i) usleep(1000);
    CHECK(done == 1, "notify %d range %s acknowledged", code, PMIx_Data_range_string(range));
}

static int mode_ranges(void) {
    for (int i = 0; i < E_N; ++i) {
        if (i == E_SRCFILTER || i == E_AFFECTED || i == E_LATE) continue;
        pmix_status_t c = codes[i];
        reg(&c, 1, NULL, 0, h_count, NULL);
    }
    reg(NULL, 0, NULL, 0, h_default, NULL);
    /* source filter: only events from rank 0 */
    pmix_proc_t r0 = me, r2 = me, r3 = me;
    r0.rank = 0;
    r2.rank = 2;
    r3.rank = 3;
    pmix_info_t fi;
    PMIx_Info_load(&fi, PMIX_EVENT_CUSTOM_RANGE, &r0, PMIX_PROC);
    pmix_status_t c = codes[E_SRCFILTER];
    reg(&c, 1, &fi, 1, h_count, NULL);
    /* affected-proc filter: only events about rank 2 */
    pmix_info_t ai;
    PMIx_Info_load(&ai, PMIX_EVENT_AFFECTED_PROC, &r2, PMIX_PROC);
    c = codes[E_AFFECTED];
    reg(&c, 1, &ai, 1, h_count, NULL);
    fence();

    if (me.rank == 0) {
        notify_wait(codes[E_LOCAL], PMIX_RANGE_LOCAL, NULL, 0);
        notify_wait(codes[E_NS], PMIX_RANGE_NAMESPACE, NULL, 0);
        notify_wait(codes[E_GLOBAL], PMIX_RANGE_GLOBAL, NULL, 0);
        pmix_proc_t one = me;
        one.rank = 1;
        pmix_info_t cr;
        PMIx_Info_load(&cr, PMIX_EVENT_CUSTOM_RANGE, &one, PMIX_PROC);
        notify_wait(codes[E_CUSTOM], PMIX_RANGE_CUSTOM, &cr, 1);
        notify_wait(codes[E_RM], PMIX_RANGE_RM, NULL, 0);
        notify_wait(codes[E_PROCLOCAL], PMIX_RANGE_PROC_LOCAL, NULL, 0);
        notify_wait(codes[E_SRCFILTER], PMIX_RANGE_NAMESPACE, NULL, 0);
        pmix_info_t af;
        PMIx_Info_load(&af, PMIX_EVENT_AFFECTED_PROC, &r3, PMIX_PROC);
        notify_wait(codes[E_AFFECTED], PMIX_RANGE_NAMESPACE, &af, 1);
        PMIx_Info_load(&af, PMIX_EVENT_AFFECTED_PROC, &r2, PMIX_PROC);
        notify_wait(codes[E_AFFECTED], PMIX_RANGE_NAMESPACE, &af, 1);
        notify_wait(codes[E_LATE], PMIX_RANGE_NAMESPACE, NULL, 0);
        pmix_info_t nd;
        bool t = true;
        PMIx_Info_load(&nd, PMIX_EVENT_NON_DEFAULT, &t, PMIX_BOOL);
        notify_wait(codes[E_NONDEF], PMIX_RANGE_NAMESPACE, &nd, 1);
    }
    if (me.rank == 1) notify_wait(codes[E_SRCFILTER], PMIX_RANGE_NAMESPACE, NULL, 0); /* filtered out everywhere */
    fence(); /* events were queued before the fence replies: the handlers have run */
    usleep(100000);
    /* the late handler: registered after the event was delivered */
    c = codes[E_LATE];
    reg(&c, 1, NULL, 0, h_count, NULL);
    for (int i = 0; i < 1000 && atomic_load(&count[E_LATE]) == 0; ++i) usleep(1000);

    /* PMIX_RANGE_LOCAL reaches the sender's node only */
    int local_all = 1;
    {
        pmix_value_t *a = NULL, *b = NULL;
        if (PMIx_Get(&r0, PMIX_NODEID, NULL, 0, &a) == PMIX_SUCCESS && PMIx_Get(&me, PMIX_NODEID, NULL, 0, &b) == PMIX_SUCCESS)
            local_all = a->data.uint32 == b->data.uint32;
        if (a) PMIX_VALUE_RELEASE(a);
        if (b) PMIX_VALUE_RELEASE(b);
    }
    CHECK(atomic_load(&count[E_LOCAL]) == local_all, "LOCAL event received %d time(s)", atomic_load(&count[E_LOCAL]));
    CHECK(atomic_load(&count[E_NS]) == 1, "NAMESPACE event received %d time(s)", atomic_load(&count[E_NS]));
    CHECK(atomic_load(&count[E_GLOBAL]) == 1, "GLOBAL event received %d time(s)", atomic_load(&count[E_GLOBAL]));
    CHECK(atomic_load(&count[E_CUSTOM]) == (me.rank == 1), "CUSTOM {rank 1} event received %d time(s) (want %d)",
          atomic_load(&count[E_CUSTOM]), me.rank == 1);
    CHECK(atomic_load(&count[E_RM]) == 0, "RM event reached no process: %d", atomic_load(&count[E_RM]));
    CHECK(atomic_load(&count[E_PROCLOCAL]) == (me.rank == 0), "PROC_LOCAL event received %d time(s) (want %d)",
          atomic_load(&count[E_PROCLOCAL]), me.rank == 0);
    CHECK(atomic_load(&count[E_SRCFILTER]) == 1, "source-filtered handler ran %d time(s) (want 1: rank 0's only)",
          atomic_load(&count[E_SRCFILTER]));
    CHECK(atomic_load(&count[E_AFFECTED]) == 1, "affected-proc handler ran %d time(s) (want 1: about rank 2)",
          atomic_load(&count[E_AFFECTED]));
    CHECK(atomic_load(&count[E_LATE]) == 1, "handler registered later got the cached event %d time(s)",
          atomic_load(&count[E_LATE]));
    CHECK(atomic_load(&count[E_NONDEF]) == 1 && atomic_load(&default_count_nondef) == 0,
          "non-default event: specific handler %d, default handler %d (want 1, 0)", atomic_load(&count[E_NONDEF]),
          atomic_load(&default_count_nondef));
    return 0;
}

/* =========================== kill =========================== */
static atomic_int aborted_rank = -1, terminated_rank = -1;
static double t_aborted;
static void h_dead(size_t ref, pmix_status_t st, const pmix_proc_t *src, pmix_info_t info[], size_t ni,
                   pmix_info_t *results, size_t nres, pmix_event_notification_cbfunc_fn_t cb, void *cbd) {
    int rank = -1;
    pmix_status_t term = PMIX_SUCCESS;
    for (size_t i = 0; i < ni; ++i) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC) && info[i].value.type == PMIX_PROC)
            rank = (int)info[i].value.data.proc->rank;
        if (PMIX_CHECK_KEY(&info[i], PMIX_PROC_TERM_STATUS)) term = info[i].value.data.status;
    }
    if (st == PMIX_ERR_PROC_ABORTED) {
        t_aborted = now_us();
        atomic_store(&aborted_rank, rank);
    } else if (st == PMIX_EVENT_PROC_TERMINATED && term != PMIX_SUCCESS) {
        /* (peers that finalize normally are reported too, with status PMIX_SUCCESS) */
        atomic_store(&terminated_rank, rank);
    }
    cb(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbd);
}

static int mode_kill(void) {
    pmix_status_t c[2] = {PMIX_ERR_PROC_ABORTED, PMIX_EVENT_PROC_TERMINATED};
    reg(c, 2, NULL, 0, h_dead, NULL);
    fence();
    if (me.rank == nprocs - 1) {
        printf("DYING rank %u: SIGKILL\n", me.rank);
        fflush(stdout);
        kill(getpid(), SIGKILL);
    }
    double t0 = now_us();
    for (int i = 0; i < 5000 && (atomic_load(&aborted_rank) < 0 || atomic_load(&terminated_rank) < 0); ++i)
        usleep(1000);
    double ms = atomic_load(&aborted_rank) >= 0 ? (t_aborted - t0) / 1000.0 : 1e9;
    CHECK(atomic_load(&aborted_rank) == (int)nprocs - 1, "PMIX_ERR_PROC_ABORTED names rank %d (want %u)",
          atomic_load(&aborted_rank), nprocs - 1);
    CHECK(atomic_load(&terminated_rank) == (int)nprocs - 1, "PMIX_EVENT_PROC_TERMINATED names rank %d",
          atomic_load(&terminated_rank));
    /* (negative: the event arrived before this rank got out of the fence) */
    CHECK(atomic_load(&aborted_rank) >= 0 && ms < 1000, "the death was reported %.2f ms after the fence", ms);
    printf("KILL-LATENCY rank %u: %.2f ms\n", me.rank, ms);
    return 0;
}

/* =========================== abort =========================== */
static void h_abort(size_t ref, pmix_status_t st, const pmix_proc_t *src, pmix_info_t info[], size_t ni,
                    pmix_info_t *results, size_t nres, pmix_event_notification_cbfunc_fn_t cb, void *cbd) {
    const char *text = "";
    int status = 0;
    for (size_t i = 0; i < ni; ++i) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_TEXT_MESSAGE) && info[i].value.type == PMIX_STRING)
            text = info[i].value.data.string;
        if (PMIX_CHECK_KEY(&info[i], PMIX_JOB_TERM_STATUS)) status = info[i].value.data.status;
    }
    printf("TOLD rank %u: %s status %d: %s\n", me.rank, PMIx_Error_string(st), status, text);
    fflush(stdout);
    cb(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbd);
}

/* A default handler (no codes), as OpenMPI registers one: the job's end is not for it. */
static void h_abort_default(size_t ref, pmix_status_t st, const pmix_proc_t *src, pmix_info_t info[], size_t ni,
                            pmix_info_t *results, size_t nres, pmix_event_notification_cbfunc_fn_t cb, void *cbd) {
    printf("DEFAULT-HANDLER rank %u: %s\n", me.rank, PMIx_Error_string(st));
    fflush(stdout);
    cb(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbd);
}

static int mode_abort(void) {
    pmix_status_t c = PMIX_ERR_JOB_TERMINATED;
    reg(NULL, 0, NULL, 0, h_abort_default, NULL);
    reg(&c, 1, NULL, 0, h_abort, NULL);
    fence();
    if (me.rank == 0) {
        usleep(100000);
        PMIx_Abort(42, "events test abort", NULL, 0);
    }
    sleep(30);
    return 1;
}

/* =========================== flood =========================== */
#define FLOOD -5201
static atomic_long flood_got;
static atomic_int inflight;
static void h_flood(size_t ref, pmix_status_t st, const pmix_proc_t *src, pmix_info_t info[], size_t ni,
                    pmix_info_t *results, size_t nres, pmix_event_notification_cbfunc_fn_t cb, void *cbd) {
    atomic_fetch_add(&flood_got, 1);
    cb(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbd);
}
static void flood_done(pmix_status_t st, void *cbdata) { atomic_fetch_sub(&inflight, 1); }

static int mode_flood(long n) {
    pmix_status_t c = FLOOD;
    reg(&c, 1, NULL, 0, h_flood, NULL);
    fence();
    if (me.rank == 0) {
        pmix_info_t nc;
        bool t = true;
        PMIx_Info_load(&nc, PMIX_EVENT_DO_NOT_CACHE, &t, PMIX_BOOL);
        double t0 = now_us();
        for (long i = 0; i < n; ++i) {
            while (atomic_load(&inflight) >= 256) usleep(50); /* a bounded window of outstanding notifies */
            atomic_fetch_add(&inflight, 1);
            pmix_status_t rc = PMIx_Notify_event(FLOOD, &me, PMIX_RANGE_LOCAL, &nc, 1, flood_done, NULL);
            if (rc != PMIX_SUCCESS) {
                atomic_fetch_sub(&inflight, 1);
                CHECK(0, "notify %ld: %s", i, PMIx_Error_string(rc));
                break;
            }
        }
        while (atomic_load(&inflight) > 0) usleep(100);
        double s = (now_us() - t0) / 1e6;
        printf("FLOOD rank 0: %ld events sent in %.2f s (%.0f events/s)\n", n, s, n / s);
    }
    fence();
    for (int i = 0; i < 10000 && atomic_load(&flood_got) < n; ++i) usleep(1000);
    long got = atomic_load(&flood_got);
    printf("FLOOD-GOT rank %u: %ld of %ld\n", me.rank, got, n);
    CHECK(got == n, "received %ld of %ld flood events", got, n);
    return 0;
}

/* =========================== latency =========================== */
#define PING -5301
#define PONG -5302
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int pongs;
static pmix_info_t to_rank0, to_rank1;
static void h_ping(size_t ref, pmix_status_t st, const pmix_proc_t *src, pmix_info_t info[], size_t ni,
                   pmix_info_t *results, size_t nres, pmix_event_notification_cbfunc_fn_t cb, void *cbd) {
    if (st == PING) {
        PMIx_Notify_event(PONG, &me, PMIX_RANGE_CUSTOM, &to_rank0, 1, NULL, NULL);
    } else {
        pthread_mutex_lock(&mu);
        pongs++;
        pthread_cond_signal(&cv);
        pthread_mutex_unlock(&mu);
    }
    cb(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbd);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int mode_latency(int iters) {
    pmix_proc_t p0 = me, p1 = me;
    p0.rank = 0;
    p1.rank = 1;
    PMIx_Info_load(&to_rank0, PMIX_EVENT_CUSTOM_RANGE, &p0, PMIX_PROC);
    PMIx_Info_load(&to_rank1, PMIX_EVENT_CUSTOM_RANGE, &p1, PMIX_PROC);
    pmix_status_t c[2] = {PING, PONG};
    pmix_info_t nc;
    bool t = true;
    PMIx_Info_load(&nc, PMIX_EVENT_DO_NOT_CACHE, &t, PMIX_BOOL);
    reg(c, 2, NULL, 0, h_ping, NULL);
    fence();
    if (me.rank == 0) {
        double *rt = calloc((size_t)iters, sizeof(double)), *ack = calloc((size_t)iters, sizeof(double));
        pmix_info_t ping_info[2];
        PMIx_Info_xfer(&ping_info[0], &to_rank1);
        PMIx_Info_xfer(&ping_info[1], &nc);
        for (int i = 0; i < iters; ++i) {
            volatile int done = 0;
            double t0 = now_us();
            PMIx_Notify_event(PING, &me, PMIX_RANGE_CUSTOM, ping_info, 2, op_done, (void *)&done);
            pthread_mutex_lock(&mu);
            while (pongs <= i) pthread_cond_wait(&cv, &mu);
            pthread_mutex_unlock(&mu);
            rt[i] = now_us() - t0;
            while (!done) sched_yield();
            /* notify -> ack alone */
            done = 0;
            t0 = now_us();
            PMIx_Notify_event(PING - 1000, &me, PMIX_RANGE_RM, NULL, 0, op_done, (void *)&done);
            while (!done) sched_yield();
            ack[i] = now_us() - t0;
        }
        qsort(rt, (size_t)iters, sizeof(double), cmp_double);
        qsort(ack, (size_t)iters, sizeof(double), cmp_double);
        printf("LATENCY rank 0: event round trip (notify -> delivered to rank 1 -> its notify delivered back) "
               "median %.1f us, p90 %.1f us, min %.1f us over %d\n",
               rt[iters / 2], rt[iters * 9 / 10], rt[0], iters);
        printf("LATENCY rank 0: notify -> server ack median %.1f us, p90 %.1f us, min %.1f us\n", ack[iters / 2],
               ack[iters * 9 / 10], ack[0]);
        CHECK(rt[iters / 2] > 0, "round trips measured");
    }
    fence();
    return 0;
}

/* ---- timelimit: the server's PMIX_JCTRL_PREEMPT_ALERT before the job's time limit ---- */
static atomic_int alert_count;
static atomic_uint alert_left;
static void h_alert(size_t ref, pmix_status_t st, const pmix_proc_t *src, pmix_info_t info[], size_t ni,
                    pmix_info_t *results, size_t nres, pmix_event_notification_cbfunc_fn_t cb, void *cbd) {
    for (size_t i = 0; i < ni; i++)
        if (!strcmp(info[i].key, PMIX_TIME_REMAINING) && info[i].value.type == PMIX_UINT32)
            atomic_store(&alert_left, info[i].value.data.uint32);
    atomic_fetch_add(&alert_count, 1);
    cb(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbd);
}
static void mode_timelimit(int wait_s) {
    pmix_status_t code = PMIX_JCTRL_PREEMPT_ALERT;
    reg(&code, 1, NULL, 0, h_alert, NULL);
    for (int i = 0; i < wait_s * 100 && atomic_load(&alert_count) == 0; ++i) usleep(10000);
    CHECK(atomic_load(&alert_count) == 1, "PMIX_JCTRL_PREEMPT_ALERT received %d time(s)", atomic_load(&alert_count));
    CHECK(atomic_load(&alert_left) > 0 && atomic_load(&alert_left) <= 60, "time remaining %u s",
          atomic_load(&alert_left));
    if (atomic_load(&alert_count) == 1) printf("ALERT rank %u: %u s left\n", me.rank, atomic_load(&alert_left));
}

/* ---- nodedown: PMIX_ERR_NODE_DOWN when another node's slurmstepd is killed ---- */
static atomic_int nd_count;
static atomic_int nd_affected;
static char nd_host[256];
static double nd_at_real;  /* CLOCK_REALTIME of the event, seconds */
static double nd_at_us;
static volatile int nd_fence_done, nd_get_done;
static pmix_status_t nd_fence_rc, nd_get_rc;
static double nd_fence_us, nd_get_us;

static double real_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}
static void h_nodedown(size_t ref, pmix_status_t st, const pmix_proc_t *src, pmix_info_t info[], size_t ni,
                       pmix_info_t *results, size_t nres, pmix_event_notification_cbfunc_fn_t cb, void *cbd) {
    nd_at_real = real_now();
    nd_at_us = now_us();
    for (size_t i = 0; i < ni; ++i) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_HOSTNAME) && info[i].value.type == PMIX_STRING)
            snprintf(nd_host, sizeof(nd_host), "%s", info[i].value.data.string);
        if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROCS) && info[i].value.type == PMIX_DATA_ARRAY &&
            info[i].value.data.darray && info[i].value.data.darray->type == PMIX_PROC)
            atomic_store(&nd_affected, (int)info[i].value.data.darray->size);
        if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_TEXT_MESSAGE) && info[i].value.type == PMIX_STRING)
            printf("TEXT rank %u: %s\n", me.rank, info[i].value.data.string);
    }
    atomic_fetch_add(&nd_count, 1);
    cb(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbd);
}
static void nd_fence_cb(pmix_status_t st, void *cbdata) {
    nd_fence_rc = st;
    nd_fence_us = now_us();
    nd_fence_done = 1;
}
static void nd_get_cb(pmix_status_t st, pmix_value_t *v, void *cbdata) {
    nd_get_rc = st;
    nd_get_us = now_us();
    nd_get_done = 1;
}
static void mode_nodedown(int wait_s, const char *victim, int stopped) {
    pmix_status_t code = PMIX_ERR_NODE_DOWN;
    const char *node = getenv("SLURMD_NODENAME");
    reg(&code, 1, NULL, 0, h_nodedown, NULL);
    fence();
    printf("READY rank %u node %s pid %d\n", me.rank, node ? node : "?", (int)getpid());
    fflush(stdout);
    if (node && victim && !strcmp(node, victim)) {  /* killed with its node */
        sleep((unsigned)wait_s);
        return;
    }
    /* pending: a fence over everyone (the victim's ranks never come), and a Get of a key the
     * last rank (on the victim node with block distribution) never puts */
    PMIx_Fence_nb(NULL, 0, NULL, 0, nd_fence_cb, NULL);
    pmix_proc_t last = me;
    last.rank = nprocs - 1;
    PMIx_Get_nb(&last, "ptest.never", NULL, 0, nd_get_cb, NULL);
    for (int i = 0; i < wait_s * 100 && atomic_load(&nd_count) == 0; ++i) usleep(10000);
    for (int i = 0; i < 500 && !(nd_fence_done && nd_get_done); ++i) usleep(10000);
    CHECK(atomic_load(&nd_count) == 1, "PMIX_ERR_NODE_DOWN received %d time(s)", atomic_load(&nd_count));
    if (atomic_load(&nd_count) == 0) return;
    printf("EVENT-AT rank %u: %.6f\n", me.rank, nd_at_real);
    CHECK(victim == NULL || !strcmp(nd_host, victim), "PMIX_HOSTNAME %s (want %s)", nd_host, victim ? victim : "?");
    CHECK(atomic_load(&nd_affected) > 0, "PMIX_EVENT_AFFECTED_PROCS names %d procs", atomic_load(&nd_affected));
    /* (a stopped slurmstepd is found out by a fence timing out on it: the fence fails first) */
    CHECK(nd_fence_done && nd_fence_rc != PMIX_SUCCESS && (stopped || nd_fence_rc != PMIX_ERR_TIMEOUT),
          "the pending fence failed with %s, %.0f ms after the event", PMIx_Error_string(nd_fence_rc),
          (nd_fence_us - nd_at_us) / 1000.0);
    CHECK(nd_get_done && nd_get_rc != PMIX_SUCCESS && (stopped || nd_get_rc != PMIX_ERR_TIMEOUT),
          "the pending Get of rank %u failed with %s, %.0f ms after the event", nprocs - 1,
          PMIx_Error_string(nd_get_rc), (nd_get_us - nd_at_us) / 1000.0);
}

/* ---- nodesdown: one PMIX_ERR_NODE_DOWN per killed node, with nothing pending ---- */
static pthread_mutex_t nds_lock = PTHREAD_MUTEX_INITIALIZER;
static char nds_host[16][64];
static double nds_at[16];
static int nds_count;
static void h_nodesdown(size_t ref, pmix_status_t st, const pmix_proc_t *src, pmix_info_t info[], size_t ni,
                        pmix_info_t *results, size_t nres, pmix_event_notification_cbfunc_fn_t cb, void *cbd) {
    double at = real_now();
    const char *host = "?";
    for (size_t i = 0; i < ni; ++i)
        if (PMIX_CHECK_KEY(&info[i], PMIX_HOSTNAME) && info[i].value.type == PMIX_STRING)
            host = info[i].value.data.string;
    pthread_mutex_lock(&nds_lock);
    if (nds_count < 16) {
        snprintf(nds_host[nds_count], sizeof(nds_host[0]), "%s", host);
        nds_at[nds_count] = at;
    }
    ++nds_count;
    pthread_mutex_unlock(&nds_lock);
    cb(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbd);
}
static void mode_nodesdown(int wait_s, const char *victims) {
    pmix_status_t code = PMIX_ERR_NODE_DOWN;
    const char *node = getenv("SLURMD_NODENAME");
    char list[256];
    snprintf(list, sizeof(list), ",%s,", victims ? victims : "");
    char mine[80];
    snprintf(mine, sizeof(mine), ",%s,", node ? node : "?");
    int nvictims = 0;
    for (const char *p = list + 1; *p; ++p)
        if (*p == ',') ++nvictims;
    reg(&code, 1, NULL, 0, h_nodesdown, NULL);
    /* no fence: the servers' only connections are the ring's (a fence's would watch more nodes) */
    printf("READY rank %u node %s pid %d\n", me.rank, node ? node : "?", (int)getpid());
    fflush(stdout);
    if (strstr(list, mine)) {  /* killed with its node */
        sleep((unsigned)wait_s);
        return;
    }
    for (int i = 0; i < wait_s * 100; ++i) {
        pthread_mutex_lock(&nds_lock);
        int n = nds_count;
        pthread_mutex_unlock(&nds_lock);
        if (n >= nvictims) break;
        usleep(10000);
    }
    /* The nodes end at different times (0.6 s apart): a node ending normally is no loss, a
     * duplicate or a false report would come now. */
    const char *nid = getenv("SLURM_NODEID");
    usleep(300000 + (useconds_t)(nid ? atoi(nid) : 0) * 600000);
    pthread_mutex_lock(&nds_lock);
    CHECK(nds_count == nvictims, "%d PMIX_ERR_NODE_DOWN events for %d killed nodes", nds_count, nvictims);
    for (int i = 0; i < nds_count && i < 16; ++i) {
        char h[80];
        snprintf(h, sizeof(h), ",%s,", nds_host[i]);
        int dup = 0;
        for (int j = 0; j < i; ++j) dup |= !strcmp(nds_host[i], nds_host[j]);
        CHECK(strstr(list, h) != NULL && !dup, "event %d names %s (killed: %s)", i, nds_host[i], victims);
        printf("EVENT-AT rank %u %s %.6f\n", me.rank, nds_host[i], nds_at[i]);
    }
    pthread_mutex_unlock(&nds_lock);
}

/* ---- signal: PMIxCppSignalEvents ---- */
static atomic_int sig_events, sig_term, sig_usr1;
static void h_signal(size_t ref, pmix_status_t st, const pmix_proc_t *src, pmix_info_t info[], size_t ni,
                     pmix_info_t *results, size_t nres, pmix_event_notification_cbfunc_fn_t cb, void *cbd) {
    int sig = -1, nondef = 0;
    const char *text = "";
    for (size_t i = 0; i < ni; ++i) {
        if (PMIX_CHECK_KEY(&info[i], "pmixcpp.signal") && info[i].value.type == PMIX_INT) sig = info[i].value.data.integer;
        if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_NON_DEFAULT)) nondef = 1;
        if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_TEXT_MESSAGE) && info[i].value.type == PMIX_STRING)
            text = info[i].value.data.string;
    }
    printf("SIGNAL-EVENT rank %u: %s signal %d non-default %d: %s\n", me.rank, PMIx_Error_string(st), sig, nondef,
           text);
    fflush(stdout);
    atomic_fetch_add(&sig_events, 1);
    if (sig == SIGTERM) atomic_store(&sig_term, 1);
    if (sig == SIGUSR1) atomic_store(&sig_usr1, 1);
    cb(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbd);
}
static void mode_signal(const char *how, int wait_s, int until_usr1) {
    if (!strcmp(how, "handler")) {
        pmix_status_t codes[2] = {PMIX_JCTRL_PREEMPT_ALERT, PMIX_ERR_JOB_CANCELED};
        reg(codes, 2, NULL, 0, h_signal, NULL);
    }
    fence();
    printf("READY rank %u node %s pid %d\n", me.rank, getenv("SLURMD_NODENAME"), (int)getpid());
    fflush(stdout);
    for (int i = 0; i < wait_s * 100 && !atomic_load(&sig_term) && !(until_usr1 && atomic_load(&sig_usr1)); ++i)
        usleep(10000);
    printf("SIGNAL-DONE rank %u: %d events%s\n", me.rank, atomic_load(&sig_events),
           atomic_load(&sig_term) ? ", the last for SIGTERM: finishing cleanly" : "");
}

/* ---- abuse: robustness of the event API ---- */
#define ABUSE -5301
#define ABUSE_LATE -5302 /* (a code of its own: other ranks send it while this one may still be abusing) */
static atomic_int abuse_got, abuse_late_got;
static void h_abuse_late(size_t ref, pmix_status_t st, const pmix_proc_t *src, pmix_info_t info[], size_t ni,
                         pmix_info_t *results, size_t nres, pmix_event_notification_cbfunc_fn_t cb, void *cbd) {
    atomic_fetch_add(&abuse_late_got, 1);
    cb(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbd);
}
static void h_abuse(size_t ref, pmix_status_t st, const pmix_proc_t *src, pmix_info_t info[], size_t ni,
                    pmix_info_t *results, size_t nres, pmix_event_notification_cbfunc_fn_t cb, void *cbd) {
    atomic_fetch_add(&abuse_got, 1);
    cb(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbd);
}
static void mode_abuse(void) {
    enum { N = 10000 };
    static size_t refs[N];
    pmix_status_t code = ABUSE, rc = PMIX_SUCCESS;
    int ok = 0;
    for (int i = 0; i < N; ++i) {
        refs[i] = reg(&code, 1, NULL, 0, h_abuse, &rc);
        ok += rc == PMIX_SUCCESS;
    }
    CHECK(ok == N, "%d of %d handlers registered", ok, N);
    CHECK_RC(PMIX_ERR_NOT_FOUND, PMIx_Deregister_event_handler(987654321, NULL, NULL));
    CHECK_RC(PMIX_ERR_NOT_FOUND, PMIx_Deregister_event_handler(0, NULL, NULL));
    CHECK(PMIx_Register_event_handler(&code, 1, NULL, 0, NULL, NULL, NULL) != PMIX_SUCCESS, "NULL handler refused");
    CHECK(PMIx_Register_event_handler(NULL, 3, NULL, 0, h_abuse, NULL, NULL) != PMIX_SUCCESS, "NULL codes refused");
    CHECK_RC(PMIX_ERR_BAD_PARAM, PMIx_Notify_event(ABUSE, &me, (pmix_data_range_t)200, NULL, 0, NULL, NULL));
    CHECK_RC(PMIX_ERR_BAD_PARAM, PMIx_Notify_event(ABUSE, &me, PMIX_RANGE_CUSTOM, NULL, 0, NULL, NULL));
    pmix_info_t bad[2];
    int x = 7;
    PMIx_Info_load(&bad[0], PMIX_EVENT_CUSTOM_RANGE, &x, PMIX_INT);            /* not procs */
    PMIx_Info_load(&bad[1], PMIX_EVENT_AFFECTED_PROCS, "garbage", PMIX_STRING); /* not procs */
    volatile int done = 0;
    pmix_status_t nrc = PMIx_Notify_event(ABUSE, &me, PMIX_RANGE_CUSTOM, bad, 1, op_done, (void *)&done);
    if (nrc == PMIX_SUCCESS) while (!done) usleep(1000);
    CHECK(nrc != PMIX_SUCCESS || done == 2, "a custom range that is not procs is refused (%s, %d)",
          PMIx_Error_string(nrc), done);
    pmix_proc_t nobody[2] = {me, me};
    strcpy(nobody[0].nspace, "no.such.namespace");
    nobody[1].rank = 999999;
    pmix_info_t custom;
    pmix_data_array_t da = {PMIX_PROC, 2, nobody};
    PMIx_Info_load(&custom, PMIX_EVENT_CUSTOM_RANGE, &da, PMIX_DATA_ARRAY);
    done = 0;
    CHECK_RC(PMIX_SUCCESS, PMIx_Notify_event(ABUSE, &me, PMIX_RANGE_CUSTOM, &custom, 1, op_done, (void *)&done));
    while (!done) usleep(1000);
    /* affected procs of the wrong type: delivered to the handlers without an affected-proc filter */
    done = 0;
    CHECK_RC(PMIX_SUCCESS, PMIx_Notify_event(ABUSE, &me, PMIX_RANGE_PROC_LOCAL, &bad[1], 1, op_done, (void *)&done));
    while (!done) usleep(1000);
    CHECK(atomic_load(&abuse_got) == N, "the proc-local event ran %d of %d handlers", atomic_load(&abuse_got), N);
    ok = 0;
    for (int i = 0; i < N; ++i) ok += PMIx_Deregister_event_handler(refs[i], NULL, NULL) == PMIX_SUCCESS;
    CHECK(ok == N, "%d of %d handlers deregistered", ok, N);
    CHECK_RC(PMIX_ERR_NOT_FOUND, PMIx_Deregister_event_handler(refs[0], NULL, NULL));
    /* still alive: one handler, one event through the server, one fence */
    pmix_status_t late = ABUSE_LATE;
    reg(&late, 1, NULL, 0, h_abuse_late, NULL);
    CHECK_RC(PMIX_SUCCESS, PMIx_Notify_event(ABUSE_LATE, &me, PMIX_RANGE_LOCAL, NULL, 0, NULL, NULL));
    for (int i = 0; i < 500 && atomic_load(&abuse_late_got) < 1; ++i) usleep(10000);
    fence();
    CHECK(atomic_load(&abuse_late_got) >= 1, "a later event still arrives (%d)", atomic_load(&abuse_late_got));
    PMIX_INFO_DESTRUCT(&bad[0]);
    PMIX_INFO_DESTRUCT(&bad[1]);
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "chain";
    if (ptest_init(&me)) return 1;
    pmix_proc_t wild = me;
    pmix_value_t *v = NULL;
    wild.rank = PMIX_RANK_WILDCARD;
    if (PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &v) == PMIX_SUCCESS) nprocs = v->data.uint32;
    if (v) PMIX_VALUE_RELEASE(v);

    if (!strcmp(mode, "chain"))
        mode_chain();
    else if (!strcmp(mode, "ranges"))
        mode_ranges();
    else if (!strcmp(mode, "kill"))
        mode_kill();
    else if (!strcmp(mode, "abort"))
        mode_abort();
    else if (!strcmp(mode, "flood"))
        mode_flood(argc > 2 ? atol(argv[2]) : 100000);
    else if (!strcmp(mode, "latency"))
        mode_latency(argc > 2 ? atoi(argv[2]) : 2000);
    else if (!strcmp(mode, "timelimit"))
        mode_timelimit(argc > 2 ? atoi(argv[2]) : 20);
    else if (!strcmp(mode, "abuse"))
        mode_abuse();
    else if (!strcmp(mode, "nodedown"))
        mode_nodedown(argc > 2 ? atoi(argv[2]) : 60, argc > 3 ? argv[3] : NULL, argc > 4 && !strcmp(argv[4], "stopped"));
    else if (!strcmp(mode, "nodesdown"))
        mode_nodesdown(argc > 2 ? atoi(argv[2]) : 60, argc > 3 ? argv[3] : NULL);
    else if (!strcmp(mode, "signal"))
        mode_signal(argc > 2 ? argv[2] : "handler", argc > 3 ? atoi(argv[3]) : 60, argc > 4 && !strcmp(argv[4], "usr1"));
    else
        CHECK(0, "unknown mode %s", mode);
    PMIx_Finalize(NULL, 0);
    return ptest_exit();
}
