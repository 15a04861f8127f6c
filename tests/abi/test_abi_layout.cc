// Pins the parts of the PMIx ABI that binaries built against OpenPMIx 4.2.2
// depend on (x86-64), and checks the value-name tables of pmix_strings.h.
// The full comparison with the installed OpenPMIx header is
// tests/abi/compare-openpmix.sh.
#include <pmix.h>
#include <pmix_server.h>
#include <pmix_tool.h>
#include <pmix_version.h>

#include "pmix_strings.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <set>
#include <string>
#include <type_traits>

// ------------------------------------------------------------------ layouts

static_assert(sizeof(void *) == 8, "the pinned layouts are those of LP64 (x86-64)");

static_assert(PMIX_MAX_NSLEN == 255 && PMIX_MAX_KEYLEN == 511);
static_assert(sizeof(pmix_nspace_t) == 256 && sizeof(pmix_key_t) == 512);

static_assert(sizeof(pmix_proc_t) == 260);
static_assert(offsetof(pmix_proc_t, nspace) == 0);
static_assert(offsetof(pmix_proc_t, rank) == 256);

static_assert(sizeof(pmix_value_t) == 32);
static_assert(offsetof(pmix_value_t, type) == 0);
static_assert(std::is_same_v<decltype(pmix_value_t::type), uint16_t>);
static_assert(offsetof(pmix_value_t, data) == 8);
static_assert(sizeof(pmix_value_t::data) == 24);  // the largest member is pmix_envar_t

static_assert(sizeof(pmix_info_t) == 552);
static_assert(offsetof(pmix_info_t, key) == 0);
static_assert(offsetof(pmix_info_t, flags) == 512);
static_assert(offsetof(pmix_info_t, value) == 520);

static_assert(sizeof(pmix_pdata_t) == 808);
static_assert(offsetof(pmix_pdata_t, proc) == 0);
static_assert(offsetof(pmix_pdata_t, key) == 260);
static_assert(offsetof(pmix_pdata_t, value) == 776);

static_assert(sizeof(pmix_data_array_t) == 24);
static_assert(offsetof(pmix_data_array_t, type) == 0);
static_assert(offsetof(pmix_data_array_t, size) == 8);
static_assert(offsetof(pmix_data_array_t, array) == 16);

static_assert(sizeof(pmix_byte_object_t) == 16);
static_assert(offsetof(pmix_byte_object_t, bytes) == 0);
static_assert(offsetof(pmix_byte_object_t, size) == 8);

static_assert(sizeof(pmix_app_t) == 56);
static_assert(offsetof(pmix_app_t, maxprocs) == 32);
static_assert(offsetof(pmix_app_t, info) == 40);
static_assert(offsetof(pmix_app_t, ninfo) == 48);

static_assert(sizeof(pmix_query_t) == 24);
static_assert(offsetof(pmix_query_t, keys) == 0);
static_assert(offsetof(pmix_query_t, qualifiers) == 8);
static_assert(offsetof(pmix_query_t, nqual) == 16);

static_assert(sizeof(pmix_proc_info_t) == 296);
static_assert(offsetof(pmix_proc_info_t, hostname) == 264);
static_assert(offsetof(pmix_proc_info_t, pid) == 280);
static_assert(offsetof(pmix_proc_info_t, state) == 288);

static_assert(sizeof(pmix_envar_t) == 24);
static_assert(sizeof(pmix_data_buffer_t) == 40);
static_assert(sizeof(pmix_coord_t) == 24);
static_assert(sizeof(pmix_cpuset_t) == 16 && sizeof(pmix_topology_t) == 16);
static_assert(sizeof(pmix_geometry_t) == 40);
static_assert(sizeof(pmix_device_distance_t) == 32);
static_assert(sizeof(pmix_endpoint_t) == 32);
static_assert(sizeof(pmix_regattr_t) == 536);
static_assert(sizeof(pmix_fabric_t) == 40);
static_assert(sizeof(pmix_server_module_t) == 28 * sizeof(void *));
static_assert(offsetof(pmix_server_module_t, fence_nb) == 3 * sizeof(void *));
static_assert(offsetof(pmix_server_module_t, client_connected2) == 27 * sizeof(void *));

