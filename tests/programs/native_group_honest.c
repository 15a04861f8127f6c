/* An honest OpenPMIx client beside hostile ones (tests/integration/t-attack-native.sh): built
 * against the system's OpenPMIx (pkg-config pmix) and run with that library, so it reaches the
 * server through the native listener.
 *
 *   native_group_honest DIR
 *
 * Ranks 0 and 1: put and commit a value, construct the group "honest" of both with a context id,
 * leave DIR/honest.<rank>, wait until DIR/attacked exists (120 s at most), then check that the
 * group came through the attack: its membership queried from the server (ranks 0 and 1), its
 * destruct, a second construct and destruct of the same name, a fence over both with the data,
 * and a Get of the other's value. Prints "HONEST <rank> <step>: <what>" lines and "HONEST-OK
 * <rank>" or "HONEST-FAIL <rank>". */
#include <pmix.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pmix_proc_t me;
static int failures = 0;
static const char *volatile stage = "init";  // the call under way, for the watchdog

/* A rank that hangs says where before it is killed (the step's srun has its own timeout). */
static void watchdog(int sig) {
    (void)sig;
    char line[160];
    int n = snprintf(line, sizeof line, "HONEST %u FAIL: no progress for 90 s in %s\n", me.rank, stage);
    if (n > 0) (void)!write(1, line, (size_t)n);
    _exit(3);
}

#define CHECK(cond, ...)                                   \
    do {                                                   \
        if (!(cond)) {                                     \
            printf("HONEST %u FAIL: ", me.rank);           \
            printf(__VA_ARGS__);                           \
            printf("\n");                                  \
            fflush(stdout);                                \
            failures++;                                    \
        }                                                  \
    } while (0)

static void say(const char *fmt, const char *a, long b) {
    printf("HONEST %u ", me.rank);
    printf(fmt, a, b);
    printf("\n");
    fflush(stdout);
}

/* The members of process set `name` as the server knows them: their count, -1 on failure; the
 * ranks go into ranks[0..1]. */
