// PMIx_Data_pack / unpack / copy / print / copy_payload / load / unload / embed / compress.
//
// Buffer format (ours, not OpenPMIx's: buffers are only exchanged between processes using the
// same library): every PMIx_Data_pack call appends one codec data array (u16 type, u32 count,
// the elements; shared/wire/codec.h); PMIx_Data_unpack takes back one such block, which must
// have the type asked for and fit in *max_num_values. pmix_data_buffer_t keeps OpenPMIx's
// meaning: base_ptr..base_ptr+bytes_used holds packed data, unpack_ptr the next byte to read.
#include <pmix.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "api.h"
#include "format.h"
#include "wire/codec.h"

using namespace pmixcpp;
using namespace pmixcpp::client;

namespace {

Status check_buffer(const pmix_data_buffer_t *b) {
    if (b == nullptr) return Status(PMIX_ERR_BAD_PARAM, "buffer is NULL");
    if (b->bytes_used > b->bytes_allocated) return Status(PMIX_ERR_BAD_PARAM, "corrupt buffer");
    if (b->base_ptr == nullptr && b->bytes_used != 0) return Status(PMIX_ERR_BAD_PARAM, "corrupt buffer");
    if (b->unpack_ptr != nullptr &&
        (b->unpack_ptr < b->base_ptr || b->unpack_ptr > b->base_ptr + b->bytes_used))
        return Status(PMIX_ERR_BAD_PARAM, "corrupt buffer");
    return Status::success();
}

size_t unpack_offset(const pmix_data_buffer_t *b) {
    return b->unpack_ptr == nullptr ? 0 : static_cast<size_t>(b->unpack_ptr - b->base_ptr);
}

Status buffer_append(pmix_data_buffer_t *b, const void *data, size_t n) {
    if (n == 0) return Status::success();
    size_t uoff = unpack_offset(b);
    size_t need = b->bytes_used + n;
    if (need > b->bytes_allocated) {
        size_t cap = std::max<size_t>({need, b->bytes_allocated * 2, 256});
        char *p = static_cast<char *>(realloc(b->base_ptr, cap));
        if (p == nullptr) return Status(PMIX_ERR_NOMEM, "out of memory");
        b->base_ptr = p;
        b->bytes_allocated = cap;
    }
    memcpy(b->base_ptr + b->bytes_used, data, n);
    b->bytes_used = need;
    b->pack_ptr = b->base_ptr + b->bytes_used;
    b->unpack_ptr = b->base_ptr + uoff;
    return Status::success();
}

}  // namespace

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_Data_pack(const pmix_proc_t *target, pmix_data_buffer_t *buffer, void *src,
                                         int32_t num_vals, pmix_data_type_t type) {
    (void)target;  // one format for every peer
    return api_guard(__func__, [&]() -> Status {
        PMIXCPP_RETURN_IF_ERROR(check_buffer(buffer));
        if (src == nullptr || num_vals <= 0) return Status(PMIX_ERR_BAD_PARAM, "nothing to pack");
        if (data_type_element_size(type) == 0)
            return Status(PMIX_ERR_UNKNOWN_DATA_TYPE, "type cannot be packed");
        pmix_data_array_t arr{type, static_cast<size_t>(num_vals), src};
        wire::Writer w;
        Status st = wire::encode_data_array(w, arr);
        if (!st.ok())
            return Status(st.code() == PMIX_ERR_NOT_SUPPORTED ? st.code() : PMIX_ERR_PACK_FAILURE,
                          st.message());
        return buffer_append(buffer, w.data().data(), w.size());
    });
}

