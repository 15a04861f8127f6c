// Errors as values: a PMIx status code plus a message with context.
#pragma once

#include <pmix_common.h>

#include <string>
#include <utility>
#include <variant>

namespace pmixcpp {

// What Status::success() returns: a success known as such when compiling, so that a Result made
// of it (a success without a value) is refused by the compiler. It converts to a Status.
struct [[nodiscard]] success_status {
    bool ok() const { return true; }
};

class [[nodiscard]] Status {
public:
    Status() = default;  // success
    Status(success_status) {}
    Status(pmix_status_t code, std::string message) : _code(code), _message(std::move(message)) {}

    static success_status success() { return {}; }

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

// A value or the Status that explains why there is none: never a success without a value. Made
// of Status::success() it does not compile; made of a Status that turns out to be a success (a
// caller's slip the compiler cannot see), it holds a failure that says so.
template <typename T>
class [[nodiscard]] Result {
public:
    Result(T value) : _v(std::move(value)) {}
    Result(success_status) = delete;
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

namespace pmixcpp::detail {
// The Status of a Status or of a Result, for PMIXCPP_RETURN_IF_ERROR.
inline const Status &status_of(const Status &s) { return s; }
inline Status status_of(Status &&s) { return std::move(s); }
template <typename T>
const Status &status_of(const Result<T> &r) {
    return r.status();
}
template <typename T>
Status status_of(Result<T> &&r) {
    return r.status();
}
}  // namespace pmixcpp::detail

#define PMIXCPP_CONCAT_INNER(a, b) a##b
#define PMIXCPP_CONCAT(a, b) PMIXCPP_CONCAT_INNER(a, b)

// `lhs` = the value of the Result `expr`, or return its Status from the enclosing function:
//   PMIXCPP_ASSIGN_OR_RETURN(auto blob, pack_job_blob(f, job));
#define PMIXCPP_ASSIGN_OR_RETURN(lhs, expr)                                        \
    auto PMIXCPP_CONCAT(_pmixcpp_r, __LINE__) = (expr);                            \
    if (!PMIXCPP_CONCAT(_pmixcpp_r, __LINE__).ok())                                \
        return PMIXCPP_CONCAT(_pmixcpp_r, __LINE__).status();                      \
    lhs = std::move(PMIXCPP_CONCAT(_pmixcpp_r, __LINE__)).value()

// Return the Status of `expr` (a Status, or a Result whose value the caller goes on to use) from
// the enclosing function if it failed; with a context, the Status returned is prefixed with it
// (Status::with_context), which is evaluated only then:
//   PMIXCPP_RETURN_IF_ERROR(w.put_u32(n));
//   PMIXCPP_RETURN_IF_ERROR(decode(r, &m), "query reply");
#define PMIXCPP_RETURN_IF_ERROR(expr, ...)                                                 \
    do {                                                                                   \
        const ::pmixcpp::Status &_pmixcpp_st = ::pmixcpp::detail::status_of(expr);         \
        if (!_pmixcpp_st.ok()) return _pmixcpp_st __VA_OPT__(.with_context(__VA_ARGS__)); \
    } while (0)
