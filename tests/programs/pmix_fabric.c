/* PMIx_Fabric_register / _update / _deregister (and _nb) in an application process under
 * srun --mpi=pmixcpp: the step's server hands over the cost matrix of Slurm's switch topology.
 * Prints "rank R cost I: c0 c1 ..." for every row, for the test to check the costs.
 * Argument "none": the cluster has no switch topology, registration must say so.
 * Argument "update FILE": register, print the size, wait (at most 120 s) until FILE exists, then
 * PMIx_Fabric_update and print the new size and matrix (the test changes the topology meanwhile).
 * Argument "event": the same, but wait (at most 120 s) for PMIX_FABRIC_UPDATED instead of a file;
 * the fabric must still show the old matrix until PMIx_Fabric_update. */
#include <pthread.h>
#include <unistd.h>

#include <pmix_server.h>

#include "ptest.h"

#ifndef PMIX_NETWORK_PLANE /* the standard's key; OpenPMIx 4.2 headers lack it */
#define PMIX_NETWORK_PLANE "pmix.net.plane"
#endif
#ifndef PMIX_FABRIC_NUM_VERTICES /* OpenPMIx 4.2 spells "pmix.fab.nverts" PMIX_FABRIC_NUM_DEVICES */
#define PMIX_FABRIC_NUM_VERTICES PMIX_FABRIC_NUM_DEVICES
#endif

__attribute__((unused)) static void unused_helpers(void) { (void)ptest_bool_info; }

struct wait_op {
    pthread_mutex_t m;
    pthread_cond_t cv;
    int done;
    pmix_status_t status;
};

static void op_done(pmix_status_t status, void *cbdata) {
    struct wait_op *w = cbdata;
    pthread_mutex_lock(&w->m);
    w->status = status;
    w->done = 1;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->m);
}

static pmix_status_t wait_for(struct wait_op *w, pmix_status_t rc) {
    if (rc == PMIX_OPERATION_SUCCEEDED) return PMIX_SUCCESS;
    if (rc != PMIX_SUCCESS) return rc;
    pthread_mutex_lock(&w->m);
    while (!w->done) pthread_cond_wait(&w->cv, &w->m);
    pthread_mutex_unlock(&w->m);
    w->done = 0;
    return w->status;
}

static pthread_mutex_t ev_lock = PTHREAD_MUTEX_INITIALIZER;
static int ev_count;
static char ev_plane[64];
static void on_fabric_updated(size_t ref, pmix_status_t st, const pmix_proc_t *src, pmix_info_t info[], size_t ni,
                              pmix_info_t *results, size_t nres, pmix_event_notification_cbfunc_fn_t cb, void *cbd) {
    pthread_mutex_lock(&ev_lock);
    if (st == PMIX_FABRIC_UPDATED) ++ev_count;
    for (size_t i = 0; i < ni; ++i)
        if (strcmp(info[i].key, PMIX_FABRIC_PLANE) == 0 && info[i].value.type == PMIX_STRING)
            snprintf(ev_plane, sizeof ev_plane, "%s", info[i].value.data.string);
    pthread_mutex_unlock(&ev_lock);
    if (cb) cb(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbd);
}
static void reg_done(pmix_status_t status, size_t ref, void *cbdata) { op_done(status, cbdata); }

static const pmix_info_t *find(const pmix_fabric_t *f, const char *key) {
    for (size_t i = 0; i < f->ninfo; ++i)
        if (strcmp(f->info[i].key, key) == 0) return &f->info[i];
    return NULL;
}

