// The C API without a server: PMIX_ERR_INIT everywhere, argument checks, value/info/list
// helpers, data pack/unpack, names.
#include <gtest/gtest.h>
#include <hwloc.h>
#include <pmix.h>
#include <pmix_server.h>
#include <pmix_tool.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

TEST(ApiNoServer, VersionAndNames) {
    const char *v = PMIx_Get_version();
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(std::string(v).substr(0, 2), "4.");
    EXPECT_STREQ(PMIx_Error_string(PMIX_ERR_NOT_FOUND), "PMIX_ERR_NOT_FOUND");
    EXPECT_STREQ(PMIx_Data_type_string(PMIX_BYTE_OBJECT), "PMIX_BYTE_OBJECT");
    EXPECT_STREQ(PMIx_Get_attribute_string("PMIX_JOB_SIZE"), "pmix.job.size");
    EXPECT_STREQ(PMIx_Get_attribute_name("pmix.job.size"), "PMIX_JOB_SIZE");
    EXPECT_STREQ(PMIx_Get_attribute_string("not.an.attribute"), "not.an.attribute");
    char *s = PMIx_Info_directives_string(PMIX_INFO_REQD);
    ASSERT_NE(s, nullptr);
    free(s);
}

TEST(ApiNoServer, EverythingNeedsInit) {
    unsetenv("PMIX_NAMESPACE");
    pmix_proc_t me;
    EXPECT_EQ(PMIx_Init(&me, nullptr, 0), PMIX_ERR_INIT);  // not started by our server
    EXPECT_EQ(PMIx_Initialized(), 0);
    pmix_value_t val;
    uint32_t u = 1;
    PMIX_VALUE_LOAD(&val, &u, PMIX_UINT32);
    pmix_value_t *out = nullptr;
    EXPECT_EQ(PMIx_Put(PMIX_GLOBAL, "k", &val), PMIX_ERR_INIT);
    EXPECT_EQ(PMIx_Commit(), PMIX_ERR_INIT);
    EXPECT_EQ(PMIx_Get(nullptr, "k", nullptr, 0, &out), PMIX_ERR_INIT);
    EXPECT_EQ(PMIx_Fence(nullptr, 0, nullptr, 0), PMIX_ERR_INIT);
    EXPECT_EQ(PMIx_Fence_nb(nullptr, 0, nullptr, 0, nullptr, nullptr), PMIX_ERR_INIT);
    EXPECT_EQ(PMIx_Store_internal(&me, "k", &val), PMIX_ERR_INIT);
    EXPECT_EQ(PMIx_Finalize(nullptr, 0), PMIX_ERR_INIT);
    EXPECT_EQ(PMIx_Abort(1, "x", nullptr, 0), PMIX_ERR_INIT);
    EXPECT_EQ(PMIx_Register_event_handler(nullptr, 0, nullptr, 0, nullptr, nullptr, nullptr), PMIX_ERR_INIT);
    EXPECT_EQ(PMIx_Job_control_nb(nullptr, 0, nullptr, 0, nullptr, nullptr), PMIX_ERR_INIT);
    pmix_proc_t *procs;
    size_t n;
    EXPECT_EQ(PMIx_Resolve_peers(nullptr, nullptr, &procs, &n), PMIX_ERR_INIT);
    // Unsupported calls answer at once.
    EXPECT_EQ(PMIx_Publish(nullptr, 0), PMIX_ERR_INIT);
    EXPECT_EQ(PMIx_Spawn(nullptr, 0, nullptr, 0, nullptr), PMIX_ERR_INIT);
    EXPECT_EQ(PMIx_Connect(nullptr, 0, nullptr, 0), PMIX_ERR_INIT);
    EXPECT_EQ(PMIx_Disconnect_nb(nullptr, 0, nullptr, 0, nullptr, nullptr), PMIX_ERR_INIT);
    EXPECT_EQ(PMIx_Query_info_nb(nullptr, 0, nullptr, nullptr), PMIX_ERR_BAD_PARAM);
    EXPECT_EQ(PMIx_tool_init(nullptr, nullptr, 0), PMIX_ERR_NOT_SUPPORTED);
}

