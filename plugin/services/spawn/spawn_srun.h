// The spawn launcher (srun side, as the user): runs `srun --jobid=<job> --mpi=pmixcpp ...` for
// a spawn request (spawn_plan.h), learns the new step's namespace from the child srun's plugin
// (through an inherited pipe named by PMIXCPP_SPAWN_REPORT_FD) and answers; a failure before the
// step exists comes back as a status. Watches of spawned steps, the end of the children.
#pragma once

#include <sys/socket.h>

#include <atomic>
#include <condition_variable>
#include <map>
#include <cstdint>
#include <functional>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "../../agent/proto/responder.h"
#include "../../agent/srun/service_table.h"
#include "../../common/workers.h"
#include "spawn_codec.h"
#include "spawn_plan.h"
#include "status.h"

namespace pmixcpp::spawn {

// Times of spawn_launcher::end_children(), in milliseconds.
struct child_end_times {
    int settle_ms = 1000;  // children that are finishing anyway end without a signal
    int term_ms = 3000;    // SIGTERM, then SIGKILL after this
    int kill_ms = 5000;    // SIGKILL of the step, then of the child srun itself after this
};

// srun side: one thread per request (bounded), answers on the request's connection.
class spawn_launcher {
public:
    // Signal a spawned step (job, step) with the user's authority (Slurm: slurm_kill_job_step).
    using step_killer = std::function<void(uint32_t job, uint32_t step, int sig)>;
    using end_times = child_end_times;
    explicit spawn_launcher(uint32_t job_id, alloc_resolver resolve = {}, step_killer kill = {},
                            end_times t = end_times())
        : _job_id(job_id), _resolve(std::move(resolve)), _kill(std::move(kill)), _times(t) {}
    // The parent step is over (every task ended): end_children(), then wait until every child
    // srun ended (a parent srun outlives its spawned steps, so the allocation is not given up
    // under them: separated ones end on their own or with the job), then join the threads.
    ~spawn_launcher();
    // Takes the call (answered through `answer`) and the body of a spawn request
    // (service spawn) or of a watch (service spawn_watch).
    void submit(agent::responder answer, std::vector<uint8_t> body);
    void submit_watch(agent::responder answer, std::vector<uint8_t> body);
    // Its handlers in srun's agent's service table, under its ids (../service_ids.h).
    Status register_in(agent::service_table &table);
    // Terminate the spawned steps still running that were not spawned with
    // PMIX_SPAWN_CHILD_SEP=true, as the standard asks when the parent job ends: after `settle_ms`
    // SIGTERM to the step, after `term_ms` SIGKILL, after `kill_ms` SIGKILL to its srun.
    // Returns how many steps had to be signalled.
    size_t end_children();

private:
    struct child {
        int pid = -1;
        uint32_t job = 0, step = 0;
        bool separate = false;  // PMIX_SPAWN_CHILD_SEP
    };
    void start(agent::responder answer, std::vector<uint8_t> body, bool is_watch);
    void handle(agent::responder answer, std::vector<uint8_t> body);
    void watch(agent::responder answer, std::vector<uint8_t> body);
    agent_spawn_reply launch(const agent_spawn_request &r);
    std::vector<std::pair<std::string, child>> linked_children();  // under _mutex

    uint32_t _job_id;
    alloc_resolver _resolve;
    step_killer _kill;
    end_times _times;
    std::mutex _mutex;
    std::condition_variable _ended_cv;
    std::map<std::string, child> _running;  // child nspace -> its srun and step
    std::map<std::string, int> _ended;      // child nspace -> exit code of its srun
    // Declared last, closed first (the destructor): their threads use everything above.
    bounded_workers _requests{kServiceThreads};  // spawn requests
    bounded_workers _watchers{kServiceThreads};  // watches (PXSW), answered when their step ends
    bounded_workers _reapers{kServiceThreads};   // one per child srun, until it ends
};

}  // namespace pmixcpp::spawn
