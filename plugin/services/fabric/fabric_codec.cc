#include "fabric_codec.h"

#include <algorithm>
#include <climits>
#include <cstdlib>

#include "log.h"
#include "wire/codec.h"

namespace pmixcpp::fabric {

Result<std::vector<uint8_t>> encode_agent_request(const fabric_request &r) {
    wire::Writer w;
    w.put_u32(kFabricMagic);
    PMIXCPP_RETURN_IF_ERROR(encode_client_request(w, r));
    return w.data();
}

bool is_fabric_body(std::span<const uint8_t> body) {
    wire::Reader rd(body);
    uint32_t magic = 0;
    return rd.get_u32(&magic).ok() && (magic == kFabricMagic || magic == kFabricWatchMagic);
}

std::vector<uint8_t> encode_watch(uint64_t known_generation) {
    wire::Writer w;
    w.put_u32(kFabricWatchMagic);
    w.put_u64(known_generation);
    return w.data();
}

bool is_watch_body(std::span<const uint8_t> body) {
    wire::Reader rd(body);
    uint32_t magic = 0;
    return rd.get_u32(&magic).ok() && magic == kFabricWatchMagic;
}

Status decode_watch(std::span<const uint8_t> body, uint64_t *known_generation) {
    wire::Reader rd(body);
    uint32_t magic = 0;
    PMIXCPP_RETURN_IF_ERROR(rd.get_u32(&magic));
    if (magic != kFabricWatchMagic) return Status(PMIX_ERR_UNPACK_FAILURE, "not a fabric watch");
    PMIXCPP_RETURN_IF_ERROR(rd.get_u64(known_generation));
    return rd.expect_end();
}

Status decode_agent_request(std::span<const uint8_t> body, fabric_request *r) {
    wire::Reader rd(body);
    uint32_t magic = 0;
    PMIXCPP_RETURN_IF_ERROR(rd.get_u32(&magic));
    if (magic != kFabricMagic) return Status(PMIX_ERR_UNPACK_FAILURE, "not a fabric request");
    return decode_client_request(body.subspan(4), r);
}

std::string encode_node_groups(const std::vector<uint32_t> &groups) {
    std::string out;
    for (size_t i = 0; i < groups.size();) {
        size_t j = i;
        while (j < groups.size() && groups[j] == groups[i]) ++j;
        if (!out.empty()) out += ',';
        out += std::to_string(groups[i]);
        if (j - i > 1) out += '*' + std::to_string(j - i);
        i = j;
    }
    return out;
}

Result<std::vector<uint32_t>> decode_node_groups(const std::string &text, size_t nnodes) {
    std::vector<uint32_t> out;
    auto bad = [&text](const std::string &why) {
        return Status(PMIX_ERR_BAD_PARAM, std::string(kNodeGroupsEnv) + "='" + text.substr(0, 64) + "': " + why);
    };
    size_t pos = 0;
    while (pos < text.size()) {
        size_t end = text.find(',', pos);
        if (end == std::string::npos) end = text.size();
        std::string item = text.substr(pos, end - pos);
        char *e = nullptr;
        unsigned long g = strtoul(item.c_str(), &e, 10);
        unsigned long count = 1;
        if (e == item.c_str() || g > UINT32_MAX) return bad("bad group");
        if (*e == '*') {
            const char *c = e + 1;
            count = strtoul(c, &e, 10);
            if (e == c || count == 0) return bad("bad count");
        }
        if (*e != '\0') return bad("bad item '" + item + "'");
        if (count > nnodes - std::min(nnodes, out.size())) return bad("more groups than nodes");
        out.insert(out.end(), count, static_cast<uint32_t>(g));
        pos = end + 1;
    }
    if (out.size() != nnodes)
        return bad(std::to_string(out.size()) + " groups for " + std::to_string(nnodes) + " nodes");
    return out;
}

}  // namespace pmixcpp::fabric
