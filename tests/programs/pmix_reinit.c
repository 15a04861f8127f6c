/* Nested and repeated PMIx_Init / PMIx_Finalize, as OpenMPI 5 uses them for MPI-4 sessions.
 *   nested    PMIx_Init twice, PMIx_Finalize once: still initialized (same proc), and a fence with
 *             data over every rank works (the server was not told of a finalize)
 *   again     the last PMIx_Finalize, then PMIx_Init again: same namespace and rank, and data and
 *             fences work again, three times over
 *   staggered the odd ranks finalize and initialize again while the even ranks are already in a
 *             fence over every rank: the fence waits for them and completes (a rank that came
 *             back counts again)
 *   impostor  (argument "impostor") rank 1 finalizes, then a child process of it, with the same
 *             environment (rank, token), claims rank 1: refused while rank 1's process runs; then
 *             rank 1 itself connects again and fences with the others
 * Run with: srun --mpi=pmixcpp -N2 -n4 pmix_reinit [impostor] */
#include <sys/wait.h>

#include "ptest.h"

static pmix_proc_t me;
static uint32_t size;

/* Put KEY = base + rank, commit, fence with data collection, Get it from every rank. */
static void exchange(const char *key, int base) {
    pmix_value_t val;
    int32_t x = base + (int32_t)me.rank;
    PMIX_VALUE_LOAD(&val, &x, PMIX_INT32);
    CHECK_RC(PMIX_SUCCESS, PMIx_Put(PMIX_GLOBAL, key, &val));
    CHECK_RC(PMIX_SUCCESS, PMIx_Commit());
    CHECK_RC(PMIX_SUCCESS, PMIx_Fence(NULL, 0, ptest_bool_info(PMIX_COLLECT_DATA, 1), 1));
    for (pmix_rank_t r = 0; r < size; r++) {
        pmix_proc_t p = me;
        pmix_value_t *v = NULL;
        p.rank = r;
        pmix_status_t rc = PMIx_Get(&p, key, NULL, 0, &v);
        CHECK(rc == PMIX_SUCCESS && v && v->type == PMIX_INT32 && v->data.int32 == base + (int)r,
              "%s of rank %u: %s", key, r, PMIx_Error_string(rc));
        if (v) PMIX_VALUE_RELEASE(v);
    }
}

static void init_again(const char *what) {
    pmix_proc_t p;
    memset(&p, 0, sizeof(p));
    pmix_status_t rc = PMIx_Init(&p, NULL, 0);
    CHECK(rc == PMIX_SUCCESS, "%s: PMIx_Init -> %s", what, PMIx_Error_string(rc));
    CHECK(PMIx_Initialized() == 1, "%s: initialized", what);
    CHECK(strcmp(p.nspace, me.nspace) == 0 && p.rank == me.rank, "%s: same proc %s:%u (got %s:%u)", what,
          me.nspace, me.rank, p.nspace, p.rank);
}

static int impostor(void) {
    if (me.rank == 1) {
        CHECK_RC(PMIX_SUCCESS, PMIx_Finalize(NULL, 0));
        pid_t pid = fork();
        if (pid == 0) {
            pmix_proc_t p;
            pmix_status_t rc = PMIx_Init(&p, NULL, 0); /* instant on: the refusal shows at the first call */
            pmix_proc_t self = me;
            pmix_status_t frc = rc == PMIX_SUCCESS ? PMIx_Fence(&self, 1, NULL, 0) : rc;
            printf("IMPOSTOR rank 1 (pid %d): fence as rank 1 -> %s\n", (int)getpid(), PMIx_Error_string(frc));
            fflush(stdout);
            _exit(frc == PMIX_SUCCESS ? 1 : 0);
        }
        int status = 0;
        CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "another process of the step could not act as rank 1 while rank 1's process runs");
        init_again("after the impostor");
    }
    exchange("reinit.impostor", 7000);
    CHECK_RC(PMIX_SUCCESS, PMIx_Finalize(NULL, 0));
    return ptest_exit();
}

int main(int argc, char **argv) {
    if (ptest_init(&me)) return 1;
    size = ptest_job_size(&me);
    if (argc > 1 && strcmp(argv[1], "impostor") == 0) return impostor();

    /* nested */
    pmix_proc_t p2;
    CHECK_RC(PMIX_SUCCESS, PMIx_Init(&p2, NULL, 0));
    CHECK(strcmp(p2.nspace, me.nspace) == 0 && p2.rank == me.rank, "nested PMIx_Init: same proc");
    CHECK_RC(PMIX_SUCCESS, PMIx_Finalize(NULL, 0));
    CHECK(PMIx_Initialized() == 1, "nested: initialized after the inner PMIx_Finalize");
    exchange("reinit.nested", 100);

    /* again: finalize the last reference, initialize again, three times */
    for (int round = 0; round < 3; round++) {
        char what[32];
        snprintf(what, sizeof(what), "again %d", round);
        CHECK_RC(PMIX_SUCCESS, PMIx_Finalize(NULL, 0));
        CHECK(PMIx_Initialized() == 0, "%s: not initialized after the last PMIx_Finalize", what);
        init_again(what);
        char key[32];
        snprintf(key, sizeof(key), "reinit.again%d", round);
        exchange(key, 1000 * (round + 1));
    }

    /* staggered: the even ranks go straight into the fence; the odd ones first finalize (after a
     * pause, so the fence is in flight) and come back */
    if (me.rank % 2 == 1) {
        usleep(300 * 1000);
        CHECK_RC(PMIX_SUCCESS, PMIx_Finalize(NULL, 0));
        usleep(300 * 1000);
        init_again("staggered");
    }
    exchange("reinit.staggered", 5000);

    CHECK_RC(PMIX_SUCCESS, PMIx_Finalize(NULL, 0));
    CHECK_RC(PMIX_ERR_INIT, PMIx_Finalize(NULL, 0));
    return ptest_exit();
}
