// Logging facade: level, sink, formatting; see log.h.
#include "log.h"

#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>

namespace pmixcpp {

namespace detail {
std::atomic<int> g_log_level{static_cast<int>(log_level::error)};
}

namespace {

std::mutex g_sink_mutex;
std::shared_ptr<const log_sink> g_sink;  // null: default stderr sink

const char *basename_of(const char *path) {
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
        char x = a[i], y = b[i];
        if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
        if (x != y) return false;
    }
    return true;
}

}  // namespace

const char *to_string(log_level level) {
    switch (level) {
        case log_level::error:
            return "error";
        case log_level::warning:
            return "warning";
        case log_level::info:
            return "info";
        case log_level::verbose:
            return "verbose";
        case log_level::debug:
            return "debug";
        case log_level::trace:
            return "trace";
    }
    return "unknown";
}

bool parse_log_level(std::string_view text, log_level *level) {
    static constexpr log_level all[] = {log_level::error,   log_level::warning, log_level::info,
                                        log_level::verbose, log_level::debug,   log_level::trace};
    for (log_level l : all) {
        if (iequals(text, to_string(l))) {
            *level = l;
            return true;
        }
    }
    if (iequals(text, "warn")) {
        *level = log_level::warning;
        return true;
    }
    if (!text.empty() && text.size() < 10 && text.find_first_not_of("0123456789") == std::string_view::npos) {
        int n = std::stoi(std::string(text));
        *level = static_cast<log_level>(n > 5 ? 5 : n);
        return true;
    }
    return false;
}

void set_log_sink(log_sink sink) {
    std::shared_ptr<const log_sink> next;
    if (sink) next = std::make_shared<const log_sink>(std::move(sink));
    std::lock_guard<std::mutex> lock(g_sink_mutex);
    g_sink.swap(next);
    // `next` (the old sink) is destroyed outside the lock, after any in-flight call finished with
    // its own reference.
}

void set_log_level(log_level level) {
    detail::g_log_level.store(static_cast<int>(level), std::memory_order_relaxed);
}

log_level get_log_level() {
    return static_cast<log_level>(detail::g_log_level.load(std::memory_order_relaxed));
}

log_level log_init_from_env(const char *variable) {
    log_level level = log_level::error;
    const char *value = variable ? getenv(variable) : nullptr;
    if (value != nullptr && *value != '\0') {
        std::string_view v(value);
        if (v.find_first_not_of("0123456789") == std::string_view::npos) {
            // numeric switch: 0 off, 1 debug, 2+ trace
            size_t first = v.find_first_not_of('0');
            std::string_view digits =
                first == std::string_view::npos ? std::string_view("0") : v.substr(first);
            level = digits == "0" ? log_level::error : digits == "1" ? log_level::debug : log_level::trace;
        } else if (!parse_log_level(v, &level)) {
            level = log_level::debug;
        }
    }
    set_log_level(level);
    return level;
}

void log_stderr_sink(const log_record &record) {
    static const std::string prefix = [] {
        char host[256] = "?";
        if (gethostname(host, sizeof(host) - 1) != 0) strcpy(host, "?");
        host[sizeof(host) - 1] = '\0';
        return std::string("pmixcpp[") + host + ":" + std::to_string(getpid()) + "]";
    }();
    // One fprintf per record so lines from several threads do not interleave.
    fprintf(stderr, "%s %s: %s:%d %s: %s\n", prefix.c_str(), to_string(record.level), record.file,
            record.line, record.function, record.message);
}

void log_write(log_level level, const char *file, int line, const char *function, const char *format, ...) {
    int saved_errno = errno;
    char stack_buf[512];
    std::unique_ptr<char[]> heap_buf;
    const char *message = stack_buf;

    va_list ap;
    va_start(ap, format);
    errno = saved_errno;  // for %m
    int n = vsnprintf(stack_buf, sizeof(stack_buf), format, ap);
    va_end(ap);
    if (n < 0) {
        message = "(log format error)";
    } else if (static_cast<size_t>(n) >= sizeof(stack_buf)) {
        heap_buf.reset(new (std::nothrow) char[static_cast<size_t>(n) + 1]);
        if (heap_buf) {
            va_start(ap, format);
            errno = saved_errno;
            vsnprintf(heap_buf.get(), static_cast<size_t>(n) + 1, format, ap);
            va_end(ap);
            message = heap_buf.get();
        }  // else: deliver the truncated stack copy
    }

    log_record record{level, basename_of(file), line, function, message};
    std::shared_ptr<const log_sink> sink;
    {
        std::lock_guard<std::mutex> lock(g_sink_mutex);
        sink = g_sink;
    }
    try {
        if (sink)
            (*sink)(record);
        else
            log_stderr_sink(record);
    } catch (...) {
        // A throwing sink must not take the caller down (we may be under a C boundary).
    }
    errno = saved_errno;
}

}  // namespace pmixcpp