TEST(ApiNoServer, LogBeforeInitStillPrints) {
    pmix_info_t i;
    PMIX_INFO_LOAD(&i, PMIX_LOG_MSG, "early error text", PMIX_STRING);
    testing::internal::CaptureStderr();
    EXPECT_EQ(PMIx_Log_nb(&i, 1, nullptr, 0, nullptr, nullptr), PMIX_ERR_INIT);
    std::string err = testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("early error text"), std::string::npos);
    PMIX_INFO_DESTRUCT(&i);
}

TEST(ValueHelpers, LoadUnloadXferCompare) {
    pmix_value_t a, b;
    PMIX_VALUE_LOAD(&a, "text", PMIX_STRING);
    ASSERT_EQ(PMIx_Value_xfer(&b, &a), PMIX_SUCCESS);
    EXPECT_EQ(PMIx_Value_compare(&a, &b), PMIX_EQUAL);
    EXPECT_NE(a.data.string, b.data.string);
    void *data = nullptr;
    size_t sz = 0;
    ASSERT_EQ(PMIx_Value_unload(&b, &data, &sz), PMIX_SUCCESS);
    EXPECT_STREQ(static_cast<char *>(data), "text");
    free(data);
    char *str = PMIx_Value_string(&a);
    ASSERT_NE(str, nullptr);
    EXPECT_NE(std::string(str).find("text"), std::string::npos);
    free(str);
    PMIx_Value_destruct(&a);
    PMIx_Value_destruct(&b);
    EXPECT_EQ(PMIx_Value_xfer(nullptr, &a), PMIX_ERR_BAD_PARAM);
    EXPECT_EQ(PMIx_Value_load(nullptr, "x", PMIX_STRING), PMIX_ERR_BAD_PARAM);
}

TEST(ValueHelpers, UnloadOfAnIntegerIntoTheCallersOwnPlace) {
    // OpenMPI 5.0's MPI_Session_get_num_psets: PMIX_VALUE_UNLOAD(rc, v, (void **)&count, &sz)
    // with count == 0; the count lands in `count` itself.
    pmix_value_t v;
    size_t n = 7;
    PMIX_VALUE_LOAD(&v, &n, PMIX_SIZE);
    size_t count = 0, sz = 0;
    ASSERT_EQ(PMIx_Value_unload(&v, reinterpret_cast<void **>(&count), &sz), PMIX_SUCCESS);
    EXPECT_EQ(count, 7u);
    EXPECT_EQ(sz, sizeof(size_t));
    // the ordinary way still copies into the storage *data points to
    size_t out = 0;
    void *p = &out;
    ASSERT_EQ(PMIx_Value_unload(&v, &p, &sz), PMIX_SUCCESS);
    EXPECT_EQ(out, 7u);
    EXPECT_EQ(p, static_cast<void *>(&out));
    PMIx_Value_destruct(&v);
    // a type wider than a pointer, with no storage: refused as before
    pmix_proc_t proc;
    PMIX_LOAD_PROCID(&proc, "ns", 1);
    PMIX_VALUE_LOAD(&v, &proc, PMIX_PROC);
    void *none = nullptr;
    EXPECT_EQ(PMIx_Value_unload(&v, &none, &sz), PMIX_ERR_BAD_PARAM);
    PMIx_Value_destruct(&v);
}

