/* A malleable MPI-4 sessions program (docs/malleability.md), for an unmodified OpenMPI 5 under
 * Slurm with --mpi=pmixcpp:
 *
 *   srun --mpi=pmixcpp -N2 -n2 ./malleable 2 [S]    (inside an sbatch job of 2 nodes)
 *
 * The processes started by srun make a communicator of mpi://WORLD in a session. Rank 0 grows
 * the Slurm job by K nodes (argv[1], default 2) with PMIx_Allocation_request(PMIX_ALLOC_EXTEND);
 * all of them then MPI_Comm_spawn K processes onto exactly those nodes (MPI_Info "host"). The
 * server defines two process sets for the spawn, "pmixcpp://spawned/<ns>" (the new processes)
 * and "pmixcpp://union/<ns>" (the old ones, then the new), and tells the old processes with
 * PMIX_PROCESS_SET_DEFINE. Old and new processes find both sets with MPI_Session_get_num_psets /
 * MPI_Session_get_nth_pset and read their members (PMIX_QUERY_PSET_MEMBERSHIP); both build the
 * union's group, old processes first, and make ONE communicator of it with
 * MPI_Comm_create_from_group; an allreduce over it checks it. (OpenMPI 5.0.7's
 * MPI_Group_from_session_pset builds groups of the caller's own job only, so the group is made
 * from the spawn's intercommunicator, in the set's order: see docs/malleability.md.)
 *
 * The processes then work at the grown size for S seconds (argv[2], default 0; a stand-in for
 * the application's work, and what lets slurmdbd keep the grown size's record: it keys a resized
 * job's records by the second of the resize, so a shrink in the grow's second replaces it).
 *
 * Then the shrink: the new processes leave (disconnect, finalize); when their step has ended the
 * server deletes both sets (PMIX_PROCESS_SET_DELETE to the old processes); rank 0 gives exactly
 * the grown nodes back (PMIx_Allocation_request(PMIX_ALLOC_RELEASE, PMIX_ALLOC_NODE_LIST)); the
 * old processes go on with a new communicator of mpi://WORLD.
 *
 * Prints (rank 0 of the old processes unless said):
 *   GROWN <k> node(s): <added nodes>; job on <all nodes>
 *   PSET-EVENT old|new <r>: <name> <n> members            (every process, per event)
 *   PSETS old|new <r>: <count> sets, union <name> <n> members, spawned <name> <n> members
 *   UNION old|new <r> on <node>: rank <u> of <n>, allreduce <sum>   (every process)
 *   MALLEABLE-MS extend <ms> spawn <ms> comm <ms> total <ms>
 *   MALLEABLE-OK <n>
 *   PSET-DELETED old <r>: <union name> yes|NO                (every old process)
 *   SHRUNK released <nodes>; job on <nodes>
 *   UNION after <r> on <node>: rank <u> of <n>, allreduce <sum>     (every old process)
 *   MALLEABLE-SHRINK-MS delete-event <ms> release <ms> comm <ms> total <ms>
 *   MALLEABLE-SHRINK-OK <n>
 * and "MALLEABLE-FAIL <why>" when a step fails. Build: mpicc malleable.c $(pkg-config --cflags
 * --libs pmix). */
#include <mpi.h>
#include <pmix.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_EVENTS 16
static pthread_mutex_t ev_lock = PTHREAD_MUTEX_INITIALIZER;
static char ev_name[MAX_EVENTS][256];
static size_t ev_members[MAX_EVENTS];
static int ev_deleted[MAX_EVENTS];
static int ev_count = 0;

static void fail(const char *who, int r, const char *what) {
    printf("MALLEABLE-FAIL %s %d: %s\n", who, r, what);
    fflush(stdout);
}

