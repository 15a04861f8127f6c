// Channels of a layer above net, for the transport tests: net carries a channel id and bytes and
// knows no channel but its own link channel (plugin/net/envelope.h), so the tests bring theirs.
#pragma once

#include "plugin/net/envelope.h"

namespace pmixcpp::testing {

namespace chan {
inline constexpr net::channel_id coll = 1, dmodex_request = 2, dmodex_reply = 3;
inline constexpr net::channel_id unknown = 9;  // a channel nothing above registered
}  // namespace chan

struct test_channels final : net::channel_names {
    const char *name_of(net::channel_id id) const override {
        switch (id) {
        case chan::coll: return "test collective";
        case chan::dmodex_request: return "test request";
        case chan::dmodex_reply: return "test reply";
        default: return nullptr;
        }
    }
};

inline const net::channel_names *channels() {
    static const test_channels c;
    return &c;
}

}  // namespace pmixcpp::testing