TEST(InfoHelpers, LoadRejectsBadKeys) {
    pmix_info_t i;
    uint32_t u = 3;
    std::string longkey(PMIX_MAX_KEYLEN + 1, 'k');
    EXPECT_EQ(PMIx_Info_load(&i, nullptr, &u, PMIX_UINT32), PMIX_ERR_BAD_PARAM);
    EXPECT_EQ(PMIx_Info_load(&i, longkey.c_str(), &u, PMIX_UINT32), PMIX_ERR_BAD_PARAM);
    std::string maxkey(PMIX_MAX_KEYLEN, 'k');
    ASSERT_EQ(PMIx_Info_load(&i, maxkey.c_str(), &u, PMIX_UINT32), PMIX_SUCCESS);
    EXPECT_EQ(strlen(i.key), static_cast<size_t>(PMIX_MAX_KEYLEN));
    PMIX_INFO_DESTRUCT(&i);
}

TEST(InfoList, AddXferInsertConvert) {
    void *list = PMIx_Info_list_start();
    ASSERT_NE(list, nullptr);
    pmix_data_array_t empty;
    EXPECT_EQ(PMIx_Info_list_convert(list, &empty), PMIX_ERR_EMPTY);
    uint32_t u = 7;
    ASSERT_EQ(PMIx_Info_list_add(list, "a", &u, PMIX_UINT32), PMIX_SUCCESS);
    ASSERT_EQ(PMIx_Info_list_add(list, "b", "str", PMIX_STRING), PMIX_SUCCESS);
    EXPECT_EQ(PMIx_Info_list_add(list, nullptr, &u, PMIX_UINT32), PMIX_ERR_BAD_PARAM);
    pmix_info_t x;
    PMIX_INFO_LOAD(&x, "c", "copied", PMIX_STRING);
    ASSERT_EQ(PMIx_Info_list_xfer(list, &x), PMIX_SUCCESS);
    ASSERT_EQ(PMIx_Info_list_insert(list, &x), PMIX_SUCCESS);  // caller keeps ownership
    pmix_data_array_t arr;
    ASSERT_EQ(PMIx_Info_list_convert(list, &arr), PMIX_SUCCESS);
    PMIx_Info_list_release(list);
    ASSERT_EQ(arr.type, PMIX_INFO);
    ASSERT_EQ(arr.size, 4u);
    auto *infos = static_cast<pmix_info_t *>(arr.array);
    EXPECT_STREQ(infos[0].key, "a");
    EXPECT_EQ(infos[0].value.data.uint32, 7u);
    EXPECT_STREQ(infos[1].value.data.string, "str");
    EXPECT_STREQ(infos[2].value.data.string, "copied");
    EXPECT_STREQ(infos[3].value.data.string, "copied");
    EXPECT_EQ(infos[3].flags & PMIX_INFO_PERSISTENT, 0u);
    PMIx_Data_array_destruct(&arr);
    PMIX_INFO_DESTRUCT(&x);
}

