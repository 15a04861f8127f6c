/* A scheduler's view of the fabric, written once for both pmix_fabric_t layouts:
 *   compiled with -DPMIXCPP_FABRIC_SEED_LAYOUT against pmixcpp's headers: the PMIx standard v4.0
 *     scheduler chapter's struct (fabric.commcost[i][j], fabric.nverts);
 *   compiled without, against OpenPMIx's headers (4.2.2 on Debian 12, 5.0.7 on Debian 13: the
 *     same struct) or pmixcpp's default: the cost matrix and the vertex count in fabric.info
 *     (PMIX_FABRIC_COST_MATRIX, PMIX_FABRIC_NUM_VERTICES).
 * Both run against pmixcpp's libpmix.so.2. OpenPMIx's headers (4.2.2, 5.0.7) have no
 * PMIx_server_register_fabric / PMIx_server_get_vertex_info: there the program registers with
 * PMIx_Fabric_register (which reaches the scheduler context in a scheduler process) and prints no
 * vertex names ("?"); the vertex count is PMIX_FABRIC_NUM_DEVICES ("pmix.fab.nverts").
 *
 *   sched_fabric [SECONDS]   PMIx_server_init(PMIX_SERVER_SCHEDULER), PMIx_server_register_fabric,
 *                            print the matrix ("row I: c0 c1 ..." with "vertex I NODE"); then wait up
 *                            to SECONDS for PMIX_FABRIC_UPDATED and print the matrix again
 *                            ("updated"); deregister, finalize. Lines "FAIL ..." on errors.
 */
#include <pmix.h>
#include <pmix_server.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef PMIXCPP_FABRIC_SEED_LAYOUT
#define LAYOUT "seed"
static uint32_t nverts_of(const pmix_fabric_t *f) { return f->nverts; }
static uint16_t **costs_of(const pmix_fabric_t *f) { return f->commcost; }
#else
/* "openpmix-4.2.2", "openpmix-5.0.7": the release of the headers compiled against */
static const char *layout_name(void) {
    static char name[48];
    if (name[0] == '\0')
        snprintf(name, sizeof name, "openpmix-%ld.%ld.%ld", (long)PMIX_VERSION_MAJOR, (long)PMIX_VERSION_MINOR,
                 (long)PMIX_VERSION_RELEASE);
    return name;
}
#define LAYOUT layout_name()
static uint32_t nverts_of(const pmix_fabric_t *f) {
    for (size_t i = 0; i < f->ninfo; ++i)
        if (strcmp(f->info[i].key, PMIX_FABRIC_NUM_DEVICES) == 0) return (uint32_t)f->info[i].value.data.size;
    return 0;
}
static uint16_t **costs_of(const pmix_fabric_t *f) {
    for (size_t i = 0; i < f->ninfo; ++i)
        if (strcmp(f->info[i].key, PMIX_FABRIC_COST_MATRIX) == 0) return (uint16_t **)f->info[i].value.data.ptr;
    return NULL;
}
#endif

#ifdef PMIX_FABRIC_NUM_VERTICES /* pmixcpp's pmix_server.h: the scheduler chapter's calls */
#define HAVE_SERVER_FABRIC 1
#define register_fabric(f) PMIx_server_register_fabric((f), NULL, 0)
#define deregister_fabric(f) PMIx_server_deregister_fabric(f)
#else /* OpenPMIx 4.2.2, 5.0.7 */
#define register_fabric(f) PMIx_Fabric_register((f), NULL, 0)
#define deregister_fabric(f) PMIx_Fabric_deregister(f)
#endif

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int updated = 0;
static int failures = 0;

static void on_update(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[], size_t ninfo,
                      pmix_info_t results[], size_t nresults, pmix_event_notification_cbfunc_fn_t cbfunc,
                      void *cbdata) {
    (void)id; (void)source; (void)info; (void)ninfo; (void)results; (void)nresults;
    if (status == PMIX_FABRIC_UPDATED) {
        pthread_mutex_lock(&lock);
        updated = 1;
        pthread_cond_broadcast(&cond);
        pthread_mutex_unlock(&lock);
    }
    if (cbfunc) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static void print_fabric(pmix_fabric_t *f, const char *when) {
    uint32_t n = nverts_of(f);
    uint16_t **m = costs_of(f);
    printf("%s layout %s: %u vertices\n", when, LAYOUT, n);
    if (n > 0 && m == NULL) {
        printf("FAIL %s: %u vertices and no matrix\n", when, n);
        failures++;
        return;
    }
    for (uint32_t i = 0; i < n; ++i) {
        char *node = NULL;
#ifdef HAVE_SERVER_FABRIC
        pmix_value_t v;
        PMIX_VALUE_CONSTRUCT(&v);
        pmix_status_t rc = PMIx_server_get_vertex_info(f, i, &v, &node);
        if (rc != PMIX_SUCCESS) {
            printf("FAIL vertex %u: %s\n", i, PMIx_Error_string(rc));
            failures++;
        }
        PMIX_VALUE_DESTRUCT(&v);
#endif
        printf("row %u %s:", i, node ? node : "?");
        for (uint32_t j = 0; j < n; ++j) printf(" %u", (unsigned)m[i][j]);
        printf("\n");
        free(node);
    }
    fflush(stdout);
}

int main(int argc, char **argv) {
    int wait_s = argc > 1 ? atoi(argv[1]) : 0;
    pmix_info_t init;
    bool yes = true;
    PMIX_INFO_LOAD(&init, PMIX_SERVER_SCHEDULER, &yes, PMIX_BOOL);
    pmix_status_t rc = PMIx_server_init(NULL, &init, 1);
    if (rc != PMIX_SUCCESS) {
        printf("FAIL PMIx_server_init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    printf("sizeof(pmix_fabric_t) %zu\n", sizeof(pmix_fabric_t));
    pmix_status_t code = PMIX_FABRIC_UPDATED;
    rc = PMIx_Register_event_handler(&code, 1, NULL, 0, on_update, NULL, NULL);
    if (rc < 0) {
        printf("FAIL PMIx_Register_event_handler: %s\n", PMIx_Error_string(rc));
        failures++;
    }
    pmix_fabric_t fabric;
    PMIX_FABRIC_CONSTRUCT(&fabric);
    rc = register_fabric(&fabric);
    if (rc != PMIX_SUCCESS) {
        printf("FAIL register fabric: %s\n", PMIx_Error_string(rc));
        PMIx_server_finalize();
        return 1;
    }
    print_fabric(&fabric, "registered");
    if (wait_s > 0) {
        printf("waiting\n");
        fflush(stdout);
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += wait_s;
        pthread_mutex_lock(&lock);
        while (!updated)
            if (pthread_cond_timedwait(&cond, &lock, &until) != 0) break;
        int got = updated;
        pthread_mutex_unlock(&lock);
        if (got)
            print_fabric(&fabric, "updated");
        else {
            printf("FAIL no PMIX_FABRIC_UPDATED within %d s\n", wait_s);
            failures++;
        }
    }
    rc = deregister_fabric(&fabric);
    if (rc != PMIX_SUCCESS) {
        printf("FAIL deregister fabric: %s\n", PMIx_Error_string(rc));
        failures++;
    }
    PMIx_server_finalize();
    printf("%s %s\n", failures ? "RESULT-FAIL" : "RESULT-PASS", LAYOUT);
    return failures ? 1 : 0;
}