/* PMIX_PROCESS_SET_DEFINE / _DELETE: remember the set's name and size */
static void on_pset(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[], size_t ninfo,
                    pmix_info_t *results, size_t nresults, pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)source, (void)results, (void)nresults;
    const char *name = "";
    size_t members = 0;
    for (size_t i = 0; i < ninfo; ++i) {
        if (strcmp(info[i].key, PMIX_PSET_NAME) == 0 && info[i].value.type == PMIX_STRING)
            name = info[i].value.data.string;
        if (strcmp(info[i].key, PMIX_PSET_MEMBERS) == 0 && info[i].value.type == PMIX_DATA_ARRAY &&
            info[i].value.data.darray != NULL)
            members = info[i].value.data.darray->size;
    }
    pthread_mutex_lock(&ev_lock);
    if (ev_count < MAX_EVENTS) {
        snprintf(ev_name[ev_count], sizeof(ev_name[0]), "%s", name);
        ev_deleted[ev_count] = status == PMIX_PROCESS_SET_DELETE;
        ev_members[ev_count++] = members;
    }
    pthread_mutex_unlock(&ev_lock);
    if (cbfunc) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

/* The members of a process set, as the PMIx server has them; -1 if it does not know the set. */
static long pset_size(const char *name) {
    pmix_query_t q;
    pmix_info_t *res = NULL;
    size_t nres = 0;
    long n = -1;
    PMIX_QUERY_CONSTRUCT(&q);
    pmix_status_t rc;
    PMIX_ARGV_APPEND(rc, q.keys, PMIX_QUERY_PSET_MEMBERSHIP);
    (void)rc;
    PMIX_INFO_CREATE(q.qualifiers, 1);
    q.nqual = 1;
    PMIX_INFO_LOAD(&q.qualifiers[0], PMIX_PSET_NAME, name, PMIX_STRING);
    if (PMIx_Query_info(&q, 1, &res, &nres) == PMIX_SUCCESS)
        for (size_t i = 0; i < nres; ++i)
            if (strcmp(res[i].key, PMIX_QUERY_PSET_MEMBERSHIP) == 0 && res[i].value.type == PMIX_DATA_ARRAY)
                n = (long)res[i].value.data.darray->size;
    if (res) PMIX_INFO_FREE(res, nres);
    PMIX_QUERY_DESTRUCT(&q);
    return n;
}

/* Find the spawn's two sets among the session's; prints the PSETS line. 1 when both are there
 * with the expected sizes. */
static int find_psets(MPI_Session s, const char *who, int r, int want_union, int want_new) {
    int n = 0, ok = 0;
    char uname[256] = "", sname[256] = "";
    MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n);
    for (int i = 0; i < n; ++i) {
        char name[256] = "";
        int len = sizeof(name);
        if (MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, name) != MPI_SUCCESS) continue;
        /* one grow here: one set of each kind */
        if (strncmp(name, "pmixcpp://union/", 16) == 0) snprintf(uname, sizeof(uname), "%s", name);
        if (strncmp(name, "pmixcpp://spawned/", 18) == 0) snprintf(sname, sizeof(sname), "%s", name);
    }
    long un = uname[0] ? pset_size(uname) : -1, sn = sname[0] ? pset_size(sname) : -1;
    printf("PSETS %s %d: %d sets, union %s %ld members, spawned %s %ld members\n", who, r, n, uname[0] ? uname : "-",
           un, sname[0] ? sname : "-", sn);
    ok = un == want_union && sn == want_new;
    return ok;
}

static int grow(int k, char *added, size_t len, char *job_nodes, size_t jlen) {
    pmix_info_t in, *res = NULL;
    size_t nres = 0;
    uint64_t nodes = (uint64_t)k;
    PMIX_INFO_CONSTRUCT(&in);
    PMIx_Info_load(&in, PMIX_ALLOC_NUM_NODES, &nodes, PMIX_UINT64);
    PMIX_INFO_REQUIRED(&in);
    pmix_status_t rc = PMIx_Allocation_request(PMIX_ALLOC_EXTEND, &in, 1, &res, &nres);
    for (size_t i = 0; i < nres; ++i) {
        if (res[i].value.type != PMIX_STRING) continue;
        if (strcmp(res[i].key, PMIX_ALLOC_NODE_LIST) == 0) snprintf(added, len, "%s", res[i].value.data.string);
        if (strcmp(res[i].key, PMIX_ALLOCATED_NODELIST) == 0) snprintf(job_nodes, jlen, "%s", res[i].value.data.string);
    }
    if (res) PMIX_INFO_FREE(res, nres);
    if (rc != PMIX_SUCCESS || !added[0]) {
        fail("old", 0, PMIx_Error_string(rc));
        return 0;
    }
    return 1;
}