// scalar types
static_assert(sizeof(pmix_status_t) == 4 && std::is_signed_v<pmix_status_t>);
static_assert(std::is_same_v<pmix_rank_t, uint32_t>);
static_assert(std::is_same_v<pmix_data_type_t, uint16_t>);
static_assert(std::is_same_v<pmix_scope_t, uint8_t>);
static_assert(std::is_same_v<pmix_data_range_t, uint8_t>);
static_assert(std::is_same_v<pmix_persistence_t, uint8_t>);
static_assert(std::is_same_v<pmix_info_directives_t, uint32_t>);
static_assert(std::is_same_v<pmix_proc_state_t, uint8_t>);
static_assert(std::is_same_v<pmix_job_state_t, uint8_t>);
static_assert(std::is_same_v<pmix_alloc_directive_t, uint8_t>);
static_assert(std::is_same_v<pmix_iof_channel_t, uint16_t>);
static_assert(std::is_same_v<pmix_locality_t, uint16_t>);
static_assert(std::is_same_v<pmix_device_type_t, uint64_t>);

// ------------------------------------------------------------------ constants

static_assert(PMIX_RANK_UNDEF == 0xFFFFFFFFu);
static_assert(PMIX_RANK_WILDCARD == 0xFFFFFFFEu);
static_assert(PMIX_RANK_LOCAL_NODE == 0xFFFFFFFDu);
static_assert(PMIX_RANK_INVALID == 0xFFFFFFFCu);
static_assert(PMIX_RANK_LOCAL_PEERS == 0xFFFFFFFBu);
static_assert(PMIX_RANK_IS_VALID(0u) && !PMIX_RANK_IS_VALID(PMIX_RANK_WILDCARD));

static_assert(PMIX_SCOPE_UNDEF == 0 && PMIX_LOCAL == 1 && PMIX_REMOTE == 2 && PMIX_GLOBAL == 3 &&
              PMIX_INTERNAL == 4);
static_assert(PMIX_RANGE_NAMESPACE == 3 && PMIX_RANGE_SESSION == 4 && PMIX_RANGE_GLOBAL == 5);
static_assert(PMIX_PERSIST_INDEF == 0 && PMIX_PERSIST_SESSION == 4);
static_assert(PMIX_INFO_REQD == 0x1 && PMIX_INFO_ARRAY_END == 0x2 &&
              PMIX_INFO_REQD_PROCESSED == 0x4 && PMIX_INFO_QUALIFIER == 0x8 &&
              PMIX_INFO_PERSISTENT == 0x10);

static_assert(PMIX_UNDEF == 0 && PMIX_BOOL == 1 && PMIX_BYTE == 2 && PMIX_STRING == 3 &&
              PMIX_SIZE == 4 && PMIX_PID == 5 && PMIX_INT == 6 && PMIX_INT8 == 7 &&
              PMIX_INT16 == 8 && PMIX_INT32 == 9 && PMIX_INT64 == 10 && PMIX_UINT == 11 &&
              PMIX_UINT8 == 12 && PMIX_UINT16 == 13 && PMIX_UINT32 == 14 && PMIX_UINT64 == 15 &&
              PMIX_FLOAT == 16 && PMIX_DOUBLE == 17 && PMIX_TIMEVAL == 18 && PMIX_TIME == 19 &&
              PMIX_STATUS == 20 && PMIX_VALUE == 21 && PMIX_PROC == 22 && PMIX_APP == 23 &&
              PMIX_INFO == 24 && PMIX_PDATA == 25 && PMIX_BYTE_OBJECT == 27 &&
              PMIX_KVAL == 28 && PMIX_PERSIST == 30 && PMIX_POINTER == 31 &&
              PMIX_SCOPE == 32 && PMIX_DATA_RANGE == 33 && PMIX_COMMAND == 34 &&
              PMIX_INFO_DIRECTIVES == 35 && PMIX_DATA_TYPE == 36 && PMIX_PROC_STATE == 37 &&
              PMIX_PROC_INFO == 38 && PMIX_DATA_ARRAY == 39 && PMIX_PROC_RANK == 40 &&
              PMIX_QUERY == 41 && PMIX_COMPRESSED_STRING == 42 && PMIX_ALLOC_DIRECTIVE == 43 &&
              PMIX_IOF_CHANNEL == 45 && PMIX_ENVAR == 46 && PMIX_COORD == 47 &&
              PMIX_REGATTR == 48 && PMIX_REGEX == 49 && PMIX_JOB_STATE == 50 &&
              PMIX_LINK_STATE == 51 && PMIX_PROC_CPUSET == 52 && PMIX_GEOMETRY == 53 &&
              PMIX_DEVICE_DIST == 54 && PMIX_ENDPOINT == 55 && PMIX_TOPO == 56 &&
              PMIX_DEVTYPE == 57 && PMIX_LOCTYPE == 58 && PMIX_COMPRESSED_BYTE_OBJECT == 59 &&
              PMIX_PROC_NSPACE == 60 && PMIX_PROC_STATS == 61 && PMIX_DISK_STATS == 62 &&
              PMIX_NET_STATS == 63 && PMIX_NODE_STATS == 64 && PMIX_DATA_BUFFER == 65 &&
              PMIX_STOR_MEDIUM == 66 && PMIX_STOR_ACCESS == 67 && PMIX_STOR_PERSIST == 68 &&
              PMIX_STOR_ACCESS_TYPE == 69);

