// The functions PMIx v5 headers call where v4 headers expanded the convenience macros inline
// (construct/destruct/create/free/load of every public struct, argv and key helpers, info flags).
// Each is the macro of pmix_common.h wrapped in a function, so a v4 binary (macros inlined) and a
// v5 binary (these calls) do the same thing on the same library.
#include <pmix.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "api.h"
#include "pmix_strings.h"

using namespace pmixcpp;
using namespace pmixcpp::client;

// The MCA framework names of OpenPMIx 5, which OpenMPI 5's libopen-pal reads (to tell PMIx's
// MCA parameters from its own). This library has no MCA frameworks; the names are only data.
extern "C" __attribute__((visibility("default"))) char *pmix_framework_names[] = {
    const_cast<char *>("bfrops"), const_cast<char *>("gds"),     const_cast<char *>("pcompress"),
    const_cast<char *>("pdl"),    const_cast<char *>("pif"),     const_cast<char *>("pinstalldirs"),
    const_cast<char *>("plog"),   const_cast<char *>("pmdl"),    const_cast<char *>("pnet"),
    const_cast<char *>("preg"),   const_cast<char *>("psec"),    const_cast<char *>("psensor"),
    const_cast<char *>("psquash"), const_cast<char *>("pstat"),  const_cast<char *>("ptl"),
    nullptr};

namespace {

// n zeroed elements of T; nullptr for n == 0 or no memory
template <typename T>
T *zalloc(size_t n) {
    return n == 0 ? nullptr : static_cast<T *>(calloc(n, sizeof(T)));
}

// destruct n elements with D, then free the array
template <typename T, typename D>
void free_array(T *p, size_t n, D destruct) {
    if (p == nullptr) return;
    for (size_t i = 0; i < n; ++i) destruct(&p[i]);
    free(p);
}

size_t value_size(const pmix_value_t *v);

size_t array_size(const pmix_data_array_t *a) {
    if (a == nullptr) return 0;
    size_t total = sizeof(*a);
    if (a->array == nullptr) return total;
    switch (a->type) {
    case PMIX_INFO: {
        auto *info = static_cast<const pmix_info_t *>(a->array);
        for (size_t i = 0; i < a->size; ++i) total += sizeof(pmix_info_t) - sizeof(pmix_value_t) + value_size(&info[i].value);
        break;
    }
    case PMIX_VALUE: {
        auto *vals = static_cast<const pmix_value_t *>(a->array);
        for (size_t i = 0; i < a->size; ++i) total += value_size(&vals[i]);
        break;
    }
    case PMIX_STRING: {
        auto *strs = static_cast<char *const *>(a->array);
        for (size_t i = 0; i < a->size; ++i) total += sizeof(char *) + (strs[i] ? strlen(strs[i]) + 1 : 0);
        break;
    }
    default:
        total += a->size * pmix_hdr_element_size(a->type);
        break;
    }
    return total;
}

// bytes a value occupies, its own struct included, following pointers it owns
size_t value_size(const pmix_value_t *v) {
    if (v == nullptr) return 0;
    size_t total = sizeof(*v);
    switch (v->type) {
    case PMIX_STRING: return total + (v->data.string ? strlen(v->data.string) + 1 : 0);
    case PMIX_BYTE_OBJECT:
    case PMIX_COMPRESSED_STRING:
    case PMIX_COMPRESSED_BYTE_OBJECT: return total + v->data.bo.size;
    case PMIX_PROC: return total + sizeof(pmix_proc_t);
    case PMIX_DATA_ARRAY: return total + array_size(v->data.darray);
    case PMIX_ENVAR:
        return total + (v->data.envar.envar ? strlen(v->data.envar.envar) + 1 : 0) +
               (v->data.envar.value ? strlen(v->data.envar.value) + 1 : 0);
    default: return total;
    }
}

std::string rank_text(pmix_rank_t r) {
    switch (r) {
    case PMIX_RANK_WILDCARD: return "WILDCARD";
    case PMIX_RANK_UNDEF: return "UNDEF";
    case PMIX_RANK_INVALID: return "INVALID";
    case PMIX_RANK_LOCAL_NODE: return "LOCAL_NODE";
    case PMIX_RANK_LOCAL_PEERS: return "LOCAL_PEERS";
    default: return std::to_string(r);
    }
}

char *dup_string(const std::string &s) { return strdup(s.c_str()); }

}  // namespace

