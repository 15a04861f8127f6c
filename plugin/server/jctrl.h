// What a process tells the server about itself through job control and monitoring, and the
// decisions that follow. No I/O: the server asks, delivers and raises what this decides.
//   - PMIX_JOB_CTRL_CHECKPOINT_METHOD: how the process wants to be told to checkpoint (a signal,
//     an event, or both). Used when a process asks for PMIX_JOB_CTRL_CHECKPOINT of others, and
//     when the job nears its time limit (the time-limit alert).
//   - PMIX_JOB_CTRL_PREEMPTIBLE: recorded and logged. Slurm decides preemption by the site's
//     partition and QOS policy; the process cannot change it.
//   - PMIx_Process_monitor with PMIX_MONITOR_HEARTBEAT: a heartbeat every `period` seconds; when
//     `drops` periods pass and the next one ends without a beat, the monitor trips once (its
//     status raised as an event about the process) and re-arms at the next beat.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <pmix_common.h>

#include "fence_tracker.h"  // server_clock
#include "status.h"

namespace pmixcpp::server {

struct checkpoint_method {
    int signal = 0;                      // 0: none
    pmix_status_t event = PMIX_SUCCESS;  // PMIX_SUCCESS: none
    bool any() const { return signal != 0 || event != PMIX_SUCCESS; }
};

struct heartbeat_alert {
    uint32_t rank = 0;
    std::string id;
    pmix_status_t code = PMIX_MONITOR_HEARTBEAT_ALERT;
    uint32_t silent_sec = 0;  // since the last beat (or the monitor's start)
};

// What each process said of itself through job control: its checkpoint method, preemptible.
class checkpoint_methods {
public:
    explicit checkpoint_methods(uint32_t ntasks) : _ranks(ntasks) {}

    // The value of PMIX_JOB_CTRL_CHECKPOINT_METHOD: a PMIX_DATA_ARRAY of PMIX_INFO with
    // PMIX_JOB_CTRL_CHECKPOINT_SIGNAL (int, 1..64) and/or PMIX_JOB_CTRL_CHECKPOINT_EVENT (status).
    Status set_checkpoint_method(uint32_t rank, const pmix_value_t &v);
    const checkpoint_method *method_of(uint32_t rank) const;
    void set_preemptible(uint32_t rank, bool on);
    bool preemptible(uint32_t rank) const { return rank < _ranks.size() && _ranks[rank].preemptible; }
    void rank_gone(uint32_t rank);

private:
    struct rank_controls {
        checkpoint_method method;
        bool preemptible = false;
    };
    std::vector<rank_controls> _ranks;
};

// The heartbeat monitors of the processes.
class heartbeat_monitors {
public:
    static constexpr size_t kMaxMonitorsPerRank = 16;
    static constexpr uint32_t kMaxPeriodSec = 86400;

    explicit heartbeat_monitors(uint32_t ntasks) : _ranks(ntasks) {}

    // A heartbeat monitor (a second one with the same id replaces the first).
    Status add_heartbeat(uint32_t rank, const std::string &id, uint32_t period_sec, uint32_t drops,
                         pmix_status_t code, server_clock::time_point now);
    // A beat of `rank`; false when it has no heartbeat monitor.
    bool beat(uint32_t rank, server_clock::time_point now);
    // Cancels `rank`'s monitor `id` (empty: all of them); how many were cancelled.
    size_t cancel(uint32_t rank, const std::string &id);
    void rank_gone(uint32_t rank);

    std::optional<server_clock::time_point> next_deadline() const;
    // Monitors that tripped by `now` (each trips once until the rank beats again).
    std::vector<heartbeat_alert> expire(server_clock::time_point now);
    size_t monitors() const { return _monitors; }

private:
    struct heartbeat {
        std::string id;
        std::chrono::seconds period{1};
        uint32_t drops = 0;
        pmix_status_t code = PMIX_MONITOR_HEARTBEAT_ALERT;
        server_clock::time_point last;
        bool tripped = false;
        server_clock::time_point deadline() const { return last + period * (drops + 1); }
    };
    std::vector<std::vector<heartbeat>> _ranks;  // by rank
    size_t _monitors = 0;  // heartbeat monitors of all ranks (none: nothing to scan)
};

}  // namespace pmixcpp::server
