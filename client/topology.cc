// PMIx_Load_topology / PMIx_Get_cpuset / PMIx_Parse_cpuset_string / PMIx_Get_relative_locality,
// with hwloc. The process loads the node's topology at most once and hands the same read-only
// object to every caller (PMIx_Topology_destruct leaves it alone).
#include <hwloc.h>
#include <pmix.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "api.h"
#include "topology.h"

using namespace pmixcpp;
using namespace pmixcpp::client;

namespace pmixcpp::client {

namespace {
std::once_flag g_once;
hwloc_topology_t g_topology = nullptr;
}  // namespace

// The node's topology as the node's server made it (PMIX_LOCAL_TOPO, hwloc XML), "" without one
// (no server, called from a callback, or the server could not make it).
std::string server_topology_xml() {
    pmix_proc_t wild;
    PMIX_PROC_CONSTRUCT(&wild);
    wild.rank = PMIX_RANK_WILDCARD;  // "" = this namespace
    pmix_info_t timeout;
    int seconds = 60;
    PMIX_INFO_LOAD(&timeout, PMIX_TIMEOUT, &seconds, PMIX_INT);
    pmix_value_t *v = nullptr;
    std::string xml;
    if (PMIx_Get(&wild, PMIX_LOCAL_TOPO, &timeout, 1, &v) == PMIX_SUCCESS && v != nullptr &&
        v->type == PMIX_STRING && v->data.string != nullptr)
        xml = v->data.string;
    if (v != nullptr) PMIX_VALUE_RELEASE(v);
    return xml;
}

hwloc_topology_t process_topology() {
    std::call_once(g_once, [] {
        // The node's whole machine, as the standard's topology means. Loaded from what the server
        // made once for the node when it has it: a discovery of its own costs every process
        // milliseconds (more with the I/O devices, which the server's includes).
        auto load = [](const std::string &xml) -> hwloc_topology_t {
            hwloc_topology_t t = nullptr;
            if (hwloc_topology_init(&t) != 0) return nullptr;
            unsigned long flags = HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED;
            if (!xml.empty()) {
                flags |= HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM;  // it describes this node: binding queries work
                if (hwloc_topology_set_xmlbuffer(t, xml.c_str(), static_cast<int>(xml.size() + 1)) != 0) {
                    hwloc_topology_destroy(t);
                    return nullptr;
                }
            }
            if (hwloc_topology_set_flags(t, flags) != 0 || hwloc_topology_load(t) != 0) {
                hwloc_topology_destroy(t);
                return nullptr;
            }
            return t;
        };
        std::string xml = server_topology_xml();
        hwloc_topology_t t = xml.empty() ? nullptr : load(xml);
        if (t == nullptr) t = load("");
        g_topology = t;
    });
    return g_topology;
}

bool is_process_topology(const void *t) { return t != nullptr && t == g_topology; }

pmix_locality_t relative_locality(const std::string &a, const std::string &b) {
    // "SK0:L30:L20:L10:CR0:HT0-1" (fields in any order, NM for NUMA): a field whose CPU lists
    // intersect is shared.
    struct field {
        const char *tag;
        pmix_locality_t bit;
    };
    static const field fields[] = {{"NM", PMIX_LOCALITY_SHARE_NUMA},    {"SK", PMIX_LOCALITY_SHARE_PACKAGE},
                                   {"L3", PMIX_LOCALITY_SHARE_L3CACHE}, {"L2", PMIX_LOCALITY_SHARE_L2CACHE},
                                   {"L1", PMIX_LOCALITY_SHARE_L1CACHE}, {"CR", PMIX_LOCALITY_SHARE_CORE},
                                   {"HT", PMIX_LOCALITY_SHARE_HWTHREAD}};
    auto value_of = [](const std::string &s, const char *tag, std::string *out) {
        size_t pos = 0;
        while (pos <= s.size()) {
            size_t end = s.find(':', pos);
            if (end == std::string::npos) end = s.size();
            if (s.compare(pos, 2, tag) == 0 && end - pos > 2) {
                *out = s.substr(pos + 2, end - pos - 2);
                return true;
            }
            pos = end + 1;
        }
        return false;
    };
    pmix_locality_t loc = PMIX_LOCALITY_SHARE_NODE;
    hwloc_bitmap_t x = hwloc_bitmap_alloc(), y = hwloc_bitmap_alloc();
    for (const auto &f : fields) {
        std::string va, vb;
        if (!value_of(a, f.tag, &va) || !value_of(b, f.tag, &vb)) continue;
        if (hwloc_bitmap_list_sscanf(x, va.c_str()) != 0 || hwloc_bitmap_list_sscanf(y, vb.c_str()) != 0) continue;
        if (hwloc_bitmap_intersects(x, y)) loc |= f.bit;
    }
    hwloc_bitmap_free(x);
    hwloc_bitmap_free(y);
    return loc;
}

}  // namespace pmixcpp::client

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_Load_topology(pmix_topology_t *topo) {
    return api_guard(__func__, [&]() -> Status {
        if (topo == nullptr) return Status(PMIX_ERR_BAD_PARAM, "no topology object");
        if (topo->source != nullptr && strncmp(topo->source, "hwloc", 5) != 0)
            return Status(PMIX_ERR_NOT_SUPPORTED, std::string("topology source ") + topo->source);
        hwloc_topology_t t = process_topology();
        if (t == nullptr) return Status(PMIX_ERR_NOT_AVAILABLE, "hwloc could not load the node's topology");
        char *src = strdup("hwloc " HWLOC_VERSION);
        if (src == nullptr) return Status(PMIX_ERR_NOMEM, "out of memory");
        free(topo->source);
        topo->source = src;
        topo->topology = t;
        return Status::success();
    });
}

