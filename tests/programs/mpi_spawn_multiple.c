/* MPI_Comm_spawn_multiple (tests/integration/t-spawn-ompi.sh): the parents spawn two commands in
 * one call, this program as app "A" (2 processes) and as app "B" (3 processes). Every child
 * checks its MPI_APPNUM against its argv, sends (appnum, rank, host) to parent rank 0, and
 * everyone joins an MPI_Allreduce over the merged communicator. With two host names as arguments
 * (mpi_spawn_multiple hostA hostB), each command gets MPI_Info "host" = its host and every child
 * checks it runs there. Prints MPI-SPAWN-MULTIPLE-OK <children>. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char **argv) {
    MPI_Comm parent, inter, merged;
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_get_parent(&parent);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (parent == MPI_COMM_NULL) {
        char *cmds[2] = {argv[0], argv[0]};
        const int placed = argc > 2;
        char *argv_a[] = {"A", placed ? argv[1] : "-", NULL}, *argv_b[] = {"B", placed ? argv[2] : "-", NULL};
        char **argvs[2] = {argv_a, argv_b};
        int maxprocs[2] = {2, 3}, errs[5], rsize = 0;
        MPI_Info infos[2] = {MPI_INFO_NULL, MPI_INFO_NULL};
        if (placed) {
            for (int i = 0; i < 2; ++i) {
                MPI_Info_create(&infos[i]);
                MPI_Info_set(infos[i], "host", argv[1 + i]);
            }
        }
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        int rc = MPI_Comm_spawn_multiple(2, cmds, argvs, maxprocs, infos, 0, MPI_COMM_WORLD, &inter, errs);
        if (rank == 0) printf("parent: MPI_Comm_spawn_multiple rc=%d\n", rc);
        if (rc != MPI_SUCCESS) { MPI_Finalize(); return 1; }
        MPI_Comm_remote_size(inter, &rsize);
        int good = rsize == 5;
        if (rank == 0) {
            for (int c = 0; c < rsize; ++c) {
                int got[4] = {-1, -1, -1, -1};
                MPI_Recv(got, 4, MPI_INT, c, 9, inter, MPI_STATUS_IGNORE);
                int want_app = c < 2 ? 0 : 1;
                int ok = got[0] == want_app && got[1] == c && got[2] == 1 && got[3] == 1;
                printf("parent: child %d: appnum %d, argv %s, host %s -> %s\n", c, got[0],
                       got[2] == 1 ? "matches" : "WRONG", !placed ? "any" : got[3] == 1 ? "its command's" : "WRONG",
                       ok ? "right" : "WRONG");
                good = good && ok;
            }
        }
        MPI_Intercomm_merge(inter, 0, &merged);
        int one = 1, all = 0;
        MPI_Allreduce(&one, &all, 1, MPI_INT, MPI_SUM, merged);
        if (rank == 0) printf("parent: allreduce over parents+children = %d\n", all);
        if (rank == 0 && all == size + rsize && good) printf("MPI-SPAWN-MULTIPLE-OK %d\n", rsize);
        MPI_Comm_free(&merged);
        MPI_Comm_disconnect(&inter);
        if (placed)
            for (int i = 0; i < 2; ++i) MPI_Info_free(&infos[i]);
    } else {
        int *appnum = NULL, flag = 0;
        MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag);
        int app = flag && appnum ? *appnum : -1;
        int argv_ok = argc > 2 && strcmp(argv[1], app == 0 ? "A" : "B") == 0;
        /* Slurm's node name (several virtual nodes share one host name) */
        const char *node = getenv("SLURMD_NODENAME");
        int host_ok = argc > 2 && (strcmp(argv[2], "-") == 0 || (node && strcmp(node, argv[2]) == 0));
        int msg[4] = {app, rank, argv_ok, host_ok};
        MPI_Send(msg, 4, MPI_INT, 0, 9, parent);
        MPI_Intercomm_merge(parent, 1, &merged);
        int one = 1, all = 0;
        MPI_Allreduce(&one, &all, 1, MPI_INT, MPI_SUM, merged);
        printf("child %d of %d: app %s, MPI_APPNUM %d, allreduce %d\n", rank, size, argc > 1 ? argv[1] : "?", app, all);
        MPI_Comm_free(&merged);
        MPI_Comm_disconnect(&parent);
    }
    MPI_Finalize();
    return 0;
}
