// OpenPMIx's buffer encoding, NON_DESC; the format is summarised in bfrops.h. The flavours and
// the unpacker; the packer is bfrops_pack.cc.
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

const char *to_string(int_flavour f) {
    switch (f) {
        case int_flavour::fixed:
            return "fixed-width (v3)";
        case int_flavour::flex128:
            return "flex128 (v41)";
    }
    return "?";
}

Result<int_flavour> flavour_of_bfrops(std::string_view name) {
    if (name == "v3" || name == "v21" || name == "v20") return int_flavour::fixed;
    if (name == "v4" || name == "v41") return int_flavour::flex128;
    return Status(PMIX_ERR_NOT_SUPPORTED, "bfrops component \"" + std::string(name) + "\" is not supported");
}

bool type_supported(int_flavour f, pmix_data_type_t type) {
    // OpenPMIx 3.x knows the codes up to PMIX_ENVAR (46) and nothing of what came later.
    if (f == int_flavour::fixed && type > PMIX_ENVAR) return false;
    if (wire_int_of(type) != wire_int::none) return true;
    switch (type) {
        case PMIX_UNDEF:  // only as a value's type
        case PMIX_STRING:
        case PMIX_POINTER:
        case PMIX_PROC:
        case PMIX_PROC_NSPACE:
        case PMIX_BYTE_OBJECT:
        case PMIX_COMPRESSED_STRING:
        case PMIX_COMPRESSED_BYTE_OBJECT:
        case PMIX_PROC_INFO:
        case PMIX_DATA_ARRAY:
        case PMIX_ENVAR:
        case PMIX_COORD:
        case PMIX_REGATTR:
        case PMIX_GEOMETRY:
        case PMIX_DEVICE_DIST:
        case PMIX_ENDPOINT:
        case PMIX_INFO:
        case PMIX_VALUE:
            return true;
        default:
            return false;  // REGEX (preg's own layout), TOPO, CPUSET, stats, DATA_BUFFER, APP, ...
    }
}

// --- unpacker --------------------------------------------------------------------------------
Status unpacker::get_varint(uint64_t *v, int max_bytes) {
    size_t start = _r.position();
    uint64_t out = 0;
    for (int i = 0; i < kMaxVarintBytes; ++i) {
        const uint8_t *p;
        PMIXCPP_RETURN_IF_ERROR(_r.get_raw(1, &p), "varint at offset " + std::to_string(start));
        if (i == 8) {  // the 9th byte holds 8 raw bits
            out |= static_cast<uint64_t>(*p) << 56;
            break;
        }
        out |= static_cast<uint64_t>(*p & 0x7f) << (7 * i);
        if ((*p & 0x80) == 0) break;
    }
    // OpenPMIx refuses a value wider than its type (flex128_decode_int).
    if (max_bytes < 8 && (out >> (8 * max_bytes)) != 0)
        return Status(PMIX_ERR_UNPACK_FAILURE, "varint at offset " + std::to_string(start) + " does not fit " +
                                                   std::to_string(max_bytes) + " bytes");
    *v = out;
    return Status::success();
}

Status unpacker::get_be(uint64_t *v, int bytes) {
    const uint8_t *p;
    PMIXCPP_RETURN_IF_ERROR(_r.get_raw(static_cast<size_t>(bytes), &p));
    uint64_t out = 0;
    for (int i = 0; i < bytes; ++i) out = (out << 8) | p[i];
    *v = out;
    return Status::success();
}

Status unpacker::get_unsigned(uint64_t *v, int bytes) {
    return _f == int_flavour::flex128 ? get_varint(v, bytes) : get_be(v, bytes);
}

Status unpacker::get_signed(int64_t *v, int bytes) {
    uint64_t u;
    if (_f == int_flavour::flex128) {
        PMIXCPP_RETURN_IF_ERROR(get_varint(&u, bytes));
        *v = unzigzag(u);
        return Status::success();
    }
    PMIXCPP_RETURN_IF_ERROR(get_be(&u, bytes));
    // sign-extend
    if (bytes < 8 && (u >> (8 * bytes - 1)) & 1u) u |= ~uint64_t{0} << (8 * bytes);
    *v = static_cast<int64_t>(u);
    return Status::success();
}

