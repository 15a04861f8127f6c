/* A scheduler's placement with the fabric cost matrix of pmixcpp's scheduler context.
 *
 *   fabric_scheduler K   place a job of K nodes: the K nodes of the cluster whose summed
 *                        pairwise cost is smallest (greedy: every start node, then always the
 *                        node cheapest to reach from those chosen), and print them.
 *
 * It runs where a scheduler runs: any host that reaches slurmctld (libslurm, munge); it is no
 * part of a job. PMIx_server_init with PMIX_SERVER_SCHEDULER makes this process pmixcpp's
 * scheduler context; PMIx_server_register_fabric then gives the cost matrix of Slurm's switch
 * topology (topology.conf), or, on a cluster without one, of the flat cluster: one vertex per
 * node of slurm.conf, all at the same cost.
 *
 * One source for both layouts of pmix_fabric_t (README.md here):
 *   cc fabric_scheduler.c ...                               OpenPMIx's layout: fabric.info
 *                                                           (PMIX_FABRIC_COST_MATRIX,
 *                                                           PMIX_FABRIC_NUM_VERTICES)
 *   cc -DPMIXCPP_FABRIC_SEED_LAYOUT fabric_scheduler.c ...  the PMIx v4.0 scheduler chapter's:
 *                                                           fabric.commcost[i][j], fabric.nverts
 * Output: "layout L", "vertices N", "vertex I NODE", "row I: c0 c1 ...", "placement: n1 n2 ...",
 * "cost C"; errors as "error: ..." with exit status 1.
 */
#include <pmix.h>
#include <pmix_server.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef PMIXCPP_FABRIC_SEED_LAYOUT
#define LAYOUT "seed (commcost, nverts)"
static uint32_t vertex_count(const pmix_fabric_t *f) { return f->nverts; }
static uint16_t **cost_rows(const pmix_fabric_t *f) { return f->commcost; }
#else
#define LAYOUT "info (PMIX_FABRIC_COST_MATRIX, PMIX_FABRIC_NUM_VERTICES)"
static uint32_t vertex_count(const pmix_fabric_t *f) {
    for (size_t i = 0; i < f->ninfo; ++i)
        if (PMIX_CHECK_KEY(&f->info[i], PMIX_FABRIC_NUM_VERTICES)) return (uint32_t)f->info[i].value.data.size;
    return 0;
}
static uint16_t **cost_rows(const pmix_fabric_t *f) {
    for (size_t i = 0; i < f->ninfo; ++i)
        if (PMIX_CHECK_KEY(&f->info[i], PMIX_FABRIC_COST_MATRIX)) return (uint16_t **)f->info[i].value.data.ptr;
    return NULL;
}
#endif

/* The K vertices with the smallest summed pairwise cost, greedily; returns the cost, or
 * UINT64_MAX if no K vertices reach each other. */
static uint64_t place(uint16_t **cost, uint32_t n, uint32_t k, uint32_t *best) {
    uint64_t best_cost = UINT64_MAX;
    uint32_t *pick = malloc(k * sizeof *pick);
    char *used = malloc(n);
    if (pick == NULL || used == NULL) {
        free(pick);
        free(used);
        return UINT64_MAX;
    }
    for (uint32_t start = 0; start < n; ++start) {
        memset(used, 0, n);
        pick[0] = start;
        used[start] = 1;
        uint64_t total = 0;
        uint32_t have = 1;
        for (; have < k; ++have) {
            uint64_t cheapest = UINT64_MAX;
            uint32_t next = 0;
            for (uint32_t v = 0; v < n; ++v) {
                if (used[v]) continue;
                uint64_t add = 0;
                for (uint32_t p = 0; p < have && add != UINT64_MAX; ++p)
                    add = cost[pick[p]][v] == 0xFFFF ? UINT64_MAX : add + cost[pick[p]][v];
                if (add < cheapest) {
                    cheapest = add;
                    next = v;
                }
            }
            if (cheapest == UINT64_MAX) break;
            pick[have] = next;
            used[next] = 1;
            total += cheapest;
        }
        if (have == k && total < best_cost) {
            best_cost = total;
            memcpy(best, pick, k * sizeof *pick);
        }
    }
    free(pick);
    free(used);
    return best_cost;
}

int main(int argc, char **argv) {
    uint32_t k = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 2;
    if (k == 0) {
        fprintf(stderr, "usage: %s K (the number of nodes to place, at least 1)\n", argv[0]);
        return 2;
    }
    pmix_info_t init;
    bool scheduler = true;
    PMIX_INFO_LOAD(&init, PMIX_SERVER_SCHEDULER, &scheduler, PMIX_BOOL);
    pmix_status_t rc = PMIx_server_init(NULL, &init, 1);
    PMIX_INFO_DESTRUCT(&init);
    if (rc != PMIX_SUCCESS) {
        printf("error: PMIx_server_init(PMIX_SERVER_SCHEDULER): %s\n", PMIx_Error_string(rc));
        return 1;
    }
    int status = 1;
    pmix_fabric_t fabric;
    PMIX_FABRIC_CONSTRUCT(&fabric);
    rc = PMIx_server_register_fabric(&fabric, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        printf("error: PMIx_server_register_fabric: %s\n", PMIx_Error_string(rc));
        PMIx_server_finalize();
        return 1;
    }
    uint32_t n = vertex_count(&fabric);
    uint16_t **cost = cost_rows(&fabric);
    printf("layout %s\nvertices %u\n", LAYOUT, n);
    char **names = calloc(n ? n : 1, sizeof *names);
    uint32_t *chosen = calloc(k, sizeof *chosen);
    if (names == NULL || chosen == NULL) {
        printf("error: out of memory\n");
        goto out;
    }
    if (n > 0 && cost == NULL) {
        printf("error: %u vertices and no cost matrix\n", n);
        goto out;
    }
    for (uint32_t i = 0; i < n; ++i) {
        pmix_value_t vertex;
        PMIX_VALUE_CONSTRUCT(&vertex);
        rc = PMIx_server_get_vertex_info(&fabric, i, &vertex, &names[i]);
        PMIX_VALUE_DESTRUCT(&vertex);
        if (rc != PMIX_SUCCESS) {
            printf("error: PMIx_server_get_vertex_info(%u): %s\n", i, PMIx_Error_string(rc));
            goto out;
        }
        printf("vertex %u %s\nrow %u:", i, names[i], i);
        for (uint32_t j = 0; j < n; ++j) printf(" %u", (unsigned)cost[i][j]);
        printf("\n");
    }
    if (k > n) {
        printf("error: %u nodes asked, the fabric has %u vertices\n", k, n);
        goto out;
    }
    uint64_t total = place(cost, n, k, chosen);
    if (total == UINT64_MAX) {
        printf("error: no %u vertices reach each other\n", k);
        goto out;
    }
    printf("placement:");
    for (uint32_t p = 0; p < k; ++p) printf(" %s", names[chosen[p]]);
    printf("\ncost %llu\n", (unsigned long long)total);
    status = 0;
out:
    if (names != NULL)
        for (uint32_t i = 0; i < n; ++i) free(names[i]);
    free(names);
    free(chosen);
    rc = PMIx_server_deregister_fabric(&fabric);
    if (rc != PMIX_SUCCESS) {
        printf("error: PMIx_server_deregister_fabric: %s\n", PMIx_Error_string(rc));
        status = 1;
    }
    PMIx_server_finalize();
    return status;
}
