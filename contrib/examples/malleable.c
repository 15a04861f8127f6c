/* A malleable MPI-4 sessions program (docs/malleability.md), for an unmodified OpenMPI 5 under
 * Slurm with --mpi=pmixcpp:
 *
 *   srun --mpi=pmixcpp -N2 -n2 ./malleable K1[,K2,...] [S]    (inside an sbatch job of 2 nodes)
 *
 * The processes started by srun make a communicator of mpi://WORLD in a session. Then, for each
 * grow step K (e.g. "2,4": 2 -> 4 -> 8 nodes): rank 0 of the current communicator grows the Slurm
 * job by K nodes with PMIx_Allocation_request(PMIX_ALLOC_EXTEND); all processes of the current
 * communicator (the original ones and those of earlier steps) MPI_Comm_spawn K processes onto
 * exactly those nodes (MPI_Info "host"). The server defines two process sets for the spawn,
 * "pmixcpp://spawned/<ns>" (the new processes) and "pmixcpp://union/<ns>" (every process of the
 * job's running malleable steps, the new ones last), and tells their members with
 * PMIX_PROCESS_SET_DEFINE. Every process finds both sets with MPI_Session_get_num_psets /
 * MPI_Session_get_nth_pset and reads their members (PMIX_QUERY_PSET_MEMBERSHIP); all build the
 * union's group, in the set's order, and make ONE communicator of it with
 * MPI_Comm_create_from_group; an allreduce over it checks it. (OpenMPI 5.0.7's
 * MPI_Group_from_session_pset builds groups of the caller's own job only, so the group is made
 * from the spawn's intercommunicator: see docs/malleability.md.) The new processes take part in
 * the following steps like the others.
 *
 * After each grow the processes work at the grown size for S seconds (argv[2], default 0; a
 * stand-in for the application's work, and what lets slurmdbd keep each size's record: it keys a
 * resized job's records by the second of the resize, so a resize in the previous one's second
 * replaces that size's record).
 *
 * Then the shrink: every new process leaves (disconnect, finalize); when their steps have ended the
 * server deletes their sets (PMIX_PROCESS_SET_DELETE to the original processes); rank 0 gives
 * exactly the grown nodes back (PMIx_Allocation_request(PMIX_ALLOC_RELEASE, PMIX_ALLOC_NODE_LIST));
 * the original processes go on with a new communicator of mpi://WORLD.
 *
 * Prints (rank 0 unless said; <s> the grow step 1, 2, ...; <who> g0 for an original process, g<s>
 * for one started by step s):
 *   GROWN <s> <k> node(s): <added nodes>; job on <all nodes>
 *   PSET-EVENT <s> <who> <r>: union|spawned <name> <n> members  (every process, per event of step s)
 *   PSETS <s> <who> <r>: <count> sets, union <name> <n> members, spawned <name> <n> members  (every process)
 *   UNION <s> <who> <r> on <node>: rank <u> of <n>, allreduce <sum>   (every process)
 *   MALLEABLE-MS <s> <from>-><to> extend <ms> launch <ms> wireup <ms> comm <ms> allreduce <ms> total <ms>
 *       extend: PMIx_Allocation_request until the nodes are the job's (slurmctld);
 *       launch: until the first new process runs main(); wireup: until MPI_Comm_spawn returns
 *       (MPI_Init of the new processes, their connection to the old ones); comm:
 *       MPI_Comm_create_from_group (a PMIx group construct across the steps); allreduce: the
 *       first one over the new communicator. total: the grow request to the usable communicator.
 *   MALLEABLE-OK <s> <n>
 *   PSET-DELETED g0 <r>: <union name> yes|NO                 (every original process, per step)
 *   SHRUNK released <nodes>; job on <nodes>
 *   UNION after g0 <r> on <node>: rank <u> of <n>, allreduce <sum>     (every original process)
 *   MALLEABLE-SHRINK-MS <n>-><m> disconnect <ms> delete-event <ms> release <ms> comm <ms> nodes-back <ms> total <ms>
 *       disconnect: MPI_Comm_disconnect of the spawns' intercommunicators; delete-event: until
 *       PMIX_PROCESS_SET_DELETE of every union (the new processes' steps have ended); release:
 *       PMIx_Allocation_request(RELEASE) until Slurm has the nodes; comm: the communicator of
 *       mpi://WORLD and an allreduce. nodes-back: the shrink's start to the nodes in Slurm.
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

#define MAX_STEPS 8
#define MAX_EVENTS 64
#define NODES_LEN 1024
static pthread_mutex_t ev_lock = PTHREAD_MUTEX_INITIALIZER;
static char ev_name[MAX_EVENTS][256];
static size_t ev_members[MAX_EVENTS];
static int ev_deleted[MAX_EVENTS];
static int ev_count = 0;

static void fail(const char *who, int r, const char *what) {
    printf("MALLEABLE-FAIL %s %d: %s\n", who, r, what);
    fflush(stdout);
}

/* wall-clock seconds: the processes of all steps share the host's clock (compared across them) */
static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sleep_s(double s) {
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
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

/* the members of the set that event i defined, or -1 (deleted: 0) */
static long event_of(const char *name, int deleted) {
    long n = -1;
    pthread_mutex_lock(&ev_lock);
    for (int i = 0; i < ev_count; ++i)
        if (ev_deleted[i] == deleted && strcmp(ev_name[i], name) == 0) n = (long)ev_members[i];
    pthread_mutex_unlock(&ev_lock);
    return n;
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

/* How many of the session's sets start with prefix; whether `name` is among them. */
static int listed(MPI_Session s, const char *prefix, const char *name, int *count) {
    int n = 0, found = 0, with_prefix = 0;
    MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n);
    for (int i = 0; i < n; ++i) {
        char got[256] = "";
        int len = sizeof(got);
        if (MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, got) != MPI_SUCCESS) continue;
        if (strncmp(got, prefix, strlen(prefix)) == 0) ++with_prefix;
        if (name && strcmp(got, name) == 0) found = 1;
    }
    if (count) *count = with_prefix;
    return found;
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
    PMIX_INFO_DESTRUCT(&in);
    if (rc != PMIX_SUCCESS || !added[0]) {
        fail("g0", 0, PMIx_Error_string(rc));
        return 0;
    }
    return 1;
}

