// Text of PMIx values (see format.h).
#include "format.h"

#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "pmix_strings.h"
#include "value.h"

namespace pmixcpp::client {

namespace {
std::string printf_string(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
std::string printf_string(const char *fmt, ...) {
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    return buf;
}

std::string rank_text(pmix_rank_t r) {
    if (r == PMIX_RANK_WILDCARD) return "WILDCARD";
    if (r == PMIX_RANK_UNDEF) return "UNDEF";
    return std::to_string(r);
}
}  // namespace

std::string format_value_data(const pmix_value_t *v) {
    switch (v->type) {
        case PMIX_UNDEF:
            return "UNDEF";
        case PMIX_BOOL:
            return v->data.flag ? "true" : "false";
        case PMIX_BYTE:
            return std::to_string(v->data.byte);
        case PMIX_STRING:
            return v->data.string ? "\"" + std::string(v->data.string) + "\"" : "NULL";
        case PMIX_SIZE:
            return std::to_string(v->data.size);
        case PMIX_PID:
            return std::to_string(v->data.pid);
        case PMIX_INT:
            return std::to_string(v->data.integer);
        case PMIX_INT8:
            return std::to_string(v->data.int8);
        case PMIX_INT16:
            return std::to_string(v->data.int16);
        case PMIX_INT32:
            return std::to_string(v->data.int32);
        case PMIX_INT64:
            return std::to_string(v->data.int64);
        case PMIX_UINT:
            return std::to_string(v->data.uint);
        case PMIX_UINT8:
            return std::to_string(v->data.uint8);
        case PMIX_UINT16:
            return std::to_string(v->data.uint16);
        case PMIX_UINT32:
            return std::to_string(v->data.uint32);
        case PMIX_UINT64:
            return std::to_string(v->data.uint64);
        case PMIX_FLOAT:
            return printf_string("%g", v->data.fval);
        case PMIX_DOUBLE:
            return printf_string("%g", v->data.dval);
        case PMIX_TIMEVAL:
            return printf_string("%ld.%06ld", static_cast<long>(v->data.tv.tv_sec),
                                 static_cast<long>(v->data.tv.tv_usec));
        case PMIX_TIME:
            return std::to_string(static_cast<long long>(v->data.time));
        case PMIX_STATUS:
            return status_name(v->data.status);
        case PMIX_PROC_RANK:
            return rank_text(v->data.rank);
        case PMIX_PROC:
            return v->data.proc ? std::string(v->data.proc->nspace) + ":" + rank_text(v->data.proc->rank)
                                : "NULL";
        case PMIX_BYTE_OBJECT:
        case PMIX_COMPRESSED_STRING:
        case PMIX_COMPRESSED_BYTE_OBJECT:
        case PMIX_REGEX:
            return printf_string("%zu bytes", v->data.bo.size);
        case PMIX_PERSIST:
            return persistence_name(v->data.persist);
        case PMIX_SCOPE:
            return scope_name(v->data.scope);
        case PMIX_DATA_RANGE:
            return data_range_name(v->data.range);
        case PMIX_PROC_STATE:
            return proc_state_name(v->data.state);
        case PMIX_DATA_TYPE:
            return data_type_name(v->data.uint16);
        case PMIX_ALLOC_DIRECTIVE:
            return alloc_directive_name(v->data.adir);
        case PMIX_JOB_STATE:
            return job_state_name(v->data.jstate);
        case PMIX_LINK_STATE:
            return link_state_name(v->data.linkstate);
        case PMIX_ENVAR:
            return std::string(v->data.envar.envar ? v->data.envar.envar : "NULL") + "=" +
                   (v->data.envar.value ? v->data.envar.value : "NULL");
        case PMIX_DATA_ARRAY: {
            const pmix_data_array_t *a = v->data.darray;
            if (a == nullptr) return "NULL";
            std::string out = std::string("[") + data_type_name(a->type) + " x " + std::to_string(a->size);
            size_t esz = data_type_element_size(a->type);
            if (esz != 0 && a->array != nullptr && a->type != PMIX_INFO) {
                out += ":";
                for (size_t i = 0; i < a->size && i < 16; ++i) {
                    pmix_value_t tmp{};
                    tmp.type = a->type;
                    const char *elem = static_cast<const char *>(a->array) + i * esz;
                    if (data_type_is_pointer_in_value(a->type))
                        memcpy(&tmp.data, &elem, sizeof(void *));
                    else
                        memcpy(&tmp.data, elem, std::min(esz, sizeof(tmp.data)));
                    out += " " + format_value_data(&tmp);
                }
                if (a->size > 16) out += " ...";
            } else if (a->type == PMIX_INFO && a->array != nullptr) {
                const auto *infos = static_cast<const pmix_info_t *>(a->array);
                for (size_t i = 0; i < a->size && i < 16; ++i)
                    out += std::string(" ") +
                           std::string(infos[i].key, strnlen(infos[i].key, PMIX_MAX_KEYLEN)) + "=" +
                           format_value_data(&infos[i].value);
            }
            return out + "]";
        }
        default:
            return std::string("<") + data_type_name(v->type) + ">";
    }
}

std::string format_value(const pmix_value_t *value) {
    return std::string("Data type: ") + data_type_name(value->type) + " Value: " + format_value_data(value);
}

std::string format_infos_brief(const pmix_info_t *info, size_t ninfo) {
    std::string out;
    for (size_t i = 0; info != nullptr && i < ninfo; ++i) {
        if (!out.empty()) out += ", ";
        out += std::string(info[i].key, strnlen(info[i].key, PMIX_MAX_KEYLEN));
        out += "=" + format_value_data(&info[i].value);
    }
    return out.empty() ? "none" : out;
}

}  // namespace pmixcpp::client
