/* Helpers of pmi1_test.c and pmi2_test.c (no PMIx header: the same binaries run on Slurm's
 * libpmi/libpmi2): one PASS/FAIL line per check tagged with the rank, a RESULT line at the end,
 * a clock, and MPICH's reading of PMI_process_mapping. */
#ifndef PMI_TEST_H
#define PMI_TEST_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int pt_failures = 0;
static int pt_rank = -1;

static inline void pt_report(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void pt_report(int ok, const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    printf("%s rank %d: %s\n", ok ? "PASS" : "FAIL", pt_rank, buf);
    fflush(stdout);
    if (!ok) pt_failures++;
}
#define CHECK(cond, ...) pt_report((cond) ? 1 : 0, __VA_ARGS__)

static inline int pt_exit(void) {
    printf("%s rank %d: %d failure(s)\n", pt_failures ? "RESULT-FAIL" : "RESULT-PASS", pt_rank, pt_failures);
    fflush(stdout);
    return pt_failures ? 1 : 0;
}

static inline double pt_now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* The node of each of n ranks in a "(vector,(s,c,k),...)" mapping, read as MPICH reads it
 * (MPIR_NODEMAP_populate_ids_from_mapping: the triples again, from the first one starting at
 * node 0, until every rank is placed). Returns 0 on success. */
static inline int pt_expand_mapping(const char *m, int n, int *node_of) {
    int s[256], c[256], k[256], nt = 0;
    const char *p = strstr(m, "(vector,");
    if (p == NULL) return -1;
    p += strlen("(vector,");
    while ((p = strchr(p, '(')) != NULL && nt < 256) {
        if (sscanf(p, "(%d,%d,%d)", &s[nt], &c[nt], &k[nt]) != 3) return -1;
        if (s[nt] < 0 || c[nt] <= 0 || k[nt] <= 0) return -1;
        nt++;
        p++;
    }
    if (nt == 0) return -1;
    int rank = 0, wrapped = 0;
    while (rank < n) {
        int b = 0, before = rank;
        if (wrapped)
            while (b < nt && s[b] != 0) b++;
        for (; b < nt && rank < n; b++) {
            if (s[b] == 0) wrapped = 1;
            for (int x = 0; x < c[b] && rank < n; x++)
                for (int y = 0; y < k[b] && rank < n; y++) node_of[rank++] = s[b] + x;
        }
        if (rank == before) return -1;
    }
    return 0;
}

#endif
