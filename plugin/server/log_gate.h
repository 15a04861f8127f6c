// What the job may write into slurmd's log through PMIx_Log (no I/O; the server asks it for every
// message and hands on what it returns). A job's text must not flood the log, nor forge lines of
// it:
//   - a message is cut to kMaxLogText bytes of output (escaped), with "... (N bytes cut)";
//   - control characters are escaped: newline, carriage return and tab as \n \r \t, any other
//     byte below 0x20, DEL and the C1 controls of UTF-8 (U+0080..U+009F) as \xHH, and the
//     backslash itself as \\, so a message is one line that cannot pass for another;
//   - at most kLogBurst messages and kLogBytes bytes per kLogWindow per step on a node; past that
//     messages are dropped and counted, and the first message after the window says how many
//     went (one line).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace pmixcpp::server {

inline constexpr size_t kMaxLogText = 4096;
inline constexpr size_t kLogBurst = 64;
inline constexpr size_t kLogBytes = 128 * 1024;
inline constexpr std::chrono::seconds kLogWindow{10};

// `text` as one safe line of at most kMaxLogText bytes (plus the "cut" note).
std::string escape_log_text(std::string_view text);

class log_gate {
public:
    using clock = std::chrono::steady_clock;
    struct verdict {
        bool pass = false;                   // hand `text` on to the log
        std::string text;                    // escaped and cut
        std::optional<std::string> summary;  // one line to log first: what the last window dropped
    };
    verdict admit(std::string_view text, clock::time_point now = clock::now());
    uint64_t dropped_total() const { return _dropped_total; }

private:
    clock::time_point _window_start{};
    bool _started = false;
    size_t _count = 0, _bytes = 0;
    uint64_t _dropped = 0, _dropped_bytes = 0, _dropped_total = 0;
};

}  // namespace pmixcpp::server
