// PMIx_Publish / Lookup / Unpublish of one node's server: data of the ranges below the session in
// the step's store, kept by node 0's server (pubsub.h; the other nodes forward over the node
// transport, channels pubsub_request and pubsub_reply), data of the session range in the job's
// store beside srun (plugin/services/sessions/, through srun's agent). No I/O: the server hands
// the requests in and provides the I/O through publish_ops.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "../common/step_info.h"
#include "node_channels.h"
#include "pubsub.h"
#include "status.h"

namespace pmixcpp::server {

struct publish_ops {
    // Reply to a local client: the reply header, then `body` (raw bytes) on success.
    std::function<void(uint64_t conn, uint32_t request_id, pmix_status_t status, const std::string &message,
                       std::span<const uint8_t> body)>
        reply;
    // Send to another node's server on one of our channels (node_channels.h). Empty = one node.
    std::function<void(uint32_t node, node_channel channel, std::span<const uint8_t> body)> send_node;
    // A request of the job's store beside srun (plugin/services/sessions/session_codec.h);
    // `done` runs on the loop thread. Empty = session data stays in the step's store.
    using done_fn = std::function<void(int status, const std::string &message, std::vector<uint8_t> body)>;
    std::function<void(std::vector<uint8_t> body, int timeout_ms, done_fn done)> job_store;
};

class publish_service {
public:
    publish_service(const step_info &step, std::vector<uint32_t> node_of, publish_ops ops);

    // A publish, lookup or unpublish frame from a local client.
    void on_client(uint64_t conn, uint32_t rank, uint16_t type, uint32_t request_id, std::span<const uint8_t> payload);
    // A local rank finalized or died: what it published with PMIX_PERSIST_PROC goes.
    void rank_left(uint32_t rank);
    // Our node channels' handlers (pubsub_request, pubsub_reply) into the table.
    Status add_channels(node_channels &table);

    // Lookups that waited past their PMIX_TIMEOUT.
    void expire(server_clock::time_point now);
    std::optional<server_clock::time_point> next_deadline() const;

    const pubsub_store &store() const { return _store; }

private:
    void on_pubsub_request(uint32_t from, std::span<const uint8_t> body);
    void on_pubsub_reply(uint32_t from, std::span<const uint8_t> body);
    void handle_pubsub(const pubsub_requester &who, uint8_t type, std::span<const uint8_t> payload);
    // Session-range requests to the job's store; true if sent there.
    bool to_session(uint64_t conn, uint32_t rank, uint16_t type, uint32_t request_id, std::span<const uint8_t> payload);
    void answer(const pubsub_requester &to, pmix_status_t status, const std::string &message,
                std::span<const uint8_t> body);
    void answer_lookup(const lookup_answer &a);

    step_info _step;
    std::vector<uint32_t> _node_of;
    publish_ops _ops;
    pubsub_store _store;                    // used on node 0 only
    std::vector<bool> _session_publishers;  // local ranks that published session data
    std::set<uint32_t> _step_publishers;    // local ranks that published to node 0 (node != 0)
};

}  // namespace pmixcpp::server
