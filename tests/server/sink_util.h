// A reply sink (plugin/server/reply_sink.h) that keeps what it is given in vectors: what the
// server's shell would write to the client sockets, for the engines' unit tests.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "../../plugin/server/reply_sink.h"
#include "wire/messages.h"

namespace pmixcpp::testing {

struct sunk_reply {
    uint64_t conn = 0;
    uint32_t id = 0;
    pmix_status_t status = PMIX_SUCCESS;
    std::string message;
    std::vector<uint8_t> body;  // what the body writer wrote
};

struct recording_sink final : server::reply_sink {
    std::vector<sunk_reply> replies;
    std::vector<server::fence_outcome> outcomes;
    std::vector<std::pair<uint64_t, std::string>> refused;

    void reply(uint64_t conn, uint32_t request_id, pmix_status_t status, const std::string &message,
               const std::function<Status(wire::Writer &)> &body) override {
        sunk_reply r{conn, request_id, status, message, {}};
        if (body) {
            wire::Writer w;
            EXPECT_TRUE(body(w).ok());
            r.body = w.take();
        }
        replies.push_back(std::move(r));
    }
    void fence_outcomes(const std::vector<server::fence_outcome> &o) override {
        outcomes.insert(outcomes.end(), o.begin(), o.end());
    }
    void refuse(uint64_t conn, const std::string &reason) override { refused.emplace_back(conn, reason); }
};

template <typename M>
std::vector<uint8_t> payload_of(const M &m) {
    wire::Writer w;
    EXPECT_TRUE(wire::encode(w, m).ok());
    return w.take();
}

}  // namespace pmixcpp::testing
