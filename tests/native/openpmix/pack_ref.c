/* Prints the bytes that OpenPMIx's PMIx_Data_pack produces for sample values, one line per case:
 * "<name> <hex bytes>" (or "<name> ERROR <status>"). The source of the reference vectors that
 * tests/native/test_bfrops.cc checks (openpmix-4.2.2-v41.txt, openpmix-4.2.2-v3.txt here).
 * Build against a real OpenPMIx and run (PMIx_server_init only sets up the library):
 *   gcc -o pack_ref pack_ref.c $(pkg-config --cflags --libs pmix)
 *   ./pack_ref                       # v41 bfrops, flex128 integers (OpenPMIx 4.x default)
 *   PMIX_MCA_bfrops=v3 ./pack_ref    # v3 bfrops, fixed-width integers (what 3.x clients send) */
#include <pmix_server.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

static void dump(const char *name, pmix_data_buffer_t *b) {
    printf("%s", name);
    for (size_t i = 0; i < b->bytes_used; ++i) printf(" %02x", (unsigned char)b->base_ptr[i]);
    printf("\n");
}
#define ONE(name, ptr, type) do { pmix_data_buffer_t b; PMIX_DATA_BUFFER_CONSTRUCT(&b); \
    pmix_status_t rc = PMIx_Data_pack(NULL, &b, (void*)(ptr), 1, type); \
    if (rc != PMIX_SUCCESS) printf("%s ERROR %d\n", name, rc); else dump(name, &b); PMIX_DATA_BUFFER_DESTRUCT(&b);} while (0)
#define MANY(name, ptr, n, type) do { pmix_data_buffer_t b; PMIX_DATA_BUFFER_CONSTRUCT(&b); \
    pmix_status_t rc = PMIx_Data_pack(NULL, &b, (void*)(ptr), n, type); \
    if (rc != PMIX_SUCCESS) printf("%s ERROR %d\n", name, rc); else dump(name, &b); PMIX_DATA_BUFFER_DESTRUCT(&b);} while (0)

