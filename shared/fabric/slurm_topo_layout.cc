#include "slurm_topo_layout.h"

#include <cstdio>

namespace pmixcpp::sched {

std::string slurm_version_string(uint32_t version) {
    char buf[32];
    snprintf(buf, sizeof buf, "%u.%02u.%u", (version >> 16) & 0xFF, (version >> 8) & 0xFF, version & 0xFF);
    return buf;
}

uint32_t slurm_release_of_api(long api_version) {
    if (api_version < 0) return 0;  // (current << 16) | (revision << 8) | age
    switch (api_version >> 16) {
    case 38: return slurm_version_num(22, 5);
    case 39: return slurm_version_num(23, 2);
    case 40: return slurm_version_num(23, 11);
    case 41: return slurm_version_num(24, 5);
    case 42: return slurm_version_num(24, 11);
    default: return 0;
    }
}

const char *to_string(topo_layout l) {
    switch (l) {
    case topo_layout::v22_05: return "22.05";
    case topo_layout::v23_11: return "23.11";
    case topo_layout::unknown: break;
    }
    return "unknown";
}

namespace {

std::string str(const char *s) { return s == nullptr ? std::string() : std::string(s); }

Result<std::vector<switch_record>> records_of(uint32_t count, const slurm_abi::topo_record *array) {
    if (count > kMaxSwitchRecords)
        return Status(PMIX_ERR_BAD_PARAM, "Slurm reports " + std::to_string(count) + " switch records (misread layout?)");
    if (count > 0 && array == nullptr)
        return Status(PMIX_ERR_BAD_PARAM, "Slurm reports " + std::to_string(count) + " switch records and no array");
    std::vector<switch_record> out;
    out.reserve(count);
    for (uint32_t i = 0; i < count; ++i) {
        const slurm_abi::topo_record &t = array[i];
        out.push_back({str(t.name), t.level, t.link_speed, str(t.nodes), str(t.switches)});
    }
    return out;
}

}  // namespace

Result<std::vector<switch_record>> decode_topo_response(const void *response, uint32_t slurm_version) {
    topo_layout layout = topo_layout_of(slurm_version);
    if (layout == topo_layout::unknown)
        return Status(PMIX_ERR_NOT_SUPPORTED, "the switch topology records of Slurm " +
                                                  slurm_version_string(slurm_version) +
                                                  " are not known to pmixcpp (Slurm 22.05 to 24.11)");
    if (response == nullptr) return std::vector<switch_record>{};
    if (layout == topo_layout::v22_05) {
        const auto *msg = static_cast<const slurm_abi::topo_response_22_05 *>(response);
        return records_of(msg->record_count, msg->topo_array);
    }
    const auto *msg = static_cast<const slurm_abi::topo_response_23_11 *>(response);
    if (msg->topo_info == nullptr)  // a slurmctld of an older protocol fills the plain records
        return records_of(msg->record_count, msg->topo_array);
    if (msg->topo_info->plugin_id != slurm_abi::kTopologyTree || msg->topo_info->data == nullptr)
        return std::vector<switch_record>{};
    const auto *tree = static_cast<const slurm_abi::tree_data_23_11 *>(msg->topo_info->data);
    return records_of(tree->record_count, tree->topo_array);
}

}  // namespace pmixcpp::sched
