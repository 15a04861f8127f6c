// Byte-level codec and the encoding of PMIx data; the format is summarised in codec.h.
#include "wire/codec.h"
#include "type_traits.h"

#include <sys/time.h>
#include <sys/types.h>

#include <bit>
#include <cstdlib>
#include <cstring>

namespace pmixcpp::wire {

// --- Writer ----------------------------------------------------------------------------------
void Writer::put_u16(uint16_t v) {
    _buf.push_back(static_cast<uint8_t>(v));
    _buf.push_back(static_cast<uint8_t>(v >> 8));
}

void Writer::put_u32(uint32_t v) {
    for (int i = 0; i < 4; ++i) _buf.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

void Writer::put_u64(uint64_t v) {
    for (int i = 0; i < 8; ++i) _buf.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

void Writer::put_f32(float v) { put_u32(std::bit_cast<uint32_t>(v)); }
void Writer::put_f64(double v) { put_u64(std::bit_cast<uint64_t>(v)); }

Status Writer::put_string(std::string_view s) {
    if (s.size() >= kNullStringLength) return Status(PMIX_ERR_PACK_FAILURE, "string too long to encode");
    put_u32(static_cast<uint32_t>(s.size()));
    put_raw(s.data(), s.size());
    return Status::success();
}

Status Writer::put_cstring(const char *s) {
    if (s == nullptr) {
        put_u32(kNullStringLength);
        return Status::success();
    }
    return put_string(std::string_view(s));
}

Status Writer::put_bytes(const void *data, size_t size) {
    if (size > UINT32_MAX) return Status(PMIX_ERR_PACK_FAILURE, "byte block too long to encode");
    if (size != 0 && data == nullptr)
        return Status(PMIX_ERR_PACK_FAILURE, "byte block with size but no data");
    put_u32(static_cast<uint32_t>(size));
    put_raw(data, size);
    return Status::success();
}

void Writer::put_raw(const void *data, size_t size) {
    if (size == 0) return;
    auto p = static_cast<const uint8_t *>(data);
    _buf.insert(_buf.end(), p, p + size);
}

// --- Reader ----------------------------------------------------------------------------------
size_t decode_budget_for(size_t input_bytes) {
    if (input_bytes > (kMaxDecodeBudget - kDecodeBudgetSlack) / kDecodeBudgetFactor) return kMaxDecodeBudget;
    return input_bytes * kDecodeBudgetFactor + kDecodeBudgetSlack;
}

Status Reader::charge(size_t bytes, const char *what) {
    if (bytes > _budget - _charged)
        return Status(PMIX_ERR_OUT_OF_RESOURCE, std::string(what) + ": " + std::to_string(bytes) +
                                                    " more bytes exceed the decode budget of the message (" +
                                                    std::to_string(_budget) + " bytes for " +
                                                    std::to_string(_size) + " input bytes)");
    _charged += bytes;
    return Status::success();
}

Status Reader::take_count(uint64_t count, size_t min_wire, size_t mem_size, const char *what,
                          uint64_t max_count) {
    if (count > max_count)
        return Status(PMIX_ERR_UNPACK_FAILURE, std::string(what) + ": count " + std::to_string(count) +
                                                   " exceeds the limit " + std::to_string(max_count));
    if (min_wire == 0) min_wire = 1;
    if (count > remaining() / min_wire)
        return Status(PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER,
                      std::string(what) + ": count " + std::to_string(count) + " cannot fit in " +
                          std::to_string(remaining()) + " remaining bytes");
    // count <= remaining: no overflow unless mem_size is absurd
    if (mem_size != 0 && count > (_budget - _charged) / mem_size)
        return Status(PMIX_ERR_OUT_OF_RESOURCE,
                      std::string(what) + ": " + std::to_string(count) + " elements of " +
                          std::to_string(mem_size) + " bytes exceed the decode budget of the message (" +
                          std::to_string(_budget) + " bytes for " + std::to_string(_size) + " input bytes)");
    _charged += static_cast<size_t>(count) * mem_size;
    return Status::success();
}

Status Reader::need(size_t n) const {
    if (n > _size - _pos)
        return Status(PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER,
                      "need " + std::to_string(n) + " bytes at offset " + std::to_string(_pos) + ", have " +
                          std::to_string(_size - _pos));
    return Status::success();
}

Status Reader::get_u8(uint8_t *v) {
    PMIXCPP_RETURN_IF_ERROR(need(1));
    *v = _data[_pos++];
    return Status::success();
}

Status Reader::get_u16(uint16_t *v) {
    PMIXCPP_RETURN_IF_ERROR(need(2));
    *v = static_cast<uint16_t>(_data[_pos] | (_data[_pos + 1] << 8));
    _pos += 2;
    return Status::success();
}

Status Reader::get_u32(uint32_t *v) {
    PMIXCPP_RETURN_IF_ERROR(need(4));
    uint32_t out = 0;
    for (int i = 0; i < 4; ++i) out |= static_cast<uint32_t>(_data[_pos + i]) << (8 * i);
    _pos += 4;
    *v = out;
    return Status::success();
}

Status Reader::get_u64(uint64_t *v) {
    PMIXCPP_RETURN_IF_ERROR(need(8));
    uint64_t out = 0;
    for (int i = 0; i < 8; ++i) out |= static_cast<uint64_t>(_data[_pos + i]) << (8 * i);
    _pos += 8;
    *v = out;
    return Status::success();
}

Status Reader::get_i8(int8_t *v) {
    uint8_t u;
    PMIXCPP_RETURN_IF_ERROR(get_u8(&u));
    *v = static_cast<int8_t>(u);
    return Status::success();
}

Status Reader::get_i16(int16_t *v) {
    uint16_t u;
    PMIXCPP_RETURN_IF_ERROR(get_u16(&u));
    *v = static_cast<int16_t>(u);
    return Status::success();
}

Status Reader::get_i32(int32_t *v) {
    uint32_t u;
    PMIXCPP_RETURN_IF_ERROR(get_u32(&u));
    *v = static_cast<int32_t>(u);
    return Status::success();
}

Status Reader::get_i64(int64_t *v) {
    uint64_t u;
    PMIXCPP_RETURN_IF_ERROR(get_u64(&u));
    *v = static_cast<int64_t>(u);
    return Status::success();
}

Status Reader::get_bool(bool *v) {
    PMIXCPP_RETURN_IF_ERROR(need(1));
    uint8_t u = _data[_pos];
    if (u > 1) return Status(PMIX_ERR_UNPACK_FAILURE, "bool byte " + std::to_string(u) + " is not 0 or 1");
    ++_pos;
    *v = u != 0;
    return Status::success();
}

Status Reader::get_f32(float *v) {
    uint32_t u;
    PMIXCPP_RETURN_IF_ERROR(get_u32(&u));
    *v = std::bit_cast<float>(u);
    return Status::success();
}

Status Reader::get_f64(double *v) {
    uint64_t u;
    PMIXCPP_RETURN_IF_ERROR(get_u64(&u));
    *v = std::bit_cast<double>(u);
    return Status::success();
}

Status Reader::get_string_view(std::string_view *sv, bool *is_null, size_t max_len) {
    size_t start = _pos;
    uint32_t len;
    PMIXCPP_RETURN_IF_ERROR(get_u32(&len));
    if (len == kNullStringLength) {
        *is_null = true;
        *sv = {};
        return Status::success();
    }
    if (len > max_len) {
        _pos = start;
        return Status(PMIX_ERR_UNPACK_FAILURE,
                      "string of " + std::to_string(len) + " bytes exceeds limit " + std::to_string(max_len));
    }
    Status st = need(len);
    if (!st.ok()) {
        _pos = start;
        return st.with_context("string");
    }
    auto p = reinterpret_cast<const char *>(_data + _pos);
    if (memchr(p, '\0', len) != nullptr) {
        _pos = start;
        return Status(PMIX_ERR_UNPACK_FAILURE, "string contains a NUL byte");
    }
    if (st = charge(static_cast<size_t>(len) + 1, "string"); !st.ok()) {
        _pos = start;
        return st;
    }
    _pos += len;
    *is_null = false;
    *sv = std::string_view(p, len);
    return Status::success();
}

Status Reader::get_string(std::string *s, size_t max_len) {
    size_t start = _pos;
    std::string_view sv;
    bool is_null;
    PMIXCPP_RETURN_IF_ERROR(get_string_view(&sv, &is_null, max_len));
    if (is_null) {
        _pos = start;
        return Status(PMIX_ERR_UNPACK_FAILURE, "unexpected null string");
    }
    s->assign(sv);
    return Status::success();
}

Status Reader::get_cstring(char **s, size_t max_len) {
    size_t start = _pos;
    std::string_view sv;
    bool is_null;
    PMIXCPP_RETURN_IF_ERROR(get_string_view(&sv, &is_null, max_len));
    if (is_null) {
        *s = nullptr;
        return Status::success();
    }
    char *out = static_cast<char *>(malloc(sv.size() + 1));
    if (out == nullptr) {
        _pos = start;
        return Status(PMIX_ERR_NOMEM, "out of memory decoding string");
    }
    memcpy(out, sv.data(), sv.size());
    out[sv.size()] = '\0';
    *s = out;
    return Status::success();
}

Status Reader::get_bytes(std::span<const uint8_t> *bytes) {
    size_t start = _pos;
    uint32_t len;
    PMIXCPP_RETURN_IF_ERROR(get_u32(&len));
    Status st = need(len);
    if (st.ok()) st = charge(len, "byte block");
    if (!st.ok()) {
        _pos = start;
        return st.with_context("byte block");
    }
    *bytes = std::span<const uint8_t>(_data + _pos, len);
    _pos += len;
    return Status::success();
}

Status Reader::get_raw(size_t n, const uint8_t **p) {
    PMIXCPP_RETURN_IF_ERROR(need(n));
    *p = _data + _pos;
    _pos += n;
    return Status::success();
}

Status Reader::expect_end() const {
    if (_pos != _size)
        return Status(PMIX_ERR_UNPACK_FAILURE,
                      std::to_string(_size - _pos) + " trailing bytes after message");
    return Status::success();
}

// --- PMIx data -------------------------------------------------------------------------------
namespace {

Status bad(const std::string &what) { return Status(PMIX_ERR_UNPACK_FAILURE, what); }
Status pack_err(const std::string &what) { return Status(PMIX_ERR_PACK_FAILURE, what); }

// Smallest number of wire bytes one element of `type` can take (0: type not encodable).
size_t min_wire_size(pmix_data_type_t type) { return traits_of(type).min_wire; }

Status check_count(Reader &r, uint32_t count, size_t min_wire, size_t mem_size, const char *what) {
    return r.take_count(count, min_wire, mem_size, what);
}

// A bounded, NUL-terminated char array (key or nspace) from the wire into fixed storage.
Status decode_fixed_string(Reader &r, char *dst, size_t max_len, const char *what) {
    std::string s;
    PMIXCPP_RETURN_IF_ERROR(r.get_string(&s, max_len), what);
    memcpy(dst, s.data(), s.size());
    dst[s.size()] = '\0';
    return Status::success();
}

Status encode_fixed_string(Writer &w, const char *src, size_t max_len, const char *what) {
    size_t len = strnlen(src, max_len + 1);
    if (len > max_len) return pack_err(std::string(what) + " is not terminated within its size limit");
    return w.put_string(std::string_view(src, len));
}

Status encode_bo(Writer &w, const pmix_byte_object_t &bo) {
    return w.put_bytes(bo.bytes, bo.size).with_context("byte object");
}

Status decode_bo(Reader &r, pmix_byte_object_t *bo) {
    std::span<const uint8_t> bytes;
    PMIXCPP_RETURN_IF_ERROR(r.get_bytes(&bytes), "byte object");
    bo->bytes = nullptr;
    bo->size = 0;
    if (bytes.empty()) return Status::success();
    bo->bytes = static_cast<char *>(malloc(bytes.size()));
    if (bo->bytes == nullptr) return Status(PMIX_ERR_NOMEM, "out of memory decoding byte object");
    memcpy(bo->bytes, bytes.data(), bytes.size());
    bo->size = bytes.size();
    return Status::success();
}

Status encode_coord(Writer &w, const pmix_coord_t &c) {
    if (c.dims > UINT32_MAX) return pack_err("coord has too many dimensions");
    if (c.dims != 0 && c.coord == nullptr) return pack_err("coord with dims but no values");
    w.put_u8(c.view);
    w.put_u32(static_cast<uint32_t>(c.dims));
    for (size_t i = 0; i < c.dims; ++i) w.put_u32(c.coord[i]);
    return Status::success();
}

Status decode_coord(Reader &r, pmix_coord_t *c) {
    uint32_t dims;
    PMIXCPP_RETURN_IF_ERROR(r.get_u8(&c->view));
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&dims));
    PMIXCPP_RETURN_IF_ERROR(check_count(r, dims, 4, sizeof(uint32_t), "coord"));
    if (dims == 0) return Status::success();
    c->coord = static_cast<uint32_t *>(calloc(dims, sizeof(uint32_t)));
    if (c->coord == nullptr) return Status(PMIX_ERR_NOMEM, "out of memory decoding coord");
    c->dims = dims;
    for (uint32_t i = 0; i < dims; ++i) PMIXCPP_RETURN_IF_ERROR(r.get_u32(&c->coord[i]));
    return Status::success();
}

Status encode_argv(Writer &w, char **argv) {
    if (argv == nullptr) {
        w.put_u32(kNullStringLength);
        return Status::success();
    }
    size_t n = 0;
    while (argv[n] != nullptr) ++n;
    if (n >= kMaxElementCount) return pack_err("argv too long");
    w.put_u32(static_cast<uint32_t>(n));
    for (size_t i = 0; i < n; ++i) PMIXCPP_RETURN_IF_ERROR(w.put_string(argv[i]));
    return Status::success();
}

Status decode_argv(Reader &r, char ***argv) {
    uint32_t n;
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&n));
    if (n == kNullStringLength) {
        *argv = nullptr;
        return Status::success();
    }
    PMIXCPP_RETURN_IF_ERROR(check_count(r, n, 4, sizeof(char *), "argv"));
    PMIXCPP_RETURN_IF_ERROR(r.charge(sizeof(char *), "argv"));  // the terminating NULL
    char **out = static_cast<char **>(calloc(static_cast<size_t>(n) + 1, sizeof(char *)));
    if (out == nullptr) return Status(PMIX_ERR_NOMEM, "out of memory decoding argv");
    *argv = out;  // owned by the caller's element from here on (element_destruct frees it)
    for (uint32_t i = 0; i < n; ++i) {
        char *s = nullptr;
        PMIXCPP_RETURN_IF_ERROR(r.get_cstring(&s));
        if (s == nullptr) return bad("argv element is null");
        out[i] = s;
    }
    return Status::success();
}

