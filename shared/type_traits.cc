#include "type_traits.h"

#include <sys/time.h>
#include <sys/types.h>

#include <ctime>
#include <iterator>

namespace pmixcpp {

namespace {

constexpr type_traits scalar(size_t size, bool is_signed, bool numeric) {
    type_traits t;
    t.kind = type_kind::scalar;
    t.size = static_cast<uint16_t>(size);
    t.min_wire = static_cast<uint8_t>(size);
    t.is_signed = is_signed;
    t.numeric = numeric;
    return t;
}

constexpr type_traits floating(size_t size) {
    type_traits t = scalar(size, true, true);
    t.is_float = true;
    return t;
}

constexpr type_traits other(type_kind kind, size_t size, size_t min_wire, bool pointer_in_value = false) {
    type_traits t;
    t.kind = kind;
    t.size = static_cast<uint16_t>(size);
    t.min_wire = static_cast<uint8_t>(min_wire);
    t.pointer_in_value = pointer_in_value;
    return t;
}

// The operations of each kind, in the order of type_kind.
template <type_kind K>
constexpr type_ops row() {
    using O = element_ops<K>;
    return type_ops{&O::compare, &O::copy, &O::destruct, &O::encode, &O::decode, O::fixed_unload};
}

constexpr type_ops kOps[] = {
    row<type_kind::none>(),        row<type_kind::scalar>(),     row<type_kind::timeval>(),
    row<type_kind::string>(),      row<type_kind::pointer>(),    row<type_kind::nspace>(),
    row<type_kind::proc>(),        row<type_kind::byte_object>(), row<type_kind::proc_info>(),
    row<type_kind::data_array>(),  row<type_kind::envar>(),      row<type_kind::coord>(),
    row<type_kind::regattr>(),     row<type_kind::geometry>(),   row<type_kind::device_dist>(),
    row<type_kind::endpoint>(),    row<type_kind::info>(),       row<type_kind::value>(),
};
static_assert(std::size(kOps) == static_cast<size_t>(type_kind::value) + 1, "one row per type_kind");

constexpr type_traits make_base(pmix_data_type_t type) {
    constexpr bool S = true, U = false;
    switch (type) {
        case PMIX_BOOL: {
            type_traits t = scalar(sizeof(bool), U, false);
            t.is_bool = true;
            return t;
        }
        case PMIX_BYTE:
            return scalar(1, U, false);
        case PMIX_INT8:
            return scalar(1, S, true);
        case PMIX_UINT8:
            return scalar(1, U, true);
        case PMIX_PERSIST:
        case PMIX_SCOPE:
        case PMIX_DATA_RANGE:
        case PMIX_PROC_STATE:
        case PMIX_ALLOC_DIRECTIVE:
        case PMIX_LINK_STATE:
        case PMIX_JOB_STATE:
            return scalar(1, U, false);
        case PMIX_INT16:
            return scalar(2, S, true);
        case PMIX_UINT16:
            return scalar(2, U, true);
        case PMIX_DATA_TYPE:
        case PMIX_IOF_CHANNEL:
        case PMIX_LOCTYPE:
        case PMIX_STOR_ACCESS_TYPE:
            return scalar(2, U, false);
        case PMIX_INT:
            return scalar(sizeof(int), S, true);
        case PMIX_INT32:
            return scalar(4, S, true);
        case PMIX_PID:
            return scalar(sizeof(pid_t), S, true);
        case PMIX_STATUS:
            return scalar(sizeof(pmix_status_t), S, false);
        case PMIX_UINT:
            return scalar(sizeof(unsigned int), U, true);
        case PMIX_UINT32:
            return scalar(4, U, true);
        case PMIX_PROC_RANK:
            return scalar(sizeof(pmix_rank_t), U, false);
        case PMIX_INFO_DIRECTIVES:
            return scalar(sizeof(pmix_info_directives_t), U, false);
        case PMIX_INT64:
            return scalar(8, S, true);
        case PMIX_UINT64:
            return scalar(8, U, true);
        case PMIX_DEVTYPE:
        case PMIX_STOR_MEDIUM:
        case PMIX_STOR_ACCESS:
        case PMIX_STOR_PERSIST:
            return scalar(8, U, false);
        case PMIX_SIZE:
            return scalar(sizeof(size_t), U, true);
        case PMIX_TIME:
            return scalar(sizeof(time_t), S, false);
        case PMIX_FLOAT:
            return floating(sizeof(float));
        case PMIX_DOUBLE:
            return floating(sizeof(double));
        case PMIX_TIMEVAL:
            return other(type_kind::timeval, sizeof(struct timeval), 16);
        case PMIX_STRING:
            return other(type_kind::string, sizeof(char *), 4);
        case PMIX_POINTER:
            return other(type_kind::pointer, sizeof(void *), 0);
        case PMIX_PROC_NSPACE:
            return other(type_kind::nspace, sizeof(pmix_nspace_t), 4, true);
        case PMIX_PROC:
            return other(type_kind::proc, sizeof(pmix_proc_t), 8, true);
        case PMIX_BYTE_OBJECT:
        case PMIX_COMPRESSED_STRING:
        case PMIX_COMPRESSED_BYTE_OBJECT:
        case PMIX_REGEX:
            return other(type_kind::byte_object, sizeof(pmix_byte_object_t), 4);
        case PMIX_PROC_INFO:
            return other(type_kind::proc_info, sizeof(pmix_proc_info_t), 25, true);
        case PMIX_DATA_ARRAY:
            return other(type_kind::data_array, sizeof(pmix_data_array_t), 6, true);
        case PMIX_ENVAR:
            return other(type_kind::envar, sizeof(pmix_envar_t), 9);
        case PMIX_COORD:
            return other(type_kind::coord, sizeof(pmix_coord_t), 5, true);
        case PMIX_REGATTR:
            return other(type_kind::regattr, sizeof(pmix_regattr_t), 14, true);
        case PMIX_GEOMETRY:
            return other(type_kind::geometry, sizeof(pmix_geometry_t), 20, true);
        case PMIX_DEVICE_DIST:
            return other(type_kind::device_dist, sizeof(pmix_device_distance_t), 20, true);
        case PMIX_ENDPOINT:
            return other(type_kind::endpoint, sizeof(pmix_endpoint_t), 12, true);
        case PMIX_INFO:
            return other(type_kind::info, sizeof(pmix_info_t), 10);
        case PMIX_VALUE:
            return other(type_kind::value, sizeof(pmix_value_t), 2);
        default:
            return type_traits{};
    }
}

constexpr type_traits make(pmix_data_type_t type) {
    type_traits t = make_base(type);
    t.ops = &kOps[static_cast<size_t>(t.kind)];
    return t;
}

// Type codes below this are looked up in a table built at compile time; the rest are none.
constexpr size_t kTableSize = 128;

struct table {
    type_traits t[kTableSize];
    constexpr table() : t() {
        for (size_t i = 0; i < kTableSize; ++i) t[i] = make(static_cast<pmix_data_type_t>(i));
    }
};

constexpr table kTable;
constexpr type_traits kNone = make(PMIX_UNDEF);  // kind none

}  // namespace

const type_traits &traits_of(pmix_data_type_t type) { return type < kTableSize ? kTable.t[type] : kNone; }

}  // namespace pmixcpp