TEST(DataBuffer, PackUnpackRoundTrip) {
    pmix_data_buffer_t *buf;
    PMIX_DATA_BUFFER_CREATE(buf);
    int32_t ints[3] = {1, -2, 3};
    ASSERT_EQ(PMIx_Data_pack(nullptr, buf, ints, 3, PMIX_INT32), PMIX_SUCCESS);
    const char *strs[2] = {"one", "two"};
    ASSERT_EQ(PMIx_Data_pack(nullptr, buf, strs, 2, PMIX_STRING), PMIX_SUCCESS);
    pmix_proc_t p{};
    strcpy(p.nspace, "ns");
    p.rank = 5;
    ASSERT_EQ(PMIx_Data_pack(nullptr, buf, &p, 1, PMIX_PROC), PMIX_SUCCESS);
    pmix_value_t v;
    PMIX_VALUE_LOAD(&v, "val", PMIX_STRING);
    ASSERT_EQ(PMIx_Data_pack(nullptr, buf, &v, 1, PMIX_VALUE), PMIX_SUCCESS);
    PMIX_VALUE_DESTRUCT(&v);
    EXPECT_EQ(PMIx_Data_pack(nullptr, buf, nullptr, 1, PMIX_INT32), PMIX_ERR_BAD_PARAM);

    // Move the payload through a byte object, as a transport would.
    pmix_byte_object_t bo;
    PMIX_DATA_BUFFER_UNLOAD(buf, bo.bytes, bo.size);
    PMIX_DATA_BUFFER_RELEASE(buf);
    pmix_data_buffer_t rb;
    PMIX_DATA_BUFFER_CONSTRUCT(&rb);
    PMIX_DATA_BUFFER_LOAD(&rb, bo.bytes, bo.size);

    int32_t got[3];
    int32_t n = 2;
    EXPECT_EQ(PMIx_Data_unpack(nullptr, &rb, got, &n, PMIX_INT32), PMIX_ERR_UNPACK_INADEQUATE_SPACE);
    n = 3;
    EXPECT_EQ(PMIx_Data_unpack(nullptr, &rb, got, &n, PMIX_STRING),
              PMIX_ERR_UNPACK_FAILURE);  // type mismatch
    ASSERT_EQ(PMIx_Data_unpack(nullptr, &rb, got, &n, PMIX_INT32), PMIX_SUCCESS);
    EXPECT_EQ(n, 3);
    EXPECT_EQ(got[1], -2);
    char *gs[2];
    n = 2;
    ASSERT_EQ(PMIx_Data_unpack(nullptr, &rb, gs, &n, PMIX_STRING), PMIX_SUCCESS);
    EXPECT_STREQ(gs[0], "one");
    EXPECT_STREQ(gs[1], "two");
    free(gs[0]);
    free(gs[1]);

    // copy_payload moves the unread rest into another buffer
    pmix_data_buffer_t rest;
    PMIX_DATA_BUFFER_CONSTRUCT(&rest);
    ASSERT_EQ(PMIx_Data_copy_payload(&rest, &rb), PMIX_SUCCESS);
    pmix_proc_t gp;
    n = 1;
    ASSERT_EQ(PMIx_Data_unpack(nullptr, &rest, &gp, &n, PMIX_PROC), PMIX_SUCCESS);
    EXPECT_STREQ(gp.nspace, "ns");
    EXPECT_EQ(gp.rank, 5u);
    pmix_value_t gv;
    n = 1;
    ASSERT_EQ(PMIx_Data_unpack(nullptr, &rest, &gv, &n, PMIX_VALUE), PMIX_SUCCESS);
    EXPECT_STREQ(gv.data.string, "val");
    PMIX_VALUE_DESTRUCT(&gv);
    n = 1;
    EXPECT_EQ(PMIx_Data_unpack(nullptr, &rest, &gv, &n, PMIX_VALUE), PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER);
    PMIX_DATA_BUFFER_DESTRUCT(&rest);
    PMIX_DATA_BUFFER_DESTRUCT(&rb);
}

TEST(DataBuffer, CopyAndPrint) {
    uint64_t x = 42;
    void *copy = nullptr;
    ASSERT_EQ(PMIx_Data_copy(&copy, &x, PMIX_UINT64), PMIX_SUCCESS);
    EXPECT_EQ(*static_cast<uint64_t *>(copy), 42u);
    free(copy);
    char s[] = "abc";
    ASSERT_EQ(PMIx_Data_copy(&copy, s, PMIX_STRING), PMIX_SUCCESS);
    EXPECT_STREQ(static_cast<char *>(copy), "abc");
    free(copy);
    char *out = nullptr;
    char prefix[] = ">> ";
    ASSERT_EQ(PMIx_Data_print(&out, prefix, &x, PMIX_UINT64), PMIX_SUCCESS);
    EXPECT_NE(std::string(out).find("42"), std::string::npos);
    EXPECT_EQ(std::string(out).substr(0, 3), ">> ");
    free(out);
    uint8_t *cz = nullptr;
    size_t nz = 0;
    EXPECT_FALSE(PMIx_Data_compress(reinterpret_cast<const uint8_t *>("aaaa"), 4, &cz, &nz));
}