Status unpacker::get_int16(int16_t *v) {
    int64_t s;
    PMIXCPP_RETURN_IF_ERROR(get_signed(&s, 2));
    *v = static_cast<int16_t>(s);
    return Status::success();
}
Status unpacker::get_uint16(uint16_t *v) {
    uint64_t u;
    PMIXCPP_RETURN_IF_ERROR(get_unsigned(&u, 2));
    *v = static_cast<uint16_t>(u);
    return Status::success();
}
Status unpacker::get_int32(int32_t *v) {
    int64_t s;
    PMIXCPP_RETURN_IF_ERROR(get_signed(&s, 4));
    *v = static_cast<int32_t>(s);
    return Status::success();
}
Status unpacker::get_uint32(uint32_t *v) {
    uint64_t u;
    PMIXCPP_RETURN_IF_ERROR(get_unsigned(&u, 4));
    *v = static_cast<uint32_t>(u);
    return Status::success();
}
Status unpacker::get_int64(int64_t *v) { return get_signed(v, 8); }
Status unpacker::get_uint64(uint64_t *v) { return get_unsigned(v, 8); }

Status unpacker::get_tag(pmix_data_type_t expected, const char *what) {
    size_t at = _r.position();
    pmix_data_type_t tag;
    PMIXCPP_RETURN_IF_ERROR(get_uint16(&tag));
    if (tag != expected)
        return Status(PMIX_ERR_UNPACK_FAILURE, std::string(what) + " at offset " + std::to_string(at) + " tagged " +
                                                   std::to_string(tag) + ", expected " + std::to_string(expected));
    return Status::success();
}

Status unpacker::get_size(size_t *v) {
    if (_f == int_flavour::fixed) PMIXCPP_RETURN_IF_ERROR(get_tag(kSizeTag, "size"));
    uint64_t u;
    PMIXCPP_RETURN_IF_ERROR(get_uint64(&u));
    *v = static_cast<size_t>(u);
    return Status::success();
}

Status unpacker::get_cstring(char **s, size_t max_len) {
    size_t at = _r.position();
    int32_t len;
    PMIXCPP_RETURN_IF_ERROR(get_int32(&len));
    if (len < 0) return Status(PMIX_ERR_UNPACK_FAILURE, "string at offset " + std::to_string(at) + " of negative length");
    if (len == 0) {
        *s = nullptr;
        return Status::success();
    }
    if (static_cast<size_t>(len) - 1 > max_len)
        return Status(PMIX_ERR_UNPACK_FAILURE, "string at offset " + std::to_string(at) + " of " + std::to_string(len - 1) +
                                                   " characters exceeds the limit " + std::to_string(max_len));
    const uint8_t *p;
    PMIXCPP_RETURN_IF_ERROR(_r.get_raw(static_cast<size_t>(len), &p));
    if (p[len - 1] != 0 || memchr(p, 0, static_cast<size_t>(len - 1)) != nullptr)
        return Status(PMIX_ERR_UNPACK_FAILURE, "string at offset " + std::to_string(at) + " is not one NUL-terminated string");
    PMIXCPP_RETURN_IF_ERROR(_r.charge(static_cast<size_t>(len), "string"));
    char *out = static_cast<char *>(malloc(static_cast<size_t>(len)));
    if (out == nullptr) return Status(PMIX_ERR_NOMEM, "string");
    memcpy(out, p, static_cast<size_t>(len));
    *s = out;
    return Status::success();
}

Status unpacker::get_string(std::string *s, size_t max_len) {
    size_t at = _r.position();
    char *c = nullptr;
    PMIXCPP_RETURN_IF_ERROR(get_cstring(&c, max_len));
    if (c == nullptr) return Status(PMIX_ERR_UNPACK_FAILURE, "NULL string at offset " + std::to_string(at));
    s->assign(c);
    free(c);
    return Status::success();
}

// A string into a fixed char array of capacity cap+1 (NULL -> empty).
static Status copy_bounded(unpacker &u, char *dst, size_t cap, const char *what) {
    char *c = nullptr;
    PMIXCPP_RETURN_IF_ERROR(u.get_cstring(&c, cap), what);
    if (c != nullptr) {
        strcpy(dst, c);  // bounded by cap above
        free(c);
    }
    return Status::success();
}

