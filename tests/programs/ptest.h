/* Tiny check helpers shared by the PMIx test programs: every check prints one
 * "PASS"/"FAIL" line tagged with the rank; ptest_exit() returns non-zero if any failed. */
#ifndef PTEST_H
#define PTEST_H

#include <pmix.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int ptest_failures = 0;
static int ptest_rank = -1;

static void ptest_report(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void ptest_report(int ok, const char *fmt, ...) {
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

static int ptest_exit(void) {
    printf("%s rank %d: %d failure(s)\n", ptest_failures ? "RESULT-FAIL" : "RESULT-PASS", ptest_rank,
           ptest_failures);
    fflush(stdout);
    return ptest_failures ? 1 : 0;
}

static pmix_info_t *ptest_bool_info(const char *key, int flag) {
    static pmix_info_t infos[8];
    static int next = 0;
    pmix_info_t *i = &infos[next++ % 8];
    bool b = flag ? true : false;
    memset(i, 0, sizeof(*i));
    PMIx_Info_load(i, key, &b, PMIX_BOOL);
    return i;
}

#endif