// A number, flag or enum: its bits, as wide on the wire as in memory (type_traits.h).
Status encode_scalar(Writer &w, const type_traits &t, const void *e) {
    if (t.is_bool) {
        w.put_bool(*static_cast<const bool *>(e));
        return Status::success();
    }
    switch (t.size) {
        case 1:
            w.put_u8(*static_cast<const uint8_t *>(e));
            return Status::success();
        case 2:
            w.put_u16(*static_cast<const uint16_t *>(e));
            return Status::success();
        case 4:
            w.put_u32(*static_cast<const uint32_t *>(e));
            return Status::success();
        case 8:
            w.put_u64(*static_cast<const uint64_t *>(e));
            return Status::success();
        default:
            return pack_err("scalar of " + std::to_string(t.size) + " bytes");
    }
}

Status decode_scalar(Reader &r, const type_traits &t, void *e) {
    if (t.is_bool) return r.get_bool(static_cast<bool *>(e));
    switch (t.size) {
        case 1:
            return r.get_u8(static_cast<uint8_t *>(e));
        case 2:
            return r.get_u16(static_cast<uint16_t *>(e));
        case 4:
            return r.get_u32(static_cast<uint32_t *>(e));
        case 8:
            return r.get_u64(static_cast<uint64_t *>(e));
        default:
            return bad("scalar of " + std::to_string(t.size) + " bytes");
    }
}

