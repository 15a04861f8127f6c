// Sample PMIx values of every encodable data type, shared by the codec and value tests.
#pragma once

#include <pmix_common.h>

#include <sys/time.h>

#include <cstring>
#include <vector>

#include "value.h"

namespace pmixcpp::testing {

// Every data type a pmix_value_t can carry over the wire.
inline std::vector<pmix_data_type_t> encodable_value_types() {
    return {PMIX_BOOL,
            PMIX_BYTE,
            PMIX_STRING,
            PMIX_SIZE,
            PMIX_PID,
            PMIX_INT,
            PMIX_INT8,
            PMIX_INT16,
            PMIX_INT32,
            PMIX_INT64,
            PMIX_UINT,
            PMIX_UINT8,
            PMIX_UINT16,
            PMIX_UINT32,
            PMIX_UINT64,
            PMIX_FLOAT,
            PMIX_DOUBLE,
            PMIX_TIMEVAL,
            PMIX_TIME,
            PMIX_STATUS,
            PMIX_PROC,
            PMIX_BYTE_OBJECT,
            PMIX_PERSIST,
            PMIX_SCOPE,
            PMIX_DATA_RANGE,
            PMIX_INFO_DIRECTIVES,
            PMIX_DATA_TYPE,
            PMIX_PROC_STATE,
            PMIX_PROC_INFO,
            PMIX_DATA_ARRAY,
            PMIX_PROC_RANK,
            PMIX_COMPRESSED_STRING,
            PMIX_ALLOC_DIRECTIVE,
            PMIX_IOF_CHANNEL,
            PMIX_ENVAR,
            PMIX_COORD,
            PMIX_REGATTR,
            PMIX_REGEX,
            PMIX_JOB_STATE,
            PMIX_LINK_STATE,
            PMIX_GEOMETRY,
            PMIX_DEVICE_DIST,
            PMIX_ENDPOINT,
            PMIX_DEVTYPE,
            PMIX_LOCTYPE,
            PMIX_COMPRESSED_BYTE_OBJECT,
            PMIX_PROC_NSPACE,
            PMIX_STOR_MEDIUM,
            PMIX_STOR_ACCESS,
            PMIX_STOR_PERSIST,
            PMIX_STOR_ACCESS_TYPE};
}

// Fill `v` (uninitialised storage is fine) with a non-trivial sample of `type`.
inline Status make_sample(pmix_data_type_t type, pmix_value_t *v, int variant = 0) {
    uint64_t u64 = 0x8000000000000005ull + variant;
    int64_t i64 = -(int64_t{1} << 40) - variant;
    switch (type) {
        case PMIX_BOOL: {
            bool b = variant == 0;
            return value_load(v, &b, type);
        }
        case PMIX_STRING:
            return value_load(v, variant ? "other" : "hello world", type);
        case PMIX_SIZE: {
            size_t s = (size_t{1} << 40) + variant;
            return value_load(v, &s, type);
        }
        case PMIX_PID: {
            pid_t p = 4242 + variant;
            return value_load(v, &p, type);
        }
        case PMIX_INT: {
            int x = -7 - variant;
            return value_load(v, &x, type);
        }
        case PMIX_UINT: {
            unsigned x = 4000000000u + variant;
            return value_load(v, &x, type);
        }
        case PMIX_STATUS: {
            pmix_status_t s = PMIX_ERR_NOT_FOUND - variant;
            return value_load(v, &s, type);
        }
        case PMIX_BYTE:
        case PMIX_UINT8:
        case PMIX_INT8:
        case PMIX_PERSIST:
        case PMIX_SCOPE:
        case PMIX_DATA_RANGE:
        case PMIX_PROC_STATE:
        case PMIX_ALLOC_DIRECTIVE:
        case PMIX_LINK_STATE:
        case PMIX_JOB_STATE: {
            uint8_t b = static_cast<uint8_t>(0xA5 + variant);
            return value_load(v, &b, type);
        }
        case PMIX_INT16:
        case PMIX_UINT16:
        case PMIX_DATA_TYPE:
        case PMIX_IOF_CHANNEL:
        case PMIX_LOCTYPE:
        case PMIX_STOR_ACCESS_TYPE: {
            uint16_t x = static_cast<uint16_t>(0xF00D + variant);
            return value_load(v, &x, type);
        }
        case PMIX_INT32:
        case PMIX_UINT32:
        case PMIX_PROC_RANK:
        case PMIX_INFO_DIRECTIVES: {
            uint32_t x = 0xC0FFEE00u + variant;
            return value_load(v, &x, type);
        }
        case PMIX_INT64:
            return value_load(v, &i64, type);
        case PMIX_UINT64:
        case PMIX_DEVTYPE:
        case PMIX_STOR_MEDIUM:
        case PMIX_STOR_ACCESS:
        case PMIX_STOR_PERSIST:
            return value_load(v, &u64, type);
        case PMIX_FLOAT: {
            float f = 1.5f + variant;
            return value_load(v, &f, type);
        }
        case PMIX_DOUBLE: {
            double d = -2.25 - variant;
            return value_load(v, &d, type);
        }
        case PMIX_TIMEVAL: {
            struct timeval tv = {1700000000 + variant, 123456};
            return value_load(v, &tv, type);
        }
        case PMIX_TIME: {
            time_t t = 1700000000 + variant;
            return value_load(v, &t, type);
        }
        case PMIX_PROC: {
            pmix_proc_t p;
            memset(&p, 0, sizeof(p));
            strcpy(p.nspace, variant ? "slurm.pmix.2.0" : "slurm.pmix.1.0");
            p.rank = 3;
            return value_load(v, &p, type);
        }
        case PMIX_PROC_NSPACE:
            return value_load(v, variant ? "ns-b" : "ns-a", type);
        case PMIX_BYTE_OBJECT:
        case PMIX_COMPRESSED_STRING:
        case PMIX_COMPRESSED_BYTE_OBJECT:
        case PMIX_REGEX: {
            char bytes[] = {'a', 0, 'b', static_cast<char>(0xff), static_cast<char>(variant)};
            pmix_byte_object_t bo = {bytes, sizeof(bytes)};
            return value_load(v, &bo, type);
        }
        case PMIX_PROC_INFO: {
            pmix_proc_info_t pi;
            memset(&pi, 0, sizeof(pi));
            strcpy(pi.proc.nspace, "job");
            pi.proc.rank = 9;
            pi.hostname = const_cast<char *>(variant ? "n2" : "n1");
            pi.executable_name = nullptr;  // NULL strings survive too
            pi.pid = 77;
            pi.exit_code = -1;
            pi.state = 4;
            return value_load(v, &pi, type);
        }
        case PMIX_DATA_ARRAY: {
            // An array of infos, one of which holds a nested array of strings.
            char *strs[] = {const_cast<char *>("x"), nullptr, const_cast<char *>("zz")};
            pmix_data_array_t inner = {PMIX_STRING, 3, strs};
            pmix_info_t infos[2];
            memset(infos, 0, sizeof(infos));
            strcpy(infos[0].key, "pmix.a");
            infos[0].flags = PMIX_INFO_REQD;
            infos[0].value.type = PMIX_UINT32;
            infos[0].value.data.uint32 = 5 + variant;
            strcpy(infos[1].key, "pmix.b");
            infos[1].value.type = PMIX_DATA_ARRAY;
            infos[1].value.data.darray = &inner;
            pmix_data_array_t outer = {PMIX_INFO, 2, infos};
            return value_load(v, &outer, type);
        }
        case PMIX_ENVAR: {
            pmix_envar_t e = {const_cast<char *>("PATH"), const_cast<char *>(variant ? "/usr/bin" : "/bin"),
                              ':'};
            return value_load(v, &e, type);
        }
        case PMIX_COORD: {
            uint32_t c[3] = {1, 2, static_cast<uint32_t>(3 + variant)};
            pmix_coord_t coord = {PMIX_COORD_LOGICAL_VIEW, c, 3};
            return value_load(v, &coord, type);
        }
        case PMIX_REGATTR: {
            char *desc[] = {const_cast<char *>("line one"), const_cast<char *>("line two"), nullptr};
            pmix_regattr_t ra;
            memset(&ra, 0, sizeof(ra));
            ra.name = const_cast<char *>("PMIX_TIMEOUT");
            strcpy(ra.string, variant ? "pmix.timeout2" : "pmix.timeout");
            ra.type = PMIX_INT;
            ra.description = desc;
            return value_load(v, &ra, type);
        }
        case PMIX_GEOMETRY: {
            uint32_t c1[2] = {1, 2}, c2[1] = {static_cast<uint32_t>(7 + variant)};
            pmix_coord_t coords[2] = {{PMIX_COORD_LOGICAL_VIEW, c1, 2}, {PMIX_COORD_PHYSICAL_VIEW, c2, 1}};
            pmix_geometry_t g = {5, const_cast<char *>("uuid-1"), const_cast<char *>("mlx5_0"), coords, 2};
            return value_load(v, &g, type);
        }
        case PMIX_DEVICE_DIST: {
            pmix_device_distance_t d = {const_cast<char *>("uuid-2"), nullptr, 0x4, 10,
                                        static_cast<uint16_t>(20 + variant)};
            return value_load(v, &d, type);
        }
        case PMIX_ENDPOINT: {
            char addr[] = {1, 2, 3, static_cast<char>(variant)};
            pmix_endpoint_t e = {
                const_cast<char *>("uuid-3"), const_cast<char *>("ib0"), {addr, sizeof(addr)}};
            return value_load(v, &e, type);
        }
        default:
            return Status(PMIX_ERR_NOT_SUPPORTED, "no sample");
    }
}

}  // namespace pmixcpp::testing
