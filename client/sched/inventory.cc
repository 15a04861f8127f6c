#include "inventory.h"

#include <arpa/inet.h>
#include <hwloc.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <tuple>

namespace pmixcpp::sched {

namespace {

// Builds a calloc'ed pmix_info_t array (owned by an InfoArray once done).
class info_list {
public:
    Status add(const char *key, const void *data, pmix_data_type_t type) {
        pmix_info_t info{};
        strncpy(info.key, key, PMIX_MAX_KEYLEN);
        PMIXCPP_RETURN_IF_ERROR(value_load(&info.value, data, type));
        _items.push_back(info);
        return Status::success();
    }
    Status add_string(const char *key, const std::string &s) { return add(key, s.c_str(), PMIX_STRING); }
    Status add_u32(const char *key, uint32_t v) { return add(key, &v, PMIX_UINT32); }
    Status add_u64(const char *key, uint64_t v) { return add(key, &v, PMIX_UINT64); }
    // A nested list becomes a PMIX_DATA_ARRAY of PMIX_INFO (ownership moves into the value).
    Status add_list(const char *key, info_list &&sub) {
        pmix_info_t info{};
        strncpy(info.key, key, PMIX_MAX_KEYLEN);
        auto *da = static_cast<pmix_data_array_t *>(calloc(1, sizeof(pmix_data_array_t)));
        if (da == nullptr) return Status(PMIX_ERR_NOMEM, "out of memory");
        InfoArray arr = std::move(sub).finish();
        da->type = PMIX_INFO;
        da->size = arr.size();
        da->array = arr.release();
        info.value.type = PMIX_DATA_ARRAY;
        info.value.data.darray = da;
        _items.push_back(info);
        return Status::success();
    }
    ~info_list() {
        for (auto &i : _items) info_destruct(&i);
    }
    info_list() = default;
    info_list(info_list &&) = default;
    InfoArray finish() && {
        auto *arr = static_cast<pmix_info_t *>(calloc(_items.size() ? _items.size() : 1, sizeof(pmix_info_t)));
        if (arr == nullptr) throw std::bad_alloc();
        for (size_t i = 0; i < _items.size(); ++i) arr[i] = _items[i];
        InfoArray out(arr, _items.size());
        _items.clear();
        return out;
    }

private:
    std::vector<pmix_info_t> _items;
};

struct topology_owner {
    hwloc_topology_t t = nullptr;
    ~topology_owner() {
        if (t) hwloc_topology_destroy(t);
    }
};

std::string cpuset_list(hwloc_const_bitmap_t set) {
    if (set == nullptr) return "";
    char *s = nullptr;
    if (hwloc_bitmap_list_asprintf(&s, set) < 0 || s == nullptr) return "";
    std::string out(s);
    free(s);
    return out;
}

std::string pci_id(hwloc_obj_t pci) {
    if (pci == nullptr || pci->type != HWLOC_OBJ_PCI_DEVICE) return "";
    char buf[32];
    snprintf(buf, sizeof buf, "%04x:%02x:%02x.%01x", pci->attr->pcidev.domain, pci->attr->pcidev.bus,
             pci->attr->pcidev.dev, pci->attr->pcidev.func);
    return buf;
}

std::string pci_vendor_device(hwloc_obj_t pci) {
    if (pci == nullptr || pci->type != HWLOC_OBJ_PCI_DEVICE) return "";
    char buf[32];
    snprintf(buf, sizeof buf, "%04x:%04x", pci->attr->pcidev.vendor_id, pci->attr->pcidev.device_id);
    return buf;
}

struct if_addrs {
    std::string ipv4, ipv6;
    bool up = false, loopback = false;
};

std::map<std::string, if_addrs> interface_addresses() {
    std::map<std::string, if_addrs> out;
    struct ifaddrs *list = nullptr;
    if (getifaddrs(&list) != 0) return out;
    for (auto *a = list; a != nullptr; a = a->ifa_next) {
        if (a->ifa_name == nullptr) continue;
        auto &e = out[a->ifa_name];
        e.up = (a->ifa_flags & IFF_UP) != 0;
        e.loopback = (a->ifa_flags & IFF_LOOPBACK) != 0;
        if (a->ifa_addr == nullptr) continue;
        char buf[INET6_ADDRSTRLEN] = {0};
        if (a->ifa_addr->sa_family == AF_INET) {
            inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in *>(a->ifa_addr)->sin_addr, buf, sizeof buf);
            e.ipv4 += (e.ipv4.empty() ? "" : ",") + std::string(buf);
        } else if (a->ifa_addr->sa_family == AF_INET6) {
            inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6 *>(a->ifa_addr)->sin6_addr, buf, sizeof buf);
            e.ipv6 += (e.ipv6.empty() ? "" : ",") + std::string(buf);
        }
    }
    freeifaddrs(list);
    return out;
}

