// One table of what each PMIx data type is: how large one element is in memory, how it is held
// in a pmix_value_t, whether it is a plain number, the fewest bytes it takes on the wire, and
// what is done with one element of it (type_ops: compare, copy, destruct, encode, decode).
// value.cc and wire/codec.cc look a type up here instead of each listing the type codes or the
// kinds again: a type code is named once (type_traits.cc), a kind's operations once (its row).
#pragma once

#include <pmix_common.h>

#include <cstddef>
#include <cstdint>

#include "status.h"

namespace pmixcpp {

namespace wire {
class Writer;
class Reader;
}  // namespace wire

enum class type_kind : uint8_t {
    none,    // not a type this library stores or sends
    scalar,  // a fixed-width number, flag or enum: copied, compared and sent as its bits
    timeval,
    string,   // char *
    pointer,  // void *: held, never sent
    nspace,   // pmix_nspace_t
    proc,
    byte_object,  // pmix_byte_object_t (also compressed strings/objects and regexes)
    proc_info,
    data_array,
    envar,
    coord,
    regattr,
    geometry,
    device_dist,
    endpoint,
    info,
    value,
};

// What is done with one element of a kind. compare, copy and destruct are defined in value.cc,
// encode and decode in wire/codec.cc (the element_ops<kind> below).
struct type_ops {
    pmix_value_cmp_t (*compare)(pmix_data_type_t type, const void *a, const void *b);
    // Into zeroed storage; what a failed copy leaves behind element_copy destructs.
    Status (*copy)(pmix_data_type_t type, void *dst, const void *src);
    void (*destruct)(void *element);  // frees what the element owns (element_destruct then zeroes it)
    Status (*encode)(wire::Writer &w, pmix_data_type_t type, const void *element, int depth);
    // Into zeroed storage; on failure the caller runs element_destruct.
    Status (*decode)(wire::Reader &r, pmix_data_type_t type, void *element, int depth);
    bool fixed_unload;  // value_unload hands out a copy of the element's bytes
};

struct type_traits {
    type_kind kind = type_kind::none;
    const type_ops *ops = nullptr;  // never null for a type from traits_of
    uint16_t size = 0;              // one element in memory (0: none)
    uint8_t min_wire = 0;           // fewest wire bytes of one element (0: cannot be sent)
    bool pointer_in_value = false;  // a pmix_value_t holds it behind data.ptr
    // scalars only
    bool is_bool = false;
    bool is_signed = false;
    bool is_float = false;
    bool numeric = false;  // a number value_get_number converts from and to
};

const type_traits &traits_of(pmix_data_type_t type);
inline const type_ops &ops_of(pmix_data_type_t type) { return *traits_of(type).ops; }

// The operations of a kind: plain_ops, and what a kind does differently in its element_ops.
// plain_ops: owns nothing, copied as its bytes, cannot be compared, encoded or decoded.
struct plain_ops {
    static constexpr bool fixed_unload = false;
    static pmix_value_cmp_t compare(pmix_data_type_t type, const void *a, const void *b);
    static Status copy(pmix_data_type_t type, void *dst, const void *src);
    static void destruct(void *element);
    static Status encode(wire::Writer &w, pmix_data_type_t type, const void *element, int depth);
    static Status decode(wire::Reader &r, pmix_data_type_t type, void *element, int depth);
};

template <type_kind K>
struct element_ops : plain_ops {};

// Compared, encoded and decoded by kind; copied as their bytes, owning nothing.
#define PMIXCPP_BITS_OPS(K, FIXED_UNLOAD)                                                          \
    template <>                                                                                     \
    struct element_ops<type_kind::K> : plain_ops {                                                  \
        static constexpr bool fixed_unload = FIXED_UNLOAD;                                          \
        static pmix_value_cmp_t compare(pmix_data_type_t type, const void *a, const void *b);       \
        static Status encode(wire::Writer &w, pmix_data_type_t type, const void *element, int depth); \
        static Status decode(wire::Reader &r, pmix_data_type_t type, void *element, int depth);     \
    }
// Every operation of its own.
#define PMIXCPP_OWNING_OPS(K, FIXED_UNLOAD)                                                        \
    template <>                                                                                     \
    struct element_ops<type_kind::K> : plain_ops {                                                  \
        static constexpr bool fixed_unload = FIXED_UNLOAD;                                          \
        static pmix_value_cmp_t compare(pmix_data_type_t type, const void *a, const void *b);       \
        static Status copy(pmix_data_type_t type, void *dst, const void *src);                      \
        static void destruct(void *element);                                                        \
        static Status encode(wire::Writer &w, pmix_data_type_t type, const void *element, int depth); \
        static Status decode(wire::Reader &r, pmix_data_type_t type, void *element, int depth);     \
    }

PMIXCPP_BITS_OPS(scalar, true);
PMIXCPP_BITS_OPS(timeval, true);
PMIXCPP_BITS_OPS(proc, true);
PMIXCPP_OWNING_OPS(string, false);
PMIXCPP_OWNING_OPS(byte_object, false);
PMIXCPP_OWNING_OPS(proc_info, false);
PMIXCPP_OWNING_OPS(data_array, false);
PMIXCPP_OWNING_OPS(envar, false);
PMIXCPP_OWNING_OPS(coord, false);
PMIXCPP_OWNING_OPS(regattr, false);
PMIXCPP_OWNING_OPS(geometry, false);
PMIXCPP_OWNING_OPS(device_dist, false);
PMIXCPP_OWNING_OPS(endpoint, false);
PMIXCPP_OWNING_OPS(info, true);
PMIXCPP_OWNING_OPS(value, true);

// pmix_nspace_t: owns nothing, copied bounded (the source may be a short C string).
template <>
struct element_ops<type_kind::nspace> : plain_ops {
    static constexpr bool fixed_unload = true;
    static pmix_value_cmp_t compare(pmix_data_type_t type, const void *a, const void *b);
    static Status copy(pmix_data_type_t type, void *dst, const void *src);
    static Status encode(wire::Writer &w, pmix_data_type_t type, const void *element, int depth);
    static Status decode(wire::Reader &r, pmix_data_type_t type, void *element, int depth);
};

// A raw pointer: held and compared by address, never sent (encode says why; decode is plain's).
template <>
struct element_ops<type_kind::pointer> : plain_ops {
    static pmix_value_cmp_t compare(pmix_data_type_t type, const void *a, const void *b);
    static Status encode(wire::Writer &w, pmix_data_type_t type, const void *element, int depth);
};

#undef PMIXCPP_BITS_OPS
#undef PMIXCPP_OWNING_OPS

}  // namespace pmixcpp
