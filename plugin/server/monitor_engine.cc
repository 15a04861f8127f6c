// The monitor engine (monitor_engine.h): heartbeat monitors, heartbeats, cancellations.
#include "monitor_engine.h"

#include "log.h"
#include "value.h"
#include "wire/messages.h"

namespace pmixcpp::server {

monitor_engine::monitor_engine(monitor_config config, monitor_ops ops, reply_sink &sink)
    : _cfg(std::move(config)), _ops(std::move(ops)), _sink(sink), _monitors(_cfg.ntasks) {}

void monitor_engine::request(uint64_t conn, uint32_t rank, uint32_t request_id, std::span<const uint8_t> payload,
                             server_clock::time_point now) {
    wire::monitor_request m;
    if (Status st = wire::decode_payload(payload, &m, _cfg.max_procs); !st.ok()) {
        _sink.refuse(conn, "malformed monitor payload: " + st.message());
        return;
    }
    const pmix_info_t &what = m.monitor[0];
    const std::string key = key_of(what);
    if (key == PMIX_SEND_HEARTBEAT) {
        // PMIx_Heartbeat: nobody waits for the answer.
        bool known = _monitors.beat(rank, now);
        _sink.reply(conn, request_id, known ? PMIX_SUCCESS : PMIX_ERR_NOT_FOUND, known ? "" : "no heartbeat monitor");
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
            _sink.reply(conn, request_id, PMIX_ERR_BAD_PARAM,
                        "a heartbeat monitor needs PMIX_MONITOR_HEARTBEAT_TIME (s) and a valid PMIX_MONITOR_HEARTBEAT_DROPS");
            return;
        }
        Status st = _monitors.add_heartbeat(rank, id, static_cast<uint32_t>(*period), static_cast<uint32_t>(*drops),
                                            m.error, now);
        if (st.ok())
            PMIXCPP_LOG_VERBOSE("%s: rank %u: heartbeat monitor '%s' every %lld s, %lld may be missed",
                                _cfg.nspace.c_str(), rank, id.c_str(), static_cast<long long>(*period),
                                static_cast<long long>(*drops));
        _sink.reply(conn, request_id, st.code(), st.message());
        return;
    }
    if (key == PMIX_MONITOR_CANCEL) {
        std::string id = value_text(what.value);
        size_t n = _monitors.cancel(rank, id);
        _sink.reply(conn, request_id, n > 0 ? PMIX_SUCCESS : PMIX_ERR_NOT_FOUND, n > 0 ? "" : "no monitor " + id);
        return;
    }
    if (key == PMIX_MONITOR_FILE) {
        _sink.reply(conn, request_id, PMIX_ERR_NOT_SUPPORTED, "file monitoring is not supported");
        return;
    }
    _sink.reply(conn, request_id, PMIX_ERR_BAD_PARAM, "nothing to monitor named " + key);
}

void monitor_engine::expire(server_clock::time_point now) {
    for (const auto &a : _monitors.expire(now)) _ops.tripped(a);
}

}  // namespace pmixcpp::server