int main(void) {
    static pmix_server_module_t mod;
    pmix_status_t rc = PMIx_server_init(&mod, NULL, 0);
    if (rc != PMIX_SUCCESS) { fprintf(stderr, "init %d\n", rc); return 1; }
    bool bt = true, bf = false; ONE("bool_true", &bt, PMIX_BOOL); ONE("bool_false", &bf, PMIX_BOOL);
    uint8_t by = 0xab; ONE("byte_ab", &by, PMIX_BYTE);
    char *s = "hello"; ONE("string_hello", &s, PMIX_STRING);
    char *sn = NULL; ONE("string_null", &sn, PMIX_STRING);
    char *se = ""; ONE("string_empty", &se, PMIX_STRING);
    size_t sz = 300; ONE("size_300", &sz, PMIX_SIZE);
    size_t szm = SIZE_MAX; ONE("size_max", &szm, PMIX_SIZE);
    pid_t pid = 1234; ONE("pid_1234", &pid, PMIX_PID);
    int i = -5; ONE("int_m5", &i, PMIX_INT);
    unsigned u = 7; ONE("uint_7", &u, PMIX_UINT);
    unsigned um = 0xFFFFFFFFu; ONE("uint_max", &um, PMIX_UINT);
    int8_t i8 = -3; ONE("int8_m3", &i8, PMIX_INT8);
    int16_t i16 = -300; ONE("int16_m300", &i16, PMIX_INT16);
    int32_t i32 = -70000; ONE("int32_m70000", &i32, PMIX_INT32);
    int32_t i32min = INT32_MIN; ONE("int32_min", &i32min, PMIX_INT32);
    int64_t i64 = -5000000000LL; ONE("int64_m5e9", &i64, PMIX_INT64);
    int64_t i64max = INT64_MAX; ONE("int64_max", &i64max, PMIX_INT64);
    int64_t i64min = INT64_MIN; ONE("int64_min", &i64min, PMIX_INT64);
    uint8_t u8 = 200; ONE("uint8_200", &u8, PMIX_UINT8);
    uint16_t u16 = 60000; ONE("uint16_60000", &u16, PMIX_UINT16);
    uint32_t u32 = 0xFFFFFFFEu; ONE("uint32_fffffffe", &u32, PMIX_UINT32);
    uint64_t u64 = UINT64_MAX; ONE("uint64_max", &u64, PMIX_UINT64);
    uint64_t u64b = 0x0102030405060708ULL; ONE("uint64_0102030405060708", &u64b, PMIX_UINT64);
    float f = 1.5f; ONE("float_1.5", &f, PMIX_FLOAT);
    double d = 2.25; ONE("double_2.25", &d, PMIX_DOUBLE);
    struct timeval tv = {5, 7}; ONE("timeval_5_7", &tv, PMIX_TIMEVAL);
    time_t t = 1000; ONE("time_1000", &t, PMIX_TIME);
    pmix_status_t st0 = 0, st46 = -46, st1 = -1; ONE("status_0", &st0, PMIX_STATUS); ONE("status_m46", &st46, PMIX_STATUS); ONE("status_m1", &st1, PMIX_STATUS);
    pmix_proc_t p; PMIX_LOAD_PROCID(&p, "job.7", 3); ONE("proc_job.7_3", &p, PMIX_PROC);
    pmix_proc_t pw; PMIX_LOAD_PROCID(&pw, "x", PMIX_RANK_WILDCARD); ONE("proc_x_wildcard", &pw, PMIX_PROC);
    pmix_rank_t r = 5; ONE("rank_5", &r, PMIX_PROC_RANK);
    pmix_rank_t rw = PMIX_RANK_WILDCARD; ONE("rank_wildcard", &rw, PMIX_PROC_RANK);
    pmix_byte_object_t bo = {.bytes = "abc", .size = 3}; ONE("bo_abc", &bo, PMIX_BYTE_OBJECT);
    pmix_byte_object_t boe = {.bytes = NULL, .size = 0}; ONE("bo_empty", &boe, PMIX_BYTE_OBJECT);
    pmix_data_type_t dt = PMIX_VALUE; ONE("datatype_21", &dt, PMIX_DATA_TYPE);
    pmix_data_type_t dt2 = 300; ONE("datatype_300", &dt2, PMIX_DATA_TYPE);
    pmix_scope_t sc = PMIX_REMOTE; ONE("scope_remote", &sc, PMIX_SCOPE);
    pmix_data_range_t rg = PMIX_RANGE_NAMESPACE; ONE("range_nspace", &rg, PMIX_DATA_RANGE);
    pmix_persistence_t ps = PMIX_PERSIST_FIRST_READ; ONE("persist_first_read", &ps, PMIX_PERSIST);
    pmix_info_directives_t dir = PMIX_INFO_REQD; ONE("directives_reqd", &dir, PMIX_INFO_DIRECTIVES);
    pmix_proc_state_t pst = PMIX_PROC_STATE_RUNNING; ONE("proc_state_running", &pst, PMIX_PROC_STATE);
    pmix_alloc_directive_t ad = PMIX_ALLOC_EXTEND; ONE("alloc_extend", &ad, PMIX_ALLOC_DIRECTIVE);
    pmix_iof_channel_t ioc = PMIX_FWD_STDOUT_CHANNEL|PMIX_FWD_STDERR_CHANNEL; ONE("iof_out_err", &ioc, PMIX_IOF_CHANNEL);
    pmix_job_state_t js = PMIX_JOB_STATE_RUNNING; ONE("job_state_running", &js, PMIX_JOB_STATE);
    pmix_link_state_t ls = PMIX_LINK_UP; ONE("link_up", &ls, PMIX_LINK_STATE);
    pmix_locality_t loc = PMIX_LOCALITY_SHARE_NODE|PMIX_LOCALITY_SHARE_L3CACHE; ONE("locality", &loc, PMIX_LOCTYPE);
    pmix_device_type_t dv = PMIX_DEVTYPE_NETWORK; ONE("devtype_network", &dv, PMIX_DEVTYPE);
    pmix_envar_t ev = {.envar = "PATH", .value = "/bin", .separator = ':'}; ONE("envar_path", &ev, PMIX_ENVAR);
    uint32_t cc[3] = {1, 2, 300}; pmix_coord_t co = {.view = PMIX_COORD_PHYSICAL_VIEW, .coord = cc, .dims = 3}; ONE("coord_1_2_300", &co, PMIX_COORD);
    pmix_nspace_t ns; PMIX_LOAD_NSPACE(ns, "ns1"); ONE("nspace_ns1", &ns, PMIX_PROC_NSPACE);
    pmix_proc_info_t pi; memset(&pi, 0, sizeof pi); PMIX_LOAD_PROCID(&pi.proc, "j", 1); pi.hostname = "n1"; pi.executable_name = "a.out"; pi.pid = 42; pi.exit_code = 0; pi.state = PMIX_PROC_STATE_RUNNING; ONE("proc_info", &pi, PMIX_PROC_INFO);
    pmix_device_distance_t dd; memset(&dd, 0, sizeof dd); dd.uuid = "u"; dd.osname = "eth0"; dd.type = PMIX_DEVTYPE_NETWORK; dd.mindist = 10; dd.maxdist = 20; ONE("devdist", &dd, PMIX_DEVICE_DIST);
    pmix_endpoint_t ep; memset(&ep, 0, sizeof ep); ep.uuid = "u"; ep.osname = "ib0"; ep.endpt.bytes = "\x01\x02"; ep.endpt.size = 2; ONE("endpoint", &ep, PMIX_ENDPOINT);
    pmix_geometry_t ge; memset(&ge, 0, sizeof ge); ge.fabric = 2; ge.uuid = "g"; ge.osname = "os"; ge.coordinates = &co; ge.ncoords = 1; ONE("geometry", &ge, PMIX_GEOMETRY);
    char *descr[] = {"d1", NULL}; pmix_regattr_t ra; memset(&ra, 0, sizeof ra); ra.name = "PMIX_RANK"; PMIX_LOAD_KEY(ra.string, "pmix.rank"); ra.type = PMIX_PROC_RANK; ra.description = descr; ONE("regattr", &ra, PMIX_REGATTR);

    pmix_value_t v; PMIX_VALUE_LOAD(&v, &u32, PMIX_UINT32); ONE("value_uint32", &v, PMIX_VALUE);
    pmix_value_t vs; PMIX_VALUE_LOAD(&vs, "hi", PMIX_STRING); ONE("value_string_hi", &vs, PMIX_VALUE);
    pmix_value_t vp; PMIX_VALUE_LOAD(&vp, &p, PMIX_PROC); ONE("value_proc", &vp, PMIX_VALUE);
    pmix_value_t vu; memset(&vu, 0, sizeof vu); vu.type = PMIX_UNDEF; ONE("value_undef", &vu, PMIX_VALUE);
    pmix_value_t vb; PMIX_VALUE_LOAD(&vb, &bt, PMIX_BOOL); ONE("value_bool", &vb, PMIX_VALUE);
    pmix_value_t vbo; PMIX_VALUE_LOAD(&vbo, &bo, PMIX_BYTE_OBJECT); ONE("value_bo", &vbo, PMIX_VALUE);
    pmix_value_t vpid; PMIX_VALUE_LOAD(&vpid, &pid, PMIX_PID); ONE("value_pid", &vpid, PMIX_VALUE);
    pmix_value_t vsz; PMIX_VALUE_LOAD(&vsz, &sz, PMIX_SIZE); ONE("value_size", &vsz, PMIX_VALUE);
    pmix_value_t vns; PMIX_VALUE_LOAD(&vns, ns, PMIX_PROC_NSPACE); ONE("value_nspace", &vns, PMIX_VALUE);

    pmix_info_t info; PMIX_INFO_LOAD(&info, PMIX_RANK, &r, PMIX_PROC_RANK); ONE("info_rank_5", &info, PMIX_INFO);
    pmix_info_t infob; PMIX_INFO_LOAD(&infob, PMIX_COLLECT_DATA, &bt, PMIX_BOOL); PMIX_INFO_REQUIRED(&infob); ONE("info_collect_reqd", &infob, PMIX_INFO);
    pmix_info_t infos[2]; PMIX_INFO_LOAD(&infos[0], "pmix.hname", "n1", PMIX_STRING); PMIX_INFO_LOAD(&infos[1], "pmix.lrank", &u16, PMIX_UINT16);
    MANY("info_x2", infos, 2, PMIX_INFO);
    int32_t ia[3] = {1, -2, 3}; MANY("int32_x3", ia, 3, PMIX_INT32);
    char *sa[2] = {"a", "bc"}; MANY("string_x2", sa, 2, PMIX_STRING);

    pmix_data_array_t da; da.type = PMIX_UINT32; uint32_t dav[3] = {1, 2, 3}; da.array = dav; da.size = 3; ONE("darray_uint32", &da, PMIX_DATA_ARRAY);
    pmix_data_array_t dai; dai.type = PMIX_INFO; dai.array = infos; dai.size = 2; ONE("darray_info", &dai, PMIX_DATA_ARRAY);
    pmix_proc_t pa[2]; PMIX_LOAD_PROCID(&pa[0], "a", 0); PMIX_LOAD_PROCID(&pa[1], "a", 1);
    pmix_data_array_t dap; dap.type = PMIX_PROC; dap.array = pa; dap.size = 2; ONE("darray_proc", &dap, PMIX_DATA_ARRAY);
    pmix_data_array_t dae; dae.type = PMIX_STRING; dae.array = NULL; dae.size = 0; ONE("darray_empty", &dae, PMIX_DATA_ARRAY);
    pmix_data_array_t das; das.type = PMIX_STRING; das.array = sa; das.size = 2; ONE("darray_string", &das, PMIX_DATA_ARRAY);
    pmix_value_t vda; vda.type = PMIX_DATA_ARRAY; vda.data.darray = &dai; ONE("value_darray_info", &vda, PMIX_VALUE);
    pmix_info_t infoarr; PMIX_INFO_LOAD(&infoarr, "pmix.node.arr", &dai, PMIX_DATA_ARRAY); ONE("info_node_arr", &infoarr, PMIX_INFO);

    pmix_pdata_t pd; memset(&pd, 0, sizeof pd); PMIX_LOAD_PROCID(&pd.proc, "j", 2); PMIX_LOAD_KEY(pd.key, "k"); PMIX_VALUE_LOAD(&pd.value, &u32, PMIX_UINT32); ONE("pdata", &pd, PMIX_PDATA);
    uint8_t cmd = 5; ONE("command_5", &cmd, PMIX_COMMAND);
    /* a kval is internal: value is a pointer */
    PMIx_server_finalize();
    return 0;
}
