#include "static_route.h"

#include <cctype>
#include <vector>

namespace pmixcpp::net {

namespace {

Status bad(const std::string &what) { return Status(PMIX_ERR_BAD_PARAM, what); }

// A decimal port 1..65535 at s[*at..], no sign, no spaces; advances *at.
bool take_port(std::string_view s, size_t *at, uint32_t *out) {
    size_t i = *at;
    uint32_t v = 0;
    while (i < s.size() && isdigit(static_cast<unsigned char>(s[i])) && i - *at < 5) v = v * 10 + uint32_t(s[i++] - '0');
    if (i == *at || v == 0 || v > 65535 || (i < s.size() && isdigit(static_cast<unsigned char>(s[i])))) return false;
    *at = i;
    *out = v;
    return true;
}

}  // namespace

Result<port_range> reserved_port_range(std::string_view mpi_params) {
    size_t p = 0;
    for (;;) {  // "ports=" at the start or after a comma
        p = mpi_params.find("ports=", p);
        if (p == std::string_view::npos) return bad("MpiParams has no ports=");
        if (p == 0 || mpi_params[p - 1] == ',') break;
        ++p;
    }
    size_t at = p + 6;
    uint32_t lo = 0, hi = 0;
    if (!take_port(mpi_params, &at, &lo) || at >= mpi_params.size() || mpi_params[at] != '-' ||
        !take_port(mpi_params, &++at, &hi) || (at < mpi_params.size() && mpi_params[at] != ',') || hi < lo)
        return bad("MpiParams ports= is not LO-HI: " + std::string(mpi_params.substr(p)));
    return port_range{static_cast<uint16_t>(lo), static_cast<uint16_t>(hi)};
}

Result<uint16_t> step_static_port(std::string_view resv_ports, port_range allowed) {
    if (resv_ports.empty()) return bad("no reserved ports");
    if (resv_ports.size() > 4096) return bad("reserved port list too long");
    // port[-port](,port[-port])*
    size_t at = 0;
    uint32_t first = 0;
    bool have_first = false;
    while (true) {
        uint32_t a = 0, b = 0;
        if (!take_port(resv_ports, &at, &a)) return bad("malformed reserved port list: " + std::string(resv_ports.substr(0, 64)));
        if (at < resv_ports.size() && resv_ports[at] == '-') {
            ++at;
            if (!take_port(resv_ports, &at, &b) || b < a)
                return bad("malformed reserved port list: " + std::string(resv_ports.substr(0, 64)));
        }
        if (!have_first) first = a, have_first = true;
        if (at == resv_ports.size()) break;
        if (resv_ports[at] != ',') return bad("malformed reserved port list: " + std::string(resv_ports.substr(0, 64)));
        ++at;
    }
    if (first < 1024) return bad("reserved port " + std::to_string(first) + " is privileged");
    if (first < allowed.lo || first > allowed.hi)
        return bad("reserved port " + std::to_string(first) + " is outside MpiParams ports=" + std::to_string(allowed.lo) +
                   "-" + std::to_string(allowed.hi));
    return static_cast<uint16_t>(first);
}

}  // namespace pmixcpp::net