/* The union's communicator: the group of the spawners then the new processes, from the
 * intercommunicator (the order of the union set). */
static int union_comm(MPI_Comm inter, int spawner, MPI_Comm *out) {
    MPI_Group mine, theirs, all;
    MPI_Comm_group(inter, &mine);
    MPI_Comm_remote_group(inter, &theirs);
    MPI_Group_union(spawner ? mine : theirs, spawner ? theirs : mine, &all);
    int rc = MPI_Comm_create_from_group(all, "pmixcpp.malleable.union", MPI_INFO_NULL, MPI_ERRORS_RETURN, out);
    MPI_Group_free(&mine);
    MPI_Group_free(&theirs);
    MPI_Group_free(&all);
    return rc;
}

static int check_union(MPI_Comm all, const char *step, const char *who, int r, const char *node) {
    int urank, usize, sum = 0;
    MPI_Comm_rank(all, &urank);
    MPI_Comm_size(all, &usize);
    MPI_Allreduce(&urank, &sum, 1, MPI_INT, MPI_SUM, all);
    printf("UNION %s %s %d on %s: rank %d of %d, allreduce %d\n", step, who, r, node, urank, usize, sum);
    return sum == usize * (usize - 1) / 2 ? usize : -1;
}

typedef struct {
    int nsteps, k[MAX_STEPS];
    double hold;
    const char *klist, *holdarg;
} plan_t;

static int parse_plan(const char *klist, const char *hold, plan_t *p) {
    p->nsteps = 0;
    p->klist = klist;
    p->holdarg = hold;
    p->hold = atof(hold);
    for (const char *c = klist; *c && p->nsteps < MAX_STEPS;) {
        int k = atoi(c);
        if (k < 1) return 0;
        p->k[p->nsteps++] = k;
        c = strchr(c, ',');
        if (!c) break;
        ++c;
    }
    return p->nsteps > 0;
}

/* what each process keeps */
static pmix_proc_t me;
static char union_names[MAX_STEPS][256];
static char all_added[NODES_LEN * MAX_STEPS] = "";

/* After the spawn of step s (1-based): the union's communicator, its check, the sets. Every
 * process of the union calls it; times t[0..2] (EXTEND start, its end, the spawn's return) are
 * rank 0's; t_main / t_init a new process's start of main() and end of MPI_Init. */
