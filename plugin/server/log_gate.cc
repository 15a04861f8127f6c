#include "log_gate.h"

#include <algorithm>

namespace pmixcpp::server {

std::string escape_log_text(std::string_view text) {
    static const char hex[] = "0123456789abcdef";
    std::string out;
    out.reserve(std::min(text.size(), kMaxLogText) + 16);
    size_t i = 0;
    for (; i < text.size(); ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        char buf[4];
        size_t n = 0;
        size_t used = 1;
        if (c == '\n') n = (buf[0] = '\\', buf[1] = 'n', 2);
        else if (c == '\r') n = (buf[0] = '\\', buf[1] = 'r', 2);
        else if (c == '\t') n = (buf[0] = '\\', buf[1] = 't', 2);
        else if (c == '\\') n = (buf[0] = '\\', buf[1] = '\\', 2);
        else if (c < 0x20 || c == 0x7f) n = (buf[0] = '\\', buf[1] = 'x', buf[2] = hex[c >> 4], buf[3] = hex[c & 15], 4);
        else if (c == 0xc2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
                 static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
            const auto c1 = static_cast<unsigned char>(text[i + 1]);  // a C1 control (CSI is one)
            n = (buf[0] = '\\', buf[1] = 'x', buf[2] = hex[c1 >> 4], buf[3] = hex[c1 & 15], 4);
            used = 2;
        } else
            n = (buf[0] = static_cast<char>(c), 1);
        if (out.size() + n > kMaxLogText) break;
        out.append(buf, n);
        i += used - 1;
    }
    if (i < text.size()) out += "... (" + std::to_string(text.size() - i) + " bytes cut)";
    return out;
}

log_gate::verdict log_gate::admit(std::string_view text, clock::time_point now) {
    verdict v;
    if (!_started || now - _window_start >= kLogWindow) {
        if (_dropped > 0)
            v.summary = std::to_string(_dropped) + " log message(s) of " + std::to_string(_dropped_bytes) +
                        " bytes dropped in " +
                        std::to_string(std::chrono::duration_cast<std::chrono::seconds>(now - _window_start).count()) +
                        " s (at most " + std::to_string(kLogBurst) + " messages and " + std::to_string(kLogBytes) +
                        " bytes per " + std::to_string(kLogWindow.count()) + " s)";
        _started = true;
        _window_start = now;
        _count = _bytes = 0;
        _dropped = _dropped_bytes = 0;
    }
    const size_t cost = std::min(text.size(), kMaxLogText);
    if (_count >= kLogBurst || _bytes + cost > kLogBytes) {
        ++_dropped;
        ++_dropped_total;
        _dropped_bytes += text.size();
        return v;
    }
    ++_count;
    _bytes += cost;
    v.pass = true;
    v.text = escape_log_text(text);
    return v;
}

}  // namespace pmixcpp::server