std::string node_name() {
    if (const char *n = getenv("SLURMD_NODENAME"); n != nullptr && *n != '\0') return n;
    char host[256] = {0};
    gethostname(host, sizeof host - 1);
    std::string h(host);
    if (size_t dot = h.find('.'); dot != std::string::npos) h.resize(dot);
    return h;
}

const char *cache_type(hwloc_obj_t o) {
    switch (o->attr->cache.type) {
    case HWLOC_OBJ_CACHE_DATA: return "data";
    case HWLOC_OBJ_CACHE_INSTRUCTION: return "instruction";
    default: return "unified";
    }
}


}  // namespace

Result<InfoArray> collect_local_inventory() {
    topology_owner topo;
    if (hwloc_topology_init(&topo.t) != 0) return Status(PMIX_ERR_NOT_AVAILABLE, "hwloc_topology_init failed");
    hwloc_topology_set_io_types_filter(topo.t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    hwloc_topology_set_icache_types_filter(topo.t, HWLOC_TYPE_FILTER_KEEP_ALL);
    if (hwloc_topology_load(topo.t) != 0) return Status(PMIX_ERR_NOT_AVAILABLE, "hwloc_topology_load failed");
    hwloc_topology_t t = topo.t;

    info_list inv;
    PMIXCPP_RETURN_IF_ERROR(inv.add_string(PMIX_HOSTNAME, node_name()));
    PMIXCPP_RETURN_IF_ERROR(inv.add_string(PMIXCPP_INV_HWLOC, HWLOC_VERSION));
    PMIXCPP_RETURN_IF_ERROR(inv.add_u32(PMIXCPP_INV_PACKAGES, hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PACKAGE)));
    PMIXCPP_RETURN_IF_ERROR(inv.add_u32(PMIXCPP_INV_CORES, hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE)));
    PMIXCPP_RETURN_IF_ERROR(inv.add_u32(PMIXCPP_INV_PUS, hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU)));

    uint64_t total = 0;
    info_list numa;
    for (hwloc_obj_t o = nullptr; (o = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_NUMANODE, o)) != nullptr;) {
        info_list one;
        PMIXCPP_RETURN_IF_ERROR(one.add_u32(PMIXCPP_INV_OS_INDEX, o->os_index));
        PMIXCPP_RETURN_IF_ERROR(one.add_u64(PMIXCPP_INV_MEMORY, o->attr->numanode.local_memory));
        PMIXCPP_RETURN_IF_ERROR(one.add_string(PMIXCPP_INV_CPUSET, cpuset_list(o->cpuset)));
        PMIXCPP_RETURN_IF_ERROR(numa.add_list(PMIXCPP_INV_NUMANODE, std::move(one)));
        total += o->attr->numanode.local_memory;
    }
    PMIXCPP_RETURN_IF_ERROR(inv.add_u64(PMIX_AVAIL_PHYS_MEMORY, total));
    PMIXCPP_RETURN_IF_ERROR(inv.add_list(PMIXCPP_INV_NUMA, std::move(numa)));

    // Caches grouped by (level, type, size).
    std::map<std::tuple<unsigned, std::string, uint64_t>, uint32_t> caches;
    for (int d = 0; d < hwloc_topology_get_depth(t); ++d) {
        for (hwloc_obj_t o = hwloc_get_next_obj_by_depth(t, d, nullptr); o != nullptr;
             o = hwloc_get_next_obj_by_depth(t, d, o)) {
            if (!hwloc_obj_type_is_cache(o->type)) continue;
            caches[{o->attr->cache.depth, cache_type(o), o->attr->cache.size}]++;
        }
    }
    info_list cache_list;
    for (const auto &[k, count] : caches) {
        info_list one;
        PMIXCPP_RETURN_IF_ERROR(one.add_u32(PMIXCPP_INV_LEVEL, std::get<0>(k)));
        PMIXCPP_RETURN_IF_ERROR(one.add_string(PMIXCPP_INV_TYPE, std::get<1>(k)));
        PMIXCPP_RETURN_IF_ERROR(one.add_u64(PMIXCPP_INV_SIZE, std::get<2>(k)));
        PMIXCPP_RETURN_IF_ERROR(one.add_u32(PMIXCPP_INV_COUNT, count));
        PMIXCPP_RETURN_IF_ERROR(cache_list.add_list(PMIXCPP_INV_CACHE, std::move(one)));
    }
    PMIXCPP_RETURN_IF_ERROR(inv.add_list(PMIXCPP_INV_CACHES, std::move(cache_list)));

    auto addrs = interface_addresses();
    info_list gpus, nics;
    std::map<std::string, bool> nic_seen;
    for (hwloc_obj_t o = nullptr; (o = hwloc_get_next_osdev(t, o)) != nullptr;) {
        hwloc_obj_t pci = o->parent;
        while (pci != nullptr && pci->type != HWLOC_OBJ_PCI_DEVICE && pci->type == HWLOC_OBJ_OS_DEVICE) pci = pci->parent;
        switch (o->attr->osdev.type) {
        case HWLOC_OBJ_OSDEV_GPU:
        case HWLOC_OBJ_OSDEV_COPROC: {
            info_list one;
            PMIXCPP_RETURN_IF_ERROR(one.add_string(PMIXCPP_INV_TYPE, o->attr->osdev.type == HWLOC_OBJ_OSDEV_GPU ? "gpu" : "coproc"));
            PMIXCPP_RETURN_IF_ERROR(one.add_string(PMIX_FABRIC_DEVICE_NAME, o->name ? o->name : ""));
            PMIXCPP_RETURN_IF_ERROR(one.add_string(PMIXCPP_INV_PCI, pci_id(pci)));
            if (const char *m = hwloc_obj_get_info_by_name(o, "GPUModel"))
                PMIXCPP_RETURN_IF_ERROR(one.add_string(PMIX_FABRIC_DEVICE_VENDOR, m));
            PMIXCPP_RETURN_IF_ERROR(gpus.add_list(PMIXCPP_INV_GPU, std::move(one)));
            break;
        }
        case HWLOC_OBJ_OSDEV_NETWORK:
        case HWLOC_OBJ_OSDEV_OPENFABRICS: {
            std::string name = o->name ? o->name : "";
            info_list one;
            PMIXCPP_RETURN_IF_ERROR(one.add_string(PMIX_FABRIC_DEVICE_NAME, name));
            PMIXCPP_RETURN_IF_ERROR(one.add_string(PMIX_FABRIC_DEVICE_TYPE,
                                                   o->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK ? "network" : "openfabrics"));
            const char *mac = hwloc_obj_get_info_by_name(o, "Address");
            if (mac == nullptr) mac = hwloc_obj_get_info_by_name(o, "NodeGUID");
            if (mac != nullptr) PMIXCPP_RETURN_IF_ERROR(one.add_string(PMIX_FABRIC_DEVICE_ADDRESS, mac));
            if (!pci_id(pci).empty()) {
                PMIXCPP_RETURN_IF_ERROR(one.add_string(PMIXCPP_INV_PCI, pci_id(pci)));
                PMIXCPP_RETURN_IF_ERROR(one.add_string(PMIX_FABRIC_DEVICE_PCI_DEVID, pci_vendor_device(pci)));
            }
            if (auto it = addrs.find(name); it != addrs.end()) {
                if (!it->second.ipv4.empty()) PMIXCPP_RETURN_IF_ERROR(one.add_string(PMIXCPP_INV_IPV4, it->second.ipv4));
                if (!it->second.ipv6.empty()) PMIXCPP_RETURN_IF_ERROR(one.add_string(PMIXCPP_INV_IPV6, it->second.ipv6));
            }
            PMIXCPP_RETURN_IF_ERROR(one.add_string(PMIXCPP_INV_SOURCE, "hwloc"));
            PMIXCPP_RETURN_IF_ERROR(nics.add_list(PMIX_FABRIC_DEVICE, std::move(one)));
            nic_seen[name] = true;
            break;
        }
        default:
            break;
        }
    }
    // Interfaces hwloc cannot see (virtual, not on PCI) only when hwloc found none at all.
    if (nic_seen.empty()) {
        for (const auto &[name, a] : addrs) {
            if (a.loopback || !a.up || (a.ipv4.empty() && a.ipv6.empty())) continue;
            info_list one;
            PMIXCPP_RETURN_IF_ERROR(one.add_string(PMIX_FABRIC_DEVICE_NAME, name));
            PMIXCPP_RETURN_IF_ERROR(one.add_string(PMIX_FABRIC_DEVICE_TYPE, "network"));
            if (!a.ipv4.empty()) PMIXCPP_RETURN_IF_ERROR(one.add_string(PMIXCPP_INV_IPV4, a.ipv4));
            if (!a.ipv6.empty()) PMIXCPP_RETURN_IF_ERROR(one.add_string(PMIXCPP_INV_IPV6, a.ipv6));
            PMIXCPP_RETURN_IF_ERROR(one.add_string(PMIXCPP_INV_SOURCE, "getifaddrs"));
            PMIXCPP_RETURN_IF_ERROR(nics.add_list(PMIX_FABRIC_DEVICE, std::move(one)));
        }
    }
    PMIXCPP_RETURN_IF_ERROR(inv.add_list(PMIXCPP_INV_GPUS, std::move(gpus)));
    PMIXCPP_RETURN_IF_ERROR(inv.add_list(PMIX_FABRIC_DEVICES, std::move(nics)));
    return std::move(inv).finish();
}