Status encode_element(Writer &w, pmix_data_type_t type, const void *e, int depth);
Status decode_element(Reader &r, pmix_data_type_t type, void *e, int depth);
Status encode_value_impl(Writer &w, const pmix_value_t &v, int depth);
Status decode_value_impl(Reader &r, pmix_value_t *v, int depth);
Status encode_info_impl(Writer &w, const pmix_info_t &info, int depth);
Status decode_info_impl(Reader &r, pmix_info_t *info, int depth);

Status encode_darray_impl(Writer &w, const pmix_data_array_t &a, int depth) {
    if (depth > kMaxNestingDepth) return pack_err("data nested too deeply");
    size_t esize = data_type_element_size(a.type);
    if (min_wire_size(a.type) == 0 || esize == 0)
        return Status(PMIX_ERR_NOT_SUPPORTED,
                      "data array of type " + std::to_string(a.type) + " cannot be encoded");
    if (a.size > kMaxElementCount) return pack_err("data array too large");
    if (a.size != 0 && a.array == nullptr) return pack_err("data array with size but no elements");
    w.put_u16(a.type);
    w.put_u32(static_cast<uint32_t>(a.size));
    auto elems = static_cast<const char *>(a.array);
    for (size_t i = 0; i < a.size; ++i) {
        PMIXCPP_RETURN_IF_ERROR(encode_element(w, a.type, elems + i * esize, depth + 1),
                                "data array element " + std::to_string(i));
    }
    return Status::success();
}

