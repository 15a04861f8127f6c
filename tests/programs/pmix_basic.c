/* Basic client behaviour: init, job data with exact types, put/commit/fence/get in every scope
 * across the local ranks, Store_internal, Resolve_peers/nodes, version and name strings.
 * Run with: srun --mpi=pmixcpp -N1 -n8 pmix_basic */
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ptest.h"

static pmix_proc_t me;

static void check_key(pmix_rank_t rank, const char *key, pmix_data_type_t type, int required) {
    pmix_proc_t p = me;
    pmix_value_t *v = NULL;
    pmix_info_t *opt = ptest_bool_info(PMIX_OPTIONAL, 1);
    p.rank = rank;
    pmix_status_t rc = PMIx_Get(&p, key, opt, 1, &v);
    if (rc != PMIX_SUCCESS) {
        CHECK(!required, "get %s (rank %d): %s", key, (int)rank, PMIx_Error_string(rc));
        return;
    }
    CHECK(v->type == type, "get %s (rank %d) type %s (want %s)", key, (int)rank, PMIx_Data_type_string(v->type),
          PMIx_Data_type_string(type));
    PMIX_VALUE_RELEASE(v);
}

static pmix_status_t get_u32(pmix_rank_t rank, const char *key, uint32_t *out) {
    pmix_proc_t p = me;
    pmix_value_t *v = NULL;
    p.rank = rank;
    pmix_status_t rc = PMIx_Get(&p, key, NULL, 0, &v);
    if (rc != PMIX_SUCCESS) return rc;
    if (v->type != PMIX_UINT32) rc = PMIX_ERR_TYPE_MISMATCH;
    else *out = v->data.uint32;
    PMIX_VALUE_RELEASE(v);
    return rc;
}

