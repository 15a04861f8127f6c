/* MPI-4 communicators from groups, without MPI_COMM_WORLD (OpenMPI 5), in a step of two apps
 * (srun --multi-prog with the first half of the ranks in app 0 and the rest in app 1, both this
 * program):
 *  - MPI_Session_init; the session lists the step's per-app process sets "<nspace>.app0" and
 *    "<nspace>.app1" (defined by the PMIx server), and PMIx_Query_info's
 *    PMIX_QUERY_PSET_MEMBERSHIP of each holds exactly the ranks of that app;
 *  - MPI_Comm_create_from_group over this rank's half of mpi://WORLD (PMIx_Group_construct),
 *    checked with an allreduce of the world ranks;
 *  - MPI_Intercomm_create_from_groups between the two halves, checked with an allreduce over the
 *    inter-communicator (each side receives the sum of the other side's world ranks).
 * The halves come from mpi://WORLD with MPI_Group_range_incl, not from
 * MPI_Group_from_session_pset of the app sets: OpenMPI 5.0.7's group of a PMIx pset comes back
 * with the world's size and without the caller (seen here: every member's PMIX_PSET_NAME is
 * right, see PMIx_Get; its loop in ompi/instance/instance.c uses one variable both as the member
 * count and as PMIx_Value_unload's string length), whatever the PMIx server.
 * Prints "APP a local L sum S remote R rsum T psets P" per rank and "MPI-GROUPS-OK" when all sums
 * and memberships are right. */
#include <mpi.h>
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int suffix(const char *s, const char *suf) {
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && strcmp(s + n - m, suf) == 0;
}

/* Do the members of PMIx process set `pset` run from rank `first` to `last` (inclusive)? */
static int pset_is(const char *pset, int first, int last) {
    pmix_query_t q;
    PMIX_QUERY_CONSTRUCT(&q);
    q.keys = calloc(2, sizeof(char *));
    q.keys[0] = strdup(PMIX_QUERY_PSET_MEMBERSHIP);
    PMIX_INFO_CREATE(q.qualifiers, 1);
    q.nqual = 1;
    PMIX_INFO_LOAD(&q.qualifiers[0], PMIX_PSET_NAME, pset, PMIX_STRING);
    pmix_info_t *res = NULL;
    size_t nres = 0;
    /* the flat (key, value) answer, as OpenMPI 5 reads it (a PMIX_QUERY_RESULTS comes first) */
    int ok = PMIx_Query_info(&q, 1, &res, &nres) == PMIX_SUCCESS;
    const pmix_info_t *m = NULL;
    for (size_t i = 0; ok && i < nres; ++i)
        if (PMIX_CHECK_KEY(&res[i], PMIX_QUERY_PSET_MEMBERSHIP)) m = &res[i];
    ok = ok && m != NULL && m->value.type == PMIX_DATA_ARRAY && m->value.data.darray != NULL &&
         m->value.data.darray->type == PMIX_PROC && m->value.data.darray->size == (size_t)(last - first + 1);
    for (size_t i = 0; ok && i < m->value.data.darray->size; ++i)
        ok = ((pmix_proc_t *)m->value.data.darray->array)[i].rank == (pmix_rank_t)(first + (int)i);
    if (res) PMIX_INFO_FREE(res, nres);
    PMIX_QUERY_DESTRUCT(&q);
    return ok;
}

