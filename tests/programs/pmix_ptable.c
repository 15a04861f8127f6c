/* PMIx_Query_info(PMIX_QUERY_PROC_TABLE) across nodes: every rank publishes its getpid() and its
 * node's name; rank 0 queries the table and compares every row, local and remote: real pid,
 * hostname (= the rank's PMIX_HOSTNAME, whose PMIX_NODEID is printed), state RUNNING, the
 * executable; and the v4.1 form (a PMIX_QUERY_RESULTS per query holding PMIX_QUERY_PROC_TABLE).
 *
 *   pmix_ptable          the checks above, a fence, then every rank ends normally
 *   pmix_ptable exit     then, after that fence, the ranks of local rank 1 and every rank of the
 *                        last node call PMIx_Finalize and exit with status 10 + rank; rank 0 asks
 *                        again until each of them is PMIX_PROC_STATE_TERM_NON_ZERO with its exit
 *                        code (the last node's from the rows it sent as its part ended, the others'
 *                        live from their nodes), while the others are still RUNNING; then the
 *                        ranks left fence among themselves and end.
 *   pmix_ptable silent FILE   rank 2 prints its slurmstepd's pid ("STEPD P"); once FILE exists (the
 *                        test stopped that slurmstepd), rank 0 asks with PMIX_TIMEOUT 3: partial
 *                        success after about 3 s, that node's ranks pid 0 and COMM_FAILED, the
 *                        others' rows intact ("QUERY-DONE ..."); then a fence once it runs again.
 * Lines: "PTABLE rank R pid P host H nodeid N state S exit E" (rank 0), PASS/FAIL, RESULT-*. */
#include "ptest.h"

#include <pmix.h>
#include <time.h>

static pmix_proc_t me;
static uint32_t size;

static const pmix_info_t *find_key(const pmix_info_t *infos, size_t n, const char *key) {
    for (size_t i = 0; i < n; ++i)
        if (PMIX_CHECK_KEY(&infos[i], key)) return &infos[i];
    return NULL;
}

static int get_u32(uint32_t rank, const char *key, uint32_t *out) {
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, me.nspace, rank);
    pmix_value_t *v = NULL;
    if (PMIx_Get(&p, key, NULL, 0, &v) != PMIX_SUCCESS || v == NULL) return -1;
    int ok = 0;
    if (v->type == PMIX_UINT32) *out = v->data.uint32;
    else if (v->type == PMIX_UINT16) *out = v->data.uint16;
    else if (v->type == PMIX_INT32) *out = (uint32_t)v->data.int32;
    else ok = -1;
    PMIX_VALUE_RELEASE(v);
    return ok;
}

static char *get_str(uint32_t rank, const char *key) {
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, me.nspace, rank);
    pmix_value_t *v = NULL;
    if (PMIx_Get(&p, key, NULL, 0, &v) != PMIX_SUCCESS || v == NULL) return NULL;
    char *s = v->type == PMIX_STRING && v->data.string ? strdup(v->data.string) : NULL;
    PMIX_VALUE_RELEASE(v);
    return s;
}

/* The table from the PMIX_QUERY_RESULTS form; *flat: the same from the flat (key, value) list.
 * Returns the results (free with PMIX_INFO_FREE) or NULL. */
static pmix_info_t *query_table(pmix_status_t *rc, size_t *nres, const pmix_data_array_t **table,
                                const pmix_data_array_t **flat) {
    char *keys[] = {PMIX_QUERY_PROC_TABLE, NULL};
    pmix_query_t q;
    PMIX_QUERY_CONSTRUCT(&q);
    q.keys = keys;
    pmix_info_t *res = NULL;
    *nres = 0;
    *table = *flat = NULL;
    *rc = PMIx_Query_info(&q, 1, &res, nres);
    q.keys = NULL;
    PMIX_QUERY_DESTRUCT(&q);
    if (res == NULL) return NULL;
    const pmix_info_t *r = find_key(res, *nres, PMIX_QUERY_RESULTS);
    if (r && r->value.type == PMIX_DATA_ARRAY && r->value.data.darray && r->value.data.darray->type == PMIX_INFO) {
        const pmix_info_t *t = find_key((pmix_info_t *)r->value.data.darray->array, r->value.data.darray->size,
                                        PMIX_QUERY_PROC_TABLE);
        if (t && t->value.type == PMIX_DATA_ARRAY) *table = t->value.data.darray;
    }
    const pmix_info_t *f = find_key(res, *nres, PMIX_QUERY_PROC_TABLE);
    if (f && f->value.type == PMIX_DATA_ARRAY) *flat = f->value.data.darray;
    return res;
}

