/* MPI-4 sessions as applications use them (OpenMPI 5), one case per run: mpi_sessions CASE
 *   twice-12   two sessions at once, a communicator of mpi://WORLD in each; finalize the first,
 *              then use and finalize the second
 *   twice-21   the same, the second session finalized first
 *   twice-mix  both communicators freed, the sessions finalized in an order by rank (even ranks
 *              the first first), then a communicator in the session left
 *   again      session init, communicator, finalize, three times over (the process finalizes its
 *              only session and starts a new one)
 *   loop       one session; MPI_Group_from_session_pset + MPI_Comm_create_from_group and their
 *              frees, 10 times, alternating mpi://WORLD, mpi://SELF and mpix://SHARED
 *   psetinfo   MPI_Session_get_pset_info of mpi://world, mpi://WORLD and mpi://self: "mpi_size"
 *              (MPI_Info_get_valuelen and MPI_Info_get_string) against the group sizes
 * Every communicator is checked with an allreduce of ones (its size). Prints one
 * "MPI-SESSIONS-OK <case>" line per rank when every check held, "MPI-SESSIONS-FAIL <case>: why"
 * otherwise. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;
static const char *the_case = "";

static void fail(const char *what, int rc) {
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    if (rc != MPI_SUCCESS) MPI_Error_string(rc, msg, &len);
    printf("MPI-SESSIONS-FAIL %s: %s (%d %s)\n", the_case, what, rc, msg);
    fflush(stdout);
    failures++;
}

/* A communicator of PSET in session S (tag TAG), checked with an allreduce; freed. */
static void comm_of(MPI_Session s, const char *pset, const char *tag, MPI_Comm *keep) {
    MPI_Group g;
    MPI_Comm c;
    int rc, gsize = 0, size = 0, sum = 0, one = 1;
    if ((rc = MPI_Group_from_session_pset(s, pset, &g)) != MPI_SUCCESS) return fail("MPI_Group_from_session_pset", rc);
    MPI_Group_size(g, &gsize);
    if ((rc = MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c)) != MPI_SUCCESS) {
        MPI_Group_free(&g);
        return fail("MPI_Comm_create_from_group", rc);
    }
    MPI_Group_free(&g);
    MPI_Comm_size(c, &size);
    if ((rc = MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c)) != MPI_SUCCESS) fail("MPI_Allreduce", rc);
    else if (sum != size || size != gsize) {
        char why[128];
        snprintf(why, sizeof(why), "%s: group size %d, communicator size %d, sum %d", pset, gsize, size, sum);
        fail(why, MPI_SUCCESS);
    }
    if (keep) *keep = c;
    else MPI_Comm_free(&c);
}

static int session(MPI_Session *s) {
    int rc = MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, s);
    if (rc != MPI_SUCCESS) fail("MPI_Session_init", rc);
    return rc == MPI_SUCCESS;
}

static void finish(MPI_Session *s) {
    int rc = MPI_Session_finalize(s);
    if (rc != MPI_SUCCESS) fail("MPI_Session_finalize", rc);
}

static void twice(int order, int world_rank_hint) {
    MPI_Session s[2];
    MPI_Comm c[2];
    if (!session(&s[0]) || !session(&s[1])) return;
    comm_of(s[0], "mpi://WORLD", "org.pmixcpp.twice.0", &c[0]);
    comm_of(s[1], "mpi://WORLD", "org.pmixcpp.twice.1", &c[1]);
    if (failures) return;
    int rank = 0;
    MPI_Comm_rank(c[0], &rank);
    int first = order == 2 ? (rank % 2) : order;
    (void)world_rank_hint;
    if (order == 2) {
        /* by rank: the communicators freed alike (collectives match), the sessions finalized in
         * either order, then a new communicator in the session each rank has left */
        MPI_Comm_free(&c[0]);
        MPI_Comm_free(&c[1]);
        finish(&s[first]);
        comm_of(s[1 - first], "mpi://WORLD", "org.pmixcpp.twice.after", NULL);
        finish(&s[1 - first]);
        return;
    }
    MPI_Comm_free(&c[first]);
    finish(&s[first]);
    /* the other session still works: a new communicator and a collective over the old one */
    int one = 1, sum = 0, size = 0, rc;
    MPI_Comm_size(c[1 - first], &size);
    if ((rc = MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c[1 - first])) != MPI_SUCCESS || sum != size)
        fail("an allreduce in the session left", rc);
    comm_of(s[1 - first], "mpi://WORLD", "org.pmixcpp.twice.after", NULL);
    MPI_Comm_free(&c[1 - first]);
    finish(&s[1 - first]);
}