static MPI_Comm finish_step(int s, MPI_Session ses, MPI_Comm inter, int spawner, const char *who, const double *t,
                            double t_main, double t_init, int *good) {
    const char *node = getenv("SLURMD_NODENAME") ? getenv("SLURMD_NODENAME") : "?";
    char step[16];
    snprintf(step, sizeof(step), "%d", s);
    MPI_Comm all;
    int nold = 0, nnew = 0;
    if (spawner) MPI_Comm_size(inter, &nold), MPI_Comm_remote_size(inter, &nnew);
    else MPI_Comm_remote_size(inter, &nold), MPI_Comm_size(inter, &nnew);
    int rc = union_comm(inter, spawner, &all);
    double t3 = now();
    if (rc != MPI_SUCCESS) {
        fail(who, s, "MPI_Comm_create_from_group");
        *good = 0;
        return MPI_COMM_NULL;
    }
    int r;
    MPI_Comm_rank(all, &r);
    int n = check_union(all, step, who, r, node);
    double t4 = now();
    /* the new processes' namespace, from the first of them */
    char ns[PMIX_MAX_NSLEN + 1] = "";
    if (r == nold) snprintf(ns, sizeof(ns), "%s", me.nspace);
    MPI_Bcast(ns, sizeof(ns), MPI_CHAR, nold, all);
    /* launch and wire-up: the new processes' start of main() and end of MPI_Init */
    double tm = spawner ? 1e300 : t_main, ti = spawner ? 0 : t_init, first_main = 0, last_init = 0;
    MPI_Reduce(&tm, &first_main, 1, MPI_DOUBLE, MPI_MIN, 0, all);
    MPI_Reduce(&ti, &last_init, 1, MPI_DOUBLE, MPI_MAX, 0, all);
    char uname[256], sname[256];
    snprintf(uname, sizeof(uname), "pmixcpp://union/%s", ns);
    snprintf(sname, sizeof(sname), "pmixcpp://spawned/%s", ns);
    snprintf(union_names[s - 1], sizeof(union_names[0]), "%s", uname);
    /* the events: every member is told of the union, the new processes of their own set too */
    for (int i = 0; i < 500 && (event_of(uname, 0) < 0 || (!spawner && event_of(sname, 0) < 0)); ++i) sleep_s(0.01);
    long ue = event_of(uname, 0), se = event_of(sname, 0);
    if (ue >= 0) printf("PSET-EVENT %s %s %d: union %s %ld members\n", step, who, r, uname, ue);
    if (se >= 0) printf("PSET-EVENT %s %s %d: spawned %s %ld members\n", step, who, r, sname, se);
    int count = 0;
    int u_listed = listed(ses, "pmixcpp://", uname, &count), s_listed = listed(ses, "pmixcpp://", sname, NULL);
    long un = u_listed ? pset_size(uname) : -1, sn = s_listed ? pset_size(sname) : -1;
    printf("PSETS %s %s %d: %d sets, union %s %ld members, spawned %s %ld members\n", step, who, r, count,
           u_listed ? uname : "-", un, s_listed ? sname : "-", sn);
    int ok = n == nold + nnew && ue == n && un == n && sn == nnew && (spawner || se == nnew);
    int all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, all);
    if (r == 0) {
        printf("MALLEABLE-MS %d %d->%d extend %.1f launch %.1f wireup %.1f comm %.1f allreduce %.1f total %.1f\n", s,
               nold, n, (t[1] - t[0]) * 1e3, (first_main - t[1]) * 1e3, (t[2] - first_main) * 1e3,
               (t3 - t[2]) * 1e3, (t4 - t3) * 1e3, (t4 - t[0]) * 1e3);
        if (all_ok) printf("MALLEABLE-OK %d %d\n", s, n);
        else fail(who, r, "the union's communicator or the sets are not what the grow made");
        (void)last_init;
    }
    fflush(stdout);
    *good &= all_ok;
    return all;
}

/* The grow steps from `first` on, with the communicator `cur` (freed here unless it is world);
 * returns the last communicator; inter[] gets the spawns' intercommunicators. */
