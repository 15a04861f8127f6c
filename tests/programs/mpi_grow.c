/* A malleable MPI job (tests/integration/t-spawn-grow-ompi.sh), with Debian's unmodified
 * OpenMPI: rank 0 grows the job by k nodes (argv[1], default 2) with PMIx_Allocation_request
 * (EXTEND; OpenMPI already initialized PMIx, this PMIx_Init only takes a reference), then all
 * parents MPI_Comm_spawn k children onto exactly the nodes obtained (MPI_Info "host", which
 * OpenMPI passes on as PMIX_HOST). Each child sends its host name to its parent over the
 * intercommunicator (SLURMD_NODENAME) and gets a token back; parents and children meet in an
 * MPI_Allreduce over the merged communicator and disconnect.
 * Prints GROWN-ONTO <nodes>, CHILD <r> ON <host>, GROW-SPAWN-MS <ms> (EXTEND call until the
 * first message over the intercommunicator), MPI-GROW-OK <k>.
 * Built with mpicc against the system's pmix.h and libpmix (at run time ours comes first). */
#include <mpi.h>
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int grow(int k, char *added, size_t len) {
    pmix_proc_t me;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        printf("FAIL PMIx_Init -> %s\n", PMIx_Error_string(rc));
        return 0;
    }
    pmix_info_t in, *res = NULL;
    size_t nres = 0;
    uint64_t nodes = (uint64_t)k;
    PMIX_INFO_CONSTRUCT(&in);
    PMIx_Info_load(&in, PMIX_ALLOC_NUM_NODES, &nodes, PMIX_UINT64);
    PMIX_INFO_REQUIRED(&in);
    rc = PMIx_Allocation_request(PMIX_ALLOC_EXTEND, &in, 1, &res, &nres);
    const char *job_nodes = "";
    for (size_t i = 0; i < nres; ++i) {
        if (res[i].value.type != PMIX_STRING) continue;
        if (strcmp(res[i].key, PMIX_ALLOC_NODE_LIST) == 0) snprintf(added, len, "%s", res[i].value.data.string);
        if (strcmp(res[i].key, PMIX_ALLOCATED_NODELIST) == 0) job_nodes = res[i].value.data.string;
    }
    printf("%s rank 0: EXTEND by %d node(s) -> %s, added %s, job now on %s\n",
           rc == PMIX_SUCCESS && added[0] ? "PASS" : "FAIL", k, PMIx_Error_string(rc), added, job_nodes);
    if (res) PMIX_INFO_FREE(res, nres);
    PMIx_Finalize(NULL, 0);
    return rc == PMIX_SUCCESS && added[0];
}

int main(int argc, char **argv) {
    MPI_Comm parent, inter, merged;
    int rank, size, k = argc > 1 ? atoi(argv[1]) : 2;
    char host[MPI_MAX_PROCESSOR_NAME];
    int hlen = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_get_parent(&parent);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* the node's Slurm name: the virtual nodes of the test cluster share one host name */
    snprintf(host, sizeof(host), "%s", getenv("SLURMD_NODENAME") ? getenv("SLURMD_NODENAME") : "?");
    hlen = (int)strlen(host);
    if (parent == MPI_COMM_NULL) {
        char added[1024] = "";
        double t0 = MPI_Wtime();
        int ok = rank == 0 ? grow(k, added, sizeof(added)) : 0;
        MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
        MPI_Bcast(added, sizeof(added), MPI_CHAR, 0, MPI_COMM_WORLD);
        if (!ok) {
            MPI_Finalize();
            return 1;
        }
        if (rank == 0) printf("GROWN-ONTO %s\n", added);
        fflush(stdout);
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "host", added);
        char *child_argv[] = {argv[1] ? argv[1] : "2", NULL};
        int *errs = calloc(k, sizeof(int));
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        int rc = MPI_Comm_spawn(argv[0], child_argv, k, info, 0, MPI_COMM_WORLD, &inter, errs);
        MPI_Info_free(&info);
        if (rank == 0) printf("%s rank 0: MPI_Comm_spawn of %d onto %s -> %d\n", rc == MPI_SUCCESS ? "PASS" : "FAIL", k, added, rc);
        if (rc != MPI_SUCCESS) {
            MPI_Finalize();
            return 1;
        }
        int rsize = 0, good = 1, first = 1;
        MPI_Comm_remote_size(inter, &rsize);
        /* parent rank r serves children r, r+size, ...: it receives their host, answers a token */
        for (int c = rank; c < rsize; c += size) {
            char where[MPI_MAX_PROCESSOR_NAME] = "";
            MPI_Recv(where, sizeof(where), MPI_CHAR, c, 7, inter, MPI_STATUS_IGNORE);
            if (first && rank == 0) {
                printf("GROW-SPAWN-MS %.1f\n", (MPI_Wtime() - t0) * 1e3);
                first = 0;
            }
            printf("CHILD %d ON %s\n", c, where);
            int token = 2000 + c;
            MPI_Send(&token, 1, MPI_INT, c, 8, inter);
        }
        fflush(stdout);
        MPI_Intercomm_merge(inter, 0, &merged);
        int one = 1, all = 0, right = 0;
        MPI_Allreduce(&one, &all, 1, MPI_INT, MPI_SUM, merged);
        MPI_Allreduce(&good, &right, 1, MPI_INT, MPI_MIN, merged);
        if (rank == 0) printf("parent: allreduce over parents+children = %d, tokens %s\n", all, right ? "right" : "WRONG");
        if (rank == 0 && all == size + rsize && right && rsize == k) printf("MPI-GROW-OK %d\n", rsize);
        MPI_Comm_free(&merged);
        MPI_Comm_disconnect(&inter);
        free(errs);
    } else {
        int psize, token = -1, good;
        MPI_Comm_remote_size(parent, &psize);
        MPI_Send(host, hlen + 1, MPI_CHAR, rank % psize, 7, parent);
        MPI_Recv(&token, 1, MPI_INT, rank % psize, 8, parent, MPI_STATUS_IGNORE);
        good = token == 2000 + rank;
        MPI_Intercomm_merge(parent, 1, &merged);
        int one = 1, all = 0, right = 0;
        MPI_Allreduce(&one, &all, 1, MPI_INT, MPI_SUM, merged);
        MPI_Allreduce(&good, &right, 1, MPI_INT, MPI_MIN, merged);
        printf("child %d of %d on %s: token %s, allreduce %d\n", rank, size, host, good ? "right" : "WRONG", all);
        MPI_Comm_free(&merged);
        MPI_Comm_disconnect(&parent);
    }
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
