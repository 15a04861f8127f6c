/* MPI_Comm_spawn (tests/integration/t-spawn-ompi.sh): the parents spawn N children (argv[1],
 * default 4), every parent rank and child rank exchange messages over the intercommunicator,
 * an MPI_Allreduce over the merged communicator checks everyone is there, then all disconnect.
 * Prints MPI-SPAWN-OK <children> and SPAWN-MS <children> <ms> (the spawn call until the
 * intercommunicator answered a first message).
 * MPI_SPAWN_VIA (words separated by blanks, e.g. "ch-run /image --") names a command the
 * children are started through, with this program and its argument after it: a container's
 * program spawns children into the same container. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv) {
    MPI_Comm parent, inter, merged;
    int rank, size, rsize, n = argc > 1 ? atoi(argv[1]) : 4;
    MPI_Init(&argc, &argv);
    MPI_Comm_get_parent(&parent);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (parent == MPI_COMM_NULL) {
        int *errs = calloc(n, sizeof(int));
        char *child_argv[] = {argv[1] ? argv[1] : "4", NULL};
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        const char *cmd = argv[0];
        char **cargv = child_argv, *words[32], *via = getenv("MPI_SPAWN_VIA") ? strdup(getenv("MPI_SPAWN_VIA")) : NULL;
        if (via != NULL) {
            int k = 0;
            for (char *w = strtok(via, " "); w != NULL && k < 28; w = strtok(NULL, " ")) words[k++] = w;
            if (k > 0) {
                cmd = words[0];
                words[k++] = argv[0];
                words[k++] = child_argv[0];
                words[k] = NULL;
                cargv = words + 1;
            }
        }
        int rc = MPI_Comm_spawn(cmd, cargv, n, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, errs);
        free(via);
        if (rank == 0) printf("parent: MPI_Comm_spawn rc=%d\n", rc);
        if (rc != MPI_SUCCESS) { MPI_Finalize(); return 1; }
        MPI_Comm_remote_size(inter, &rsize);
        /* parent rank r talks to children r, r+size, ... */
        int ok = 1, first = 1;
        for (int c = rank; c < rsize; c += size) {
            int token = 1000 + c, back = -1;
            MPI_Send(&token, 1, MPI_INT, c, 7, inter);
            MPI_Recv(&back, 1, MPI_INT, c, 8, inter, MPI_STATUS_IGNORE);
            if (back != token + 1) ok = 0;
            if (first && rank == 0) { printf("SPAWN-MS %d %.1f\n", rsize, (MPI_Wtime() - t0) * 1e3); first = 0; }
        }
        MPI_Intercomm_merge(inter, 0, &merged);
        int one = 1, all = 0, good = 0;
        MPI_Allreduce(&one, &all, 1, MPI_INT, MPI_SUM, merged);
        MPI_Allreduce(&ok, &good, 1, MPI_INT, MPI_MIN, merged);
        if (rank == 0) printf("parent: allreduce over parents+children = %d, messages %s\n", all, good ? "right" : "WRONG");
        if (rank == 0 && all == size + rsize && good) printf("MPI-SPAWN-OK %d\n", rsize);
        MPI_Comm_free(&merged);
        MPI_Comm_disconnect(&inter);
        free(errs);
    } else {
        int psize, ok = 1;
        MPI_Comm_remote_size(parent, &psize);
        int token = -1;
        MPI_Recv(&token, 1, MPI_INT, rank % psize, 7, parent, MPI_STATUS_IGNORE);
        if (token != 1000 + rank) ok = 0;
        token += 1;
        MPI_Send(&token, 1, MPI_INT, rank % psize, 8, parent);
        MPI_Intercomm_merge(parent, 1, &merged);
        int one = 1, all = 0, good = 0;
        MPI_Allreduce(&one, &all, 1, MPI_INT, MPI_SUM, merged);
        MPI_Allreduce(&ok, &good, 1, MPI_INT, MPI_MIN, merged);
        printf("child %d of %d: token %s, allreduce %d\n", rank, size, ok ? "right" : "WRONG", all);
        MPI_Comm_free(&merged);
        MPI_Comm_disconnect(&parent);
    }
    MPI_Finalize();
    return 0;
}
