// What the two halves of OpenPMIx's buffer encoding share (bfrops.cc: the flavours and the
// unpacker; bfrops_pack.cc: the packer): how each scalar type travels, the tags, varints and
// the limits. Private to plugin/native/bfrops*.cc; bfrops.h is the interface.
#pragma once

#include "plugin/native/bfrops.h"

#include <string>

#include "type_traits.h"

namespace pmixcpp::native::bfrops_detail {

// How a scalar type travels (one row per type code; the structured types are in
// put_element/get_element).
enum class wire_int : uint8_t {
    none,
    raw8,   // one raw byte (BOOL, BYTE, INT8, UINT8, the one-byte enums)
    u16,
    s16,
    u32,
    s32,
    u64,
    s64,
    size,    // SIZE: flex128 untagged varint; fixed tag UINT64 + 8 bytes
    int_,    // INT/UINT: flex128 untagged zigzag int32; fixed tag INT32 + 4 bytes
    pid,     // tag UINT32 (a DATA_TYPE) + UINT32, both flavours
    time,    // time_t as UINT64
    timeval, // 2 x INT64
    real,    // FLOAT/DOUBLE as the STRING "%f"
};

inline wire_int wire_int_of(pmix_data_type_t type) {
    switch (type) {
        case PMIX_BOOL:
        case PMIX_BYTE:
        case PMIX_INT8:
        case PMIX_UINT8:
        case PMIX_PERSIST:
        case PMIX_SCOPE:
        case PMIX_DATA_RANGE:
        case PMIX_COMMAND:
        case PMIX_PROC_STATE:
        case PMIX_ALLOC_DIRECTIVE:
        case PMIX_JOB_STATE:
        case PMIX_LINK_STATE:
            return wire_int::raw8;
        case PMIX_INT16:
            return wire_int::s16;
        case PMIX_UINT16:
        case PMIX_DATA_TYPE:
        case PMIX_IOF_CHANNEL:
        case PMIX_LOCTYPE:
        case PMIX_STOR_ACCESS_TYPE:
            return wire_int::u16;
        case PMIX_INT32:
        case PMIX_STATUS:
            return wire_int::s32;
        case PMIX_UINT32:
        case PMIX_PROC_RANK:
        case PMIX_INFO_DIRECTIVES:
            return wire_int::u32;
        case PMIX_INT64:
            return wire_int::s64;
        case PMIX_UINT64:
        case PMIX_DEVTYPE:
        case PMIX_STOR_MEDIUM:
        case PMIX_STOR_ACCESS:
        case PMIX_STOR_PERSIST:
            return wire_int::u64;
        case PMIX_SIZE:
            return wire_int::size;
        case PMIX_INT:
        case PMIX_UINT:
            return wire_int::int_;
        case PMIX_PID:
            return wire_int::pid;
        case PMIX_TIME:
            return wire_int::time;
        case PMIX_TIMEVAL:
            return wire_int::timeval;
        case PMIX_FLOAT:
        case PMIX_DOUBLE:
            return wire_int::real;
        default:
            return wire_int::none;
    }
}

inline constexpr pmix_data_type_t kSizeTag = PMIX_UINT64;  // size_t on the 64-bit hosts OpenPMIx runs on
inline constexpr pmix_data_type_t kIntTag = PMIX_INT32;
inline constexpr pmix_data_type_t kPidTag = PMIX_UINT32;
inline constexpr int kMaxVarintBytes = 9;  // 8 groups of 7 bits + one byte of 8 bits
inline constexpr size_t kMaxKeyChars = PMIX_MAX_KEYLEN;
inline constexpr size_t kMaxNspaceChars = PMIX_MAX_NSLEN;

inline uint64_t zigzag(int64_t v) {
    uint64_t u = static_cast<uint64_t>(v);
    return v < 0 ? (~u << 1) | 1u : u << 1;
}

inline int64_t unzigzag(uint64_t u) {
    uint64_t m = u >> 1;
    if (u & 1u) m = ~m;
    return static_cast<int64_t>(m);
}

inline Status unsupported(pmix_data_type_t type, int_flavour f) {
    return Status(PMIX_ERR_NOT_SUPPORTED, std::string("data type ") + std::to_string(type) +
                                              " is not supported by the " + to_string(f) + " codec");
}

// Bytes of one element in memory (PMIX_COMMAND, a server-internal type, is one byte).
inline size_t element_size(pmix_data_type_t type) { return type == PMIX_COMMAND ? 1 : traits_of(type).size; }

// Can a pmix_value_t hold `type` (inline in its union or behind data.ptr)? Never an INFO or a
// VALUE: their elements do not fit the union and OpenPMIx has no such values.
inline bool value_holds(pmix_data_type_t type) {
    if (type == PMIX_INFO || type == PMIX_VALUE || type == PMIX_COMMAND) return false;
    const type_traits &t = traits_of(type);
    return t.size != 0 && (t.pointer_in_value || t.size <= sizeof(pmix_value_t::data));
}

inline Status too_deep() {
    return Status(PMIX_ERR_UNPACK_FAILURE,
                  "nesting deeper than " + std::to_string(wire::kMaxNestingDepth) + " levels");
}

}  // namespace pmixcpp::native::bfrops_detail
