// Helpers of the dynamic-process tests (test_dyn.cc, test_xstep.cc, tests/server/
// test_dyn_services.cc): info entries and arrays, process lists, publish and lookup payloads.
#pragma once

#include <pmix_common.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "value.h"
#include "wire/codec.h"
#include "wire/messages.h"

namespace pmixcpp::dyn_test {

inline pmix_info_t info_str(const char *key, const char *v) {
    pmix_info_t i{};
    strncpy(i.key, key, PMIX_MAX_KEYLEN);
    EXPECT_TRUE(value_load(&i.value, v, PMIX_STRING).ok());
    return i;
}
template <typename T>
inline pmix_info_t info_num(const char *key, T v, pmix_data_type_t type) {
    pmix_info_t i{};
    strncpy(i.key, key, PMIX_MAX_KEYLEN);
    EXPECT_TRUE(value_load(&i.value, &v, type).ok());
    return i;
}
inline InfoArray infos(std::vector<pmix_info_t> v) {
    auto *p = static_cast<pmix_info_t *>(calloc(v.size() ? v.size() : 1, sizeof(pmix_info_t)));
    for (size_t i = 0; i < v.size(); ++i) p[i] = v[i];  // ownership moves
    return InfoArray(p, v.size());
}

inline std::vector<pmix_proc_t> procs(std::vector<std::pair<std::string, uint32_t>> v) {
    std::vector<pmix_proc_t> out;
    for (auto &[ns, r] : v) {
        pmix_proc_t p{};
        strncpy(p.nspace, ns.c_str(), PMIX_MAX_NSLEN);
        p.rank = r;
        out.push_back(p);
    }
    return out;
}

// The payloads of a publish of one string and of a lookup (wire/messages.h).
inline std::vector<uint8_t> publish_payload(const char *key, const char *value) {
    wire::publish_request p;
    p.data = infos({info_str(key, value)});
    wire::Writer w;
    EXPECT_TRUE(wire::encode(w, p).ok());
    return w.data();
}
inline std::vector<uint8_t> lookup_payload(std::vector<std::string> keys, std::vector<pmix_info_t> dirs) {
    wire::lookup_request l;
    l.keys = std::move(keys);
    l.directives = infos(std::move(dirs));
    wire::Writer w;
    EXPECT_TRUE(wire::encode(w, l).ok());
    return w.data();
}

// A reply a connect_service sent.
struct connect_reply_rec {
    uint64_t conn;
    pmix_status_t status;
    std::string message;
    std::vector<uint8_t> body;
};

}  // namespace pmixcpp::dyn_test
