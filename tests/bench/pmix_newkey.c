/* The orders in which mpi/pmix_v4 was seen to lose data (TESTBED.md): after a collecting
 * fence, a direct-modex Get of a NEW key from a peer on another node; and the collecting
 * fence itself (run with the tree algorithm forced). Exits 0 and prints NEWKEY-OK when every
 * rank got every value right. Built against the standard pmix.h; same binary for both plugins. */
#include <pmix.h>
#include <stdio.h>
#include <string.h>

static int check(const pmix_proc_t *p, const char *key, uint32_t want) {
    pmix_value_t *v = NULL;
    pmix_info_t t;
    int tmo = 30;
    PMIX_INFO_LOAD(&t, PMIX_TIMEOUT, &tmo, PMIX_INT);
    pmix_status_t rc = PMIx_Get(p, key, &t, 1, &v);
    int ok = rc == PMIX_SUCCESS && v && v->type == PMIX_UINT32 && v->data.uint32 == want;
    if (!ok) fprintf(stderr, "rank ?: Get %s of rank %u: %s\n", key, p->rank, PMIx_Error_string(rc));
    if (v) PMIX_VALUE_RELEASE(v);
    return ok;
}

int main(void) {
    pmix_proc_t me, wild, peer;
    pmix_value_t v, *sz = NULL;
    pmix_info_t collect;
    bool yes = true;
    if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) return 2;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    if (PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &sz) != PMIX_SUCCESS) return 2;
    uint32_t size = sz->data.uint32, lsize = 1;
    PMIX_VALUE_RELEASE(sz);
    if (PMIx_Get(&wild, PMIX_LOCAL_SIZE, NULL, 0, &sz) == PMIX_SUCCESS) {
        lsize = sz->data.uint32;
        PMIX_VALUE_RELEASE(sz);
    }
    /* a peer on another node when there is one (block distribution) */
    PMIX_LOAD_PROCID(&peer, me.nspace, (me.rank + lsize) % size);

    v.type = PMIX_UINT32;
    v.data.uint32 = 1000 + me.rank;
    PMIx_Put(PMIX_GLOBAL, "nk.first", &v);
    PMIx_Commit();
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    int first = PMIx_Fence(NULL, 0, &collect, 1) == PMIX_SUCCESS;
    for (uint32_t r = 0; r < size; r++) {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, me.nspace, r);
        first &= check(&p, "nk.first", 1000 + r);
    }
    v.data.uint32 = 2000 + me.rank;
    PMIx_Put(PMIX_GLOBAL, "nk.second", &v);
    PMIx_Commit();
    int second = check(&peer, "nk.second", 2000 + peer.rank);
    PMIx_Fence(NULL, 0, NULL, 0);
    PMIx_Finalize(NULL, 0);
    /* COLLECT: every rank's data arrived through the collecting fence; NEWKEY: the new key came by direct modex */
    printf("COLLECT-%s rank %u\nNEWKEY-%s rank %u\n", first ? "OK" : "FAIL", me.rank, second ? "OK" : "FAIL", me.rank);
    return first && second ? 0 : 1;
}
