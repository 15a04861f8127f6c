/* Job control a process asks for itself, and process monitoring. One mode per run (argv[1]):
 *   checkpoint  even ranks register a checkpoint method "signal SIGUSR2", odd ranks "event
 *               PMIX_JCTRL_CHECKPOINT" (with a handler); after a fence rank 0 asks for
 *               PMIX_JOB_CTRL_CHECKPOINT of every rank. Each rank must be told by its own method
 *               within 10 s, and only by it. Then errors: a bad signal, a method of the wrong type,
 *               file monitoring (not supported), a checkpoint of an unknown rank.
 *   heartbeat   every rank asks for a heartbeat monitor (1 s, 1 drop, PMIX_MONITOR_HEARTBEAT_ALERT)
 *               and registers for the alert; every rank but the last beats every 200 ms for 4 s.
 *               Every rank must see exactly one alert, naming the last rank and the monitor's id.
 *               The monitors are then cancelled (a second cancel: PMIX_ERR_NOT_FOUND).
 *   timelimit   every rank registers a checkpoint by event and waits (argv[2] s) for the server
 *               to use it before the job's time limit (srun -t 1, SLURM_PMIXCPP_TIMELIMITALERT).
 * Prints RESULT-PASS/RESULT-FAIL per rank. Run with: srun --mpi=pmixcpp -N2 -n4 pmix_jctrl <mode> */
#include <signal.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include "ptest.h"

static pmix_proc_t me;
static uint32_t nprocs = 1;
static atomic_int got_signal, got_event, alerts, alert_wrong;
static char alert_id[64];

static void on_usr2(int sig) { atomic_fetch_add(&got_signal, 1); }

