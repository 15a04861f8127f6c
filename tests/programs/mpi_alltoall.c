/* MPI_Alltoall of distinct values and a token passed once around the whole ring:
 * every pair of ranks exchanges data, so every peer's address must have come
 * through PMIx. Rank 0 prints "MPI-ALLTOALL-OK <size>". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    int rank, size, ok = 1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int *send = malloc(sizeof(int) * size), *recv = malloc(sizeof(int) * size);
    for (int i = 0; i < size; i++) send[i] = rank * 100000 + i;
    MPI_Alltoall(send, 1, MPI_INT, recv, 1, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < size; i++)
        if (recv[i] != i * 100000 + rank) ok = 0;
    /* ring: rank 0 starts a token that every rank increments */
    int token = 0;
    if (size > 1) {
        if (rank == 0) {
            token = 1;
            MPI_Send(&token, 1, MPI_INT, 1, 7, MPI_COMM_WORLD);
            MPI_Recv(&token, 1, MPI_INT, size - 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (token != size) ok = 0;
        } else {
            MPI_Recv(&token, 1, MPI_INT, rank - 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            token++;
            MPI_Send(&token, 1, MPI_INT, (rank + 1) % size, 7, MPI_COMM_WORLD);
        }
    }
    int all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (rank == 0) printf(all_ok ? "MPI-ALLTOALL-OK %d\n" : "MPI-ALLTOALL-FAIL %d\n", size);
    free(send);
    free(recv);
    MPI_Finalize();
    return all_ok ? 0 : 1;
}
