// The spawner's preput keys on their way to the children: the value of PMIXCPP_PMI_PREPUT in the
// children's environment, "<hex key>:<hex value>;" per pair (lowercase hex, so any byte of a value
// travels). Pure functions, no I/O.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace pmixcpp::pmi {

std::string encode_preput(const std::vector<std::pair<std::string, std::string>> &kv);
// False (and *out unchanged) for a malformed text, or a key that is empty, over 256 bytes, or
// holds a newline or a NUL (session.h: keys of the KVS).
bool decode_preput(const char *text, std::map<std::string, std::string> *out);

}  // namespace pmixcpp::pmi