static void again(void) {
    for (int i = 0; i < 3 && !failures; i++) {
        MPI_Session s;
        char tag[64];
        if (!session(&s)) return;
        snprintf(tag, sizeof(tag), "org.pmixcpp.again.%d", i);
        comm_of(s, "mpi://WORLD", tag, NULL);
        finish(&s);
    }
}

static void loop(void) {
    const char *psets[] = {"mpi://WORLD", "mpi://SELF", "mpix://SHARED"};
    MPI_Session s;
    if (!session(&s)) return;
    for (int i = 0; i < 10 && !failures; i++) {
        char tag[64];
        snprintf(tag, sizeof(tag), "org.pmixcpp.loop.%d", i);
        comm_of(s, psets[i % 3], tag, NULL);
    }
    finish(&s);
}

static void psetinfo(void) {
    MPI_Session s;
    MPI_Group g;
    int world = 0, rc;
    if (!session(&s)) return;
    /* the size of the world from its group (no communicator: nothing asked of PMIx groups) */
    if ((rc = MPI_Group_from_session_pset(s, "mpi://WORLD", &g)) != MPI_SUCCESS) return fail("MPI_Group_from_session_pset", rc);
    MPI_Group_size(g, &world);
    MPI_Group_free(&g);
    const char *names[] = {"mpi://world", "mpi://WORLD", "mpi://self"};
    const int want[] = {world, world, 1};
    for (int i = 0; i < 3; i++) {
        MPI_Info info = MPI_INFO_NULL;
        char value[64] = "", why[160];
        int rc, flag = 0, buflen = sizeof(value);
        if ((rc = MPI_Session_get_pset_info(s, names[i], &info)) != MPI_SUCCESS) {
            fail("MPI_Session_get_pset_info", rc);
            continue;
        }
        /* MPI_Info_get_valuelen is deprecated by MPI-4.0 but still what many programs call */
        int vlen = -1, vflag = 0, vrc = MPI_Info_get_valuelen(info, "mpi_size", &vlen, &vflag);
        rc = MPI_Info_get_string(info, "mpi_size", &buflen, value, &flag);
        printf("PSET-INFO %s mpi_size %s (flag %d, rc %d; valuelen rc %d flag %d len %d)\n", names[i],
               flag ? value : "(none)", flag, rc, vrc, vflag, vlen);
        if (vrc != MPI_SUCCESS || !vflag || vlen != (int)strlen(value)) fail("MPI_Info_get_valuelen of mpi_size", vrc);
        if (rc != MPI_SUCCESS || !flag || atoi(value) != want[i]) {
            snprintf(why, sizeof(why), "%s: mpi_size '%s', want %d", names[i], flag ? value : "", want[i]);
            fail(why, rc);
        }
        MPI_Info_free(&info);
    }
    finish(&s);
}

int main(int argc, char **argv) {
    the_case = argc > 1 ? argv[1] : "";
    if (!strcmp(the_case, "twice-12")) twice(0, 0);
    else if (!strcmp(the_case, "twice-21")) twice(1, 0);
    else if (!strcmp(the_case, "twice-mix")) twice(2, 0);
    else if (!strcmp(the_case, "again")) again();
    else if (!strcmp(the_case, "loop")) loop();
    else if (!strcmp(the_case, "psetinfo")) psetinfo();
    else {
        fprintf(stderr, "usage: mpi_sessions twice-12|twice-21|twice-mix|again|loop|psetinfo\n");
        return 2;
    }
    if (!failures) printf("MPI-SESSIONS-OK %s\n", the_case);
    fflush(stdout);
    return failures ? 1 : 0;
}