// PMIX_QUERY_STABLE/PROVISIONAL_ABI_VERSION are answered by the library itself, before PMIx_Init
// (OpenPMIx's examples/abi_no_init), blocking and non-blocking.
TEST(ApiNoServer, AbiVersionQueriesWithoutInit) {
    ASSERT_EQ(PMIx_Initialized(), 0);
    pmix_query_t *q = nullptr;
    PMIX_QUERY_CREATE(q, 2);
    pmix_status_t rc = PMIX_SUCCESS;  // set by PMIX_ARGV_APPEND
    PMIX_ARGV_APPEND(rc, q[0].keys, PMIX_QUERY_STABLE_ABI_VERSION);
    PMIX_ARGV_APPEND(rc, q[1].keys, PMIX_QUERY_PROVISIONAL_ABI_VERSION);
    ASSERT_EQ(rc, PMIX_SUCCESS);
    pmix_info_t *res = nullptr;
    size_t n = 0;
    ASSERT_EQ(PMIx_Query_info(q, 2, &res, &n), PMIX_SUCCESS);
    ASSERT_EQ(n, 2u);
    EXPECT_STREQ(res[0].key, PMIX_QUERY_STABLE_ABI_VERSION);
    EXPECT_EQ(res[0].value.type, PMIX_STRING);
    EXPECT_STREQ(res[0].value.data.string, "0.0");
    EXPECT_STREQ(res[1].key, PMIX_QUERY_PROVISIONAL_ABI_VERSION);
    PMIX_INFO_FREE(res, n);
    struct seen_t {
        pmix_status_t status = PMIX_ERROR;
        size_t n = 0;
    } seen;
    auto cb = [](pmix_status_t status, pmix_info_t *, size_t ninfo, void *cbdata, pmix_release_cbfunc_t release,
                 void *release_data) {
        auto *s = static_cast<seen_t *>(cbdata);
        s->status = status;
        s->n = ninfo;
        if (release) release(release_data);
    };
    ASSERT_EQ(PMIx_Query_info_nb(q, 1, cb, &seen), PMIX_SUCCESS);
    EXPECT_EQ(seen.status, PMIX_SUCCESS);
    EXPECT_EQ(seen.n, 1u);
    // anything else still needs the library initialised
    PMIX_ARGV_APPEND(rc, q[1].keys, PMIX_QUERY_NAMESPACES);
    EXPECT_EQ(PMIx_Query_info(q, 2, &res, &n), PMIX_ERR_INIT);
    PMIX_QUERY_FREE(q, 2);
}

