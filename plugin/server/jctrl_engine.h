// The job control engine: the PMIx_Job_control requests of the node's processes, without I/O.
//   - what a process says of itself (PMIX_JOB_CTRL_CHECKPOINT_METHOD, PMIX_JOB_CTRL_PREEMPTIBLE:
//     informational, the standard says; recorded in checkpoint_methods, jctrl.h);
//   - the actions the dyn service carries out (kill, terminate, signal, checkpoint of ranks;
//     dyn.h), handed to it through `job_control_ops::actions`;
//   - paths registered for clean-up (PMIX_REGISTER_CLEANUP(_DIR)): only beneath the user's step
//     directory, at most kMaxCleanups, removed as root at the step's end (remove_cleanups());
//   - checkpoint requests to local ranks, each by the method it registered (a signal to its
//     process, an event, or both).
// Requests come from the shell as they came off the socket; answers go to the reply sink, a
// payload that does not decode is refused. Loop thread only; the ops never call back into it.
#pragma once

#include <pmix_common.h>

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "jctrl.h"
#include "reply_sink.h"
#include "status.h"
#include "wire/messages.h"

namespace pmixcpp::server {

// A path registered with PMIX_REGISTER_CLEANUP(_DIR), relative to the user's step directory.
struct cleanup_entry {
    std::string relpath;
    bool dir = false;
    bool recursive = false;
};
constexpr size_t kMaxCleanups = 4096;

struct job_control_config {
    std::string nspace;
    uint32_t ntasks = 0;
    std::string step_dir;    // the user's step directory: clean-up paths must lie beneath it
    uint32_t max_procs = 0;  // most procs a request may name
};

// What the engine asks of the rest of the server. Every one is required.
struct job_control_ops {
    // The actions of the dyn service (kill, terminate, signal, checkpoint): true when it took the
    // request (it answers it then), false when there is none among the infos.
    std::function<bool(uint64_t conn, uint32_t rank, uint32_t request_id, const wire::job_control_request &m)>
        actions;
    // Signal the process of local rank `rank` (through its connection's pidfd): success or why not.
    std::function<Status(uint32_t rank, int signal)> signal_rank;
    // Raise the checkpoint event `code` for local rank `rank`.
    std::function<void(uint32_t rank, pmix_status_t code, const std::string &why)> checkpoint_event;
    // Remove, as root, `relpath` beneath the user's step directory (resolved beneath its
    // descriptor, only the user's entries).
    std::function<Status(const std::string &relpath)> remove_beneath;
};

class job_control_engine {
public:
    // `sink` must outlive the engine.
    job_control_engine(job_control_config config, job_control_ops ops, reply_sink &sink);

    // A job control request of local rank `rank` on connection `conn` (shared/PROTOCOL.md).
    void request(uint64_t conn, uint32_t rank, uint32_t request_id, std::span<const uint8_t> payload);
    // Tell local `ranks` to checkpoint, each by the method it registered; `why` for the log.
    void checkpoint(const std::vector<uint32_t> &ranks, const std::string &why);
    bool has_checkpoint_method(uint32_t rank) const { return _methods.method_of(rank) != nullptr; }
    const checkpoint_methods &methods() const { return _methods; }
    void rank_gone(uint32_t rank) { _methods.rank_gone(rank); }

    // The step's end: the registered paths are removed (each failure logged).
    void remove_cleanups();
    const std::vector<cleanup_entry> &cleanups() const { return _cleanups; }

private:
    void answer(uint64_t conn, uint32_t request_id, pmix_status_t status, const std::string &message);

    job_control_config _cfg;
    job_control_ops _ops;
    reply_sink &_sink;
    checkpoint_methods _methods;
    std::vector<cleanup_entry> _cleanups;
};

}  // namespace pmixcpp::server
