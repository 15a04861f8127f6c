// Monitoring requests of the node's processes (PMIx_Process_monitor): heartbeat monitors, the
// heartbeats, cancellations; file monitors are not supported. Part of the server's class
// (server_impl.h); the monitors themselves are jctrl.h's.
#include "server_impl.h"

namespace pmixcpp::server {

void server_impl::handle_monitor(connection &c, const wire::Frame &f) {
    DECODE_OR_CLOSE(wire::monitor_request, "monitor");
    const pmix_info_t &what = m.monitor[0];
    const std::string key = key_of(what);
    const auto now = server_clock::now();
    if (key == PMIX_SEND_HEARTBEAT) {
        // PMIx_Heartbeat: nobody waits for the answer.
        bool known = _jctrl.beat(c.rank, now);
        send_reply(c.id, f.id, known ? PMIX_SUCCESS : PMIX_ERR_NOT_FOUND, known ? "" : "no heartbeat monitor");
        return;
    }
    if (key == PMIX_MONITOR_HEARTBEAT) {
        std::string id;
        if (const pmix_info_t *i = find_info(m.directives, PMIX_MONITOR_ID)) id = value_text(i->value);
        auto number = [&](const char *k, int64_t dflt) -> std::optional<int64_t> {
            const pmix_info_t *i = find_info(m.directives, k);
            if (i == nullptr) return dflt;
            auto n = value_to_number<int64_t>(i->value);
            if (!n.ok() || n.value() < 0) return std::nullopt;
            return n.value();
        };
        auto period = number(PMIX_MONITOR_HEARTBEAT_TIME, -1);
        auto drops = number(PMIX_MONITOR_HEARTBEAT_DROPS, 0);
        if (!period || *period <= 0 || !drops || *period > UINT32_MAX || *drops > UINT32_MAX) {
            send_reply(c.id, f.id, PMIX_ERR_BAD_PARAM,
                       "a heartbeat monitor needs PMIX_MONITOR_HEARTBEAT_TIME (s) and a valid PMIX_MONITOR_HEARTBEAT_DROPS");
            return;
        }
        Status st = _jctrl.add_heartbeat(c.rank, id, static_cast<uint32_t>(*period), static_cast<uint32_t>(*drops),
                                         m.error, now);
        if (st.ok())
            PMIXCPP_LOG_VERBOSE("%s: rank %u: heartbeat monitor '%s' every %lld s, %lld may be missed",
                                _step.nspace.c_str(), c.rank, id.c_str(), static_cast<long long>(*period),
                                static_cast<long long>(*drops));
        send_reply(c.id, f.id, st.code(), st.message());
        rearm_timer();
        return;
    }
    if (key == PMIX_MONITOR_CANCEL) {
        std::string id = value_text(what.value);
        size_t n = _jctrl.cancel(c.rank, id);
        send_reply(c.id, f.id, n > 0 ? PMIX_SUCCESS : PMIX_ERR_NOT_FOUND, n > 0 ? "" : "no monitor " + id);
        rearm_timer();
        return;
    }
    if (key == PMIX_MONITOR_FILE) {
        send_reply(c.id, f.id, PMIX_ERR_NOT_SUPPORTED, "file monitoring is not supported");
        return;
    }
    send_reply(c.id, f.id, PMIX_ERR_BAD_PARAM, "nothing to monitor named " + key);
}

}  // namespace pmixcpp::server