/* The union's communicator: the group of old processes then new ones, from the intercommunicator. */
static int union_comm(MPI_Comm inter, int old, MPI_Comm *out) {
    MPI_Group mine, theirs, all;
    MPI_Comm_group(inter, &mine);
    MPI_Comm_remote_group(inter, &theirs);
    MPI_Group_union(old ? mine : theirs, old ? theirs : mine, &all);
    int rc = MPI_Comm_create_from_group(all, "pmixcpp.malleable.union", MPI_INFO_NULL, MPI_ERRORS_RETURN, out);
    MPI_Group_free(&mine);
    MPI_Group_free(&theirs);
    MPI_Group_free(&all);
    return rc;
}

static int check_union(MPI_Comm all, const char *who, int r, const char *node) {
    int urank, usize, sum = 0;
    MPI_Comm_rank(all, &urank);
    MPI_Comm_size(all, &usize);
    MPI_Allreduce(&urank, &sum, 1, MPI_INT, MPI_SUM, all);
    printf("UNION %s %d on %s: rank %d of %d, allreduce %d\n", who, r, node, urank, usize, sum);
    return sum == usize * (usize - 1) / 2 ? usize : -1;
}

/* the union set this process was told of (the grow's) */
static const char *uname_of_events(void) {
    static char name[256] = "";
    pthread_mutex_lock(&ev_lock);
    for (int i = 0; i < ev_count; ++i)
        if (!ev_deleted[i] && strncmp(ev_name[i], "pmixcpp://union/", 16) == 0) snprintf(name, sizeof(name), "%s", ev_name[i]);
    pthread_mutex_unlock(&ev_lock);
    return name;
}

static int deleted(const char *name) {
    int yes = 0;
    pthread_mutex_lock(&ev_lock);
    for (int i = 0; i < ev_count; ++i) yes |= ev_deleted[i] && strcmp(ev_name[i], name) == 0;
    pthread_mutex_unlock(&ev_lock);
    return yes;
}

/* The shrink: the new processes have left; wait until the server deletes the union set
 * (PMIX_PROCESS_SET_DELETE: the new processes' step has ended), give their nodes back to Slurm
 * (PMIX_ALLOC_RELEASE of exactly those nodes), and go on with a communicator of mpi://WORLD. */
