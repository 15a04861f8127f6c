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

namespace pmixcpp::spawn {

namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
    return s;
}

bool parse_u32(std::string_view s, uint32_t *out) {
    if (s.empty() || s.size() > 9) return false;
    uint32_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return false;
        v = v * 10 + static_cast<uint32_t>(c - '0');
    }
    *out = v;
    return true;
}

}  // namespace

Result<multi_prog_apps> parse_multi_prog(std::string_view text, uint32_t ntasks) {
    // Logical lines: comments dropped, continuations joined.
    std::vector<std::string> lines;
    std::string cur;
    size_t pos = 0;
    while (pos <= text.size()) {
        size_t nl = text.find('\n', pos);
        if (nl == std::string_view::npos) nl = text.size();
        std::string_view line = text.substr(pos, nl - pos);
        pos = nl + 1;
        if (auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
        line = trim(line);
        bool more = !line.empty() && line.back() == '\\';
        if (more) line.remove_suffix(1);
        cur += std::string(line);
        if (more) {
            cur += ' ';
            continue;
        }
        if (!trim(cur).empty()) lines.push_back(cur);
        cur.clear();
    }
    if (!trim(cur).empty()) lines.push_back(cur);

    constexpr uint32_t kNone = UINT32_MAX;
    multi_prog_apps out;
    out.app_of_rank.assign(ntasks, kNone);
    uint32_t line_no = 0;
    for (const std::string &l : lines) {
        ++line_no;
        std::string_view line = trim(l);
        size_t sp = line.find_first_of(" \t");
        std::string_view ranks = line.substr(0, sp);
        std::string_view args = sp == std::string_view::npos ? std::string_view() : trim(line.substr(sp));
        if (args.empty())
            return Status(PMIX_ERR_BAD_PARAM, "multi-prog line " + std::to_string(line_no) + " names no program");
        std::vector<uint32_t> mine;
        if (ranks == "*") {
            for (uint32_t r = 0; r < ntasks; ++r)
                if (out.app_of_rank[r] == kNone) mine.push_back(r);
        } else {
            size_t p = 0;
            while (p <= ranks.size()) {
                size_t comma = ranks.find(',', p);
                if (comma == std::string_view::npos) comma = ranks.size();
                std::string_view item = ranks.substr(p, comma - p);
                p = comma + 1;
                uint32_t lo = 0, hi = 0;
                size_t dash = item.find('-');
                bool ok = dash == std::string_view::npos
                              ? parse_u32(item, &lo) && (hi = lo, true)
                              : parse_u32(item.substr(0, dash), &lo) && parse_u32(item.substr(dash + 1), &hi);
                if (!ok || lo > hi || hi >= ntasks)
                    return Status(PMIX_ERR_BAD_PARAM, "multi-prog line " + std::to_string(line_no) + ": bad rank list " +
                                                          std::string(ranks) + " for " + std::to_string(ntasks) +
                                                          " tasks");
                for (uint32_t r = lo; r <= hi; ++r)
                    if (out.app_of_rank[r] == kNone) mine.push_back(r);
            }
        }
        if (mine.empty()) continue;  // every rank of the line was named before: Slurm runs the first line
        const uint32_t app = static_cast<uint32_t>(out.argv.size());
        for (uint32_t r : mine) out.app_of_rank[r] = app;
        out.argv.emplace_back(args);
    }
    for (uint32_t r = 0; r < ntasks; ++r)
        if (out.app_of_rank[r] == kNone)
            return Status(PMIX_ERR_BAD_PARAM, "multi-prog names no program for rank " + std::to_string(r));
    return out;
}

}  // namespace pmixcpp::spawn