extern "C" {

// --- names and keys ---------------------------------------------------------------------------
PMIX_EXPORT pmix_status_t PMIx_Error_code(const char *errname) {
    if (errname == nullptr) return PMIX_ERR_BAD_PARAM;
    // status codes are small integers; the names table knows every one of them
    for (int s = 0; s >= -2000; --s)
        if (strcmp(status_name(s), errname) == 0) return s;
    for (int s = 1; s <= 2000; ++s)
        if (strcmp(status_name(s), errname) == 0) return s;
    return PMIX_ERR_NOT_FOUND;
}

PMIX_EXPORT char *PMIx_Proc_string(const pmix_proc_t *proc) {
    if (proc == nullptr) return strdup("NULL");
    return dup_string(std::string(proc->nspace, pmix_nslen(proc->nspace)) + ":" + rank_text(proc->rank));
}

PMIX_EXPORT char *PMIx_App_string(const pmix_app_t *app) {
    if (app == nullptr) return strdup("NULL");
    std::string s = std::string("cmd: ") + (app->cmd ? app->cmd : "NULL") + " argv:";
    for (char **a = app->argv; a && *a; ++a) s += std::string(" ") + *a;
    s += " cwd: " + std::string(app->cwd ? app->cwd : "NULL") + " maxprocs: " + std::to_string(app->maxprocs) +
         " ninfo: " + std::to_string(app->ninfo);
    return dup_string(s);
}

PMIX_EXPORT pmix_status_t PMIx_Value_get_size(const pmix_value_t *val, size_t *size) {
    if (val == nullptr || size == nullptr) return PMIX_ERR_BAD_PARAM;
    *size = value_size(val);
    return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_Info_get_size(const pmix_info_t *val, size_t *size) {
    if (val == nullptr || size == nullptr) return PMIX_ERR_BAD_PARAM;
    *size = sizeof(pmix_info_t) - sizeof(pmix_value_t) + value_size(&val->value);
    return PMIX_SUCCESS;
}

PMIX_EXPORT void PMIx_Load_key(pmix_key_t key, const char *src) { PMIX_LOAD_KEY(key, src); }
PMIX_EXPORT bool PMIx_Check_key(const char *key, const char *str) {
    return key != nullptr && str != nullptr && strncmp(key, str, PMIX_MAX_KEYLEN) == 0;
}
PMIX_EXPORT bool PMIx_Check_reserved_key(const char *key) { return key != nullptr && PMIX_CHECK_RESERVED_KEY(key); }
PMIX_EXPORT void PMIx_Load_nspace(pmix_nspace_t nspace, const char *str) { PMIX_LOAD_NSPACE(nspace, str); }
PMIX_EXPORT bool PMIx_Check_nspace(const char *key1, const char *key2) { return PMIX_CHECK_NSPACE(key1, key2); }
PMIX_EXPORT bool PMIx_Nspace_invalid(const char *nspace) { return PMIX_NSPACE_INVALID(nspace); }
PMIX_EXPORT void PMIx_Load_procid(pmix_proc_t *p, const char *ns, pmix_rank_t rk) {
    if (p != nullptr) PMIX_LOAD_PROCID(p, ns, rk);
}
PMIX_EXPORT void PMIx_Xfer_procid(pmix_proc_t *dst, const pmix_proc_t *src) {
    if (dst != nullptr && src != nullptr) memcpy(dst, src, sizeof(pmix_proc_t));
}
PMIX_EXPORT bool PMIx_Check_procid(const pmix_proc_t *a, const pmix_proc_t *b) {
    return a != nullptr && b != nullptr && PMIX_CHECK_PROCID(a, b);
}
PMIX_EXPORT bool PMIx_Check_rank(pmix_rank_t a, pmix_rank_t b) { return PMIX_CHECK_RANK(a, b); }
PMIX_EXPORT bool PMIx_Procid_invalid(const pmix_proc_t *p) { return p == nullptr || PMIX_PROCID_INVALID(p); }

PMIX_EXPORT void PMIx_Multicluster_nspace_construct(pmix_nspace_t target, pmix_nspace_t cluster,
                                                    pmix_nspace_t nspace) {
    PMIX_MULTICLUSTER_NSPACE_CONSTRUCT(target, cluster, nspace);
}
PMIX_EXPORT void PMIx_Multicluster_nspace_parse(pmix_nspace_t target, pmix_nspace_t cluster, pmix_nspace_t nspace) {
    PMIX_MULTICLUSTER_NSPACE_PARSE(target, cluster, nspace);
}

// --- argv and environment ---------------------------------------------------------------------
PMIX_EXPORT int PMIx_Argv_count(char **a) { return pmix_argv_count(a); }
PMIX_EXPORT pmix_status_t PMIx_Argv_append_nosize(char ***argv, const char *arg) {
    if (argv == nullptr) return PMIX_ERR_BAD_PARAM;
    return pmix_argv_append_nosize(argv, arg);
}
PMIX_EXPORT pmix_status_t PMIx_Argv_prepend_nosize(char ***argv, const char *arg) {
    if (argv == nullptr) return PMIX_ERR_BAD_PARAM;
    return pmix_argv_prepend_nosize(argv, arg);
}
PMIX_EXPORT pmix_status_t PMIx_Argv_append_unique_nosize(char ***argv, const char *arg) {
    if (argv == nullptr) return PMIX_ERR_BAD_PARAM;
    return pmix_argv_append_unique_nosize(argv, arg);
}
PMIX_EXPORT void PMIx_Argv_free(char **argv) { pmix_argv_free(argv); }

PMIX_EXPORT char **PMIx_Argv_split_inter(const char *src_string, int delimiter, bool include_empty) {
    if (src_string == nullptr) return nullptr;
    char **out = nullptr;
    const char *start = src_string;
    for (;;) {
        const char *end = strchr(start, delimiter);
        if (end == nullptr) end = start + strlen(start);
        if (end > start || include_empty) {
            std::string field(start, static_cast<size_t>(end - start));
            if (pmix_argv_append_nosize(&out, field.c_str()) != PMIX_SUCCESS) break;
        }
        if (*end == '\0') break;
        start = end + 1;
    }
    return out;
}
PMIX_EXPORT char **PMIx_Argv_split_with_empty(const char *src_string, int delimiter) {
    return PMIx_Argv_split_inter(src_string, delimiter, true);
}
PMIX_EXPORT char **PMIx_Argv_split(const char *src_string, int delimiter) {
    return PMIx_Argv_split_inter(src_string, delimiter, false);
}
PMIX_EXPORT char *PMIx_Argv_join(char **argv, int delimiter) { return pmix_argv_join(argv, delimiter); }
PMIX_EXPORT char **PMIx_Argv_copy(char **argv) { return pmix_argv_copy(argv); }
PMIX_EXPORT pmix_status_t PMIx_Setenv(const char *name, const char *value, bool overwrite, char ***env) {
    if (name == nullptr || env == nullptr) return PMIX_ERR_BAD_PARAM;
    return pmix_setenv(name, value, overwrite, env);
}

// --- values, infos, data arrays ---------------------------------------------------------------
PMIX_EXPORT void PMIx_Value_construct(pmix_value_t *val) {
    if (val != nullptr) PMIX_VALUE_CONSTRUCT(val);
}
PMIX_EXPORT pmix_value_t *PMIx_Value_create(size_t n) {
    pmix_value_t *v = zalloc<pmix_value_t>(n);
    for (size_t i = 0; v && i < n; ++i) v[i].type = PMIX_UNDEF;
    return v;
}
PMIX_EXPORT void PMIx_Value_free(pmix_value_t *v, size_t n) { free_array(v, n, PMIx_Value_destruct); }
PMIX_EXPORT pmix_boolean_t PMIx_Value_true(const pmix_value_t *v) {
    return v == nullptr ? PMIX_NON_BOOL : pmix_check_true(v);
}

PMIX_EXPORT void PMIx_Data_array_init(pmix_data_array_t *p, pmix_data_type_t type) {
    if (p != nullptr) PMIX_DATA_ARRAY_INIT(p, type);
}
PMIX_EXPORT void PMIx_Data_array_construct(pmix_data_array_t *p, size_t num, pmix_data_type_t type) {
    if (p != nullptr) PMIX_DATA_ARRAY_CONSTRUCT(p, num, type);
}
PMIX_EXPORT pmix_data_array_t *PMIx_Data_array_create(size_t n, pmix_data_type_t type) {
    pmix_data_array_t *p = nullptr;
    PMIX_DATA_ARRAY_CREATE(p, n, type);
    return p;
}
PMIX_EXPORT void PMIx_Data_array_free(pmix_data_array_t *p) { PMIX_DATA_ARRAY_FREE(p); }

PMIX_EXPORT void PMIx_Info_construct(pmix_info_t *p) {
    if (p != nullptr) PMIX_INFO_CONSTRUCT(p);
}
PMIX_EXPORT void PMIx_Info_destruct(pmix_info_t *p) {
    if (p != nullptr) PMIX_INFO_DESTRUCT(p);
}
PMIX_EXPORT pmix_info_t *PMIx_Info_create(size_t n) {
    pmix_info_t *p = nullptr;
    if (n > 0) PMIX_INFO_CREATE(p, n);
    return p;
}
PMIX_EXPORT void PMIx_Info_free(pmix_info_t *p, size_t n) { PMIX_INFO_FREE(p, n); }
PMIX_EXPORT pmix_boolean_t PMIx_Info_true(const pmix_info_t *p) {
    return p == nullptr ? PMIX_NON_BOOL : pmix_check_true(&p->value);
}
PMIX_EXPORT void PMIx_Info_required(pmix_info_t *p) {
    if (p) PMIX_INFO_REQUIRED(p);
}
PMIX_EXPORT void PMIx_Info_optional(pmix_info_t *p) {
    if (p) PMIX_INFO_OPTIONAL(p);
}
PMIX_EXPORT bool PMIx_Info_is_required(const pmix_info_t *p) { return p && PMIX_INFO_IS_REQUIRED(p); }
PMIX_EXPORT bool PMIx_Info_is_optional(const pmix_info_t *p) { return p && PMIX_INFO_IS_OPTIONAL(p); }
PMIX_EXPORT void PMIx_Info_processed(pmix_info_t *p) {
    if (p) PMIX_INFO_PROCESSED(p);
}
PMIX_EXPORT bool PMIx_Info_was_processed(const pmix_info_t *p) { return p && PMIX_INFO_WAS_PROCESSED(p); }
PMIX_EXPORT void PMIx_Info_set_end(pmix_info_t *p) {
    if (p) PMIX_INFO_SET_END(p);
}
PMIX_EXPORT bool PMIx_Info_is_end(const pmix_info_t *p) { return p && PMIX_INFO_IS_END(p); }
PMIX_EXPORT void PMIx_Info_qualifier(pmix_info_t *p) {
    if (p) PMIX_INFO_SET_QUALIFIER(p);
}
PMIX_EXPORT bool PMIx_Info_is_qualifier(const pmix_info_t *p) { return p && PMIX_INFO_IS_QUALIFIER(p); }
PMIX_EXPORT void PMIx_Info_persistent(pmix_info_t *p) {
    if (p) PMIX_INFO_SET_PERSISTENT(p);
}
PMIX_EXPORT bool PMIx_Info_is_persistent(const pmix_info_t *p) { return p && PMIX_INFO_IS_PERSISTENT(p); }

// --- the other public structs -----------------------------------------------------------------
PMIX_EXPORT void PMIx_Coord_construct(pmix_coord_t *m) {
    if (m) PMIX_COORD_CONSTRUCT(m);
}
PMIX_EXPORT void PMIx_Coord_destruct(pmix_coord_t *m) {
    if (m) PMIX_COORD_DESTRUCT(m);
}
PMIX_EXPORT pmix_coord_t *PMIx_Coord_create(size_t dims, size_t number) {
    pmix_coord_t *m = zalloc<pmix_coord_t>(number);
    for (size_t i = 0; m && i < number && dims > 0; ++i) {
        m[i].coord = static_cast<uint32_t *>(calloc(dims, sizeof(uint32_t)));
        m[i].dims = m[i].coord ? dims : 0;
    }
    return m;
}
PMIX_EXPORT void PMIx_Coord_free(pmix_coord_t *m, size_t number) {
    free_array(m, number, [](pmix_coord_t *c) { PMIX_COORD_DESTRUCT(c); });
}

PMIX_EXPORT void PMIx_Topology_construct(pmix_topology_t *t) {
    if (t) PMIX_TOPOLOGY_CONSTRUCT(t);
}
PMIX_EXPORT pmix_topology_t *PMIx_Topology_create(size_t n) { return zalloc<pmix_topology_t>(n); }
PMIX_EXPORT void PMIx_Topology_free(pmix_topology_t *t, size_t n) { free_array(t, n, PMIx_Topology_destruct); }

PMIX_EXPORT void PMIx_Cpuset_construct(pmix_cpuset_t *cpuset) {
    if (cpuset) PMIX_CPUSET_CONSTRUCT(cpuset);
}
PMIX_EXPORT pmix_cpuset_t *PMIx_Cpuset_create(size_t n) { return zalloc<pmix_cpuset_t>(n); }
PMIX_EXPORT void PMIx_Cpuset_free(pmix_cpuset_t *c, size_t n) { free_array(c, n, PMIx_Cpuset_destruct); }

PMIX_EXPORT void PMIx_Geometry_construct(pmix_geometry_t *g) {
    if (g) PMIX_GEOMETRY_CONSTRUCT(g);
}
PMIX_EXPORT void PMIx_Geometry_destruct(pmix_geometry_t *g) {
    if (g) PMIX_GEOMETRY_DESTRUCT(g);
}
PMIX_EXPORT pmix_geometry_t *PMIx_Geometry_create(size_t n) { return zalloc<pmix_geometry_t>(n); }
PMIX_EXPORT void PMIx_Geometry_free(pmix_geometry_t *g, size_t n) { free_array(g, n, PMIx_Geometry_destruct); }

PMIX_EXPORT void PMIx_Device_distance_construct(pmix_device_distance_t *d) {
    if (d) PMIX_DEVICE_DIST_CONSTRUCT(d);
}
PMIX_EXPORT void PMIx_Device_distance_destruct(pmix_device_distance_t *d) {
    if (d) PMIX_DEVICE_DIST_DESTRUCT(d);
}
PMIX_EXPORT pmix_device_distance_t *PMIx_Device_distance_create(size_t n) {
    pmix_device_distance_t *d = zalloc<pmix_device_distance_t>(n);
    for (size_t i = 0; d && i < n; ++i) PMIX_DEVICE_DIST_CONSTRUCT(&d[i]);
    return d;
}
PMIX_EXPORT void PMIx_Device_distance_free(pmix_device_distance_t *d, size_t n) {
    free_array(d, n, PMIx_Device_distance_destruct);
}

PMIX_EXPORT void PMIx_Byte_object_construct(pmix_byte_object_t *b) {
    if (b) PMIX_BYTE_OBJECT_CONSTRUCT(b);
}
PMIX_EXPORT void PMIx_Byte_object_destruct(pmix_byte_object_t *b) {
    if (b) PMIX_BYTE_OBJECT_DESTRUCT(b);
}
PMIX_EXPORT pmix_byte_object_t *PMIx_Byte_object_create(size_t n) { return zalloc<pmix_byte_object_t>(n); }
PMIX_EXPORT void PMIx_Byte_object_free(pmix_byte_object_t *b, size_t n) {
    free_array(b, n, PMIx_Byte_object_destruct);
}
PMIX_EXPORT void PMIx_Byte_object_load(pmix_byte_object_t *b, char *d, size_t sz) {
    if (b == nullptr) return;
    b->bytes = d;  // takes ownership, like the macro
    b->size = sz;
}

PMIX_EXPORT void PMIx_Endpoint_construct(pmix_endpoint_t *e) {
    if (e) PMIX_ENDPOINT_CONSTRUCT(e);
}
PMIX_EXPORT void PMIx_Endpoint_destruct(pmix_endpoint_t *e) {
    if (e) PMIX_ENDPOINT_DESTRUCT(e);
}
PMIX_EXPORT pmix_endpoint_t *PMIx_Endpoint_create(size_t n) { return zalloc<pmix_endpoint_t>(n); }
PMIX_EXPORT void PMIx_Endpoint_free(pmix_endpoint_t *e, size_t n) { free_array(e, n, PMIx_Endpoint_destruct); }

PMIX_EXPORT void PMIx_Envar_construct(pmix_envar_t *e) {
    if (e) PMIX_ENVAR_CONSTRUCT(e);
}
PMIX_EXPORT void PMIx_Envar_destruct(pmix_envar_t *e) {
    if (e) PMIX_ENVAR_DESTRUCT(e);
}
PMIX_EXPORT pmix_envar_t *PMIx_Envar_create(size_t n) { return zalloc<pmix_envar_t>(n); }
PMIX_EXPORT void PMIx_Envar_free(pmix_envar_t *e, size_t n) { free_array(e, n, PMIx_Envar_destruct); }
PMIX_EXPORT void PMIx_Envar_load(pmix_envar_t *e, char *var, char *value, char separator) {
    if (e) PMIX_ENVAR_LOAD(e, var, value, separator);
}

PMIX_EXPORT void PMIx_Data_buffer_construct(pmix_data_buffer_t *b) {
    if (b) PMIX_DATA_BUFFER_CONSTRUCT(b);
}
PMIX_EXPORT void PMIx_Data_buffer_destruct(pmix_data_buffer_t *b) {
    if (b) PMIX_DATA_BUFFER_DESTRUCT(b);
}
PMIX_EXPORT pmix_data_buffer_t *PMIx_Data_buffer_create(void) {
    pmix_data_buffer_t *b = nullptr;
    PMIX_DATA_BUFFER_CREATE(b);
    return b;
}
PMIX_EXPORT void PMIx_Data_buffer_release(pmix_data_buffer_t *b) {
    if (b) PMIX_DATA_BUFFER_RELEASE(b);
}
PMIX_EXPORT void PMIx_Data_buffer_load(pmix_data_buffer_t *b, char *bytes, size_t sz) {
    if (b) PMIX_DATA_BUFFER_LOAD(b, bytes, sz);
}
PMIX_EXPORT void PMIx_Data_buffer_unload(pmix_data_buffer_t *b, char **bytes, size_t *sz) {
    if (b == nullptr || bytes == nullptr || sz == nullptr) return;
    PMIX_DATA_BUFFER_UNLOAD(b, *bytes, *sz);
}

PMIX_EXPORT void PMIx_Proc_construct(pmix_proc_t *p) {
    if (p) PMIX_PROC_CONSTRUCT(p);
}
PMIX_EXPORT void PMIx_Proc_destruct(pmix_proc_t *p) { (void)p; }
PMIX_EXPORT pmix_proc_t *PMIx_Proc_create(size_t n) { return zalloc<pmix_proc_t>(n); }
PMIX_EXPORT void PMIx_Proc_free(pmix_proc_t *p, size_t n) {
    (void)n;
    free(p);
}
PMIX_EXPORT void PMIx_Proc_load(pmix_proc_t *p, const char *nspace, pmix_rank_t rank) {
    if (p) PMIX_PROC_LOAD(p, nspace, rank);
}

PMIX_EXPORT void PMIx_Proc_info_construct(pmix_proc_info_t *p) {
    if (p) PMIX_PROC_INFO_CONSTRUCT(p);
}
PMIX_EXPORT void PMIx_Proc_info_destruct(pmix_proc_info_t *p) {
    if (p) PMIX_PROC_INFO_DESTRUCT(p);
}
PMIX_EXPORT pmix_proc_info_t *PMIx_Proc_info_create(size_t n) { return zalloc<pmix_proc_info_t>(n); }
PMIX_EXPORT void PMIx_Proc_info_free(pmix_proc_info_t *p, size_t n) { free_array(p, n, PMIx_Proc_info_destruct); }

PMIX_EXPORT void PMIx_Proc_stats_construct(pmix_proc_stats_t *p) {
    if (p) PMIX_PROC_STATS_CONSTRUCT(p);
}
PMIX_EXPORT void PMIx_Proc_stats_destruct(pmix_proc_stats_t *p) {
    if (p) PMIX_PROC_STATS_DESTRUCT(p);
}
PMIX_EXPORT pmix_proc_stats_t *PMIx_Proc_stats_create(size_t n) { return zalloc<pmix_proc_stats_t>(n); }
PMIX_EXPORT void PMIx_Proc_stats_free(pmix_proc_stats_t *p, size_t n) { free_array(p, n, PMIx_Proc_stats_destruct); }

PMIX_EXPORT void PMIx_Disk_stats_construct(pmix_disk_stats_t *p) {
    if (p) PMIX_DISK_STATS_CONSTRUCT(p);
}
PMIX_EXPORT void PMIx_Disk_stats_destruct(pmix_disk_stats_t *p) {
    if (p) PMIX_DISK_STATS_DESTRUCT(p);
}
PMIX_EXPORT pmix_disk_stats_t *PMIx_Disk_stats_create(size_t n) { return zalloc<pmix_disk_stats_t>(n); }
PMIX_EXPORT void PMIx_Disk_stats_free(pmix_disk_stats_t *p, size_t n) { free_array(p, n, PMIx_Disk_stats_destruct); }

PMIX_EXPORT void PMIx_Net_stats_construct(pmix_net_stats_t *p) {
    if (p) PMIX_NET_STATS_CONSTRUCT(p);
}
PMIX_EXPORT void PMIx_Net_stats_destruct(pmix_net_stats_t *p) {
    if (p) PMIX_NET_STATS_DESTRUCT(p);
}
PMIX_EXPORT pmix_net_stats_t *PMIx_Net_stats_create(size_t n) { return zalloc<pmix_net_stats_t>(n); }
PMIX_EXPORT void PMIx_Net_stats_free(pmix_net_stats_t *p, size_t n) { free_array(p, n, PMIx_Net_stats_destruct); }

PMIX_EXPORT void PMIx_Node_stats_construct(pmix_node_stats_t *p) {
    if (p) PMIX_NODE_STATS_CONSTRUCT(p);
}
PMIX_EXPORT void PMIx_Node_stats_destruct(pmix_node_stats_t *p) {
    if (p) PMIX_NODE_STATS_DESTRUCT(p);
}
PMIX_EXPORT pmix_node_stats_t *PMIx_Node_stats_create(size_t n) { return zalloc<pmix_node_stats_t>(n); }
PMIX_EXPORT void PMIx_Node_stats_free(pmix_node_stats_t *p, size_t n) { free_array(p, n, PMIx_Node_stats_destruct); }

PMIX_EXPORT void PMIx_Pdata_construct(pmix_pdata_t *p) {
    if (p) PMIX_PDATA_CONSTRUCT(p);
}
PMIX_EXPORT void PMIx_Pdata_destruct(pmix_pdata_t *p) {
    if (p) PMIX_PDATA_DESTRUCT(p);
}
PMIX_EXPORT pmix_pdata_t *PMIx_Pdata_create(size_t n) {
    pmix_pdata_t *p = zalloc<pmix_pdata_t>(n);
    for (size_t i = 0; p && i < n; ++i) p[i].value.type = PMIX_UNDEF;
    return p;
}
PMIX_EXPORT void PMIx_Pdata_free(pmix_pdata_t *p, size_t n) { free_array(p, n, PMIx_Pdata_destruct); }

PMIX_EXPORT void PMIx_App_construct(pmix_app_t *p) {
    if (p) PMIX_APP_CONSTRUCT(p);
}
PMIX_EXPORT void PMIx_App_destruct(pmix_app_t *p) {
    if (p) PMIX_APP_DESTRUCT(p);
}
PMIX_EXPORT pmix_app_t *PMIx_App_create(size_t n) { return zalloc<pmix_app_t>(n); }
PMIX_EXPORT void PMIx_App_info_create(pmix_app_t *p, size_t n) {
    if (p) PMIX_APP_INFO_CREATE(p, n);
}
PMIX_EXPORT void PMIx_App_free(pmix_app_t *p, size_t n) { free_array(p, n, PMIx_App_destruct); }
PMIX_EXPORT void PMIx_App_release(pmix_app_t *p) {
    if (p) PMIX_APP_RELEASE(p);
}

PMIX_EXPORT void PMIx_Query_construct(pmix_query_t *p) {
    if (p) PMIX_QUERY_CONSTRUCT(p);
}
PMIX_EXPORT void PMIx_Query_destruct(pmix_query_t *p) {
    if (p) PMIX_QUERY_DESTRUCT(p);
}
PMIX_EXPORT pmix_query_t *PMIx_Query_create(size_t n) { return zalloc<pmix_query_t>(n); }
PMIX_EXPORT void PMIx_Query_qualifiers_create(pmix_query_t *p, size_t n) {
    if (p) PMIX_QUERY_QUALIFIERS_CREATE(p, n);
}
PMIX_EXPORT void PMIx_Query_free(pmix_query_t *p, size_t n) { free_array(p, n, PMIx_Query_destruct); }
PMIX_EXPORT void PMIx_Query_release(pmix_query_t *p) {
    if (p) PMIX_QUERY_RELEASE(p);
}

PMIX_EXPORT void PMIx_Regattr_construct(pmix_regattr_t *p) {
    if (p) PMIX_REGATTR_CONSTRUCT(p);
}
PMIX_EXPORT void PMIx_Regattr_destruct(pmix_regattr_t *p) {
    if (p) PMIX_REGATTR_DESTRUCT(p);
}
PMIX_EXPORT pmix_regattr_t *PMIx_Regattr_create(size_t n) { return zalloc<pmix_regattr_t>(n); }
PMIX_EXPORT void PMIx_Regattr_free(pmix_regattr_t *p, size_t n) { free_array(p, n, PMIx_Regattr_destruct); }
PMIX_EXPORT void PMIx_Regattr_load(pmix_regattr_t *info, const char *name, const char *key, pmix_data_type_t type,
                                   const char *description) {
    if (info) PMIX_REGATTR_LOAD(info, name, key, type, description);
}
PMIX_EXPORT void PMIx_Regattr_xfer(pmix_regattr_t *dest, const pmix_regattr_t *src) {
    if (dest && src) PMIX_REGATTR_XFER(dest, src);
}
// Declared with pmix_regattr_t * by the v5 headers, used by their PMIX_FABRIC_CONSTRUCT on a
// pmix_fabric_t: clears a pmix_fabric_t (the smaller of the two).
PMIX_EXPORT void PMIx_Fabric_construct(pmix_regattr_t *p) {
    if (p) memset(static_cast<void *>(p), 0, sizeof(pmix_fabric_t));
}

}  // extern "C"
