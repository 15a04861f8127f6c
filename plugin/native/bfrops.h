// OpenPMIx's buffer encoding ("bfrops"), NON_DESC buffers, for clients that bring their own
// OpenPMIx library (docs: /work/shared/design/OPENPMIX-WIRE.md §3; facts checked against bytes
// that OpenPMIx 4.2.2's PMIx_Data_pack produced, tests/native/test_bfrops.cc).
//
// A payload is a sequence of top-level packs, each [INT32 count][count elements]. Inside an
// element nothing carries a count. Two integer flavours, chosen per connection from the bfrops
// name the client announces in its handshake:
//   fixed    (v20, v21, v3: OpenPMIx 2.x/3.x) fixed width, big-endian; SIZE is tagged
//            (u16 tag PMIX_UINT64 + 8 bytes), INT/UINT are tagged (u16 PMIX_INT32 + 4 bytes)
//   flex128  (v4, v41: OpenPMIx >= 4.0, and what 5.x/6.x clients speak to a v41 server)
//            every integer a base-128 varint, low group first, at most 8 groups of 7 bits and a
//            9th byte of 8 raw bits; signed types zigzag-mapped over 64 bits; SIZE, INT and UINT
//            untagged (UINT is sent as a signed int32, as OpenPMIx does)
// Both: PID is tagged (DATA_TYPE PMIX_UINT32, then the pid as UINT32); DATA_TYPE is a UINT16,
// STATUS an INT32, PROC_RANK and INFO_DIRECTIVES UINT32, TIME/DEVTYPE UINT64; BOOL, BYTE,
// INT8/UINT8 and the one-byte enums are raw bytes; FLOAT/DOUBLE travel as the STRING "%f";
// STRING is INT32 strlen+1 and the bytes with their NUL (NULL: length 0, no bytes).
// The layout of every structured type is next to its code in bfrops_pack.cc (put_element) and
// bfrops.cc (get_element).
//
// The decoder runs in root's slurmstepd on bytes from the job's processes: every length and count
// is checked against the bytes that remain and charged to the message's decode budget
// (wire::Reader) before anything is allocated; nesting is capped; a type it does not know or does
// not hold (TOPO, PROC_CPUSET, the stats, DATA_BUFFER, REGEX, and in the fixed flavour every type
// OpenPMIx 3.x does not have) is an error Status. Decoded data is allocated as the PMIx C API
// expects (malloc/calloc/strdup), released with the shared/value.h helpers; a failed decode
// leaves its output empty and leaks nothing.
#pragma once

#include <pmix_common.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "status.h"
#include "value.h"
#include "wire/codec.h"

namespace pmixcpp::native {

enum class int_flavour : uint8_t { fixed, flex128 };
const char *to_string(int_flavour f);

// The flavour of a bfrops component name from a handshake ("v3" -> fixed, "v41" -> flex128).
// Unknown names (v12, v51, ...) are PMIX_ERR_NOT_SUPPORTED.
Result<int_flavour> flavour_of_bfrops(std::string_view name);

// Can `type` be packed / unpacked in this flavour (as an element, a VALUE or an INFO payload)?
bool type_supported(int_flavour f, pmix_data_type_t type);

class packer {
public:
    explicit packer(int_flavour f) : _f(f) {}
    int_flavour flavour() const { return _f; }

    // A top-level pack: [INT32 count][count elements of `type`] (src: an array of `count`
    // elements, as PMIx_Data_pack takes them). On failure nothing is appended.
    Status pack(pmix_data_type_t type, const void *src, int32_t count);

    // One element, no count. On failure nothing is appended.
    Status put(pmix_data_type_t type, const void *element);

