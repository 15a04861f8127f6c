/* A minimal OpenPMIx server (the real library) to capture the client <-> server traffic of
 * handshake-4.2.2-{v41,v3}.txt: one namespace "capture.ns" of 2 ranks on this host; forks rank 0
 * running argv[1] (default ./client, conn_client.c). Run as an unprivileged user under strace and
 * extract the TCP bytes (extract_traffic.py):
 *   gcc -o server conn_server.c $(pkg-config --cflags --libs pmix)
 *   gcc -o client conn_client.c $(pkg-config --cflags --libs pmix)
 *   PMIX_MCA_gds=hash strace -f -yy -e trace=read,write -xx -s 100000 -o tr.txt ./server ./client
 *   python3 extract_traffic.py tr.txt > handshake-4.2.2-v41.txt
 * (for the v3 flavour run the client with PMIX_MCA_bfrops=v3 in its environment). */
#include <pmix_server.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void regcb(pmix_status_t st, void *cbdata) { (void)st; *(volatile int *)cbdata = 1; }
static pmix_status_t fin(const pmix_proc_t *p, void *sd, pmix_op_cbfunc_t cb, void *cbdata) {
    (void)p; (void)sd; if (cb) cb(PMIX_SUCCESS, cbdata); return PMIX_SUCCESS; }
static pmix_status_t conn(const pmix_proc_t *p, void *sd, pmix_op_cbfunc_t cb, void *cbdata) {
    (void)p; (void)sd; if (cb) cb(PMIX_SUCCESS, cbdata); return PMIX_SUCCESS; }
static pmix_server_module_t mod = {.client_connected = conn, .client_finalized = fin};

int main(int argc, char **argv) {
    pmix_info_t sinfo[1];
    PMIX_INFO_LOAD(&sinfo[0], PMIX_SERVER_TMPDIR, "/tmp/cap/hs/tmp", PMIX_STRING);
    if (PMIx_server_init(&mod, sinfo, 1) != PMIX_SUCCESS) return 1;
    uint32_t size = 2, u0 = 0;
    pmix_info_t info[8];
    char host[256]; gethostname(host, sizeof host);
    char *nodes = NULL, *procs = NULL;
    PMIx_generate_regex(host, &nodes); PMIx_generate_ppn("0,1", &procs);
    PMIX_INFO_LOAD(&info[6], PMIX_NODE_MAP, nodes, PMIX_REGEX);
    PMIX_INFO_LOAD(&info[7], PMIX_PROC_MAP, procs, PMIX_REGEX);
    PMIX_INFO_LOAD(&info[0], PMIX_JOB_SIZE, &size, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[1], PMIX_LOCAL_SIZE, &size, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[2], PMIX_UNIV_SIZE, &size, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[3], PMIX_MAX_PROCS, &size, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[4], PMIX_LOCAL_PEERS, "0,1", PMIX_STRING);
    PMIX_INFO_LOAD(&info[5], PMIX_NODEID, &u0, PMIX_UINT32);
    volatile int ok = 0;
    PMIx_server_register_nspace("capture.ns", 2, info, 8, regcb, (void *)&ok);
    while (!ok) usleep(1000);
    pmix_proc_t p; PMIX_LOAD_PROCID(&p, "capture.ns", 0);
    ok = 0; PMIx_server_register_client(&p, geteuid(), getegid(), NULL, regcb, (void *)&ok);
    while (!ok) usleep(1000);
    char **env = calloc(1024, sizeof(char *)); int k = 0;
    for (char **e = environ; *e && k < 900; ++e) env[k++] = strdup(*e);
    PMIx_server_setup_fork(&p, &env);
    FILE *f = fopen("/tmp/cap/hs/env.txt", "w");
    for (char **e = env; *e; ++e) if (!strncmp(*e, "PMIX", 4)) fprintf(f, "%s\n", *e);
    fclose(f);
    pid_t pid = fork();
    if (pid == 0) { execve(argc > 1 ? argv[1] : "./client", (char *[]){"client", NULL}, env); _exit(127); }
    int st; waitpid(pid, &st, 0);
    printf("client exit %d\n", WEXITSTATUS(st));
    PMIx_server_finalize();
    return 0;
}
