/* Fences: whole job with and without data collection, subsets (evens/odds, pairs), an explicit
 * wildcard participant, and several Fence_nb in flight at once.
 * Run with: srun --mpi=pmixcpp -N1 -n8 pmix_fence */
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "ptest.h"

static pmix_proc_t me;
static uint32_t size;

static void check_values(const char *key, int expect_base) {
    for (pmix_rank_t r = 0; r < size; r++) {
        pmix_proc_t p = me;
        pmix_value_t *v = NULL;
        p.rank = r;
        pmix_status_t rc = PMIx_Get(&p, key, NULL, 0, &v);
        CHECK(rc == PMIX_SUCCESS && v && v->type == PMIX_INT32 && v->data.int32 == expect_base + (int)r,
              "%s of rank %u: %s", key, r, PMIx_Error_string(rc));
        if (v) PMIX_VALUE_RELEASE(v);
    }
}

int main(void) {
    if (ptest_init(&me)) return 1;
    size = ptest_job_size(&me);
    pmix_proc_t wild = me;
    wild.rank = PMIX_RANK_WILDCARD;

    /* 1. plain fences */
    CHECK_RC(PMIX_SUCCESS, PMIx_Fence(NULL, 0, NULL, 0));
    CHECK_RC(PMIX_SUCCESS, PMIx_Fence(&wild, 1, NULL, 0));

    /* 2. data: without collect, then with collect */
    pmix_value_t val;
    int32_t x = 100 + (int32_t)me.rank;
    PMIX_VALUE_LOAD(&val, &x, PMIX_INT32);
    CHECK_RC(PMIX_SUCCESS, PMIx_Put(PMIX_GLOBAL, "fence.a", &val));
    CHECK_RC(PMIX_SUCCESS, PMIx_Commit());
    CHECK_RC(PMIX_SUCCESS, PMIx_Fence(NULL, 0, NULL, 0));
    check_values("fence.a", 100);
    x = 200 + (int32_t)me.rank;
    PMIX_VALUE_LOAD(&val, &x, PMIX_INT32);
    CHECK_RC(PMIX_SUCCESS, PMIx_Put(PMIX_GLOBAL, "fence.b", &val));
    CHECK_RC(PMIX_SUCCESS, PMIx_Commit());
    pmix_info_t *collect = ptest_bool_info(PMIX_COLLECT_DATA, 1);
    CHECK_RC(PMIX_SUCCESS, PMIx_Fence(NULL, 0, collect, 1));
    check_values("fence.b", 200);

    /* 3. subsets: evens and odds separately, then pairs */
    pmix_proc_t *group = calloc(size, sizeof(pmix_proc_t));
    size_t n = 0;
    for (pmix_rank_t r = me.rank % 2; r < size; r += 2) {
        group[n] = me;
        group[n++].rank = r;
    }
    CHECK_RC(PMIX_SUCCESS, PMIx_Fence(group, n, NULL, 0));
    CHECK_RC(PMIX_SUCCESS, PMIx_Fence(group, n, collect, 1));
    pmix_proc_t pair[2] = {me, me};
    pair[0].rank = me.rank & ~1u;
    pair[1].rank = pair[0].rank + 1;
    size_t npair = pair[1].rank < size ? 2 : 1;
    CHECK_RC(PMIX_SUCCESS, PMIx_Fence(pair, npair, NULL, 0));
    /* the same set given in another order is the same fence */
    pmix_proc_t rpair[2] = {pair[npair - 1], pair[0]};
    CHECK_RC(PMIX_SUCCESS, PMIx_Fence(rpair, npair, NULL, 0));

    /* 4. several Fence_nb in flight: whole job (collect), evens/odds, pairs */
    struct ptest_nb st[3];
    memset(st, 0, sizeof(st));
    CHECK_RC(PMIX_SUCCESS, PMIx_Fence_nb(NULL, 0, collect, 1, ptest_nb_cb, &st[0]));
    CHECK_RC(PMIX_SUCCESS, PMIx_Fence_nb(group, n, NULL, 0, ptest_nb_cb, &st[1]));
    CHECK_RC(PMIX_SUCCESS, PMIx_Fence_nb(pair, npair, NULL, 0, ptest_nb_cb, &st[2]));
    CHECK(ptest_wait_all(st, 3, 60), "three concurrent Fence_nb completed");
    for (int i = 0; i < 3; i++) CHECK(st[i].status == PMIX_SUCCESS, "Fence_nb %d: %s", i, PMIx_Error_string(st[i].status));

    /* 5. a fence with a timeout that everybody joins succeeds */
    pmix_info_t tmo;
    int secs = 30;
    PMIX_INFO_LOAD(&tmo, PMIX_TIMEOUT, &secs, PMIX_INT);
    CHECK_RC(PMIX_SUCCESS, PMIx_Fence(NULL, 0, &tmo, 1));

    /* 6. a subset fence that only rank 0 enters times out */
    if (me.rank == 0 && size > 1) {
        pmix_proc_t two[2] = {me, me};
        two[1].rank = size - 1;
        secs = 1;
        PMIX_INFO_LOAD(&tmo, PMIX_TIMEOUT, &secs, PMIX_INT);
        CHECK_RC(PMIX_ERR_TIMEOUT, PMIx_Fence(two, 2, &tmo, 1));
    }

    free(group);
    CHECK_RC(PMIX_SUCCESS, PMIx_Fence(NULL, 0, NULL, 0));
    CHECK_RC(PMIX_SUCCESS, PMIx_Finalize(NULL, 0));
    return ptest_exit();
}
