#include "mpmd.h"

#include "wire/codec.h"

namespace pmixcpp::spawn {

namespace {

constexpr uint32_t kMpmdMagic = 0x414d5850;  // "PXMA"
constexpr size_t kMaxString = 64 * 1024;

Status put_strings(wire::Writer &w, const std::vector<std::string> &v) {
    w.put_u32(static_cast<uint32_t>(v.size()));
    for (const auto &s : v) PMIXCPP_RETURN_IF_ERROR(w.put_string(s));
    return Status::success();
}

Status get_strings(wire::Reader &r, std::vector<std::string> *v) {
    uint32_t n = 0;
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&n));
    PMIXCPP_RETURN_IF_ERROR(r.take_count(n, 4, sizeof(std::string), "app table strings"));
    v->resize(n);
    for (auto &s : *v) PMIXCPP_RETURN_IF_ERROR(r.get_string(&s, kMaxString));
    return Status::success();
}

int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

}  // namespace

Result<std::string> encode_mpmd(const std::vector<mpmd_app> &apps) {
    wire::Writer w;
    w.put_u32(kMpmdMagic);
    w.put_u32(static_cast<uint32_t>(apps.size()));
    for (const auto &a : apps) {
        w.put_u32(a.first_rank);
        w.put_u32(a.nprocs);
        PMIXCPP_RETURN_IF_ERROR(w.put_string(a.cmd));
        PMIXCPP_RETURN_IF_ERROR(put_strings(w, a.argv));
        PMIXCPP_RETURN_IF_ERROR(put_strings(w, a.env));
        PMIXCPP_RETURN_IF_ERROR(w.put_string(a.cwd));
    }
    if (w.size() * 2 > kMaxMpmdEnvBytes)
        return Status(PMIX_ERR_BAD_PARAM, "the apps' commands, arguments and environments take " +
                                              std::to_string(w.size()) + " bytes; at most " +
                                              std::to_string(kMaxMpmdEnvBytes / 2) + " fit in one spawn");
    static const char *digits = "0123456789abcdef";
    std::string out;
    out.reserve(w.size() * 2);
    for (uint8_t b : w.data()) {
        out += digits[b >> 4];
        out += digits[b & 15];
    }
    return out;
}

Status decode_mpmd(std::string_view hex, std::vector<mpmd_app> *apps) {
    if (hex.size() % 2 != 0) return Status(PMIX_ERR_UNPACK_FAILURE, "odd length of the app table");
    std::vector<uint8_t> bytes(hex.size() / 2);
    for (size_t i = 0; i < bytes.size(); ++i) {
        int hi = hex_digit(hex[2 * i]), lo = hex_digit(hex[2 * i + 1]);
        if (hi < 0 || lo < 0) return Status(PMIX_ERR_UNPACK_FAILURE, "not a hex app table");
        bytes[i] = static_cast<uint8_t>(hi << 4 | lo);
    }
    wire::Reader r(bytes.data(), bytes.size());
    uint32_t magic = 0, n = 0;
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&magic));
    if (magic != kMpmdMagic) return Status(PMIX_ERR_UNPACK_FAILURE, "not an app table");
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&n));
    if (n == 0) return Status(PMIX_ERR_UNPACK_FAILURE, "app table without apps");
    // an app takes at least 24 bytes (first rank, size, command, argv, env and cwd lengths)
    PMIXCPP_RETURN_IF_ERROR(r.take_count(n, 24, sizeof(mpmd_app), "app table"));
    std::vector<mpmd_app> out(n);
    uint32_t next = 0;
    for (auto &a : out) {
        PMIXCPP_RETURN_IF_ERROR(r.get_u32(&a.first_rank));
        PMIXCPP_RETURN_IF_ERROR(r.get_u32(&a.nprocs));
        if (a.first_rank != next || a.nprocs == 0 || a.nprocs > UINT32_MAX - next)
            return Status(PMIX_ERR_UNPACK_FAILURE, "apps do not number the ranks in order");
        next += a.nprocs;
        PMIXCPP_RETURN_IF_ERROR(r.get_string(&a.cmd, kMaxString));
        PMIXCPP_RETURN_IF_ERROR(get_strings(r, &a.argv));
        PMIXCPP_RETURN_IF_ERROR(get_strings(r, &a.env));
        PMIXCPP_RETURN_IF_ERROR(r.get_string(&a.cwd, kMaxString));
        if (a.cmd.empty()) return Status(PMIX_ERR_UNPACK_FAILURE, "app without a command");
    }
    PMIXCPP_RETURN_IF_ERROR(r.expect_end());
    *apps = std::move(out);
    return Status::success();
}

const mpmd_app *app_of_rank(const std::vector<mpmd_app> &apps, uint32_t rank) {
    for (const auto &a : apps)
        if (rank >= a.first_rank && rank - a.first_rank < a.nprocs) return &a;
    return nullptr;
}

std::vector<uint32_t> parse_app_sizes(std::string_view s) {
    std::vector<uint32_t> out;
    uint64_t cur = 0;
    bool digit = false;
    for (size_t i = 0; i <= s.size(); ++i) {
        if (i == s.size() || s[i] == ',') {
            if (!digit || cur == 0) return {};
            out.push_back(static_cast<uint32_t>(cur));
            cur = 0;
            digit = false;
        } else if (s[i] >= '0' && s[i] <= '9') {
            cur = cur * 10 + static_cast<uint64_t>(s[i] - '0');
            if (cur > UINT32_MAX) return {};
            digit = true;
        } else {
            return {};
        }
    }
    return out;
}

}  // namespace pmixcpp::spawn