static long pset_members(const char *name, pmix_rank_t ranks[2], pmix_status_t *status) {
    pmix_query_t q;
    PMIX_QUERY_CONSTRUCT(&q);
    PMIX_ARGV_APPEND(*status, q.keys, PMIX_QUERY_PSET_MEMBERSHIP);
    PMIX_INFO_CREATE(q.qualifiers, 2);
    q.nqual = 2;
    PMIX_INFO_LOAD(&q.qualifiers[0], PMIX_PSET_NAME, name, PMIX_STRING);
    bool refresh = true;
    PMIX_INFO_LOAD(&q.qualifiers[1], PMIX_QUERY_REFRESH_CACHE, &refresh, PMIX_BOOL);
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    *status = PMIx_Query_info(&q, 1, &results, &nresults);
    long n = -1;
    for (size_t i = 0; *status == PMIX_SUCCESS && i < nresults; i++) {
        if (!PMIX_CHECK_KEY(&results[i], PMIX_QUERY_PSET_MEMBERSHIP) || results[i].value.type != PMIX_DATA_ARRAY ||
            results[i].value.data.darray == NULL || results[i].value.data.darray->type != PMIX_PROC)
            continue;
        pmix_data_array_t *da = results[i].value.data.darray;
        n = (long)da->size;
        for (size_t k = 0; k < da->size && k < 2; k++) ranks[k] = ((pmix_proc_t *)da->array)[k].rank;
    }
    if (results) PMIX_INFO_FREE(results, nresults);
    PMIX_QUERY_DESTRUCT(&q);
    return n;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: native_group_honest DIR\n");
        return 2;
    }
    const char *dir = argv[1];
    setvbuf(stdout, NULL, _IOLBF, 0);  // each line out at once: a rank that hangs has said how far it got
    signal(SIGALRM, watchdog);
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        printf("HONEST-FAIL ? PMIx_Init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    pmix_proc_t both[2];
    PMIX_PROC_LOAD(&both[0], me.nspace, 0);
    PMIX_PROC_LOAD(&both[1], me.nspace, 1);
    pmix_value_t v;
    uint32_t mine = 1000 + me.rank;
    PMIX_VALUE_LOAD(&v, &mine, PMIX_UINT32);
    rc = PMIx_Put(PMIX_GLOBAL, "honest.value", &v);
    CHECK(rc == PMIX_SUCCESS, "put: %s", PMIx_Error_string(rc));
    rc = PMIx_Commit();
    CHECK(rc == PMIX_SUCCESS, "commit: %s", PMIx_Error_string(rc));

    pmix_info_t cid;
    bool yes = true;
    PMIX_INFO_LOAD(&cid, PMIX_GROUP_ASSIGN_CONTEXT_ID, &yes, PMIX_BOOL);
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    rc = PMIx_Group_construct("honest", both, 2, &cid, 1, &results, &nresults);
    CHECK(rc == PMIX_SUCCESS, "construct: %s", PMIx_Error_string(rc));
    say("construct of %s: %ld", "honest", (long)rc);
    if (results) PMIX_INFO_FREE(results, nresults);

    char path[4096];
    snprintf(path, sizeof path, "%s/honest.%u", dir, me.rank);
    FILE *f = fopen(path, "w");
    if (f) fclose(f);
    snprintf(path, sizeof path, "%s/attacked", dir);
    for (int i = 0; i < 1200 && access(path, F_OK) != 0; i++) usleep(100000);
    CHECK(access(path, F_OK) == 0, "the attack did not end within 120 s");

    pmix_rank_t ranks[2] = {PMIX_RANK_UNDEF, PMIX_RANK_UNDEF};
    alarm(90);
    stage = "the membership query after the attack";
    long n = pset_members("honest", ranks, &rc);
    printf("HONEST %u membership of honest after the attack: status %d, %ld members (%u %u)\n", me.rank, rc, n,
           ranks[0], ranks[1]);
    CHECK(rc == PMIX_SUCCESS && n == 2 && ranks[0] == 0 && ranks[1] == 1, "the group's membership changed");
    stage = "the destruct after the attack";
    rc = PMIx_Group_destruct("honest", NULL, 0);
    say("destruct of %s: %ld", "honest", (long)rc);
    CHECK(rc == PMIX_SUCCESS, "destruct: %s", PMIx_Error_string(rc));
    n = pset_members("honest", ranks, &rc);
    CHECK(n == -1, "the destructed group is still a process set (%ld members)", n);

    results = NULL;
    stage = "the construct again";
    rc = PMIx_Group_construct("honest", both, 2, &cid, 1, &results, &nresults);
    say("construct of %s again: %ld", "honest", (long)rc);
    CHECK(rc == PMIX_SUCCESS, "construct again: %s", PMIx_Error_string(rc));
    if (results) PMIX_INFO_FREE(results, nresults);
    rc = PMIx_Group_destruct("honest", NULL, 0);
    CHECK(rc == PMIX_SUCCESS, "destruct again: %s", PMIx_Error_string(rc));

    pmix_info_t collect;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    stage = "the fence";
    rc = PMIx_Fence(both, 2, &collect, 1);
    CHECK(rc == PMIX_SUCCESS, "fence: %s", PMIx_Error_string(rc));
    pmix_proc_t other;
    PMIX_PROC_LOAD(&other, me.nspace, 1 - me.rank);
    pmix_value_t *got = NULL;
    rc = PMIx_Get(&other, "honest.value", NULL, 0, &got);
    CHECK(rc == PMIX_SUCCESS && got && got->type == PMIX_UINT32 && got->data.uint32 == 1000 + other.rank,
          "get of the other's value: %s", PMIx_Error_string(rc));
    if (got) PMIX_VALUE_RELEASE(got);

    stage = "finalize";
    rc = PMIx_Finalize(NULL, 0);
    alarm(0);
    CHECK(rc == PMIX_SUCCESS, "finalize: %s", PMIx_Error_string(rc));
    printf(failures ? "HONEST-FAIL %u\n" : "HONEST-OK %u\n", me.rank);
    return failures ? 1 : 0;
}
