/* An application on the real OpenPMIx (Debian's libpmix2), never pmixcpp's library: PMIx_Init,
 * PMIx_Put of "test.key" = "value-<rank>" (GLOBAL), PMIx_Commit, PMIx_Fence collecting data, a
 * PMIx_Get of the next rank's key, a fence without data, PMIx_Finalize. Prints
 * "native_modex <nspace>.<rank> got <value>" and exits 0, or prints what failed and exits 1.
 * With the argument "event": rank 0 registers a handler for the code -3005, a fence, rank 1
 * notifies -3005 to the namespace; rank 0 prints "native_modex event <code> from rank <r>" once its
 * handler ran (10 s at most), then a fence and PMIx_Finalize.
 * With the argument "abort": PMIx_Init, then PMIx_Abort(7, "native abort") on the whole namespace,
 * prints "native_modex aborted <status>" and exits 0.
 * With the argument "group": every rank constructs the group "g1" of all ranks asking for a
 * context id, prints "native_modex group <rank> ctxid <id> members <n>" (n only where the client
 * release reports the membership, else -1), destructs it, a fence, PMIx_Finalize.
 * With the argument "query": PMIx_Query_info of PMIX_QUERY_NAMESPACES, PMIX_QUERY_NUM_PSETS and
 * PMIX_QUERY_PSET_NAMES with PMIX_QUERY_REFRESH_CACHE (sent to the server, as OpenMPI 5's
 * sessions do), and PMIX_QUERY_PSET_MEMBERSHIP of mpi://WORLD, prints
 * "native_modex query <rank> status <rc> nspaces <s> npsets <n> psets <s> world <members>",
 * then PMIx_Log of one line to stderr and prints "native_modex log <rc>".
 * Used by tests/native/test_server_native.cc against the real server:
 *   gcc -o native_modex native_modex.c $(pkg-config --cflags --libs pmix) */
#include <pmix.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile int got_code = 0;
static volatile int got_rank = -1;

