/* MPI_Comm_spawn of 4 children (tests/integration/t-dyn.sh). Prints MPI-SPAWN-OK <n> when the
 * intercommunicator works; today PMIx_Connect is not implemented, so the spawn step starts, the
 * publish/lookup exchange across the two steps succeeds, and MPI_Comm_spawn fails cleanly. */
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
    MPI_Comm parent, inter;
    int rank, size, errs[4];
    MPI_Init(&argc, &argv);
    MPI_Comm_get_parent(&parent);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (parent == MPI_COMM_NULL) {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        int rc = MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, 4, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, errs);
        if (rank == 0) printf("parent: MPI_Comm_spawn rc=%d\n", rc);
        if (rc == MPI_SUCCESS) { MPI_Comm_remote_size(inter, &size); if (rank == 0) printf("MPI-SPAWN-OK %d\n", size); MPI_Comm_disconnect(&inter); }
    } else {
        printf("child %d\n", rank);
        MPI_Comm_disconnect(&parent);
    }
    MPI_Finalize();
    return 0;
}