// Decode into zeroed *a; on failure the caller destructs (a->size covers every allocated element).
Status decode_darray_impl(Reader &r, pmix_data_array_t *a, int depth) {
    if (depth > kMaxNestingDepth) return bad("data nested deeper than " + std::to_string(kMaxNestingDepth));
    uint16_t type;
    uint32_t count;
    PMIXCPP_RETURN_IF_ERROR(r.get_u16(&type));
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&count));
    size_t min = min_wire_size(type);
    size_t esize = data_type_element_size(type);
    if (min == 0 || esize == 0)
        return Status(PMIX_ERR_UNKNOWN_DATA_TYPE,
                      "data array of unknown/unsupported type " + std::to_string(type));
    PMIXCPP_RETURN_IF_ERROR(check_count(r, count, min, esize, "data array"));
    a->type = type;
    if (count == 0) return Status::success();
    char *elems = static_cast<char *>(calloc(count, esize));
    if (elems == nullptr) return Status(PMIX_ERR_NOMEM, "out of memory decoding data array");
    a->array = elems;
    a->size = count;
    for (uint32_t i = 0; i < count; ++i) {
        PMIXCPP_RETURN_IF_ERROR(decode_element(r, type, elems + i * esize, depth + 1),
                                "data array element " + std::to_string(i));
    }
    return Status::success();
}

// One element of `type`: its kind's codec (type_traits.h; the payloads are listed at the end of
// this file).
Status encode_element(Writer &w, pmix_data_type_t type, const void *e, int depth) {
    return ops_of(type).encode(w, type, e, depth);
}

// Decode one element into zeroed storage; on failure the caller runs element_destruct.
Status decode_element(Reader &r, pmix_data_type_t type, void *e, int depth) {
    return ops_of(type).decode(r, type, e, depth);
}

Status encode_value_impl(Writer &w, const pmix_value_t &v, int depth) {
    if (depth > kMaxNestingDepth) return pack_err("data nested too deeply");
    pmix_data_type_t type = v.type;
    if (type == PMIX_UNDEF) {
        w.put_u16(type);
        return Status::success();
    }
    if (type == PMIX_INFO || type == PMIX_VALUE)
        return Status(PMIX_ERR_NOT_SUPPORTED,
                      "type " + std::to_string(type) + " is not valid in a pmix_value_t");
    if (min_wire_size(type) == 0) return encode_element(w, type, nullptr, depth);  // the specific refusal
    const void *payload = &v.data;
    if (data_type_is_pointer_in_value(type)) {
        payload = v.data.ptr;
        if (payload == nullptr)
            return pack_err("value of type " + std::to_string(type) + " has a null payload");
    }
    w.put_u16(type);
    return encode_element(w, type, payload, depth);
}

