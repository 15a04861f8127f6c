#include "topology.h"

#include <hwloc.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace pmixcpp::server {

namespace {

struct topology_deleter {
    void operator()(hwloc_topology *t) const { hwloc_topology_destroy(t); }
};
struct bitmap_deleter {
    void operator()(hwloc_bitmap_s *b) const { hwloc_bitmap_free(b); }
};
using topology_ptr = std::unique_ptr<hwloc_topology, topology_deleter>;
using bitmap_ptr = std::unique_ptr<hwloc_bitmap_s, bitmap_deleter>;

std::string list_string(hwloc_const_bitmap_t set) {
    char *s = nullptr;
    if (hwloc_bitmap_list_asprintf(&s, set) < 0 || !s) return {};
    std::string out(s);
    free(s);
    return out;
}

// Logical indices of the objects of `type` that intersect `set`, as a list.
std::string covered(hwloc_topology_t topo, hwloc_obj_type_t type, hwloc_const_bitmap_t set, bool *present) {
    *present = false;
    int n = hwloc_get_nbobjs_by_type(topo, type);
    if (n <= 0) return {};
    *present = true;
    bitmap_ptr idx(hwloc_bitmap_alloc());
    if (!idx) return {};
    for (int i = 0; i < n; ++i) {
        hwloc_obj_t obj = hwloc_get_obj_by_type(topo, type, static_cast<unsigned>(i));
        if (obj && obj->cpuset && hwloc_bitmap_intersects(obj->cpuset, set))
            hwloc_bitmap_set(idx.get(), obj->logical_index);
    }
    return list_string(idx.get());
}

}  // namespace

Result<node_topology> load_node_topology() {
    auto t0 = std::chrono::steady_clock::now();
    hwloc_topology_t raw = nullptr;
    if (hwloc_topology_init(&raw) != 0) return Status(PMIX_ERROR, "hwloc_topology_init failed");
    topology_ptr topo(raw);
    // Only CPUs and caches matter here: keep I/O and misc objects out (faster load).
    hwloc_topology_set_io_types_filter(raw, HWLOC_TYPE_FILTER_KEEP_NONE);
    hwloc_topology_set_type_filter(raw, HWLOC_OBJ_MISC, HWLOC_TYPE_FILTER_KEEP_NONE);
    if (hwloc_topology_load(raw) != 0) return Status(PMIX_ERROR, "hwloc_topology_load failed");

    bitmap_ptr set(hwloc_bitmap_dup(hwloc_topology_get_allowed_cpuset(raw)));
    bitmap_ptr bound(hwloc_bitmap_alloc());
    if (!set || !bound) return Status(PMIX_ERR_NOMEM, "hwloc bitmap allocation failed");
    if (hwloc_get_cpubind(raw, bound.get(), HWLOC_CPUBIND_PROCESS) == 0 && !hwloc_bitmap_iszero(bound.get())) {
        hwloc_bitmap_and(set.get(), set.get(), bound.get());
        if (hwloc_bitmap_iszero(set.get())) hwloc_bitmap_copy(set.get(), hwloc_topology_get_allowed_cpuset(raw));
    }

    node_topology out;
    out.cpuset = list_string(set.get());
    static const struct {
        hwloc_obj_type_t type;
        const char *prefix;
    } levels[] = {{HWLOC_OBJ_PACKAGE, "SK"}, {HWLOC_OBJ_L3CACHE, "L3"}, {HWLOC_OBJ_L2CACHE, "L2"},
                  {HWLOC_OBJ_L1CACHE, "L1"}, {HWLOC_OBJ_CORE, "CR"},    {HWLOC_OBJ_PU, "HT"}};
    for (const auto &l : levels) {
        bool present = false;
        std::string idx = covered(raw, l.type, set.get(), &present);
        if (!present || idx.empty()) continue;
        if (!out.locality.empty()) out.locality += ":";
        out.locality += l.prefix + idx;
    }
    out.load_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return out;
}

Result<std::string> export_node_topology_xml() {
    hwloc_topology_t raw = nullptr;
    if (hwloc_topology_init(&raw) != 0) return Status(PMIX_ERROR, "hwloc_topology_init failed");
    topology_ptr topo(raw);
    // The whole machine, with what the step may use marked as allowed; the I/O devices an MPI
    // library places its processes near.
    hwloc_topology_set_flags(raw, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
    hwloc_topology_set_io_types_filter(raw, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    hwloc_topology_set_type_filter(raw, HWLOC_OBJ_MISC, HWLOC_TYPE_FILTER_KEEP_NONE);
    if (hwloc_topology_load(raw) != 0) return Status(PMIX_ERROR, "hwloc_topology_load failed");
    char *xml = nullptr;
    int len = 0;
    if (hwloc_topology_export_xmlbuffer(raw, &xml, &len, 0) != 0 || xml == nullptr || len <= 0)
        return Status(PMIX_ERROR, "hwloc could not export the topology as XML");
    std::string out(xml, strnlen(xml, static_cast<size_t>(len)));
    hwloc_free_xmlbuffer(raw, xml);
    return out;
}

}  // namespace pmixcpp::server
