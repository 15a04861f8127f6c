#include "ucx_policy.h"

#include <algorithm>
#include <cctype>
#include <vector>

namespace pmixcpp::net {

namespace {

std::vector<std::string> split(const std::string &s) {
    std::vector<std::string> out;
    size_t start = 0;
    while (start <= s.size()) {
        size_t comma = s.find(',', start);
        if (comma == std::string::npos) comma = s.size();
        if (comma > start) out.push_back(s.substr(start, comma - start));
        start = comma + 1;
    }
    return out;
}

bool shared_memory_tl(std::string name) {
    if (!name.empty() && name[0] == '\\') name.erase(0, 1);  // UCX: '\' = the name itself, no alias
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    for (const char *tl : kUcxSharedMemoryTls)
        if (name == tl) return true;
    return false;
}

}  // namespace

Result<std::string> root_ucx_tls(const std::string &configured) {
    const std::string excluded = "sm,mm";  // UCX's aliases: posix, sysv, xpmem, cma, knem
    if (configured.empty() || configured == "all") return "^" + excluded;
    if (configured[0] == '^') {
        std::string out = "^";
        for (const auto &tl : split(configured.substr(1)))
            if (!shared_memory_tl(tl)) out += tl + ",";
        return out + excluded;
    }
    std::string out;
    for (const auto &tl : split(configured)) {
        if (tl == "all") return root_ucx_tls("all");
        if (shared_memory_tl(tl)) continue;
        out += (out.empty() ? "" : ",") + tl;
    }
    if (out.empty())
        return Status(PMIX_ERR_BAD_PARAM, "PMIxCppUcxTls=" + configured +
                                              " leaves root's UCX no transport: shared-memory transports are never "
                                              "used between slurmstepds");
    return out;
}

Status check_ucx_address(std::span<const uint8_t> peer, std::span<const uint8_t> own) {
    if (peer.size() < kMinUcxAddress || peer.size() > kMaxUcxAddress)
        return Status(PMIX_ERR_BAD_PARAM, "a UCX worker address of " + std::to_string(peer.size()) +
                                              " bytes (expected " + std::to_string(kMinUcxAddress) + " to " +
                                              std::to_string(kMaxUcxAddress) + ")");
    if (own.empty() || peer[0] != own[0])
        return Status(PMIX_ERR_BAD_PARAM, "a UCX worker address of another format (header byte " +
                                              std::to_string(peer[0]) + ", ours " +
                                              std::to_string(own.empty() ? -1 : own[0]) + ")");
    return Status::success();
}

}  // namespace pmixcpp::net