static MPI_Comm grow_steps(const plan_t *p, int first, MPI_Session ses, MPI_Comm cur, MPI_Comm world, const char *who,
                           const char *prog, MPI_Comm *inter, int *ninter, int *good) {
    for (int s = first; s < p->nsteps && *good; ++s) {
        int r, size;
        MPI_Comm_rank(cur, &r);
        MPI_Comm_size(cur, &size);
        char added[NODES_LEN] = "", job_nodes[NODES_LEN] = "";
        MPI_Barrier(cur);
        double t[3];
        t[0] = now();
        int ok = r == 0 ? grow(p->k[s], added, sizeof(added), job_nodes, sizeof(job_nodes)) : 0;
        MPI_Bcast(&ok, 1, MPI_INT, 0, cur);
        MPI_Bcast(added, sizeof(added), MPI_CHAR, 0, cur);
        t[1] = now();
        if (!ok) {
            *good = 0;
            break;
        }
        if (r == 0) {
            printf("GROWN %d %d node(s): %s; job on %s\n", s + 1, p->k[s], added, job_nodes);
            if (all_added[0]) strcat(all_added, ",");
            strcat(all_added, added);
        }
        fflush(stdout);
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "host", added);
        char gen[16];
        snprintf(gen, sizeof(gen), "%d", s + 1);
        char *new_argv[] = {"--new", gen, (char *)p->klist, (char *)p->holdarg, NULL};
        int rc = MPI_Comm_spawn(prog, new_argv, p->k[s], info, 0, cur, &inter[*ninter], MPI_ERRCODES_IGNORE);
        MPI_Info_free(&info);
        t[2] = now();
        if (rc != MPI_SUCCESS) {
            fail(who, r, "MPI_Comm_spawn");
            *good = 0;
            break;
        }
        MPI_Comm next = finish_step(s + 1, ses, inter[(*ninter)++], 1, who, t, 0, 0, good);
        if (cur != world) MPI_Comm_free(&cur);
        cur = next;
        if (cur == MPI_COMM_NULL) break;
        if (*good && p->hold > 0) sleep_s(p->hold); /* the work at the grown size */
    }
    return cur;
}

/* The shrink: the new processes have left; wait until the server deletes every step's union set
 * (PMIX_PROCESS_SET_DELETE: the new processes' steps have ended), give their nodes back to
 * Slurm (PMIX_ALLOC_RELEASE of exactly those nodes), and go on with a communicator of mpi://WORLD. */
static int shrink(MPI_Session s, MPI_Comm world, int nsteps, int from, double t_leave) {
    const char *node = getenv("SLURMD_NODENAME") ? getenv("SLURMD_NODENAME") : "?";
    int r, size;
    MPI_Comm_rank(world, &r);
    MPI_Comm_size(world, &size);
    double t0 = now(), t1, t2, t3;
    int ok = 1;
    for (int i = 0; i < nsteps; ++i) {
        while (event_of(union_names[i], 1) < 0 && now() - t0 < 60) sleep_s(0.005);
        int yes = event_of(union_names[i], 1) >= 0;
        printf("PSET-DELETED g0 %d: %s %s\n", r, union_names[i][0] ? union_names[i] : "-", yes ? "yes" : "NO");
        ok &= yes;
    }
    fflush(stdout);
    t1 = now();
    if (r == 0 && ok) {
        pmix_info_t in, *res = NULL;
        size_t nres = 0;
        char released[NODES_LEN * MAX_STEPS] = "", job_nodes[NODES_LEN] = "";
        PMIX_INFO_CONSTRUCT(&in);
        PMIx_Info_load(&in, PMIX_ALLOC_NODE_LIST, all_added, PMIX_STRING);
        pmix_status_t rc = PMIx_Allocation_request(PMIX_ALLOC_RELEASE, &in, 1, &res, &nres);
        for (size_t i = 0; i < nres; ++i) {
            if (res[i].value.type != PMIX_STRING) continue;
            if (strcmp(res[i].key, PMIX_ALLOC_NODE_LIST) == 0) snprintf(released, sizeof(released), "%s", res[i].value.data.string);
            if (strcmp(res[i].key, PMIX_ALLOCATED_NODELIST) == 0) snprintf(job_nodes, sizeof(job_nodes), "%s", res[i].value.data.string);
        }
        if (res) PMIX_INFO_FREE(res, nres);
        PMIX_INFO_DESTRUCT(&in);
        if (rc == PMIX_SUCCESS) printf("SHRUNK released %s; job on %s\n", released, job_nodes);
        else fail("g0", r, PMIx_Error_string(rc));
        ok = rc == PMIX_SUCCESS;
    }
    t2 = now();
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, world);
    if (!ok) return 0;
    /* the sets now: the grows' are gone */
    int left = 0;
    listed(s, "pmixcpp://", NULL, &left);
    printf("PSETS after g0 %d: %d pmixcpp sets\n", r, left);
    MPI_Group g;
    MPI_Comm after;
    MPI_Group_from_session_pset(s, "mpi://WORLD", &g);
    int rc = MPI_Comm_create_from_group(g, "pmixcpp.malleable.after", MPI_INFO_NULL, MPI_ERRORS_RETURN, &after);
    MPI_Group_free(&g);
    if (rc != MPI_SUCCESS) {
        fail("g0", r, "MPI_Comm_create_from_group after the shrink");
        return 0;
    }
    int n = check_union(after, "after", "g0", r, node);
    t3 = now();
    MPI_Comm_free(&after);
    if (r == 0) {
        printf("MALLEABLE-SHRINK-MS %d->%d disconnect %.1f delete-event %.1f release %.1f comm %.1f nodes-back %.1f "
               "total %.1f\n", from, size, (t0 - t_leave) * 1e3, (t1 - t0) * 1e3, (t2 - t1) * 1e3, (t3 - t2) * 1e3,
               (t2 - t_leave) * 1e3, (t3 - t_leave) * 1e3);
        if (n == size && left == 0) printf("MALLEABLE-SHRINK-OK %d\n", n);
        else fail("g0", r, "the communicator or the sets after the shrink");
    }
    fflush(stdout);
    return n == size && left == 0;
}

