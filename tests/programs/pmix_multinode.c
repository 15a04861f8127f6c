/* Multi-node PMIx: fences over the whole job and over subsets spanning nodes, several fences in
 * flight entered in different orders, full modex (collect), direct modex (no collect; a peer that
 * commits late; a new key of a peer whose earlier data came with a collecting fence).
 * Run with: srun --mpi=pmixcpp -N2..4 --ntasks-per-node=K pmix_multinode
 * Optional argument: number of rounds of the whole sequence (default 1), or "timeout": rank 0
 * prints READY after a first fence, then every rank enters a second one, the last rank 3 s late
 * (t-multinode-timeout.sh stops a node meanwhile); rank 0 expects PMIX_ERR_TIMEOUT. */
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ptest.h"

static pmix_proc_t me;
static uint32_t size;

static int get_int(pmix_rank_t r, const char *key, int32_t *out) {
    pmix_proc_t p = me;
    pmix_value_t *v = NULL;
    p.rank = r;
    pmix_status_t rc = PMIx_Get(&p, key, NULL, 0, &v);
    int ok = rc == PMIX_SUCCESS && v && v->type == PMIX_INT32;
    if (ok) *out = v->data.int32;
    if (v) PMIX_VALUE_RELEASE(v);
    return ok ? PMIX_SUCCESS : (rc == PMIX_SUCCESS ? PMIX_ERR_TYPE_MISMATCH : rc);
}

static void put_int(const char *key, int32_t x) {
    pmix_value_t val;
    PMIX_VALUE_LOAD(&val, &x, PMIX_INT32);
    CHECK_RC(PMIX_SUCCESS, PMIx_Put(PMIX_GLOBAL, key, &val));
}

/* after a collecting fence every rank's data must be here, without asking another node (pmix.optional):
 * key = base + rank for every rank */
static void check_all_local(const char *key, int base) {
    int bad = 0;
    pmix_info_t *opt = ptest_bool_info(PMIX_OPTIONAL, 1);
    for (pmix_rank_t r = 0; r < size; r++) {
        pmix_proc_t p = me;
        pmix_value_t *v = NULL;
        p.rank = r;
        pmix_status_t rc = PMIx_Get(&p, key, opt, 1, &v);
        int ok = rc == PMIX_SUCCESS && v && v->type == PMIX_INT32 && v->data.int32 == base + (int)r;
        if (!ok && bad++ < 4)
            CHECK(0, "%s of rank %u held locally: %s, value %d", key, r, PMIx_Error_string(rc),
                  v && v->type == PMIX_INT32 ? v->data.int32 : -1);
        if (v) PMIX_VALUE_RELEASE(v);
    }
    CHECK(bad == 0, "%s of all ranks held locally after the collecting fence (%d bad)", key, bad);
}

/* every rank of `step` (0 = all) must hold key = base + rank */
static void check_all(const char *key, int base, int step, int first) {
    int bad = 0;
    for (pmix_rank_t r = first; r < size; r += step) {
        int32_t x = -1;
        pmix_status_t rc = get_int(r, key, &x);
        if (rc != PMIX_SUCCESS || x != base + (int)r) {
            if (bad++ < 4) CHECK(0, "%s of rank %u: %s, value %d", key, r, PMIx_Error_string(rc), x);
        }
    }
    CHECK(bad == 0, "%s readable from all %s ranks (%d bad)", key, step == 2 ? (first ? "odd" : "even") : "", bad);
}

static pmix_status_t fence_over(const pmix_rank_t *ranks, int n, int collect) {
    pmix_proc_t procs[n];
    for (int i = 0; i < n; i++) {
        procs[i] = me;
        procs[i].rank = ranks[i];
    }
    return PMIx_Fence(procs, n, collect ? ptest_bool_info(PMIX_COLLECT_DATA, 1) : NULL, collect ? 1 : 0);
}

