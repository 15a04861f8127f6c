// One table of what each PMIx data type is: how large one element is in memory, how it is held
// in a pmix_value_t, whether it is a plain number, and the fewest bytes it takes on the wire.
// value.cc (size, copy, compare, destruct, numbers) and wire/codec.cc (encode, decode) consult
// it instead of each listing the type codes again.
#pragma once

#include <pmix_common.h>

#include <cstddef>
#include <cstdint>

namespace pmixcpp {

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

struct type_traits {
    type_kind kind = type_kind::none;
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

}  // namespace pmixcpp
