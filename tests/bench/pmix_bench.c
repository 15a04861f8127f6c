/* Side-by-side PMIx micro-benchmark: the same binary runs under
 * srun --mpi=pmix_v4 (OpenPMIx) and srun --mpi=pmixcpp (our server and, through
 * the plugin's LD_LIBRARY_PATH, our libpmix.so.2). Built against the standard
 * pmix.h. Each rank prints one line:
 *   BENCH rank=R init_us=.. get_ns=.. fence_data_us=.. fence_empty_us=.. barrier_us=.. empty_fence_left_early=0|1
 *         peer_get_us=.. peer_get_mean_us=.. peer_get_cpu_us=.. barrier_get_mean_us=..
 *         dmodex_get_us=..
 *         fini_us=.. stepd_hwm_kb=..
 *         lib=PATH (the libpmix.so mapped into the process, from /proc/self/maps, or "none")
 * `pmix_bench ift` only does PMIx_Init, PMIx_Fence, PMIx_Finalize (the launch benchmark).
 * The same source builds against OpenPMIx's pmix.h and against pmixcpp's (tests/bench/routes.sh).
 * `pmix_bench GET_ITERS FENCE_ITERS BYTES`: BYTES per rank in the collecting fence (default 1024).
 * Each collecting fence puts a new key (the data grows with the fences, as an application's
 * successive Puts do); with BENCH_SAME_KEY=1 in the environment every fence replaces one key, so
 * every fence carries BYTES per rank (tests/bench/model.sh).
 */
#define _GNU_SOURCE
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* CPU time of the whole process (all its threads: a library may do a Get's work on its own). */
static double cpu_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static long stepd_hwm_kb(void) {
    char path[64], line[256];
    long kb = -1;
    snprintf(path, sizeof(path), "/proc/%d/status", (int)getppid());
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "VmHWM: %ld kB", &kb) == 1) break;
    fclose(f);
    return kb;
}

/* The libpmix.so mapped into this process: which client library really served the run. */
static void libpmix_path(char *out, size_t len) {
    char line[4096];
    snprintf(out, len, "none");
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) return;
    while (fgets(line, sizeof line, f)) {
        char *p = strchr(line, '/');
        if (!p || !strstr(p, "/libpmix.so")) continue;
        p[strcspn(p, "\n")] = '\0';
        snprintf(out, len, "%s", p);
        break;
    }
    fclose(f);
}

