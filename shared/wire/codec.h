// Byte-level encoding of wire payloads and of PMIx data (values, infos, procs, data arrays).
//
// Encoding (all integers little-endian, written byte by byte; never a struct memcpy):
//   u8/u16/u32/u64, i8..i64 (two's complement), f32/f64 (IEEE-754 bit pattern as u32/u64)
//   bool           u8, 0 or 1 (anything else is rejected)
//   string         u32 length + bytes, no terminator; length 0xFFFFFFFF means a NULL char*;
//                  an embedded NUL is rejected
//   bytes          u32 length + bytes
//   pmix_proc_t    string nspace (<= PMIX_MAX_NSLEN, not NULL) + u32 rank
//   pmix_value_t   u16 data type (the standard PMIX_* code) + payload of that type
//   pmix_info_t    string key (1..PMIX_MAX_KEYLEN, not NULL) + u32 flags + value
//   info array     u32 count + count infos
//   data array     u16 element type + u32 count + count element payloads
// Payloads of the structured types are listed in codec.cc next to the code (element_ops<kind>::encode).
//
// Decoded data is allocated the way the PMIx C API expects (malloc/strdup/calloc), so it can be
// handed to C callers and released with value_destruct/info_array_free (or free()). A decoder that
// fails leaves its output empty (PMIX_UNDEF / zeroed / untouched) and leaks nothing.
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

namespace pmixcpp::wire {

// Nesting limit for data arrays inside values inside data arrays ...
inline constexpr int kMaxNestingDepth = 16;
// Upper bound on element counts (arrays, info lists) regardless of the bytes that remain.
inline constexpr uint32_t kMaxElementCount = 1u << 24;
inline constexpr uint32_t kNullStringLength = 0xFFFFFFFFu;

// Decode budget: what a decoder may allocate for one message, charged by the Reader before each
// allocation (arrays by count x element size, strings and byte blocks by length). The decoded form
// of an input of n bytes is at most kDecodeBudgetFactor * n + kDecodeBudgetSlack bytes, and never
// more than kMaxDecodeBudget. The factor covers the densest legitimate input: a pmix_info_t is
// 552 bytes in memory for at least 10 on the wire (empty key, PMIX_UNDEF value), a pmix_proc_t 260
// for 8. A message beyond the budget fails with PMIX_ERR_OUT_OF_RESOURCE before anything is
// allocated for it.
inline constexpr size_t kDecodeBudgetFactor = 64;
inline constexpr size_t kDecodeBudgetSlack = 64u << 10;
inline constexpr size_t kMaxDecodeBudget = 512u << 20;
size_t decode_budget_for(size_t input_bytes);

class Writer {
public:
    Writer() = default;
    // Continue after `start` (a header to fill in later through at()).
    explicit Writer(std::vector<uint8_t> start) : _buf(std::move(start)) {}
    void reserve(size_t n) { _buf.reserve(n); }
    // Bytes already written, to fill in (valid until the next put).
    uint8_t *at(size_t offset) { return _buf.data() + offset; }
    void put_u8(uint8_t v) { _buf.push_back(v); }
    void put_u16(uint16_t v);
    void put_u32(uint32_t v);
    void put_u64(uint64_t v);
    void put_i8(int8_t v) { put_u8(static_cast<uint8_t>(v)); }
    void put_i16(int16_t v) { put_u16(static_cast<uint16_t>(v)); }
    void put_i32(int32_t v) { put_u32(static_cast<uint32_t>(v)); }
    void put_i64(int64_t v) { put_u64(static_cast<uint64_t>(v)); }
    void put_bool(bool v) { put_u8(v ? 1 : 0); }
    void put_f32(float v);
    void put_f64(double v);
    // Length-prefixed string; fails if longer than 4 GiB - 2.
    Status put_string(std::string_view s);
    // Nullable C string (NULL is encoded as length 0xFFFFFFFF).
    Status put_cstring(const char *s);
    // Length-prefixed opaque bytes.
    Status put_bytes(const void *data, size_t size);
    // Raw bytes, no prefix.
    void put_raw(const void *data, size_t size);