static void on_event(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[], size_t ninfo,
                     pmix_info_t results[], size_t nresults, pmix_event_notification_cbfunc_fn_t cbfunc,
                     void *cbdata) {
    (void)id; (void)info; (void)ninfo; (void)results; (void)nresults;
    got_rank = (int)source->rank;
    got_code = status;
    if (cbfunc) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static int event_mode(const pmix_proc_t *me) {
    pmix_status_t code = -3005, rc;
    if (me->rank == 0) {
        rc = PMIx_Register_event_handler(&code, 1, NULL, 0, on_event, NULL, NULL);
        if (rc < 0) {
            printf("native_modex: PMIx_Register_event_handler failed: %d\n", rc);
            return 1;
        }
    }
    if ((rc = PMIx_Fence(NULL, 0, NULL, 0)) != PMIX_SUCCESS) {
        printf("native_modex: PMIx_Fence failed: %d\n", rc);
        return 1;
    }
    if (me->rank == 1 && (rc = PMIx_Notify_event(code, me, PMIX_RANGE_NAMESPACE, NULL, 0, NULL, NULL)) != PMIX_SUCCESS) {
        printf("native_modex: PMIx_Notify_event failed: %d\n", rc);
        return 1;
    }
    if (me->rank == 0) {
        for (int i = 0; i < 1000 && got_code == 0; ++i) usleep(10000);
        printf("native_modex event %d from rank %d\n", got_code, got_rank);
        fflush(stdout);
    }
    if ((rc = PMIx_Fence(NULL, 0, NULL, 0)) != PMIX_SUCCESS) {
        printf("native_modex: PMIx_Fence failed: %d\n", rc);
        return 1;
    }
    return PMIx_Finalize(NULL, 0) == PMIX_SUCCESS ? 0 : 1;
}

static int group_mode(const pmix_proc_t *me, uint32_t size) {
    pmix_proc_t members[16];
    pmix_info_t dir[2], lcid, q[1];
    pmix_data_array_t darr;
    pmix_value_t *val = NULL;
    size_t mine = 100 + me->rank;
    pmix_info_t *results = NULL;
    size_t nresults = 0, ctxid = 0;
    long nmembers = -1;
    bool yes = true;
    pmix_status_t rc;
    if (size > 16) return 1;
    for (uint32_t r = 0; r < size; ++r) PMIX_LOAD_PROCID(&members[r], me->nspace, r);
    PMIX_INFO_LOAD(&dir[0], PMIX_GROUP_ASSIGN_CONTEXT_ID, &yes, PMIX_BOOL);
    /* what this member gives the group: its local context id (100 + rank), as OpenMPI 5 does */
    PMIX_INFO_LOAD(&lcid, PMIX_GROUP_LOCAL_CID, &mine, PMIX_SIZE);
    darr.type = PMIX_INFO;
    darr.size = 1;
    darr.array = &lcid;
    PMIX_INFO_LOAD(&dir[1], PMIX_GROUP_INFO, &darr, PMIX_DATA_ARRAY);
    rc = PMIx_Group_construct("g1", members, size, dir, 2, &results, &nresults);
    if (rc != PMIX_SUCCESS) {
        printf("native_modex: PMIx_Group_construct failed: %d\n", rc);
        return 1;
    }
    for (size_t i = 0; i < nresults; ++i) {
        if (PMIX_CHECK_KEY(&results[i], PMIX_GROUP_CONTEXT_ID)) ctxid = results[i].value.data.size;
        if (PMIX_CHECK_KEY(&results[i], PMIX_GROUP_MEMBERSHIP) && results[i].value.type == PMIX_DATA_ARRAY)
            nmembers = (long)results[i].value.data.darray->size;
    }
    printf("native_modex group %u ctxid %zu members %ld\n", me->rank, ctxid, nmembers);
    fflush(stdout);
    if (results) PMIX_INFO_FREE(results, nresults);
    if ((rc = PMIx_Group_destruct("g1", NULL, 0)) != PMIX_SUCCESS) {
        printf("native_modex: PMIx_Group_destruct failed: %d\n", rc);
        return 1;
    }
    /* every member's local context id, asked after the destruct (as OpenMPI 5 and OpenPMIx's
     * group_lcl_cid example do), qualified by the group's context id */
    PMIX_INFO_LOAD(&q[0], PMIX_GROUP_CONTEXT_ID, &ctxid, PMIX_SIZE);
    PMIX_INFO_SET_QUALIFIER(&q[0]);
    for (uint32_t r = 0; r < size; ++r) {
        rc = PMIx_Get(&members[r], PMIX_GROUP_LOCAL_CID, q, 1, &val);
        if (rc != PMIX_SUCCESS || val == NULL || val->type != PMIX_SIZE || val->data.size != 100 + r) {
            printf("native_modex: PMIx_Get(PMIX_GROUP_LOCAL_CID) of rank %u: status %d, %s\n", r, rc,
                   val == NULL ? "no value" : "a wrong value");
            return 1;
        }
        PMIX_VALUE_RELEASE(val);
    }
    printf("native_modex group %u local cids of %u members\n", me->rank, size);
    if ((rc = PMIx_Group_destruct("never-made", NULL, 0)) == PMIX_SUCCESS) {
        printf("native_modex: PMIx_Group_destruct of a group never made succeeded\n");
        return 1;
    }
    if ((rc = PMIx_Fence(NULL, 0, NULL, 0)) != PMIX_SUCCESS) {
        printf("native_modex: PMIx_Fence failed: %d\n", rc);
        return 1;
    }
    return PMIx_Finalize(NULL, 0) == PMIX_SUCCESS ? 0 : 1;
}

static int query_mode(const pmix_proc_t *me) {
    pmix_query_t q[2];
    pmix_info_t *res = NULL, line;
    size_t nres = 0, npsets = 0;
    long world = -1;
    const char *nspaces = "(none)", *psets = "(none)";
    bool yes = true;
    pmix_status_t rc;
    PMIX_QUERY_CONSTRUCT(&q[0]);
    PMIX_ARGV_APPEND(rc, q[0].keys, PMIX_QUERY_NAMESPACES);
    PMIX_ARGV_APPEND(rc, q[0].keys, PMIX_QUERY_NUM_PSETS);
    PMIX_ARGV_APPEND(rc, q[0].keys, PMIX_QUERY_PSET_NAMES);
    PMIX_INFO_CREATE(q[0].qualifiers, 1);
    q[0].nqual = 1;
    PMIX_INFO_LOAD(&q[0].qualifiers[0], PMIX_QUERY_REFRESH_CACHE, &yes, PMIX_BOOL);
    PMIX_QUERY_CONSTRUCT(&q[1]);
    PMIX_ARGV_APPEND(rc, q[1].keys, PMIX_QUERY_PSET_MEMBERSHIP);
    PMIX_INFO_CREATE(q[1].qualifiers, 2);
    q[1].nqual = 2;
    PMIX_INFO_LOAD(&q[1].qualifiers[0], PMIX_QUERY_REFRESH_CACHE, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&q[1].qualifiers[1], PMIX_PSET_NAME, "mpi://WORLD", PMIX_STRING);
    rc = PMIx_Query_info(q, 2, &res, &nres);
    for (size_t i = 0; i < nres; ++i) {
        if (PMIX_CHECK_KEY(&res[i], PMIX_QUERY_NAMESPACES) && res[i].value.type == PMIX_STRING)
            nspaces = res[i].value.data.string;
        if (PMIX_CHECK_KEY(&res[i], PMIX_QUERY_NUM_PSETS) && res[i].value.type == PMIX_SIZE)
            npsets = res[i].value.data.size;
        if (PMIX_CHECK_KEY(&res[i], PMIX_QUERY_PSET_NAMES) && res[i].value.type == PMIX_STRING)
            psets = res[i].value.data.string;
        if (PMIX_CHECK_KEY(&res[i], PMIX_QUERY_PSET_MEMBERSHIP) && res[i].value.type == PMIX_DATA_ARRAY)
            world = (long)res[i].value.data.darray->size;
    }
    printf("native_modex query %u status %d nspaces %s npsets %zu psets %s world %ld\n", me->rank, rc, nspaces, npsets,
           psets, world);
    fflush(stdout);
    PMIX_INFO_LOAD(&line, PMIX_LOG_STDERR, "native_modex logged a line\n", PMIX_STRING);
    rc = PMIx_Log(&line, 1, NULL, 0);
    printf("native_modex log %d\n", rc);
    fflush(stdout);
    if (res) PMIX_INFO_FREE(res, nres);
    return PMIx_Finalize(NULL, 0) == PMIX_SUCCESS ? 0 : 1;
}

int main(int argc, char **argv) {
    pmix_proc_t me, wild, peer;
    pmix_value_t val, *v = NULL;
    char mine[64], want[64];
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        printf("native_modex: PMIx_Init failed: %d\n", rc);
        return 1;
    }
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    if (argc > 1 && strcmp(argv[1], "event") == 0) return event_mode(&me);
    if (argc > 1 && strcmp(argv[1], "abort") == 0) {
        rc = PMIx_Abort(7, "native abort", NULL, 0);
        printf("native_modex aborted %d\n", rc);
        return 0;
    }
    if ((rc = PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &v)) != PMIX_SUCCESS || v->type != PMIX_UINT32) {
        printf("native_modex: PMIx_Get(PMIX_JOB_SIZE) failed: %d\n", rc);
        return 1;
    }
    uint32_t size = v->data.uint32;
    PMIX_VALUE_RELEASE(v);
    if (argc > 1 && strcmp(argv[1], "group") == 0) return group_mode(&me, size);
    if (argc > 1 && strcmp(argv[1], "query") == 0) return query_mode(&me);
    snprintf(mine, sizeof mine, "value-%u", me.rank);
    val.type = PMIX_STRING;
    val.data.string = mine;
    if ((rc = PMIx_Put(PMIX_GLOBAL, "test.key", &val)) != PMIX_SUCCESS) {
        printf("native_modex: PMIx_Put failed: %d\n", rc);
        return 1;
    }
    if ((rc = PMIx_Commit()) != PMIX_SUCCESS) {
        printf("native_modex: PMIx_Commit failed: %d\n", rc);
        return 1;
    }
    pmix_info_t collect;
    bool yes = true;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    if ((rc = PMIx_Fence(NULL, 0, &collect, 1)) != PMIX_SUCCESS) {
        printf("native_modex: PMIx_Fence failed: %d\n", rc);
        return 1;
    }
    PMIX_LOAD_PROCID(&peer, me.nspace, (me.rank + 1) % size);
    snprintf(want, sizeof want, "value-%u", peer.rank);
    if ((rc = PMIx_Get(&peer, "test.key", NULL, 0, &v)) != PMIX_SUCCESS || v->type != PMIX_STRING ||
        strcmp(v->data.string, want) != 0) {
        printf("native_modex: PMIx_Get(test.key of rank %u) failed: %d%s%s\n", peer.rank, rc,
               rc == PMIX_SUCCESS && v->type == PMIX_STRING ? ", got " : "",
               rc == PMIX_SUCCESS && v->type == PMIX_STRING ? v->data.string : "");
        return 1;
    }
    printf("native_modex %s.%u got %s\n", me.nspace, me.rank, v->data.string);
    fflush(stdout);
    PMIX_VALUE_RELEASE(v);
    if ((rc = PMIx_Fence(NULL, 0, NULL, 0)) != PMIX_SUCCESS) {
        printf("native_modex: second PMIx_Fence failed: %d\n", rc);
        return 1;
    }
    if ((rc = PMIx_Finalize(NULL, 0)) != PMIX_SUCCESS) {
        printf("native_modex: PMIx_Finalize failed: %d\n", rc);
        return 1;
    }
    return 0;
}
