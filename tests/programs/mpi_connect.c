/* MPI_Comm_accept / MPI_Comm_connect between two steps of one job (tests/integration/
 * t-connect.sh): "server <name>" opens a port and publishes it with MPI_Publish_name; "client
 * <name>" finds it with MPI_Lookup_name (retrying while the server is not there yet) and
 * connects. Every rank of each side exchanges a message with the other side, an Allreduce over
 * the merged communicator counts everyone, then both disconnect. Prints MPI-CONNECT-OK <side>. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char **argv) {
    char port[MPI_MAX_PORT_NAME] = "";
    MPI_Comm inter, merged;
    int rank, size, rsize;
    const char *role = argc > 1 ? argv[1] : "server";
    const char *name = argc > 2 ? argv[2] : "pmixcpp-svc";
    int server = strcmp(role, "server") == 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (server) {
        if (rank == 0) {
            MPI_Open_port(MPI_INFO_NULL, port);
            if (MPI_Publish_name(name, MPI_INFO_NULL, port) != MPI_SUCCESS) printf("server: publish failed\n");
        }
        if (MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter) != MPI_SUCCESS) {
            printf("server: accept failed\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        if (rank == 0) MPI_Unpublish_name(name, MPI_INFO_NULL, port);
    } else {
        if (rank == 0) {
            int rc = MPI_ERR_NAME;
            MPI_Info lookup_info = MPI_INFO_NULL;
#if defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5
            /* OpenMPI 5's MPI_Lookup_name leaves its PMIx range unset with MPI_INFO_NULL
             * (tests/programs/mpi_pubsub.c): name the session, where the server publishes. */
            MPI_Info_create(&lookup_info);
            MPI_Info_set(lookup_info, "range", "session");
#endif
            for (int i = 0; i < 300 && rc != MPI_SUCCESS; ++i) {
                MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
                rc = MPI_Lookup_name(name, lookup_info, port);
                if (rc != MPI_SUCCESS) usleep(100000);
            }
            if (lookup_info != MPI_INFO_NULL) MPI_Info_free(&lookup_info);
            if (rc != MPI_SUCCESS) printf("client: lookup of %s failed\n", name);
        }
        if (MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter) != MPI_SUCCESS) {
            printf("client: connect failed\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    MPI_Comm_remote_size(inter, &rsize);
    int peer = rank % rsize, mine = (server ? 100 : 200) + rank, got = -1, ok = 1;
    /* each side's rank r sends to the other side's rank r % rsize; receive from every sender */
    MPI_Request req;
    MPI_Isend(&mine, 1, MPI_INT, peer, 5, inter, &req);
    for (int s = 0; s < rsize; ++s) {
        if (s % size != rank) continue;
        MPI_Recv(&got, 1, MPI_INT, s, 5, inter, MPI_STATUS_IGNORE);
        if (got != (server ? 200 : 100) + s) ok = 0;
    }
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Intercomm_merge(inter, server ? 0 : 1, &merged);
    int one = 1, all = 0, good = 0;
    MPI_Allreduce(&one, &all, 1, MPI_INT, MPI_SUM, merged);
    MPI_Allreduce(&ok, &good, 1, MPI_INT, MPI_MIN, merged);
    if (rank == 0) printf("%s: %d local + %d remote, allreduce %d, messages %s\n", role, size, rsize, all, good ? "right" : "WRONG");
    if (rank == 0 && all == size + rsize && good) printf("MPI-CONNECT-OK %s\n", role);
    MPI_Comm_free(&merged);
    MPI_Comm_disconnect(&inter);
    if (server && rank == 0) MPI_Close_port(port);
    MPI_Finalize();
    return 0;
}
