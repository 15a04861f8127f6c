#include "xstep_stepd.h"

#include <chrono>

#include "../../agent/proto/agent_io.h"
#include "../../agent/stepd/agent_client.h"
#include "../service_ids.h"
#include "log.h"

namespace pmixcpp::xstep {

using clock_type = std::chrono::steady_clock;

// --- slurmstepd side ----------------------------------------------------------------------

Result<std::unique_ptr<inbox>> inbox::start(agent::client &agent, uint32_t node, deliver_fn deliver) {
    std::unique_ptr<inbox> in(new inbox());
    in->_agent = &agent;
    in->_node = node;
    in->_deliver = std::move(deliver);
    try {
        in->_thread = std::thread([p = in.get()] { p->run(); });
    } catch (const std::exception &e) {
        return Status(PMIX_ERROR, std::string("cross-step inbox thread: ") + e.what());
    }
    return in;
}

inbox::~inbox() {
    _cancel = true;
    if (_thread.joinable()) _thread.join();  // the call polls the flag every 100 ms
}

void inbox::run() {
    message m;
    m.what = op::inbox;
    m.node = _node;
    auto body = encode(m);
    if (!body.ok()) return;
    int failures = 0;
    while (!_cancel) {
        auto rep = _agent->call_sync(services::id_of(services::service::xstep), body.value(), kInboxCallMs);
        if (_cancel || _agent->stopping()) return;
        Status st = rep.status();
        std::vector<inbox_item> items;
        if (st.ok() && rep->status != PMIX_SUCCESS) st = Status(rep->status, rep->message);
        if (st.ok()) st = decode_items(rep->body, &items);
        if (!st.ok()) {
            if (st.code() == PMIX_ERR_NOT_SUPPORTED) {
                PMIXCPP_LOG_VERBOSE("cross-step inbox: %s", st.message().c_str());
                return;  // srun's side has no router: nothing will ever come
            }
            if (st.code() != PMIX_ERR_TIMEOUT && failures++ < 3)
                PMIXCPP_LOG_VERBOSE("cross-step inbox: %s (retrying)", st.message().c_str());
            for (int i = 0; i < 10 && !_cancel && !_agent->stopping(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
            continue;
        }
        failures = 0;
        if (!items.empty()) _deliver(std::move(items));
    }
}

}  // namespace pmixcpp::xstep