Status decode_value_impl(Reader &r, pmix_value_t *v, int depth) {
    memset(v, 0, sizeof(*v));
    if (depth > kMaxNestingDepth) return bad("data nested deeper than " + std::to_string(kMaxNestingDepth));
    uint16_t type;
    PMIXCPP_RETURN_IF_ERROR(r.get_u16(&type));
    if (type == PMIX_UNDEF) return Status::success();
    size_t esize = data_type_element_size(type);
    if (type == PMIX_INFO || type == PMIX_VALUE || type == PMIX_POINTER || esize == 0 ||
        min_wire_size(type) == 0)
        return Status(PMIX_ERR_UNKNOWN_DATA_TYPE,
                      "value of unknown/unsupported type " + std::to_string(type));
    if (data_type_is_pointer_in_value(type)) {
        PMIXCPP_RETURN_IF_ERROR(r.charge(esize, "value"));
        void *p = calloc(1, esize);
        if (p == nullptr) return Status(PMIX_ERR_NOMEM, "out of memory decoding value");
        Status st = decode_element(r, type, p, depth);
        if (!st.ok()) {
            element_destruct(type, p);
            free(p);
            return st;
        }
        v->data.ptr = p;
    } else {
        Status st = decode_element(r, type, &v->data, depth);
        if (!st.ok()) {
            element_destruct(type, &v->data);
            memset(&v->data, 0, sizeof(v->data));
            return st;
        }
    }
    v->type = type;
    return Status::success();
}

Status encode_info_impl(Writer &w, const pmix_info_t &info, int depth) {
    PMIXCPP_RETURN_IF_ERROR(encode_fixed_string(w, info.key, PMIX_MAX_KEYLEN, "info key"));
    w.put_u32(info.flags & ~static_cast<pmix_info_directives_t>(PMIX_INFO_PERSISTENT));
    PMIXCPP_RETURN_IF_ERROR(encode_value_impl(w, info.value, depth), "info " + std::string(info.key));
    return Status::success();
}

Status decode_info_impl(Reader &r, pmix_info_t *info, int depth) {
    memset(info, 0, sizeof(*info));
    uint32_t flags;
    Status st = decode_fixed_string(r, info->key, PMIX_MAX_KEYLEN, "info key");
    if (st.ok()) st = r.get_u32(&flags).with_context("info flags");
    // never put on the wire (encode_info clears it): refused, so every encoding is canonical
    if (st.ok() && (flags & PMIX_INFO_PERSISTENT) != 0) st = bad("info flags carry PMIX_INFO_PERSISTENT");
    if (st.ok())
        st = decode_value_impl(r, &info->value, depth).with_context("info " + std::string(info->key));
    if (!st.ok()) {
        memset(info, 0, sizeof(*info));  // value already released by decode_value_impl
        return st;
    }
    info->flags = flags;
    return Status::success();
}

// Run an encoder; on failure roll the writer back so nothing partial is left behind.
template <typename F>
Status encode_atomically(Writer &w, F &&f) {
    size_t mark = w.size();
    Status st = f();
    if (!st.ok()) w.truncate(mark);
    return st;
}

}  // namespace

Status encode_proc(Writer &w, const pmix_proc_t &proc) {
    return encode_atomically(w, [&]() -> Status {
        PMIXCPP_RETURN_IF_ERROR(encode_fixed_string(w, proc.nspace, PMIX_MAX_NSLEN, "proc nspace"));
        w.put_u32(proc.rank);
        return Status::success();
    });
}

Status decode_proc(Reader &r, pmix_proc_t *proc) {
    pmix_proc_t tmp;
    memset(&tmp, 0, sizeof(tmp));
    PMIXCPP_RETURN_IF_ERROR(decode_fixed_string(r, tmp.nspace, PMIX_MAX_NSLEN, "proc nspace"));
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&tmp.rank), "proc rank");
    *proc = tmp;
    return Status::success();
}

Status encode_value(Writer &w, const pmix_value_t &value) {
    return encode_atomically(w, [&] { return encode_value_impl(w, value, 0); });
}

Status decode_value(Reader &r, pmix_value_t *value) { return decode_value_impl(r, value, 0); }

Status encode_info(Writer &w, const pmix_info_t &info) {
    return encode_atomically(w, [&] { return encode_info_impl(w, info, 0); });
}

Status decode_info(Reader &r, pmix_info_t *info) { return decode_info_impl(r, info, 0); }

Status encode_info_array(Writer &w, const pmix_info_t *infos, size_t count) {
    return encode_atomically(w, [&]() -> Status {
        if (count > kMaxElementCount) return pack_err("too many infos");
        if (count != 0 && infos == nullptr) return pack_err("info array with count but no infos");
        w.put_u32(static_cast<uint32_t>(count));
        for (size_t i = 0; i < count; ++i) {
            PMIXCPP_RETURN_IF_ERROR(encode_info_impl(w, infos[i], 0),
                                    "info array element " + std::to_string(i));
        }
        return Status::success();
    });
}