std::string inventory_host(const pmix_info_t *info, size_t ninfo) {
    const pmix_info_t *h = find_info(info, ninfo, PMIX_HOSTNAME);
    if (h == nullptr || h->value.type != PMIX_STRING || h->value.data.string == nullptr) return "";
    return h->value.data.string;
}

std::vector<inventory_nic> inventory_nics(const pmix_info_t *info, size_t ninfo) {
    std::vector<inventory_nic> out;
    const pmix_info_t *devs = find_info(info, ninfo, PMIX_FABRIC_DEVICES);
    if (devs == nullptr || devs->value.type != PMIX_DATA_ARRAY || devs->value.data.darray == nullptr ||
        devs->value.data.darray->type != PMIX_INFO)
        return out;
    auto *list = static_cast<const pmix_info_t *>(devs->value.data.darray->array);
    for (size_t i = 0; i < devs->value.data.darray->size; ++i) {
        const pmix_value_t &v = list[i].value;
        if (v.type != PMIX_DATA_ARRAY || v.data.darray == nullptr || v.data.darray->type != PMIX_INFO) continue;
        auto *items = static_cast<const pmix_info_t *>(v.data.darray->array);
        size_t n = v.data.darray->size;
        auto str = [&](const char *key) -> std::string {
            const pmix_info_t *x = find_info(items, n, key);
            return x && x->value.type == PMIX_STRING && x->value.data.string ? x->value.data.string : "";
        };
        inventory_nic nic{str(PMIX_FABRIC_DEVICE_NAME), str(PMIX_FABRIC_DEVICE_ADDRESS)};
        if (nic.address.empty()) {
            nic.address = str(PMIXCPP_INV_IPV4);
            if (size_t c = nic.address.find(','); c != std::string::npos) nic.address.resize(c);
        }
        if (!nic.name.empty()) out.push_back(nic);
    }
    return out;
}

}  // namespace pmixcpp::sched