Status unpacker::get_proc(pmix_proc_t *p) {
    pmix_proc_t out{};
    PMIXCPP_RETURN_IF_ERROR(copy_bounded(*this, out.nspace, kMaxNspaceChars, "proc nspace"));
    PMIXCPP_RETURN_IF_ERROR(get_rank(&out.rank));
    *p = out;
    return Status::success();
}

Status unpacker::get_bytes(std::span<const uint8_t> *bytes) {
    size_t at = _r.position();
    size_t n;
    PMIXCPP_RETURN_IF_ERROR(get_size(&n));
    if (n > _r.remaining())
        return Status(PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER,
                      "byte object at offset " + std::to_string(at) + " of " + std::to_string(n) + " bytes, " +
                          std::to_string(_r.remaining()) + " remain");
    const uint8_t *p = nullptr;
    if (n != 0) PMIXCPP_RETURN_IF_ERROR(_r.get_raw(n, &p));
    *bytes = {p, n};
    return Status::success();
}

Status unpacker::get_buffer(uint8_t *buffer_type, std::span<const uint8_t> *bytes) {
    uint8_t t;
    PMIXCPP_RETURN_IF_ERROR(get_u8(&t));
    PMIXCPP_RETURN_IF_ERROR(get_bytes(bytes));
    *buffer_type = t;
    return Status::success();
}

Status unpacker::get_value(pmix_value_t *v) {
    *v = pmix_value_t{};
    v->type = PMIX_UNDEF;
    pmix_data_type_t type;
    PMIXCPP_RETURN_IF_ERROR(get_data_type(&type));
    return get_payload(type, v, 0);
}

Status unpacker::get_info(pmix_info_t *info) {
    *info = pmix_info_t{};
    return get_element(PMIX_INFO, info, 0);
}

Status unpacker::get_kval(std::string *key, pmix_value_t *v) {
    std::string k;
    PMIXCPP_RETURN_IF_ERROR(get_string(&k, kMaxKeyChars), "kval key");
    PMIXCPP_RETURN_IF_ERROR(get_value(v), "kval " + k);
    *key = std::move(k);
    return Status::success();
}

Status unpacker::get_infos(size_t count, InfoArray *out) {
    if (count == 0) {
        *out = InfoArray();
        return Status::success();
    }
    PMIXCPP_RETURN_IF_ERROR(_r.take_count(count, 3, sizeof(pmix_info_t), "infos"));
    auto infos = static_cast<pmix_info_t *>(calloc(count, sizeof(pmix_info_t)));
    if (infos == nullptr) return Status(PMIX_ERR_NOMEM, "infos");
    InfoArray owned(infos, count);
    for (size_t i = 0; i < count; ++i) {
        PMIXCPP_RETURN_IF_ERROR(get_element(PMIX_INFO, &infos[i], 0), "info " + std::to_string(i));
    }
    *out = std::move(owned);
    return Status::success();
}

Status unpacker::unpack_count(int32_t *count) {
    size_t at = _r.position();
    int32_t n;
    PMIXCPP_RETURN_IF_ERROR(get_int32(&n));
    if (n < 0) return Status(PMIX_ERR_UNPACK_FAILURE, "negative count at offset " + std::to_string(at));
    *count = n;
    return Status::success();
}

Status unpacker::unpack(pmix_data_type_t type, void *dst, int32_t count) {
    size_t size = element_size(type);
    if (!type_supported(_f, type) || type == PMIX_UNDEF || size == 0) return unsupported(type, _f);
    size_t at = _r.position();
    int32_t n;
    PMIXCPP_RETURN_IF_ERROR(unpack_count(&n));
    if (n != count)
        return Status(PMIX_ERR_UNPACK_FAILURE, "pack at offset " + std::to_string(at) + " holds " + std::to_string(n) +
                                                   " elements, expected " + std::to_string(count));
    auto base = static_cast<uint8_t *>(dst);
    for (int32_t i = 0; i < n; ++i) {
        Status st = get_element(type, base + static_cast<size_t>(i) * size, 0);
        if (!st.ok()) {
            for (int32_t j = 0; j < i; ++j) element_destruct(type, base + static_cast<size_t>(j) * size);
            memset(base, 0, static_cast<size_t>(n) * size);
            return st;
        }
    }
    return Status::success();
}