static int shrink(MPI_Session s, MPI_Comm world, int r, int size, const char *added, const char *uname) {
    double t0 = MPI_Wtime(), t1, t2, t3;
    int ok = uname[0] != 0;
    while (ok && !deleted(uname) && MPI_Wtime() - t0 < 60) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    ok = ok && deleted(uname);
    printf("PSET-DELETED old %d: %s %s\n", r, uname[0] ? uname : "-", ok ? "yes" : "NO");
    fflush(stdout);
    t1 = MPI_Wtime();
    if (r == 0 && ok) {
        pmix_info_t in, *res = NULL;
        size_t nres = 0;
        char released[1024] = "", job_nodes[1024] = "";
        PMIX_INFO_CONSTRUCT(&in);
        PMIx_Info_load(&in, PMIX_ALLOC_NODE_LIST, added, PMIX_STRING);
        pmix_status_t rc = PMIx_Allocation_request(PMIX_ALLOC_RELEASE, &in, 1, &res, &nres);
        for (size_t i = 0; i < nres; ++i) {
            if (res[i].value.type != PMIX_STRING) continue;
            if (strcmp(res[i].key, PMIX_ALLOC_NODE_LIST) == 0) snprintf(released, sizeof(released), "%s", res[i].value.data.string);
            if (strcmp(res[i].key, PMIX_ALLOCATED_NODELIST) == 0) snprintf(job_nodes, sizeof(job_nodes), "%s", res[i].value.data.string);
        }
        if (res) PMIX_INFO_FREE(res, nres);
        PMIX_INFO_DESTRUCT(&in);
        if (rc == PMIX_SUCCESS) printf("SHRUNK released %s; job on %s\n", released, job_nodes);
        else fail("old", r, PMIx_Error_string(rc));
        ok = rc == PMIX_SUCCESS;
    }
    t2 = MPI_Wtime();
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, world);
    if (!ok) return 0;
    /* the sets now: the grow's are gone */
    find_psets(s, "old", r, -1, -1);
    MPI_Group g;
    MPI_Comm after;
    MPI_Group_from_session_pset(s, "mpi://WORLD", &g);
    int rc = MPI_Comm_create_from_group(g, "pmixcpp.malleable.after", MPI_INFO_NULL, MPI_ERRORS_RETURN, &after);
    MPI_Group_free(&g);
    if (rc != MPI_SUCCESS) {
        fail("old", r, "MPI_Comm_create_from_group after the shrink");
        return 0;
    }
    int n = check_union(after, "after", r, getenv("SLURMD_NODENAME") ? getenv("SLURMD_NODENAME") : "?");
    t3 = MPI_Wtime();
    MPI_Comm_free(&after);
    if (r == 0) {
        printf("MALLEABLE-SHRINK-MS delete-event %.1f release %.1f comm %.1f total %.1f\n", (t1 - t0) * 1e3,
               (t2 - t1) * 1e3, (t3 - t2) * 1e3, (t3 - t0) * 1e3);
        if (n == size) printf("MALLEABLE-SHRINK-OK %d\n", n);
        else fail("old", r, "the communicator after the shrink");
    }
    fflush(stdout);
    return n == size;
}

