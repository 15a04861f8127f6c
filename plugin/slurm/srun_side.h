// srun's side of a step (Slurm glue): the agent that hears from the step's slurmstepds
// (plugin/agent/srun/srun_agent.h) and the services it dispatches to, built with what needs
// Slurm's API (the allocation bridge, the spawn launcher's step killer, the switch topology
// loader, the step's layout). mpi_p_client_prelaunch registers them in the agent's table.
#pragma once

#include "slurm_api.h"

#include <sys/socket.h>

#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "../agent/srun/srun_agent.h"
#include "plugin_config.h"
#include "../services/fabric/fabric_srun.h"
#include "../services/sessions/session_srun.h"
#include "../services/spawn/spawn_srun.h"
#include "../common/step_env.h"
#include "../services/xstep/xstep_srun.h"
#include "alloc_bridge.h"
#include "log.h"

namespace pmixcpp {

// srun -> slurmstepd: the job's expected end (Unix time), for PMIxCppTimeLimitAlert.
inline constexpr const char *kJobEndEnv = "SLURM_PMIXCPP_JOB_END";

// A node list of Slurm's syntax, expanded.
Result<std::vector<std::string>> expand_nodelist(const char *list);
// The local IPv4/IPv6 address this host sends from to reach `to`: the address `to` sees us at.
// "" if none.
std::string local_address_toward(const slurm_addr_t &to);

// srun side: the Slurm steps making up the step (one per heterogeneous component), so that the
// agent can end all of them.
struct step_components {
    std::mutex mutex;
    std::vector<std::pair<uint32_t, uint32_t>> steps;  // (job, step)
    bool ended = false;

    // False once the step was ended: a component whose launch thread comes that late must not
    // start its tasks.
    bool add(uint32_t job, uint32_t step) {
        std::lock_guard<std::mutex> lock(mutex);
        if (ended) return false;
        steps.emplace_back(job, step);
        return true;
    }
    size_t count() {
        std::lock_guard<std::mutex> lock(mutex);
        return steps.size();
    }
    // Kill every component once; `why` goes to srun's log first.
    void end(const std::string &why) {
        std::vector<std::pair<uint32_t, uint32_t>> todo;
        {
            std::lock_guard<std::mutex> lock(mutex);
            if (ended) return;
            ended = true;
            todo = steps;
        }
        log_var(LOG_LEVEL_VERBOSE, "mpi/pmixcpp: %s: ending the step", why.c_str());
        for (auto [job, step] : todo) kill(job, step);
    }

    // srun is done: once more if the step was ended, for a component whose tasks were launched
    // only after the first kill reached its nodes.
    void end_late_comers() {
        std::vector<std::pair<uint32_t, uint32_t>> todo;
        {
            std::lock_guard<std::mutex> lock(mutex);
            if (!ended) return;
            todo = steps;
        }
        for (auto [job, step] : todo) kill(job, step);
    }

private:
    static void kill(uint32_t job, uint32_t step) {
        if (slurm_signal_step(job, step, SIGKILL) != SLURM_SUCCESS && slurm_last_error() != ESLURM_ALREADY_DONE &&
            slurm_last_error() != ESLURM_INVALID_JOB_ID)
            log_var(LOG_LEVEL_ERROR, "mpi/pmixcpp: slurm_kill_job_step(%u, %u): %s", job, step,
                    slurm_strerror(slurm_last_error()));
    }
};

// The agent and the services of one step (the components of a heterogeneous step share it).
struct srun_side {
    std::unique_ptr<srun_agent> agent;
    std::unique_ptr<alloc_bridge> bridge;
    std::unique_ptr<spawn::spawn_launcher> launcher;  // PMIx_Spawn: runs srun as the user
    std::unique_ptr<session::job_store> job_store;    // session-range published data
    std::unique_ptr<fabric::fabric_service> fabric;   // PMIx_Fabric_register: Slurm's switch topology
    std::unique_ptr<xstep::router> xstep_router;      // messages between the job's steps
    std::shared_ptr<step_components> components;
    std::string nspace;

    // Start the agent (reports and lost nodes end the step's components) and build every
    // service for `job` (namespace job `ns_job`); `step_env` gets what the step's environment
    // needs (agent port, job end, node groups). A step started by PMIx_Spawn tells
    // the parent's srun which step it is. The services are registered in the agent's table by
    // the caller, before the step's daemons can connect.
    static Result<std::unique_ptr<srun_side>> start(const slurm_mpi_step_info *job, const plugin_config &cfg,
                                                    uint32_t ns_job, const std::string &nspace, env_list *step_env);
    // The step is over: stop the agent and the services in order; srun's exit code.
    int stop();
};

}  // namespace pmixcpp
