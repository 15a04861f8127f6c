#include "c_boundary.h"

#include <exception>
#include <new>
#include <string>

#include "log.h"
#include "pmix_strings.h"

namespace pmixcpp {

Status exception_status() noexcept {
    try {
        throw;
    } catch (const std::bad_alloc &) {
        try {
            return Status(PMIX_ERR_NOMEM, "out of memory");
        } catch (...) {
            return Status(PMIX_ERR_NOMEM, std::string());  // no memory for the message either
        }
    } catch (const std::exception &e) {
        try {
            return Status(PMIX_ERROR, std::string("internal error: ") + e.what());
        } catch (...) {
            return Status(PMIX_ERROR, std::string());
        }
    } catch (...) {
        try {
            return Status(PMIX_ERROR, "internal error");
        } catch (...) {
            return Status(PMIX_ERROR, std::string());
        }
    }
}

void log_boundary_exception(const char *function, const Status &st) noexcept {
    try {
        PMIXCPP_LOG_ERROR("%s: %s", function, st.message().empty() ? "internal error" : st.message().c_str());
    } catch (...) {
        // The sink could not be reached; the status still goes back to the caller.
    }
}

pmix_status_t boundary_code(const char *function, const Status &st) noexcept {
    if (!st.ok() && st.code() != PMIX_OPERATION_SUCCEEDED) {
        try {
            PMIXCPP_LOG_DEBUG("%s: %s (%s)", function, status_name(st.code()), st.message().c_str());
        } catch (...) {
        }
    }
    return st.code();
}

}  // namespace pmixcpp
