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
    bool closes = false;        // the connection is closed after it (reply_and_close)
};

// A reply naming the modex snapshot.
struct sunk_snapshot {
    uint64_t conn = 0;
    uint32_t id = 0;
    bool made = false;  // a snapshot was named (else "")
    std::string file;   // its file's id
    size_t segments = 0;
    bool has_descriptor = false;
    bool resend = false;
};

struct recording_sink final : server::reply_sink {
    std::vector<sunk_reply> replies;
    std::vector<server::fence_outcome> outcomes;
    std::vector<sunk_snapshot> snapshots;
    std::vector<std::pair<uint64_t, std::string>> refused;

    void reply(uint64_t conn, uint32_t request_id, pmix_status_t status, const std::string &message,
               const std::function<Status(wire::Writer &)> &body) override {
        sunk_reply r{conn, request_id, status, message, {}, false};
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
    void snapshot(uint64_t conn, uint32_t request_id, const server::modex_snapshot *s, bool resend) override {
        sunk_snapshot r{conn, request_id, s != nullptr, {}, 0, false, resend};
        if (s) {
            r.file = s->id;
            r.segments = s->segments.size();
            r.has_descriptor = s->fd && s->fd->get() >= 0;
        }
        snapshots.push_back(std::move(r));
    }
    void reply_and_close(uint64_t conn, uint32_t request_id, pmix_status_t status,
                         const std::string &message) override {
        replies.push_back(sunk_reply{conn, request_id, status, message, {}, true});
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
