// Semantics of the PMIx value helpers (PMIx_Value_load/unload/xfer/destruct/compare, the info and
// data-array variants). The client exports them as C functions; the server uses them directly.
//
// Memory rule: everything a pmix_value_t, pmix_info_t or pmix_data_array_t owns is allocated with
// C malloc/calloc/strdup and released with C free(), so a C caller can free what we hand out and
// we can free what a C caller built.
//
// Storage rule: a scalar or small inline struct (bool .. uint64, timeval, byte object, envar, ...)
// lives directly in pmix_value_t::data; the larger types (proc, proc_info, data_array, coord,
// regattr, geometry, device_dist, endpoint, proc_nspace) live behind a pointer in the union. Either
// way "one element" of a type has the layout that pmix_data_array_t uses for an array of that type.
//
// Not supported (no hwloc, no buffer/stats support in shared/): PMIX_TOPO, PMIX_PROC_CPUSET,
// PMIX_DATA_BUFFER, PMIX_PROC_STATS, PMIX_DISK_STATS, PMIX_NET_STATS, PMIX_NODE_STATS, and as array
// elements PMIX_APP, PMIX_PDATA, PMIX_QUERY, PMIX_KVAL. Copying them fails with
// PMIX_ERR_NOT_SUPPORTED; destructing them releases nothing (a leak is safer than a wrong free).
#pragma once

#include <pmix_common.h>

#include <cstring>
#include <string>
#include <vector>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "status.h"

namespace pmixcpp {

// Size of one element of `type` inside a pmix_data_array_t; 0 if the type is not supported.
size_t data_type_element_size(pmix_data_type_t type);

// True if pmix_value_t stores `type` behind a pointer (data.proc, data.darray, ...).
bool data_type_is_pointer_in_value(pmix_data_type_t type);

// Release what one element owns (not the element's own storage) and zero it.
void element_destruct(pmix_data_type_t type, void *element);

// Deep-copy one element into zeroed storage `dst`. On failure `dst` is left zeroed.
Status element_copy(pmix_data_type_t type, void *dst, const void *src);

// --- pmix_value_t ---------------------------------------------------------------------------
// Free everything `value` owns; leaves it PMIX_UNDEF with zeroed data. PMIX_POINTER is not freed.
void value_destruct(pmix_value_t *value);

// Deep copy src into dest (dest's previous content is overwritten, not released).
// On failure dest is PMIX_UNDEF and nothing is leaked.
Status value_xfer(pmix_value_t *dest, const pmix_value_t *src);

// PMIx_Value_load: copy the data at `data` (a pointer to one element of `type`; for PMIX_STRING
// the char* itself, for PMIX_POINTER the pointer itself) into `value`. data == NULL zeroes the
// value (PMIX_BOOL then means true, as in OpenPMIx). On failure value is PMIX_UNDEF.
Status value_load(pmix_value_t *value, const void *data, pmix_data_type_t type);

// PMIx_Value_unload, OpenPMIx 4.x calling convention:
//  - fixed-size types (scalars, PMIX_PROC, PMIX_PROC_NSPACE): *data must point to caller storage,
//    the value is copied there;
//  - PMIX_STRING: *data = strdup'ed string (NULL if the value's string is NULL), *size = strlen;
//  - byte objects (also compressed/regex): *data = malloc'ed copy of the bytes (OpenPMIx hands out
//    its internal pointer instead; a copy cannot be double-freed), *size = byte count;
//  - structured types (proc_info, data_array, envar, coord, regattr, geometry, device_dist,
//    endpoint): *data = newly allocated deep copy of one element, caller frees with the matching
//    destruct + free();
//  - PMIX_POINTER: *data = the stored pointer.
Status value_unload(const pmix_value_t *value, void **data, size_t *size);

// PMIx_Value_compare: PMIX_EQUAL, PMIX_VALUE1_GREATER, PMIX_VALUE2_GREATER,
// PMIX_VALUE_TYPE_DIFFERENT, PMIX_VALUE_INCOMPATIBLE_OBJECTS, PMIX_VALUE_COMPARISON_NOT_AVAIL.
pmix_value_cmp_t value_compare(const pmix_value_t *v1, const pmix_value_t *v2);

// Convert a numeric value to the numeric type the caller asked for (dest points to storage of
// `type`: PMIX_SIZE, PMIX_PID, PMIX_INT*, PMIX_UINT*, PMIX_FLOAT, PMIX_DOUBLE). Unlike OpenPMIx's
// PMIX_VALUE_GET_NUMBER (a C cast) the conversion is checked: a value that does not fit, a
// non-integral floating value converted to an integer type, or a non-numeric source is
// PMIX_ERR_BAD_PARAM and dest is untouched.
Status value_get_number(const pmix_value_t *value, void *dest, pmix_data_type_t type);

template <typename T>
Result<T> value_to_number(const pmix_value_t &value);

// --- pmix_info_t ----------------------------------------------------------------------------
// Free what the info owns, unless PMIX_INFO_PERSISTENT is set (then the value is left alone, as
// PMIx_Info_destruct does). Key and flags are cleared.
void info_destruct(pmix_info_t *info);
// Deep copy (key, flags without PMIX_INFO_PERSISTENT, value). On failure dest is zeroed.
Status info_xfer(pmix_info_t *dest, const pmix_info_t *src);
// Destruct `count` infos and free() the array (NULL is fine).
void info_array_free(pmix_info_t *infos, size_t count);

// --- pmix_data_array_t ----------------------------------------------------------------------
// Free the elements and the element array; leaves {type, 0, NULL}.
void data_array_destruct(pmix_data_array_t *array);
// data_array_destruct + free(array).
void data_array_free(pmix_data_array_t *array);
// Deep copy into a newly allocated array (*dest = calloc'ed pmix_data_array_t). *dest untouched on
// failure.
Status data_array_copy(pmix_data_array_t **dest, const pmix_data_array_t *src);

// RAII owner of a pmix_value_t (for C++ callers; C callers use value_destruct).
class Value {
public:
    Value() { _v.type = PMIX_UNDEF; }
    ~Value() { value_destruct(&_v); }
    Value(const Value &) = delete;
    Value &operator=(const Value &) = delete;
    pmix_value_t *get() { return &_v; }
    const pmix_value_t *get() const { return &_v; }
    pmix_value_t *operator->() { return &_v; }
    const pmix_value_t *operator->() const { return &_v; }

private:
    pmix_value_t _v{};
};

// RAII owner of a calloc'ed pmix_info_t array, as decoders produce it.
class InfoArray {
public:
    InfoArray() = default;
    InfoArray(pmix_info_t *infos, size_t count) : _infos(infos), _count(count) {}
    ~InfoArray() { info_array_free(_infos, _count); }
    InfoArray(InfoArray &&o) noexcept : _infos(o._infos), _count(o._count) {
        o._infos = nullptr;
        o._count = 0;
    }
    InfoArray &operator=(InfoArray &&o) noexcept {
        if (this != &o) {
            info_array_free(_infos, _count);
            _infos = o._infos;
            _count = o._count;
            o._infos = nullptr;
            o._count = 0;
        }
        return *this;
    }
    InfoArray(const InfoArray &) = delete;
    InfoArray &operator=(const InfoArray &) = delete;

