/* PMIx groups and process sets (tests/integration/t-groups.sh).
 *
 *   pmix_groups [all]   construct with a context id and PMIX_GROUP_INFO (read back with qualified
 *                       Gets), a fence over the group's name, concurrent disjoint groups (their
 *                       context ids differ), process-set queries, invite/join (accept and decline),
 *                       leave, destruct, and the errors of bad calls
 *   pmix_groups die     the last rank dies while the others construct: the others' construct fails with
 *                       PMIX_ERR_PROC_ABORTED, and with PMIX_GROUP_NOTIFY_TERMINATION it completes
 *                       with the survivors and raises PMIX_GROUP_MEMBER_FAILED
 *   pmix_groups xstep A|B TAG  two steps of one job (same TAG) build one group of all their
 *                       ranks: context id, membership, the other step's PMIX_GROUP_INFO, a fence
 *                       over the group, destruct
 *   pmix_groups spawnpsets MARKDIR  rank 0 spawns two apps of this program (1 + 2 processes);
 *                       each child checks the step's sets "<nspace>.app0/1" and leaves
 *                       MARKDIR/pset.ok.<rank>
 *   pmix_groups bootstrap  bootstrap mode: ranks 0 and N-1 lead (PMIX_GROUP_BOOTSTRAP=2), each names
 *                       half of the others with PMIX_GROUP_ADD_MEMBERS, the others construct with no
 *                       procs; every member gets the same context id, the full membership and the
 *                       others' PMIX_GROUP_INFO; a fence over the group; then a bootstrap of two
 *                       (rank 0 leads, names N-1; the others stay out), leaders 0 and 1 without
 *                       PMIX_GROUP_BOOTSTRAP, each naming some of the rest with
 *                       PMIX_GROUP_ADD_MEMBERS, and the
 *                       refusals (0 leaders, leaders that disagree, a follower no leader names
 *                       times out). Prints "BOOT rank R cid C members M" per group.
 *   pmix_groups bench N construct + destruct of a group of every rank N times; prints the median
 *                       construct time and that of an empty fence over the same ranks
 *                       ("TIME rank R construct_us <median> min <min> fence_us <median>")
 * Every rank prints PASS/FAIL lines and RESULT-PASS / RESULT-FAIL.
 */
#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include "ptest.h"

static pmix_proc_t me;
static uint32_t nprocs;

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void fence_all(void) {
    pmix_proc_t all = me;
    all.rank = PMIX_RANK_WILDCARD;
    pmix_status_t rc = PMIx_Fence(&all, 1, NULL, 0);
    if (rc != PMIX_SUCCESS) CHECK(0, "world fence -> %s", PMIx_Error_string(rc));
}

static size_t result_cid(pmix_info_t *results, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (PMIX_CHECK_KEY(&results[i], PMIX_GROUP_CONTEXT_ID) && results[i].value.type == PMIX_SIZE)
            return results[i].value.data.size;
    return 0;
}

static size_t result_members(pmix_info_t *results, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (PMIX_CHECK_KEY(&results[i], PMIX_GROUP_MEMBERSHIP) && results[i].value.type == PMIX_DATA_ARRAY &&
            results[i].value.data.darray != NULL)
            return results[i].value.data.darray->size;
    return (size_t)-1;
}

/* --- events ----------------------------------------------------------------------------- */
static volatile int left_seen = 0, complete_seen = 0, member_failed_seen = 0, pset_define_seen = 0;
static struct ptest_nb join_done;