PMIX_EXPORT pmix_status_t PMIx_Data_unpack(const pmix_proc_t *source, pmix_data_buffer_t *buffer, void *dest,
                                           int32_t *max_num_values, pmix_data_type_t type) {
    (void)source;
    return api_guard(__func__, [&]() -> Status {
        PMIXCPP_RETURN_IF_ERROR(check_buffer(buffer));
        if (dest == nullptr || max_num_values == nullptr || *max_num_values <= 0)
            return Status(PMIX_ERR_BAD_PARAM, "no room to unpack into");
        size_t esz = data_type_element_size(type);
        if (esz == 0) return Status(PMIX_ERR_UNKNOWN_DATA_TYPE, "type cannot be unpacked");
        size_t off = unpack_offset(buffer);
        if (off >= buffer->bytes_used)
            return Status(PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER, "buffer is exhausted");
        wire::Reader r(reinterpret_cast<const uint8_t *>(buffer->base_ptr) + off, buffer->bytes_used - off);
        // Peek at the header first so a mismatch leaves the buffer untouched.
        uint16_t packed_type = 0;
        uint32_t count = 0;
        {
            wire::Reader peek = r;
            PMIXCPP_RETURN_IF_ERROR(peek.get_u16(&packed_type));
            PMIXCPP_RETURN_IF_ERROR(peek.get_u32(&count));
        }
        if (packed_type != type)
            return Status(PMIX_ERR_UNPACK_FAILURE, std::string("next item is ") +
                                                       PMIx_Data_type_string(packed_type) + ", not " +
                                                       PMIx_Data_type_string(type));
        if (count > static_cast<uint32_t>(*max_num_values))
            return Status(PMIX_ERR_UNPACK_INADEQUATE_SPACE, "more values packed than room given");
        pmix_data_array_t *arr = nullptr;
        Status st = wire::decode_data_array(r, &arr);
        if (!st.ok()) return Status(PMIX_ERR_UNPACK_FAILURE, st.message());
        // Hand the elements over shallowly, then free only the array storage.
        if (arr->size > 0 && arr->array != nullptr) memcpy(dest, arr->array, arr->size * esz);
        *max_num_values = static_cast<int32_t>(arr->size);
        free(arr->array);
        free(arr);
        buffer->unpack_ptr = buffer->base_ptr + off + r.position();
        return Status::success();
    });
}

PMIX_EXPORT pmix_status_t PMIx_Data_copy(void **dest, void *src, pmix_data_type_t type) {
    return api_guard(__func__, [&]() -> Status {
        if (dest == nullptr || src == nullptr) return Status(PMIX_ERR_BAD_PARAM, "NULL argument");
        *dest = nullptr;
        if (type == PMIX_STRING) {
            *dest = strdup(static_cast<const char *>(src));
            return *dest ? Status::success() : Status(PMIX_ERR_NOMEM, "out of memory");
        }
        size_t esz = data_type_element_size(type);
        if (esz == 0) return Status(PMIX_ERR_UNKNOWN_DATA_TYPE, "type cannot be copied");
        void *p = calloc(1, esz);
        if (p == nullptr) return Status(PMIX_ERR_NOMEM, "out of memory");
        Status st = element_copy(type, p, src);
        if (!st.ok()) {
            free(p);
            return st;
        }
        *dest = p;
        return Status::success();
    });
}

PMIX_EXPORT pmix_status_t PMIx_Data_print(char **output, char *prefix, void *src, pmix_data_type_t type) {
    return api_guard(__func__, [&]() -> Status {
        if (output == nullptr) return Status(PMIX_ERR_BAD_PARAM, "output is NULL");
        *output = nullptr;
        std::string text = prefix ? prefix : "";
        if (src == nullptr) {
            text += std::string("Data type: ") + PMIx_Data_type_string(type) + " Value: NULL";
        } else if (type == PMIX_VALUE) {
            text += format_value(static_cast<const pmix_value_t *>(src));
        } else {
            pmix_value_t tmp{};  // borrowed view, never destructed
            tmp.type = type;
            size_t esz = data_type_element_size(type);
            if (type == PMIX_STRING)
                tmp.data.string = static_cast<char *>(src);
            else if (data_type_is_pointer_in_value(type))
                memcpy(&tmp.data, &src, sizeof(void *));
            else if (esz != 0)
                memcpy(&tmp.data, src, std::min(esz, sizeof(tmp.data)));
            else
                return Status(PMIX_ERR_UNKNOWN_DATA_TYPE, "type cannot be printed");
            text += format_value(&tmp);
        }
        *output = strdup(text.c_str());
        return *output ? Status::success() : Status(PMIX_ERR_NOMEM, "out of memory");
    });
}