int main(int argc, char **argv) {
    pmix_proc_t me;
    int expect_none = argc > 1 && strcmp(argv[1], "none") == 0;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        printf("FAIL rank -1: PMIx_Init -> %s\nRESULT-FAIL rank -1: 1 failure(s)\n", PMIx_Error_string(rc));
        return 1;
    }
    ptest_rank = (int)me.rank;
    struct wait_op w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, PMIX_ERROR};

    CHECK_RC(PMIX_ERR_BAD_PARAM, PMIx_Fabric_register(NULL, NULL, 0));
    CHECK_RC(PMIX_ERR_BAD_PARAM, PMIx_Fabric_update(NULL));
    CHECK_RC(PMIX_ERR_BAD_PARAM, PMIx_Fabric_deregister(NULL));

    pmix_fabric_t f;
    memset(&f, 0, sizeof f);
    if (expect_none) {
        CHECK_RC(PMIX_ERR_NOT_AVAILABLE, PMIx_Fabric_register(&f, NULL, 0));
        CHECK(f.info == NULL && f.module == NULL, "a refused registration leaves the fabric untouched");
        PMIx_Finalize(NULL, 0);
        return ptest_exit();
    }

    int by_event = argc > 1 && strcmp(argv[1], "event") == 0;
    if ((argc > 2 && strcmp(argv[1], "update") == 0) || by_event) {
        if (by_event) {
            pmix_status_t code = PMIX_FABRIC_UPDATED;
            CHECK_RC(PMIX_SUCCESS, wait_for(&w, PMIx_Register_event_handler(&code, 1, NULL, 0, on_fabric_updated,
                                                                            reg_done, &w)));
        }
        CHECK_RC(PMIX_SUCCESS, PMIx_Fabric_register(&f, NULL, 0));
        const pmix_info_t *v = find(&f, PMIX_FABRIC_NUM_VERTICES);
        size_t before = v ? v->value.data.size : 0;
        printf("rank %u before update: %zu vertices\n", me.rank, before);
        fflush(stdout);
        if (by_event) {
            int got = 0;
            for (int i = 0; i < 1200 && !got; ++i) {
                pthread_mutex_lock(&ev_lock);
                got = ev_count;
                pthread_mutex_unlock(&ev_lock);
                if (!got) usleep(100000);
            }
            CHECK(got == 1, "PMIX_FABRIC_UPDATED received %d time(s), plane '%s'", got, ev_plane);
            CHECK(strcmp(ev_plane, "default") == 0, "the event names plane '%s'", ev_plane);
            printf("rank %u got PMIX_FABRIC_UPDATED\n", me.rank);
            v = find(&f, PMIX_FABRIC_NUM_VERTICES);
            CHECK(v && v->value.data.size == before, "before PMIx_Fabric_update the fabric keeps %zu vertices", before);
        } else {
            for (int i = 0; i < 1200 && access(argv[2], F_OK) != 0; ++i) usleep(100000);
        }
        CHECK_RC(PMIX_SUCCESS, PMIx_Fabric_update(&f));
        v = find(&f, PMIX_FABRIC_NUM_VERTICES);
        const pmix_info_t *m = find(&f, PMIX_FABRIC_COST_MATRIX);
        size_t n = v ? v->value.data.size : 0;
        printf("rank %u after update: %zu vertices\n", me.rank, n);
        uint16_t **rows = m ? (uint16_t **)m->value.data.ptr : NULL;
        for (size_t i = 0; rows && i < n; ++i) {
            printf("rank %u updated cost %zu:", me.rank, i);
            for (size_t j = 0; j < n; ++j) printf(" %u", rows[i][j]);
            printf("\n");
        }
        CHECK_RC(PMIX_SUCCESS, PMIx_Fabric_deregister(&f));
        PMIx_Finalize(NULL, 0);
        return ptest_exit();
    }

    pmix_info_t plane;
    memset(&plane, 0, sizeof plane);
    PMIx_Info_load(&plane, PMIX_NETWORK_PLANE, "nosuchplane", PMIX_STRING);
    CHECK_RC(PMIX_ERR_NOT_FOUND, PMIx_Fabric_register(&f, &plane, 1));
    PMIX_INFO_DESTRUCT(&plane);

    PMIx_Info_load(&plane, PMIX_NETWORK_PLANE, "default", PMIX_STRING);
    CHECK_RC(PMIX_SUCCESS, PMIx_Fabric_register(&f, &plane, 1));
    PMIX_INFO_DESTRUCT(&plane);
    CHECK_RC(PMIX_ERR_BAD_PARAM, PMIx_Fabric_register(&f, NULL, 0)); /* already registered */

    const pmix_info_t *nv = find(&f, PMIX_FABRIC_NUM_VERTICES);
    const pmix_info_t *cm = find(&f, PMIX_FABRIC_COST_MATRIX);
    const pmix_info_t *pl = find(&f, PMIX_FABRIC_PLANE);
    CHECK(nv != NULL && nv->value.type == PMIX_SIZE, "PMIX_FABRIC_NUM_VERTICES is a size");
    CHECK(cm != NULL && cm->value.type == PMIX_POINTER, "PMIX_FABRIC_COST_MATRIX is a pointer");
    CHECK(pl != NULL && pl->value.type == PMIX_STRING && strcmp(pl->value.data.string, "default") == 0,
          "PMIX_FABRIC_PLANE is default");
    CHECK(f.name != NULL && strcmp(f.name, "default") == 0, "fabric name is the plane");
    size_t n = nv ? nv->value.data.size : 0;
    uint16_t **rows = cm ? (uint16_t **)cm->value.data.ptr : NULL;
    printf("rank %u fabric: %zu vertices\n", me.rank, n);
    int diag_zero = 1, symmetric = 1;
    for (size_t i = 0; rows && i < n; ++i) {
        char line[4096];
        int off = snprintf(line, sizeof line, "rank %u cost %zu:", me.rank, i);
        for (size_t j = 0; j < n && off < (int)sizeof line - 8; ++j) off += snprintf(line + off, sizeof line - off, " %u", rows[i][j]);
        printf("%s\n", line);
        if (rows[i][i] != 0) diag_zero = 0;
        for (size_t j = 0; j < n; ++j)
            if (rows[i][j] != rows[j][i]) symmetric = 0;
    }
    CHECK(n > 0 && diag_zero, "the diagonal is 0");
    CHECK(symmetric, "a tree with one speed gives a symmetric matrix");

    /* Update: asks Slurm again; the same topology gives the same matrix. */
    uint16_t before = n > 1 && rows ? rows[0][n - 1] : 0;
    CHECK_RC(PMIX_SUCCESS, PMIx_Fabric_update(&f));
    nv = find(&f, PMIX_FABRIC_NUM_VERTICES);
    cm = find(&f, PMIX_FABRIC_COST_MATRIX);
    CHECK(nv && nv->value.data.size == n, "update keeps %zu vertices", n);
    rows = cm ? (uint16_t **)cm->value.data.ptr : NULL;
    CHECK(rows && (n < 2 || rows[0][n - 1] == before), "update keeps the costs");
    CHECK_RC(PMIX_SUCCESS, wait_for(&w, PMIx_Fabric_update_nb(&f, op_done, &w)));

    /* A second registration, non-blocking. */
    pmix_fabric_t g;
    memset(&g, 0, sizeof g);
    CHECK_RC(PMIX_SUCCESS, wait_for(&w, PMIx_Fabric_register_nb(&g, NULL, 0, op_done, &w)));
    CHECK(g.index != f.index, "two registrations have distinct indices");
    const pmix_info_t *gnv = find(&g, PMIX_FABRIC_NUM_VERTICES);
    CHECK(gnv && gnv->value.data.size == n, "the second registration has the same size");

    /* Deregister frees what registration allocated. */
    CHECK_RC(PMIX_SUCCESS, PMIx_Fabric_deregister(&f));
    CHECK(f.info == NULL && f.ninfo == 0 && f.module == NULL && f.name == NULL, "deregister frees the fabric");
    CHECK_RC(PMIX_ERR_BAD_PARAM, PMIx_Fabric_deregister(&f));
    CHECK_RC(PMIX_ERR_BAD_PARAM, PMIx_Fabric_update(&f));
    rc = PMIx_Fabric_deregister_nb(&g, op_done, &w);
    CHECK(rc == PMIX_OPERATION_SUCCEEDED || wait_for(&w, rc) == PMIX_SUCCESS, "deregister_nb -> %s",
          PMIx_Error_string(rc));
    CHECK(g.info == NULL && g.module == NULL, "deregister_nb frees the fabric");

    CHECK_RC(PMIX_SUCCESS, PMIx_Finalize(NULL, 0));
    return ptest_exit();
}