// status codes OpenMPI and our server rely on
static_assert(PMIX_SUCCESS == 0 && PMIX_ERROR == -1);
static_assert(PMIX_ERR_NOT_FOUND == -46 && PMIX_ERR_NOT_SUPPORTED == -47);
static_assert(PMIX_ERR_BAD_PARAM == -27 && PMIX_ERR_NOMEM == -32 && PMIX_ERR_INIT == -31);
static_assert(PMIX_ERR_TIMEOUT == -24 && PMIX_ERR_UNREACH == -25 && PMIX_ERR_WOULD_BLOCK == -15);
static_assert(PMIX_ERR_PARTIAL_SUCCESS == -52 && PMIX_ERR_LOST_CONNECTION == -61);
static_assert(PMIX_ERR_TYPE_MISMATCH == -18 && PMIX_ERR_EXISTS == -11);
static_assert(PMIX_MODEL_DECLARED == -147 && PMIX_EVENT_JOB_END == -145);
static_assert(PMIX_OPERATION_SUCCEEDED == -157 && PMIX_ERR_PROC_ABORTED == -7);
static_assert(PMIX_EVENT_ACTION_COMPLETE == -334 && PMIX_EXTERNAL_ERR_BASE == -3000);

static_assert(PMIX_VERSION_MAJOR == 4 && PMIX_VERSION_MINOR == 2);
static_assert(PMIX_NUMERIC_VERSION == 0x00040202);

// ------------------------------------------------------------------ key strings

TEST(AbiKeys, KeysOpenMpiReads) {
    struct {
        const char *actual, *expected;
    } const keys[] = {
        {PMIX_JOB_SIZE, "pmix.job.size"},
        {PMIX_LOCAL_RANK, "pmix.lrank"},
        {PMIX_NODE_RANK, "pmix.nrank"},
        {PMIX_MAX_PROCS, "pmix.max.size"},
        {PMIX_LOCAL_SIZE, "pmix.local.size"},
        {PMIX_LOCAL_PEERS, "pmix.lpeers"},
        {PMIX_APPNUM, "pmix.appnum"},
        {PMIX_NUM_NODES, "pmix.num.nodes"},
        {PMIX_UNIV_SIZE, "pmix.univ.size"},
        {PMIX_TMPDIR, "pmix.tmpdir"},
        {PMIX_NSDIR, "pmix.nsdir"},
        {PMIX_PROCDIR, "pmix.pdir"},
        {PMIX_TDIR_RMCLEAN, "pmix.tdir.rmclean"},
        {PMIX_LOCALITY_STRING, "pmix.locstr"},
        {PMIX_CPUSET, "pmix.cpuset"},
        {PMIX_HWLOC_SHMEM_FILE, "pmix.hwlocfile"},
        {PMIX_HWLOC_SHMEM_ADDR, "pmix.hwlocaddr"},
        {PMIX_HWLOC_SHMEM_SIZE, "pmix.hwlocsize"},
        {PMIX_HWLOC_XML_V2, "pmix.hwlocxml2"},
        {PMIX_LOCAL_TOPO, "pmix.ltopo"},
        {PMIX_MAPBY, "pmix.mapby"},
        {PMIX_HOSTNAME, "pmix.hname"},
        {PMIX_LOCALITY, "pmix.loc"},
        {PMIX_COLLECT_DATA, "pmix.collect"},
        {PMIX_OPTIONAL, "pmix.optional"},
        {PMIX_IMMEDIATE, "pmix.immediate"},
        {PMIX_EVENT_HDLR_NAME, "pmix.evname"},
        {PMIX_EVENT_HDLR_PREPEND, "pmix.evprepend"},
        {PMIX_REGISTER_CLEANUP_DIR, "pmix.reg.cleanupdir"},
        {PMIX_CLEANUP_RECURSIVE, "pmix.clnup.recurse"},
        {PMIX_LOG_MSG, "pmix.log.msg"},
        {PMIX_SERVER_SCHEDULER, "pmix.srv.sched"},
        {PMIX_RANK, "pmix.rank"},
        {PMIX_NSPACE, "pmix.nspace"},
        {PMIX_TIMEOUT, "pmix.timeout"},
    };
    for (const auto &k : keys) EXPECT_STREQ(k.actual, k.expected);
    for (const auto &k : keys) EXPECT_LE(std::strlen(k.actual), size_t{PMIX_MAX_KEYLEN});
}

