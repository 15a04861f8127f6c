// The local node's inventory, sampled with hwloc (CPUs, cores, NUMA memory, caches, GPUs, NICs
// through hwloc's I/O discovery) and getifaddrs (NIC addresses), as PMIx info keys.
#pragma once

#include <pmix_common.h>

#include <string>
#include <vector>

#include "status.h"
#include "value.h"

namespace pmixcpp::sched {

// Keys without a standard PMIx name.
#define PMIXCPP_INV_PACKAGES   "pmixcpp.inv.packages"  /* uint32_t */
#define PMIXCPP_INV_CORES      "pmixcpp.inv.cores"     /* uint32_t */
#define PMIXCPP_INV_PUS        "pmixcpp.inv.pus"       /* uint32_t */
#define PMIXCPP_INV_NUMA       "pmixcpp.inv.numa"      /* pmix_data_array_t* of PMIXCPP_INV_NUMANODE */
#define PMIXCPP_INV_NUMANODE   "pmixcpp.inv.numanode"  /* pmix_data_array_t*: os index, memory, cpuset */
#define PMIXCPP_INV_OS_INDEX   "pmixcpp.inv.osidx"     /* uint32_t */
#define PMIXCPP_INV_MEMORY     "pmixcpp.inv.mem"       /* uint64_t bytes */
#define PMIXCPP_INV_CPUSET     "pmixcpp.inv.cpuset"    /* char*, hwloc list syntax "0-3" */
#define PMIXCPP_INV_CACHES     "pmixcpp.inv.caches"    /* pmix_data_array_t* of PMIXCPP_INV_CACHE */
#define PMIXCPP_INV_CACHE      "pmixcpp.inv.cache"     /* pmix_data_array_t*: level, type, size, count */
#define PMIXCPP_INV_LEVEL      "pmixcpp.inv.level"     /* uint32_t */
#define PMIXCPP_INV_TYPE       "pmixcpp.inv.type"      /* char* */
#define PMIXCPP_INV_SIZE       "pmixcpp.inv.size"      /* uint64_t bytes */
#define PMIXCPP_INV_COUNT      "pmixcpp.inv.count"     /* uint32_t */
#define PMIXCPP_INV_GPUS       "pmixcpp.inv.gpus"      /* pmix_data_array_t* of PMIXCPP_INV_GPU */
#define PMIXCPP_INV_GPU        "pmixcpp.inv.gpu"       /* pmix_data_array_t*: name, PCI id */
#define PMIXCPP_INV_PCI        "pmixcpp.inv.pci"       /* char* "0000:00:03.0" */
#define PMIXCPP_INV_IPV4       "pmixcpp.inv.ipv4"      /* char*, comma separated */
#define PMIXCPP_INV_IPV6       "pmixcpp.inv.ipv6"      /* char*, comma separated */
#define PMIXCPP_INV_SOURCE     "pmixcpp.inv.source"    /* char*: "hwloc" or "getifaddrs" */
#define PMIXCPP_INV_HWLOC      "pmixcpp.inv.hwloc"     /* char*: hwloc version */

// Sample this node. The node name is SLURMD_NODENAME when set (the name Slurm and its topology
// use), else the short host name.
//   PMIX_HOSTNAME, PMIX_AVAIL_PHYS_MEMORY, PMIXCPP_INV_{PACKAGES,CORES,PUS,NUMA,CACHES,GPUS,HWLOC},
//   PMIX_FABRIC_DEVICES: PMIX_FABRIC_DEVICE entries with PMIX_FABRIC_DEVICE_NAME, _ADDRESS (MAC),
//   _TYPE, _PCI_DEVID, _VENDOR, _MTU, PMIXCPP_INV_PCI, _IPV4, _IPV6, _SOURCE
Result<InfoArray> collect_local_inventory();

// The NICs of an inventory (PMIX_FABRIC_DEVICES): name and address (MAC, else first IPv4).
struct inventory_nic {
    std::string name;
    std::string address;
};
std::vector<inventory_nic> inventory_nics(const pmix_info_t *info, size_t ninfo);
// The PMIX_HOSTNAME of an inventory ("" if none).
std::string inventory_host(const pmix_info_t *info, size_t ninfo);

}  // namespace pmixcpp::sched
