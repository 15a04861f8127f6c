/* The client of conn_server.c: PMIx_Init, PMIx_Get(PMIX_JOB_SIZE), PMIx_Finalize. */
#include <pmix.h>
#include <stdio.h>
int main(void) {
    pmix_proc_t me, wild; pmix_value_t *v = NULL;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) { printf("init %d\n", rc); return 1; }
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    rc = PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &v);
    printf("client %s.%u init ok, job size rc=%d val=%u\n", me.nspace, me.rank, rc, rc == 0 ? v->data.uint32 : 0);
    rc = PMIx_Finalize(NULL, 0);
    printf("finalize %d\n", rc);
    return 0;
}
