// The C boundary: every extern "C" entry point (the client library's PMIx_*, the scheduler API's
// PMIx_server_*, the Slurm hooks) runs its body through one of these guards, so that no C++
// exception reaches a C caller. An exception becomes a PMIx status (std::bad_alloc:
// PMIX_ERR_NOMEM "out of memory"; any other: PMIX_ERROR "internal error[: what()]") and one log
// line at error level naming the entry point.
#pragma once

#include <pmix_common.h>

#include <type_traits>
#include <utility>

#include "status.h"

namespace pmixcpp {

// The Status of the exception being handled; logs nothing. Call only inside a catch block.
Status exception_status() noexcept;

// One log line at error level for an exception that reached the entry point `function`.
void log_boundary_exception(const char *function, const Status &st) noexcept;

// The code of a Status a PMIx entry point returns; a failure is logged at debug level (statuses
// are returned: the caller decides what is an error). PMIX_OPERATION_SUCCEEDED is no failure.
pmix_status_t boundary_code(const char *function, const Status &st) noexcept;

// Run `body` (returning Status); an exception becomes its Status. Logs nothing: for entry points
// that report failures their own way (the Slurm hooks log them and return SLURM_ERROR).
template <typename F>
Status guard_status(F &&body) noexcept {
    try {
        return std::forward<F>(body)();
    } catch (...) {
        return exception_status();
    }
}

// A PMIx entry point: run `body` (returning pmix_status_t or Status) and return the status code.
template <typename F>
pmix_status_t c_boundary(const char *function, F &&body) noexcept {
    try {
        if constexpr (std::is_same_v<std::invoke_result_t<F &>, Status>)
            return boundary_code(function, body());
        else
            return body();
    } catch (...) {
        Status st = exception_status();
        log_boundary_exception(function, st);
        return st.code();
    }
}

// An entry point that returns no status (a pointer, a count, void): `fallback` after an exception.
template <typename T, typename F>
T c_boundary_or(const char *function, T fallback, F &&body) noexcept {
    try {
        return body();
    } catch (...) {
        log_boundary_exception(function, exception_status());
        return fallback;
    }
}

template <typename F>
void c_boundary_void(const char *function, F &&body) noexcept {
    try {
        body();
    } catch (...) {
        log_boundary_exception(function, exception_status());
    }
}

}  // namespace pmixcpp
