/* Tiny check helpers shared by the PMIx test programs: every check prints one
 * "PASS"/"FAIL" line tagged with the rank; ptest_exit() returns non-zero if any failed. */
#ifndef PTEST_H
#define PTEST_H

#include <pmix.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int ptest_failures = 0;
static int ptest_rank = -1;

static inline void ptest_report(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void ptest_report(int ok, const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    printf("%s rank %d: %s\n", ok ? "PASS" : "FAIL", ptest_rank, buf);
    fflush(stdout);
    if (!ok) ptest_failures++;
}

/* CHECK_RC(expected, call): compare a pmix_status_t */
#define CHECK_RC(expected, call)                                                                   \
    do {                                                                                           \
        pmix_status_t _rc = (call);                                                                \
        ptest_report(_rc == (expected), "%s -> %s (want %s)", #call, PMIx_Error_string(_rc),       \
                     PMIx_Error_string(expected));                                                 \
    } while (0)

#define CHECK(cond, ...) ptest_report((cond) ? 1 : 0, __VA_ARGS__)

static inline int ptest_exit(void) {
    printf("%s rank %d: %d failure(s)\n", ptest_failures ? "RESULT-FAIL" : "RESULT-PASS", ptest_rank,
           ptest_failures);
    fflush(stdout);
    return ptest_failures ? 1 : 0;
}

/* PMIx_Query_info results come in the v4.1 form (a PMIX_QUERY_RESULTS per query) followed by the
 * flat (key, value) answers: drop the PMIX_QUERY_RESULTS entries, keeping the flat ones at the
 * front (*n becomes their count; PMIX_INFO_FREE(res, *n) still frees the array). Returns how many
 * PMIX_QUERY_RESULTS there were. */
static inline size_t ptest_flat_results(pmix_info_t *res, size_t *n) {
    size_t wrapped = 0, k = 0;
    for (size_t i = 0; res != NULL && i < *n; ++i) {
        if (PMIX_CHECK_KEY(&res[i], PMIX_QUERY_RESULTS)) {
            PMIX_INFO_DESTRUCT(&res[i]);
            wrapped++;
            continue;
        }
        if (k != i) {
            res[k] = res[i];
            memset(&res[i], 0, sizeof(res[i]));
        }
        k++;
    }
    *n = k;
    return wrapped;
}

static inline pmix_info_t *ptest_bool_info(const char *key, int flag) {
    static pmix_info_t infos[8];
    static int next = 0;
    pmix_info_t *i = &infos[next++ % 8];
    bool b = flag ? true : false;
    memset(i, 0, sizeof(*i));
    PMIx_Info_load(i, key, &b, PMIX_BOOL);
    return i;
}

/* PMIx_Init, then tag the report lines with the rank; 0 on success (a failure is reported). */
static inline int ptest_init(pmix_proc_t *me) {
    pmix_status_t rc = PMIx_Init(me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        printf("FAIL rank ?: PMIx_Init: %s\n", PMIx_Error_string(rc));
        fflush(stdout);
        return 1;
    }
    ptest_rank = (int)me->rank;
    return 0;
}

/* The job's size (PMIX_JOB_SIZE of the wildcard rank); 1 when the Get fails (reported). */
static inline uint32_t ptest_job_size(const pmix_proc_t *me) {
    pmix_proc_t wild = *me;
    pmix_value_t *v = NULL;
    uint32_t size = 1;
    wild.rank = PMIX_RANK_WILDCARD;
    pmix_status_t rc = PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &v);
    if (rc == PMIX_SUCCESS && v) size = v->data.uint32;
    else ptest_report(0, "PMIx_Get(PMIX_JOB_SIZE) -> %s", PMIx_Error_string(rc));
    if (v) PMIX_VALUE_RELEASE(v);
    return size;
}

/* Completion of a non-blocking call: ptest_nb_cb as its pmix_op_cbfunc_t, then ptest_wait_all. */
struct ptest_nb {
    volatile int done;
    volatile pmix_status_t status;
};

static inline void ptest_nb_cb(pmix_status_t status, void *cbdata) {
    struct ptest_nb *s = (struct ptest_nb *)cbdata;
    s->status = status;
    __sync_synchronize();
    s->done = 1;
}

/* 1 once all n have completed, 0 after `seconds`. */
static inline int ptest_wait_all(struct ptest_nb *s, int n, int seconds) {
    for (int t = 0; t < seconds * 1000; t++) {
        int all = 1;
        for (int i = 0; i < n; i++) all &= s[i].done;
        if (all) return 1;
        usleep(1000);
    }
    return 0;
}

#endif
