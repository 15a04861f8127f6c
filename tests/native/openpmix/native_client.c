/* An application built against the real OpenPMIx (Debian's libpmix2), never against pmixcpp's
 * library: PMIx_Init, PMIx_Get of its rank, the job size and its local rank, PMIx_Finalize.
 * Prints one line "native_client <nspace>.<rank> size=<n> lrank=<l> get_rank=<r>" and exits 0,
 * or prints what failed and exits 1. Used by tests/native/test_session.cc and
 * tests/integration/t-native.sh:
 *   gcc -o native_client native_client.c $(pkg-config --cflags --libs pmix) */
#include <pmix.h>
#include <stdio.h>

int main(void) {
    pmix_proc_t me, wild;
    pmix_value_t *v = NULL;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        printf("native_client: PMIx_Init failed: %d\n", rc);
        return 1;
    }
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    uint32_t size = 0, rank = 0;
    uint16_t lrank = 0;
    if ((rc = PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &v)) != PMIX_SUCCESS || v->type != PMIX_UINT32) {
        printf("native_client: PMIx_Get(PMIX_JOB_SIZE) failed: %d\n", rc);
        return 1;
    }
    size = v->data.uint32;
    PMIX_VALUE_RELEASE(v);
    if ((rc = PMIx_Get(&me, PMIX_RANK, NULL, 0, &v)) != PMIX_SUCCESS) {
        printf("native_client: PMIx_Get(PMIX_RANK) failed: %d\n", rc);
        return 1;
    }
    rank = v->data.rank;
    PMIX_VALUE_RELEASE(v);
    if ((rc = PMIx_Get(&me, PMIX_LOCAL_RANK, NULL, 0, &v)) != PMIX_SUCCESS || v->type != PMIX_UINT16) {
        printf("native_client: PMIx_Get(PMIX_LOCAL_RANK) failed: %d\n", rc);
        return 1;
    }
    lrank = v->data.uint16;
    PMIX_VALUE_RELEASE(v);
    printf("native_client %s.%u size=%u lrank=%u get_rank=%u\n", me.nspace, me.rank, size, lrank, rank);
    fflush(stdout);
    rc = PMIx_Finalize(NULL, 0);
    if (rc != PMIX_SUCCESS) {
        printf("native_client: PMIx_Finalize failed: %d\n", rc);
        return 1;
    }
    return 0;
}
