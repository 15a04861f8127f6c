/* MPI_Publish_name / MPI_Lookup_name / MPI_Unpublish_name inside one step (tests/integration/
 * t-dyn.sh): rank 0 opens a port and publishes it, every other rank looks it up (OpenMPI turns
 * these into PMIx_Publish / PMIx_Lookup / PMIx_Unpublish). Prints MPI-PUBSUB-OK <size>. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    int rank, size, bad = 0, allbad = 0;
    char port[MPI_MAX_PORT_NAME] = "", found[MPI_MAX_PORT_NAME] = "";
    MPI_Info lookup_info = MPI_INFO_NULL;
    MPI_Init(&argc, &argv);
#if defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5
    /* OpenMPI 5's MPI_Lookup_name leaves its PMIx range uninitialised when given MPI_INFO_NULL
     * (ompi/mpi/c/lookup_name.c: `pmix_data_range_t rng;` is loaded unset), so the lookup asks
     * for whatever range the stack held, now and then not the session that MPI_Publish_name
     * publishes in. Name the range, as that function's own info key allows. */
    MPI_Info_create(&lookup_info);
    MPI_Info_set(lookup_info, "range", "session");
#endif
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    if (rank == 0) {
        if (MPI_Open_port(MPI_INFO_NULL, port) != MPI_SUCCESS) bad = 1;
        if (MPI_Publish_name("pmixcpp-svc", MPI_INFO_NULL, port) != MPI_SUCCESS) {
            printf("rank 0: MPI_Publish_name failed\n");
            bad = 1;
        }
    }
    MPI_Bcast(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rank != 0) {
        int rc = MPI_Lookup_name("pmixcpp-svc", lookup_info, found);
        if (rc != MPI_SUCCESS || strcmp(found, port) != 0) {
            printf("rank %d: MPI_Lookup_name rc %d got '%s' want '%s'\n", rank, rc, found, port);
            bad = 1;
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        if (MPI_Unpublish_name("pmixcpp-svc", MPI_INFO_NULL, port) != MPI_SUCCESS) {
            printf("rank 0: MPI_Unpublish_name failed\n");
            bad = 1;
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == size - 1 && size > 1) {
        if (MPI_Lookup_name("pmixcpp-svc", lookup_info, found) == MPI_SUCCESS) {
            printf("rank %d: lookup after unpublish succeeded\n", rank);
            bad = 1;
        }
    }
    if (lookup_info != MPI_INFO_NULL) MPI_Info_free(&lookup_info);
    MPI_Allreduce(&bad, &allbad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0 && !allbad) printf("MPI-PUBSUB-OK %d\n", size);
    MPI_Finalize();
    return allbad;
}