static int leaves_early(uint32_t rank, uint32_t nnodes) {
    uint32_t lrank = 0, node = 0;
    if (get_u32(rank, PMIX_LOCAL_RANK, &lrank) != 0 || get_u32(rank, PMIX_NODEID, &node) != 0) return 0;
    return lrank != 0 || (nnodes > 1 && node == nnodes - 1);
}

int main(int argc, char **argv) {
    int exit_mode = argc > 1 && strcmp(argv[1], "exit") == 0;
    int silent_mode = argc > 2 && strcmp(argv[1], "silent") == 0;
    if (ptest_init(&me) != 0) return 1;
    CHECK(get_u32(PMIX_RANK_WILDCARD, PMIX_JOB_SIZE, &size) == 0 && size > 0, "job size %u", size);
    uint32_t nnodes = 0;
    CHECK(get_u32(PMIX_RANK_WILDCARD, PMIX_NUM_NODES, &nnodes) == 0 && nnodes > 0, "%u nodes", nnodes);

    /* what each rank says of itself */
    pmix_value_t v;
    int32_t pid = (int32_t)getpid();
    PMIX_VALUE_LOAD(&v, &pid, PMIX_INT32);
    CHECK_RC(PMIX_SUCCESS, PMIx_Put(PMIX_GLOBAL, "ptab.pid", &v));
    PMIX_VALUE_DESTRUCT(&v);
    const char *node = getenv("SLURMD_NODENAME");
    char host[256] = "";
    if (node == NULL) {
        gethostname(host, sizeof host - 1);
        node = host;
    }
    PMIX_VALUE_LOAD(&v, node, PMIX_STRING);
    CHECK_RC(PMIX_SUCCESS, PMIx_Put(PMIX_GLOBAL, "ptab.node", &v));
    PMIX_VALUE_DESTRUCT(&v);
    CHECK_RC(PMIX_SUCCESS, PMIx_Commit());
    CHECK_RC(PMIX_SUCCESS, PMIx_Fence(NULL, 0, ptest_bool_info(PMIX_COLLECT_DATA, 1), 1));

    int32_t *pids = calloc(size, sizeof *pids);
    if (me.rank == 0) {
        pmix_status_t rc;
        size_t nres = 0;
        const pmix_data_array_t *table = NULL, *flat = NULL;
        pmix_info_t *res = query_table(&rc, &nres, &table, &flat);
        CHECK(rc == PMIX_SUCCESS, "PMIx_Query_info(PMIX_QUERY_PROC_TABLE) -> %s", PMIx_Error_string(rc));
        CHECK(table != NULL, "a PMIX_QUERY_RESULTS holds PMIX_QUERY_PROC_TABLE (v4.1 form)");
        CHECK(table && table->type == PMIX_PROC_INFO && table->size == size, "the table has the %u ranks", size);
        CHECK(flat && table && flat->size == table->size, "the flat (key, value) form has the same rows");
        uint32_t remote_ok = 0, remote = 0;
        char *my_host = get_str(0, PMIX_HOSTNAME);
        for (uint32_t r = 0; table && table->type == PMIX_PROC_INFO && r < table->size && r < size; ++r) {
            const pmix_proc_info_t *pi = &((pmix_proc_info_t *)table->array)[r];
            pmix_proc_t p;
            PMIX_LOAD_PROCID(&p, me.nspace, r);
            pmix_value_t *pv = NULL;
            int32_t said_pid = -1;
            if (PMIx_Get(&p, "ptab.pid", NULL, 0, &pv) == PMIX_SUCCESS) {
                said_pid = pv->data.int32;
                PMIX_VALUE_RELEASE(pv);
            }
            pids[r] = said_pid;
            char *said_node = get_str(r, "ptab.node");
            char *hostname = get_str(r, PMIX_HOSTNAME);
            uint32_t nodeid = UINT32_MAX;
            get_u32(r, PMIX_NODEID, &nodeid);
            int is_remote = my_host && hostname && strcmp(my_host, hostname) != 0;
            printf("PTABLE rank %u pid %d host %s nodeid %u state %s exit %d exe %s\n", r, (int)pi->pid,
                   pi->hostname ? pi->hostname : "(null)", nodeid, PMIx_Proc_state_string(pi->state), pi->exit_code,
                   pi->executable_name ? pi->executable_name : "(null)");
            int ok = pi->proc.rank == r && strcmp(pi->proc.nspace, me.nspace) == 0 && pi->pid > 0 &&
                     pi->pid == said_pid && pi->hostname && said_node && strcmp(pi->hostname, said_node) == 0 &&
                     hostname && strcmp(pi->hostname, hostname) == 0 && pi->state == PMIX_PROC_STATE_RUNNING &&
                     pi->executable_name && strstr(pi->executable_name, "pmix_ptable");
            CHECK(ok, "row of rank %u (%s): pid %d (it says %d), host %s (it says %s, job data %s), %s", r,
                  is_remote ? "remote" : "local", (int)pi->pid, (int)said_pid, pi->hostname ? pi->hostname : "?",
                  said_node ? said_node : "?", hostname ? hostname : "?", PMIx_Proc_state_string(pi->state));
            if (is_remote) {
                remote++;
                remote_ok += ok;
            }
            free(said_node);
            free(hostname);
        }
        printf("REMOTE-PIDS %u of %u\n", remote_ok, remote);
        CHECK(nnodes < 2 || (remote > 0 && remote_ok == remote), "the %u ranks on other nodes have their real pids",
              remote);
        free(my_host);
        if (res) PMIX_INFO_FREE(res, nres);
    }

    /* nobody ends before rank 0 has its first table */
    CHECK_RC(PMIX_SUCCESS, PMIx_Fence(NULL, 0, NULL, 0));
    if (silent_mode) {
        if (me.rank == 2) {
            printf("STEPD %d\n", (int)getppid());  /* this node's slurmstepd, to be stopped */
            fflush(stdout);
        }
        if (me.rank == 0) {
            /* once the test has stopped node 2's slurmstepd: a query with a 3 s timeout */
            for (int i = 0; i < 600 && access(argv[2], F_OK) != 0; ++i) usleep(100000);
            char *keys[] = {PMIX_QUERY_PROC_TABLE, NULL};
            pmix_query_t q;
            PMIX_QUERY_CONSTRUCT(&q);
            q.keys = keys;
            PMIX_INFO_CREATE(q.qualifiers, 1);
            q.nqual = 1;
            int timeout = 3;
            PMIX_INFO_LOAD(&q.qualifiers[0], PMIX_TIMEOUT, &timeout, PMIX_INT);
            pmix_info_t *res = NULL;
            size_t nres = 0;
            struct timespec t0, t1;
            clock_gettime(CLOCK_MONOTONIC, &t0);
            pmix_status_t rc = PMIx_Query_info(&q, 1, &res, &nres);
            clock_gettime(CLOCK_MONOTONIC, &t1);
            double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
            q.keys = NULL;
            PMIX_QUERY_DESTRUCT(&q);
            printf("QUERY-DONE %s after %.1f s\n", PMIx_Error_string(rc), secs);
            fflush(stdout);
            CHECK(rc == PMIX_QUERY_PARTIAL_SUCCESS, "a silent node: PMIX_QUERY_PARTIAL_SUCCESS (got %s)",
                  PMIx_Error_string(rc));
            CHECK(secs >= 2.5 && secs < 10, "answered after the 3 s timeout (%.1f s)", secs);
            const pmix_info_t *f = find_key(res, nres, PMIX_QUERY_PROC_TABLE);
            if (f && f->value.type == PMIX_DATA_ARRAY && f->value.data.darray->size == size) {
                const pmix_proc_info_t *pi = (pmix_proc_info_t *)f->value.data.darray->array;
                for (uint32_t r = 0; r < size; ++r) {
                    uint32_t node = 0;
                    get_u32(r, PMIX_NODEID, &node);
                    printf("PTABLE-SILENT rank %u node %u pid %d state %s\n", r, node, (int)pi[r].pid,
                           PMIx_Proc_state_string(pi[r].state));
                    if (node == 1)
                        CHECK(pi[r].pid == 0 && pi[r].state == PMIX_PROC_STATE_COMM_FAILED,
                              "rank %u of the stopped node: pid 0, COMM_FAILED", r);
                    else
                        CHECK(pi[r].pid > 0 && pi[r].state == PMIX_PROC_STATE_RUNNING, "rank %u: pid %d, RUNNING", r,
                              (int)pi[r].pid);
                }
            } else {
                CHECK(0, "the table comes with the partial answer");
            }
            if (res) PMIX_INFO_FREE(res, nres);
        }
        CHECK_RC(PMIX_SUCCESS, PMIx_Fence(NULL, 0, NULL, 0));  /* after the test resumed it */
    }
    if (exit_mode) {
        if (leaves_early(me.rank, nnodes)) {
            PMIx_Finalize(NULL, 0);
            printf("LEAVING rank %u with status %u\n", me.rank, 10 + me.rank % 100);
            fflush(stdout);
            exit((int)(10 + me.rank % 100));
        }
        if (me.rank == 0) {
            /* ask until every rank that left shows its end, at most 30 s */
            time_t until = time(NULL) + 30;
            int done = 0;
            pmix_status_t rc = PMIX_ERROR;
            while (!done && time(NULL) < until) {
                size_t nres = 0;
                const pmix_data_array_t *table = NULL, *flat = NULL;
                pmix_info_t *res = query_table(&rc, &nres, &table, &flat);
                if (rc == PMIX_SUCCESS && table && table->type == PMIX_PROC_INFO && table->size == size) {
                    done = 1;
                    const pmix_proc_info_t *pi = (pmix_proc_info_t *)table->array;
                    for (uint32_t r = 0; r < size; ++r)
                        if (leaves_early(r, nnodes) && pi[r].state != PMIX_PROC_STATE_TERM_NON_ZERO) done = 0;
                    if (done) {
                        uint32_t ended = 0;
                        for (uint32_t r = 0; r < size; ++r) {
                            printf("PTABLE-AFTER rank %u pid %d host %s state %s exit %d\n", r, (int)pi[r].pid,
                                   pi[r].hostname ? pi[r].hostname : "(null)", PMIx_Proc_state_string(pi[r].state),
                                   pi[r].exit_code);
                            if (leaves_early(r, nnodes)) {
                                ended++;
                                CHECK(pi[r].exit_code == (int)(10 + r % 100) && pi[r].pid == pids[r],
                                      "rank %u ended: exit code %d (want %u), pid %d (was %d)", r, pi[r].exit_code,
                                      10 + r % 100, (int)pi[r].pid, (int)pids[r]);
                            } else {
                                CHECK(pi[r].state == PMIX_PROC_STATE_RUNNING && pi[r].pid == pids[r],
                                      "rank %u still runs: %s, pid %d", r, PMIx_Proc_state_string(pi[r].state),
                                      (int)pi[r].pid);
                            }
                        }
                        printf("ENDED-RANKS %u\n", ended);
                    }
                }
                if (res) PMIX_INFO_FREE(res, nres);
                if (!done) usleep(200000);
            }
            CHECK(done, "every rank that left is TERM_NON_ZERO in the table within 30 s (last query: %s)",
                  PMIx_Error_string(rc));
        }
        /* the ranks left: one fence among them */
        pmix_proc_t *stay = calloc(size, sizeof *stay);
        size_t n = 0;
        for (uint32_t r = 0; r < size; ++r)
            if (!leaves_early(r, nnodes)) PMIX_LOAD_PROCID(&stay[n++], me.nspace, r);
        CHECK_RC(PMIX_SUCCESS, PMIx_Fence(stay, n, NULL, 0));
        free(stay);
    }
    free(pids);
    int rc = ptest_exit();
    PMIx_Finalize(NULL, 0);
    return rc;
}
