#include "process_mapping.h"

#include <cstdlib>

namespace pmixcpp {
namespace {

struct triple {
    uint32_t start = 0, count = 0, depth = 0;
};

// Place ranks as MPICH's reader does: `triples` in turn, again from the first triple starting at
// node 0 once one was seen. `want`, if given, is compared as we go (false at the first mismatch).
bool place(const std::vector<triple> &triples, size_t nranks, std::vector<uint32_t> *out,
           const std::vector<uint32_t> *want) {
    if (triples.empty()) return nranks == 0;
    bool wrapped = false;
    size_t rank = 0;
    while (rank < nranks) {
        size_t first = 0;
        if (wrapped) {
            while (first < triples.size() && triples[first].start != 0) ++first;
        }
        size_t placed_before = rank;
        for (size_t b = first; b < triples.size() && rank < nranks; ++b) {
            if (triples[b].start == 0) wrapped = true;
            for (uint32_t n = 0; n < triples[b].count && rank < nranks; ++n)
                for (uint32_t k = 0; k < triples[b].depth && rank < nranks; ++k, ++rank) {
                    uint32_t node = triples[b].start + n;
                    if (want && (*want)[rank] != node) return false;
                    if (out) out->push_back(node);
                }
        }
        if (rank == placed_before) return false;  // nothing placed in a whole pass: never ends
    }
    return true;
}

std::string format(const std::vector<triple> &triples, size_t n) {
    std::string s = "(vector";
    for (size_t i = 0; i < n; ++i)
        s += ",(" + std::to_string(triples[i].start) + "," + std::to_string(triples[i].count) + "," +
             std::to_string(triples[i].depth) + ")";
    return s + ")";
}

}  // namespace

std::string process_mapping(const std::vector<uint32_t> &node_of_rank) {
    // Runs of consecutive ranks on one node, then runs of equal depth on consecutive nodes.
    std::vector<triple> triples;
    size_t r = 0;
    while (r < node_of_rank.size()) {
        uint32_t node = node_of_rank[r];
        uint32_t depth = 0;
        while (r < node_of_rank.size() && node_of_rank[r] == node) ++depth, ++r;
        if (!triples.empty()) {
            triple &t = triples.back();
            if (t.depth == depth && t.start + t.count == node) {
                ++t.count;
                continue;
            }
        }
        triples.push_back({node, 1, depth});
    }
    // The shortest prefix that, repeated, gives the whole layout (the whole list always does: it
    // places every rank in one pass).
    for (size_t n = 1; n < triples.size(); ++n) {
        std::vector<triple> prefix(triples.begin(), triples.begin() + static_cast<std::ptrdiff_t>(n));
        if (place(prefix, node_of_rank.size(), nullptr, &node_of_rank)) return format(triples, n);
    }
    return format(triples, triples.size());
}

std::optional<std::vector<uint32_t>> expand_process_mapping(const std::string &mapping, size_t nranks) {
    const std::string head = "(vector";
    if (mapping.compare(0, head.size(), head) != 0) return std::nullopt;
    std::vector<triple> triples;
    size_t pos = head.size();
    while (pos < mapping.size()) {
        if (mapping[pos] == ')' && pos + 1 == mapping.size()) break;
        if (mapping.compare(pos, 2, ",(") != 0) return std::nullopt;
        pos += 2;
        uint32_t v[3];
        for (int i = 0; i < 3; ++i) {
            const char *begin = mapping.c_str() + pos;
            char *end = nullptr;
            if (*begin < '0' || *begin > '9') return std::nullopt;
            unsigned long x = strtoul(begin, &end, 10);
            if (x > UINT32_MAX) return std::nullopt;
            v[i] = static_cast<uint32_t>(x);
            pos += static_cast<size_t>(end - begin);
            if (pos >= mapping.size() || mapping[pos] != (i < 2 ? ',' : ')')) return std::nullopt;
            ++pos;
        }
        triples.push_back({v[0], v[1], v[2]});
    }
    if (pos >= mapping.size() || mapping[pos] != ')') return std::nullopt;
    std::vector<uint32_t> out;
    if (nranks > 0 && !place(triples, nranks, &out, nullptr)) return std::nullopt;
    return out;
}

}  // namespace pmixcpp
