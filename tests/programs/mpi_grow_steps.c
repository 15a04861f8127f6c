/* A job that grows several times and shrinks back (tests/integration/t-grow-steps.sh), with
 * Debian's unmodified OpenMPI 4.1 (no MPI sessions: the spawn + MPI_Intercomm_merge route).
 *
 *   mpi_grow_steps [--via-spawn] K1 K2 ...   (one process per node of the job's first nodes)
 *
 * Grow s (K_s nodes): rank 0 of the current communicator asks PMIx_Allocation_request(EXTEND,
 * PMIX_ALLOC_NUM_NODES = K_s) (OpenMPI initialized PMIx; this PMIx_Init only takes a reference);
 * then every process of the current communicator (the first ones and all those spawned so far)
 * calls MPI_Comm_spawn of K_s processes of this program with MPI_Info "host" = exactly the nodes
 * added, and the intercommunicator is merged into the next communicator, which the new processes
 * join. On each communicator every process reports its node, and an MPI_Allreduce over all of
 * them checks the sum of their ranks. At the end the spawned processes disconnect and exit; once
 * their steps have ended (the server has deleted their process sets) rank 0 gives every grown node
 * back with one RELEASE.
 * --via-spawn: no EXTEND of the program's own; the spawn asks for the nodes itself, with MPI_Info
 * "env" = "PMIXCPP_SPAWN_GROW=K_s" (the server grows the job and places the processes on the
 * nodes added, rolling the grow back if the spawn fails); "added" is then what the new processes
 * report, and the RELEASE names the number of grown nodes.
 * Prints, from rank 0 of the communicator:
 *   STAGE <s> SIZE <n> ALLREDUCE <sum> <OK|WRONG>
 *   STAGE <s> RANK <r> GEN <g> HOST <node>        (one per process: g = the grow that made it)
 *   GROW <s> nodes <added> extend_ms <ms> spawn_ms <ms> merge_ms <ms> total_ms <ms>
 *   SHRINK released <nodes> rc <status> wait_ms <ms> release_ms <ms>
 *   GROW-STEPS-OK <final size>
 * Built with mpicc against the system's pmix.h and libpmix (at run time ours comes first). */
#include <mpi.h>
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_GROWS 8
#define NODES_LEN 1024

static pmix_proc_t me;

static int extend(int k, char *added) {
    pmix_info_t in, *res = NULL;
    size_t nres = 0;
    uint64_t nodes = (uint64_t)k;
    PMIX_INFO_CONSTRUCT(&in);
    PMIx_Info_load(&in, PMIX_ALLOC_NUM_NODES, &nodes, PMIX_UINT64);
    pmix_status_t rc = PMIx_Allocation_request(PMIX_ALLOC_EXTEND, &in, 1, &res, &nres);
    added[0] = 0;
    for (size_t i = 0; i < nres; ++i)
        if (res[i].value.type == PMIX_STRING && strcmp(res[i].key, PMIX_ALLOC_NODE_LIST) == 0)
            snprintf(added, NODES_LEN, "%s", res[i].value.data.string);
    if (rc != PMIX_SUCCESS || !added[0]) printf("FAIL EXTEND by %d -> %s\n", k, PMIx_Error_string(rc));
    if (res) PMIX_INFO_FREE(res, nres);
    PMIX_INFO_DESTRUCT(&in);
    return rc == PMIX_SUCCESS && added[0];
}

/* Every process of `comm` tells rank 0 its node; one allreduce over all of them. */
static int report(MPI_Comm comm, int stage, int gen) {
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    char host[64] = "";
    snprintf(host, sizeof(host), "%s", getenv("SLURMD_NODENAME") ? getenv("SLURMD_NODENAME") : "?");
    char *hosts = rank == 0 ? calloc((size_t)size, sizeof(host)) : NULL;
    int *gens = rank == 0 ? calloc((size_t)size, sizeof(int)) : NULL;
    MPI_Gather(host, sizeof(host), MPI_CHAR, hosts, sizeof(host), MPI_CHAR, 0, comm);
    MPI_Gather(&gen, 1, MPI_INT, gens, 1, MPI_INT, 0, comm);
    long mine = rank + 1, sum = 0;
    MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, comm);
    const int ok = sum == (long)size * (size + 1) / 2;
    if (rank == 0) {
        printf("STAGE %d SIZE %d ALLREDUCE %ld %s\n", stage, size, sum, ok ? "OK" : "WRONG");
        for (int r = 0; r < size; ++r) printf("STAGE %d RANK %d GEN %d HOST %s\n", stage, r, gens[r], hosts + r * sizeof(host));
        fflush(stdout);
    }
    free(hosts);
    free(gens);
    return ok;
}

