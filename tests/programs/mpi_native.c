/* MPI hello or allreduce that says which PMIx client library it runs on: every rank prints
 * "LIBPMIX <rank> <path>" (the libpmix.so mapped into it, from /proc/self/maps, or "none"); rank 0
 * prints "MPI-NATIVE-OK <mode> <size>" when every rank's checks passed (allreduce: sums, a ring of
 * messages, a large reduction). Usage: mpi_native hello|allreduce|abort (abort: the last rank calls
 * MPI_Abort with 3 after MPI_Init, the others wait in a barrier). tests/integration/t-native-ompi.sh
 * runs it with Debian's OpenPMIx (the native listener) and with pmixcpp's library. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static void libpmix_path(char *out, size_t len) {
    snprintf(out, len, "none");
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) return;
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        char *p = strchr(line, '/');
        if (!p || !strstr(p, "/libpmix.so")) continue;
        p[strcspn(p, "\n")] = '\0';
        snprintf(out, len, "%s", p);
        break;
    }
    fclose(f);
}

int main(int argc, char **argv) {
    int rank, size, ok = 1;
    const char *mode = argc > 1 ? argv[1] : "hello";
    char lib[4096];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    libpmix_path(lib, sizeof lib);
    printf("LIBPMIX %d %s\n", rank, lib);
    fflush(stdout);
    if (strcmp(mode, "abort") == 0) {
        if (rank == size - 1) MPI_Abort(MPI_COMM_WORLD, 3);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (strcmp(mode, "allreduce") == 0) {
        int sum = 0;
        MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (sum != size * (size - 1) / 2) ok = 0;
        int token = rank, got = -1;
        MPI_Sendrecv(&token, 1, MPI_INT, (rank + 1) % size, 0, &got, 1, MPI_INT, (rank + size - 1) % size, 0,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (got != (rank + size - 1) % size) ok = 0;
        static double big[4096], out[4096];
        for (int i = 0; i < 4096; i++) big[i] = rank + i;
        MPI_Allreduce(big, out, 4096, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (out[10] != size - 1 + 10) ok = 0;
    }
    int all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (rank == 0) printf(all_ok ? "MPI-NATIVE-OK %s %d\n" : "MPI-NATIVE-FAIL %s %d\n", mode, size);
    MPI_Finalize();
    return all_ok ? 0 : 1;
}