Status decode_info_array(Reader &r, InfoArray *out) {
    uint32_t count;
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&count), "info array");
    PMIXCPP_RETURN_IF_ERROR(
        check_count(r, count, min_wire_size(PMIX_INFO), sizeof(pmix_info_t), "info array"));
    if (count == 0) {
        *out = InfoArray();
        return Status::success();
    }
    auto infos = static_cast<pmix_info_t *>(calloc(count, sizeof(pmix_info_t)));
    if (infos == nullptr) return Status(PMIX_ERR_NOMEM, "out of memory decoding info array");
    InfoArray holder(infos, count);  // frees everything if we bail out
    for (uint32_t i = 0; i < count; ++i) {
        PMIXCPP_RETURN_IF_ERROR(decode_info_impl(r, &infos[i], 0), "info array element " + std::to_string(i));
    }
    *out = std::move(holder);
    return Status::success();
}

Status encode_data_array(Writer &w, const pmix_data_array_t &array) {
    return encode_atomically(w, [&] { return encode_darray_impl(w, array, 0); });
}

Status decode_data_array(Reader &r, pmix_data_array_t **out) {
    auto a = static_cast<pmix_data_array_t *>(calloc(1, sizeof(pmix_data_array_t)));
    if (a == nullptr) return Status(PMIX_ERR_NOMEM, "out of memory decoding data array");
    Status st = decode_darray_impl(r, a, 0);
    if (!st.ok()) {
        data_array_free(a);
        return st;
    }
    *out = a;
    return Status::success();
}

Status decode_value_exact(std::span<const uint8_t> bytes, pmix_value_t *value) {
    Reader r(bytes);
    PMIXCPP_RETURN_IF_ERROR(decode_value(r, value));
    Status st = r.expect_end();
    if (!st.ok()) value_destruct(value);
    return st;
}

Status decode_info_array_exact(std::span<const uint8_t> bytes, InfoArray *out) {
    Reader r(bytes);
    InfoArray tmp;
    PMIXCPP_RETURN_IF_ERROR(decode_info_array(r, &tmp));
    PMIXCPP_RETURN_IF_ERROR(r.expect_end());
    *out = std::move(tmp);
    return Status::success();
}

}  // namespace pmixcpp::wire

