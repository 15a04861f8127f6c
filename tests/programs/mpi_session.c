/* MPI-4 sessions (OpenMPI 5): MPI_Session_init, the number of process sets, and a communicator
 * from each of the psets mpi://WORLD and mpi://SELF (MPI_Comm_create_from_group, which OpenMPI
 * builds with PMIx_Group_construct), checked with an allreduce of ones over it.
 * Prints "<pset> size N sum N npsets K" per pset and "MPI-SESSION-OK" when both sums are right. */
#include <mpi.h>
#include <stdio.h>
int main(void) {
    MPI_Session s;
    MPI_Group g;
    MPI_Comm c;
    int rc, n = 0, size = 0, sum = 0, one = 1, npsets = 0;
    if ((rc = MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s)) != MPI_SUCCESS) { printf("SESSION-INIT-FAIL %d\n", rc); return 1; }
    MPI_Session_get_num_psets(s, MPI_INFO_NULL, &npsets);
    const char *psets[] = {"mpi://WORLD", "mpi://SELF"};
    for (int i = 0; i < 2; ++i) {
        if ((rc = MPI_Group_from_session_pset(s, psets[i], &g)) != MPI_SUCCESS) { printf("GROUP-FAIL %s %d\n", psets[i], rc); return 1; }
        if ((rc = MPI_Comm_create_from_group(g, "org.pmixcpp.test", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c)) != MPI_SUCCESS) { printf("COMM-FAIL %s %d\n", psets[i], rc); return 1; }
        MPI_Comm_size(c, &size);
        MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c);
        printf("%s size %d sum %d npsets %d\n", psets[i], size, sum, npsets);
        n += (sum == size);
        MPI_Comm_free(&c);
        MPI_Group_free(&g);
    }
    MPI_Session_finalize(&s);
    if (n == 2) printf("MPI-SESSION-OK\n");
    return n == 2 ? 0 : 1;
}
