/* The by-hand alternative to a grow (docs/malleability.md, tests/bench/malleable-bench.sh): a job
 * writes its state to a checkpoint file and ends; a new job of the larger size reads it and goes
 * on. Plain MPI, any launcher:
 *
 *   srun -n N ./restart write FILE [DOUBLES]   the state: DOUBLES doubles (default 131072, 1 MiB),
 *                                              in blocks over the ranks; rank 0 takes the time
 *                                              of the decision, gathers the state and writes it
 *                                              (header, then the data; fsync)
 *   srun -n M ./restart read FILE              rank 0 reads it, the ranks get their blocks of the
 *                                              new size, an allreduce of the state's sum and of
 *                                              the ranks checks it
 *
 * Prints (rank 0):
 *   CKPT-WRITTEN <n> ranks, <doubles> doubles, write <ms> ms after the decision
 *   RESTART-MS <m> ranks: decision-to-main <ms> init <ms> read <ms> allreduce <ms> total <ms>
 *       decision-to-main: from the old job's decision to the first new process in main() (the
 *       checkpoint, the old job's end, the new job's queue and launch); init: to the last
 *       MPI_Init's end; read: the checkpoint read and scattered; total: the decision to the
 *       first allreduce's end
 *   RESTART-OK <m>
 * The processes of both jobs share the host's clock (the test cluster's nodes are one host). */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

struct header {
    char magic[8];
    double decision;
    uint64_t doubles;
    uint32_t ranks;
};

/* block b of n over `size` ranks: counts and displacements */
static void blocks(uint64_t n, int size, int *counts, int *displs) {
    for (int r = 0; r < size; ++r) {
        uint64_t lo = n * (uint64_t)r / (uint64_t)size, hi = n * (uint64_t)(r + 1) / (uint64_t)size;
        counts[r] = (int)(hi - lo);
        displs[r] = (int)lo;
    }
}

int main(int argc, char **argv) {
    double t_main = now();
    if (argc < 3 || (strcmp(argv[1], "write") != 0 && strcmp(argv[1], "read") != 0)) {
        fprintf(stderr, "usage: restart write FILE [DOUBLES] | read FILE\n");
        return 2;
    }
    MPI_Init(&argc, &argv);
    double t_init = now();
    int r, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int *counts = calloc((size_t)size, sizeof(int)), *displs = calloc((size_t)size, sizeof(int));
    int ok = 1;
    if (strcmp(argv[1], "write") == 0) {
        uint64_t n = argc > 3 ? strtoull(argv[3], NULL, 10) : 131072;
        blocks(n, size, counts, displs);
        double *mine = malloc(sizeof(double) * (size_t)(counts[r] ? counts[r] : 1));
        for (int i = 0; i < counts[r]; ++i) mine[i] = (double)(displs[r] + i) * 0.5;
        MPI_Barrier(MPI_COMM_WORLD);
        struct header h = {"PMXCKPT", now(), n, (uint32_t)size};  /* the decision */
        double *all = r == 0 ? malloc(sizeof(double) * (size_t)(n ? n : 1)) : NULL;
        MPI_Gatherv(mine, counts[r], MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        if (r == 0) {
            FILE *f = fopen(argv[2], "wb");
            ok = f && fwrite(&h, sizeof(h), 1, f) == 1 && fwrite(all, sizeof(double), (size_t)n, f) == (size_t)n &&
                 fflush(f) == 0 && fsync(fileno(f)) == 0;
            if (f) ok = fclose(f) == 0 && ok;
            if (ok) printf("CKPT-WRITTEN %d ranks, %llu doubles, write %.1f ms after the decision\n", size,
                           (unsigned long long)n, (now() - h.decision) * 1e3);
            else printf("RESTART-FAIL cannot write %s\n", argv[2]);
            free(all);
        }
        free(mine);
    } else {
        struct header h;
        double *all = NULL;
        if (r == 0) {
            FILE *f = fopen(argv[2], "rb");
            ok = f && fread(&h, sizeof(h), 1, f) == 1 && strcmp(h.magic, "PMXCKPT") == 0 && h.doubles < (1ull << 31);
            if (ok) {
                all = malloc(sizeof(double) * (size_t)(h.doubles ? h.doubles : 1));
                ok = fread(all, sizeof(double), (size_t)h.doubles, f) == (size_t)h.doubles;
            }
            if (f) fclose(f);
            if (!ok) printf("RESTART-FAIL cannot read %s\n", argv[2]);
        }
        MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (ok) {
            MPI_Bcast(&h, (int)sizeof(h), MPI_BYTE, 0, MPI_COMM_WORLD);
            blocks(h.doubles, size, counts, displs);
            double *mine = malloc(sizeof(double) * (size_t)(counts[r] ? counts[r] : 1));
            MPI_Scatterv(all, counts, displs, MPI_DOUBLE, mine, counts[r], MPI_DOUBLE, 0, MPI_COMM_WORLD);
            double t_read = now();
            double part[2] = {0, (double)r}, sum[2] = {0, 0};
            for (int i = 0; i < counts[r]; ++i) part[0] += mine[i];
            MPI_Allreduce(part, sum, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            double t_done = now(), first_main = 0, last_init = 0, last_read = 0;
            MPI_Reduce(&t_main, &first_main, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
            MPI_Reduce(&t_init, &last_init, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
            MPI_Reduce(&t_read, &last_read, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
            double n = (double)h.doubles, want = 0.5 * n * (n - 1) / 2;
            if (r == 0) {
                printf("RESTART-MS %d ranks: decision-to-main %.1f init %.1f read %.1f allreduce %.1f total %.1f\n", size,
                       (first_main - h.decision) * 1e3, (last_init - first_main) * 1e3, (last_read - last_init) * 1e3,
                       (t_done - last_read) * 1e3, (t_done - h.decision) * 1e3);
                if (sum[0] == want && sum[1] == (double)size * (size - 1) / 2) printf("RESTART-OK %d\n", size);
                else printf("RESTART-FAIL sum %.1f (want %.1f), ranks %.0f\n", sum[0], want, sum[1]);
            }
            free(mine);
        }
        free(all);
    }
    fflush(stdout);
    free(counts);
    free(displs);
    MPI_Finalize();
    return ok ? 0 : 1;
}