// ------------------------------------------------------------------ names

TEST(ValueNames, KnownValues) {
    EXPECT_STREQ(pmixcpp::status_name(PMIX_SUCCESS), "PMIX_SUCCESS");
    EXPECT_STREQ(pmixcpp::status_name(PMIX_ERR_NOT_FOUND), "PMIX_ERR_NOT_FOUND");
    EXPECT_STREQ(pmixcpp::status_name(PMIX_MODEL_DECLARED), "PMIX_MODEL_DECLARED");
    // current names win over older aliases of the same value
    EXPECT_STREQ(pmixcpp::status_name(-3), "PMIX_DEBUGGER_RELEASE");
    EXPECT_STREQ(pmixcpp::status_name(-145), "PMIX_EVENT_JOB_END");
    EXPECT_STREQ(pmixcpp::status_name(-231), "PMIX_EVENT_NODE_DOWN");
    EXPECT_STREQ(pmixcpp::data_type_name(PMIX_UINT16), "PMIX_UINT16");
    EXPECT_STREQ(pmixcpp::data_type_name(PMIX_DATA_ARRAY), "PMIX_DATA_ARRAY");
    EXPECT_STREQ(pmixcpp::scope_name(PMIX_GLOBAL), "PMIX_GLOBAL");
    EXPECT_STREQ(pmixcpp::persistence_name(PMIX_PERSIST_APP), "PMIX_PERSIST_APP");
    EXPECT_STREQ(pmixcpp::data_range_name(PMIX_RANGE_INVALID), "PMIX_RANGE_INVALID");
    EXPECT_STREQ(pmixcpp::alloc_directive_name(PMIX_ALLOC_EXTEND), "PMIX_ALLOC_EXTEND");
    EXPECT_STREQ(pmixcpp::job_state_name(PMIX_JOB_STATE_RUNNING), "PMIX_JOB_STATE_RUNNING");
    EXPECT_STREQ(pmixcpp::proc_state_name(PMIX_PROC_STATE_ABORTED), "PMIX_PROC_STATE_ABORTED");
    EXPECT_STREQ(pmixcpp::link_state_name(PMIX_LINK_UP), "PMIX_LINK_UP");
    EXPECT_STREQ(pmixcpp::value_cmp_name(PMIX_EQUAL), "PMIX_EQUAL");
}

TEST(ValueNames, UnknownValuesNeverNull) {
    EXPECT_STREQ(pmixcpp::status_name(-2999), "UNKNOWN-STATUS");
    EXPECT_STREQ(pmixcpp::status_name(12345), "UNKNOWN-STATUS");
    EXPECT_STREQ(pmixcpp::data_type_name(29), "UNKNOWN-DATA-TYPE");  // hole of a retired type
    EXPECT_STREQ(pmixcpp::data_type_name(0xFFFF), "UNKNOWN-DATA-TYPE");
    EXPECT_STREQ(pmixcpp::scope_name(200), "UNKNOWN-SCOPE");
    EXPECT_STREQ(pmixcpp::persistence_name(100), "UNKNOWN-PERSISTENCE");
    EXPECT_STREQ(pmixcpp::data_range_name(100), "UNKNOWN-RANGE");
    EXPECT_STREQ(pmixcpp::alloc_directive_name(0), "UNKNOWN-ALLOC-DIRECTIVE");
    EXPECT_STREQ(pmixcpp::job_state_name(99), "UNKNOWN-JOB-STATE");
    EXPECT_STREQ(pmixcpp::proc_state_name(255), "UNKNOWN-PROC-STATE");
    EXPECT_STREQ(pmixcpp::link_state_name(9), "UNKNOWN-LINK-STATE");
    EXPECT_STREQ(pmixcpp::value_cmp_name(static_cast<pmix_value_cmp_t>(77)), "UNKNOWN-COMPARISON");
    for (int v = -5000; v <= 100; ++v) ASSERT_NE(pmixcpp::status_name(v), nullptr);
    for (int v = 0; v <= 0xFFFF; ++v)
        ASSERT_NE(pmixcpp::data_type_name(static_cast<pmix_data_type_t>(v)), nullptr);
}

