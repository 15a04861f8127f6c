// The time-limit alert: once, alert_sec seconds before the job's end, every local process gets
// PMIX_JCTRL_PREEMPT_ALERT (events.h) and the ranks that registered a checkpoint method are
// asked to use it (the server does both). No I/O: the server asks when it is due.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

#include "fence_tracker.h"  // server_clock

namespace pmixcpp::server {

class time_alert {
public:
    // job_end: Unix time of the job's end (0 = unknown); alert_sec 0 = never.
    time_alert(int64_t job_end, uint32_t alert_sec);
    std::optional<server_clock::time_point> next_deadline() const { return _at; }
    // Once, at or after the alert's time: the seconds left until the job's end.
    std::optional<uint32_t> due(server_clock::time_point now);

private:
    std::optional<server_clock::time_point> _at;  // when to raise the alert
    int64_t _end = 0;                             // the job's end (Unix time)
};

}  // namespace pmixcpp::server