int main(void) {
    pmix_status_t rc;
    const char *ver = PMIx_Get_version();
    CHECK(ver != NULL && ver[0] == '4' && ver[1] == '.', "version %s starts with 4.", ver ? ver : "(null)");
    CHECK(!PMIx_Initialized(), "not initialized before PMIx_Init");

    /* The process directory (PMIX_PROCDIR) is there before the program starts: slurmstepd's task
     * hook made it, as the user, 0700. Removed here: the client library makes none, a Get of
     * PMIX_PROCDIR below names it and does not bring it back. */
    char pdir[4096] = "";
    {
        const char *step_dir = getenv("PMIXCPP_STEP_DIR"), *rank = getenv("PMIX_RANK");
        CHECK(step_dir && rank, "PMIXCPP_STEP_DIR and PMIX_RANK are set");
        if (step_dir && rank) snprintf(pdir, sizeof(pdir), "%s/rank.%s", step_dir, rank);
        struct stat sb;
        int st = pdir[0] ? lstat(pdir, &sb) : -1;
        CHECK(st == 0 && S_ISDIR(sb.st_mode) && sb.st_uid == getuid() && (sb.st_mode & 07777) == 0700,
              "process directory %s exists before PMIx_Init, the user's, 0700", pdir);
        CHECK(pdir[0] && rmdir(pdir) == 0, "process directory %s removed", pdir);
    }

    if (ptest_init(&me)) return 1;
    CHECK(PMIx_Initialized(), "initialized");
    const char *env_rank = getenv("PMIX_RANK");
    CHECK(env_rank && (pmix_rank_t)atoi(env_rank) == me.rank, "rank %u matches PMIX_RANK", me.rank);
    CHECK(strcmp(me.nspace, getenv("PMIX_NAMESPACE")) == 0, "namespace %s", me.nspace);

    /* Job data, exact types as OpenMPI checks them */
    check_key(PMIX_RANK_WILDCARD, PMIX_JOB_SIZE, PMIX_UINT32, 1);
    check_key(PMIX_RANK_WILDCARD, PMIX_MAX_PROCS, PMIX_UINT32, 1);
    check_key(PMIX_RANK_WILDCARD, PMIX_LOCAL_SIZE, PMIX_UINT32, 1);
    check_key(PMIX_RANK_WILDCARD, PMIX_LOCAL_PEERS, PMIX_STRING, 1);
    check_key(PMIX_RANK_WILDCARD, PMIX_NUM_NODES, PMIX_UINT32, 1);
    check_key(PMIX_RANK_WILDCARD, PMIX_UNIV_SIZE, PMIX_UINT32, 1);
    check_key(PMIX_RANK_WILDCARD, PMIX_TMPDIR, PMIX_STRING, 1);
    check_key(PMIX_RANK_WILDCARD, PMIX_NSDIR, PMIX_STRING, 1);
    check_key(PMIX_RANK_WILDCARD, PMIX_TDIR_RMCLEAN, PMIX_BOOL, 1);
    check_key(me.rank, PMIX_LOCAL_RANK, PMIX_UINT16, 1);
    check_key(me.rank, PMIX_NODE_RANK, PMIX_UINT16, 1);
    check_key(me.rank, PMIX_APPNUM, PMIX_UINT32, 1);
    check_key(me.rank, PMIX_RANK, PMIX_PROC_RANK, 1);
    check_key(me.rank, PMIX_JOB_SIZE, PMIX_UINT32, 1); /* job-level key asked with a rank */

    /* The process directory Get names is the one that was there (checked above), inside the
     * namespace directory; the Get (of the key, and of all of the rank's data) makes nothing. */
    {
        pmix_value_t *pd = NULL, *nsd = NULL, *all = NULL;
        CHECK_RC(PMIX_SUCCESS, PMIx_Get(&me, PMIX_PROCDIR, NULL, 0, &pd));
        CHECK_RC(PMIX_SUCCESS, PMIx_Get(&me, NULL, NULL, 0, &all));
        pmix_proc_t wild = me;
        wild.rank = PMIX_RANK_WILDCARD;
        CHECK_RC(PMIX_SUCCESS, PMIx_Get(&wild, PMIX_NSDIR, NULL, 0, &nsd));
        if (pd && nsd && pd->type == PMIX_STRING && nsd->type == PMIX_STRING) {
            CHECK(strcmp(pd->data.string, pdir) == 0, "process directory %s is %s", pd->data.string, pdir);
            struct stat sb;
            CHECK(lstat(pd->data.string, &sb) != 0 && errno == ENOENT, "a Get of %s made no directory",
                  pd->data.string);
            CHECK(strncmp(pd->data.string, nsd->data.string, strlen(nsd->data.string)) == 0,
                  "process directory %s is in %s", pd->data.string, nsd->data.string);
        }
        if (pdir[0]) CHECK(mkdir(pdir, 0700) == 0, "process directory %s made again", pdir);
        if (all) PMIX_VALUE_RELEASE(all);
        if (pd) PMIX_VALUE_RELEASE(pd);
        if (nsd) PMIX_VALUE_RELEASE(nsd);
    }

    uint32_t size = 0, lsize = 0;
    CHECK_RC(PMIX_SUCCESS, get_u32(PMIX_RANK_WILDCARD, PMIX_JOB_SIZE, &size));
    CHECK_RC(PMIX_SUCCESS, get_u32(PMIX_RANK_WILDCARD, PMIX_LOCAL_SIZE, &lsize));
    CHECK(size >= 1 && me.rank < size, "job size %u", size);
    for (pmix_rank_t r = 0; r < size; r++) check_key(r, PMIX_HOSTNAME, PMIX_STRING, 1);

    /* The node's topology as hwloc XML, asked for as OpenMPI does (pmix.optional: local data only),
     * and PMIx_Load_topology, which loads it */
    {
        pmix_proc_t wild;
        pmix_value_t *t = NULL;
        PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
        pmix_status_t rc = PMIx_Get(&wild, PMIX_LOCAL_TOPO, ptest_bool_info(PMIX_OPTIONAL, 1), 1, &t);
        CHECK(rc == PMIX_SUCCESS && t && t->type == PMIX_STRING && strstr(t->data.string, "<topology") &&
                  strstr(t->data.string, "type=\"PU\""),
              "PMIX_LOCAL_TOPO with pmix.optional: %s", PMIx_Error_string(rc));
        if (t) PMIX_VALUE_RELEASE(t);
        pmix_topology_t topo;
        PMIX_TOPOLOGY_CONSTRUCT(&topo);
        rc = PMIx_Load_topology(&topo);
        CHECK(rc == PMIX_SUCCESS && topo.topology != NULL && topo.source && strncmp(topo.source, "hwloc", 5) == 0,
              "PMIx_Load_topology: %s", PMIx_Error_string(rc));
    }

    /* Put in every scope, commit, fence with collect, read the peers' values */
    pmix_value_t val;
    char text[64];
    uint32_t u = 1000 + me.rank;
    PMIX_VALUE_LOAD(&val, &u, PMIX_UINT32);
    CHECK_RC(PMIX_SUCCESS, PMIx_Put(PMIX_GLOBAL, "basic.global", &val));
    snprintf(text, sizeof(text), "local-%u", me.rank);
    PMIX_VALUE_LOAD(&val, text, PMIX_STRING);
    CHECK_RC(PMIX_SUCCESS, PMIx_Put(PMIX_LOCAL, "basic.local", &val));
    PMIX_VALUE_DESTRUCT(&val);
    PMIX_VALUE_LOAD(&val, text, PMIX_STRING);
    CHECK_RC(PMIX_SUCCESS, PMIx_Put(PMIX_REMOTE, "basic.remote", &val));
    PMIX_VALUE_DESTRUCT(&val);
    PMIX_VALUE_LOAD(&val, text, PMIX_STRING);
    CHECK_RC(PMIX_SUCCESS, PMIx_Put(PMIX_INTERNAL, "basic.internal", &val));
    PMIX_VALUE_DESTRUCT(&val);
    pmix_byte_object_t bo;
    char blob[100];
    for (int i = 0; i < 100; i++) blob[i] = (char)(i + me.rank);
    bo.bytes = blob;
    bo.size = sizeof(blob);
    PMIX_VALUE_LOAD(&val, &bo, PMIX_BYTE_OBJECT);
    CHECK_RC(PMIX_SUCCESS, PMIx_Put(PMIX_GLOBAL, "basic.blob", &val));
    PMIX_VALUE_DESTRUCT(&val);
    CHECK_RC(PMIX_SUCCESS, PMIx_Commit());

    /* Own values are visible at once, even INTERNAL ones */
    pmix_value_t *v = NULL;
    CHECK_RC(PMIX_SUCCESS, PMIx_Get(&me, "basic.internal", NULL, 0, &v));
    if (v) PMIX_VALUE_RELEASE(v);

    pmix_info_t *collect = ptest_bool_info(PMIX_COLLECT_DATA, 1);
    CHECK_RC(PMIX_SUCCESS, PMIx_Fence(NULL, 0, collect, 1));

    for (pmix_rank_t r = 0; r < size; r++) {
        pmix_proc_t p = me;
        p.rank = r;
        v = NULL;
        rc = PMIx_Get(&p, "basic.global", NULL, 0, &v);
        CHECK(rc == PMIX_SUCCESS && v && v->type == PMIX_UINT32 && v->data.uint32 == 1000 + r,
              "global value of rank %u: %s", r, PMIx_Error_string(rc));
        if (v) PMIX_VALUE_RELEASE(v);
        v = NULL;
        rc = PMIx_Get(&p, "basic.local", NULL, 0, &v);
        snprintf(text, sizeof(text), "local-%u", r);
        CHECK(rc == PMIX_SUCCESS && v && v->type == PMIX_STRING && strcmp(v->data.string, text) == 0,
              "local value of rank %u: %s", r, PMIx_Error_string(rc));
        if (v) PMIX_VALUE_RELEASE(v);
        v = NULL;
        rc = PMIx_Get(&p, "basic.blob", NULL, 0, &v);
        int ok = rc == PMIX_SUCCESS && v && v->type == PMIX_BYTE_OBJECT && v->data.bo.size == 100;
        for (int i = 0; ok && i < 100; i++) ok = v->data.bo.bytes[i] == (char)(i + r);
        CHECK(ok, "byte object of rank %u: %s", r, PMIx_Error_string(rc));
        if (v) PMIX_VALUE_RELEASE(v);
        if (r == (me.rank + 1) % size && r != me.rank) {
            /* all ranks share one node: REMOTE and INTERNAL values of a peer stay invisible */
            pmix_info_t tmo;
            int secs = 2;
            PMIX_INFO_LOAD(&tmo, PMIX_TIMEOUT, &secs, PMIX_INT);
            v = NULL;
            rc = PMIx_Get(&p, "basic.remote", &tmo, 1, &v);
            CHECK(rc == PMIX_ERR_NOT_FOUND || rc == PMIX_ERR_TIMEOUT, "remote-scope value of local rank %u hidden: %s", r,
                  PMIx_Error_string(rc));
            if (v) PMIX_VALUE_RELEASE(v);
            v = NULL;
            rc = PMIx_Get(&p, "basic.internal", &tmo, 1, &v);
            CHECK(rc == PMIX_ERR_NOT_FOUND || rc == PMIX_ERR_TIMEOUT, "internal value of rank %u hidden: %s", r,
                  PMIx_Error_string(rc));
            if (v) PMIX_VALUE_RELEASE(v);
        }
    }

    /* Store_internal: visible to later Gets, for any proc */
    pmix_proc_t peer = me;
    peer.rank = (me.rank + 1) % size;
    uint16_t loc = 42;
    PMIX_VALUE_LOAD(&val, &loc, PMIX_UINT16);
    CHECK_RC(PMIX_SUCCESS, PMIx_Store_internal(&peer, PMIX_LOCALITY, &val));
    v = NULL;
    rc = PMIx_Get(&peer, PMIX_LOCALITY, NULL, 0, &v);
    CHECK(rc == PMIX_SUCCESS && v && v->type == PMIX_UINT16 && v->data.uint16 == 42, "Store_internal value visible: %s",
          PMIx_Error_string(rc));
    if (v) PMIX_VALUE_RELEASE(v);
    snprintf(text, sizeof(text), "SK0:L30:L20:L10:CR%u:HT%u", me.rank, me.rank);
    PMIX_VALUE_LOAD(&val, text, PMIX_STRING);
    CHECK_RC(PMIX_SUCCESS, PMIx_Store_internal(&me, PMIX_LOCALITY_STRING, &val));
    PMIX_VALUE_DESTRUCT(&val);
    v = NULL;
    rc = PMIx_Get(&me, PMIX_LOCALITY_STRING, NULL, 0, &v);
    CHECK(rc == PMIX_SUCCESS && v && v->type == PMIX_STRING && strcmp(v->data.string, text) == 0,
          "Store_internal overrides job data: %s", PMIx_Error_string(rc));
    if (v) PMIX_VALUE_RELEASE(v);

    /* Resolve peers / nodes */
    char host[256] = "";
    v = NULL;
    if (PMIx_Get(&me, PMIX_HOSTNAME, NULL, 0, &v) == PMIX_SUCCESS && v->type == PMIX_STRING)
        snprintf(host, sizeof(host), "%s", v->data.string);
    if (v) PMIX_VALUE_RELEASE(v);
    pmix_proc_t *procs = NULL;
    size_t nprocs = 0;
    rc = PMIx_Resolve_peers(host, me.nspace, &procs, &nprocs);
    CHECK(rc == PMIX_SUCCESS && nprocs == lsize, "Resolve_peers(%s): %s, %zu procs (local size %u)", host,
          PMIx_Error_string(rc), nprocs, lsize);
    int mine = 0;
    for (size_t i = 0; i < nprocs; i++) mine |= procs[i].rank == me.rank;
    CHECK(mine, "Resolve_peers includes myself");
    PMIX_PROC_FREE(procs, nprocs);
    rc = PMIx_Resolve_peers(NULL, NULL, &procs, &nprocs);
    CHECK(rc == PMIX_SUCCESS && nprocs == lsize, "Resolve_peers(NULL): %s, %zu procs", PMIx_Error_string(rc), nprocs);
    if (rc == PMIX_SUCCESS) PMIX_PROC_FREE(procs, nprocs);
    char *nodes = NULL;
    rc = PMIx_Resolve_nodes(me.nspace, &nodes);
    CHECK(rc == PMIX_SUCCESS && nodes && strstr(nodes, host) != NULL, "Resolve_nodes: %s (%s)", PMIx_Error_string(rc),
          nodes ? nodes : "NULL");
    free(nodes);

    /* names */
    CHECK(strcmp(PMIx_Error_string(PMIX_ERR_NOT_FOUND), "PMIX_ERR_NOT_FOUND") == 0, "error string");
    CHECK(strcmp(PMIx_Error_string(PMIX_SUCCESS), "PMIX_SUCCESS") == 0, "success string");
    CHECK(strcmp(PMIx_Data_type_string(PMIX_UINT32), "PMIX_UINT32") == 0, "data type string");
    CHECK(strcmp(PMIx_Scope_string(PMIX_GLOBAL), "PMIX_GLOBAL") == 0, "scope string");
    CHECK(strcmp(PMIx_Get_attribute_string("PMIX_JOB_SIZE"), "pmix.job.size") == 0, "attribute string");
    CHECK(strcmp(PMIx_Get_attribute_name("pmix.job.size"), "PMIX_JOB_SIZE") == 0, "attribute name");

    CHECK_RC(PMIX_SUCCESS, PMIx_Fence(NULL, 0, NULL, 0));
    CHECK_RC(PMIX_SUCCESS, PMIx_Finalize(NULL, 0));
    CHECK(!PMIx_Initialized(), "not initialized after PMIx_Finalize");
    return ptest_exit();
}
