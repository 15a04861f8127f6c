#include "fabric_relay.h"

#include <memory>

#include "../services/fabric/fabric_codec.h"
#include "dyn_spawn.h"  // kWatchTimeoutMs
#include "log.h"
#include "wire/codec.h"

namespace pmixcpp::server {

Status fabric_relay::on_client(uint64_t conn, uint32_t id, std::span<const uint8_t> payload) {
    fabric::fabric_request req;
    PMIXCPP_RETURN_IF_ERROR(fabric::decode_client_request(payload, &req));
    if (!_ops.request) {
        _ops.reply(conn, id, PMIX_ERR_NOT_SUPPORTED, "no fabric source (the step has no srun agent)", {});
        return Status::success();
    }
    auto body = fabric::encode_agent_request(req);
    if (!body.ok()) {
        _ops.reply(conn, id, body.status().code(), body.status().message(), {});
        return Status::success();
    }
    const bool registration = req.op == fabric::fabric_op::registration;
    _ops.request(services::service::fabric, std::move(body.value()), 60000,
                 [this, conn, id, registration](int status, const std::string &message, std::vector<uint8_t> reply) {
                     auto held = std::make_shared<std::vector<uint8_t>>(std::move(reply));
                     _ops.post([this, conn, id, status, message, held, registration] {
                         if (status != PMIX_SUCCESS) return _ops.reply(conn, id, status, message, {});
                         if (registration && !_watching) watch();
                         _ops.reply(conn, id, PMIX_SUCCESS, "", *held);
                     });
                 });
    return Status::success();
}

void fabric_relay::watch() {
    _watching = true;
    _ops.request(services::service::fabric_watch, fabric::encode_watch(_generation), kWatchTimeoutMs,
                 [this](int status, const std::string &message, std::vector<uint8_t> reply) {
                     auto held = std::make_shared<std::vector<uint8_t>>(std::move(reply));
                     _ops.post([this, status, message, held] {
                         uint64_t generation = 0;
                         wire::Reader r(held->data(), held->size());
                         if (status != PMIX_SUCCESS || !r.get_u64(&generation).ok() || generation == 0) {
                             PMIXCPP_LOG_VERBOSE("%s: no more fabric updates: %s", _nspace.c_str(),
                                                 status != PMIX_SUCCESS ? message.c_str() : "malformed answer");
                             _watching = false;
                             return;
                         }
                         if (_generation != 0 && generation != _generation) _ops.updated();
                         _generation = generation;
                         watch();
                     });
                 });
}

}  // namespace pmixcpp::server
