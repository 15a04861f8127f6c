// Slurm-style host list expansion and compression; grammar in hostlist.h.
#include "hostlist.h"

#include <cstdint>
#include <cstdio>

namespace pmixcpp::hostlist {

namespace {

constexpr size_t kMaxDigits = 18;  // fits in uint64_t with room for +1

struct Range {
    uint64_t lo;
    uint64_t hi;
    size_t width;  // zero-pad to this many digits
};

std::string format_number(uint64_t value, size_t width) {
    std::string digits = std::to_string(value);
    if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
    return digits;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

Status malformed(std::string_view list, const std::string &why) {
    return Status(PMIX_ERR_BAD_PARAM, "hostlist \"" + std::string(list.substr(0, 200)) + "\": " + why);
}

Status parse_number(std::string_view list, std::string_view text, uint64_t *value) {
    if (text.empty()) return malformed(list, "empty number in range");
    if (text.size() > kMaxDigits) return malformed(list, "number \"" + std::string(text) + "\" is too long");
    uint64_t v = 0;
    for (char c : text) {
        if (!is_digit(c)) return malformed(list, "\"" + std::string(text) + "\" is not a number");
        v = v * 10 + static_cast<uint64_t>(c - '0');
    }
    *value = v;
    return Status::success();
}

// Parse "1-4,7" into ranges, counting hosts into *total.
Status parse_ranges(std::string_view list, std::string_view body, std::vector<Range> *ranges, uint64_t *total,
                    uint64_t per_range_multiplier) {
    if (body.empty()) return malformed(list, "empty brackets");
    size_t pos = 0;
    while (true) {
        size_t comma = body.find(',', pos);
        std::string_view part =
            body.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
        if (part.empty()) return malformed(list, "empty range");
        size_t dash = part.find('-');
        Range r{};
        if (dash == std::string_view::npos) {
            PMIXCPP_RETURN_IF_ERROR(parse_number(list, part, &r.lo));
            r.hi = r.lo;
        } else {
            PMIXCPP_RETURN_IF_ERROR(parse_number(list, part.substr(0, dash), &r.lo));
            PMIXCPP_RETURN_IF_ERROR(parse_number(list, part.substr(dash + 1), &r.hi));
            if (r.hi < r.lo) return malformed(list, "reversed range \"" + std::string(part) + "\"");
        }
        r.width = dash == std::string_view::npos ? part.size() : dash;
        *total += (r.hi - r.lo + 1) * per_range_multiplier;
        if (*total > kMaxExpandedHosts)
            return malformed(list, "expands to more than " + std::to_string(kMaxExpandedHosts) + " hosts");
        ranges->push_back(r);
        if (comma == std::string_view::npos) break;
        pos = comma + 1;
    }
    return Status::success();
}

struct Item {
    std::string_view prefix;
    std::string_view suffix;
    std::vector<Range> ranges;  // empty: a plain name
};

}  // namespace

Result<std::vector<std::string>> expand(std::string_view list) {
    std::vector<Item> items;
    uint64_t total = 0;
    size_t pos = 0;
    if (list.empty()) return std::vector<std::string>();
    while (true) {
        Item item;
        size_t start = pos;
        while (pos < list.size() && list[pos] != '[' && list[pos] != ',' && list[pos] != ']') {
            char c = list[pos];
            if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
                return malformed(list, "whitespace in host list");
            ++pos;
        }
        item.prefix = list.substr(start, pos - start);
        if (pos < list.size() && list[pos] == ']') return malformed(list, "unbalanced ']'");
        if (pos < list.size() && list[pos] == '[') {
            size_t close = pos + 1;
            while (close < list.size() && list[close] != ']') {
                if (list[close] == '[') return malformed(list, "nested '['");
                ++close;
            }
            if (close >= list.size()) return malformed(list, "unbalanced '['");
            PMIXCPP_RETURN_IF_ERROR(
                parse_ranges(list, list.substr(pos + 1, close - pos - 1), &item.ranges, &total, 1));
            pos = close + 1;
            size_t suffix_start = pos;
            while (pos < list.size() && list[pos] != ',') {
                char c = list[pos];
                if (c == '[') return malformed(list, "more than one bracket group in a name");
                if (c == ']') return malformed(list, "unbalanced ']'");
                if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
                    return malformed(list, "whitespace in host list");
                ++pos;
            }
            item.suffix = list.substr(suffix_start, pos - suffix_start);
        } else {
            if (item.prefix.empty()) return malformed(list, "empty host name");
            if (++total > kMaxExpandedHosts)
                return malformed(list,
                                 "expands to more than " + std::to_string(kMaxExpandedHosts) + " hosts");
        }
        items.push_back(std::move(item));
        if (pos >= list.size()) break;
        ++pos;  // the ','
        if (pos >= list.size()) return malformed(list, "trailing ','");
    }

    std::vector<std::string> hosts;
    hosts.reserve(total);
    for (const Item &item : items) {
        if (item.ranges.empty()) {
            hosts.emplace_back(item.prefix);
            continue;
        }
        for (const Range &r : item.ranges) {
            for (uint64_t v = r.lo;; ++v) {
                std::string name(item.prefix);
                name += format_number(v, r.width);
                name += item.suffix;
                hosts.push_back(std::move(name));
                if (v == r.hi) break;
            }
        }
    }
    return hosts;
}

std::string compress(const std::vector<std::string> &hosts) {
    struct Group {
        std::string prefix;
        std::vector<Range> ranges;  // empty: a literal name in prefix
    };
    std::vector<Group> groups;
    for (const std::string &host : hosts) {
        bool literal = host.find_first_of("[],") != std::string::npos;
        size_t digits_at = host.size();
        while (digits_at > 0 && is_digit(host[digits_at - 1])) --digits_at;
        size_t ndigits = host.size() - digits_at;
        if (literal || ndigits == 0 || ndigits > kMaxDigits) {
            groups.push_back({host, {}});
            continue;
        }
        std::string prefix = host.substr(0, digits_at);
        std::string digits = host.substr(digits_at);
        uint64_t value = std::stoull(digits);
        if (!groups.empty() && !groups.back().ranges.empty() && groups.back().prefix == prefix) {
            Range &last = groups.back().ranges.back();
            if (value == last.hi + 1 && format_number(value, last.width) == digits) {
                last.hi = value;
            } else {
                groups.back().ranges.push_back({value, value, ndigits});
            }
            continue;
        }
        groups.push_back({prefix, {{value, value, ndigits}}});
    }

    std::string out;
    for (const Group &g : groups) {
        if (!out.empty()) out += ',';
        out += g.prefix;
        if (g.ranges.empty()) continue;
        bool single = g.ranges.size() == 1 && g.ranges[0].lo == g.ranges[0].hi;
        if (!single) out += '[';
        for (size_t i = 0; i < g.ranges.size(); ++i) {
            const Range &r = g.ranges[i];
            if (i > 0) out += ',';
            out += format_number(r.lo, r.width);
            if (r.hi != r.lo) {
                out += '-';
                out += format_number(r.hi, r.width);
            }
        }
        if (!single) out += ']';
    }
    return out;
}

}  // namespace pmixcpp::hostlist