    // The integer encodings, one element each.
    void put_int16(int16_t v);
    void put_uint16(uint16_t v);
    void put_int32(int32_t v);
    void put_uint32(uint32_t v);
    void put_int64(int64_t v);
    void put_uint64(uint64_t v);
    void put_size(size_t v);
    void put_u8(uint8_t v) { _buf.push_back(v); }
    void put_data_type(pmix_data_type_t t) { put_uint16(t); }
    void put_status(pmix_status_t s) { put_int32(s); }
    void put_rank(pmix_rank_t r) { put_uint32(r); }
    Status put_string(const char *s);  // NULL allowed
    Status put_value(const pmix_value_t &v);  // DATA_TYPE + payload
    Status put_info(const pmix_info_t &info);
    void put_proc(const pmix_proc_t &p);
    // BYTE_OBJECT layout: SIZE + bytes.
    void put_bytes(std::span<const uint8_t> bytes);
    // A KVAL (the job blob, GET replies): STRING key, then the value as a VALUE.
    Status put_kval(const char *key, const pmix_value_t &v);
    // A BUFFER (pmix_buffer_t inside COMMIT): its type byte, SIZE, the bytes.
    void put_buffer(uint8_t buffer_type, std::span<const uint8_t> bytes);
    // Raw bytes (an already packed blob).
    void put_raw(std::span<const uint8_t> bytes) { _buf.insert(_buf.end(), bytes.begin(), bytes.end()); }

    size_t size() const { return _buf.size(); }
    const std::vector<uint8_t> &data() const { return _buf; }
    std::vector<uint8_t> take() { return std::move(_buf); }

private:
    void put_varint(uint64_t v);
    void put_be(uint64_t v, int bytes);
    Status put_element(pmix_data_type_t type, const void *element, int depth);
    Status put_payload(const pmix_value_t &v, int depth);

    int_flavour _f;
    std::vector<uint8_t> _buf;
};

class unpacker {
public:
    // The decode budget is wire::decode_budget_for(bytes.size()).
    unpacker(int_flavour f, std::span<const uint8_t> bytes) : _f(f), _r(bytes) {}
    unpacker(int_flavour f, std::span<const uint8_t> bytes, size_t budget) : _f(f), _r(bytes, budget) {}
    int_flavour flavour() const { return _f; }

    // A top-level pack of exactly `count` elements of `type` into `dst` (zeroed storage for
    // `count` elements; on failure it is left zeroed).
    Status unpack(pmix_data_type_t type, void *dst, int32_t count);
    // The count of the next top-level pack (>= 0), to unpack its elements with get().
    Status unpack_count(int32_t *count);

    // One element into zeroed storage; on failure the element is destructed (zeroed).
    Status get(pmix_data_type_t type, void *element);

    Status get_int16(int16_t *v);
    Status get_uint16(uint16_t *v);
    Status get_int32(int32_t *v);
    Status get_uint32(uint32_t *v);
    Status get_int64(int64_t *v);
    Status get_uint64(uint64_t *v);
    Status get_size(size_t *v);
    Status get_u8(uint8_t *v) { return _r.get_u8(v); }
    Status get_data_type(pmix_data_type_t *t) { return get_uint16(t); }
    Status get_status(pmix_status_t *s) { return get_int32(s); }
    Status get_rank(pmix_rank_t *r) { return get_uint32(r); }
    // *s = malloc'ed string or NULL (length 0); at most max_len characters.
    Status get_cstring(char **s, size_t max_len = SIZE_MAX);
    // A non-NULL string.
    Status get_string(std::string *s, size_t max_len = SIZE_MAX);
    Status get_value(pmix_value_t *v);  // overwritten; PMIX_UNDEF on failure
    Status get_info(pmix_info_t *info);  // overwritten; zeroed on failure
    Status get_proc(pmix_proc_t *p);
    // BYTE_OBJECT as a view into the input.
    Status get_bytes(std::span<const uint8_t> *bytes);
    Status get_kval(std::string *key, pmix_value_t *v);
    Status get_buffer(uint8_t *buffer_type, std::span<const uint8_t> *bytes);
    // `count` INFOs (a count unpacked before) into *out (budget-checked before allocating).
    Status get_infos(size_t count, InfoArray *out);

    size_t remaining() const { return _r.remaining(); }
    size_t position() const { return _r.position(); }
    bool at_end() const { return _r.at_end(); }
    wire::Reader &reader() { return _r; }

private:
    Status get_varint(uint64_t *v, int max_bytes);
    Status get_be(uint64_t *v, int bytes);
    Status get_unsigned(uint64_t *v, int bytes);
    Status get_signed(int64_t *v, int bytes);
    Status get_element(pmix_data_type_t type, void *element, int depth);
    Status get_payload(pmix_data_type_t type, pmix_value_t *v, int depth);
    Status get_tag(pmix_data_type_t expected, const char *what);

    int_flavour _f;
    wire::Reader _r;
};

}  // namespace pmixcpp::native