TEST(ValueNames, BitMasks) {
    EXPECT_STREQ(pmixcpp::iof_channel_name(PMIX_FWD_NO_CHANNELS), "NONE");
    EXPECT_STREQ(pmixcpp::iof_channel_name(PMIX_FWD_STDOUT_CHANNEL | PMIX_FWD_STDERR_CHANNEL),
                 "PMIX_FWD_STDOUT_CHANNEL|PMIX_FWD_STDERR_CHANNEL");
    EXPECT_STREQ(pmixcpp::iof_channel_name(PMIX_FWD_ALL_CHANNELS),
                 "PMIX_FWD_STDIN_CHANNEL|PMIX_FWD_STDOUT_CHANNEL|PMIX_FWD_STDERR_CHANNEL|"
                 "PMIX_FWD_STDDIAG_CHANNEL|0xf0");
    EXPECT_STREQ(pmixcpp::device_type_name(PMIX_DEVTYPE_GPU), "PMIX_DEVTYPE_GPU");
    EXPECT_STREQ(pmixcpp::device_type_name(0x8000000000000000ull), "0x8000000000000000");
    EXPECT_STREQ(pmixcpp::info_directives_name(PMIX_INFO_REQD | PMIX_INFO_ARRAY_END),
                 "PMIX_INFO_REQD|PMIX_INFO_ARRAY_END");
}

TEST(AttributeNames, LookupBothWays) {
    EXPECT_STREQ(pmixcpp::attribute_key("PMIX_JOB_SIZE"), "pmix.job.size");
    EXPECT_STREQ(pmixcpp::attribute_name("pmix.job.size"), "PMIX_JOB_SIZE");
    EXPECT_STREQ(pmixcpp::attribute_name("pmix.lrank"), "PMIX_LOCAL_RANK");
    EXPECT_STREQ(pmixcpp::attribute_key("PMIX_SERVER_SCHEDULER"), "pmix.srv.sched");
    // a shared key resolves to the current name, not the legacy alias
    EXPECT_STREQ(pmixcpp::attribute_name("pmix.pdata"), "PMIX_PROC_INFO_ARRAY");
    EXPECT_STREQ(pmixcpp::attribute_name("pmix.alloc.net"), "PMIX_ALLOC_FABRIC");
    EXPECT_EQ(pmixcpp::attribute_key("PMIX_NO_SUCH_THING"), nullptr);
    EXPECT_EQ(pmixcpp::attribute_name("pmix.no.such.key"), nullptr);
    EXPECT_EQ(pmixcpp::attribute_key(nullptr), nullptr);
    EXPECT_EQ(pmixcpp::attribute_name(nullptr), nullptr);
}

TEST(AttributeNames, TableIsConsistent) {
    const auto table = pmixcpp::attribute_table();
    EXPECT_GE(table.size(), 500u);
    std::set<std::string> names;
    for (const auto &entry : table) {
        EXPECT_TRUE(names.insert(entry.name).second) << "duplicate name " << entry.name;
        EXPECT_EQ(std::strncmp(entry.name, "PMIX_", 5), 0) << entry.name;
        EXPECT_EQ(std::strncmp(entry.key, "pmix", 4), 0) << entry.name << " = " << entry.key;
        EXPECT_LE(std::strlen(entry.key), size_t{PMIX_MAX_KEYLEN});
        EXPECT_STREQ(pmixcpp::attribute_key(entry.name), entry.key);
        // name -> key -> name returns this name or the earlier one sharing the key
        const char *back = pmixcpp::attribute_name(entry.key);
        ASSERT_NE(back, nullptr);
        EXPECT_STREQ(pmixcpp::attribute_key(back), entry.key);
    }
}

// ------------------------------------------------------------------ macros