int main(int argc, char **argv) {
    const char *node = getenv("SLURMD_NODENAME") ? getenv("SLURMD_NODENAME") : "?";
    int new_proc = argc > 1 && strcmp(argv[1], "--new") == 0;
    int k = !new_proc && argc > 1 ? atoi(argv[1]) : 2;
    double hold = !new_proc && argc > 2 ? atof(argv[2]) : 0;
    MPI_Session s;
    pmix_proc_t me;

    if (new_proc) {
        /* a new process: its parents' intercommunicator (world model), the sets in a session */
        MPI_Comm parent, all;
        int r, size, psize;
        MPI_Init(&argc, &argv);
        MPI_Comm_rank(MPI_COMM_WORLD, &r);
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        MPI_Comm_get_parent(&parent);
        if (parent == MPI_COMM_NULL) {
            fail("new", r, "no parent");
            MPI_Finalize();
            return 1;
        }
        MPI_Comm_remote_size(parent, &psize);
        MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s);
        PMIx_Init(&me, NULL, 0);
        /* the server told this process of its spawn's two sets at its start; the events wait in
         * its cache for a handler */
        pmix_status_t codes[1] = {PMIX_PROCESS_SET_DEFINE};
        if (PMIx_Register_event_handler(codes, 1, NULL, 0, on_pset, NULL, NULL) < 0) fail("new", r, "event handler");
        int rc = union_comm(parent, 0, &all);
        if (rc != MPI_SUCCESS) {
            fail("new", r, "MPI_Comm_create_from_group");
        } else {
            check_union(all, "new", r, node);
            MPI_Barrier(all);
            for (int i = 0; i < 500; ++i) {  /* both events, 5 s at most */
                pthread_mutex_lock(&ev_lock);
                int n = ev_count;
                pthread_mutex_unlock(&ev_lock);
                if (n >= 2) break;
                struct timespec ts = {0, 10 * 1000 * 1000};
                nanosleep(&ts, NULL);
            }
            pthread_mutex_lock(&ev_lock);
            for (int i = 0; i < ev_count; ++i)
                printf("PSET-EVENT new %d: %s %zu members\n", r, ev_name[i], ev_members[i]);
            pthread_mutex_unlock(&ev_lock);
            find_psets(s, "new", r, psize + size, size);
            MPI_Comm_free(&all);
        }
        fflush(stdout);
        MPI_Comm_disconnect(&parent);
        PMIx_Finalize(NULL, 0);
        MPI_Session_finalize(&s);
        MPI_Finalize();
        return rc == MPI_SUCCESS ? 0 : 1;
    }

    /* the old processes: sessions only */
    MPI_Group wg;
    MPI_Comm world, inter, all;
    int r, size;
    MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s);
    MPI_Group_from_session_pset(s, "mpi://WORLD", &wg);
    MPI_Comm_create_from_group(wg, "pmixcpp.malleable.world", MPI_INFO_NULL, MPI_ERRORS_RETURN, &world);
    MPI_Group_free(&wg);
    MPI_Comm_rank(world, &r);
    MPI_Comm_size(world, &size);
    /* OpenMPI already initialized PMIx: this only takes a reference */
    PMIx_Init(&me, NULL, 0);
    pmix_status_t codes[2] = {PMIX_PROCESS_SET_DEFINE, PMIX_PROCESS_SET_DELETE};
    if (PMIx_Register_event_handler(codes, 2, NULL, 0, on_pset, NULL, NULL) < 0) fail("old", r, "event handler");

    char added[1024] = "", job_nodes[1024] = "";
    MPI_Barrier(world);
    double t0 = MPI_Wtime(), t1, t2, t3, t4;
    int ok = r == 0 ? grow(k, added, sizeof(added), job_nodes, sizeof(job_nodes)) : 0;
    MPI_Bcast(&ok, 1, MPI_INT, 0, world);
    MPI_Bcast(added, sizeof(added), MPI_CHAR, 0, world);
    t1 = MPI_Wtime();
    if (!ok) goto out;
    if (r == 0) printf("GROWN %d node(s): %s; job on %s\n", k, added, job_nodes);
    fflush(stdout);

    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "host", added);
    char *new_argv[] = {"--new", NULL};
    int *errs = calloc((size_t)k, sizeof(int));
    int rc = MPI_Comm_spawn(argv[0], new_argv, k, info, 0, world, &inter, errs);
    MPI_Info_free(&info);
    free(errs);
    t2 = MPI_Wtime();
    if (rc != MPI_SUCCESS) {
        fail("old", r, "MPI_Comm_spawn");
        ok = 0;
        goto out;
    }
    rc = union_comm(inter, 1, &all);
    t3 = MPI_Wtime();
    if (rc != MPI_SUCCESS) {
        fail("old", r, "MPI_Comm_create_from_group");
        ok = 0;
    } else {
        int n = check_union(all, "old", r, node);
        t4 = MPI_Wtime();
        MPI_Barrier(all);
        pthread_mutex_lock(&ev_lock);
        for (int i = 0; i < ev_count; ++i)
            if (!ev_deleted[i]) printf("PSET-EVENT old %d: %s %zu members\n", r, ev_name[i], ev_members[i]);
        pthread_mutex_unlock(&ev_lock);
        int seen = find_psets(s, "old", r, n, k);
        int all_seen = 0;
        MPI_Allreduce(&seen, &all_seen, 1, MPI_INT, MPI_MIN, world);
        if (r == 0) {
            printf("MALLEABLE-MS extend %.1f spawn %.1f comm %.1f total %.1f\n", (t1 - t0) * 1e3, (t2 - t1) * 1e3,
                   (t3 - t2) * 1e3, (t4 - t0) * 1e3);
            if (n == size + k && all_seen) printf("MALLEABLE-OK %d\n", n);
            else fail("old", r, "the union's communicator or the sets are not what the grow made");
        }
        MPI_Comm_free(&all);
    }
    fflush(stdout);
    if (ok && hold > 0) {  /* the work at the grown size; the new processes wait in the disconnect */
        struct timespec ts = {(time_t)hold, (long)((hold - (double)(time_t)hold) * 1e9)};
        nanosleep(&ts, NULL);
    }
    MPI_Comm_disconnect(&inter);
    if (ok && !shrink(s, world, r, size, added, uname_of_events())) ok = 0;
out:
    fflush(stdout);
    MPI_Comm_free(&world);
    PMIx_Finalize(NULL, 0);
    MPI_Session_finalize(&s);
    return ok ? 0 : 1;
}
