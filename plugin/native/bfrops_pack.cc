// OpenPMIx's buffer encoding, NON_DESC: the packer (bfrops.h; the unpacker is bfrops.cc).
#include "plugin/native/bfrops.h"

#include <sys/time.h>
#include <sys/types.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "plugin/native/bfrops_detail.h"

namespace pmixcpp::native {

using namespace bfrops_detail;

// --- packer ----------------------------------------------------------------------------------
void packer::put_varint(uint64_t v) {
    int n = 0;
    do {
        uint8_t b = v & 0x7f;
        v >>= 7;
        if (v != 0) b |= 0x80;
        _buf.push_back(b);
        ++n;
    } while (v != 0 && n < 8);
    if (v != 0) _buf.push_back(static_cast<uint8_t>(v));  // the 9th byte: 8 raw bits
}

void packer::put_be(uint64_t v, int bytes) {
    for (int i = bytes - 1; i >= 0; --i) _buf.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

void packer::put_int16(int16_t v) {
    if (_f == int_flavour::flex128) put_varint(zigzag(v));
    else put_be(static_cast<uint16_t>(v), 2);
}
void packer::put_uint16(uint16_t v) {
    if (_f == int_flavour::flex128) put_varint(v);
    else put_be(v, 2);
}
void packer::put_int32(int32_t v) {
    if (_f == int_flavour::flex128) put_varint(zigzag(v));
    else put_be(static_cast<uint32_t>(v), 4);
}
void packer::put_uint32(uint32_t v) {
    if (_f == int_flavour::flex128) put_varint(v);
    else put_be(v, 4);
}
void packer::put_int64(int64_t v) {
    if (_f == int_flavour::flex128) put_varint(zigzag(v));
    else put_be(static_cast<uint64_t>(v), 8);
}
void packer::put_uint64(uint64_t v) {
    if (_f == int_flavour::flex128) put_varint(v);
    else put_be(v, 8);
}
void packer::put_size(size_t v) {
    if (_f == int_flavour::fixed) put_uint16(kSizeTag);
    put_uint64(v);
}

Status packer::put_string(const char *s) {
    if (s == nullptr) {
        put_int32(0);
        return Status::success();
    }
    size_t len = strlen(s) + 1;
    if (len > INT32_MAX) return Status(PMIX_ERR_PACK_FAILURE, "string too long to pack");
    put_int32(static_cast<int32_t>(len));
    _buf.insert(_buf.end(), s, s + len);
    return Status::success();
}

void packer::put_proc(const pmix_proc_t &p) {
    char ns[PMIX_MAX_NSLEN + 1];
    memcpy(ns, p.nspace, PMIX_MAX_NSLEN);
    ns[PMIX_MAX_NSLEN] = '\0';
    (void)put_string(ns);
    put_rank(p.rank);
}

void packer::put_bytes(std::span<const uint8_t> bytes) {
    put_size(bytes.size());
    put_raw(bytes);
}

void packer::put_buffer(uint8_t buffer_type, std::span<const uint8_t> bytes) {
    put_u8(buffer_type);
    put_bytes(bytes);
}

Status packer::put_value(const pmix_value_t &v) {
    size_t mark = _buf.size();
    put_data_type(v.type);
    Status st = put_payload(v, 0);
    if (!st.ok()) _buf.resize(mark);
    return st;
}

Status packer::put_info(const pmix_info_t &info) {
    size_t mark = _buf.size();
    Status st = put_element(PMIX_INFO, &info, 0);
    if (!st.ok()) _buf.resize(mark);
    return st;
}

Status packer::put_kval(const char *key, const pmix_value_t &v) {
    size_t mark = _buf.size();
    Status st = put_string(key);
    if (st.ok()) st = put_value(v);
    if (!st.ok()) _buf.resize(mark);
    return st;
}

Status packer::pack(pmix_data_type_t type, const void *src, int32_t count) {
    if (count < 0 || (count > 0 && src == nullptr)) return Status(PMIX_ERR_BAD_PARAM, "pack: bad count or source");
    size_t size = element_size(type);
    if (!type_supported(_f, type) || type == PMIX_UNDEF || size == 0) return unsupported(type, _f);
    size_t mark = _buf.size();
    put_int32(count);
    for (int32_t i = 0; i < count; ++i) {
        Status st = put_element(type, static_cast<const uint8_t *>(src) + static_cast<size_t>(i) * size, 0);
        if (!st.ok()) {
            _buf.resize(mark);
            return st;
        }
    }
    return Status::success();
}

Status packer::put(pmix_data_type_t type, const void *element) {
    size_t mark = _buf.size();
    Status st = put_element(type, element, 0);
    if (!st.ok()) _buf.resize(mark);
    return st;
}

Status packer::put_payload(const pmix_value_t &v, int depth) {
    if (v.type == PMIX_UNDEF) return Status::success();
    if (!type_supported(_f, v.type) || !value_holds(v.type)) return unsupported(v.type, _f).with_context("value");
    const type_traits &t = traits_of(v.type);
    if (t.pointer_in_value) {
        if (v.data.ptr == nullptr) return Status(PMIX_ERR_PACK_FAILURE, "value of type " + std::to_string(v.type) + " without data");
        return put_element(v.type, v.data.ptr, depth);
    }
    return put_element(v.type, &v.data, depth);
}

// Element layouts (OpenPMIx bfrop_base_pack.c, in the order of the fields on the wire).
Status packer::put_element(pmix_data_type_t type, const void *e, int depth) {
    if (depth > wire::kMaxNestingDepth) return too_deep();
    if (!type_supported(_f, type) || type == PMIX_UNDEF) return unsupported(type, _f);
    switch (wire_int_of(type)) {
        case wire_int::raw8:
            if (type == PMIX_BOOL) put_u8(*static_cast<const bool *>(e) ? 1 : 0);
            else put_u8(*static_cast<const uint8_t *>(e));
            return Status::success();
        case wire_int::s16:
            put_int16(*static_cast<const int16_t *>(e));
            return Status::success();
        case wire_int::u16:
            put_uint16(*static_cast<const uint16_t *>(e));
            return Status::success();
        case wire_int::s32:
            put_int32(*static_cast<const int32_t *>(e));
            return Status::success();
        case wire_int::u32:
            put_uint32(*static_cast<const uint32_t *>(e));
            return Status::success();
        case wire_int::s64:
            put_int64(*static_cast<const int64_t *>(e));
            return Status::success();
        case wire_int::u64:
            put_uint64(*static_cast<const uint64_t *>(e));
            return Status::success();
        case wire_int::size:
            put_size(*static_cast<const size_t *>(e));
            return Status::success();
        case wire_int::int_:
            if (_f == int_flavour::fixed) put_uint16(kIntTag);
            put_int32(*static_cast<const int32_t *>(e));  // UINT too: OpenPMIx sends it as INT32
            return Status::success();
        case wire_int::pid:
            put_data_type(kPidTag);
            put_uint32(static_cast<uint32_t>(*static_cast<const pid_t *>(e)));
            return Status::success();
        case wire_int::time:
            put_uint64(static_cast<uint64_t>(*static_cast<const time_t *>(e)));
            return Status::success();
        case wire_int::timeval: {
            auto tv = static_cast<const struct timeval *>(e);
            put_int64(tv->tv_sec);
            put_int64(tv->tv_usec);
            return Status::success();
        }
        case wire_int::real: {
            double d = type == PMIX_FLOAT ? *static_cast<const float *>(e) : *static_cast<const double *>(e);
            char text[512];
            int n = snprintf(text, sizeof text, "%f", d);
            if (n < 0 || static_cast<size_t>(n) >= sizeof text)
                return Status(PMIX_ERR_PACK_FAILURE, "floating value too large to pack");
            return put_string(text);
        }
        case wire_int::none:
            break;
    }
    switch (type) {
        case PMIX_STRING:
            return put_string(*static_cast<char *const *>(e));
        case PMIX_POINTER:
            put_u8(1);  // a pointer means nothing elsewhere: OpenPMIx sends a sentinel
            return Status::success();
        case PMIX_PROC:
            put_proc(*static_cast<const pmix_proc_t *>(e));
            return Status::success();
        case PMIX_PROC_NSPACE: {
            char ns[PMIX_MAX_NSLEN + 1];
            memcpy(ns, e, PMIX_MAX_NSLEN);
            ns[PMIX_MAX_NSLEN] = '\0';
            return put_string(ns);
        }
        case PMIX_BYTE_OBJECT:
        case PMIX_COMPRESSED_STRING:
        case PMIX_COMPRESSED_BYTE_OBJECT: {  // SIZE, bytes
            auto bo = static_cast<const pmix_byte_object_t *>(e);
            if (bo->size != 0 && bo->bytes == nullptr) return Status(PMIX_ERR_PACK_FAILURE, "byte object without bytes");
            put_bytes({reinterpret_cast<const uint8_t *>(bo->bytes), bo->size});
            return Status::success();
        }
        case PMIX_PROC_INFO: {  // PROC, STRING hostname, STRING executable, PID, PROC_STATE
            auto pi = static_cast<const pmix_proc_info_t *>(e);
            put_proc(pi->proc);
            PMIXCPP_RETURN_IF_ERROR(put_string(pi->hostname));
            PMIXCPP_RETURN_IF_ERROR(put_string(pi->executable_name));
            PMIXCPP_RETURN_IF_ERROR(put_element(PMIX_PID, &pi->pid, depth));
            put_u8(pi->state);
            return Status::success();
        }
        case PMIX_DATA_ARRAY: {  // DATA_TYPE, SIZE n, n elements
            auto da = static_cast<const pmix_data_array_t *>(e);
            put_data_type(da->type);
            put_size(da->size);
            if (da->size == 0 || da->type == PMIX_UNDEF) return Status::success();
            const type_traits &t = traits_of(da->type);
            if (da->array == nullptr || t.size == 0) return Status(PMIX_ERR_PACK_FAILURE, "data array without elements");
            for (size_t i = 0; i < da->size; ++i)
                PMIXCPP_RETURN_IF_ERROR(put_element(da->type, static_cast<const uint8_t *>(da->array) + i * t.size, depth + 1));
            return Status::success();
        }
        case PMIX_ENVAR: {  // STRING name, STRING value, BYTE separator
            auto ev = static_cast<const pmix_envar_t *>(e);
            PMIXCPP_RETURN_IF_ERROR(put_string(ev->envar));
            PMIXCPP_RETURN_IF_ERROR(put_string(ev->value));
            put_u8(static_cast<uint8_t>(ev->separator));
            return Status::success();
        }
        case PMIX_COORD: {  // UINT8 view, SIZE dims, dims x UINT32
            auto c = static_cast<const pmix_coord_t *>(e);
            if (c->dims != 0 && c->coord == nullptr) return Status(PMIX_ERR_PACK_FAILURE, "coordinate without values");
            put_u8(c->view);
            put_size(c->dims);
            for (size_t i = 0; i < c->dims; ++i) put_uint32(c->coord[i]);
            return Status::success();
        }
        case PMIX_REGATTR: {  // STRING name, STRING key, DATA_TYPE, INT32 n, n STRINGs
            auto ra = static_cast<const pmix_regattr_t *>(e);
            PMIXCPP_RETURN_IF_ERROR(put_string(ra->name));
            char key[PMIX_MAX_KEYLEN + 1];
            memcpy(key, ra->string, PMIX_MAX_KEYLEN);
            key[PMIX_MAX_KEYLEN] = '\0';
            PMIXCPP_RETURN_IF_ERROR(put_string(key));
            put_data_type(ra->type);
            int32_t n = 0;
            if (ra->description != nullptr)
                while (ra->description[n] != nullptr && n < INT32_MAX) ++n;
            put_int32(n);
            for (int32_t i = 0; i < n; ++i) PMIXCPP_RETURN_IF_ERROR(put_string(ra->description[i]));
            return Status::success();
        }
        case PMIX_GEOMETRY: {  // SIZE fabric, STRING uuid, STRING osname, SIZE n, n COORDs
            auto g = static_cast<const pmix_geometry_t *>(e);
            if (g->ncoords != 0 && g->coordinates == nullptr) return Status(PMIX_ERR_PACK_FAILURE, "geometry without coordinates");
            put_size(g->fabric);
            PMIXCPP_RETURN_IF_ERROR(put_string(g->uuid));
            PMIXCPP_RETURN_IF_ERROR(put_string(g->osname));
            put_size(g->ncoords);
            for (size_t i = 0; i < g->ncoords; ++i) PMIXCPP_RETURN_IF_ERROR(put_element(PMIX_COORD, &g->coordinates[i], depth));
            return Status::success();
        }
        case PMIX_DEVICE_DIST: {  // STRING uuid, STRING osname, DEVTYPE, UINT16 min, UINT16 max
            auto d = static_cast<const pmix_device_distance_t *>(e);
            PMIXCPP_RETURN_IF_ERROR(put_string(d->uuid));
            PMIXCPP_RETURN_IF_ERROR(put_string(d->osname));
            put_uint64(d->type);
            put_uint16(d->mindist);
            put_uint16(d->maxdist);
            return Status::success();
        }
        case PMIX_ENDPOINT: {  // STRING uuid, STRING osname, SIZE n, n bytes
            auto ep = static_cast<const pmix_endpoint_t *>(e);
            if (ep->endpt.size != 0 && ep->endpt.bytes == nullptr) return Status(PMIX_ERR_PACK_FAILURE, "endpoint without bytes");
            PMIXCPP_RETURN_IF_ERROR(put_string(ep->uuid));
            PMIXCPP_RETURN_IF_ERROR(put_string(ep->osname));
            put_bytes({reinterpret_cast<const uint8_t *>(ep->endpt.bytes), ep->endpt.size});
            return Status::success();
        }
        case PMIX_INFO: {  // STRING key, INFO_DIRECTIVES, DATA_TYPE, payload
            auto info = static_cast<const pmix_info_t *>(e);
            char key[PMIX_MAX_KEYLEN + 1];
            memcpy(key, info->key, PMIX_MAX_KEYLEN);
            key[PMIX_MAX_KEYLEN] = '\0';
            PMIXCPP_RETURN_IF_ERROR(put_string(key));
            put_uint32(info->flags & ~PMIX_INFO_PERSISTENT);
            put_data_type(info->value.type);
            return put_payload(info->value, depth + 1);
        }
        case PMIX_VALUE: {  // DATA_TYPE, payload
            auto v = static_cast<const pmix_value_t *>(e);
            put_data_type(v->type);
            return put_payload(*v, depth + 1);
        }
        default:
            return unsupported(type, _f);
    }
}

}  // namespace pmixcpp::native
