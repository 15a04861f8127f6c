// What slurm_load_topo() hands back, release by release, read without Slurm's headers: the
// scheduler side (client/sched/slurm_adapter.cc) dlopens whichever libslurm is installed and learns its release
// from slurm_api_version() (slurm_release_of_api); srun's side (plugin/slurm) passes the SLURM_VERSION_NUMBER it was
// built against and checks these mirrors against Slurm's own types at compile time. No I/O.
//
//   22.05 - 23.02  topo_info_response_msg_t = { record_count, topo_array }
//   23.11 - 24.11  the topology became a plugin: the same two members (filled only when slurmctld
//                  speaks an older protocol), then `dynamic_plugin_data_t *topo_info` = { data,
//                  plugin_id }; with topology/tree (plugin_id 102) `data` points to the tree
//                  plugin's own { record_count, topo_array } of the same topo_info_t records.
//                  Other plugins (default, block, 3d_torus) report no switches.
//   other          not known: PMIX_ERR_NOT_SUPPORTED, nothing is read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fabric_cost.h"
#include "status.h"

namespace pmixcpp::sched {

// A release as Slurm numbers it (SLURM_VERSION_NUMBER, slurm_api_version()).
inline constexpr uint32_t slurm_version_num(uint32_t major, uint32_t minor, uint32_t micro = 0) {
    return (major << 16) | (minor << 8) | micro;
}
std::string slurm_version_string(uint32_t version);  // "24.11.5"

// libslurm's slurm_api_version() is not the release but its library interface, current << 16
// (plus revision and age below), with current = the soname's number (libslurm.so.38 = 22.05 ... .so.42 = 24.11). The release
// (micro 0) of a known interface, 0 for one not known.
uint32_t slurm_release_of_api(long api_version);

// The mirrored types (slurm.h; the tree plugin's src/plugins/topology/tree/topology_tree.c).
namespace slurm_abi {
struct topo_record {  // topo_info_t, the same in every known release
    uint16_t level;
    uint32_t link_speed;
    char *name;
    char *nodes;
    char *switches;
};
struct topo_response_22_05 {  // topo_info_response_msg_t, 22.05 - 23.02
    uint32_t record_count;
    topo_record *topo_array;
};
struct dynamic_plugin_data {  // dynamic_plugin_data_t
    void *data;
    uint32_t plugin_id;
};
struct topo_response_23_11 {  // topo_info_response_msg_t, 23.11 - 24.11
    uint32_t record_count;
    topo_record *topo_array;
    dynamic_plugin_data *topo_info;
};
struct tree_data_23_11 {  // topology/tree's topoinfo_tree_t, 23.11 - 24.11
    uint32_t record_count;
    topo_record *topo_array;
};
// enum topology_plugin_type (23.11 on)
inline constexpr uint32_t kTopologyDefault = 100;
inline constexpr uint32_t kTopology3dTorus = 101;
inline constexpr uint32_t kTopologyTree = 102;
inline constexpr uint32_t kTopologyBlock = 103;
}  // namespace slurm_abi

enum class topo_layout { v22_05, v23_11, unknown };
constexpr topo_layout topo_layout_of(uint32_t slurm_version) {
    uint32_t release = slurm_version & ~0xFFu;  // micro releases keep the layout
    if (release >= slurm_version_num(22, 5) && release <= slurm_version_num(23, 2)) return topo_layout::v22_05;
    if (release >= slurm_version_num(23, 11) && release <= slurm_version_num(24, 11)) return topo_layout::v23_11;
    return topo_layout::unknown;
}
const char *to_string(topo_layout l);

// More switches than any site has: a count above it means the layout was misread.
inline constexpr uint32_t kMaxSwitchRecords = 1u << 20;

// The switch records of a slurm_load_topo() response of the given release (nullptr: none).
// PMIX_ERR_NOT_SUPPORTED for a release whose layout is not known, BAD_PARAM for an implausible
// record count. An empty list: Slurm has no switch tree (topology/default, block, 3d_torus).
Result<std::vector<switch_record>> decode_topo_response(const void *response, uint32_t slurm_version);

}  // namespace pmixcpp::sched