#define CHECK(call)                                                                  \
    do {                                                                             \
        pmix_status_t rc_ = (call);                                                  \
        if (rc_ != PMIX_SUCCESS) {                                                   \
            fprintf(stderr, "bench: %s failed: %s\n", #call, PMIx_Error_string(rc_)); \
            exit(2);                                                                 \
        }                                                                            \
    } while (0)

int main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "ift")) { /* the launch benchmark: Init, Fence, Finalize only */
        pmix_proc_t p;
        if (PMIx_Init(&p, NULL, 0) != PMIX_SUCCESS || PMIx_Fence(NULL, 0, NULL, 0) != PMIX_SUCCESS) return 2;
        return PMIx_Finalize(NULL, 0) == PMIX_SUCCESS ? 0 : 2;
    }
    int get_iters = argc > 1 ? atoi(argv[1]) : 20000;
    int fence_iters = argc > 2 ? atoi(argv[2]) : 10;
    pmix_proc_t me, wild, peer;
    pmix_value_t *val = NULL;
    pmix_info_t collect;
    double t0, init_us, get_ns, fence_data_us, fence_empty_us, peer_get_us, fini_us;
    uint32_t size;
    size_t data_size = argc > 3 ? (size_t)atol(argv[3]) : 1024;
    int same_key = getenv("BENCH_SAME_KEY") && atoi(getenv("BENCH_SAME_KEY"));
    char *data;
    int i;

    t0 = now_us();
    CHECK(PMIx_Init(&me, NULL, 0));
    init_us = now_us() - t0;

    PMIX_PROC_CONSTRUCT(&wild);
    memcpy(wild.nspace, me.nspace, sizeof(me.nspace));
    wild.rank = PMIX_RANK_WILDCARD;
    CHECK(PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &val));
    size = val->data.uint32;
    PMIX_VALUE_RELEASE(val);

    /* job-level Get: local lookup, no round trip expected */
    t0 = now_us();
    for (i = 0; i < get_iters; i++) {
        CHECK(PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &val));
        PMIX_VALUE_RELEASE(val);
    }
    get_ns = (now_us() - t0) * 1000.0 / get_iters;

    /* Before anything is Put. A fence that collects data waits for every rank under every stack;
       whether an empty fence does is checked: rank 0 enters it 50 ms after the others, and a rank
       that leaves it within 25 ms did not wait for rank 0 (empty_fence_left_early=1). Then the
       cost of a barrier: a collecting fence with nothing to collect. */
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, NULL, PMIX_BOOL);
    int left_early = 0;
    double barrier_us;
    CHECK(PMIx_Fence(NULL, 0, &collect, 1)); /* line up */
    if (me.rank == 0) usleep(50000);
    t0 = now_us();
    CHECK(PMIx_Fence(NULL, 0, NULL, 0));
    if (me.rank != 0 && now_us() - t0 < 25000) left_early = 1;
    CHECK(PMIx_Fence(NULL, 0, &collect, 1)); /* line up */
    t0 = now_us();
    for (i = 0; i < fence_iters * 2; i++) CHECK(PMIx_Fence(NULL, 0, &collect, 1));
    barrier_us = (now_us() - t0) / (fence_iters * 2);

    /* first direct-modex Get of a remote rank (no collecting fence yet): a peer on another node
       when there is one (block distribution) */
    double dmodex_us;
    {
        pmix_value_t v, *lv = NULL;
        uint32_t lsize = 1;
        if (PMIx_Get(&wild, PMIX_LOCAL_SIZE, NULL, 0, &lv) == PMIX_SUCCESS) {
            lsize = lv->data.uint32;
            PMIX_VALUE_RELEASE(lv);
        }
        v.type = PMIX_UINT32;
        v.data.uint32 = me.rank;
        CHECK(PMIx_Put(PMIX_GLOBAL, "bench.dm", &v));
        CHECK(PMIx_Commit());
        CHECK(PMIx_Fence(NULL, 0, NULL, 0));
        PMIX_PROC_CONSTRUCT(&peer);
        memcpy(peer.nspace, me.nspace, sizeof(me.nspace));
        peer.rank = (me.rank + lsize) % size;
        t0 = now_us();
        CHECK(PMIx_Get(&peer, "bench.dm", NULL, 0, &val));
        dmodex_us = now_us() - t0;
        if (val->data.uint32 != peer.rank) {
            fprintf(stderr, "bench: rank %u got wrong dmodex data from rank %u\n", me.rank, peer.rank);
            exit(3);
        }
        PMIX_VALUE_RELEASE(val);
    }

    /* Put + Commit + Fence(collect) of 1 KiB */
    if (data_size == 0 || !(data = malloc(data_size))) {
        fprintf(stderr, "bench: bad data size %zu\n", data_size);
        exit(2);
    }
    memset(data, 'a' + (me.rank % 26), data_size);
    CHECK(PMIx_Fence(NULL, 0, NULL, 0)); /* line up before timing */
    t0 = now_us();
    for (i = 0; i < fence_iters; i++) {
        pmix_value_t v;
        char key[64];
        snprintf(key, sizeof(key), "bench.data.%d", same_key ? 0 : i);
        v.type = PMIX_BYTE_OBJECT;
        v.data.bo.bytes = data;
        v.data.bo.size = data_size;
        CHECK(PMIx_Put(PMIX_GLOBAL, key, &v));
        CHECK(PMIx_Commit());
        CHECK(PMIx_Fence(NULL, 0, &collect, 1));
    }
    fence_data_us = (now_us() - t0) / fence_iters;

    /* Get of a peer's key after the collecting fence */
    peer.rank = (me.rank + 1) % size;
    t0 = now_us();
    CHECK(PMIx_Get(&peer, "bench.data.0", NULL, 0, &val));
    peer_get_us = now_us() - t0;
    if (val->type != PMIX_BYTE_OBJECT || val->data.bo.size != data_size ||
        val->data.bo.bytes[0] != 'a' + (char)(peer.rank % 26)) {
        fprintf(stderr, "bench: rank %u got wrong data from rank %u\n", me.rank, peer.rank);
        exit(3);
    }
    PMIX_VALUE_RELEASE(val);

    /* mean Get after the collecting fence: one key of every other rank (each the first of its rank) */
    double peer_get_mean_us = 0, peer_get_cpu_us = 0;
    if (size > 1) {
        uint32_t r;
        double c0 = cpu_us();
        t0 = now_us();
        for (r = 1; r < size; r++) {
            peer.rank = (me.rank + 1 + r) % size;
            if (peer.rank == me.rank) continue;
            CHECK(PMIx_Get(&peer, same_key || fence_iters < 2 ? "bench.data.0" : "bench.data.1", NULL, 0, &val));
            PMIX_VALUE_RELEASE(val);
        }
        peer_get_mean_us = (now_us() - t0) / (size - 1);
        /* the same loop in CPU time: what a Get costs the process, without the time it waited
           for a CPU (on an oversubscribed host, other processes run in the middle of the loop) */
        peer_get_cpu_us = (cpu_us() - c0) / (size - 1);
    }

    /* empty fence, after lining up (the ranks leave the Gets above at different times) */
    CHECK(PMIx_Fence(NULL, 0, &collect, 1));
    t0 = now_us();
    for (i = 0; i < fence_iters * 2; i++) CHECK(PMIx_Fence(NULL, 0, NULL, 0));
    fence_empty_us = (now_us() - t0) / (fence_iters * 2);

    /* mean Get of every other rank's key after those fences that collect nothing: OpenMPI's order
       (modex, a barrier at the end of MPI_Init, then each peer's endpoint when first used) */
    double barrier_get_mean_us = 0;
    if (size > 1) {
        uint32_t r;
        t0 = now_us();
        for (r = 1; r < size; r++) {
            peer.rank = (me.rank + r) % size;
            CHECK(PMIx_Get(&peer, same_key || fence_iters < 3 ? "bench.data.0" : "bench.data.2", NULL, 0, &val));
            PMIX_VALUE_RELEASE(val);
        }
        barrier_get_mean_us = (now_us() - t0) / (size - 1);
    }

    long hwm = stepd_hwm_kb();
    char lib[4096];
    libpmix_path(lib, sizeof lib);
    t0 = now_us();
    CHECK(PMIx_Finalize(NULL, 0));
    fini_us = now_us() - t0;
    printf("BENCH rank=%u size=%u init_us=%.1f get_ns=%.1f fence_data_us=%.1f fence_empty_us=%.1f "
           "barrier_us=%.1f empty_fence_left_early=%d "
           "peer_get_us=%.1f peer_get_mean_us=%.2f peer_get_cpu_us=%.2f barrier_get_mean_us=%.2f dmodex_get_us=%.1f "
           "fini_us=%.1f stepd_hwm_kb=%ld lib=%s\n",
           me.rank, size, init_us, get_ns, fence_data_us, fence_empty_us, barrier_us, left_early, peer_get_us,
           peer_get_mean_us, peer_get_cpu_us, barrier_get_mean_us, dmodex_us, fini_us, hwm, lib);
    return 0;
}
