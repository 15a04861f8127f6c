// The actions of PMIx_Job_control (kill, terminate, signal, checkpoint) of one node's server:
// the step's ranks on every node (each node's server signals its own, node channel
// job_control), other steps' ranks through srun's cross-step router (plugin/services/xstep/),
// SIGKILL after a terminate's grace. No I/O: the server hands the requests in and provides the
// I/O through job_control_service_ops.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "../common/process_ref.h"
#include "../common/step_info.h"
#include "fence_tracker.h"  // server_clock
#include "node_channels.h"
#include "status.h"
#include "wire/messages.h"

namespace pmixcpp::server {

// Grace between SIGTERM and SIGKILL of PMIX_JOB_CTRL_TERMINATE.
inline constexpr int kTerminateGraceSec = 5;

struct job_control_service_ops {
    // Reply to a local client: the reply header, then `body` (raw bytes) on success.
    std::function<void(uint64_t conn, uint32_t request_id, pmix_status_t status, const std::string &message,
                       std::span<const uint8_t> body)>
        reply;
    // Send to another node's server on one of our channels (node_channels.h). Empty = one node.
    std::function<void(uint32_t node, node_channel channel, std::span<const uint8_t> body)> send_node;
    // The process of a connected local rank (null: never connected, or gone), a pidfd taken
    // when it connected (common/process_ref.h): never a bare pid that could have been reused.
    std::function<process_handle(uint32_t rank)> process_of;
    // A message to the job's other steps (plugin/services/xstep/xstep_codec.h); `done` runs on
    // the loop thread. Empty = job control of another namespace is refused.
    using done_fn = std::function<void(int status, const std::string &message, std::vector<uint8_t> body)>;
    std::function<void(std::vector<uint8_t> body, int timeout_ms, done_fn done)> xstep;
    // PMIX_JOB_CTRL_CHECKPOINT of local ranks: each told by the method it registered (jctrl.h).
    // Empty = checkpoint requests are refused (PMIX_ERR_NOT_SUPPORTED).
    std::function<void(const std::vector<uint32_t> &ranks)> checkpoint_local;
    // Deliver a signal (tests replace kill(2)).
    std::function<int(const process_ref &p, int sig)> signal = [](const process_ref &p, int sig) {
        return p.send_signal(sig);
    };
};

class job_control_service {
public:
    job_control_service(const step_info &step, std::vector<uint32_t> node_of, job_control_service_ops ops);

    // PMIx_Job_control: handles it and returns true when the directives ask for kill, terminate,
    // signal or checkpoint; false leaves the request to the server (clean-up registrations).
    // Targets in other steps of the job go to them through srun (ops.xstep, xstep::op::jobctl);
    // the caller is answered when every other step accepted (or one refused), then our own
    // targets are signalled.
    bool job_control(uint64_t conn, uint32_t rank, uint32_t request_id, const wire::job_control_request &m);
    // Job control another step asked for: signal those of `ranks` (empty = all) that run here.
    void job_control_of_other_step(const std::vector<uint32_t> &ranks, int sig, bool terminate);

    // Our node channel's handler (job_control) into the table.
    Status add_channels(node_channels &table);

    // SIGKILL to what a terminate's SIGTERM left running after the grace.
    void expire(server_clock::time_point now);
    std::optional<server_clock::time_point> next_deadline() const;

private:
    void on_job_control(uint32_t from, std::span<const uint8_t> body);
    // sig 0 with `checkpoint`: each rank's own checkpoint method instead of a signal.
    void signal_local(const std::vector<uint32_t> &ranks, int sig, bool terminate, bool checkpoint = false);
    void signal_step(const std::vector<bool> &chosen, int sig, bool terminate,
                     bool checkpoint = false);  // every node's share

    step_info _step;
    std::vector<uint32_t> _node_of;
    job_control_service_ops _ops;
    struct pending_kill {
        server_clock::time_point when;
        process_handle proc;  // the very process SIGTERM went to, even if its pid is reused
    };
    std::vector<pending_kill> _kills;  // SIGKILL after a terminate's grace period
};

}  // namespace pmixcpp::server
