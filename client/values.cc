// Value / info / info-list / data-array helpers (the functions the pmix_common.h macros expand
// to) and the *_string name functions.
#include <hwloc.h>
#include <pmix.h>

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "api.h"
#include "format.h"
#include "pmix_strings.h"

using namespace pmixcpp;
using namespace pmixcpp::client;

namespace {

struct InfoList {
    std::vector<pmix_info_t> items;
    ~InfoList() {
        for (auto &i : items) info_destruct(&i);
    }
};

Status load_info(pmix_info_t *info, const char *key, const void *data, pmix_data_type_t type) {
    if (info == nullptr) return Status(PMIX_ERR_BAD_PARAM, "info is NULL");
    PMIXCPP_RETURN_IF_ERROR(check_key(key));
    pmix_info_t tmp{};
    memcpy(tmp.key, key, strlen(key));
    PMIXCPP_RETURN_IF_ERROR(value_load(&tmp.value, data, type));
    *info = tmp;
    return Status::success();
}

char *heap_string(const std::string &s) {
    char *out = strdup(s.c_str());
    return out;
}

}  // namespace

extern "C" {

// --- values -----------------------------------------------------------------------------------
PMIX_EXPORT pmix_status_t PMIx_Value_load(pmix_value_t *val, const void *data, pmix_data_type_t type) {
    return api_guard(__func__, [&]() -> Status {
        if (val == nullptr) return Status(PMIX_ERR_BAD_PARAM, "value is NULL");
        return value_load(val, data, type);
    });
}

PMIX_EXPORT pmix_status_t PMIx_Value_unload(pmix_value_t *val, void **data, size_t *sz) {
    return api_guard(__func__, [&]() -> Status {
        if (val == nullptr || data == nullptr || sz == nullptr)
            return Status(PMIX_ERR_BAD_PARAM, "NULL argument");
        // OpenMPI 5.0's MPI_Session_get_num_psets unloads PMIX_QUERY_NUM_PSETS (PMIX_SIZE) with
        // `data` = the address of its own size_t, which holds 0. OpenPMIx refuses a fixed-size
        // type whose *data is NULL, so the count of the server's process sets never reaches MPI.
        // An integer no wider than a pointer, asked for that way, is stored in that place itself
        // (where OpenPMIx would answer PMIX_ERR_BAD_PARAM).
        if (*data == nullptr) {
            switch (val->type) {
            case PMIX_SIZE: case PMIX_INT: case PMIX_INT8: case PMIX_INT16: case PMIX_INT32: case PMIX_INT64:
            case PMIX_UINT: case PMIX_UINT8: case PMIX_UINT16: case PMIX_UINT32: case PMIX_UINT64:
            case PMIX_PID: case PMIX_STATUS: case PMIX_PROC_RANK: {
                const size_t n = data_type_element_size(val->type);
                if (n == 0 || n > sizeof(void *)) break;
                memcpy(static_cast<void *>(data), &val->data, n);
                *sz = n;
                return Status::success();
            }
            default: break;
            }
        }
        return value_unload(val, data, sz);
    });
}

PMIX_EXPORT void PMIx_Value_destruct(pmix_value_t *val) {
    if (val != nullptr) value_destruct(val);
}

PMIX_EXPORT pmix_status_t PMIx_Value_xfer(pmix_value_t *dest, const pmix_value_t *src) {
    return api_guard(__func__, [&]() -> Status {
        if (dest == nullptr || src == nullptr) return Status(PMIX_ERR_BAD_PARAM, "NULL argument");
        return value_xfer(dest, src);
    });
}

PMIX_EXPORT pmix_value_cmp_t PMIx_Value_compare(pmix_value_t *v1, pmix_value_t *v2) {
    if (v1 == nullptr || v2 == nullptr) return PMIX_VALUE_COMPARISON_NOT_AVAIL;
    try {
        return value_compare(v1, v2);
    } catch (...) {
        return PMIX_VALUE_COMPARISON_NOT_AVAIL;
    }
}

PMIX_EXPORT void PMIx_Data_array_destruct(pmix_data_array_t *d) {
    if (d != nullptr) data_array_destruct(d);
}

PMIX_EXPORT void PMIx_Topology_destruct(pmix_topology_t *topo) {
    // The topology we hand out is the process's shared one (topology.cc): it stays; a caller's
    // own topology object is not ours to free.
    if (topo != nullptr) {
        free(topo->source);
        topo->source = nullptr;
        topo->topology = nullptr;
    }
}

PMIX_EXPORT void PMIx_Cpuset_destruct(pmix_cpuset_t *cpuset) {
    if (cpuset != nullptr) {
        // ours (PMIx_Get_cpuset, PMIx_Parse_cpuset_string) are hwloc bitmaps
        if (cpuset->source != nullptr && strcmp(cpuset->source, "hwloc") == 0 && cpuset->bitmap != nullptr)
            hwloc_bitmap_free(static_cast<hwloc_bitmap_t>(cpuset->bitmap));
        free(cpuset->source);
        cpuset->source = nullptr;
        cpuset->bitmap = nullptr;
    }
}

// --- infos ------------------------------------------------------------------------------------
PMIX_EXPORT pmix_status_t PMIx_Info_load(pmix_info_t *info, const char *key, const void *data,
                                         pmix_data_type_t type) {
    return api_guard(__func__, [&]() -> Status { return load_info(info, key, data, type); });
}

PMIX_EXPORT pmix_status_t PMIx_Info_xfer(pmix_info_t *dest, const pmix_info_t *src) {
    return api_guard(__func__, [&]() -> Status {
        if (dest == nullptr || src == nullptr) return Status(PMIX_ERR_BAD_PARAM, "NULL argument");
        return info_xfer(dest, src);
    });
}

PMIX_EXPORT void *PMIx_Info_list_start(void) {
    try {
        return new InfoList;
    } catch (...) {
        return nullptr;
    }
}

PMIX_EXPORT pmix_status_t PMIx_Info_list_add(void *ptr, const char *key, const void *value,
                                             pmix_data_type_t type) {
    return api_guard(__func__, [&]() -> Status {
        if (ptr == nullptr) return Status(PMIX_ERR_BAD_PARAM, "list is NULL");
        pmix_info_t info{};
        PMIXCPP_RETURN_IF_ERROR(load_info(&info, key, value, type));
        try {
            static_cast<InfoList *>(ptr)->items.push_back(info);
        } catch (...) {
            info_destruct(&info);
            throw;
        }
        return Status::success();
    });
}

PMIX_EXPORT pmix_status_t PMIx_Info_list_prepend(void *ptr, const char *key, const void *value,
                                                 pmix_data_type_t type) {
    return api_guard(__func__, [&]() -> Status {
        if (ptr == nullptr) return Status(PMIX_ERR_BAD_PARAM, "list is NULL");
        pmix_info_t info{};
        PMIXCPP_RETURN_IF_ERROR(load_info(&info, key, value, type));
        try {
            auto &items = static_cast<InfoList *>(ptr)->items;
            items.insert(items.begin(), info);
        } catch (...) {
            info_destruct(&info);
            throw;
        }
        return Status::success();
    });
}

// Walks a list: prev NULL starts at the first entry; *next is the cursor for the following call
// (NULL after the last entry). The cursor is the entry's position + 1, not a pointer.
PMIX_EXPORT pmix_info_t *PMIx_Info_list_get_info(void *ptr, void *prev, void **next) {
    if (next != nullptr) *next = nullptr;
    if (ptr == nullptr) return nullptr;
    auto &items = static_cast<InfoList *>(ptr)->items;
    size_t at = prev == nullptr ? 0 : reinterpret_cast<uintptr_t>(prev) - 1;
    if (at >= items.size()) return nullptr;
    if (next != nullptr && at + 1 < items.size()) *next = reinterpret_cast<void *>(static_cast<uintptr_t>(at + 2));
    return &items[at];
}

// The caller keeps ownership of info's value (it is marked persistent in the list and copied by
// convert); the list never frees it.
PMIX_EXPORT pmix_status_t PMIx_Info_list_insert(void *ptr, pmix_info_t *info) {
    return api_guard(__func__, [&]() -> Status {
        if (ptr == nullptr || info == nullptr) return Status(PMIX_ERR_BAD_PARAM, "NULL argument");
        PMIXCPP_RETURN_IF_ERROR(check_infos(info, 1));
        pmix_info_t shallow = *info;
        shallow.flags |= PMIX_INFO_PERSISTENT;
        static_cast<InfoList *>(ptr)->items.push_back(shallow);
        return Status::success();
    });
}

PMIX_EXPORT pmix_status_t PMIx_Info_list_xfer(void *ptr, const pmix_info_t *info) {
    return api_guard(__func__, [&]() -> Status {
        if (ptr == nullptr || info == nullptr) return Status(PMIX_ERR_BAD_PARAM, "NULL argument");
        pmix_info_t copy{};
        PMIXCPP_RETURN_IF_ERROR(info_xfer(&copy, info));
        try {
            static_cast<InfoList *>(ptr)->items.push_back(copy);
        } catch (...) {
            info_destruct(&copy);
            throw;
        }
        return Status::success();
    });
}

PMIX_EXPORT pmix_status_t PMIx_Info_list_convert(void *ptr, pmix_data_array_t *par) {
    return api_guard(__func__, [&]() -> Status {
        if (ptr == nullptr || par == nullptr) return Status(PMIX_ERR_BAD_PARAM, "NULL argument");
        auto &items = static_cast<InfoList *>(ptr)->items;
        par->type = PMIX_INFO;
        par->size = 0;
        par->array = nullptr;
        if (items.empty()) return Status(PMIX_ERR_EMPTY, "info list is empty");
        auto *arr = static_cast<pmix_info_t *>(calloc(items.size(), sizeof(pmix_info_t)));
        if (arr == nullptr) return Status(PMIX_ERR_NOMEM, "out of memory");
        for (size_t i = 0; i < items.size(); ++i) {
            Status st = info_xfer(&arr[i], &items[i]);
            if (!st.ok()) {
                info_array_free(arr, i);
                return st;
            }
        }
        par->size = items.size();
        par->array = arr;
        return Status::success();
    });
}

PMIX_EXPORT void PMIx_Info_list_release(void *ptr) { delete static_cast<InfoList *>(ptr); }

// --- names ------------------------------------------------------------------------------------
PMIX_EXPORT const char *PMIx_Error_string(pmix_status_t status) { return status_name(status); }
PMIX_EXPORT const char *PMIx_Proc_state_string(pmix_proc_state_t state) { return proc_state_name(state); }
PMIX_EXPORT const char *PMIx_Scope_string(pmix_scope_t scope) { return scope_name(scope); }
PMIX_EXPORT const char *PMIx_Persistence_string(pmix_persistence_t persist) {
    return persistence_name(persist);
}
PMIX_EXPORT const char *PMIx_Data_range_string(pmix_data_range_t range) { return data_range_name(range); }
PMIX_EXPORT const char *PMIx_Data_type_string(pmix_data_type_t type) { return data_type_name(type); }
PMIX_EXPORT const char *PMIx_Alloc_directive_string(pmix_alloc_directive_t directive) {
    return alloc_directive_name(directive);
}
PMIX_EXPORT const char *PMIx_IOF_channel_string(pmix_iof_channel_t channel) {
    return iof_channel_name(channel);
}
PMIX_EXPORT const char *PMIx_Job_state_string(pmix_job_state_t state) { return job_state_name(state); }
PMIX_EXPORT const char *PMIx_Get_attribute_string(const char *attribute) {
    if (attribute == nullptr) return "";
    const char *key = attribute_key(attribute);
    return key != nullptr ? key : attribute;
}
PMIX_EXPORT const char *PMIx_Get_attribute_name(const char *attrstring) {
    if (attrstring == nullptr) return "";
    const char *name = attribute_name(attrstring);
    return name != nullptr ? name : attrstring;
}
PMIX_EXPORT const char *PMIx_Link_state_string(pmix_link_state_t state) { return link_state_name(state); }
PMIX_EXPORT const char *PMIx_Device_type_string(pmix_device_type_t type) { return device_type_name(type); }
PMIX_EXPORT const char *PMIx_Value_comparison_string(pmix_value_cmp_t cmp) { return value_cmp_name(cmp); }

PMIX_EXPORT char *PMIx_Info_string(const pmix_info_t *info) {
    if (info == nullptr) return nullptr;
    try {
        std::string key = key_of(*info);
        return heap_string("Key: " + key + " Flags: " + info_directives_name(info->flags) + " " +
                           format_value(&info->value));
    } catch (...) {
        return nullptr;
    }
}

PMIX_EXPORT char *PMIx_Value_string(const pmix_value_t *value) {
    if (value == nullptr) return nullptr;
    try {
        return heap_string(format_value(value));
    } catch (...) {
        return nullptr;
    }
}

PMIX_EXPORT char *PMIx_Info_directives_string(pmix_info_directives_t directives) {
    return strdup(info_directives_name(directives));
}

}  // extern "C"