    pmix_info_t *data() { return _infos; }
    const pmix_info_t *data() const { return _infos; }
    size_t size() const { return _count; }
    bool empty() const { return _count == 0; }
    pmix_info_t &operator[](size_t i) { return _infos[i]; }
    const pmix_info_t &operator[](size_t i) const { return _infos[i]; }
    // Hand the array to a C caller, who frees it with info_array_free (PMIX_INFO_FREE).
    pmix_info_t *release() {
        pmix_info_t *p = _infos;
        _infos = nullptr;
        _count = 0;
        return p;
    }

private:
    pmix_info_t *_infos = nullptr;
    size_t _count = 0;
};

// --- small info helpers, shared by the plugin and the client library ---------------------------

// The key of an info: its characters up to the first NUL (at most the key field's size).
std::string_view key_view(const pmix_info_t &info);
inline std::string key_of(const pmix_info_t &info) { return std::string(key_view(info)); }
// Whether the key of `info` is `key` (compared as PMIx does, PMIX_CHECK_KEY).
bool key_is(const pmix_info_t &info, const char *key);
// The first info of `infos` (may be NULL) with `key`, or NULL.
const pmix_info_t *find_info(const pmix_info_t *infos, size_t n, const char *key);
inline const pmix_info_t *find_info(const InfoArray &a, const char *key) { return find_info(a.data(), a.size(), key); }
// A flag directive: absent = false; PMIX_UNDEF (no value) or a true bool = true; a number = != 0.
bool info_flag(const pmix_info_t *infos, size_t count, const char *key);
inline bool info_flag(const InfoArray &a, const char *key) { return info_flag(a.data(), a.size(), key); }
// The text of a string or byte-object value (a byte object up to its first NUL); "" for other types.
inline std::string value_text(const pmix_value_t &v) {
    switch (v.type) {
    case PMIX_STRING: return v.data.string ? v.data.string : "";
    case PMIX_BYTE_OBJECT:
        if (!v.data.bo.bytes) return {};
        return std::string(v.data.bo.bytes, strnlen(v.data.bo.bytes, v.data.bo.size));
    default: return {};
    }
}
// An info with `key` and the value value_load makes of `data` (PMIX_UNDEF if it cannot).
pmix_info_t make_info(const char *key, const void *data, pmix_data_type_t type);
// An info whose value is the procs as a PMIX_DATA_ARRAY of PMIX_PROC (copied).
pmix_info_t procs_info(const char *key, const std::vector<pmix_proc_t> &procs);
// The infos as one array; their contents move into it (`infos` ends empty). Out of memory: the
// infos are destructed and the array is empty.
InfoArray to_array(std::vector<pmix_info_t> &infos);

// --- template implementation ----------------------------------------------------------------
namespace detail {
template <typename T>
constexpr pmix_data_type_t number_type_code() {
    static_assert(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>, "numeric type required");
    if constexpr (std::is_floating_point_v<T>) {
        return sizeof(T) == sizeof(float) ? PMIX_FLOAT : PMIX_DOUBLE;
    } else if constexpr (std::is_signed_v<T>) {
        return sizeof(T) == 1   ? PMIX_INT8
               : sizeof(T) == 2 ? PMIX_INT16
               : sizeof(T) == 4 ? PMIX_INT32
                                : PMIX_INT64;
    } else {
        return sizeof(T) == 1   ? PMIX_UINT8
               : sizeof(T) == 2 ? PMIX_UINT16
               : sizeof(T) == 4 ? PMIX_UINT32
                                : PMIX_UINT64;
    }
}
}  // namespace detail

template <typename T>
Result<T> value_to_number(const pmix_value_t &value) {
    T out{};
    PMIXCPP_RETURN_IF_ERROR(value_get_number(&value, &out, detail::number_type_code<T>()));
    return out;
}

// Deep copy of `count` infos (src may be NULL when count is 0) into a new array owned by *out;
// *out is left as it was on failure.
Status info_array_copy(const pmix_info_t *src, size_t count, InfoArray *out);

// The procs a value names: one PMIX_PROC, or a PMIX_DATA_ARRAY of them; empty for anything else.
std::vector<pmix_proc_t> procs_of(const pmix_value_t &v);

}  // namespace pmixcpp
