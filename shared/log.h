// Logging facade shared by the plugin and the client.
//
//   PMIXCPP_LOG_ERROR("connect to %s failed: %m", path);
//
// The macros test the level before evaluating arguments or formatting, and record file:line and
// function. Records go to one process-wide sink: by default stderr with a "pmixcpp[host:pid]"
// prefix; the plugin installs a sink that forwards to Slurm's log. Thread safe: the level is an
// atomic, the sink is swapped under a lock and called outside it (a sink may run concurrently on
// several threads and must be thread safe itself). %m refers to errno at the macro call.
#pragma once

#include <atomic>
#include <functional>
#include <string_view>

namespace pmixcpp {

enum class log_level : int { error = 0, warning = 1, info = 2, verbose = 3, debug = 4, trace = 5 };

const char *to_string(log_level level);
// Accepts the names above (case-insensitive, plus "warn") or a number; false if unrecognised.
bool parse_log_level(std::string_view text, log_level *level);

struct log_record {
    log_level level;
    const char *file;  // basename of the source file
    int line;
    const char *function;
    const char *message;  // formatted, no trailing newline
};

using log_sink = std::function<void(const log_record &)>;

// Replace the sink; an empty function restores the default stderr sink.
void set_log_sink(log_sink sink);
void set_log_level(log_level level);
log_level get_log_level();

namespace detail {
extern std::atomic<int> g_log_level;
}

// Cheap check done by the macros before any argument is evaluated.
inline bool log_enabled(log_level level) {
    return static_cast<int>(level) <= detail::g_log_level.load(std::memory_order_relaxed);
}

// Set the level from an environment switch; returns the level chosen.
//   unset or empty        -> error (silent except errors)
//   "0"                   -> error;  "1" -> debug;  "2" or more -> trace
//   a level name          -> that level ("warning", "info", "verbose", "debug", "trace")
//   anything else ("yes") -> debug
log_level log_init_from_env(const char *variable = "PMIXCPP_DEBUG");

// Format and deliver one record (used by the macros; call only if log_enabled(level)).
void log_write(log_level level, const char *file, int line, const char *function, const char *format, ...)
    __attribute__((format(printf, 5, 6)));

// The default sink, exposed so a custom sink can chain to it.
void log_stderr_sink(const log_record &record);

}  // namespace pmixcpp

#define PMIXCPP_LOG(level, format, ...)                                                                   \
    do {                                                                                                  \
        if (::pmixcpp::log_enabled(level))                                                                \
            ::pmixcpp::log_write(level, __FILE__, __LINE__, __func__, format __VA_OPT__(, ) __VA_ARGS__); \
    } while (0)

#define PMIXCPP_LOG_ERROR(format, ...) \
    PMIXCPP_LOG(::pmixcpp::log_level::error, format __VA_OPT__(, ) __VA_ARGS__)
#define PMIXCPP_LOG_WARNING(format, ...) \
    PMIXCPP_LOG(::pmixcpp::log_level::warning, format __VA_OPT__(, ) __VA_ARGS__)
#define PMIXCPP_LOG_INFO(format, ...) \
    PMIXCPP_LOG(::pmixcpp::log_level::info, format __VA_OPT__(, ) __VA_ARGS__)
#define PMIXCPP_LOG_VERBOSE(format, ...) \
    PMIXCPP_LOG(::pmixcpp::log_level::verbose, format __VA_OPT__(, ) __VA_ARGS__)
#define PMIXCPP_LOG_DEBUG(format, ...) \
    PMIXCPP_LOG(::pmixcpp::log_level::debug, format __VA_OPT__(, ) __VA_ARGS__)
#define PMIXCPP_LOG_TRACE(format, ...) \
    PMIXCPP_LOG(::pmixcpp::log_level::trace, format __VA_OPT__(, ) __VA_ARGS__)