int main(void) {
    MPI_Session s;
    MPI_Group world, half[2];
    MPI_Comm local, inter;
    char names[2][512] = {"", ""};
    int rc, npsets = 0;
    if ((rc = MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s)) != MPI_SUCCESS) {
        printf("SESSION-INIT-FAIL %d\n", rc);
        return 1;
    }
    MPI_Session_get_num_psets(s, MPI_INFO_NULL, &npsets);
    /* OpenMPI 5.0.7 counts only its built-in psets here (it unloads PMIX_QUERY_NUM_PSETS into
     * storage it does not provide, which PMIx refuses); asking for the pset after them makes it
     * query PMIX_QUERY_PSET_NAMES, and then the PMIx psets are listed. So walk until the first
     * index OpenMPI refuses. */
    for (int i = 0; i < 64; ++i) {
        char name[512];
        int len = sizeof(name);
        if (MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, name) != MPI_SUCCESS) break;
        if (i >= npsets) npsets = i + 1;
        if (suffix(name, ".app0")) strcpy(names[0], name);
        if (suffix(name, ".app1")) strcpy(names[1], name);
    }
    if (names[0][0] == '\0' || names[1][0] == '\0') {
        printf("PSETS-MISSING npsets %d app0 '%s' app1 '%s'\n", npsets, names[0], names[1]);
        return 1;
    }
    if ((rc = MPI_Group_from_session_pset(s, "mpi://WORLD", &world)) != MPI_SUCCESS) {
        printf("GROUP-FAIL mpi://WORLD %d\n", rc);
        return 1;
    }
    int wrank = -1, wsize = 0;
    MPI_Group_rank(world, &wrank);
    MPI_Group_size(world, &wsize);
    const int h = wsize / 2;
    const int psets_ok = pset_is(names[0], 0, h - 1) && pset_is(names[1], h, wsize - 1);
    int ranges[2][1][3] = {{{0, h - 1, 1}}, {{h, wsize - 1, 1}}};
    MPI_Group_range_incl(world, 1, ranges[0], &half[0]);
    MPI_Group_range_incl(world, 1, ranges[1], &half[1]);
    const int mine = wrank < h ? 0 : 1;

    if ((rc = MPI_Comm_create_from_group(half[mine], "org.pmixcpp.app", MPI_INFO_NULL, MPI_ERRORS_RETURN, &local)) !=
        MPI_SUCCESS) {
        printf("COMM-FAIL %d\n", rc);
        return 1;
    }
    int lsize = 0, lsum = 0;
    MPI_Comm_size(local, &lsize);
    MPI_Allreduce(&wrank, &lsum, 1, MPI_INT, MPI_SUM, local);

    if ((rc = MPI_Intercomm_create_from_groups(half[mine], 0, half[1 - mine], 0, "org.pmixcpp.inter", MPI_INFO_NULL,
                                               MPI_ERRORS_RETURN, &inter)) != MPI_SUCCESS) {
        printf("INTERCOMM-FAIL %d\n", rc);
        return 1;
    }
    int rsize = 0, rsum = 0;
    MPI_Comm_remote_size(inter, &rsize);
    MPI_Allreduce(&wrank, &rsum, 1, MPI_INT, MPI_SUM, inter);

    /* sums of world ranks: 0 + ... + h-1 and h + ... + wsize-1 */
    const int sum_lo = h * (h - 1) / 2, sum_hi = wsize * (wsize - 1) / 2 - sum_lo;
    const int want_local = mine ? sum_hi : sum_lo, want_remote = mine ? sum_lo : sum_hi;
    printf("APP %d local %d sum %d remote %d rsum %d psets %s\n", mine, lsize, lsum, rsize, rsum,
           psets_ok ? "ok" : "WRONG");
    const int ok = psets_ok && lsum == want_local && rsum == want_remote && rsize == (mine ? h : wsize - h) &&
                   lsize == (mine ? wsize - h : h);
    /* disconnect (not free): waits until the communicators' traffic is complete, so no process
     * tears its connections down while a peer still sends */
    MPI_Comm_disconnect(&inter);
    MPI_Comm_disconnect(&local);
    MPI_Group_free(&half[0]);
    MPI_Group_free(&half[1]);
    MPI_Group_free(&world);
    MPI_Session_finalize(&s);
    if (ok) printf("MPI-GROUPS-OK\n");
    return ok ? 0 : 1;
}