// --- What each kind puts on the wire (type_traits.h); compare, copy, destruct are in value.cc ----
// Element payloads (the layout of one element of each type). decode: into zeroed storage; on
// failure the caller runs element_destruct.
namespace pmixcpp {

using namespace wire;  // the element codecs use the helpers above

Status plain_ops::encode(Writer &, pmix_data_type_t type, const void *, int) {
    return Status(PMIX_ERR_NOT_SUPPORTED, "data type " + std::to_string(type) + " cannot be encoded");
}

Status plain_ops::decode(Reader &, pmix_data_type_t type, void *, int) {
    return Status(PMIX_ERR_UNKNOWN_DATA_TYPE, "cannot decode data type " + std::to_string(type));
}

Status element_ops<type_kind::scalar>::encode(Writer &w, pmix_data_type_t type, const void *e, int) {
    return encode_scalar(w, traits_of(type), e);
}

Status element_ops<type_kind::scalar>::decode(Reader &r, pmix_data_type_t type, void *e, int) {
    return decode_scalar(r, traits_of(type), e);
}

// i64 tv_sec, i64 tv_usec
Status element_ops<type_kind::timeval>::encode(Writer &w, pmix_data_type_t, const void *e, int) {
    auto tv = static_cast<const struct timeval *>(e);
    w.put_i64(tv->tv_sec);
    w.put_i64(tv->tv_usec);
    return Status::success();
}

Status element_ops<type_kind::timeval>::decode(Reader &r, pmix_data_type_t, void *e, int) {
    int64_t sec, usec;
    PMIXCPP_RETURN_IF_ERROR(r.get_i64(&sec));
    PMIXCPP_RETURN_IF_ERROR(r.get_i64(&usec));
    auto tv = static_cast<struct timeval *>(e);
    tv->tv_sec = static_cast<time_t>(sec);
    tv->tv_usec = static_cast<suseconds_t>(usec);
    return Status::success();
}

Status element_ops<type_kind::string>::encode(Writer &w, pmix_data_type_t, const void *e, int) {
    return w.put_cstring(*static_cast<char *const *>(e));
}

Status element_ops<type_kind::string>::decode(Reader &r, pmix_data_type_t, void *e, int) {
    return r.get_cstring(static_cast<char **>(e));
}

Status element_ops<type_kind::pointer>::encode(Writer &, pmix_data_type_t, const void *, int) {
    return Status(PMIX_ERR_NOT_SUPPORTED, "a pointer cannot be sent over the wire");
}

Status element_ops<type_kind::nspace>::encode(Writer &w, pmix_data_type_t, const void *e, int) {
    return encode_fixed_string(w, static_cast<const char *>(e), PMIX_MAX_NSLEN, "nspace");
}

Status element_ops<type_kind::nspace>::decode(Reader &r, pmix_data_type_t, void *e, int) {
    return decode_fixed_string(r, static_cast<char *>(e), PMIX_MAX_NSLEN, "nspace");
}

Status element_ops<type_kind::proc>::encode(Writer &w, pmix_data_type_t, const void *e, int) {
    return encode_proc(w, *static_cast<const pmix_proc_t *>(e));
}

Status element_ops<type_kind::proc>::decode(Reader &r, pmix_data_type_t, void *e, int) {
    return decode_proc(r, static_cast<pmix_proc_t *>(e));
}

Status element_ops<type_kind::byte_object>::encode(Writer &w, pmix_data_type_t, const void *e, int) {
    return encode_bo(w, *static_cast<const pmix_byte_object_t *>(e));
}

Status element_ops<type_kind::byte_object>::decode(Reader &r, pmix_data_type_t, void *e, int) {
    return decode_bo(r, static_cast<pmix_byte_object_t *>(e));
}

// proc, hostname, executable_name, i32 pid, i32 exit_code, u8 state
Status element_ops<type_kind::proc_info>::encode(Writer &w, pmix_data_type_t, const void *e, int) {
    auto p = static_cast<const pmix_proc_info_t *>(e);
    PMIXCPP_RETURN_IF_ERROR(encode_proc(w, p->proc));
    PMIXCPP_RETURN_IF_ERROR(w.put_cstring(p->hostname));
    PMIXCPP_RETURN_IF_ERROR(w.put_cstring(p->executable_name));
    w.put_i32(p->pid);
    w.put_i32(p->exit_code);
    w.put_u8(p->state);
    return Status::success();
}

Status element_ops<type_kind::proc_info>::decode(Reader &r, pmix_data_type_t, void *e, int) {
    auto p = static_cast<pmix_proc_info_t *>(e);
    int32_t pid, exit_code;
    PMIXCPP_RETURN_IF_ERROR(decode_proc(r, &p->proc));
    PMIXCPP_RETURN_IF_ERROR(r.get_cstring(&p->hostname));
    PMIXCPP_RETURN_IF_ERROR(r.get_cstring(&p->executable_name));
    PMIXCPP_RETURN_IF_ERROR(r.get_i32(&pid));
    PMIXCPP_RETURN_IF_ERROR(r.get_i32(&exit_code));
    PMIXCPP_RETURN_IF_ERROR(r.get_u8(&p->state));
    p->pid = pid;
    p->exit_code = exit_code;
    return Status::success();
}

Status element_ops<type_kind::data_array>::encode(Writer &w, pmix_data_type_t, const void *e, int depth) {
    return encode_darray_impl(w, *static_cast<const pmix_data_array_t *>(e), depth);
}

Status element_ops<type_kind::data_array>::decode(Reader &r, pmix_data_type_t, void *e, int depth) {
    return decode_darray_impl(r, static_cast<pmix_data_array_t *>(e), depth);
}

// envar, value, u8 separator
Status element_ops<type_kind::envar>::encode(Writer &w, pmix_data_type_t, const void *e, int) {
    auto v = static_cast<const pmix_envar_t *>(e);
    PMIXCPP_RETURN_IF_ERROR(w.put_cstring(v->envar));
    PMIXCPP_RETURN_IF_ERROR(w.put_cstring(v->value));
    w.put_u8(static_cast<uint8_t>(v->separator));
    return Status::success();
}

Status element_ops<type_kind::envar>::decode(Reader &r, pmix_data_type_t, void *e, int) {
    auto v = static_cast<pmix_envar_t *>(e);
    uint8_t sep;
    PMIXCPP_RETURN_IF_ERROR(r.get_cstring(&v->envar));
    PMIXCPP_RETURN_IF_ERROR(r.get_cstring(&v->value));
    PMIXCPP_RETURN_IF_ERROR(r.get_u8(&sep));
    v->separator = static_cast<char>(sep);
    return Status::success();
}

// u8 view, u32 dims, dims*u32
Status element_ops<type_kind::coord>::encode(Writer &w, pmix_data_type_t, const void *e, int) {
    return encode_coord(w, *static_cast<const pmix_coord_t *>(e));
}

Status element_ops<type_kind::coord>::decode(Reader &r, pmix_data_type_t, void *e, int) {
    return decode_coord(r, static_cast<pmix_coord_t *>(e));
}

// name, key string, u16 type, description argv (u32 count or 0xFFFFFFFF for NULL, strings)
Status element_ops<type_kind::regattr>::encode(Writer &w, pmix_data_type_t, const void *e, int) {
    auto ra = static_cast<const pmix_regattr_t *>(e);
    PMIXCPP_RETURN_IF_ERROR(w.put_cstring(ra->name));
    PMIXCPP_RETURN_IF_ERROR(encode_fixed_string(w, ra->string, PMIX_MAX_KEYLEN, "regattr key"));
    w.put_u16(ra->type);
    return encode_argv(w, ra->description);
}

Status element_ops<type_kind::regattr>::decode(Reader &r, pmix_data_type_t, void *e, int) {
    auto ra = static_cast<pmix_regattr_t *>(e);
    PMIXCPP_RETURN_IF_ERROR(r.get_cstring(&ra->name));
    PMIXCPP_RETURN_IF_ERROR(decode_fixed_string(r, ra->string, PMIX_MAX_KEYLEN, "regattr key"));
    PMIXCPP_RETURN_IF_ERROR(r.get_u16(&ra->type));
    return decode_argv(r, &ra->description);
}

// u64 fabric, uuid, osname, u32 ncoords, coords
Status element_ops<type_kind::geometry>::encode(Writer &w, pmix_data_type_t, const void *e, int) {
    auto g = static_cast<const pmix_geometry_t *>(e);
    if (g->ncoords > kMaxElementCount) return pack_err("geometry has too many coordinates");
    if (g->ncoords != 0 && g->coordinates == nullptr) return pack_err("geometry with ncoords but no coordinates");
    w.put_u64(g->fabric);
    PMIXCPP_RETURN_IF_ERROR(w.put_cstring(g->uuid));
    PMIXCPP_RETURN_IF_ERROR(w.put_cstring(g->osname));
    w.put_u32(static_cast<uint32_t>(g->ncoords));
    for (size_t i = 0; i < g->ncoords; ++i) PMIXCPP_RETURN_IF_ERROR(encode_coord(w, g->coordinates[i]));
    return Status::success();
}

Status element_ops<type_kind::geometry>::decode(Reader &r, pmix_data_type_t, void *e, int) {
    auto g = static_cast<pmix_geometry_t *>(e);
    uint32_t n;
    PMIXCPP_RETURN_IF_ERROR(r.get_u64(&g->fabric));
    PMIXCPP_RETURN_IF_ERROR(r.get_cstring(&g->uuid));
    PMIXCPP_RETURN_IF_ERROR(r.get_cstring(&g->osname));
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&n));
    PMIXCPP_RETURN_IF_ERROR(check_count(r, n, min_wire_size(PMIX_COORD), sizeof(pmix_coord_t), "geometry"));
    if (n == 0) return Status::success();
    g->coordinates = static_cast<pmix_coord_t *>(calloc(n, sizeof(pmix_coord_t)));
    if (g->coordinates == nullptr) return Status(PMIX_ERR_NOMEM, "out of memory decoding geometry");
    g->ncoords = n;
    for (uint32_t i = 0; i < n; ++i) PMIXCPP_RETURN_IF_ERROR(decode_coord(r, &g->coordinates[i]));
    return Status::success();
}

