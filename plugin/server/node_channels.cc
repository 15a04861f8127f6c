#include "node_channels.h"

#include <string>

namespace pmixcpp::server {

Status node_channels::add(node_channel c, const char *name, handler h) {
    const net::channel_id id = id_of(c);
    if (id == net::kLinkChannel)
        return Status(PMIX_ERR_BAD_PARAM, "node channel " + std::to_string(id) + " is the transports' own");
    if (!name || !*name || !h)
        return Status(PMIX_ERR_BAD_PARAM, "node channel " + std::to_string(id) + " registered without a name or handler");
    if (id < _by_id.size() && _by_id[id].on_message)
        return Status(PMIX_ERR_EXISTS, "node channel " + std::to_string(id) + " (" + _by_id[id].name +
                                           ") registered twice");
    if (id >= _by_id.size()) _by_id.resize(id + 1u);
    _by_id[id] = entry{name, std::move(h)};
    return Status::success();
}

const char *node_channels::name_of(net::channel_id id) const {
    return id < _by_id.size() && _by_id[id].on_message ? _by_id[id].name : nullptr;
}

bool node_channels::dispatch(uint32_t from_node, net::channel_id id, std::span<const uint8_t> body) const {
    if (id >= _by_id.size() || !_by_id[id].on_message) return false;
    _by_id[id].on_message(from_node, body);
    return true;
}

}  // namespace pmixcpp::server