/* 1 while the server still lists a set of spawned processes (their step has not ended) */
static int spawned_sets_listed(void) {
    char *keys[] = {PMIX_QUERY_PSET_NAMES, NULL};
    pmix_query_t q;
    memset(&q, 0, sizeof(q));
    q.keys = keys;
    pmix_info_t *res = NULL;
    size_t nres = 0;
    int listed = 0;
    if (PMIx_Query_info(&q, 1, &res, &nres) == PMIX_SUCCESS)
        for (size_t i = 0; i < nres; ++i)
            if (res[i].value.type == PMIX_STRING && res[i].value.data.string &&
                strstr(res[i].value.data.string, "pmixcpp://spawned/"))
                listed = 1;
    if (res) PMIX_INFO_FREE(res, nres);
    return listed;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) {
        printf("FAIL PMIx_Init\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    /* children: --gen G K1 K2 ... */
    int gen = 0, first_arg = 1, via_spawn = 0;
    if (argc > 2 && strcmp(argv[1], "--gen") == 0) {
        gen = atoi(argv[2]);
        first_arg = 3;
    } else if (argc > 1 && strcmp(argv[1], "--via-spawn") == 0) {
        via_spawn = 1;
        first_arg = 2;
    }
    int ngrows = argc - first_arg, k[MAX_GROWS];
    if (ngrows < 1 || ngrows > MAX_GROWS) {
        printf("FAIL usage: mpi_grow_steps K1 [K2 ...] (at most %d)\n", MAX_GROWS);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int s = 0; s < ngrows; ++s) k[s] = atoi(argv[first_arg + s]);

    MPI_Comm comm, inter[MAX_GROWS + 1];
    int ninter = 0, good = 1;
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    if (parent == MPI_COMM_NULL) {
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        good &= report(comm, 0, 0);
    } else {
        inter[ninter++] = parent;
        MPI_Intercomm_merge(parent, 1, &comm);
        MPI_Barrier(comm); /* the spawners' barrier after their merge */
        good &= report(comm, gen, gen);
    }
    static char all_added[NODES_LEN * MAX_GROWS] = "";
    for (int s = gen; s < ngrows; ++s) {
        int rank;
        MPI_Comm_rank(comm, &rank);
        char added[NODES_LEN] = "";
        double t0 = MPI_Wtime();
        int ok = rank == 0 ? (via_spawn ? 1 : extend(k[s], added)) : 0;
        MPI_Bcast(&ok, 1, MPI_INT, 0, comm);
        if (!ok) MPI_Abort(MPI_COMM_WORLD, 1);
        MPI_Bcast(added, sizeof(added), MPI_CHAR, 0, comm);
        double t1 = MPI_Wtime();
        if (rank == 0 && gen == 0) {
            if (all_added[0]) strcat(all_added, ",");
            strcat(all_added, added);
        }
        MPI_Info info;
        MPI_Info_create(&info);
        char env[64];
        snprintf(env, sizeof(env), "PMIXCPP_SPAWN_GROW=%d", k[s]);
        /* (only the root's info counts: "added" is empty everywhere when the spawn grows the job) */
        if (added[0])
            MPI_Info_set(info, "host", added);
        else
            MPI_Info_set(info, "env", env);
        char genarg[16];
        snprintf(genarg, sizeof(genarg), "%d", s + 1);
        char *child_argv[MAX_GROWS + 3];
        child_argv[0] = "--gen";
        child_argv[1] = genarg;
        for (int i = 0; i < ngrows; ++i) child_argv[2 + i] = argv[first_arg + i];
        child_argv[2 + ngrows] = NULL;
        int rc = MPI_Comm_spawn(argv[0], child_argv, k[s], info, 0, comm, &inter[ninter], MPI_ERRCODES_IGNORE);
        MPI_Info_free(&info);
        if (rc != MPI_SUCCESS) {
            if (rank == 0) printf("FAIL MPI_Comm_spawn of %d onto %s -> %d\n", k[s], added, rc);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        double t2 = MPI_Wtime();
        MPI_Comm next;
        MPI_Intercomm_merge(inter[ninter++], 0, &next);
        MPI_Comm_free(&comm);
        comm = next;
        MPI_Barrier(comm);
        double t3 = MPI_Wtime();
        if (rank == 0)
            printf("GROW %d nodes %s extend_ms %.0f spawn_ms %.0f merge_ms %.0f total_ms %.0f\n", s + 1, added[0] ? added : "-",
                   (t1 - t0) * 1e3, (t2 - t1) * 1e3, (t3 - t2) * 1e3, (t3 - t0) * 1e3);
        good &= report(comm, s + 1, gen);
    }
    int size, all_good = 0;
    MPI_Comm_size(comm, &size);
    MPI_Allreduce(&good, &all_good, 1, MPI_INT, MPI_MIN, comm);
    MPI_Comm_free(&comm);
    /* in creation order: a process's parent first, then the spawns it took part in */
    for (int i = 0; i < ninter; ++i) MPI_Comm_disconnect(&inter[i]);
    if (gen == 0) {
        int rank;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        if (rank == 0) {
            double t0 = MPI_Wtime();
            for (int i = 0; i < 600 && spawned_sets_listed(); ++i) usleep(50000);
            double t1 = MPI_Wtime();
            pmix_info_t in, *res = NULL;
            size_t nres = 0;
            PMIX_INFO_CONSTRUCT(&in);
            uint64_t grown = 0;
            for (int s = 0; s < ngrows; ++s) grown += (uint64_t)k[s];
            if (via_spawn)
                PMIx_Info_load(&in, PMIX_ALLOC_NUM_NODES, &grown, PMIX_UINT64);
            else
                PMIx_Info_load(&in, PMIX_ALLOC_NODE_LIST, all_added, PMIX_STRING);
            pmix_status_t rc = PMIx_Allocation_request(PMIX_ALLOC_RELEASE, &in, 1, &res, &nres);
            const char *released = all_added;
            for (size_t i = 0; i < nres; ++i)
                if (res[i].value.type == PMIX_STRING && strcmp(res[i].key, PMIX_ALLOC_NODE_LIST) == 0)
                    released = res[i].value.data.string;
            printf("SHRINK released %s rc %s wait_ms %.0f release_ms %.0f\n", released, PMIx_Error_string(rc),
                   (t1 - t0) * 1e3, (MPI_Wtime() - t1) * 1e3);
            if (res) PMIX_INFO_FREE(res, nres);
            PMIX_INFO_DESTRUCT(&in);
            if (rc == PMIX_SUCCESS && all_good) printf("GROW-STEPS-OK %d\n", size);
            fflush(stdout);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    PMIx_Finalize(NULL, 0);
    MPI_Finalize();
    return 0;
}
