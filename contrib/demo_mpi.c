/* The MPI program of contrib/demo.sh, built with Debian's mpicc (OpenMPI).
 *
 * Every rank reports its Slurm node, the PMIx namespace its PMIx server gave it and the
 * libpmix.so it runs on; rank 0 prints one line per rank. Then all ranks add up rank + 1 with
 * MPI_Allreduce and rank 0 checks the sum against size * (size + 1) / 2.
 * Prints "DEMO-SUM-OK <ranks> <nodes>" and exits 0 only if the sum is right. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { LINE = 256, FIELD = 128 };

/* The path of the libpmix.so this process has mapped (pmixcpp's or OpenPMIx's). */
static void pmix_library(char *out, size_t len) {
    char line[1024];
    FILE *maps = fopen("/proc/self/maps", "r");
    snprintf(out, len, "(no libpmix.so mapped)");
    if (!maps) return;
    while (fgets(line, sizeof line, maps)) {
        char *path = strchr(line, '/');
        if (!path || !strstr(path, "/libpmix.so")) continue;
        path[strcspn(path, "\n")] = '\0';
        snprintf(out, len, "%s", path);
        break;
    }
    fclose(maps);
}

static const char *env_or(const char *name, const char *fallback) {
    const char *v = getenv(name);
    return v && *v ? v : fallback;
}

int main(int argc, char **argv) {
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    char node[FIELD], lib[LINE], mine[LINE];
    snprintf(node, sizeof node, "%s", env_or("SLURMD_NODENAME", "?"));
    pmix_library(lib, sizeof lib);
    snprintf(mine, sizeof mine, "%4d  %-5s %-18s %s", rank, node, env_or("PMIX_NAMESPACE", "(none)"), lib);

    char *lines = NULL, *nodes = NULL;
    if (rank == 0) {
        lines = calloc((size_t)size, LINE);
        nodes = calloc((size_t)size, FIELD);
        if (!lines || !nodes) MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Gather(mine, LINE, MPI_CHAR, lines, LINE, MPI_CHAR, 0, MPI_COMM_WORLD);
    MPI_Gather(node, FIELD, MPI_CHAR, nodes, FIELD, MPI_CHAR, 0, MPI_COMM_WORLD);

    long value = rank + 1, sum = 0;
    MPI_Allreduce(&value, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    long expected = (long)size * (size + 1) / 2;
    int ok = sum == expected;

    if (rank == 0) {
        int distinct = 0;
        for (int i = 0; i < size; ++i) {
            int seen = 0;
            for (int j = 0; j < i && !seen; ++j) seen = strcmp(nodes + (size_t)i * FIELD, nodes + (size_t)j * FIELD) == 0;
            distinct += !seen;
        }
        printf("rank  node  PMIx namespace     PMIx library the rank runs on\n");
        for (int i = 0; i < size; ++i) printf("%s\n", lines + (size_t)i * LINE);
        printf("\n== MPI_Allreduce(MPI_SUM) of rank + 1 over all %d ranks\n", size);
        printf("sum = %ld, expected 1 + 2 + ... + %d = %ld: %s\n", sum, size, expected, ok ? "correct" : "WRONG");
        if (ok) printf("DEMO-SUM-OK %d %d\n", size, distinct);
        fflush(stdout);
        free(lines);
        free(nodes);
    }
    MPI_Finalize();
    return ok ? 0 : 1;
}
