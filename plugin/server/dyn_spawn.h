// PMIx_Spawn of one node's server: the request checked and handed to srun's spawn launcher
// (plugin/services/spawn/, through srun's agent), a grow-spawn (pmixcpp.spawn.grow: the job
// EXTENDed through srun's allocation bridge first, the nodes given back if the spawn fails), the
// watch of a spawned step's end. No I/O: the server hands the requests in and provides the I/O
// through spawn_ops.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "../common/step_info.h"
#include "../services/service_ids.h"
#include "../services/spawn/spawn_codec.h"
#include "status.h"

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
// server is told otherwise (spawn_ops::grow_timeout_sec, PMIxCppAllocTimeout).
inline constexpr int kSpawnGrowTimeoutSec = 120;
// How long the server listens for the end of a spawned step (the watch is cancelled with the step).
inline constexpr int kWatchTimeoutMs = 7 * 24 * 3600 * 1000;

struct spawn_ops {
    // Reply to a local client: the reply header, then `body` (raw bytes) on success.
    std::function<void(uint64_t conn, uint32_t request_id, pmix_status_t status, const std::string &message,
                       std::span<const uint8_t> body)>
        reply;
    // A call of srun's side: spawn and spawn_watch (spawn_codec.h), alloc (a grow's EXTEND and
    // its roll-back, alloc_codec.h); `done` runs on the loop thread. Empty = spawn is refused
    // (PMIX_ERR_NOT_SUPPORTED).
    using done_fn = std::function<void(int status, const std::string &message, std::vector<uint8_t> body)>;
    std::function<void(services::service s, std::vector<uint8_t> body, int timeout_ms, done_fn done)> agent;
    // A spawn of one app succeeded: `child_size` processes in `child_nspace` (the process sets of
    // the spawn, groups.h).
    std::function<void(const std::string &child_nspace, uint32_t child_size)> spawned;
    // The step's spawned steps still running, in spawn order (members of a new spawn's union set,
    // groups.h), as kPeersEnv carries them to the child; "" when none. Empty = none.
    std::function<std::string()> spawn_peers;
    // A step this node's rank `spawner` spawned ended (its srun's exit code): raise the event.
    std::function<void(const std::string &child_nspace, uint32_t spawner, int exit_code)> child_ended;
    uint32_t grow_timeout_sec = kSpawnGrowTimeoutSec;  // a pmixcpp.spawn.grow without PMIX_TIMEOUT (0: no limit)
};

class spawn_service {
public:
    spawn_service(const step_info &step, spawn_ops ops);

    // A spawn frame from a local client: checked, then handed to srun's side with the parent's name.
    void on_spawn(uint64_t conn, uint32_t rank, uint32_t request_id, std::span<const uint8_t> payload);

private:
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

    step_info _step;
    spawn_ops _ops;
};

}  // namespace pmixcpp::server