int main(int argc, char **argv) {
    double t_main = now();
    int new_proc = argc > 1 && strcmp(argv[1], "--new") == 0;
    int gen = new_proc && argc > 2 ? atoi(argv[2]) : 0;
    plan_t plan;
    const char *klist = new_proc ? (argc > 3 ? argv[3] : "2") : (argc > 1 ? argv[1] : "2");
    const char *hold = new_proc ? (argc > 4 ? argv[4] : "0") : (argc > 2 ? argv[2] : "0");
    MPI_Session s;
    MPI_Comm inter[MAX_STEPS], cur, world = MPI_COMM_NULL;
    int ninter = 0, good = 1;
    char who[16];
    snprintf(who, sizeof(who), "g%d", gen);
    if (!parse_plan(klist, hold, &plan) || gen < 0 || gen > plan.nsteps) {
        printf("MALLEABLE-FAIL usage: malleable K1[,K2,...] [S]\n");
        return 2;
    }
    pmix_status_t codes[2] = {PMIX_PROCESS_SET_DEFINE, PMIX_PROCESS_SET_DELETE};

    if (new_proc) {
        /* a new process: its spawners' intercommunicator (world model), the sets in a session */
        MPI_Comm parent;
        MPI_Init(&argc, &argv);
        double t_init = now();
        MPI_Comm_get_parent(&parent);
        if (parent == MPI_COMM_NULL) {
            fail(who, 0, "no parent");
            MPI_Finalize();
            return 1;
        }
        MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s);
        PMIx_Init(&me, NULL, 0);
        /* the server told this process of its spawn's two sets at its start; the events wait in
         * its cache for a handler */
        if (PMIx_Register_event_handler(codes, 2, NULL, 0, on_pset, NULL, NULL) < 0) fail(who, 0, "event handler");
        inter[ninter++] = parent;
        double t[3] = {0, 0, 0};
        cur = finish_step(gen, s, parent, 0, who, t, t_main, t_init, &good);
        if (cur != MPI_COMM_NULL && good && plan.hold > 0) sleep_s(plan.hold);
        if (cur != MPI_COMM_NULL && good)
            cur = grow_steps(&plan, gen, s, cur, MPI_COMM_NULL, who, argv[0], inter, &ninter, &good);
    } else {
        /* the original processes: sessions only */
        MPI_Group wg;
        MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s);
        MPI_Group_from_session_pset(s, "mpi://WORLD", &wg);
        MPI_Comm_create_from_group(wg, "pmixcpp.malleable.world", MPI_INFO_NULL, MPI_ERRORS_RETURN, &world);
        MPI_Group_free(&wg);
        /* OpenMPI already initialized PMIx: this only takes a reference */
        PMIx_Init(&me, NULL, 0);
        int r;
        MPI_Comm_rank(world, &r);
        if (PMIx_Register_event_handler(codes, 2, NULL, 0, on_pset, NULL, NULL) < 0) fail(who, r, "event handler");
        cur = grow_steps(&plan, 0, s, world, world, who, argv[0], inter, &ninter, &good);
    }
    fflush(stdout);
    int grown = 0;
    if (cur != MPI_COMM_NULL) MPI_Comm_size(cur, &grown);
    if (cur != MPI_COMM_NULL && cur != world) MPI_Comm_free(&cur);
    /* leave: every spawn's intercommunicator, in the order made (a process's parent first) */
    double t_leave = now();
    for (int i = 0; i < ninter; ++i) MPI_Comm_disconnect(&inter[i]);
    if (!new_proc && good && !shrink(s, world, plan.nsteps, grown, t_leave)) good = 0;
    fflush(stdout);
    if (world != MPI_COMM_NULL) MPI_Comm_free(&world);
    PMIx_Finalize(NULL, 0);
    MPI_Session_finalize(&s);
    if (new_proc) MPI_Finalize();
    return good ? 0 : 1;
}
