/* MPI data exchange: allreduce of ranks, a ring of point-to-point messages (exercises the
 * modex: peers' transport addresses come through PMIx). Rank 0 prints "MPI-ALLREDUCE-OK". */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
    int rank, size, sum = 0, ok = 1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (sum != size * (size - 1) / 2) ok = 0;
    int token = rank, got = -1;
    MPI_Sendrecv(&token, 1, MPI_INT, (rank + 1) % size, 0, &got, 1, MPI_INT, (rank + size - 1) % size, 0,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (got != (rank + size - 1) % size) ok = 0;
    double big[4096], out[4096];
    for (int i = 0; i < 4096; i++) big[i] = rank + i;
    MPI_Allreduce(big, out, 4096, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (out[10] != size - 1 + 10) ok = 0;
    int all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (rank == 0) printf(all_ok ? "MPI-ALLREDUCE-OK %d\n" : "MPI-ALLREDUCE-FAIL %d\n", size);
    MPI_Finalize();
    return all_ok ? 0 : 1;
}