Status unpacker::get(pmix_data_type_t type, void *element) { return get_element(type, element, 0); }

Status unpacker::get_payload(pmix_data_type_t type, pmix_value_t *v, int depth) {
    *v = pmix_value_t{};
    v->type = PMIX_UNDEF;
    if (type == PMIX_UNDEF) return Status::success();
    const type_traits &t = traits_of(type);
    if (!type_supported(_f, type) || !value_holds(type)) return unsupported(type, _f).with_context("value");
    if (!t.pointer_in_value) {
        PMIXCPP_RETURN_IF_ERROR(get_element(type, &v->data, depth));
        v->type = type;
        return Status::success();
    }
    PMIXCPP_RETURN_IF_ERROR(_r.charge(t.size, "value"));
    void *p = calloc(1, t.size);
    if (p == nullptr) return Status(PMIX_ERR_NOMEM, "value");
    Status st = get_element(type, p, depth);
    if (!st.ok()) {
        free(p);
        return st;
    }
    v->type = type;
    v->data.ptr = p;
    return Status::success();
}

// Into zeroed storage; on failure what was decoded so far is released and the element zeroed.
Status unpacker::get_element(pmix_data_type_t type, void *e, int depth) {
    if (depth > wire::kMaxNestingDepth) return too_deep();
    if (!type_supported(_f, type) || type == PMIX_UNDEF) return unsupported(type, _f);
    size_t at = _r.position();
    Status st;
    switch (wire_int_of(type)) {
        case wire_int::raw8: {
            uint8_t b;
            PMIXCPP_RETURN_IF_ERROR(get_u8(&b));
            if (type == PMIX_BOOL) {
                if (b > 1) return Status(PMIX_ERR_UNPACK_FAILURE, "bool byte " + std::to_string(b) + " at offset " + std::to_string(at));
                *static_cast<bool *>(e) = b != 0;
            } else {
                *static_cast<uint8_t *>(e) = b;
            }
            return Status::success();
        }
        case wire_int::s16:
            return get_int16(static_cast<int16_t *>(e));
        case wire_int::u16:
            return get_uint16(static_cast<uint16_t *>(e));
        case wire_int::s32:
            return get_int32(static_cast<int32_t *>(e));
        case wire_int::u32:
            return get_uint32(static_cast<uint32_t *>(e));
        case wire_int::s64:
            return get_int64(static_cast<int64_t *>(e));
        case wire_int::u64:
            return get_uint64(static_cast<uint64_t *>(e));
        case wire_int::size:
            return get_size(static_cast<size_t *>(e));
        case wire_int::int_: {
            if (_f == int_flavour::fixed) PMIXCPP_RETURN_IF_ERROR(get_tag(kIntTag, "int"));
            int32_t v;
            PMIXCPP_RETURN_IF_ERROR(get_int32(&v));
            memcpy(e, &v, sizeof v);  // UINT: the same bits
            return Status::success();
        }
        case wire_int::pid: {
            PMIXCPP_RETURN_IF_ERROR(get_tag(kPidTag, "pid"));
            uint32_t v;
            PMIXCPP_RETURN_IF_ERROR(get_uint32(&v));
            *static_cast<pid_t *>(e) = static_cast<pid_t>(v);
            return Status::success();
        }
        case wire_int::time: {
            uint64_t v;
            PMIXCPP_RETURN_IF_ERROR(get_uint64(&v));
            *static_cast<time_t *>(e) = static_cast<time_t>(v);
            return Status::success();
        }
        case wire_int::timeval: {
            int64_t sec, usec;
            PMIXCPP_RETURN_IF_ERROR(get_int64(&sec));
            PMIXCPP_RETURN_IF_ERROR(get_int64(&usec));
            auto tv = static_cast<struct timeval *>(e);
            tv->tv_sec = static_cast<time_t>(sec);
            tv->tv_usec = static_cast<suseconds_t>(usec);
            return Status::success();
        }
        case wire_int::real: {
            char *text = nullptr;
            PMIXCPP_RETURN_IF_ERROR(get_cstring(&text, 512));
            if (text == nullptr) return Status(PMIX_ERR_UNPACK_FAILURE, "NULL floating value at offset " + std::to_string(at));
            char *end = nullptr;
            errno = 0;
            double d = strtod(text, &end);
            bool ok = end != text && *end == '\0';
            free(text);
            if (!ok) return Status(PMIX_ERR_UNPACK_FAILURE, "floating value at offset " + std::to_string(at) + " is not a number");
            if (type == PMIX_FLOAT) *static_cast<float *>(e) = static_cast<float>(d);
            else *static_cast<double *>(e) = d;
            return Status::success();
        }
        case wire_int::none:
            break;
    }
    switch (type) {
        case PMIX_STRING:
            return get_cstring(static_cast<char **>(e));
        case PMIX_POINTER: {
            uint8_t sentinel;
            PMIXCPP_RETURN_IF_ERROR(get_u8(&sentinel));
            *static_cast<void **>(e) = nullptr;  // a pointer from elsewhere points at nothing here
            return Status::success();
        }
        case PMIX_PROC:
            return get_proc(static_cast<pmix_proc_t *>(e));
        case PMIX_PROC_NSPACE:
            return copy_bounded(*this, static_cast<char *>(e), kMaxNspaceChars, "nspace");
        case PMIX_BYTE_OBJECT:
        case PMIX_COMPRESSED_STRING:
        case PMIX_COMPRESSED_BYTE_OBJECT: {
            std::span<const uint8_t> b;
            PMIXCPP_RETURN_IF_ERROR(get_bytes(&b));
            auto bo = static_cast<pmix_byte_object_t *>(e);
            if (b.empty()) return Status::success();
            PMIXCPP_RETURN_IF_ERROR(_r.charge(b.size(), "byte object"));
            bo->bytes = static_cast<char *>(malloc(b.size()));
            if (bo->bytes == nullptr) return Status(PMIX_ERR_NOMEM, "byte object");
            memcpy(bo->bytes, b.data(), b.size());
            bo->size = b.size();
            return Status::success();
        }
        default:
            break;
    }
    // The structured types: fields decoded in place; on failure the element is destructed.
    switch (type) {
        case PMIX_PROC_INFO: {
            auto pi = static_cast<pmix_proc_info_t *>(e);
            st = get_proc(&pi->proc);
            if (st.ok()) st = get_cstring(&pi->hostname);
            if (st.ok()) st = get_cstring(&pi->executable_name);
            if (st.ok()) st = get_element(PMIX_PID, &pi->pid, depth);
            if (st.ok()) st = get_u8(&pi->state);
            break;
        }
        case PMIX_DATA_ARRAY: {
            auto da = static_cast<pmix_data_array_t *>(e);
            pmix_data_type_t et;
            size_t n;
            st = get_data_type(&et);
            if (st.ok()) st = get_size(&n);
            if (!st.ok()) break;
            da->type = et;
            if (n == 0) break;
            const type_traits &t = traits_of(et);
            if (et == PMIX_UNDEF || !type_supported(_f, et) || t.size == 0) {
                st = unsupported(et, _f).with_context("data array");
                break;
            }
            st = _r.take_count(n, 1, t.size, "data array");
            if (!st.ok()) break;
            da->array = calloc(n, t.size);
            if (da->array == nullptr) {
                st = Status(PMIX_ERR_NOMEM, "data array");
                break;
            }
            da->size = n;
            for (size_t i = 0; i < n && st.ok(); ++i)
                st = get_element(et, static_cast<uint8_t *>(da->array) + i * t.size, depth + 1);
            break;
        }
        case PMIX_ENVAR: {
            auto ev = static_cast<pmix_envar_t *>(e);
            st = get_cstring(&ev->envar);
            if (st.ok()) st = get_cstring(&ev->value);
            uint8_t sep = 0;
            if (st.ok()) st = get_u8(&sep);
            ev->separator = static_cast<char>(sep);
            break;
        }
        case PMIX_COORD: {
            auto c = static_cast<pmix_coord_t *>(e);
            size_t n = 0;
            st = get_u8(&c->view);
            if (st.ok()) st = get_size(&n);
            if (st.ok() && n != 0) st = _r.take_count(n, 1, sizeof(uint32_t), "coordinate");
            if (!st.ok() || n == 0) break;
            c->coord = static_cast<uint32_t *>(calloc(n, sizeof(uint32_t)));
            if (c->coord == nullptr) {
                st = Status(PMIX_ERR_NOMEM, "coordinate");
                break;
            }
            c->dims = n;
            for (size_t i = 0; i < n && st.ok(); ++i) st = get_uint32(&c->coord[i]);
            break;
        }
        case PMIX_REGATTR: {
            auto ra = static_cast<pmix_regattr_t *>(e);
            int32_t n = 0;
            st = get_cstring(&ra->name);
            if (st.ok()) st = copy_bounded(*this, ra->string, kMaxKeyChars, "regattr key");
            if (st.ok()) st = get_data_type(&ra->type);
            if (st.ok()) st = get_int32(&n);
            if (st.ok() && n < 0) st = Status(PMIX_ERR_UNPACK_FAILURE, "regattr with a negative description count");
            if (st.ok() && n > 0) st = _r.take_count(static_cast<uint64_t>(n), 1, sizeof(char *), "regattr description");
            if (st.ok()) st = _r.charge(sizeof(char *), "regattr description");  // the terminating NULL
            if (!st.ok()) break;
            ra->description = static_cast<char **>(calloc(static_cast<size_t>(n) + 1, sizeof(char *)));
            if (ra->description == nullptr) {
                st = Status(PMIX_ERR_NOMEM, "regattr description");
                break;
            }
            for (int32_t i = 0; i < n && st.ok(); ++i) {
                st = get_cstring(&ra->description[i]);
                if (st.ok() && ra->description[i] == nullptr) st = Status(PMIX_ERR_UNPACK_FAILURE, "NULL regattr description line");
            }
            break;
        }
        case PMIX_GEOMETRY: {
            auto g = static_cast<pmix_geometry_t *>(e);
            size_t n = 0;
            st = get_size(&g->fabric);
            if (st.ok()) st = get_cstring(&g->uuid);
            if (st.ok()) st = get_cstring(&g->osname);
            if (st.ok()) st = get_size(&n);
            if (st.ok() && n != 0) st = _r.take_count(n, 2, sizeof(pmix_coord_t), "geometry coordinates");
            if (!st.ok() || n == 0) break;
            g->coordinates = static_cast<pmix_coord_t *>(calloc(n, sizeof(pmix_coord_t)));
            if (g->coordinates == nullptr) {
                st = Status(PMIX_ERR_NOMEM, "geometry coordinates");
                break;
            }
            g->ncoords = n;
            for (size_t i = 0; i < n && st.ok(); ++i) st = get_element(PMIX_COORD, &g->coordinates[i], depth);
            break;
        }
        case PMIX_DEVICE_DIST: {
            auto d = static_cast<pmix_device_distance_t *>(e);
            st = get_cstring(&d->uuid);
            if (st.ok()) st = get_cstring(&d->osname);
            if (st.ok()) st = get_uint64(&d->type);
            if (st.ok()) st = get_uint16(&d->mindist);
            if (st.ok()) st = get_uint16(&d->maxdist);
            break;
        }
        case PMIX_ENDPOINT: {
            auto ep = static_cast<pmix_endpoint_t *>(e);
            st = get_cstring(&ep->uuid);
            if (st.ok()) st = get_cstring(&ep->osname);
            if (st.ok()) st = get_element(PMIX_BYTE_OBJECT, &ep->endpt, depth);
            break;
        }
        case PMIX_INFO: {
            auto info = static_cast<pmix_info_t *>(e);
            pmix_data_type_t vt = PMIX_UNDEF;
            st = copy_bounded(*this, info->key, kMaxKeyChars, "info key");
            if (st.ok()) st = get_uint32(&info->flags);
            // Decoded data is always owned: a persistent info would never be released.
            info->flags &= ~PMIX_INFO_PERSISTENT;
            if (st.ok()) st = get_data_type(&vt);
            if (st.ok()) st = get_payload(vt, &info->value, depth + 1);
            if (!st.ok()) st = st.with_context(std::string("info \"") + info->key + "\"");
            break;
        }
        case PMIX_VALUE: {
            auto v = static_cast<pmix_value_t *>(e);
            pmix_data_type_t vt = PMIX_UNDEF;
            st = get_data_type(&vt);
            if (st.ok()) st = get_payload(vt, v, depth + 1);
            break;
        }
        default:
            return unsupported(type, _f);
    }
    if (!st.ok()) element_destruct(type, e);
    return st;
}

}  // namespace pmixcpp::native
