/* PMI-2 across a job (t-pmi.sh): init, job facts, KVS put/fence then every rank gets every other
 * rank's key (with and without the source rank), a key without a rank in its name, the job
 * attributes PMI_process_mapping (checked against where the ranks run) and universeSize, node
 * attributes (put by the node's first rank, waited for by the others, absent ones not waited for),
 * name publish/lookup/unpublish, the errors of bad keys (at once, not a hang), finalize.
 * Prints a TIME line (fence, gets of every key). Mode "abort": rank 1 calls PMI2_Abort.
 * Mode "spawn <dir>": rank 0 spawns 3 copies in mode "child <dir>" with a preput key; each child
 * checks that it was spawned, reads the key, exchanges keys with its siblings and leaves a mark
 * file in <dir>; rank 0 waits for the 3 marks. */
#include <pmi2.h>

#include "pmi_test.h"

#define CHECK_PMI(expected, call)                                                              \
    do {                                                                                       \
        int _rc = (call);                                                                      \
        pt_report(_rc == (expected), "%s -> %d (want %d)", #call, _rc, (int)(expected));      \
    } while (0)

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "all";
    int spawned = -1, size = -1, rank = -1, appnum = -1;

    CHECK(!PMI2_Initialized(), "not initialized before PMI2_Init");
    int rc = PMI2_Init(&spawned, &size, &rank, &appnum);
    if (rc != PMI2_SUCCESS) {
        printf("FAIL rank -1: PMI2_Init -> %d\n", rc);
        return 1;
    }
    pt_rank = rank;
    CHECK(PMI2_Initialized(), "initialized after PMI2_Init");
    CHECK(size > 0 && rank >= 0 && rank < size, "rank %d of size %d", rank, size);
    if (strcmp(mode, "child") != 0) CHECK(appnum == 0 && spawned == 0, "appnum %d, spawned %d", appnum, spawned);
    int r2 = -1, s2 = -1;
    CHECK_PMI(PMI2_SUCCESS, PMI2_Job_GetRank(&r2));
    CHECK_PMI(PMI2_SUCCESS, PMI2_Info_GetSize(&s2));
    CHECK(r2 == rank && s2 == size, "Job_GetRank %d, Info_GetSize %d", r2, s2);
    char jobid[256];
    CHECK_PMI(PMI2_SUCCESS, PMI2_Job_GetId(jobid, sizeof jobid));
    CHECK(jobid[0] != '\0', "job id '%s'", jobid);

    if (strcmp(mode, "child") == 0 && argc > 2) {
        char pre[PMI2_MAX_VALLEN] = "";
        int plen = 0;
        rc = PMI2_KVS_Get(NULL, PMI2_ID_NULL, "PARENT_ROOT_PORT_NAME", pre, sizeof pre, &plen);
        int ok = spawned == 1 && rc == PMI2_SUCCESS && strncmp(pre, "port-of-parent-", 15) == 0;
        char k[64], v[64], got[64];
        snprintf(k, sizeof k, "child-%d", rank);
        snprintf(v, sizeof v, "v%d", rank);
        ok = ok && PMI2_KVS_Put(k, v) == PMI2_SUCCESS && PMI2_KVS_Fence() == PMI2_SUCCESS;
        snprintf(k, sizeof k, "child-%d", (rank + 1) % size);
        snprintf(v, sizeof v, "v%d", (rank + 1) % size);
        ok = ok && PMI2_KVS_Get(NULL, PMI2_ID_NULL, k, got, sizeof got, &plen) == PMI2_SUCCESS && strcmp(got, v) == 0;
        char path[1024];
        snprintf(path, sizeof path, "%s/child.%d", argv[2], rank);
        FILE *f = fopen(path, "w");
        if (f) {
            fprintf(f, "%s spawned %d preput '%s' size %d\n", ok ? "ok" : "bad", spawned, pre, size);
            fclose(f);
        }
        PMI2_Finalize();
        return ok ? 0 : 1;
    }
    if (strcmp(mode, "spawn") == 0 && argc > 2) {
        if (rank == 0) {
            const char *cmds[1] = {argv[0]};
            const char *args[2] = {"child", argv[2]};
            const char **argvs[1] = {args};
            int argcs[1] = {2}, maxprocs[1] = {3}, nkv[1] = {0}, errors[1] = {-99};
            char port[512], child[256] = "";
            snprintf(port, sizeof port, "port-of-parent-%s", jobid);
            PMI_keyval_t pp = {(char *)"PARENT_ROOT_PORT_NAME", port};
            const PMI_keyval_t *preput[1] = {&pp};
            rc = PMI2_Job_Spawn(1, cmds, argcs, argvs, maxprocs, nkv, NULL, 1, preput, child, sizeof child, errors);
            CHECK(rc == PMI2_SUCCESS && errors[0] == PMI2_SUCCESS && child[0] && strcmp(child, jobid) != 0,
                  "PMI2_Job_Spawn of 3 -> %d, job %s", rc, child);
            int seen = 0;
            char path[1024], line[512];
            for (int i = 0; i < 600 && seen < 3; i++) {
                seen = 0;
                for (int c = 0; c < 3; c++) {
                    snprintf(path, sizeof path, "%s/child.%d", argv[2], c);
                    FILE *f = fopen(path, "r");
                    if (f && fgets(line, sizeof line, f) && strchr(line, '\n')) seen++;
                    if (f) fclose(f);
                }
                if (seen < 3) usleep(100000);
            }
            int good = 0;
            for (int c = 0; c < 3; c++) {
                snprintf(path, sizeof path, "%s/child.%d", argv[2], c);
                FILE *f = fopen(path, "r");
                if (f && fgets(line, sizeof line, f)) {
                    good += strncmp(line, "ok ", 3) == 0;
                    printf("CHILD %d: %s", c, line);
                }
                if (f) fclose(f);
            }
            CHECK(good == 3, "%d of 3 children were spawned, read the preput key and exchanged keys", good);
        }
        PMI2_Finalize();
        return pt_exit();
    }
    if (strcmp(mode, "abort") == 0) {
        if (rank == 1) {
            printf("ABORTING rank 1\n");
            fflush(stdout);
            PMI2_Abort(1, "pmi2_test: rank 1 aborts");
            printf("FAIL rank 1: PMI2_Abort returned\n");
            return 1;
        }
        /* rank 1's abort ends the step; a barrier that returns first must fail */
        rc = PMI2_KVS_Fence();
        printf("%s rank %d: the barrier after the abort returned %d\n", rc == 0 ? "FAIL" : "PASS", rank, rc);
        return 1;
    }

    char key[PMI2_MAX_KEYLEN], val[PMI2_MAX_VALLEN], want[PMI2_MAX_VALLEN];
    int len = 0;
    snprintf(key, sizeof key, "bc-%d", rank);
    snprintf(val, sizeof val, "card-of-%d-in-%s", rank, jobid);
    CHECK_PMI(PMI2_SUCCESS, PMI2_KVS_Put(key, val));
    if (rank == size - 1) CHECK_PMI(PMI2_SUCCESS, PMI2_KVS_Put("shared-root-key", "from-the-last-rank"));
    double t0 = pt_now_us();
    CHECK_PMI(PMI2_SUCCESS, PMI2_KVS_Fence());
    double t_fence = pt_now_us() - t0;

    int bad = 0;
    t0 = pt_now_us();
    for (int r = 0; r < size; r++) {
        snprintf(key, sizeof key, "bc-%d", r);
        snprintf(want, sizeof want, "card-of-%d-in-%s", r, jobid);
        if (PMI2_KVS_Get(jobid, PMI2_ID_NULL, key, val, sizeof val, &len) != PMI2_SUCCESS || strcmp(val, want) != 0 ||
            len != (int)strlen(want))
            bad++;
    }
    double t_gets = pt_now_us() - t0;
    CHECK(bad == 0, "the keys of all %d ranks read back, source unknown (%d wrong)", size, bad);
    bad = 0;
    for (int r = 0; r < size; r++) {
        snprintf(key, sizeof key, "bc-%d", r);
        snprintf(want, sizeof want, "card-of-%d-in-%s", r, jobid);
        if (PMI2_KVS_Get(NULL, r, key, val, sizeof val, &len) != PMI2_SUCCESS || strcmp(val, want) != 0) bad++;
    }
    CHECK(bad == 0, "the keys of all %d ranks read back, source given, job id NULL (%d wrong)", size, bad);
    CHECK(PMI2_KVS_Get(jobid, PMI2_ID_NULL, "shared-root-key", val, sizeof val, &len) == PMI2_SUCCESS &&
              strcmp(val, "from-the-last-rank") == 0,
          "a key put by another rank, got by its name alone");

    /* Errors: at once, never a hang. */
    t0 = pt_now_us();
    rc = PMI2_KVS_Get(jobid, PMI2_ID_NULL, "no-rank-put-this-key", val, sizeof val, &len);
    double t_missing = pt_now_us() - t0;
    CHECK(rc != PMI2_SUCCESS && t_missing < 5e6, "a key no rank put: error %d in %.0f us", rc, t_missing);
    CHECK(PMI2_KVS_Put("k", NULL) != PMI2_SUCCESS, "a Put without a value fails");

    /* Job attributes. */
    char map[PMI2_MAX_VALLEN];
    int found = 0;
    rc = PMI2_Info_GetJobAttr("PMI_process_mapping", map, sizeof map, &found);
    CHECK(rc == PMI2_SUCCESS && found, "PMI_process_mapping: %s", found ? map : "(none)");
    if (rank == 0 && found) printf("MAPPING %s\n", map);
    int *node_of = calloc(size, sizeof(int));
    int mapped = found && pt_expand_mapping(map, size, node_of) == 0;
    CHECK(mapped, "the mapping reads as MPICH reads it");
    found = 0;
    rc = PMI2_Info_GetJobAttr("universeSize", val, sizeof val, &found);
    CHECK(rc == PMI2_SUCCESS && found && atoi(val) >= size, "universeSize %s", found ? val : "(none)");

    /* Node attributes: the node's first rank (by the mapping) puts one, the node's ranks wait for it. */
    int leader = rank;
    for (int r = 0; mapped && r < size; r++)
        if (node_of[r] == node_of[rank]) {
            leader = r;
            break;
        }
    char attr[64], aval[PMI2_MAX_VALLEN];
    snprintf(want, sizeof want, "node-attr-of-leader-%d", leader);
    if (rank == leader) CHECK_PMI(PMI2_SUCCESS, PMI2_Info_PutNodeAttr("pmi2-test-attr", want));
    found = 0;
    rc = PMI2_Info_GetNodeAttr("pmi2-test-attr", aval, sizeof aval, &found, 1);
    CHECK(rc == PMI2_SUCCESS && found && strcmp(aval, want) == 0, "node attribute of this node's rank %d: %s", leader,
          found ? aval : "(none)");
    snprintf(attr, sizeof attr, "absent-attr-%d", rank);
    found = -1;
    t0 = pt_now_us();
    rc = PMI2_Info_GetNodeAttr(attr, aval, sizeof aval, &found, 0);
    CHECK(rc == PMI2_SUCCESS && found == 0, "an absent node attribute, not waited for: found %d in %.0f us", found,
          pt_now_us() - t0);

    /* Names. */
    char svc[512], port[256];
    snprintf(svc, sizeof svc, "pmi2-test-svc-%s", jobid);
    if (rank == 0) CHECK_PMI(PMI2_SUCCESS, PMI2_Nameserv_publish(svc, NULL, "tcp://port-of-rank-0"));
    PMI2_KVS_Fence();
    rc = PMI2_Nameserv_lookup(svc, NULL, port, sizeof port);
    CHECK(rc == PMI2_SUCCESS && strcmp(port, "tcp://port-of-rank-0") == 0, "lookup of rank 0's name -> %d %s", rc,
          rc == PMI2_SUCCESS ? port : "");
    PMI2_KVS_Fence();
    if (rank == 0) CHECK_PMI(PMI2_SUCCESS, PMI2_Nameserv_unpublish(svc, NULL));
    PMI2_KVS_Fence();
    CHECK(PMI2_Nameserv_lookup(svc, NULL, port, sizeof port) != PMI2_SUCCESS, "lookup after the unpublish fails");

    printf("TIME rank %d fence_us %.0f getall_us %.0f missing_us %.0f\n", rank, t_fence, t_gets, t_missing);
    CHECK_PMI(PMI2_SUCCESS, PMI2_Finalize());
    return pt_exit();
}
