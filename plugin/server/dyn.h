// The dynamic-process requests of one node's server: PMIx_Publish / Lookup / Unpublish (data in
// the step's node-0 server, pubsub.h; other nodes forward over the node transport) and the
// actions of PMIx_Job_control (kill, terminate, signal of the step's ranks: each node's server
// signals its own ranks). The server hands requests in and provides the I/O through dyn_ops.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "../common/process_ref.h"
#include "../services/service_ids.h"
#include "../services/spawn/spawn_codec.h"
#include "connect.h"
#include "node_channels.h"
#include "pubsub.h"
#include "../common/step_info.h"
#include "wire/messages.h"

namespace pmixcpp::server {

// pmixcpp's spawn attribute (a number of nodes, job-level info of PMIx_Spawn): grow the job by
// that many nodes first and spawn onto exactly them; if the spawn then fails, the nodes go back
// to Slurm and no process set is defined (docs/malleability.md).
inline constexpr const char *kSpawnGrow = "pmixcpp.spawn.grow";
inline constexpr uint64_t kMaxSpawnGrowNodes = 65536;
// The same as an app's environment variable (PMIXCPP_SPAWN_GROW=<nodes>), for MPI_Comm_spawn:
// OpenMPI passes on MPI_Info "env" but no key it does not know (docs/malleability.md).
inline constexpr const char *kSpawnGrowEnv = "PMIXCPP_SPAWN_GROW";
// How long a grow for a spawn waits for Slurm without the spawn's PMIX_TIMEOUT, unless the
// server is told otherwise (dyn_ops::grow_timeout_sec, PMIxCppAllocTimeout).
inline constexpr int kSpawnGrowTimeoutSec = 120;

struct dyn_ops {
    // Reply to a local client: the reply header, then `body` (raw bytes) on success.
    std::function<void(uint64_t conn, uint32_t request_id, pmix_status_t status, const std::string &message,
                       std::span<const uint8_t> body)>
        reply;
    // Send to another node's server on one of our channels (node_channels.h). Empty = one node.
    std::function<void(uint32_t node, node_channel channel, std::span<const uint8_t> body)> send_node;
    // The process of a connected local rank (null: never connected, or gone), a pidfd taken
    // when it connected (common/process_ref.h): never a bare pid that could have been reused.
    std::function<process_handle(uint32_t rank)> process_of;
    // A request of srun's side (plugin/agent/): spawn and spawn_watch (spawn_request.h), session
    // (publish/lookup/unpublish in the job's store beside srun, session_store.h), connect (its
    // rendezvous); `done` runs on the loop thread. Empty = spawn is refused
    // (PMIX_ERR_NOT_SUPPORTED) and session data stays in the step's store.
    using session_done = std::function<void(int status, const std::string &message, std::vector<uint8_t> body)>;
    std::function<void(services::service s, std::vector<uint8_t> body, int timeout_ms, session_done done)> agent;
    // PMIx_Connect: our ranks' data as another namespace sees it (connect.h). Empty = connect
    // carries no data.
    std::function<Result<InfoArray>(uint32_t rank, relation rel)> data_of;
    uint32_t connect_timeout_sec = 300;  // a connect without PMIX_TIMEOUT
    uint32_t grow_timeout_sec = kSpawnGrowTimeoutSec;  // a pmixcpp.spawn.grow without PMIX_TIMEOUT (0: no limit)
    // Messages to the other steps of the job (plugin/services/xstep/xstep_codec.h), as `session`. Empty = a Get
    // of another namespace is answered from what PMIx_Connect brought only.
    std::function<void(std::vector<uint8_t> body, int timeout_ms, session_done done)> xstep;
    // A step this node's rank `spawner` spawned ended (its srun's exit code): raise the event.
    std::function<void(const std::string &child_nspace, uint32_t spawner, int exit_code)> child_ended;
    // A spawn of one app succeeded: `child_size` processes in `child_nspace` (the process sets of
    // the spawn, groups.h).
    std::function<void(const std::string &child_nspace, uint32_t child_size)> spawned;
    // The step's spawned steps still running, in spawn order (members of a new spawn's union set,
    // groups.h), as kPeersEnv carries them to the child; "" when none. Empty = none.
    std::function<std::string()> spawn_peers;
    // PMIX_JOB_CTRL_CHECKPOINT of local ranks: each told by the method it registered (jctrl.h).
    // Empty = checkpoint requests are refused (PMIX_ERR_NOT_SUPPORTED).
    std::function<void(const std::vector<uint32_t> &ranks)> checkpoint_local;
    // Deliver a signal (tests replace kill(2)).
    std::function<int(const process_ref &p, int sig)> signal = [](const process_ref &p, int sig) {
        return p.send_signal(sig);
    };
};

class dyn_service {
public:
    dyn_service(const step_info &step, std::vector<uint32_t> node_of, dyn_ops ops);

    // A publish, lookup or unpublish frame from a local client.
    void on_client(uint64_t conn, uint32_t rank, uint16_t type, uint32_t request_id, std::span<const uint8_t> payload);