TEST(Macros, InlineHelpersBehave) {
    pmix_proc_t a, b;
    PMIX_PROC_LOAD(&a, "job-1", 3);
    PMIX_LOAD_PROCID(&b, "job-1", PMIX_RANK_WILDCARD);
    EXPECT_STREQ(a.nspace, "job-1");
    EXPECT_EQ(a.rank, 3u);
    EXPECT_TRUE(PMIX_CHECK_PROCID(&a, &b));
    EXPECT_TRUE(PMIX_CHECK_NSPACE(a.nspace, "job-1"));
    EXPECT_FALSE(PMIX_CHECK_NSPACE(a.nspace, "job-2"));

    std::string longname(400, 'x');
    PMIX_LOAD_NSPACE(a.nspace, longname.c_str());
    EXPECT_EQ(std::strlen(a.nspace), size_t{PMIX_MAX_NSLEN});

    pmix_info_t *info = nullptr;
    PMIX_INFO_CREATE(info, 3);
    ASSERT_NE(info, nullptr);
    EXPECT_TRUE(PMIX_INFO_IS_END(&info[2]));
    EXPECT_FALSE(PMIX_INFO_IS_END(&info[0]));
    EXPECT_EQ(info[0].value.type, PMIX_UNDEF);
    EXPECT_TRUE(PMIX_INFO_TRUE(&info[0]));  // an absent value means "true"
    PMIX_LOAD_KEY(info[0].key, PMIX_COLLECT_DATA);
    EXPECT_TRUE(PMIX_CHECK_KEY(&info[0], "pmix.collect"));
    PMIX_INFO_REQUIRED(&info[0]);
    EXPECT_TRUE(PMIX_INFO_IS_REQUIRED(&info[0]));
    PMIX_INFO_OPTIONAL(&info[0]);
    EXPECT_TRUE(PMIX_INFO_IS_OPTIONAL(&info[0]));
    info[1].value.type = PMIX_STRING;
    info[1].value.data.string = const_cast<char *>(" False");
    EXPECT_FALSE(PMIX_INFO_TRUE(&info[1]));
    info[1].value.data.string = const_cast<char *>("yes");
    EXPECT_TRUE(PMIX_INFO_TRUE(&info[1]));
    info[1].value.type = PMIX_UNDEF;
    free(info);  // values are empty; PMIX_INFO_FREE would call into libpmix

    char **argv = nullptr;
    PMIX_ARGV_SPLIT(argv, "a,,b,c", ',');
    int n = 0;
    PMIX_ARGV_COUNT(n, argv);
    EXPECT_EQ(n, 3);
    pmix_status_t rc;
    PMIX_ARGV_PREPEND(rc, argv, "z");
    EXPECT_EQ(rc, PMIX_SUCCESS);
    PMIX_ARGV_APPEND_UNIQUE(rc, &argv, "b");
    char *joined = nullptr;
    PMIX_ARGV_JOIN(joined, argv, ':');
    EXPECT_STREQ(joined, "z:a:b:c");
    free(joined);
    PMIX_SETENV(rc, "A", "1", &argv);
    PMIX_SETENV(rc, "A", "2", &argv);
    EXPECT_STREQ(argv[4], "A=2");
    PMIX_ARGV_FREE(argv);

    pmix_data_array_t darray;
    PMIX_DATA_ARRAY_CONSTRUCT(&darray, 4, PMIX_INFO);
    ASSERT_EQ(darray.size, 4u);
    EXPECT_TRUE(PMIX_INFO_IS_END(&static_cast<pmix_info_t *>(darray.array)[3]));
    free(darray.array);
    PMIX_DATA_ARRAY_CONSTRUCT(&darray, 2, PMIX_UINT32);
    EXPECT_EQ(darray.size, 2u);
    free(darray.array);

    pmix_value_t v;
    PMIX_VALUE_CONSTRUCT(&v);
    v.type = PMIX_UINT16;
    v.data.uint16 = 7;
    size_t got = 0;
    PMIX_VALUE_GET_NUMBER(rc, &v, got, size_t);
    EXPECT_EQ(rc, PMIX_SUCCESS);
    EXPECT_EQ(got, 7u);
    v.type = PMIX_STRING;
    PMIX_VALUE_GET_NUMBER(rc, &v, got, size_t);
    EXPECT_EQ(rc, PMIX_ERR_BAD_PARAM);
}
