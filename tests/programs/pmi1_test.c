/* PMI-1 across a job (t-pmi.sh): init, job facts, KVS put/commit/barrier then every rank gets
 * every other rank's key (two epochs, the second overwriting), a key without a rank in its name,
 * PMI_process_mapping against the clique, publish/lookup/unpublish, the errors of bad keys and
 * KVS names (at once, not a hang), finalize. Prints a TIME line (barrier, gets of every key).
 * Mode "abort": rank 1 calls PMI_Abort(7) while the others wait in a barrier.
 * Mode "spawn <dir>": rank 0 spawns 2 copies in mode "child <dir>" with PMI_Spawn_multiple and a
 * preput key; each child checks that it was spawned, reads the key from its KVS and leaves a
 * mark file in <dir>; rank 0 waits for the 2 marks. */
#include <pmi.h>

#include "pmi_test.h"

#define CHECK_PMI(expected, call)                                                              \
    do {                                                                                       \
        int _rc = (call);                                                                      \
        pt_report(_rc == (expected), "%s -> %d (want %d)", #call, _rc, (int)(expected));      \
    } while (0)

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "all";
    int spawned = -1, size = -1, rank = -1, usize = -1, appnum = -1;
    PMI_BOOL inited = PMI_FALSE;

    CHECK_PMI(PMI_SUCCESS, PMI_Initialized(&inited));
    CHECK(inited == PMI_FALSE, "not initialized before PMI_Init");
    int rc = PMI_Init(&spawned);
    if (rc != PMI_SUCCESS) {
        printf("FAIL rank -1: PMI_Init -> %d\n", rc);
        return 1;
    }
    PMI_Get_rank(&rank);
    pt_rank = rank;
    CHECK_PMI(PMI_SUCCESS, PMI_Initialized(&inited));
    CHECK(inited == PMI_TRUE, "initialized after PMI_Init");
    CHECK_PMI(PMI_SUCCESS, PMI_Get_size(&size));
    CHECK_PMI(PMI_SUCCESS, PMI_Get_universe_size(&usize));
    CHECK_PMI(PMI_SUCCESS, PMI_Get_appnum(&appnum));
    CHECK(size > 0 && rank >= 0 && rank < size, "rank %d of size %d", rank, size);
    CHECK(usize >= size, "universe size %d >= size %d", usize, size);
    CHECK(appnum == 0, "appnum %d", appnum);
    if (strcmp(mode, "child") != 0) CHECK(spawned == 0, "not spawned (%d)", spawned);

    int namelen = 0, keylen = 0, vallen = 0, idlen = 0;
    CHECK_PMI(PMI_SUCCESS, PMI_KVS_Get_name_length_max(&namelen));
    CHECK_PMI(PMI_SUCCESS, PMI_KVS_Get_key_length_max(&keylen));
    CHECK_PMI(PMI_SUCCESS, PMI_KVS_Get_value_length_max(&vallen));
    CHECK_PMI(PMI_SUCCESS, PMI_Get_id_length_max(&idlen));
    CHECK(namelen >= 16 && keylen >= 32 && vallen >= 256, "length maxima: name %d key %d value %d", namelen, keylen,
          vallen);
    char *kvs = calloc(1, namelen + 1), *id = calloc(1, idlen + 1);
    char *val = calloc(1, vallen + 1), *want = calloc(1, vallen + 1);
    CHECK_PMI(PMI_SUCCESS, PMI_KVS_Get_my_name(kvs, namelen));
    CHECK_PMI(PMI_SUCCESS, PMI_Get_id(id, idlen));
    CHECK(kvs[0] != '\0' && strcmp(kvs, id) == 0, "KVS name '%s' = id '%s'", kvs, id);

    if (strcmp(mode, "child") == 0 && argc > 2) {
        char pre[256] = "";
        rc = PMI_KVS_Get(kvs, "PARENT_ROOT_PORT_NAME", pre, sizeof pre);
        int ok = spawned == PMI_TRUE && rc == PMI_SUCCESS && strncmp(pre, "port-of-parent-", 15) == 0;
        char path[1024];
        snprintf(path, sizeof path, "%s/child.%d", argv[2], rank);
        FILE *f = fopen(path, "w");
        if (f) {
            fprintf(f, "%s spawned %d preput '%s' size %d\n", ok ? "ok" : "bad", spawned, pre, size);
            fclose(f);
        }
        PMI_Finalize();
        return ok ? 0 : 1;
    }
    if (strcmp(mode, "spawn") == 0 && argc > 2) {
        if (rank == 0) {
            const char *cmds[1] = {argv[0]};
            const char *args[3] = {"child", argv[2], NULL};
            const char **argvs[1] = {args};
            int maxprocs[1] = {2}, nkv[1] = {0}, errors[1] = {-99};
            char port[512];
            snprintf(port, sizeof port, "port-of-parent-%s", kvs);
            PMI_keyval_t preput[1] = {{(char *)"PARENT_ROOT_PORT_NAME", port}};
            rc = PMI_Spawn_multiple(1, cmds, argvs, maxprocs, nkv, NULL, 1, preput, errors);
            CHECK(rc == PMI_SUCCESS && errors[0] == PMI_SUCCESS, "PMI_Spawn_multiple of 2 -> %d", rc);
            int seen = 0, good = 0;
            char path[1024], line[512];
            for (int i = 0; i < 600 && seen < 2; i++) {
                seen = 0;
                for (int c = 0; c < 2; c++) {
                    snprintf(path, sizeof path, "%s/child.%d", argv[2], c);
                    FILE *f = fopen(path, "r");
                    if (f && fgets(line, sizeof line, f) && strchr(line, '\n')) seen++;
                    if (f) fclose(f);
                }
                if (seen < 2) usleep(100000);
            }
            for (int c = 0; c < 2; c++) {
                snprintf(path, sizeof path, "%s/child.%d", argv[2], c);
                FILE *f = fopen(path, "r");
                if (f && fgets(line, sizeof line, f)) {
                    good += strncmp(line, "ok ", 3) == 0;
                    printf("CHILD %d: %s", c, line);
                }
                if (f) fclose(f);
            }
            CHECK(good == 2, "%d of 2 children were spawned and read the preput key", good);
        }
        PMI_Finalize();
        return pt_exit();
    }
    if (strcmp(mode, "abort") == 0) {
        if (rank == 1) {
            printf("ABORTING rank 1\n");
            fflush(stdout);
            PMI_Abort(7, "pmi1_test: rank 1 aborts");
            printf("FAIL rank 1: PMI_Abort returned\n");
            return 1;
        }
        /* rank 1's abort ends the step; a barrier that returns first must fail */
        rc = PMI_Barrier();
        printf("%s rank %d: the barrier after the abort returned %d\n", rc == 0 ? "FAIL" : "PASS", rank, rc);
        return 1;
    }

    /* Epoch 1: one key per rank, and one key whose name says nothing of its rank. */
    char key[64];
    snprintf(key, sizeof key, "P%d-businesscard", rank);
    snprintf(val, vallen, "card-of-%d-in-%s", rank, kvs);
    CHECK_PMI(PMI_SUCCESS, PMI_KVS_Put(kvs, key, val));
    if (rank == size - 1) CHECK_PMI(PMI_SUCCESS, PMI_KVS_Put(kvs, "shared-root-key", "from-the-last-rank"));
    CHECK_PMI(PMI_SUCCESS, PMI_KVS_Commit(kvs));
    double t0 = pt_now_us();
    CHECK_PMI(PMI_SUCCESS, PMI_Barrier());
    double t_barrier = pt_now_us() - t0;

    int bad = 0;
    t0 = pt_now_us();
    for (int r = 0; r < size; r++) {
        snprintf(key, sizeof key, "P%d-businesscard", r);
        snprintf(want, vallen, "card-of-%d-in-%s", r, kvs);
        if (PMI_KVS_Get(kvs, key, val, vallen) != PMI_SUCCESS || strcmp(val, want) != 0) bad++;
    }
    double t_gets = pt_now_us() - t0;
    CHECK(bad == 0, "epoch 1: the keys of all %d ranks read back (%d wrong)", size, bad);
    CHECK(PMI_KVS_Get(kvs, "shared-root-key", val, vallen) == PMI_SUCCESS && strcmp(val, "from-the-last-rank") == 0,
          "a key put by another rank, got by its name alone");

    /* Epoch 2: every rank overwrites its key and adds one. */
    snprintf(key, sizeof key, "P%d-businesscard", rank);
    snprintf(val, vallen, "second-card-of-%d", rank);
    CHECK_PMI(PMI_SUCCESS, PMI_KVS_Put(kvs, key, val));
    snprintf(key, sizeof key, "epoch2-%d", rank);
    CHECK_PMI(PMI_SUCCESS, PMI_KVS_Put(kvs, key, "e2"));
    CHECK_PMI(PMI_SUCCESS, PMI_KVS_Commit(kvs));
    CHECK_PMI(PMI_SUCCESS, PMI_Barrier());
    bad = 0;
    for (int r = 0; r < size; r++) {
        snprintf(key, sizeof key, "P%d-businesscard", r);
        snprintf(want, vallen, "second-card-of-%d", r);
        if (PMI_KVS_Get(kvs, key, val, vallen) != PMI_SUCCESS || strcmp(val, want) != 0) bad++;
        snprintf(key, sizeof key, "epoch2-%d", (r + 1) % size);
        if (PMI_KVS_Get(kvs, key, val, vallen) != PMI_SUCCESS || strcmp(val, "e2") != 0) bad++;
    }
    CHECK(bad == 0, "epoch 2: overwritten and new keys of all %d ranks read back (%d wrong)", size, bad);

    /* Errors: at once, never a hang. */
    t0 = pt_now_us();
    rc = PMI_KVS_Get(kvs, "no-rank-put-this-key", val, vallen);
    double t_missing = pt_now_us() - t0;
    CHECK(rc != PMI_SUCCESS && t_missing < 5e6, "a key no rank put: error %d in %.0f us", rc, t_missing);
    CHECK(PMI_KVS_Get("not-our-kvs", "P0-businesscard", val, vallen) != PMI_SUCCESS, "a Get from another KVS name fails");
    CHECK(PMI_KVS_Put(kvs, "k", NULL) != PMI_SUCCESS, "a Put without a value fails");
    CHECK(PMI_KVS_Get(kvs, "P0-businesscard", val, 2) != PMI_SUCCESS, "a Get into a too small buffer fails");

    /* Clique against the process mapping. */
    int csize = 0;
    CHECK_PMI(PMI_SUCCESS, PMI_Get_clique_size(&csize));
    int *cranks = calloc(csize > 0 ? csize : 1, sizeof(int));
    CHECK_PMI(PMI_SUCCESS, PMI_Get_clique_ranks(cranks, csize));
    int self_in = 0;
    for (int i = 0; i < csize; i++) self_in |= cranks[i] == rank;
    CHECK(csize >= 1 && self_in, "clique of %d ranks holds this rank", csize);
    char *map = calloc(1, vallen + 1);
    rc = PMI_KVS_Get(kvs, "PMI_process_mapping", map, vallen);
    CHECK(rc == PMI_SUCCESS, "PMI_process_mapping: %s", rc == PMI_SUCCESS ? map : "(none)");
    if (rank == 0 && rc == PMI_SUCCESS) printf("MAPPING %s\n", map);
    int *node_of = calloc(size, sizeof(int));
    if (rc == PMI_SUCCESS && pt_expand_mapping(map, size, node_of) == 0) {
        int same = 0, match = 1;
        for (int r = 0; r < size; r++)
            if (node_of[r] == node_of[rank]) {
                same++;
                int in = 0;
                for (int i = 0; i < csize; i++) in |= cranks[i] == r;
                match &= in;
            }
        CHECK(match && same == csize, "the mapping puts the clique's %d ranks on this rank's node (%d there)", csize,
              same);
    } else {
        CHECK(0, "the mapping reads as MPICH reads it");
    }

    /* Names. */
    char svc[512], port[256];
    snprintf(svc, sizeof svc, "pmi1-test-svc-%s", kvs);
    if (rank == 0) CHECK_PMI(PMI_SUCCESS, PMI_Publish_name(svc, "tcp://port-of-rank-0"));
    PMI_Barrier();
    rc = PMI_Lookup_name(svc, port);
    CHECK(rc == PMI_SUCCESS && strcmp(port, "tcp://port-of-rank-0") == 0, "lookup of rank 0's name -> %d %s", rc,
          rc == PMI_SUCCESS ? port : "");
    PMI_Barrier();
    if (rank == 0) CHECK_PMI(PMI_SUCCESS, PMI_Unpublish_name(svc));
    PMI_Barrier();
    CHECK(PMI_Lookup_name(svc, port) != PMI_SUCCESS, "lookup after the unpublish fails");

    printf("TIME rank %d barrier_us %.0f getall_us %.0f missing_us %.0f\n", rank, t_barrier, t_gets, t_missing);
    CHECK_PMI(PMI_SUCCESS, PMI_Finalize());
    return pt_exit();
}