    // A spawn frame from a local client: checked, then handed to ops.spawn with the parent's name.
    void on_spawn(uint64_t conn, uint32_t rank, uint32_t request_id, std::span<const uint8_t> payload);

    // PMIx_Job_control: handles it and returns true when the directives ask for kill, terminate or
    // signal; false leaves the request to the server (clean-up registrations).
    // Targets in other steps of the job go to them through srun (ops.xstep, xstep::op::jobctl);
    // the caller is answered when every other step accepted (or one refused), then our own
    // targets are signalled.
    bool job_control(uint64_t conn, uint32_t rank, uint32_t request_id, const wire::job_control_request &m);
    // Job control another step asked for: signal those of `ranks` (empty = all) that run here.
    void job_control_of_other_step(const std::vector<uint32_t> &ranks, int sig, bool terminate);

    // PMIx_Connect / PMIx_Disconnect, or a fence naming other namespaces (connect.h). The
    // payload is a fence_request.
    void on_connect(uint64_t conn, uint32_t rank, uint32_t request_id, connect_op op, std::span<const uint8_t> payload);
    // A group with members of other steps (groups.h): through the connect rendezvous.
    void on_group(uint64_t conn, uint32_t rank, uint32_t request_id, wire::group_request &&req, uint64_t candidate) {
        _connect->on_group(conn, rank, request_id, std::move(req), candidate);
    }
    // A Get of another namespace's proc: answered from what PMIx_Connect brought.
    void foreign_get(uint64_t conn, uint32_t request_id, const pmix_proc_t &proc, const std::string &key,
                     const InfoArray &infos);

    // Our node channels' handlers (pubsub_request, pubsub_reply, job_control) into the table.
    Status add_channels(node_channels &table);

    // A local rank finalized or died.
    void rank_left(uint32_t rank);

    void expire(server_clock::time_point now);
    std::optional<server_clock::time_point> next_deadline() const;

    const pubsub_store &store() const { return _store; }

private:
    void on_pubsub_request(uint32_t from, std::span<const uint8_t> body);
    void on_pubsub_reply(uint32_t from, std::span<const uint8_t> body);
    void on_job_control(uint32_t from, std::span<const uint8_t> body);
    void handle_pubsub(const pubsub_requester &who, uint8_t type, std::span<const uint8_t> payload);
    bool to_session(uint64_t conn, uint32_t rank, uint16_t type, uint32_t request_id, std::span<const uint8_t> payload);
    std::vector<bool> _session_publishers;  // local ranks that published session data
    std::set<uint32_t> _step_publishers;    // local ranks that published to node 0 (node != 0)
    void answer(const pubsub_requester &to, pmix_status_t status, const std::string &message,
                std::span<const uint8_t> body);
    void answer_lookup(const lookup_answer &a);
    void watch_child(const std::string &child, uint32_t spawner);
    // The spawn proper (srun's side starts the step). `grown`: the nodes a pmixcpp.spawn.grow
    // obtained for it, given back to Slurm if the spawn fails.
    void start_spawn(uint64_t conn, uint32_t rank, uint32_t request_id, spawn::agent_spawn_request &&req,
                     uint32_t child_size, const std::string &grown);
    // pmixcpp.spawn.grow: EXTEND the job by `nodes` first (through srun's allocation bridge),
    // then spawn onto exactly the nodes added.
    void grow_then_spawn(uint64_t conn, uint32_t rank, uint32_t request_id, spawn::agent_spawn_request &&req,
                         uint32_t child_size, uint64_t nodes, int timeout_sec);
    // A spawn that failed: answer the spawner; with `grown`, release those nodes first and say so.
    void fail_spawn(uint64_t conn, uint32_t rank, uint32_t request_id, pmix_status_t status, const std::string &message,
                    const std::string &grown);
    // sig 0 with `checkpoint`: each rank's own checkpoint method instead of a signal.
    void signal_local(const std::vector<uint32_t> &ranks, int sig, bool terminate, bool checkpoint = false);
    void signal_step(const std::vector<bool> &chosen, int sig, bool terminate,
                     bool checkpoint = false);  // every node's share

    step_info _step;
    std::vector<uint32_t> _node_of;
    dyn_ops _ops;
    pubsub_store _store;  // used on node 0 only
    std::unique_ptr<connect_service> _connect;
    struct pending_kill {
        server_clock::time_point when;
        process_handle proc;  // the very process SIGTERM went to, even if its pid is reused
    };
    std::vector<pending_kill> _kills;  // SIGKILL after a terminate's grace period
};

// Grace between SIGTERM and SIGKILL of PMIX_JOB_CTRL_TERMINATE.
inline constexpr int kTerminateGraceSec = 5;
// How long the server listens for the end of a spawned step (the watch is cancelled with the step).
inline constexpr int kWatchTimeoutMs = 7 * 24 * 3600 * 1000;

}  // namespace pmixcpp::server