    size_t size() const { return _buf.size(); }
    const std::vector<uint8_t> &data() const { return _buf; }
    std::vector<uint8_t> take() { return std::move(_buf); }
    void clear() { _buf.clear(); }
    // Roll back to an earlier size (used to undo a partially encoded item on failure).
    void truncate(size_t size) {
        if (size < _buf.size()) _buf.resize(size);
    }

private:
    std::vector<uint8_t> _buf;
};

// Bounds-checked reader over a byte range it does not own. Every getter returns a Status and
// leaves the position unchanged on failure. It keeps the message's decode budget (above): getters
// that copy (strings, byte blocks) charge their length, and decoders call take_count before they
// allocate an array.
class Reader {
public:
    Reader(const uint8_t *data, size_t size) : _data(data), _size(size), _budget(decode_budget_for(size)) {}
    explicit Reader(std::span<const uint8_t> bytes)
        : _data(bytes.data()), _size(bytes.size()), _budget(decode_budget_for(bytes.size())) {}
    // With an explicit budget (a caller that knows the decoded form is smaller, or a sub-message
    // sharing what is left of its parent's budget).
    Reader(std::span<const uint8_t> bytes, size_t budget) : _data(bytes.data()), _size(bytes.size()), _budget(budget) {}

    // Before allocating `count` elements of `mem_size` bytes each, whose encodings take at least
    // `min_wire` bytes each (>= 1): fails unless count <= max_count, the remaining input can hold
    // them, and count * mem_size fits the remaining budget; charges that on success. A message
    // announcing 2^32 elements in 40 bytes fails here, before any allocation.
    Status take_count(uint64_t count, size_t min_wire, size_t mem_size, const char *what,
                      uint64_t max_count = kMaxElementCount);
    // Charge `bytes` against the budget (fails, charging nothing, if they do not fit).
    Status charge(size_t bytes, const char *what);
    size_t budget_left() const { return _budget - _charged; }
    size_t charged() const { return _charged; }
    // Most procs a list in this message may name (decode_procs and the like): a decoder that knows
    // its step sets what the step can hold.
    void limit_procs(uint32_t n) { _proc_limit = n; }
    uint32_t proc_limit() const { return _proc_limit; }

    Status get_u8(uint8_t *v);
    Status get_u16(uint16_t *v);
    Status get_u32(uint32_t *v);
    Status get_u64(uint64_t *v);
    Status get_i8(int8_t *v);
    Status get_i16(int16_t *v);
    Status get_i32(int32_t *v);
    Status get_i64(int64_t *v);
    Status get_bool(bool *v);
    Status get_f32(float *v);
    Status get_f64(double *v);
    // Non-NULL string (rejects the NULL marker and embedded NULs), at most max_len bytes.
    Status get_string(std::string *s, size_t max_len = SIZE_MAX);
    // Nullable string as a malloc'ed C string (*s = NULL for the NULL marker), at most max_len bytes.
    Status get_cstring(char **s, size_t max_len = SIZE_MAX);
    // Length-prefixed bytes as a view into the input (charged: callers usually copy them).
    Status get_bytes(std::span<const uint8_t> *bytes);
    // Raw view of the next n bytes.
    Status get_raw(size_t n, const uint8_t **p);

    size_t remaining() const { return _size - _pos; }
    size_t position() const { return _pos; }
    bool at_end() const { return _pos == _size; }
    // Fails unless every byte was consumed (trailing garbage is an error).
    Status expect_end() const;

private:
    Status need(size_t n) const;
    Status get_string_view(std::string_view *sv, bool *is_null, size_t max_len);

    const uint8_t *_data;
    size_t _size;
    size_t _pos = 0;
    size_t _budget;
    size_t _charged = 0;
    uint32_t _proc_limit = kMaxElementCount;
};

// --- PMIx data -------------------------------------------------------------------------------
Status encode_proc(Writer &w, const pmix_proc_t &proc);
Status decode_proc(Reader &r, pmix_proc_t *proc);

Status encode_value(Writer &w, const pmix_value_t &value);
// `value` is overwritten (not released first); PMIX_UNDEF on failure.
Status decode_value(Reader &r, pmix_value_t *value);

// PMIX_INFO_PERSISTENT is never put on the wire (the encoder clears it; the decoder refuses an
// info that carries it, so decoded data is always owned and every encoding is canonical).
Status encode_info(Writer &w, const pmix_info_t &info);
// `info` is overwritten; zeroed on failure.
Status decode_info(Reader &r, pmix_info_t *info);

Status encode_info_array(Writer &w, const pmix_info_t *infos, size_t count);
// *out receives the calloc'ed array (replacing what it held).
Status decode_info_array(Reader &r, InfoArray *out);

Status encode_data_array(Writer &w, const pmix_data_array_t &array);
// *out = newly calloc'ed pmix_data_array_t (free with data_array_free); untouched on failure.
Status decode_data_array(Reader &r, pmix_data_array_t **out);

// Whole-buffer helpers: decode exactly one item that spans all of `bytes`.
Status decode_value_exact(std::span<const uint8_t> bytes, pmix_value_t *value);
Status decode_info_array_exact(std::span<const uint8_t> bytes, InfoArray *out);

}  // namespace pmixcpp::wire
