// Errors as values: a PMIx status code plus a message with context.
#pragma once

#include <pmix_common.h>

#include <string>
#include <utility>
#include <variant>

namespace pmixcpp {

class [[nodiscard]] Status {
public:
    Status() = default;  // success
    Status(pmix_status_t code, std::string message) : _code(code), _message(std::move(message)) {}

    static Status success() { return {}; }

    bool ok() const { return _code == PMIX_SUCCESS; }
    pmix_status_t code() const { return _code; }
    const std::string &message() const { return _message; }

    // Prefix the message with the caller's context: "decode info: key too long".
    Status with_context(const std::string &context) const {
        if (ok()) return *this;
        return Status(_code, _message.empty() ? context : context + ": " + _message);
    }

private:
    pmix_status_t _code = PMIX_SUCCESS;
    std::string _message;
};

// A value or the Status that explains why there is none.
template <typename T>
class [[nodiscard]] Result {
public:
    Result(T value) : _v(std::move(value)) {}
    // A Result holds a value or a failure: made from a success status (a caller's slip), it
    // holds a failure that says so, never a success without a value.
    Result(Status status)
        : _v(status.ok() ? Status(PMIX_ERROR, "internal error: a result made of a success status, without a value")
                         : std::move(status)) {}

    bool ok() const { return std::holds_alternative<T>(_v); }
    const Status &status() const {
        static const Status success;
        return ok() ? success : std::get<Status>(_v);
    }
    T &value() & { return std::get<T>(_v); }
    const T &value() const & { return std::get<T>(_v); }
    T &&value() && { return std::get<T>(std::move(_v)); }
    T *operator->() { return &value(); }
    const T *operator->() const { return &value(); }
    T &operator*() & { return value(); }

private:
    std::variant<T, Status> _v;
};

}  // namespace pmixcpp

#define PMIXCPP_CONCAT_INNER(a, b) a##b
#define PMIXCPP_CONCAT(a, b) PMIXCPP_CONCAT_INNER(a, b)

// `lhs` = the value of the Result `expr`, or return its Status from the enclosing function:
//   PMIXCPP_ASSIGN_OR_RETURN(auto blob, pack_job_blob(f, job));
#define PMIXCPP_ASSIGN_OR_RETURN(lhs, expr)                                        \
    auto PMIXCPP_CONCAT(_pmixcpp_r, __LINE__) = (expr);                            \
    if (!PMIXCPP_CONCAT(_pmixcpp_r, __LINE__).ok())                                \
        return PMIXCPP_CONCAT(_pmixcpp_r, __LINE__).status();                      \
    lhs = std::move(PMIXCPP_CONCAT(_pmixcpp_r, __LINE__)).value()

// Return the Status of `expr` from the enclosing function if it failed.
#define PMIXCPP_RETURN_IF_ERROR(expr)                                  \
    do {                                                               \
        ::pmixcpp::Status _pmixcpp_st = (expr);                        \
        if (!_pmixcpp_st.ok()) return _pmixcpp_st;                     \
    } while (0)