PMIX_EXPORT pmix_status_t PMIx_Get_cpuset(pmix_cpuset_t *cpuset, pmix_bind_envelope_t ref) {
    return api_guard(__func__, [&]() -> Status {
        if (cpuset == nullptr) return Status(PMIX_ERR_BAD_PARAM, "no cpuset object");
        hwloc_topology_t t = process_topology();
        if (t == nullptr) return Status(PMIX_ERR_NOT_AVAILABLE, "hwloc could not load the node's topology");
        hwloc_bitmap_t b = hwloc_bitmap_alloc();
        if (b == nullptr) return Status(PMIX_ERR_NOMEM, "out of memory");
        int flags = ref == PMIX_CPUBIND_THREAD ? HWLOC_CPUBIND_THREAD : HWLOC_CPUBIND_PROCESS;
        if (hwloc_get_cpubind(t, b, flags) != 0) {
            hwloc_bitmap_free(b);
            return Status(PMIX_ERR_NOT_AVAILABLE, "hwloc_get_cpubind failed");
        }
        free(cpuset->source);
        cpuset->source = strdup("hwloc");
        cpuset->bitmap = b;
        return Status::success();
    });
}

PMIX_EXPORT pmix_status_t PMIx_Parse_cpuset_string(const char *cpuset_string, pmix_cpuset_t *cpuset) {
    return api_guard(__func__, [&]() -> Status {
        if (cpuset_string == nullptr || cpuset == nullptr) return Status(PMIX_ERR_BAD_PARAM, "no string or cpuset");
        // "hwloc:<list>" as PMIX_CPUSET carries it, or a bare CPU list
        const char *list = strncmp(cpuset_string, "hwloc:", 6) == 0 ? cpuset_string + 6 : cpuset_string;
        hwloc_bitmap_t b = hwloc_bitmap_alloc();
        if (b == nullptr) return Status(PMIX_ERR_NOMEM, "out of memory");
        if (hwloc_bitmap_list_sscanf(b, list) != 0) {
            hwloc_bitmap_free(b);
            return Status(PMIX_ERR_BAD_PARAM, std::string("not a CPU list: ") + cpuset_string);
        }
        free(cpuset->source);
        cpuset->source = strdup("hwloc");
        cpuset->bitmap = b;
        return Status::success();
    });
}

PMIX_EXPORT pmix_status_t PMIx_Get_relative_locality(const char *locality1, const char *locality2,
                                                     pmix_locality_t *locality) {
    return api_guard(__func__, [&]() -> Status {
        if (locality1 == nullptr || locality2 == nullptr || locality == nullptr)
            return Status(PMIX_ERR_BAD_PARAM, "no locality string");
        *locality = relative_locality(locality1, locality2);
        return Status::success();
    });
}

}  // extern "C"