// uuid, osname, u64 type, u16 mindist, u16 maxdist
Status element_ops<type_kind::device_dist>::encode(Writer &w, pmix_data_type_t, const void *e, int) {
    auto d = static_cast<const pmix_device_distance_t *>(e);
    PMIXCPP_RETURN_IF_ERROR(w.put_cstring(d->uuid));
    PMIXCPP_RETURN_IF_ERROR(w.put_cstring(d->osname));
    w.put_u64(d->type);
    w.put_u16(d->mindist);
    w.put_u16(d->maxdist);
    return Status::success();
}

Status element_ops<type_kind::device_dist>::decode(Reader &r, pmix_data_type_t, void *e, int) {
    auto d = static_cast<pmix_device_distance_t *>(e);
    PMIXCPP_RETURN_IF_ERROR(r.get_cstring(&d->uuid));
    PMIXCPP_RETURN_IF_ERROR(r.get_cstring(&d->osname));
    PMIXCPP_RETURN_IF_ERROR(r.get_u64(&d->type));
    PMIXCPP_RETURN_IF_ERROR(r.get_u16(&d->mindist));
    return r.get_u16(&d->maxdist);
}

// uuid, osname, endpt bytes
Status element_ops<type_kind::endpoint>::encode(Writer &w, pmix_data_type_t, const void *e, int) {
    auto ep = static_cast<const pmix_endpoint_t *>(e);
    PMIXCPP_RETURN_IF_ERROR(w.put_cstring(ep->uuid));
    PMIXCPP_RETURN_IF_ERROR(w.put_cstring(ep->osname));
    return encode_bo(w, ep->endpt);
}

Status element_ops<type_kind::endpoint>::decode(Reader &r, pmix_data_type_t, void *e, int) {
    auto ep = static_cast<pmix_endpoint_t *>(e);
    PMIXCPP_RETURN_IF_ERROR(r.get_cstring(&ep->uuid));
    PMIXCPP_RETURN_IF_ERROR(r.get_cstring(&ep->osname));
    return decode_bo(r, &ep->endpt);
}

Status element_ops<type_kind::info>::encode(Writer &w, pmix_data_type_t, const void *e, int depth) {
    return encode_info_impl(w, *static_cast<const pmix_info_t *>(e), depth);
}

Status element_ops<type_kind::info>::decode(Reader &r, pmix_data_type_t, void *e, int depth) {
    return decode_info_impl(r, static_cast<pmix_info_t *>(e), depth);
}

Status element_ops<type_kind::value>::encode(Writer &w, pmix_data_type_t, const void *e, int depth) {
    return encode_value_impl(w, *static_cast<const pmix_value_t *>(e), depth);
}

Status element_ops<type_kind::value>::decode(Reader &r, pmix_data_type_t, void *e, int depth) {
    return decode_value_impl(r, static_cast<pmix_value_t *>(e), depth);
}

}  // namespace pmixcpp