static void on_checkpoint(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[], size_t ninfo,
                          pmix_info_t results[], size_t nresults, pmix_event_notification_cbfunc_fn_t cbfunc,
                          void *cbdata) {
    if (status == PMIX_JCTRL_CHECKPOINT) atomic_fetch_add(&got_event, 1);
    if (cbfunc) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static void on_alert(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[], size_t ninfo,
                     pmix_info_t results[], size_t nresults, pmix_event_notification_cbfunc_fn_t cbfunc,
                     void *cbdata) {
    int about_last = 0;
    for (size_t i = 0; i < ninfo; i++) {
        if (strcmp(info[i].key, PMIX_EVENT_AFFECTED_PROC) == 0 && info[i].value.type == PMIX_PROC)
            about_last = info[i].value.data.proc->rank == nprocs - 1;
        if (strcmp(info[i].key, PMIX_MONITOR_ID) == 0 && info[i].value.type == PMIX_STRING)
            snprintf(alert_id, sizeof(alert_id), "%s", info[i].value.data.string);
    }
    if (status == PMIX_MONITOR_HEARTBEAT_ALERT && about_last) atomic_fetch_add(&alerts, 1);
    else atomic_fetch_add(&alert_wrong, 1);
    if (cbfunc) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static volatile int reg_done;
static void reg_cb(pmix_status_t st, size_t ref, void *cbdata) { reg_done = 1; }
static void reg(pmix_status_t code, pmix_notification_fn_t fn) {
    reg_done = 0;
    CHECK_RC(PMIX_SUCCESS, PMIx_Register_event_handler(&code, 1, NULL, 0, fn, reg_cb, NULL));
    for (int i = 0; i < 10000 && !reg_done; i++) usleep(1000);
}

static void fence(void) {
    pmix_proc_t all = me;
    all.rank = PMIX_RANK_WILDCARD;
    CHECK_RC(PMIX_SUCCESS, PMIx_Fence(&all, 1, NULL, 0));
}

/* PMIX_JOB_CTRL_CHECKPOINT_METHOD with a signal (sig > 0) and/or an event. */
static pmix_status_t register_method(int sig, int event) {
    pmix_info_t method[2], info;
    size_t n = 0;
    pmix_status_t code = PMIX_JCTRL_CHECKPOINT;
    memset(method, 0, sizeof(method));
    if (sig > 0) PMIx_Info_load(&method[n++], PMIX_JOB_CTRL_CHECKPOINT_SIGNAL, &sig, PMIX_INT);
    if (event) PMIx_Info_load(&method[n++], PMIX_JOB_CTRL_CHECKPOINT_EVENT, &code, PMIX_STATUS);
    pmix_data_array_t darray = {.type = PMIX_INFO, .size = n, .array = method};
    memset(&info, 0, sizeof(info));
    PMIx_Info_load(&info, PMIX_JOB_CTRL_CHECKPOINT_METHOD, &darray, PMIX_DATA_ARRAY);
    pmix_status_t rc = PMIx_Job_control(NULL, 0, &info, 1, NULL, NULL);
    PMIX_INFO_DESTRUCT(&info);
    return rc;
}

static void wait_for(atomic_int *counter, int want, int seconds) {
    for (int i = 0; i < seconds * 100 && atomic_load(counter) < want; i++) usleep(10000);
}

static void mode_checkpoint(void) {
    const int by_signal = me.rank % 2 == 0;
    signal(SIGUSR2, on_usr2);
    if (!by_signal) reg(PMIX_JCTRL_CHECKPOINT, on_checkpoint);
    CHECK_RC(PMIX_SUCCESS, register_method(by_signal ? SIGUSR2 : 0, !by_signal));
    fence();
    if (me.rank == 0) {
        pmix_info_t ck;
        memset(&ck, 0, sizeof(ck));
        PMIx_Info_load(&ck, PMIX_JOB_CTRL_CHECKPOINT, "ckpt-1", PMIX_STRING);
        CHECK_RC(PMIX_SUCCESS, PMIx_Job_control(NULL, 0, &ck, 1, NULL, NULL));
        /* a rank beyond the job */
        pmix_proc_t bad = me;
        bad.rank = nprocs + 5;
        CHECK_RC(PMIX_ERR_BAD_PARAM, PMIx_Job_control(&bad, 1, &ck, 1, NULL, NULL));
        PMIX_INFO_DESTRUCT(&ck);
    }
    wait_for(by_signal ? &got_signal : &got_event, 1, 10);
    usleep(300000); /* anything extra would arrive now */
    CHECK(atomic_load(by_signal ? &got_signal : &got_event) == 1, "told to checkpoint once by %s (signal %d, event %d)",
          by_signal ? "signal" : "event", atomic_load(&got_signal), atomic_load(&got_event));
    CHECK(atomic_load(by_signal ? &got_event : &got_signal) == 0, "not told by the other method");
    printf("rank %u checkpoint by %s: signal %d event %d\n", me.rank, by_signal ? "signal" : "event",
           atomic_load(&got_signal), atomic_load(&got_event));

    /* refusals */
    CHECK_RC(PMIX_ERR_BAD_PARAM, register_method(99, 0));
    pmix_info_t wrong;
    memset(&wrong, 0, sizeof(wrong));
    PMIx_Info_load(&wrong, PMIX_JOB_CTRL_CHECKPOINT_METHOD, "signal", PMIX_STRING);
    CHECK_RC(PMIX_ERR_BAD_PARAM, PMIx_Job_control(NULL, 0, &wrong, 1, NULL, NULL));
    PMIX_INFO_DESTRUCT(&wrong);
    pmix_info_t file;
    memset(&file, 0, sizeof(file));
    PMIx_Info_load(&file, PMIX_MONITOR_FILE, "/tmp/x", PMIX_STRING);
    CHECK_RC(PMIX_ERR_NOT_SUPPORTED, PMIx_Process_monitor(&file, PMIX_MONITOR_FILE_ALERT, NULL, 0, NULL, NULL));
    PMIX_INFO_DESTRUCT(&file);
    CHECK_RC(PMIX_ERR_BAD_PARAM, PMIx_Process_monitor(NULL, PMIX_MONITOR_FILE_ALERT, NULL, 0, NULL, NULL));
    fence();
}

static void mode_heartbeat(void) {
    reg(PMIX_MONITOR_HEARTBEAT_ALERT, on_alert);
    pmix_info_t mon, dirs[3];
    uint32_t period = 1, drops = 1;
    memset(&mon, 0, sizeof(mon));
    memset(dirs, 0, sizeof(dirs));
    PMIx_Info_load(&mon, PMIX_MONITOR_HEARTBEAT, NULL, PMIX_POINTER);
    PMIx_Info_load(&dirs[0], PMIX_MONITOR_ID, "beat-test", PMIX_STRING);
    PMIx_Info_load(&dirs[1], PMIX_MONITOR_HEARTBEAT_TIME, &period, PMIX_UINT32);
    PMIx_Info_load(&dirs[2], PMIX_MONITOR_HEARTBEAT_DROPS, &drops, PMIX_UINT32);
    CHECK_RC(PMIX_SUCCESS, PMIx_Process_monitor(&mon, PMIX_MONITOR_HEARTBEAT_ALERT, dirs, 3, NULL, NULL));
    /* no period: refused */
    CHECK_RC(PMIX_ERR_BAD_PARAM, PMIx_Process_monitor(&mon, PMIX_MONITOR_HEARTBEAT_ALERT, dirs, 1, NULL, NULL));
    fence();
    for (int i = 0; i < 20; i++) {
        if (me.rank != nprocs - 1) PMIx_Heartbeat();
        usleep(200000);
    }
    wait_for(&alerts, 1, 3);
    fence();
    CHECK(atomic_load(&alerts) == 1 && atomic_load(&alert_wrong) == 0,
          "one alert about the silent rank %u, none about others (%d, %d wrong)", nprocs - 1, atomic_load(&alerts),
          atomic_load(&alert_wrong));
    CHECK(strcmp(alert_id, "beat-test") == 0, "the alert names the monitor (%s)", alert_id);
    printf("rank %u heartbeat alerts %d about rank %u (monitor %s)\n", me.rank, atomic_load(&alerts), nprocs - 1,
           alert_id);
    pmix_info_t cancel;
    memset(&cancel, 0, sizeof(cancel));
    PMIx_Info_load(&cancel, PMIX_MONITOR_CANCEL, "beat-test", PMIX_STRING);
    CHECK_RC(PMIX_SUCCESS, PMIx_Process_monitor(&cancel, PMIX_SUCCESS, NULL, 0, NULL, NULL));
    CHECK_RC(PMIX_ERR_NOT_FOUND, PMIx_Process_monitor(&cancel, PMIX_SUCCESS, NULL, 0, NULL, NULL));
    PMIX_INFO_DESTRUCT(&cancel);
    for (int i = 0; i < 3; i++) PMIX_INFO_DESTRUCT(&dirs[i]);
    fence();
}

static void mode_timelimit(int seconds) {
    reg(PMIX_JCTRL_CHECKPOINT, on_checkpoint);
    CHECK_RC(PMIX_SUCCESS, register_method(0, 1));
    wait_for(&got_event, 1, seconds);
    CHECK(atomic_load(&got_event) == 1, "checkpoint event before the time limit (%d)", atomic_load(&got_event));
    printf("rank %u time-limit checkpoint events %d\n", me.rank, atomic_load(&got_event));
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "checkpoint";
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (ptest_init(&me)) return 1;
    nprocs = ptest_job_size(&me);
    if (strcmp(mode, "checkpoint") == 0) mode_checkpoint();
    else if (strcmp(mode, "heartbeat") == 0) mode_heartbeat();
    else if (strcmp(mode, "timelimit") == 0) mode_timelimit(argc > 2 ? atoi(argv[2]) : 20);
    else CHECK(0, "unknown mode %s", mode);
    CHECK_RC(PMIX_SUCCESS, PMIx_Finalize(NULL, 0));
    return ptest_exit();
}
