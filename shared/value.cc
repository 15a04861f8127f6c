// Semantics of the PMIx value helpers; see value.h for the memory and storage rules.
#include "value.h"
#include "type_traits.h"

#include <sys/time.h>
#include <sys/types.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

namespace pmixcpp {

namespace {

Status nomem(const char *what) {
    return Status(PMIX_ERR_NOMEM, std::string("out of memory copying ") + what);
}

Status unsupported(pmix_data_type_t type) {
    return Status(PMIX_ERR_NOT_SUPPORTED, "data type " + std::to_string(type) + " is not supported");
}

// strdup that keeps NULL as NULL; returns false only on allocation failure.
bool dup_cstr(char **dst, const char *src) {
    if (src == nullptr) {
        *dst = nullptr;
        return true;
    }
    *dst = strdup(src);
    return *dst != nullptr;
}

void free_argv(char **argv) {
    if (argv == nullptr) return;
    for (char **p = argv; *p != nullptr; ++p) free(*p);
    free(argv);
}

bool dup_argv(char ***dst, char **src) {
    *dst = nullptr;
    if (src == nullptr) return true;
    size_t n = 0;
    while (src[n] != nullptr) ++n;
    char **out = static_cast<char **>(calloc(n + 1, sizeof(char *)));
    if (out == nullptr) return false;
    for (size_t i = 0; i < n; ++i) {
        if ((out[i] = strdup(src[i])) == nullptr) {
            free_argv(out);
            return false;
        }
    }
    *dst = out;
    return true;
}

Status copy_bytes(pmix_byte_object_t *dst, const pmix_byte_object_t *src) {
    dst->bytes = nullptr;
    dst->size = 0;
    if (src->size == 0) return Status::success();
    if (src->bytes == nullptr) return Status(PMIX_ERR_BAD_PARAM, "byte object with size but no bytes");
    dst->bytes = static_cast<char *>(malloc(src->size));
    if (dst->bytes == nullptr) return nomem("byte object");
    memcpy(dst->bytes, src->bytes, src->size);
    dst->size = src->size;
    return Status::success();
}

Status copy_coord(pmix_coord_t *dst, const pmix_coord_t *src) {
    dst->view = src->view;
    dst->coord = nullptr;
    dst->dims = 0;
    if (src->dims == 0) return Status::success();
    if (src->coord == nullptr) return Status(PMIX_ERR_BAD_PARAM, "coord with dims but no values");
    dst->coord = static_cast<uint32_t *>(calloc(src->dims, sizeof(uint32_t)));
    if (dst->coord == nullptr) return nomem("coord");
    memcpy(dst->coord, src->coord, src->dims * sizeof(uint32_t));
    dst->dims = src->dims;
    return Status::success();
}

Status copy_data_array_into(pmix_data_array_t *dst, const pmix_data_array_t *src) {
    dst->type = src->type;
    dst->size = 0;
    dst->array = nullptr;
    if (src->size == 0) return Status::success();
    if (src->array == nullptr) return Status(PMIX_ERR_BAD_PARAM, "data array with size but no elements");
    size_t esize = data_type_element_size(src->type);
    if (esize == 0) return unsupported(src->type).with_context("data array");  // (pointers copy shallow)
    char *elems = static_cast<char *>(calloc(src->size, esize));
    if (elems == nullptr) return nomem("data array");
    const char *from = static_cast<const char *>(src->array);
    for (size_t i = 0; i < src->size; ++i) {
        Status st = element_copy(src->type, elems + i * esize, from + i * esize);
        if (!st.ok()) {
            for (size_t j = 0; j < i; ++j) element_destruct(src->type, elems + j * esize);
            free(elems);
            return st.with_context("data array element " + std::to_string(i));
        }
    }
    dst->array = elems;
    dst->size = src->size;
    return Status::success();
}

template <typename T>
pmix_value_cmp_t cmp3(const T &a, const T &b) {
    if (a < b) return PMIX_VALUE2_GREATER;
    if (b < a) return PMIX_VALUE1_GREATER;
    return PMIX_EQUAL;
}

pmix_value_cmp_t cmp_int(int r) {
    return r < 0 ? PMIX_VALUE2_GREATER : r > 0 ? PMIX_VALUE1_GREATER : PMIX_EQUAL;
}

pmix_value_cmp_t cmp_str(const char *a, const char *b) {
    if (a == nullptr || b == nullptr) return cmp3(a != nullptr, b != nullptr);
    return cmp_int(strcmp(a, b));
}

pmix_value_cmp_t cmp_bo(const pmix_byte_object_t *a, const pmix_byte_object_t *b) {
    if (a->size != b->size) return cmp3(a->size, b->size);
    if (a->size == 0) return PMIX_EQUAL;
    if (a->bytes == nullptr || b->bytes == nullptr) return cmp3(a->bytes != nullptr, b->bytes != nullptr);
    return cmp_int(memcmp(a->bytes, b->bytes, a->size));
}

pmix_value_cmp_t cmp_proc(const pmix_proc_t *a, const pmix_proc_t *b) {
    int r = strncmp(a->nspace, b->nspace, PMIX_MAX_NSLEN);
    if (r != 0) return cmp_int(r);
    return cmp3(a->rank, b->rank);
}

pmix_value_cmp_t cmp_coord(const pmix_coord_t *a, const pmix_coord_t *b) {
    if (a->view != b->view) return PMIX_VALUE_INCOMPATIBLE_OBJECTS;
    if (a->dims != b->dims) return cmp3(a->dims, b->dims);
    for (size_t i = 0; i < a->dims; ++i) {
        if (a->coord == nullptr || b->coord == nullptr) return cmp3(a->coord != nullptr, b->coord != nullptr);
        if (a->coord[i] != b->coord[i]) return cmp3(a->coord[i], b->coord[i]);
    }
    return PMIX_EQUAL;
}

// First non-equal result of a sequence of comparisons.
#define PMIXCPP_CMP_STEP(expr)           \
    do {                                 \
        pmix_value_cmp_t _c = (expr);    \
        if (_c != PMIX_EQUAL) return _c; \
    } while (0)

pmix_value_cmp_t cmp_double(double a, double b) {
    if (std::isnan(a) || std::isnan(b)) return PMIX_VALUE_COMPARISON_NOT_AVAIL;
    return cmp3(a, b);
}

// Two numbers, flags or enums of the same type, by their traits (type_traits.h).
pmix_value_cmp_t compare_scalar(const type_traits &t, const void *a, const void *b) {
    if (t.is_float)
        return t.size == sizeof(float)
                   ? cmp_double(*static_cast<const float *>(a), *static_cast<const float *>(b))
                   : cmp_double(*static_cast<const double *>(a), *static_cast<const double *>(b));
    if (t.is_bool) return cmp3(*static_cast<const bool *>(a), *static_cast<const bool *>(b));
    switch (t.size) {
        case 1:
            return t.is_signed ? cmp3(*static_cast<const int8_t *>(a), *static_cast<const int8_t *>(b))
                               : cmp3(*static_cast<const uint8_t *>(a), *static_cast<const uint8_t *>(b));
        case 2:
            return t.is_signed ? cmp3(*static_cast<const int16_t *>(a), *static_cast<const int16_t *>(b))
                               : cmp3(*static_cast<const uint16_t *>(a), *static_cast<const uint16_t *>(b));
        case 4:
            return t.is_signed ? cmp3(*static_cast<const int32_t *>(a), *static_cast<const int32_t *>(b))
                               : cmp3(*static_cast<const uint32_t *>(a), *static_cast<const uint32_t *>(b));
        case 8:
            return t.is_signed ? cmp3(*static_cast<const int64_t *>(a), *static_cast<const int64_t *>(b))
                               : cmp3(*static_cast<const uint64_t *>(a), *static_cast<const uint64_t *>(b));
        default:
            return PMIX_VALUE_COMPARISON_NOT_AVAIL;
    }
}

pmix_value_cmp_t element_compare(pmix_data_type_t type, const void *a, const void *b);

pmix_value_cmp_t cmp_data_array(const pmix_data_array_t *a, const pmix_data_array_t *b) {
    if (a->type != b->type) return PMIX_VALUE_INCOMPATIBLE_OBJECTS;
    if (a->size != b->size) return cmp3(a->size, b->size);
    size_t esize = data_type_element_size(a->type);
    if (a->size == 0) return PMIX_EQUAL;
    if (esize == 0 || a->array == nullptr || b->array == nullptr) return PMIX_VALUE_COMPARISON_NOT_AVAIL;
    for (size_t i = 0; i < a->size; ++i) {
        PMIXCPP_CMP_STEP(element_compare(a->type, static_cast<const char *>(a->array) + i * esize,
                                         static_cast<const char *>(b->array) + i * esize));
    }
    return PMIX_EQUAL;
}

pmix_value_cmp_t element_compare(pmix_data_type_t type, const void *a, const void *b) {
    return ops_of(type).compare(type, a, b);
}

bool is_fixed_size_unload_type(pmix_data_type_t type) { return ops_of(type).fixed_unload; }

}  // namespace

// --- What each kind does with one element (type_traits.h) ------------------------------------
// compare, copy and destruct; encode and decode are in wire/codec.cc.

pmix_value_cmp_t plain_ops::compare(pmix_data_type_t, const void *, const void *) {
    return PMIX_VALUE_COMPARISON_NOT_AVAIL;
}

Status plain_ops::copy(pmix_data_type_t type, void *dst, const void *src) {
    memcpy(dst, src, data_type_element_size(type));  // scalars, pmix_proc_t, raw pointers
    return Status::success();
}

void plain_ops::destruct(void *) {}  // scalars own nothing; unsupported types are left alone

pmix_value_cmp_t element_ops<type_kind::scalar>::compare(pmix_data_type_t type, const void *a, const void *b) {
    return compare_scalar(traits_of(type), a, b);
}

pmix_value_cmp_t element_ops<type_kind::timeval>::compare(pmix_data_type_t, const void *a, const void *b) {
    auto ta = static_cast<const struct timeval *>(a), tb = static_cast<const struct timeval *>(b);
    PMIXCPP_CMP_STEP(cmp3(ta->tv_sec, tb->tv_sec));
    return cmp3(ta->tv_usec, tb->tv_usec);
}

pmix_value_cmp_t element_ops<type_kind::string>::compare(pmix_data_type_t, const void *a, const void *b) {
    return cmp_str(*static_cast<char *const *>(a), *static_cast<char *const *>(b));
}

Status element_ops<type_kind::string>::copy(pmix_data_type_t, void *dst, const void *src) {
    char **d = static_cast<char **>(dst);
    if (!dup_cstr(d, *static_cast<char *const *>(src))) return nomem("string");
    return Status::success();
}

void element_ops<type_kind::string>::destruct(void *element) { free(*static_cast<char **>(element)); }

pmix_value_cmp_t element_ops<type_kind::pointer>::compare(pmix_data_type_t, const void *a, const void *b) {
    return *static_cast<void *const *>(a) == *static_cast<void *const *>(b) ? PMIX_EQUAL
                                                                           : PMIX_VALUE_COMPARISON_NOT_AVAIL;
}

pmix_value_cmp_t element_ops<type_kind::nspace>::compare(pmix_data_type_t, const void *a, const void *b) {
    return cmp_int(strncmp(static_cast<const char *>(a), static_cast<const char *>(b), PMIX_MAX_NSLEN));
}

Status element_ops<type_kind::nspace>::copy(pmix_data_type_t type, void *dst, const void *src) {
    // Bounded copy: the source may be a short C string rather than a full pmix_nspace_t.
    const char *s = static_cast<const char *>(src);
    memset(dst, 0, data_type_element_size(type));
    memcpy(dst, s, strnlen(s, PMIX_MAX_NSLEN));
    return Status::success();
}

pmix_value_cmp_t element_ops<type_kind::proc>::compare(pmix_data_type_t, const void *a, const void *b) {
    return cmp_proc(static_cast<const pmix_proc_t *>(a), static_cast<const pmix_proc_t *>(b));
}

pmix_value_cmp_t element_ops<type_kind::byte_object>::compare(pmix_data_type_t, const void *a, const void *b) {
    return cmp_bo(static_cast<const pmix_byte_object_t *>(a), static_cast<const pmix_byte_object_t *>(b));
}

Status element_ops<type_kind::byte_object>::copy(pmix_data_type_t, void *dst, const void *src) {
    return copy_bytes(static_cast<pmix_byte_object_t *>(dst), static_cast<const pmix_byte_object_t *>(src));
}

void element_ops<type_kind::byte_object>::destruct(void *element) {
    free(static_cast<pmix_byte_object_t *>(element)->bytes);
}

pmix_value_cmp_t element_ops<type_kind::proc_info>::compare(pmix_data_type_t, const void *a, const void *b) {
    auto pa = static_cast<const pmix_proc_info_t *>(a), pb = static_cast<const pmix_proc_info_t *>(b);
    PMIXCPP_CMP_STEP(cmp_proc(&pa->proc, &pb->proc));
    PMIXCPP_CMP_STEP(cmp_str(pa->hostname, pb->hostname));
    PMIXCPP_CMP_STEP(cmp_str(pa->executable_name, pb->executable_name));
    PMIXCPP_CMP_STEP(cmp3(pa->pid, pb->pid));
    PMIXCPP_CMP_STEP(cmp3(pa->exit_code, pb->exit_code));
    return cmp3(pa->state, pb->state);
}

Status element_ops<type_kind::proc_info>::copy(pmix_data_type_t, void *dst, const void *src) {
    auto d = static_cast<pmix_proc_info_t *>(dst);
    auto s = static_cast<const pmix_proc_info_t *>(src);
    d->proc = s->proc;
    d->pid = s->pid;
    d->exit_code = s->exit_code;
    d->state = s->state;
    if (!dup_cstr(&d->hostname, s->hostname) || !dup_cstr(&d->executable_name, s->executable_name))
        return nomem("proc info");
    return Status::success();
}

void element_ops<type_kind::proc_info>::destruct(void *element) {
    auto p = static_cast<pmix_proc_info_t *>(element);
    free(p->hostname);
    free(p->executable_name);
}

pmix_value_cmp_t element_ops<type_kind::data_array>::compare(pmix_data_type_t, const void *a, const void *b) {
    return cmp_data_array(static_cast<const pmix_data_array_t *>(a), static_cast<const pmix_data_array_t *>(b));
}

Status element_ops<type_kind::data_array>::copy(pmix_data_type_t, void *dst, const void *src) {
    return copy_data_array_into(static_cast<pmix_data_array_t *>(dst), static_cast<const pmix_data_array_t *>(src));
}

void element_ops<type_kind::data_array>::destruct(void *element) {
    data_array_destruct(static_cast<pmix_data_array_t *>(element));
}

pmix_value_cmp_t element_ops<type_kind::envar>::compare(pmix_data_type_t, const void *a, const void *b) {
    auto ea = static_cast<const pmix_envar_t *>(a), eb = static_cast<const pmix_envar_t *>(b);
    PMIXCPP_CMP_STEP(cmp_str(ea->envar, eb->envar));
    PMIXCPP_CMP_STEP(cmp_str(ea->value, eb->value));
    return cmp3(ea->separator, eb->separator);
}

Status element_ops<type_kind::envar>::copy(pmix_data_type_t, void *dst, const void *src) {
    auto d = static_cast<pmix_envar_t *>(dst);
    auto s = static_cast<const pmix_envar_t *>(src);
    d->separator = s->separator;
    if (!dup_cstr(&d->envar, s->envar) || !dup_cstr(&d->value, s->value)) return nomem("envar");
    return Status::success();
}

void element_ops<type_kind::envar>::destruct(void *element) {
    auto e = static_cast<pmix_envar_t *>(element);
    free(e->envar);
    free(e->value);
}

pmix_value_cmp_t element_ops<type_kind::coord>::compare(pmix_data_type_t, const void *a, const void *b) {
    return cmp_coord(static_cast<const pmix_coord_t *>(a), static_cast<const pmix_coord_t *>(b));
}

Status element_ops<type_kind::coord>::copy(pmix_data_type_t, void *dst, const void *src) {
    return copy_coord(static_cast<pmix_coord_t *>(dst), static_cast<const pmix_coord_t *>(src));
}

void element_ops<type_kind::coord>::destruct(void *element) { free(static_cast<pmix_coord_t *>(element)->coord); }

pmix_value_cmp_t element_ops<type_kind::regattr>::compare(pmix_data_type_t, const void *a, const void *b) {
    auto ra = static_cast<const pmix_regattr_t *>(a), rb = static_cast<const pmix_regattr_t *>(b);
    PMIXCPP_CMP_STEP(cmp_str(ra->name, rb->name));
    PMIXCPP_CMP_STEP(cmp_int(strncmp(ra->string, rb->string, PMIX_MAX_KEYLEN)));
    PMIXCPP_CMP_STEP(cmp3(ra->type, rb->type));
    char **da = ra->description, **db = rb->description;
    if (da == nullptr || db == nullptr) return cmp3(da != nullptr, db != nullptr);
    for (; *da != nullptr && *db != nullptr; ++da, ++db) PMIXCPP_CMP_STEP(cmp_str(*da, *db));
    return cmp3(*da != nullptr, *db != nullptr);
}

Status element_ops<type_kind::regattr>::copy(pmix_data_type_t, void *dst, const void *src) {
    auto d = static_cast<pmix_regattr_t *>(dst);
    auto s = static_cast<const pmix_regattr_t *>(src);
    memcpy(d->string, s->string, strnlen(s->string, PMIX_MAX_KEYLEN));
    d->type = s->type;
    if (!dup_cstr(&d->name, s->name) || !dup_argv(&d->description, s->description)) return nomem("regattr");
    return Status::success();
}

void element_ops<type_kind::regattr>::destruct(void *element) {
    auto r = static_cast<pmix_regattr_t *>(element);
    free(r->name);
    free_argv(r->description);
}

pmix_value_cmp_t element_ops<type_kind::geometry>::compare(pmix_data_type_t, const void *a, const void *b) {
    auto ga = static_cast<const pmix_geometry_t *>(a), gb = static_cast<const pmix_geometry_t *>(b);
    if (ga->fabric != gb->fabric) return PMIX_VALUE_INCOMPATIBLE_OBJECTS;
    PMIXCPP_CMP_STEP(cmp_str(ga->uuid, gb->uuid));
    PMIXCPP_CMP_STEP(cmp_str(ga->osname, gb->osname));
    PMIXCPP_CMP_STEP(cmp3(ga->ncoords, gb->ncoords));
    if (ga->ncoords == 0) return PMIX_EQUAL;
    if (ga->coordinates == nullptr || gb->coordinates == nullptr)
        return cmp3(ga->coordinates != nullptr, gb->coordinates != nullptr);
    for (size_t i = 0; i < ga->ncoords; ++i) PMIXCPP_CMP_STEP(cmp_coord(&ga->coordinates[i], &gb->coordinates[i]));
    return PMIX_EQUAL;
}

Status element_ops<type_kind::geometry>::copy(pmix_data_type_t, void *dst, const void *src) {
    auto d = static_cast<pmix_geometry_t *>(dst);
    auto s = static_cast<const pmix_geometry_t *>(src);
    d->fabric = s->fabric;
    if (!dup_cstr(&d->uuid, s->uuid) || !dup_cstr(&d->osname, s->osname)) return nomem("geometry");
    if (s->ncoords == 0) return Status::success();
    if (s->coordinates == nullptr) return Status(PMIX_ERR_BAD_PARAM, "geometry with ncoords but no coordinates");
    d->coordinates = static_cast<pmix_coord_t *>(calloc(s->ncoords, sizeof(pmix_coord_t)));
    if (d->coordinates == nullptr) return nomem("geometry");
    d->ncoords = s->ncoords;
    Status st;
    for (size_t i = 0; i < s->ncoords && st.ok(); ++i) st = copy_coord(&d->coordinates[i], &s->coordinates[i]);
    return st;
}

void element_ops<type_kind::geometry>::destruct(void *element) {
    auto g = static_cast<pmix_geometry_t *>(element);
    free(g->uuid);
    free(g->osname);
    if (g->coordinates != nullptr) {
        for (size_t i = 0; i < g->ncoords; ++i) free(g->coordinates[i].coord);
        free(g->coordinates);
    }
}

pmix_value_cmp_t element_ops<type_kind::device_dist>::compare(pmix_data_type_t, const void *a, const void *b) {
    auto da = static_cast<const pmix_device_distance_t *>(a), db = static_cast<const pmix_device_distance_t *>(b);
    if (da->type != db->type) return PMIX_VALUE_INCOMPATIBLE_OBJECTS;
    PMIXCPP_CMP_STEP(cmp_str(da->uuid, db->uuid));
    PMIXCPP_CMP_STEP(cmp_str(da->osname, db->osname));
    PMIXCPP_CMP_STEP(cmp3(da->mindist, db->mindist));
    return cmp3(da->maxdist, db->maxdist);
}

Status element_ops<type_kind::device_dist>::copy(pmix_data_type_t, void *dst, const void *src) {
    auto d = static_cast<pmix_device_distance_t *>(dst);
    auto s = static_cast<const pmix_device_distance_t *>(src);
    d->type = s->type;
    d->mindist = s->mindist;
    d->maxdist = s->maxdist;
    if (!dup_cstr(&d->uuid, s->uuid) || !dup_cstr(&d->osname, s->osname)) return nomem("device distance");
    return Status::success();
}

void element_ops<type_kind::device_dist>::destruct(void *element) {
    auto d = static_cast<pmix_device_distance_t *>(element);
    free(d->uuid);
    free(d->osname);
}

pmix_value_cmp_t element_ops<type_kind::endpoint>::compare(pmix_data_type_t, const void *a, const void *b) {
    auto ea = static_cast<const pmix_endpoint_t *>(a), eb = static_cast<const pmix_endpoint_t *>(b);
    PMIXCPP_CMP_STEP(cmp_str(ea->uuid, eb->uuid));
    PMIXCPP_CMP_STEP(cmp_str(ea->osname, eb->osname));
    return cmp_bo(&ea->endpt, &eb->endpt);
}

Status element_ops<type_kind::endpoint>::copy(pmix_data_type_t, void *dst, const void *src) {
    auto d = static_cast<pmix_endpoint_t *>(dst);
    auto s = static_cast<const pmix_endpoint_t *>(src);
    if (!dup_cstr(&d->uuid, s->uuid) || !dup_cstr(&d->osname, s->osname)) return nomem("endpoint");
    return copy_bytes(&d->endpt, &s->endpt);
}

void element_ops<type_kind::endpoint>::destruct(void *element) {
    auto e = static_cast<pmix_endpoint_t *>(element);
    free(e->uuid);
    free(e->osname);
    free(e->endpt.bytes);
}

pmix_value_cmp_t element_ops<type_kind::info>::compare(pmix_data_type_t, const void *a, const void *b) {
    auto ia = static_cast<const pmix_info_t *>(a), ib = static_cast<const pmix_info_t *>(b);
    PMIXCPP_CMP_STEP(cmp_int(strncmp(ia->key, ib->key, PMIX_MAX_KEYLEN)));
    return value_compare(&ia->value, &ib->value);
}

// info_xfer and value_xfer leave nothing behind when they fail.
Status element_ops<type_kind::info>::copy(pmix_data_type_t, void *dst, const void *src) {
    return info_xfer(static_cast<pmix_info_t *>(dst), static_cast<const pmix_info_t *>(src));
}

void element_ops<type_kind::info>::destruct(void *element) { info_destruct(static_cast<pmix_info_t *>(element)); }

pmix_value_cmp_t element_ops<type_kind::value>::compare(pmix_data_type_t, const void *a, const void *b) {
    return value_compare(static_cast<const pmix_value_t *>(a), static_cast<const pmix_value_t *>(b));
}

Status element_ops<type_kind::value>::copy(pmix_data_type_t, void *dst, const void *src) {
    return value_xfer(static_cast<pmix_value_t *>(dst), static_cast<const pmix_value_t *>(src));
}

void element_ops<type_kind::value>::destruct(void *element) { value_destruct(static_cast<pmix_value_t *>(element)); }

// ---------------------------------------------------------------------------------------------

size_t data_type_element_size(pmix_data_type_t type) { return traits_of(type).size; }

bool data_type_is_pointer_in_value(pmix_data_type_t type) { return traits_of(type).pointer_in_value; }

void element_destruct(pmix_data_type_t type, void *element) {
    if (element == nullptr) return;
    ops_of(type).destruct(element);
    size_t size = data_type_element_size(type);
    if (size != 0) memset(element, 0, size);
}

Status element_copy(pmix_data_type_t type, void *dst, const void *src) {
    if (data_type_element_size(type) == 0) return unsupported(type);
    Status st = ops_of(type).copy(type, dst, src);
    if (!st.ok()) element_destruct(type, dst);
    return st;
}

void value_destruct(pmix_value_t *value) {
    if (value == nullptr) return;
    pmix_data_type_t type = value->type;
    if (data_type_is_pointer_in_value(type)) {
        void *p = value->data.ptr;
        if (p != nullptr) {
            element_destruct(type, p);
            free(p);
        }
    } else if (type != PMIX_POINTER) {
        element_destruct(type, &value->data);
    }
    memset(&value->data, 0, sizeof(value->data));
    value->type = PMIX_UNDEF;
}

Status value_xfer(pmix_value_t *dest, const pmix_value_t *src) {
    if (dest == nullptr || src == nullptr) return Status(PMIX_ERR_BAD_PARAM, "value_xfer: null argument");
    memset(dest, 0, sizeof(*dest));
    pmix_data_type_t type = src->type;
    if (type == PMIX_UNDEF) return Status::success();
    if (type == PMIX_POINTER) {
        dest->type = type;
        dest->data.ptr = src->data.ptr;
        return Status::success();
    }
    size_t size = data_type_element_size(type);
    if (size == 0 || type == PMIX_INFO || type == PMIX_VALUE)
        return unsupported(type).with_context("value_xfer");
    if (data_type_is_pointer_in_value(type)) {
        if (src->data.ptr != nullptr) {
            void *p = calloc(1, size);
            if (p == nullptr) return nomem("value");
            Status st = element_copy(type, p, src->data.ptr);
            if (!st.ok()) {
                free(p);
                return st.with_context("value_xfer");
            }
            dest->data.ptr = p;
        }
    } else {
        PMIXCPP_RETURN_IF_ERROR(element_copy(type, &dest->data, &src->data), "value_xfer");
    }
    dest->type = type;
    return Status::success();
}

Status value_load(pmix_value_t *value, const void *data, pmix_data_type_t type) {
    if (value == nullptr) return Status(PMIX_ERR_BAD_PARAM, "value_load: null value");
    memset(value, 0, sizeof(*value));
    if (type == PMIX_UNDEF) return Status::success();
    if (type == PMIX_POINTER) {
        value->type = type;
        value->data.ptr = const_cast<void *>(data);
        return Status::success();
    }
    size_t size = data_type_element_size(type);
    if (size == 0 || type == PMIX_INFO || type == PMIX_VALUE)
        return unsupported(type).with_context("value_load");
    if (data == nullptr) {
        value->type = type;
        if (type == PMIX_BOOL) value->data.flag = true;  // presence of a flag means true
        return Status::success();
    }
    if (type == PMIX_STRING) {
        if ((value->data.string = strdup(static_cast<const char *>(data))) == nullptr) return nomem("string");
    } else if (data_type_is_pointer_in_value(type)) {
        void *p = calloc(1, size);
        if (p == nullptr) return nomem("value");
        Status st = element_copy(type, p, data);
        if (!st.ok()) {
            free(p);
            return st.with_context("value_load");
        }
        value->data.ptr = p;
    } else {
        PMIXCPP_RETURN_IF_ERROR(element_copy(type, &value->data, data), "value_load");
    }
    value->type = type;
    return Status::success();
}

Status value_unload(const pmix_value_t *value, void **data, size_t *size) {
    if (value == nullptr || data == nullptr || size == nullptr)
        return Status(PMIX_ERR_BAD_PARAM, "value_unload: null argument");
    pmix_data_type_t type = value->type;
    if (type == PMIX_UNDEF) return Status(PMIX_ERR_UNKNOWN_DATA_TYPE, "value_unload: undefined value");
    if (is_fixed_size_unload_type(type)) {
        if (*data == nullptr)
            return Status(PMIX_ERR_BAD_PARAM, "value_unload: no storage for a fixed-size type");
        if (type == PMIX_PROC || type == PMIX_PROC_NSPACE) {
            if (value->data.ptr == nullptr) return Status(PMIX_ERR_BAD_PARAM, "value_unload: null payload");
            if (type == PMIX_PROC) {
                memcpy(*data, value->data.proc, sizeof(pmix_proc_t));
                *size = sizeof(pmix_proc_t);
            } else {
                const char *ns = *value->data.nspace;
                size_t len = strnlen(ns, PMIX_MAX_NSLEN);
                memset(*data, 0, sizeof(pmix_nspace_t));
                memcpy(*data, ns, len);
                *size = len;
            }
        } else {
            size_t n = data_type_element_size(type);
            memcpy(*data, &value->data, n);
            *size = n;
        }
        return Status::success();
    }
    switch (traits_of(type).kind) {
        case type_kind::string:
            *data = nullptr;
            *size = 0;
            if (value->data.string != nullptr) {
                if ((*data = strdup(value->data.string)) == nullptr) return nomem("string");
                *size = strlen(value->data.string);
            }
            return Status::success();
        case type_kind::pointer:
            *data = value->data.ptr;
            *size = sizeof(void *);
            return Status::success();
        default:
            break;
    }
    if (traits_of(type).kind == type_kind::byte_object) {
        pmix_byte_object_t copy{};
        PMIXCPP_RETURN_IF_ERROR(copy_bytes(&copy, &value->data.bo), "value_unload");
        *data = copy.bytes;
        *size = copy.size;
        return Status::success();
    }
    size_t esize = data_type_element_size(type);
    if (esize == 0) return unsupported(type).with_context("value_unload");
    const void *src =
        data_type_is_pointer_in_value(type) ? value->data.ptr : static_cast<const void *>(&value->data);
    if (src == nullptr) return Status(PMIX_ERR_BAD_PARAM, "value_unload: null payload");
    void *p = calloc(1, esize);
    if (p == nullptr) return nomem("value");
    Status st = element_copy(type, p, src);
    if (!st.ok()) {
        free(p);
        return st.with_context("value_unload");
    }
    *data = p;
    *size = esize;
    return Status::success();
}

pmix_value_cmp_t value_compare(const pmix_value_t *v1, const pmix_value_t *v2) {
    if (v1 == nullptr || v2 == nullptr) return PMIX_VALUE_COMPARISON_NOT_AVAIL;
    if (v1->type != v2->type) return PMIX_VALUE_TYPE_DIFFERENT;
    pmix_data_type_t type = v1->type;
    if (type == PMIX_UNDEF) return PMIX_EQUAL;
    if (type == PMIX_POINTER) return element_compare(type, &v1->data.ptr, &v2->data.ptr);
    if (data_type_is_pointer_in_value(type)) {
        const void *a = v1->data.ptr, *b = v2->data.ptr;
        if (a == nullptr || b == nullptr) return cmp3(a != nullptr, b != nullptr);
        return element_compare(type, a, b);
    }
    return element_compare(type, &v1->data, &v2->data);
}

namespace {

// A numeric source value, widened.
struct Number {
    enum Kind { SIGNED, UNSIGNED, FLOATING } kind;
    int64_t i = 0;
    uint64_t u = 0;
    double d = 0;
};

bool read_number(const pmix_value_t *v, Number *n) {
    const type_traits &t = traits_of(v->type);
    if (!t.numeric) return false;
    const void *p = &v->data;
    if (t.is_float) {
        *n = {Number::FLOATING, 0, 0,
              t.size == sizeof(float) ? *static_cast<const float *>(p) : v->data.dval};
        return true;
    }
    switch (t.size) {
        case 1:
            *n = t.is_signed ? Number{Number::SIGNED, *static_cast<const int8_t *>(p)}
                             : Number{Number::UNSIGNED, 0, *static_cast<const uint8_t *>(p)};
            return true;
        case 2:
            *n = t.is_signed ? Number{Number::SIGNED, *static_cast<const int16_t *>(p)}
                             : Number{Number::UNSIGNED, 0, *static_cast<const uint16_t *>(p)};
            return true;
        case 4:
            *n = t.is_signed ? Number{Number::SIGNED, *static_cast<const int32_t *>(p)}
                             : Number{Number::UNSIGNED, 0, *static_cast<const uint32_t *>(p)};
            return true;
        case 8:
            *n = t.is_signed ? Number{Number::SIGNED, *static_cast<const int64_t *>(p)}
                             : Number{Number::UNSIGNED, 0, *static_cast<const uint64_t *>(p)};
            return true;
        default:
            return false;
    }
}

template <typename T>
bool store_number(const Number &n, void *dest) {
    T out;
    if constexpr (std::is_floating_point_v<T>) {
        out = n.kind == Number::SIGNED     ? static_cast<T>(n.i)
              : n.kind == Number::UNSIGNED ? static_cast<T>(n.u)
                                           : static_cast<T>(n.d);
    } else {
        using L = std::numeric_limits<T>;
        if (n.kind == Number::SIGNED) {
            if constexpr (std::is_signed_v<T>) {
                if (n.i < static_cast<int64_t>(L::min()) || n.i > static_cast<int64_t>(L::max()))
                    return false;
            } else {
                if (n.i < 0 || static_cast<uint64_t>(n.i) > static_cast<uint64_t>(L::max())) return false;
            }
            out = static_cast<T>(n.i);
        } else if (n.kind == Number::UNSIGNED) {
            if (n.u > static_cast<uint64_t>(L::max())) return false;
            out = static_cast<T>(n.u);
        } else {
            // Only integral values inside T's range convert (2^63 is exactly representable as double).
            if (!std::isfinite(n.d) || std::trunc(n.d) != n.d) return false;
            if (n.d < static_cast<double>(L::min())) return false;
            if (n.d >= static_cast<double>(L::max()) + 1.0) return false;
            out = static_cast<T>(n.d);
        }
    }
    memcpy(dest, &out, sizeof(T));
    return true;
}

}  // namespace

Status value_get_number(const pmix_value_t *value, void *dest, pmix_data_type_t type) {
    if (value == nullptr || dest == nullptr)
        return Status(PMIX_ERR_BAD_PARAM, "value_get_number: null argument");
    Number n{};
    if (!read_number(value, &n))
        return Status(PMIX_ERR_BAD_PARAM, "value of type " + std::to_string(value->type) + " is not numeric");
    const type_traits &t = traits_of(type);
    if (!t.numeric)
        return Status(PMIX_ERR_BAD_PARAM, "type " + std::to_string(type) + " is not a numeric type");
    bool ok = false;
    if (t.is_float) {
        ok = t.size == sizeof(float) ? store_number<float>(n, dest) : store_number<double>(n, dest);
    } else {
        switch (t.size) {
            case 1:
                ok = t.is_signed ? store_number<int8_t>(n, dest) : store_number<uint8_t>(n, dest);
                break;
            case 2:
                ok = t.is_signed ? store_number<int16_t>(n, dest) : store_number<uint16_t>(n, dest);
                break;
            case 4:
                ok = t.is_signed ? store_number<int32_t>(n, dest) : store_number<uint32_t>(n, dest);
                break;
            case 8:
                ok = t.is_signed ? store_number<int64_t>(n, dest) : store_number<uint64_t>(n, dest);
                break;
            default:
                break;
        }
    }
    if (!ok)
        return Status(PMIX_ERR_BAD_PARAM, "value of type " + std::to_string(value->type) +
                                              " does not fit in type " + std::to_string(type));
    return Status::success();
}

void info_destruct(pmix_info_t *info) {
    if (info == nullptr) return;
    if (info->flags & PMIX_INFO_PERSISTENT) {
        memset(&info->value, 0, sizeof(info->value));  // not ours to free
    } else {
        value_destruct(&info->value);
    }
    memset(info->key, 0, sizeof(info->key));
    info->flags = 0;
}

Status info_xfer(pmix_info_t *dest, const pmix_info_t *src) {
    if (dest == nullptr || src == nullptr) return Status(PMIX_ERR_BAD_PARAM, "info_xfer: null argument");
    memset(dest, 0, sizeof(*dest));
    PMIXCPP_RETURN_IF_ERROR(value_xfer(&dest->value, &src->value), "info " + key_of(*src));
    memcpy(dest->key, src->key, strnlen(src->key, PMIX_MAX_KEYLEN));
    dest->flags = src->flags & ~static_cast<pmix_info_directives_t>(PMIX_INFO_PERSISTENT);
    return Status::success();
}

void info_array_free(pmix_info_t *infos, size_t count) {
    if (infos == nullptr) return;
    for (size_t i = 0; i < count; ++i) info_destruct(&infos[i]);
    free(infos);
}

void data_array_destruct(pmix_data_array_t *array) {
    if (array == nullptr) return;
    if (array->array != nullptr) {
        size_t esize = data_type_element_size(array->type);
        if (esize != 0 && array->type != PMIX_POINTER) {
            char *elems = static_cast<char *>(array->array);
            for (size_t i = 0; i < array->size; ++i) element_destruct(array->type, elems + i * esize);
        }
        free(array->array);
    }
    array->array = nullptr;
    array->size = 0;
}

void data_array_free(pmix_data_array_t *array) {
    data_array_destruct(array);
    free(array);
}

Status data_array_copy(pmix_data_array_t **dest, const pmix_data_array_t *src) {
    if (dest == nullptr || src == nullptr)
        return Status(PMIX_ERR_BAD_PARAM, "data_array_copy: null argument");
    auto p = static_cast<pmix_data_array_t *>(calloc(1, sizeof(pmix_data_array_t)));
    if (p == nullptr) return nomem("data array");
    Status st = copy_data_array_into(p, src);
    if (!st.ok()) {
        free(p);
        return st;
    }
    *dest = p;
    return Status::success();
}

Status info_array_copy(const pmix_info_t *src, size_t count, InfoArray *out) {
    if (count == 0) {
        *out = InfoArray();
        return Status::success();
    }
    auto *copy = static_cast<pmix_info_t *>(calloc(count, sizeof(pmix_info_t)));
    if (copy == nullptr) return Status(PMIX_ERR_NOMEM, "out of memory");
    InfoArray held(copy, count);  // frees what was copied if a later element fails
    for (size_t i = 0; i < count; ++i) PMIXCPP_RETURN_IF_ERROR(info_xfer(&copy[i], &src[i]));
    *out = std::move(held);
    return Status::success();
}

pmix_info_t procs_info(const char *key, const std::vector<pmix_proc_t> &procs) {
    pmix_data_array_t da{};
    da.type = PMIX_PROC;
    da.size = procs.size();
    da.array = const_cast<pmix_proc_t *>(procs.data());
    pmix_data_array_t *p = &da;
    return make_info(key, p, PMIX_DATA_ARRAY);
}

std::vector<pmix_proc_t> procs_of(const pmix_value_t &v) {
    std::vector<pmix_proc_t> out;
    if (v.type == PMIX_PROC && v.data.proc != nullptr) {
        out.push_back(*v.data.proc);
    } else if (v.type == PMIX_DATA_ARRAY && v.data.darray != nullptr && v.data.darray->type == PMIX_PROC &&
               v.data.darray->array != nullptr) {
        const auto *procs = static_cast<const pmix_proc_t *>(v.data.darray->array);
        out.assign(procs, procs + v.data.darray->size);
    }
    return out;
}

std::string_view key_view(const pmix_info_t &info) { return {info.key, strnlen(info.key, sizeof(info.key))}; }

bool key_is(const pmix_info_t &info, const char *key) { return strncmp(info.key, key, PMIX_MAX_KEYLEN) == 0; }

const pmix_info_t *find_info(const pmix_info_t *infos, size_t n, const char *key) {
    for (size_t k = 0; infos != nullptr && k < n; ++k)
        if (key_is(infos[k], key)) return &infos[k];
    return nullptr;
}

bool info_flag(const pmix_info_t *infos, size_t count, const char *key) {
    const pmix_info_t *i = find_info(infos, count, key);
    if (i == nullptr) return false;
    if (i->value.type == PMIX_UNDEF) return true;
    if (i->value.type == PMIX_BOOL) return i->value.data.flag;
    auto n = value_to_number<int64_t>(i->value);
    return n.ok() && n.value() != 0;
}

pmix_info_t make_info(const char *key, const void *data, pmix_data_type_t type) {
    pmix_info_t i{};
    strncpy(i.key, key, PMIX_MAX_KEYLEN);
    if (!value_load(&i.value, data, type).ok()) i.value.type = PMIX_UNDEF;
    return i;
}

InfoArray to_array(std::vector<pmix_info_t> &infos) {
    const size_t n = infos.size();
    auto *out = static_cast<pmix_info_t *>(calloc(n ? n : 1, sizeof(pmix_info_t)));
    if (out == nullptr) {
        for (auto &i : infos) info_destruct(&i);
        infos.clear();
        return InfoArray();
    }
    for (size_t k = 0; k < n; ++k) out[k] = infos[k];  // the contents move
    infos.clear();
    return InfoArray(out, n);
}

}  // namespace pmixcpp
