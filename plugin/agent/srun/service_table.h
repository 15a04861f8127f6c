// The services srun's agent dispatches requests to (agent_proto.h `service`), by the type in the
// request frame's header. A handler takes the call's responder (responder.h: it answers through
// it once, now or much later, from any thread) and the request body; it runs on the agent's
// thread and must return at once: other calls of the same connection wait meanwhile. A request for a service nobody registered is
// answered PMIX_ERR_NOT_SUPPORTED. Fill the table before the agent can hear from any node (right
// after srun_agent::start); it is read-only from then on.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <vector>

#include "../proto/agent_proto.h"
#include "../proto/responder.h"

namespace pmixcpp::agent {

class service_table {
public:
    using handler = std::function<void(responder answer, std::vector<uint8_t> body)>;

    void add(service s, handler h) { _handlers[static_cast<size_t>(s)] = std::move(h); }
    // The handler of `s`, or null.
    const handler *find(service s) const {
        const handler &h = _handlers[static_cast<size_t>(s)];
        return h ? &h : nullptr;
    }

private:
    std::array<handler, kServiceCount> _handlers;
};

}  // namespace pmixcpp::agent
