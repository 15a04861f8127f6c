/* What a hostile (or just careless) job does to the server it runs under; used by
 * tests/integration/t-attack-files.sh, run as an unprivileged user.
 *
 *   pmix_attack_files cleanup PATH...  rank 0 registers each PATH for clean-up
 *                                (PMIX_REGISTER_CLEANUP_DIR, recursive) and prints "CLEANUP <path> <status>"; then every rank
 *                                runs a collecting fence and checks a peer's value (the modex
 *                                snapshot path), and finalizes.
 *   pmix_attack_files fence      only the collecting fence and the check.
 *   pmix_attack_files exit N     rank 1 calls exit(N) right after PMIx_Init, without
 *                                PMIx_Finalize; the other ranks finalize and return 0.
 */
#include "ptest.h"

static int collecting_fence(const pmix_proc_t *me, uint32_t size) {
    char key[64], val[64];
    pmix_value_t v;
    snprintf(val, sizeof(val), "value-of-%u", me->rank);
    PMIX_VALUE_CONSTRUCT(&v);
    v.type = PMIX_STRING;
    v.data.string = val;
    CHECK_RC(PMIX_SUCCESS, PMIx_Put(PMIX_GLOBAL, "attack.key", &v));
    CHECK_RC(PMIX_SUCCESS, PMIx_Commit());
    CHECK_RC(PMIX_SUCCESS, PMIx_Fence(NULL, 0, ptest_bool_info(PMIX_COLLECT_DATA, 1), 1));
    pmix_proc_t peer = *me;
    peer.rank = (me->rank + 1) % size;
    pmix_value_t *got = NULL;
    pmix_status_t rc = PMIx_Get(&peer, "attack.key", NULL, 0, &got);
    snprintf(key, sizeof(key), "value-of-%u", peer.rank);
    CHECK(rc == PMIX_SUCCESS && got && got->type == PMIX_STRING && strcmp(got->data.string, key) == 0,
          "peer %u's value after the collecting fence (%s)", peer.rank, PMIx_Error_string(rc));
    if (got) PMIX_VALUE_RELEASE(got);
    return 0;
}

int main(int argc, char **argv) {
    pmix_proc_t me;
    if (argc < 2) {
        fprintf(stderr, "usage: %s cleanup PATH... | fence | exit N\n", argv[0]);
        return 2;
    }
    if (ptest_init(&me) != 0) return 1;
    uint32_t size = ptest_job_size(&me);
    if (strcmp(argv[1], "exit") == 0 && argc > 2) {
        if (me.rank == 1) exit(atoi(argv[2]));
        CHECK_RC(PMIX_SUCCESS, PMIx_Finalize(NULL, 0));
        return ptest_exit();
    }
    if (strcmp(argv[1], "cleanup") == 0 && me.rank == 0) {
        for (int i = 2; i < argc; ++i) {
            pmix_info_t info[2];
            bool yes = true;
            PMIX_INFO_CONSTRUCT(&info[0]);
            PMIX_INFO_CONSTRUCT(&info[1]);
            PMIx_Info_load(&info[0], PMIX_REGISTER_CLEANUP_DIR, argv[i], PMIX_STRING);
            PMIx_Info_load(&info[1], PMIX_CLEANUP_RECURSIVE, &yes, PMIX_BOOL);
            pmix_status_t rc = PMIx_Job_control(NULL, 0, info, 2, NULL, NULL);
            printf("CLEANUP %s %s\n", argv[i], PMIx_Error_string(rc));
            fflush(stdout);
            PMIX_INFO_DESTRUCT(&info[0]);
            PMIX_INFO_DESTRUCT(&info[1]);
        }
    }
    collecting_fence(&me, size);
    CHECK_RC(PMIX_SUCCESS, PMIx_Finalize(NULL, 0));
    return ptest_exit();
}