PMIX_EXPORT pmix_status_t PMIx_Data_copy_payload(pmix_data_buffer_t *dest, pmix_data_buffer_t *src) {
    return api_guard(__func__, [&]() -> Status {
        PMIXCPP_RETURN_IF_ERROR(check_buffer(dest));
        PMIXCPP_RETURN_IF_ERROR(check_buffer(src));
        size_t off = unpack_offset(src);
        if (src->base_ptr == nullptr || off >= src->bytes_used) return Status::success();
        return buffer_append(dest, src->base_ptr + off, src->bytes_used - off);
    });
}

PMIX_EXPORT pmix_status_t PMIx_Data_load(pmix_data_buffer_t *buffer, pmix_byte_object_t *payload) {
    return api_guard(__func__, [&]() -> Status {
        if (buffer == nullptr || payload == nullptr) return Status(PMIX_ERR_BAD_PARAM, "NULL argument");
        free(buffer->base_ptr);
        memset(buffer, 0, sizeof(*buffer));
        if (payload->bytes == nullptr || payload->size == 0) return Status::success();
        buffer->base_ptr = payload->bytes;  // the buffer takes the bytes over
        buffer->bytes_allocated = buffer->bytes_used = payload->size;
        buffer->pack_ptr = buffer->base_ptr + payload->size;
        buffer->unpack_ptr = buffer->base_ptr;
        payload->bytes = nullptr;
        payload->size = 0;
        return Status::success();
    });
}

PMIX_EXPORT pmix_status_t PMIx_Data_unload(pmix_data_buffer_t *buffer, pmix_byte_object_t *payload) {
    return api_guard(__func__, [&]() -> Status {
        if (buffer == nullptr || payload == nullptr) return Status(PMIX_ERR_BAD_PARAM, "NULL argument");
        PMIXCPP_RETURN_IF_ERROR(check_buffer(buffer));
        payload->bytes = nullptr;
        payload->size = 0;
        size_t off = unpack_offset(buffer);
        if (buffer->base_ptr != nullptr && off < buffer->bytes_used) {
            if (off == 0) {
                payload->bytes = buffer->base_ptr;  // hand the storage over
                buffer->base_ptr = nullptr;
            } else {
                payload->bytes = static_cast<char *>(malloc(buffer->bytes_used - off));
                if (payload->bytes == nullptr) return Status(PMIX_ERR_NOMEM, "out of memory");
                memcpy(payload->bytes, buffer->base_ptr + off, buffer->bytes_used - off);
            }
            payload->size = buffer->bytes_used - off;
        }
        free(buffer->base_ptr);
        memset(buffer, 0, sizeof(*buffer));
        return Status::success();
    });
}

PMIX_EXPORT pmix_status_t PMIx_Data_embed(pmix_data_buffer_t *buffer, const pmix_byte_object_t *payload) {
    return api_guard(__func__, [&]() -> Status {
        PMIXCPP_RETURN_IF_ERROR(check_buffer(buffer));
        if (payload == nullptr) return Status(PMIX_ERR_BAD_PARAM, "payload is NULL");
        if (payload->size > 0 && payload->bytes == nullptr)
            return Status(PMIX_ERR_BAD_PARAM, "payload has no bytes");
        return buffer_append(buffer, payload->bytes, payload->size);
    });
}

// No compression library: callers then keep the data uncompressed (as OpenPMIx without zlib).
PMIX_EXPORT bool PMIx_Data_compress(const uint8_t *, size_t, uint8_t **outbytes, size_t *nbytes) {
    if (outbytes) *outbytes = nullptr;
    if (nbytes) *nbytes = 0;
    return false;
}

PMIX_EXPORT bool PMIx_Data_decompress(const uint8_t *, size_t, uint8_t **outbytes, size_t *nbytes) {
    if (outbytes) *outbytes = nullptr;
    if (nbytes) *nbytes = 0;
    return false;
}

}  // extern "C"