static void on_event(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[], size_t ninfo,
                     pmix_info_t results[], size_t nresults, pmix_event_notification_cbfunc_fn_t cbfunc,
                     void *cbdata) {
    const char *grp = NULL;
    for (size_t i = 0; i < ninfo; i++)
        if (PMIX_CHECK_KEY(&info[i], PMIX_GROUP_ID) && info[i].value.type == PMIX_STRING) grp = info[i].value.data.string;
    if (status == PMIX_GROUP_INVITED && grp != NULL && !PMIX_CHECK_PROCID(source, &me)) {
        /* every fourth rank declines */
        pmix_group_opt_t opt = (me.rank % 4 == 3) ? PMIX_GROUP_DECLINE : PMIX_GROUP_ACCEPT;
        pmix_status_t rc = PMIx_Group_join_nb(grp, source, opt, NULL, 0, NULL, NULL);
        /* the join's completion: via CONSTRUCT_COMPLETE (accept) or at once (decline, below) */
        if (rc != PMIX_SUCCESS) CHECK(0, "PMIx_Group_join_nb(%s) -> %s", grp, PMIx_Error_string(rc));
        if (opt == PMIX_GROUP_DECLINE) {
            join_done.status = rc;
            join_done.done = 1;
        }
    } else if (status == PMIX_GROUP_CONSTRUCT_COMPLETE) {
        complete_seen = 1;
        join_done.status = PMIX_SUCCESS;
        join_done.done = 1;
    } else if (status == PMIX_GROUP_LEFT) {
        left_seen = 1;
    } else if (status == PMIX_GROUP_MEMBER_FAILED) {
        member_failed_seen = 1;
    } else if (status == PMIX_PROCESS_SET_DEFINE) {
        pset_define_seen = 1;
    }
    if (cbfunc) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static void reg_cb(pmix_status_t status, size_t ref, void *cbdata) { ptest_nb_cb(status, cbdata); }

static void register_handlers(void) {
    pmix_status_t codes[] = {PMIX_GROUP_INVITED, PMIX_GROUP_CONSTRUCT_COMPLETE, PMIX_GROUP_LEFT,
                             PMIX_GROUP_MEMBER_FAILED, PMIX_PROCESS_SET_DEFINE};
    struct ptest_nb r = {0, 0};
    PMIx_Register_event_handler(codes, 5, NULL, 0, on_event, reg_cb, &r);
    CHECK(ptest_wait_all(&r, 1, 10) && r.status == PMIX_SUCCESS, "event handler registered");
}

static pmix_status_t query_one(const char *key, const char *pset, pmix_info_t **results, size_t *nresults) {
    pmix_query_t q;
    PMIX_QUERY_CONSTRUCT(&q);
    q.keys = calloc(2, sizeof(char *));
    q.keys[0] = strdup(key);
    if (pset != NULL) {
        PMIX_INFO_CREATE(q.qualifiers, 1);
        q.nqual = 1;
        PMIX_INFO_LOAD(&q.qualifiers[0], PMIX_PSET_NAME, pset, PMIX_STRING);
    }
    pmix_status_t rc = PMIx_Query_info(&q, 1, results, nresults);
    PMIX_QUERY_DESTRUCT(&q);
    if (*results != NULL && *nresults > 0) {
        size_t wrapped = ptest_flat_results(*results, nresults);
        CHECK(rc != PMIX_SUCCESS || wrapped == 1, "%s: one PMIX_QUERY_RESULTS (v4.1 form), then the flat answer", key);
    }
    return rc;
}

static int test_all(void) {
    register_handlers();
    fence_all();

    /* 1. A group of every rank, with a context id and data of each member. */
    pmix_proc_t *procs;
    PMIX_PROC_CREATE(procs, nprocs);
    for (uint32_t r = 0; r < nprocs; r++) PMIX_PROC_LOAD(&procs[r], me.nspace, r);
    pmix_info_t gi[2];
    PMIX_INFO_LOAD(&gi[0], "test.grp.value", &(uint32_t){me.rank * 10}, PMIX_UINT32);
    size_t lcid = 1000 + me.rank;
    PMIX_INFO_LOAD(&gi[1], PMIX_GROUP_LOCAL_CID, &lcid, PMIX_SIZE);
    pmix_data_array_t da = {.type = PMIX_INFO, .size = 2, .array = gi};
    pmix_info_t dirs[2];
    PMIX_INFO_LOAD(&dirs[0], PMIX_GROUP_ASSIGN_CONTEXT_ID, NULL, PMIX_BOOL);
    PMIX_INFO_LOAD(&dirs[1], PMIX_GROUP_INFO, &da, PMIX_DATA_ARRAY);
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    double t0 = now_us();
    pmix_status_t rc = PMIx_Group_construct("g.all", procs, nprocs, dirs, 2, &results, &nresults);
    double t1 = now_us();
    CHECK(rc == PMIX_SUCCESS, "construct g.all of %u ranks -> %s (%.0f us)", nprocs, PMIx_Error_string(rc), t1 - t0);
    size_t cid_all = result_cid(results, nresults);
    CHECK(cid_all != 0, "g.all has a context id (%zu)", cid_all);
    CHECK(result_members(results, nresults) == nprocs, "g.all membership has %u procs", nprocs);
    if (results) PMIX_INFO_FREE(results, nresults);
    PMIX_INFO_DESTRUCT(&dirs[1]);

    /* 2. Every member's PMIX_GROUP_INFO, read back with Gets qualified by the context id. */
    int ok_lcid = 1, ok_val = 0;
    for (uint32_t r = 0; r < nprocs; r++) {
        pmix_info_t q[1];
        PMIX_INFO_LOAD(&q[0], PMIX_GROUP_CONTEXT_ID, &cid_all, PMIX_SIZE);
        PMIX_INFO_SET_QUALIFIER(&q[0]);
        pmix_value_t *v = NULL;
        pmix_proc_t p;
        PMIX_PROC_LOAD(&p, me.nspace, r);
        rc = PMIx_Get(&p, PMIX_GROUP_LOCAL_CID, q, 1, &v);
        if (rc != PMIX_SUCCESS || v == NULL || v->type != PMIX_SIZE || v->data.size != 1000 + r) ok_lcid = 0;
        if (v) PMIX_VALUE_RELEASE(v);
        v = NULL;
        rc = PMIx_Get(&p, "test.grp.value", q, 1, &v);
        if (rc == PMIX_SUCCESS && v != NULL && v->type == PMIX_UINT32 && v->data.uint32 == r * 10) ok_val++;
        if (v) PMIX_VALUE_RELEASE(v);
    }
    CHECK(ok_lcid, "PMIX_GROUP_LOCAL_CID of every member read back with the context id qualifier");
    CHECK(ok_val == (int)nprocs, "PMIX_GROUP_INFO of every member read back (%d of %u)", ok_val, nprocs);
    {
        pmix_info_t q[1];
        size_t wrong = cid_all + 1000000;
        PMIX_INFO_LOAD(&q[0], PMIX_GROUP_CONTEXT_ID, &wrong, PMIX_SIZE);
        PMIX_INFO_SET_QUALIFIER(&q[0]);
        pmix_value_t *v = NULL;
        CHECK_RC(PMIX_ERR_NOT_FOUND, PMIx_Get(&procs[0], PMIX_GROUP_LOCAL_CID, q, 1, &v));
    }

    /* 3. A fence over the group's name. */
    pmix_proc_t grp;
    PMIX_LOAD_PROCID(&grp, "g.all", PMIX_RANK_WILDCARD);
    CHECK_RC(PMIX_SUCCESS, PMIx_Fence(&grp, 1, NULL, 0));

    /* 4. Two disjoint groups built at once: their context ids differ from each other's and g.all's. */
    if (nprocs >= 2) {
        uint32_t half = 0;
        pmix_proc_t *sub;
        PMIX_PROC_CREATE(sub, nprocs);
        for (uint32_t r = me.rank % 2; r < nprocs; r += 2, half++) PMIX_PROC_LOAD(&sub[half], me.nspace, r);
        const char *name = me.rank % 2 ? "g.odd" : "g.even";
        rc = PMIx_Group_construct(name, sub, half, &dirs[0], 1, &results, &nresults);
        size_t cid = result_cid(results, nresults);
        CHECK(rc == PMIX_SUCCESS && cid != 0 && cid != cid_all, "construct %s -> %s, context id %zu", name,
              PMIx_Error_string(rc), cid);
        if (results) PMIX_INFO_FREE(results, nresults);
        pmix_value_t v = {.type = PMIX_SIZE};
        v.data.size = cid;
        PMIx_Put(PMIX_GLOBAL, "test.subcid", &v);
        PMIx_Commit();
        fence_all();
        pmix_proc_t other;
        PMIX_PROC_LOAD(&other, me.nspace, me.rank ^ 1u);
        if (other.rank < nprocs) {
            pmix_value_t *ov = NULL;
            rc = PMIx_Get(&other, "test.subcid", NULL, 0, &ov);
            CHECK(rc == PMIX_SUCCESS && ov && ov->data.size != cid, "the other parity's group has another context id (%zu vs %zu)",
                  ov ? ov->data.size : 0, cid);
            if (ov) PMIX_VALUE_RELEASE(ov);
        }
        CHECK_RC(PMIX_SUCCESS, PMIx_Group_destruct(name, NULL, 0));
        PMIX_PROC_FREE(sub, nprocs);
    }

    /* 5. Process sets: g.all is one. */
    rc = query_one(PMIX_QUERY_NUM_PSETS, NULL, &results, &nresults);
    CHECK(rc == PMIX_SUCCESS && nresults == 1 && results[0].value.type == PMIX_SIZE && results[0].value.data.size >= 1,
          "PMIX_QUERY_NUM_PSETS -> %s, %zu", PMIx_Error_string(rc),
          rc == PMIX_SUCCESS && nresults ? results[0].value.data.size : 0);
    if (results) PMIX_INFO_FREE(results, nresults);
    rc = query_one(PMIX_QUERY_PSET_NAMES, NULL, &results, &nresults);
    CHECK(rc == PMIX_SUCCESS && nresults == 1 && results[0].value.type == PMIX_STRING &&
              strstr(results[0].value.data.string, "g.all") != NULL,
          "PMIX_QUERY_PSET_NAMES lists g.all (%s)",
          rc == PMIX_SUCCESS && nresults && results[0].value.type == PMIX_STRING ? results[0].value.data.string : "-");
    if (results) PMIX_INFO_FREE(results, nresults);
    rc = query_one(PMIX_QUERY_PSET_MEMBERSHIP, "g.all", &results, &nresults);
    CHECK(rc == PMIX_SUCCESS && nresults == 1 && results[0].value.type == PMIX_DATA_ARRAY &&
              results[0].value.data.darray->size == nprocs,
          "PMIX_QUERY_PSET_MEMBERSHIP of g.all has %u procs", nprocs);
    if (results) PMIX_INFO_FREE(results, nresults);
    /* The sets every MPI-4 program has: the step, this rank, its node's ranks; the part after the
     * scheme in any case, as OpenMPI matches it. Members: data array of PMIX_PROC. */
    {
        pmix_proc_t wild = me;
        pmix_value_t *lsz = NULL;
        wild.rank = PMIX_RANK_WILDCARD;
        uint32_t local = PMIx_Get(&wild, PMIX_LOCAL_SIZE, NULL, 0, &lsz) == PMIX_SUCCESS ? lsz->data.uint32 : 0;
        if (lsz) PMIX_VALUE_RELEASE(lsz);
        const char *names[] = {"mpi://WORLD", "mpi://world", "mpi://SELF", "mpi://Self", "mpix://SHARED", "mpix://shared"};
        const uint32_t want[] = {nprocs, nprocs, 1, 1, local, local};
        for (int i = 0; i < 6; i++) {
            rc = query_one(PMIX_QUERY_PSET_MEMBERSHIP, names[i], &results, &nresults);
            int ok = rc == PMIX_SUCCESS && nresults == 1 && results[0].value.type == PMIX_DATA_ARRAY &&
                     results[0].value.data.darray->type == PMIX_PROC && results[0].value.data.darray->size == want[i];
            int mine = 0;
            for (size_t k = 0; ok && k < results[0].value.data.darray->size; k++) {
                const pmix_proc_t *p = (const pmix_proc_t *)results[0].value.data.darray->array + k;
                ok &= strcmp(p->nspace, me.nspace) == 0;
                mine |= p->rank == me.rank;
            }
            CHECK(ok && mine, "PMIX_QUERY_PSET_MEMBERSHIP of %s: %u procs of our namespace, this rank among them (%s)",
                  names[i], want[i], PMIx_Error_string(rc));
            if (results) PMIX_INFO_FREE(results, nresults);
        }
        rc = query_one(PMIX_QUERY_PSET_MEMBERSHIP, "mpi://nosuchset", &results, &nresults);
        CHECK(rc != PMIX_SUCCESS, "PMIX_QUERY_PSET_MEMBERSHIP of mpi://nosuchset fails (%s)", PMIx_Error_string(rc));
        if (results) PMIX_INFO_FREE(results, nresults);
    }
    rc = query_one(PMIX_QUERY_GROUP_NAMES, NULL, &results, &nresults);
    CHECK(rc == PMIX_SUCCESS && nresults == 1 && results[0].value.type == PMIX_STRING &&
              strstr(results[0].value.data.string, "g.all") != NULL,
          "PMIX_QUERY_GROUP_NAMES lists g.all");
    if (results) PMIX_INFO_FREE(results, nresults);
    for (int i = 0; i < 2000 && !pset_define_seen; i++) usleep(1000);
    CHECK(pset_define_seen, "PMIX_PROCESS_SET_DEFINE raised");

    /* 6. Invite / join: rank 0 invites everyone, every fourth rank declines. */
    uint32_t decliners = 0;
    for (uint32_t r = 1; r < nprocs; r++) decliners += r % 4 == 3;
    if (me.rank == 0) {
        rc = PMIx_Group_invite("g.inv", procs, nprocs, NULL, 0, &results, &nresults);
        CHECK(rc == PMIX_SUCCESS, "invite -> %s", PMIx_Error_string(rc));
        CHECK(result_members(results, nresults) == nprocs - decliners, "g.inv has %u members after %u declined",
              nprocs - decliners, decliners);
        if (results) PMIX_INFO_FREE(results, nresults);
    } else {
        CHECK(ptest_wait_all(&join_done, 1, 60), "invitation answered");
        if (me.rank % 4 != 3) CHECK(complete_seen, "PMIX_GROUP_CONSTRUCT_COMPLETE seen by a joiner");
    }
    if (me.rank % 4 != 3 || me.rank == 0) {
        PMIX_LOAD_PROCID(&grp, "g.inv", PMIX_RANK_WILDCARD);
        CHECK_RC(PMIX_SUCCESS, PMIx_Fence(&grp, 1, NULL, 0));
        CHECK_RC(PMIX_SUCCESS, PMIx_Group_destruct("g.inv", NULL, 0));
    }
    fence_all();

    /* 7. Leave: the last rank leaves g.all, the others see PMIX_GROUP_LEFT and destruct without it. */
    if (nprocs >= 2) {
        if (me.rank == nprocs - 1) {
            CHECK_RC(PMIX_SUCCESS, PMIx_Group_leave("g.all", NULL, 0));
            CHECK_RC(PMIX_ERR_NOT_FOUND, PMIx_Group_destruct("g.all", NULL, 0));
        } else {
            for (int i = 0; i < 10000 && !left_seen; i++) usleep(1000);
            CHECK(left_seen, "PMIX_GROUP_LEFT seen");
            CHECK_RC(PMIX_SUCCESS, PMIx_Group_destruct("g.all", NULL, 0));
        }
    } else {
        CHECK_RC(PMIX_SUCCESS, PMIx_Group_destruct("g.all", NULL, 0));
    }
    fence_all();

    /* 8. Bad calls: clear errors. */
    pmix_proc_t notme;
    PMIX_PROC_LOAD(&notme, me.nspace, (me.rank + 1) % nprocs);
    if (nprocs > 1) CHECK_RC(PMIX_ERR_BAD_PARAM, PMIx_Group_construct("g.bad", &notme, 1, NULL, 0, &results, &nresults));
    CHECK_RC(PMIX_ERR_NOT_FOUND, PMIx_Group_destruct("g.never", NULL, 0));
    CHECK_RC(PMIX_ERR_NOT_FOUND, PMIx_Group_join("g.never", &notme, PMIX_GROUP_ACCEPT, NULL, 0, &results, &nresults));
    CHECK_RC(PMIX_ERR_BAD_PARAM, PMIx_Group_construct(NULL, procs, nprocs, NULL, 0, &results, &nresults));
    CHECK_RC(PMIX_ERR_BAD_PARAM, PMIx_Group_construct(me.nspace, &me, 1, NULL, 0, &results, &nresults));
    pmix_proc_t foreign;
    PMIX_PROC_LOAD(&foreign, "some.other.namespace", 0);
    pmix_proc_t two[2] = {me, foreign};
    /* a member of a namespace that is no step of this job */
    CHECK_RC(PMIX_ERR_NOT_FOUND, PMIx_Group_construct("g.x", two, 2, NULL, 0, &results, &nresults));
    /* a bootstrap of one leader and nobody else: a group of its own */
    pmix_info_t boot;
    uint32_t count = 1;
    PMIX_INFO_LOAD(&boot, PMIX_GROUP_BOOTSTRAP, &count, PMIX_UINT32);
    char solo[64];
    snprintf(solo, sizeof(solo), "g.solo.%u", me.rank);
    results = NULL;
    nresults = 0;
    CHECK_RC(PMIX_SUCCESS, PMIx_Group_construct(solo, &me, 1, &boot, 1, &results, &nresults));
    CHECK(result_members(results, nresults) == 1, "%s has 1 member", solo);
    if (results) PMIX_INFO_FREE(results, nresults);
    CHECK_RC(PMIX_SUCCESS, PMIx_Group_destruct(solo, NULL, 0));
    PMIX_PROC_FREE(procs, nprocs);
    fence_all();
    return 0;
}

static int test_die(void) {
    register_handlers();
    fence_all();
    if (me.rank == nprocs - 1) { /* dies while the others wait in the construct, without PMIx_Finalize */
        usleep(300 * 1000);
        _exit(0);
    }
    pmix_proc_t *procs;
    PMIX_PROC_CREATE(procs, nprocs);
    for (uint32_t r = 0; r < nprocs; r++) PMIX_PROC_LOAD(&procs[r], me.nspace, r);
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    double t0 = now_us();
    pmix_status_t rc = PMIx_Group_construct("g.die", procs, nprocs, NULL, 0, &results, &nresults);
    double t1 = now_us();
    CHECK(rc == PMIX_ERR_PROC_ABORTED, "construct with a dead member -> %s (want PMIX_ERR_PROC_ABORTED) after %.0f ms",
          PMIx_Error_string(rc), (t1 - t0) / 1000);
    pmix_info_t nt;
    PMIX_INFO_LOAD(&nt, PMIX_GROUP_NOTIFY_TERMINATION, NULL, PMIX_BOOL);
    rc = PMIx_Group_construct("g.die2", procs, nprocs, &nt, 1, &results, &nresults);
    CHECK(rc == PMIX_SUCCESS && result_members(results, nresults) == nprocs - 1,
          "construct with PMIX_GROUP_NOTIFY_TERMINATION -> %s with %zu members", PMIx_Error_string(rc),
          rc == PMIX_SUCCESS ? result_members(results, nresults) : 0);
    if (results) PMIX_INFO_FREE(results, nresults);
    for (int i = 0; i < 5000 && !member_failed_seen; i++) usleep(1000);
    CHECK(member_failed_seen, "PMIX_GROUP_MEMBER_FAILED raised");
    CHECK_RC(PMIX_SUCCESS, PMIx_Group_destruct("g.die2", NULL, 0));
    PMIX_PROC_FREE(procs, nprocs);
    return 0;
}

/* --- across the steps of a job ------------------------------------------------------------ */
static int lookup_nspace(const char *key, char *out, size_t len) {
    pmix_pdata_t pd;
    pmix_info_t w[2];
    bool t = true;
    int sec = 60;
    PMIX_PDATA_CONSTRUCT(&pd);
    PMIX_LOAD_KEY(pd.key, key);
    PMIx_Info_load(&w[0], PMIX_WAIT, &t, PMIX_BOOL);
    PMIx_Info_load(&w[1], PMIX_TIMEOUT, &sec, PMIX_INT);
    pmix_status_t rc = PMIx_Lookup(&pd, 1, w, 2);
    if (rc == PMIX_SUCCESS && pd.value.type == PMIX_STRING) snprintf(out, len, "%s", pd.value.data.string);
    PMIX_PDATA_DESTRUCT(&pd);
    return rc;
}

static int publish_nspace(const char *key, const char *value) {
    pmix_info_t i[2];
    pmix_persistence_t per = PMIX_PERSIST_APP;
    PMIx_Info_load(&i[0], key, value, PMIX_STRING);
    PMIx_Info_load(&i[1], PMIX_PERSISTENCE, &per, PMIX_PERSIST);
    return PMIx_Publish(i, 2);
}

/* Steps A and B of one job (both started with the same TAG) build one group of all their ranks. */
static int test_xstep(const char *role, const char *tag) {
    int is_a = strcmp(role, "A") == 0;
    char mine[128], theirs[128], other[PMIX_MAX_NSLEN + 1] = "";
    snprintf(mine, sizeof(mine), "gx.%s.%s", tag, is_a ? "a" : "b");
    snprintf(theirs, sizeof(theirs), "gx.%s.%s", tag, is_a ? "b" : "a");
    if (me.rank == 0) CHECK_RC(PMIX_SUCCESS, publish_nspace(mine, me.nspace));
    CHECK_RC(PMIX_SUCCESS, lookup_nspace(theirs, other, sizeof(other)));
    pmix_value_t *v = NULL;
    pmix_proc_t owild;
    PMIX_LOAD_PROCID(&owild, other, PMIX_RANK_WILDCARD);
    uint32_t other_size = 0;
    pmix_proc_t set[2];
    PMIX_LOAD_PROCID(&set[0], me.nspace, PMIX_RANK_WILDCARD);
    PMIX_LOAD_PROCID(&set[1], other, PMIX_RANK_WILDCARD);
    size_t lcid = 2000 + me.rank + (is_a ? 0 : 100);
    pmix_info_t gi[1];
    PMIX_INFO_LOAD(&gi[0], PMIX_GROUP_LOCAL_CID, &lcid, PMIX_SIZE);
    pmix_data_array_t da = {.type = PMIX_INFO, .size = 1, .array = gi};
    pmix_info_t dirs[2];
    PMIX_INFO_LOAD(&dirs[0], PMIX_GROUP_ASSIGN_CONTEXT_ID, NULL, PMIX_BOOL);
    PMIX_INFO_LOAD(&dirs[1], PMIX_GROUP_INFO, &da, PMIX_DATA_ARRAY);
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    double t0 = now_us();
    pmix_status_t rc = PMIx_Group_construct("g.xstep", set, 2, dirs, 2, &results, &nresults);
    double t1 = now_us();
    if (PMIx_Get(&owild, PMIX_JOB_SIZE, NULL, 0, &v) == PMIX_SUCCESS && v) {
        other_size = v->data.uint32;
        PMIX_VALUE_RELEASE(v);
    }
    size_t cid = result_cid(results, nresults);
    CHECK(rc == PMIX_SUCCESS && cid != 0, "construct across steps %s+%s -> %s, context id %zu (%.1f ms)", me.nspace,
          other, PMIx_Error_string(rc), cid, (t1 - t0) / 1000);
    CHECK(result_members(results, nresults) == nprocs + other_size, "membership has both steps' %u+%u ranks", nprocs,
          other_size);
    if (results) PMIX_INFO_FREE(results, nresults);
    pmix_info_t q[1];
    PMIX_INFO_LOAD(&q[0], PMIX_GROUP_CONTEXT_ID, &cid, PMIX_SIZE);
    PMIX_INFO_SET_QUALIFIER(&q[0]);
    pmix_proc_t o0;
    PMIX_LOAD_PROCID(&o0, other, 0);
    v = NULL;
    rc = PMIx_Get(&o0, PMIX_GROUP_LOCAL_CID, q, 1, &v);
    CHECK(rc == PMIX_SUCCESS && v && v->data.size == 2000 + (size_t)(is_a ? 100 : 0),
          "the other step's rank 0 PMIX_GROUP_LOCAL_CID -> %s %zu", PMIx_Error_string(rc), v ? v->data.size : 0);
    if (v) PMIX_VALUE_RELEASE(v);
    pmix_proc_t grp;
    PMIX_LOAD_PROCID(&grp, "g.xstep", PMIX_RANK_WILDCARD);
    CHECK_RC(PMIX_SUCCESS, PMIx_Fence(&grp, 1, NULL, 0));
    CHECK_RC(PMIX_SUCCESS, PMIx_Group_destruct("g.xstep", NULL, 0));
    return 0;
}

/* --- the process sets of a spawned step of several apps ------------------------------------- */
static void touch_mark(const char *markdir, const char *what, unsigned rank) {
    char f[512];
    snprintf(f, sizeof(f), "%s/%s.%u", markdir, what, rank);
    FILE *fp = fopen(f, "w");
    if (fp) fclose(fp);
}

static int count_marks(const char *markdir, const char *what, int n) {
    int seen = 0;
    for (int r = 0; r < n; ++r) {
        char f[512];
        snprintf(f, sizeof(f), "%s/%s.%d", markdir, what, r);
        if (access(f, F_OK) == 0) seen++;
    }
    return seen;
}

/* A child of the two-app spawn: the step's sets are "<nspace>.app0" (1 proc) and ".app1" (2). */
static int test_pset_child(const char *markdir) {
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    char want0[PMIX_MAX_NSLEN + 16], want1[PMIX_MAX_NSLEN + 16];
    snprintf(want0, sizeof(want0), "%s.app0", me.nspace);
    snprintf(want1, sizeof(want1), "%s.app1", me.nspace);
    int ok = 1;
    pmix_status_t rc = query_one(PMIX_QUERY_PSET_NAMES, NULL, &results, &nresults);
    ok &= rc == PMIX_SUCCESS && nresults == 1 && results[0].value.type == PMIX_STRING &&
          strstr(results[0].value.data.string, want0) && strstr(results[0].value.data.string, want1);
    CHECK(ok, "the spawned step's process sets are listed (%s)",
          rc == PMIX_SUCCESS && nresults && results[0].value.type == PMIX_STRING ? results[0].value.data.string : "-");
    if (results) PMIX_INFO_FREE(results, nresults);
    rc = query_one(PMIX_QUERY_PSET_MEMBERSHIP, want1, &results, &nresults);
    int ok1 = rc == PMIX_SUCCESS && nresults == 1 && results[0].value.type == PMIX_DATA_ARRAY &&
              results[0].value.data.darray->size == 2 &&
              ((pmix_proc_t *)results[0].value.data.darray->array)[0].rank == 1;
    CHECK(ok1, "%s has ranks 1 and 2", want1);
    if (results) PMIX_INFO_FREE(results, nresults);
    touch_mark(markdir, ok && ok1 ? "pset.ok" : "pset.bad", me.rank);
    return 0;
}

/* Rank 0 spawns two apps of this program (1 + 2 processes) and waits for their verdicts. */
static int test_spawn_psets(const char *self, const char *markdir) {
    if (me.rank != 0) return 0;
    char *argv[] = {(char *)self, "psetchild", (char *)markdir, NULL};
    pmix_app_t apps[2];
    memset(apps, 0, sizeof(apps));
    for (int a = 0; a < 2; a++) {
        apps[a].cmd = (char *)self;
        apps[a].argv = argv;
        apps[a].maxprocs = a + 1;
    }
    pmix_nspace_t child;
    pmix_status_t rc = PMIx_Spawn(NULL, 0, apps, 2, child);
    CHECK(rc == PMIX_SUCCESS, "PMIx_Spawn of two apps -> %s", PMIx_Error_string(rc));
    int seen = 0;
    for (int i = 0; i < 1200 && rc == PMIX_SUCCESS && seen < 3; ++i) {
        seen = count_marks(markdir, "pset.ok", 3) + count_marks(markdir, "pset.bad", 3);
        usleep(50000);
    }
    CHECK(count_marks(markdir, "pset.ok", 3) == 3, "the 3 children saw one process set per app (%d answered)", seen);
    return 0;
}

/* Construct `name` as a bootstrap member: a leader (nleaders > 0) with its own proc, naming the
 * ranks `add` (n of them); a follower (nleaders == 0) with no procs. Returns the status and, on
 * success, the context id and membership size through cid / nmembers. */
static pmix_status_t bootstrap_construct(const char *name, size_t nleaders, const uint32_t *add, size_t nadd,
                                         int timeout, size_t *cid, size_t *nmembers) {
    pmix_info_t dirs[5];
    size_t nd = 0;
    PMIX_INFO_LOAD(&dirs[nd++], PMIX_GROUP_ASSIGN_CONTEXT_ID, NULL, PMIX_BOOL);
    pmix_info_t gi;
    PMIX_INFO_LOAD(&gi, "test.boot.value", &(uint32_t){me.rank + 7}, PMIX_UINT32);
    pmix_data_array_t gda = {.type = PMIX_INFO, .size = 1, .array = &gi};
    PMIX_INFO_LOAD(&dirs[nd++], PMIX_GROUP_INFO, &gda, PMIX_DATA_ARRAY);
    if (timeout > 0) PMIX_INFO_LOAD(&dirs[nd++], PMIX_TIMEOUT, &timeout, PMIX_INT);
    pmix_proc_t *addp = NULL;
    pmix_data_array_t ada;
    if (nleaders > 0) {
        PMIX_INFO_LOAD(&dirs[nd++], PMIX_GROUP_BOOTSTRAP, &nleaders, PMIX_SIZE);
        if (nadd > 0) {
            PMIX_PROC_CREATE(addp, nadd);
            for (size_t i = 0; i < nadd; i++) PMIX_PROC_LOAD(&addp[i], me.nspace, add[i]);
            ada = (pmix_data_array_t){.type = PMIX_PROC, .size = nadd, .array = addp};
            PMIX_INFO_LOAD(&dirs[nd++], PMIX_GROUP_ADD_MEMBERS, &ada, PMIX_DATA_ARRAY);
        }
    }
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    pmix_status_t rc;
    if (nleaders > 0) rc = PMIx_Group_construct(name, &me, 1, dirs, nd, &results, &nresults);
    else rc = PMIx_Group_construct(name, NULL, 0, dirs, nd, &results, &nresults);
    *cid = result_cid(results, nresults);
    *nmembers = result_members(results, nresults);
    if (results) PMIX_INFO_FREE(results, nresults);
    if (addp) PMIX_PROC_FREE(addp, nadd);
    return rc;
}

static int test_bootstrap(void) {
    fence_all();
    if (nprocs < 4) {
        CHECK(0, "bootstrap needs at least 4 ranks");
        return 1;
    }
    /* 1. Two leaders (0 and N-1); 0 names the even ranks, N-1 the odd ones; the rest follow. */
    uint32_t *add = calloc(nprocs, sizeof(uint32_t));
    size_t nadd = 0;
    const uint32_t last = nprocs - 1;
    if (me.rank == 0 || me.rank == last)
        for (uint32_t r = 1; r < last; r++)
            if ((r % 2 == 0) == (me.rank == 0)) add[nadd++] = r;
    size_t cid = 0, nm = 0;
    pmix_status_t rc = bootstrap_construct("g.boot", (me.rank == 0 || me.rank == last) ? 2 : 0, add, nadd, 0, &cid, &nm);
    CHECK(rc == PMIX_SUCCESS, "bootstrap g.boot as %s -> %s", (me.rank == 0 || me.rank == last) ? "leader" : "member",
          PMIx_Error_string(rc));
    CHECK(cid != 0 && nm == nprocs, "g.boot: context id %zu, %zu members (want %u)", cid, nm, nprocs);
    printf("BOOT rank %u cid %zu members %zu\n", me.rank, cid, nm);
    int ok_val = 0;
    for (uint32_t r = 0; r < nprocs; r++) {
        pmix_info_t q;
        PMIX_INFO_LOAD(&q, PMIX_GROUP_CONTEXT_ID, &cid, PMIX_SIZE);
        PMIX_INFO_SET_QUALIFIER(&q);
        pmix_value_t *v = NULL;
        pmix_proc_t p;
        PMIX_PROC_LOAD(&p, me.nspace, r);
        if (PMIx_Get(&p, "test.boot.value", &q, 1, &v) == PMIX_SUCCESS && v != NULL && v->type == PMIX_UINT32 &&
            v->data.uint32 == r + 7)
            ok_val++;
        if (v) PMIX_VALUE_RELEASE(v);
    }
    CHECK(ok_val == (int)nprocs, "g.boot: PMIX_GROUP_INFO of every member read back (%d of %u)", ok_val, nprocs);
    pmix_proc_t grp;
    PMIX_LOAD_PROCID(&grp, "g.boot", PMIX_RANK_WILDCARD);
    CHECK_RC(PMIX_SUCCESS, PMIx_Fence(&grp, 1, NULL, 0));
    CHECK_RC(PMIX_SUCCESS, PMIx_Group_destruct("g.boot", NULL, 0));

    /* 2. A bootstrap of two: rank 0 leads alone and names N-1; the others stay out. */
    if (me.rank == 0 || me.rank == last) {
        rc = bootstrap_construct("g.pair", me.rank == 0 ? 1 : 0, &last, me.rank == 0 ? 1 : 0, 0, &cid, &nm);
        CHECK(rc == PMIX_SUCCESS && nm == 2 && cid != 0, "bootstrap g.pair of ranks 0 and %u -> %s, %zu members",
              last, PMIx_Error_string(rc), nm);
        printf("BOOT rank %u cid %zu members %zu pair\n", me.rank, cid, nm);
        CHECK_RC(PMIX_SUCCESS, PMIx_Group_destruct("g.pair", NULL, 0));
    }

    /* 3. Leaders 0 and 1 know each other (procs {0,1}, no PMIX_GROUP_BOOTSTRAP) and name the rest
     *    with PMIX_GROUP_ADD_MEMBERS: 0 names 2 .. N-2, 1 names N-1. */
    if (me.rank <= 1) {
        pmix_proc_t lead[2];
        PMIX_PROC_LOAD(&lead[0], me.nspace, 0);
        PMIX_PROC_LOAD(&lead[1], me.nspace, 1);
        pmix_proc_t *rest = NULL;
        size_t nrest = me.rank == 0 ? nprocs - 3 : 1;
        pmix_info_t dirs[2];
        size_t nd = 0;
        PMIX_INFO_LOAD(&dirs[nd++], PMIX_GROUP_ASSIGN_CONTEXT_ID, NULL, PMIX_BOOL);
        pmix_data_array_t rda;
        if (nrest > 0) {
            PMIX_PROC_CREATE(rest, nrest);
            for (size_t i = 0; i < nrest; i++) PMIX_PROC_LOAD(&rest[i], me.nspace, me.rank == 0 ? (uint32_t)(i + 2) : last);
            rda = (pmix_data_array_t){.type = PMIX_PROC, .size = nrest, .array = rest};
            PMIX_INFO_LOAD(&dirs[nd++], PMIX_GROUP_ADD_MEMBERS, &rda, PMIX_DATA_ARRAY);
        }
        pmix_info_t *results = NULL;
        size_t nresults = 0;
        rc = PMIx_Group_construct("g.add", lead, 2, dirs, nd, &results, &nresults);
        cid = result_cid(results, nresults);
        nm = result_members(results, nresults);
        if (results) PMIX_INFO_FREE(results, nresults);
        if (rest) PMIX_PROC_FREE(rest, nrest);
    } else {
        rc = bootstrap_construct("g.add", 0, NULL, 0, 0, &cid, &nm);
    }
    CHECK(rc == PMIX_SUCCESS && nm == nprocs && cid != 0, "g.add (leaders 0,1 + PMIX_GROUP_ADD_MEMBERS) -> %s, %zu members",
          PMIx_Error_string(rc), nm);
    printf("BOOT rank %u cid %zu members %zu add\n", me.rank, cid, nm);
    CHECK_RC(PMIX_SUCCESS, PMIx_Group_destruct("g.add", NULL, 0));

    /* 4. Refusals: zero leaders; leaders that disagree on their number (0 says 2, N-1 says 3);
     *    a follower that no leader names waits until its PMIX_TIMEOUT. */
    fence_all();
    if (me.rank == 0) {
        pmix_info_t d;
        size_t zero = 0;
        PMIX_INFO_LOAD(&d, PMIX_GROUP_BOOTSTRAP, &zero, PMIX_SIZE);
        CHECK_RC(PMIX_ERR_BAD_PARAM, PMIx_Group_construct("g.zero", &me, 1, &d, 1, NULL, NULL));
    }
    if (me.rank == 0 || me.rank == last) {
        rc = bootstrap_construct("g.disagree", me.rank == 0 ? 2 : 3, NULL, 0, 0, &cid, &nm);
        CHECK(rc == PMIX_ERR_BAD_PARAM, "leaders that disagree on their number -> %s (want %s)", PMIx_Error_string(rc),
              PMIx_Error_string(PMIX_ERR_BAD_PARAM));
    }
    if (me.rank == 2) {
        double t0 = now_us();
        rc = bootstrap_construct("g.nobody", 0, NULL, 0, 2, &cid, &nm);
        CHECK(rc == PMIX_ERR_TIMEOUT, "a follower no leader names -> %s after %.1f s (want %s)", PMIx_Error_string(rc),
              (now_us() - t0) / 1e6, PMIx_Error_string(PMIX_ERR_TIMEOUT));
    }
    fence_all();
    free(add);
    return 0;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int test_bench(int iters) {
    pmix_proc_t *procs;
    PMIX_PROC_CREATE(procs, nprocs);
    for (uint32_t r = 0; r < nprocs; r++) PMIX_PROC_LOAD(&procs[r], me.nspace, r);
    pmix_info_t dir;
    PMIX_INFO_LOAD(&dir, PMIX_GROUP_ASSIGN_CONTEXT_ID, NULL, PMIX_BOOL);
    double *t = calloc((size_t)iters, sizeof(double));
    fence_all();
    int ok = 1;
    for (int i = 0; i < iters; i++) {
        pmix_info_t *results = NULL;
        size_t nresults = 0;
        double t0 = now_us();
        pmix_status_t rc = PMIx_Group_construct("g.bench", procs, nprocs, &dir, 1, &results, &nresults);
        t[i] = now_us() - t0;
        if (rc != PMIX_SUCCESS) ok = 0;
        if (results) PMIX_INFO_FREE(results, nresults);
        if (PMIx_Group_destruct("g.bench", NULL, 0) != PMIX_SUCCESS) ok = 0;
    }
    CHECK(ok, "%d constructs and destructs", iters);
    qsort(t, (size_t)iters, sizeof(double), cmp_double);
    double construct_median = t[iters / 2], construct_min = t[0];
    /* the reference: an empty fence over the same ranks */
    pmix_proc_t all = me;
    all.rank = PMIX_RANK_WILDCARD;
    for (int i = 0; i < iters; i++) {
        double t0 = now_us();
        if (PMIx_Fence(&all, 1, NULL, 0) != PMIX_SUCCESS) ok = 0;
        t[i] = now_us() - t0;
    }
    qsort(t, (size_t)iters, sizeof(double), cmp_double);
    printf("TIME rank %u construct_us %.0f min %.0f fence_us %.0f\n", me.rank, construct_median, construct_min,
           t[iters / 2]);
    free(t);
    PMIX_PROC_FREE(procs, nprocs);
    return 0;
}

int main(int argc, char **argv) {
    if (ptest_init(&me) != 0) return 1;
    nprocs = ptest_job_size(&me);
    const char *mode = argc > 1 ? argv[1] : "all";
    if (strcmp(mode, "die") == 0) test_die();
    else if (strcmp(mode, "bootstrap") == 0) test_bootstrap();
    else if (strcmp(mode, "bench") == 0) test_bench(argc > 2 ? atoi(argv[2]) : 20);
    else if (strcmp(mode, "xstep") == 0 && argc > 3) test_xstep(argv[2], argv[3]);
    else if (strcmp(mode, "spawnpsets") == 0 && argc > 2) test_spawn_psets(argv[0], argv[2]);
    else if (strcmp(mode, "psetchild") == 0 && argc > 2) test_pset_child(argv[2]);
    else test_all();
    CHECK_RC(PMIX_SUCCESS, PMIx_Finalize(NULL, 0));
    return ptest_exit();
}