// Topology and CPU sets from hwloc: one shared topology per process; locality strings compared
// field by field.
TEST(ApiNoServer, TopologyCpusetAndLocality) {
    pmix_topology_t t1, t2;
    PMIX_TOPOLOGY_CONSTRUCT(&t1);
    PMIX_TOPOLOGY_CONSTRUCT(&t2);
    ASSERT_EQ(PMIx_Load_topology(&t1), PMIX_SUCCESS);
    ASSERT_EQ(PMIx_Load_topology(&t2), PMIX_SUCCESS);
    ASSERT_NE(t1.topology, nullptr);
    EXPECT_EQ(t1.topology, t2.topology);  // loaded once
    EXPECT_EQ(strncmp(t1.source, "hwloc", 5), 0);
    EXPECT_GT(hwloc_get_nbobjs_by_type(static_cast<hwloc_topology_t>(t1.topology), HWLOC_OBJ_PU), 0);
    PMIx_Topology_destruct(&t1);
    PMIx_Topology_destruct(&t2);

    pmix_cpuset_t cs;
    PMIX_CPUSET_CONSTRUCT(&cs);
    ASSERT_EQ(PMIx_Get_cpuset(&cs, PMIX_CPUBIND_PROCESS), PMIX_SUCCESS);
    EXPECT_STREQ(cs.source, "hwloc");
    EXPECT_FALSE(hwloc_bitmap_iszero(static_cast<hwloc_bitmap_t>(cs.bitmap)));
    PMIx_Cpuset_destruct(&cs);
    ASSERT_EQ(PMIx_Parse_cpuset_string("hwloc:0-3,8", &cs), PMIX_SUCCESS);
    EXPECT_EQ(hwloc_bitmap_weight(static_cast<hwloc_bitmap_t>(cs.bitmap)), 5);
    PMIx_Cpuset_destruct(&cs);
    EXPECT_EQ(PMIx_Parse_cpuset_string("hwloc:x", &cs), PMIX_ERR_BAD_PARAM);

    pmix_locality_t loc = 0;
    ASSERT_EQ(PMIx_Get_relative_locality("SK0:L30:L20-1:L10:CR0:HT0", "SK0:L30:L21:L11:CR1:HT2", &loc), PMIX_SUCCESS);
    EXPECT_EQ(loc, PMIX_LOCALITY_SHARE_NODE | PMIX_LOCALITY_SHARE_PACKAGE | PMIX_LOCALITY_SHARE_L3CACHE |
                       PMIX_LOCALITY_SHARE_L2CACHE);
    ASSERT_EQ(PMIx_Get_relative_locality("SK0:CR0:HT0", "SK1:CR4:HT8", &loc), PMIX_SUCCESS);
    EXPECT_EQ(loc, PMIX_LOCALITY_SHARE_NODE);
    EXPECT_EQ(PMIx_Get_relative_locality(nullptr, "SK0", &loc), PMIX_ERR_BAD_PARAM);
}

// The functions PMIx v5 headers call in place of the v4 macros (client/struct_api.cc).
TEST(StructApi, ArgvSplitJoinAndEnv) {
    char **a = PMIx_Argv_split("x,,y", ',');
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(PMIx_Argv_count(a), 2);
    char **b = PMIx_Argv_split_with_empty("x,,y", ',');
    EXPECT_EQ(PMIx_Argv_count(b), 3);
    EXPECT_STREQ(b[1], "");
    char *joined = PMIx_Argv_join(b, ':');
    EXPECT_STREQ(joined, "x::y");
    free(joined);
    EXPECT_EQ(PMIx_Argv_append_unique_nosize(&a, "y"), PMIX_SUCCESS);
    EXPECT_EQ(PMIx_Argv_count(a), 2);
    EXPECT_EQ(PMIx_Argv_prepend_nosize(&a, "w"), PMIX_SUCCESS);
    EXPECT_STREQ(a[0], "w");
    EXPECT_EQ(PMIx_Argv_append_nosize(nullptr, "z"), PMIX_ERR_BAD_PARAM);
    char **env = nullptr;
    EXPECT_EQ(PMIx_Setenv("K", "1", true, &env), PMIX_SUCCESS);
    EXPECT_EQ(PMIx_Setenv("K", "2", false, &env), PMIX_ERR_EXISTS);
    EXPECT_STREQ(env[0], "K=1");  // not overwritten
    PMIx_Argv_free(a);
    PMIx_Argv_free(b);
    PMIx_Argv_free(env);
}

TEST(StructApi, KeysProcsAndNames) {
    pmix_proc_t p, q;
    PMIx_Load_procid(&p, "ns", 3);
    PMIx_Xfer_procid(&q, &p);
    EXPECT_TRUE(PMIx_Check_procid(&p, &q));
    EXPECT_FALSE(PMIx_Procid_invalid(&p));
    EXPECT_TRUE(PMIx_Check_rank(3, PMIX_RANK_WILDCARD));
    char *s = PMIx_Proc_string(&p);
    EXPECT_STREQ(s, "ns:3");
    free(s);
    pmix_key_t k;
    PMIx_Load_key(k, "pmix.my.key");
    EXPECT_TRUE(PMIx_Check_key(k, "pmix.my.key"));
    EXPECT_TRUE(PMIx_Check_reserved_key(k));
    EXPECT_TRUE(PMIx_Nspace_invalid(""));
    EXPECT_EQ(PMIx_Error_code("PMIX_ERR_NOT_FOUND"), PMIX_ERR_NOT_FOUND);
    EXPECT_EQ(PMIx_Error_code("PMIX_SUCCESS"), PMIX_SUCCESS);
    EXPECT_EQ(PMIx_Error_code("no such status"), PMIX_ERR_NOT_FOUND);
}

