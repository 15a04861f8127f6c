// Helpers shared by the dynamic services (dyn_publish.cc, dyn_jctrl.cc, dyn_spawn.cc):
// reading the numeric and boolean directives of a request. Private to those files.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

#include "fence_tracker.h"  // server_clock
#include "value.h"

namespace pmixcpp::server::dyn_detail {

// A small integer directive in any integer type (or the PMIx enum types of one byte).
inline std::optional<int64_t> number_of(const pmix_value_t &v) {
    switch (v.type) {
    case PMIX_DATA_RANGE: return v.data.range;
    case PMIX_PERSIST: return v.data.persist;
    case PMIX_BOOL: return v.data.flag ? 1 : 0;
    default: break;
    }
    auto n = value_to_number<int64_t>(v);
    if (!n.ok()) return std::nullopt;
    return n.value();
}

// A boolean directive: present and true (or PMIX_UNDEF, as the standard says).
inline bool flag_of(const pmix_info_t *i) {
    if (i == nullptr) return false;
    if (i->value.type == PMIX_UNDEF) return true;
    auto n = number_of(i->value);
    return n && *n != 0;
}

inline std::optional<server_clock::time_point> deadline_of(const InfoArray &dirs) {
    const pmix_info_t *t = find_info(dirs, PMIX_TIMEOUT);
    if (t == nullptr) return std::nullopt;
    auto n = number_of(t->value);
    if (!n || *n <= 0) return std::nullopt;
    return server_clock::now() + std::chrono::seconds(*n);
}

inline constexpr uint8_t kRankLeft = 0;  // pubsub request type: a rank of the sending node left

}  // namespace pmixcpp::server::dyn_detail
