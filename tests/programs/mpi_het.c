/* MPMD under one MPI_COMM_WORLD (a heterogeneous step, --multi-prog): every rank's MPI_APPNUM
 * gathered at rank 0, an allreduce over all ranks. Rank 0 prints
 * "MPI-HET-OK <size> appnums=<a0>,<a1>,..." (MPI-HET-FAIL if the allreduce is wrong). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    int rank, size, sum = 0, flag = 0, *appnum = NULL, mine = -1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag);
    if (flag && appnum) mine = *appnum;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int *all = rank == 0 ? malloc(sizeof(int) * (size_t)size) : NULL;
    MPI_Gather(&mine, 1, MPI_INT, all, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf(sum == size * (size - 1) / 2 ? "MPI-HET-OK %d appnums=" : "MPI-HET-FAIL %d appnums=", size);
        for (int i = 0; i < size; i++) printf(i ? ",%d" : "%d", all[i]);
        printf("\n");
        free(all);
    }
    MPI_Finalize();
    return sum == size * (size - 1) / 2 ? 0 : 1;
}
