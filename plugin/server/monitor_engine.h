// The monitor engine: the PMIx_Process_monitor requests of the node's processes, without I/O:
// heartbeat monitors (PMIX_MONITOR_HEARTBEAT), the heartbeats (PMIX_SEND_HEARTBEAT, and the
// native route's), cancellations (PMIX_MONITOR_CANCEL); file monitors are not supported. It owns
// the monitors (heartbeat_monitors, jctrl.h); a monitor that trips is handed to
// `monitor_ops::tripped` (the shell raises it as an event about the process).
// Requests come from the shell as they came off the socket, with the time they are handled;
// answers go to the reply sink, a payload that does not decode is refused. A monitor belongs to
// the rank that registered it: a rank beats and cancels only its own. Loop thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>

#include "jctrl.h"
#include "reply_sink.h"

namespace pmixcpp::server {

struct monitor_config {
    std::string nspace;
    uint32_t ntasks = 0;
    uint32_t max_procs = 0;  // most procs a request may name
};

struct monitor_ops {
    // A monitor of `a.rank` tripped (required).
    std::function<void(const heartbeat_alert &a)> tripped;
};

class monitor_engine {
public:
    // `sink` must outlive the engine.
    monitor_engine(monitor_config config, monitor_ops ops, reply_sink &sink);

    // A monitor request of local rank `rank` on connection `conn` (shared/PROTOCOL.md).
    void request(uint64_t conn, uint32_t rank, uint32_t request_id, std::span<const uint8_t> payload,
                 server_clock::time_point now);
    // A heartbeat that came another way (the native route); false when `rank` has no monitor.
    bool beat(uint32_t rank, server_clock::time_point now) { return _monitors.beat(rank, now); }
    void rank_gone(uint32_t rank) { _monitors.rank_gone(rank); }

    // Timer: the monitors that tripped by `now` go to ops.tripped.
    void expire(server_clock::time_point now);
    std::optional<server_clock::time_point> next_deadline() const { return _monitors.next_deadline(); }
    size_t monitors() const { return _monitors.monitors(); }

private:
    monitor_config _cfg;
    monitor_ops _ops;
    reply_sink &_sink;
    heartbeat_monitors _monitors;
};

}  // namespace pmixcpp::server
