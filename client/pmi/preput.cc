#include "preput.h"

#include <cstring>

namespace pmixcpp::pmi {
namespace {

constexpr size_t kMaxKey = 256;

std::string hex(const std::string &s) {
    static const char digits[] = "0123456789abcdef";
    std::string out;
    out.reserve(s.size() * 2);
    for (unsigned char c : s) {
        out += digits[c >> 4];
        out += digits[c & 15];
    }
    return out;
}

int nibble(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

bool unhex(const char *p, size_t n, std::string *out) {
    if (n % 2) return false;
    out->clear();
    for (size_t i = 0; i < n; i += 2) {
        int hi = nibble(p[i]), lo = nibble(p[i + 1]);
        if (hi < 0 || lo < 0) return false;
        out->push_back(static_cast<char>(hi << 4 | lo));
    }
    return true;
}

}  // namespace

std::string encode_preput(const std::vector<std::pair<std::string, std::string>> &kv) {
    std::string s;
    for (const auto &[k, v] : kv) s += hex(k) + ":" + hex(v) + ";";
    return s;
}

bool decode_preput(const char *text, std::map<std::string, std::string> *out) {
    if (text == nullptr) return false;
    std::map<std::string, std::string> got;
    const char *p = text;
    while (*p) {
        const char *colon = strchr(p, ':');
        const char *semi = colon ? strchr(colon, ';') : nullptr;
        if (!colon || !semi) return false;
        std::string k, v;
        if (!unhex(p, static_cast<size_t>(colon - p), &k) ||
            !unhex(colon + 1, static_cast<size_t>(semi - colon - 1), &v))
            return false;
        if (k.empty() || k.size() > kMaxKey || k.find('\n') != std::string::npos || k.find('\0') != std::string::npos)
            return false;
        got[k] = v;
        p = semi + 1;
    }
    out->insert(got.begin(), got.end());
    return true;
}

}  // namespace pmixcpp::pmi