TEST(StructApi, CreateLoadFreeAndFlags) {
    pmix_info_t *info = PMIx_Info_create(2);
    ASSERT_NE(info, nullptr);
    EXPECT_EQ(info[1].value.type, PMIX_UNDEF);
    PMIx_Info_load(&info[0], "k", "value", PMIX_STRING);
    PMIx_Info_required(&info[0]);
    EXPECT_TRUE(PMIx_Info_is_required(&info[0]));
    PMIx_Info_optional(&info[0]);
    EXPECT_TRUE(PMIx_Info_is_optional(&info[0]));
    PMIx_Info_set_end(&info[1]);
    EXPECT_TRUE(PMIx_Info_is_end(&info[1]));
    EXPECT_EQ(PMIx_Info_true(&info[1]), PMIX_BOOL_TRUE);  // no value: a flag that is set
    size_t sz = 0;
    EXPECT_EQ(PMIx_Info_get_size(&info[0], &sz), PMIX_SUCCESS);
    EXPECT_GE(sz, sizeof(pmix_info_t) + 6);
    PMIx_Info_free(info, 2);

    pmix_data_array_t *arr = PMIx_Data_array_create(3, PMIX_UINT32);
    ASSERT_NE(arr, nullptr);
    EXPECT_EQ(arr->size, 3u);
    EXPECT_EQ(arr->type, PMIX_UINT32);
    PMIx_Data_array_free(arr);

    pmix_coord_t *c = PMIx_Coord_create(3, 2);
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c[1].dims, 3u);
    PMIx_Coord_free(c, 2);

    pmix_data_buffer_t *buf = PMIx_Data_buffer_create();
    ASSERT_NE(buf, nullptr);
    uint32_t v = 7;
    ASSERT_EQ(PMIx_Data_pack(nullptr, buf, &v, 1, PMIX_UINT32), PMIX_SUCCESS);
    char *bytes = nullptr;
    size_t n = 0;
    PMIx_Data_buffer_unload(buf, &bytes, &n);
    EXPECT_GT(n, 0u);
    PMIx_Data_buffer_load(buf, bytes, n);  // takes the bytes back
    uint32_t out = 0;
    int32_t cnt = 1;
    EXPECT_EQ(PMIx_Data_unpack(nullptr, buf, &out, &cnt, PMIX_UINT32), PMIX_SUCCESS);
    EXPECT_EQ(out, 7u);
    PMIx_Data_buffer_release(buf);
}

TEST(StructApi, InfoListPrependAndWalk) {
    void *list = PMIx_Info_list_start();
    uint32_t one = 1, two = 2;
    ASSERT_EQ(PMIx_Info_list_add(list, "second", &two, PMIX_UINT32), PMIX_SUCCESS);
    ASSERT_EQ(PMIx_Info_list_prepend(list, "first", &one, PMIX_UINT32), PMIX_SUCCESS);
    std::vector<std::string> keys;
    void *cursor = nullptr;
    void *next = nullptr;
    for (pmix_info_t *i = PMIx_Info_list_get_info(list, nullptr, &next); i != nullptr;
         i = next ? PMIx_Info_list_get_info(list, cursor = next, &next) : nullptr)
        keys.emplace_back(i->key);
    (void)cursor;
    EXPECT_EQ(keys, (std::vector<std::string>{"first", "second"}));
    EXPECT_EQ(PMIx_Info_list_get_info(nullptr, nullptr, &next), nullptr);
    PMIx_Info_list_release(list);
}