static void round_of_tests(int round) {
    char key[64];
    const pmix_rank_t r = me.rank;

    /* 1. empty fences, whole job; an empty fence is a barrier: with the last rank (on the last
     * node) entering 300 ms late, no rank leaves it before the last rank entered. The last rank
     * puts when it began to wait (its entry is 300 ms later at the earliest); where it runs on
     * the same host (virtual nodes share CLOCK_MONOTONIC), each rank compares its own exit with
     * that, after the collecting fence below. On another host the clocks differ: then each rank
     * only checks that it waited, which load can shorten (a rank that leaves the fence before
     * this one is scheduled late). */
    CHECK_RC(PMIX_SUCCESS, PMIx_Fence(NULL, 0, NULL, 0));
    CHECK_RC(PMIX_SUCCESS, PMIx_Fence(NULL, 0, NULL, 0));
    double barrier_exit_ms = -1, barrier_waited_ms = -1;
    if (round == 0 && size > 1) {
        struct timespec a, b;
        if (r == size - 1) {
            char host[256] = "";
            gethostname(host, sizeof(host) - 1);
            clock_gettime(CLOCK_MONOTONIC, &a);
            pmix_value_t v;
            v.type = PMIX_DOUBLE;
            v.data.dval = a.tv_sec * 1e3 + a.tv_nsec / 1e6;
            CHECK_RC(PMIX_SUCCESS, PMIx_Put(PMIX_GLOBAL, "mn.late.t0", &v));
            v.type = PMIX_STRING;
            v.data.string = host;
            CHECK_RC(PMIX_SUCCESS, PMIx_Put(PMIX_GLOBAL, "mn.late.host", &v));
            usleep(300000);
        }
        clock_gettime(CLOCK_MONOTONIC, &a);
        CHECK_RC(PMIX_SUCCESS, PMIx_Fence(NULL, 0, NULL, 0));
        clock_gettime(CLOCK_MONOTONIC, &b);
        barrier_exit_ms = b.tv_sec * 1e3 + b.tv_nsec / 1e6;
        barrier_waited_ms = (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6;
    }

    /* 2. full modex: put, commit, collecting fence; every rank's data is then local */
    snprintf(key, sizeof(key), "mn.full.%d", round);
    put_int(key, 1000 + (int)r);
    put_int("mn.same", 10000 * (round + 1) + (int)r); /* one key, a new value every round */
    CHECK_RC(PMIX_SUCCESS, PMIx_Commit());
    CHECK_RC(PMIX_SUCCESS, PMIx_Fence(NULL, 0, ptest_bool_info(PMIX_COLLECT_DATA, 1), 1));
    check_all(key, 1000, 1, 0);
    if (barrier_exit_ms >= 0 && r != size - 1) {
        pmix_proc_t last = me;
        last.rank = size - 1;
        pmix_value_t *t0 = NULL, *host = NULL;
        char mine[256] = "";
        gethostname(mine, sizeof(mine) - 1);
        CHECK_RC(PMIX_SUCCESS, PMIx_Get(&last, "mn.late.t0", NULL, 0, &t0));
        CHECK_RC(PMIX_SUCCESS, PMIx_Get(&last, "mn.late.host", NULL, 0, &host));
        if (t0 && host && host->type == PMIX_STRING && strcmp(host->data.string, mine) == 0)
            CHECK(barrier_exit_ms >= t0->data.dval + 300.0,
                  "left the empty fence %.1f ms before the last rank entered it (300 ms after %.1f)",
                  t0->data.dval + 300.0 - barrier_exit_ms, t0->data.dval);
        else
            CHECK(barrier_waited_ms >= 250, "empty fence left after %.1f ms (the last rank entered it 300 ms late)",
                  barrier_waited_ms);
        if (t0) PMIX_VALUE_RELEASE(t0);
        if (host) PMIX_VALUE_RELEASE(host);
    }
    /* this round's data, the earlier rounds' and the value that replaced the last round's, all
     * without asking another node: what a collecting fence brings stays */
    check_all_local(key, 1000);
    check_all_local("mn.same", 10000 * (round + 1));
    for (int k = 0; k < round; k++) {
        snprintf(key, sizeof(key), "mn.full.%d", k);
        check_all_local(key, 1000);
    }
    snprintf(key, sizeof(key), "mn.full.%d", round);
    /* ... and after a fence that collects nothing (OpenMPI's barrier at the end of MPI_Init),
     * still without asking anyone */
    CHECK_RC(PMIX_SUCCESS, PMIx_Fence(NULL, 0, NULL, 0));
    check_all_local(key, 1000);
    check_all_local("mn.same", 10000 * (round + 1));

    /* 3. direct modex: a NEW key of peers whose earlier data came with the collecting fence;
     * odd ranks commit late, so some Gets wait for the commit */
    snprintf(key, sizeof(key), "mn.direct.%d", round);
    if (r % 2) usleep(200000);
    put_int(key, 2000 + (int)r);
    CHECK_RC(PMIX_SUCCESS, PMIx_Commit());
    check_all(key, 2000, 1, 0);
    CHECK_RC(PMIX_SUCCESS, PMIx_Fence(NULL, 0, NULL, 0));

    /* 4. fence without collect, then direct modex of all ranks */
    snprintf(key, sizeof(key), "mn.nocollect.%d", round);
    put_int(key, 3000 + (int)r);
    CHECK_RC(PMIX_SUCCESS, PMIx_Commit());
    CHECK_RC(PMIX_SUCCESS, PMIx_Fence(NULL, 0, NULL, 0));
    check_all(key, 3000, 1, 0);

    /* 5. subsets: evens / odds (span every node) and pairs across the job, collecting */
    snprintf(key, sizeof(key), "mn.sub.%d", round);
    put_int(key, 4000 + (int)r);
    CHECK_RC(PMIX_SUCCESS, PMIx_Commit());
    {
        pmix_rank_t set[size];
        int n = 0;
        for (pmix_rank_t q = r % 2; q < size; q += 2) set[n++] = q;
        CHECK_RC(PMIX_SUCCESS, fence_over(set, n, 1));
        check_all(key, 4000, 2, (int)(r % 2));
        /* pairs r <-> r + size/2 (crossing nodes); with an odd size the last rank sits out */
        pmix_rank_t half = size / 2, partner = r;
        if (r < half) partner = r + half;
        else if (r < 2 * half) partner = r - half;
        if (partner != r) {
            pmix_rank_t pair[2] = {r < partner ? r : partner, r < partner ? partner : r};
            CHECK_RC(PMIX_SUCCESS, fence_over(pair, 2, 0));
        }
    }

    /* 6. several fences in flight, entered in different orders: evens enter (evens, all),
     * odds enter (all, odds) */
    {
        pmix_proc_t procs[size], wild = me;
        int n = 0;
        for (pmix_rank_t q = r % 2; q < size; q += 2) {
            procs[n] = me;
            procs[n++].rank = q;
        }
        wild.rank = PMIX_RANK_WILDCARD;
        struct ptest_nb st[2] = {{0, 0}, {0, 0}};
        if (r % 2 == 0) {
            CHECK_RC(PMIX_SUCCESS, PMIx_Fence_nb(procs, n, NULL, 0, ptest_nb_cb, &st[0]));
            CHECK_RC(PMIX_SUCCESS, PMIx_Fence_nb(&wild, 1, NULL, 0, ptest_nb_cb, &st[1]));
        } else {
            CHECK_RC(PMIX_SUCCESS, PMIx_Fence_nb(&wild, 1, NULL, 0, ptest_nb_cb, &st[1]));
            CHECK_RC(PMIX_SUCCESS, PMIx_Fence_nb(procs, n, NULL, 0, ptest_nb_cb, &st[0]));
        }
        int done = ptest_wait_all(st, 2, 60);
        CHECK(done && st[0].status == PMIX_SUCCESS && st[1].status == PMIX_SUCCESS,
              "concurrent fences: done %d, %s, %s", done, PMIx_Error_string(st[0].status),
              PMIx_Error_string(st[1].status));
    }
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 1;
    if (ptest_init(&me)) return 1;
    size = ptest_job_size(&me);
    pmix_status_t rc;

    if (argc > 1 && strcmp(argv[1], "timeout") == 0) {
        CHECK_RC(PMIX_SUCCESS, PMIx_Fence(NULL, 0, NULL, 0));
        if (me.rank == 0) {
            printf("READY\n");
            fflush(stdout);
        }
        if (me.rank == size - 1) sleep(3);
        rc = PMIx_Fence(NULL, 0, NULL, 0);
        if (me.rank == 0) {
            CHECK(rc == PMIX_ERR_TIMEOUT, "fence with a stopped node: %s", PMIx_Error_string(rc));
            if (rc == PMIX_ERR_TIMEOUT) printf("TIMEOUT-OK rank 0\n");
        }
        fflush(stdout);
        _exit(0);
    }
    for (int i = 0; i < rounds; i++) round_of_tests(i);

    CHECK_RC(PMIX_SUCCESS, PMIx_Fence(NULL, 0, NULL, 0));
    CHECK_RC(PMIX_SUCCESS, PMIx_Finalize(NULL, 0));
    return ptest_exit();
}
