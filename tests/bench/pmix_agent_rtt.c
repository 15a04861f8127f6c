/* Round trips through srun's agent as the application sees them (tests/bench/agent.sh):
 *   pmix_agent_rtt <publish-lookups> <spawns>
 * Rank 0 times PMIx_Publish of a fresh key followed by PMIx_Lookup of it (the job's store beside
 * srun), then PMIx_Spawn of one process (this program with "child": init, finalize) one after
 * the other. Prints "RTT-PUBLOOK-MS <ms>" and "RTT-SPAWN-MS <ms>" per round; other ranks only
 * init and finalize. Standard pmix.h only. */
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv) {
    pmix_proc_t me;
    if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) {
        fprintf(stderr, "PMIx_Init failed\n");
        return 1;
    }
    if (argc > 1 && strcmp(argv[1], "child") == 0) {
        PMIx_Finalize(NULL, 0);
        return 0;
    }
    int rounds = argc > 1 ? atoi(argv[1]) : 20;
    int spawns = argc > 2 ? atoi(argv[2]) : 5;
    int failed = 0;
    if (me.rank == 0) {
        for (int i = 0; i < rounds; ++i) {
            char key[PMIX_MAX_KEYLEN + 1];
            snprintf(key, sizeof(key), "rtt.%d.%d", (int)getpid(), i);
            pmix_info_t info;
            int value = i;
            PMIX_INFO_LOAD(&info, key, &value, PMIX_INT);
            pmix_pdata_t pd;
            PMIX_PDATA_CONSTRUCT(&pd);
            PMIX_LOAD_KEY(pd.key, key);
            double t0 = now_ms();
            pmix_status_t rc = PMIx_Publish(&info, 1);
            if (rc == PMIX_SUCCESS) rc = PMIx_Lookup(&pd, 1, NULL, 0);
            double ms = now_ms() - t0;
            if (rc != PMIX_SUCCESS || pd.value.type != PMIX_INT || pd.value.data.integer != i) {
                printf("FAIL publish/lookup %d: %s\n", i, PMIx_Error_string(rc));
                ++failed;
            } else {
                printf("RTT-PUBLOOK-MS %.3f\n", ms);
            }
            PMIX_PDATA_DESTRUCT(&pd);
            PMIX_INFO_DESTRUCT(&info);
        }
        for (int i = 0; i < spawns; ++i) {
            pmix_app_t app;
            char *args[] = {argv[0], "child", NULL};
            char ns[PMIX_MAX_NSLEN + 1] = "";
            PMIX_APP_CONSTRUCT(&app);
            app.cmd = strdup(argv[0]);
            app.argv = args;
            app.maxprocs = 1;
            double t0 = now_ms();
            pmix_status_t rc = PMIx_Spawn(NULL, 0, &app, 1, ns);
            double ms = now_ms() - t0;
            app.argv = NULL;
            free(app.cmd);
            app.cmd = NULL;
            PMIX_APP_DESTRUCT(&app);
            if (rc != PMIX_SUCCESS) {
                printf("FAIL spawn %d: %s\n", i, PMIx_Error_string(rc));
                ++failed;
            } else {
                printf("RTT-SPAWN-MS %.3f\n", ms);
            }
        }
        fflush(stdout);
    }
    PMIx_Finalize(NULL, 0);
    return failed ? 1 : 0;
}
