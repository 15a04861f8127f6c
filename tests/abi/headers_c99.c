/* Compile-only check: our public headers are valid C99 (and, compiled as
 * C++, valid C++) with every convenience macro expanded at least once.
 * Built by tests/abi/check-headers.sh with -Wall -Wextra -Werror -pedantic. */
#include <pmix.h>
#include <pmix_server.h>
#include <pmix_tool.h>
/* the PMI-1 and PMI-2 headers of client/pmi, together (PMI_keyval_t is defined once) */
#include <pmi.h>
#include <pmi2.h>

int abi_exercise_macros(void);

int abi_exercise_macros(void)
{
    pmix_proc_t proc, *procs = NULL;
    pmix_info_t *info = NULL, one;
    pmix_value_t value, *vptr = NULL;
    pmix_pdata_t *pdata = NULL, pd;
    pmix_app_t *apps = NULL;
    pmix_query_t *queries = NULL;
    pmix_data_array_t darray, *dptr = NULL;
    pmix_byte_object_t bo, *bos = NULL;
    pmix_envar_t envar;
    pmix_data_buffer_t *buf = NULL, sbuf;
    pmix_proc_info_t *pinfo = NULL;
    pmix_coord_t *coord = NULL;
    pmix_geometry_t *geo = NULL;
    pmix_device_distance_t *dist = NULL;
    pmix_endpoint_t *ep = NULL;
    pmix_regattr_t attr, attr2;
    pmix_topology_t topo;
    pmix_cpuset_t cpuset;
    pmix_fabric_t fabric;
    pmix_proc_stats_t *pstats = NULL;
    pmix_node_stats_t *nstats = NULL;
    pmix_value_t undef = PMIX_VALUE_STATIC_INIT;
    pmix_info_t sinfo = PMIX_INFO_STATIC_INIT;
    pmix_proc_t sproc = PMIX_PROC_STATIC_INIT;
    pmix_status_t rc = PMIX_SUCCESS;
    void *list = NULL;
    char **argv = NULL, *joined = NULL, *data = NULL;
    size_t size = 0;
    uint32_t u32 = 4, n = 0;
    int count = 0;
    pmix_nspace_t cluster, ns;

    PMIX_PROC_LOAD(&proc, "job", 0);
    PMIX_LOAD_PROCID(&proc, "job", PMIX_RANK_WILDCARD);
    PMIX_PROC_CREATE(procs, 2);
    PMIX_XFER_PROCID(&procs[0], &proc);
    count += PMIX_CHECK_PROCID(&proc, &procs[0]);
    count += PMIX_CHECK_NSPACE(proc.nspace, "job");
    count += PMIX_PROCID_INVALID(&sproc);
    PMIX_PROC_FREE(procs, 2);
    PMIX_MULTICLUSTER_NSPACE_CONSTRUCT(ns, "cl", "job");
    PMIX_MULTICLUSTER_NSPACE_PARSE(ns, cluster, proc.nspace);

    PMIX_INFO_CREATE(info, 3);
    PMIX_INFO_LOAD(&info[0], PMIX_COLLECT_DATA, NULL, PMIX_BOOL);
    PMIX_INFO_REQUIRED(&info[0]);
    count += PMIX_INFO_IS_REQUIRED(&info[0]) + PMIX_INFO_IS_OPTIONAL(&info[1]);
    count += PMIX_INFO_IS_END(&info[2]) + PMIX_INFO_TRUE(&info[0]);
    count += PMIX_CHECK_KEY(&info[0], PMIX_COLLECT_DATA);
    PMIX_INFO_CONSTRUCT(&one);
    PMIX_INFO_XFER(&one, &info[0]);
    PMIX_INFO_DESTRUCT(&one);
    PMIX_INFO_FREE(info, 3);
    PMIX_INFO_DESTRUCT(&sinfo);

    PMIX_VALUE_CONSTRUCT(&value);
    PMIX_VALUE_LOAD(&value, &u32, PMIX_UINT32);
    PMIX_VALUE_GET_NUMBER(rc, &value, n, uint32_t);
    PMIX_VALUE_XFER(rc, vptr, &value);
    PMIX_VALUE_RELEASE(vptr);
    PMIX_VALUE_DESTRUCT(&value);
    count += PMIX_CHECK_TRUE(&undef) + PMIX_CHECK_BOOL(&undef);

    PMIX_INFO_LIST_START(list);
    PMIX_INFO_LIST_ADD(rc, list, PMIX_TIMEOUT, &count, PMIX_INT);
    PMIX_INFO_LIST_CONVERT(rc, list, &darray);
    PMIX_INFO_LIST_RELEASE(list);
    PMIX_DATA_ARRAY_DESTRUCT(&darray);
    PMIX_DATA_ARRAY_CREATE(dptr, 4, PMIX_PROC);
    PMIX_DATA_ARRAY_FREE(dptr);
    PMIX_DATA_ARRAY_CONSTRUCT(&darray, 2, PMIX_INFO);
    PMIX_DATA_ARRAY_DESTRUCT(&darray);

    PMIX_PDATA_CREATE(pdata, 2);
    PMIX_PDATA_LOAD(&pdata[0], &proc, "key", "val", PMIX_STRING);
    PMIX_PDATA_XFER(&pd, &pdata[0]);
    PMIX_PDATA_DESTRUCT(&pd);
    PMIX_PDATA_FREE(pdata, 2);

    PMIX_APP_CREATE(apps, 1);
    PMIX_ARGV_APPEND(rc, apps[0].argv, "a.out");
    PMIX_APP_INFO_CREATE(&apps[0], 1);
    PMIX_APP_FREE(apps, 1);

    PMIX_QUERY_CREATE(queries, 1);
    PMIX_ARGV_APPEND(rc, queries[0].keys, PMIX_QUERY_NAMESPACES);
    PMIX_QUERY_QUALIFIERS_CREATE(&queries[0], 1);
    PMIX_QUERY_FREE(queries, 1);

    PMIX_ARGV_SPLIT(argv, "a,b,,c", ',');
    PMIX_ARGV_PREPEND(rc, argv, "z");
    PMIX_ARGV_APPEND_UNIQUE(rc, &argv, "a");
    PMIX_ARGV_COUNT(count, argv);
    PMIX_ARGV_JOIN(joined, argv, ':');
    free(joined);
    PMIX_SETENV(rc, "A", "1", &argv);
    PMIX_ARGV_FREE(argv);

    PMIX_BYTE_OBJECT_CONSTRUCT(&bo);
    data = (char *)malloc(4);
    size = 4;
    PMIX_BYTE_OBJECT_LOAD(&bo, data, size);
    PMIX_BYTE_OBJECT_DESTRUCT(&bo);
    PMIX_BYTE_OBJECT_CREATE(bos, 2);
    PMIX_BYTE_OBJECT_FREE(bos, 2);

    PMIX_ENVAR_CONSTRUCT(&envar);
    PMIX_ENVAR_LOAD(&envar, "PATH", "/bin", ':');
    PMIX_ENVAR_DESTRUCT(&envar);

    PMIX_DATA_BUFFER_CREATE(buf);
    PMIX_DATA_BUFFER_LOAD(buf, NULL, 0);
    PMIX_DATA_BUFFER_UNLOAD(buf, data, size);
    PMIX_DATA_BUFFER_RELEASE(buf);
    PMIX_DATA_BUFFER_CONSTRUCT(&sbuf);
    PMIX_DATA_BUFFER_DESTRUCT(&sbuf);

    PMIX_PROC_INFO_CREATE(pinfo, 1);
    PMIX_PROC_INFO_FREE(pinfo, 1);
    PMIX_COORD_CREATE(coord, 3, 1);
    PMIX_COORD_FREE(coord, 1);
    PMIX_GEOMETRY_CREATE(geo, 1);
    PMIX_GEOMETRY_FREE(geo, 1);
    PMIX_DEVICE_DIST_CREATE(dist, 2);
    PMIX_DEVICE_DIST_FREE(dist, 2);
    PMIX_ENDPOINT_CREATE(ep, 1);
    PMIX_ENDPOINT_FREE(ep, 1);
    PMIX_REGATTR_CONSTRUCT(&attr);
    PMIX_REGATTR_LOAD(&attr, "PMIX_JOB_SIZE", PMIX_JOB_SIZE, PMIX_UINT32, "job size");
    PMIX_REGATTR_XFER(&attr2, &attr);
    PMIX_REGATTR_DESTRUCT(&attr);
    PMIX_REGATTR_DESTRUCT(&attr2);
    PMIX_TOPOLOGY_CONSTRUCT(&topo);
    PMIX_TOPOLOGY_DESTRUCT(&topo);
    PMIX_CPUSET_CONSTRUCT(&cpuset);
    PMIX_CPUSET_DESTRUCT(&cpuset);
    PMIX_FABRIC_CONSTRUCT(&fabric);
    PMIX_PROC_STATS_CREATE(pstats, 1);
    PMIX_PROC_STATS_FREE(pstats, 1);
    PMIX_NODE_STATS_CREATE(nstats, 1);
    PMIX_NODE_STATS_FREE(nstats, 1);
    PMIx_Heartbeat();

    count += PMIX_RANK_IS_VALID(proc.rank) + PMIX_SYSTEM_EVENT(rc);
    return count + (int)n;
}
