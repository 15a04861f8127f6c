// Human-readable text of PMIx values (PMIx_Value_string, PMIx_Info_string, PMIx_Data_print).
#pragma once

#include <pmix_common.h>

#include <string>

namespace pmixcpp::client {

// "Data type: PMIX_UINT32 Value: 42"
std::string format_value(const pmix_value_t *value);
// Just the value part ("42", "\"text\"", "nspace:3", "[1, 2]" ...).
std::string format_value_data(const pmix_value_t *value);
// "key=value, key=value" of an info list, for debug logs ("none" when empty).
std::string format_infos_brief(const pmix_info_t *info, size_t ninfo);

}  // namespace pmixcpp::client
