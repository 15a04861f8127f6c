// The services srun's agent dispatches requests to, by the service id in the request frame's
// header (agent_proto.h `service_id`). The ids and names are the layer above's
// (plugin/services/service_ids.h, given here as `service_names`); each service registers its own
// handlers under its ids. A handler takes the call's responder (responder.h: it answers through
// it once, now or much later, from any thread) and the request body; it runs on the agent's
// thread and must return at once: other calls of the same connection wait meanwhile. A request
// for a service the names know but nobody registered is answered PMIX_ERR_NOT_SUPPORTED; one for
// an id they do not know is a malformed request (the agent drops the connection). Fill the table
// before the agent can hear from any node (right after srun_agent::start); it is read-only from
// then on.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <vector>

#include "../proto/agent_proto.h"
#include "../proto/responder.h"
#include "status.h"

namespace pmixcpp::agent {

class service_table {
public:
    using handler = std::function<void(responder answer, std::vector<uint8_t> body)>;

    // The layer above's services (their ids and names); null: none, only the agent's own.
    void set_names(const service_names *names) { _names = names; }
    const service_names *names() const { return _names; }

    // `s`'s handler: once per service, for an id the names know (a programming error otherwise,
    // which srun's side reports).
    Status add(service_id s, handler h) {
        if (!_names || s < kFirstServiceAbove || s > kMaxServiceId || !_names->name_of(s) || !h)
            return Status(PMIX_ERR_BAD_PARAM, "srun agent: no service " + std::to_string(s) + " to register");
        if (_handlers[s])
            return Status(PMIX_ERR_EXISTS, std::string("srun agent: ") + _names->name_of(s) + " registered twice");
        _handlers[s] = std::move(h);
        return Status::success();
    }
    // The handler of `s`, or null.
    const handler *find(service_id s) const {
        if (s > kMaxServiceId) return nullptr;
        const handler &h = _handlers[s];
        return h ? &h : nullptr;
    }

private:
    const service_names *_names = nullptr;
    std::array<handler, kMaxServiceId + 1> _handlers;
};

}  // namespace pmixcpp::agent
