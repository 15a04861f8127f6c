// Slurm-style host lists: "n[1-4,7],login,gpu[01-10]" <-> {"n1", ..., "gpu10"}.
//
// Grammar accepted by expand (a comma-separated list of items):
//   item   := prefix [ "[" ranges "]" [suffix] ]
//   ranges := range ("," range)*        range := digits | digits "-" digits
// Zero padding follows Slurm: a range is printed with the width of its lower bound ("01-10" gives
// 01..10). Rejected: unbalanced or nested brackets, more than one bracket group per item, empty
// items or ranges, non-digits in ranges, reversed ranges, numbers over 18 digits, whitespace, and
// lists that would expand to more than kMaxExpandedHosts names.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "status.h"

namespace pmixcpp::hostlist {

inline constexpr size_t kMaxExpandedHosts = 1000000;

Result<std::vector<std::string>> expand(std::string_view list);

// Shortest conventional form, preserving order: consecutive names with the same prefix share one
// bracket group ("n1,n2,n3,n7" -> "n[1-3,7]"; "n1,m1,n2" -> "n1,m1,n2"). expand(compress(v)) == v
// for every list of names that contain no '[', ']' or ','. Such names are emitted verbatim.
std::string compress(const std::vector<std::string> &hosts);

}  // namespace pmixcpp::hostlist
