// Allocation requests, Slurm side. Two halves:
//
// alloc_bridge (runs in srun, as the user): takes the requests that the step's node servers send
// through srun's agent (service alloc of plugin/agent/proto/agent_proto.h) and executes them with the Slurm API from
// srun's own process, so every RPC carries the user's munge credential and slurmctld applies the
// user's permissions and limits. Nothing is ever asked of slurmctld from slurmstepd (root).
//   NEW        slurm_allocate_resources: a separate allocation with its own job id
//              (nodes, CPUs, memory per node, time, node list, partition); pending until Slurm
//              grants it. The answer carries PMIX_ALLOC_ID, PMIX_JOBID (the new Slurm job id),
//              PMIX_ALLOC_NODE_LIST and PMIX_ALLOC_TIME. It belongs to the step that asked and
//              ends with it (unless asked with pmixcpp.alloc.keep = true: then it ends when the
//              job ends, by contrib/pmixcpp-epilog-slurmctld); its time limit is PMIX_ALLOC_TIME
//              or, at most and by default, what is left of the requesting job's. Charged to the
//              job's account and QOS. Listed by PMIX_QUERY_ALLOC_STATUS, given back by RELEASE
//              with its PMIX_ALLOC_ID.
//   EXTEND     with resources: Slurm's job expansion. A helper allocation with
//              dependency expand:<job>, excluding every node the job holds (ExcNodeList) and
//              charged like the job (pending until its resources are free), then the
//              documented merge: update the helper NumNodes=0 (its nodes move into the job),
//              update the job NumNodes=ALL. Needs SchedulerParameters=permit_job_expansion.
//              With PMIX_ALLOC_TIME: slurm_update_job(time_limit = current + time); slurmctld
//              grants or refuses by its own rules (a user may not raise a limit unless an
//              operator): the refusal comes back with Slurm's reason.
//   RELEASE    shrink the job (slurm_update_job with the nodes it keeps) by a node list or a
//              count; never a node of the requesting step (which includes the requester's
//              node) nor the batch host. With PMIX_ALLOC_TIME the nodes are lent for that many
//              seconds: REACQUIRE may take them back. With PMIX_ALLOC_ID of a NEW allocation:
//              that allocation is given back (slurm_kill_job).
//   REACQUIRE  ask again, through the expansion path, for the nodes lent by a RELEASE
//              (PMIX_ALLOC_ID of that RELEASE, or every lease of the step).
//   CANCEL     withdraw an open request (PMIX_ALLOC_ID / PMIX_ALLOC_REQ_ID), or all of the
//              requester's open ones: its pending Slurm job is cancelled and it ends with
//              PMIX_ERR_JOB_CANCELED.
// One worker thread does the Slurm calls; pending requests are polled every second
// (slurm_load_job); pmix.timeout bounds how long one may stay pending (PMIX_ERR_TIMEOUT).
// A request Slurm refuses ends at once with the Slurm error text.
// Its answer is the body of the agent's reply. slurmstepd's side is plugin/slurm/server_ports.h.
#pragma once

#include <sys/socket.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "../services/alloc/alloc_codec.h"
#include "../services/alloc/alloc_srun.h"
#include "../agent/proto/responder.h"
#include "../agent/srun/service_table.h"
#include "../server/alloc.h"
#include "status.h"

namespace pmixcpp {

struct job_snapshot;  // a Slurm job as slurm_load_job shows it (alloc_bridge.cc)

class alloc_bridge {
public:
    struct job_context {
        uint32_t job_id = 0;
        uint32_t step_id = 0;
        std::vector<std::string> step_nodes;  // nodes of the srun step (never released)
    };
    static Result<std::unique_ptr<alloc_bridge>> start(job_context ctx);
    ~alloc_bridge();  // stop(): open requests are answered PMIX_ERR_JOB_CANCELED (Slurm jobs cancelled)
    alloc_bridge(const alloc_bridge &) = delete;
    alloc_bridge &operator=(const alloc_bridge &) = delete;

    // From the agent's thread: one request body; the bridge answers it through `answer`.
    void submit(agent::responder answer, std::vector<uint8_t> body);
    // Its handler in srun's agent's service table, under its id (services/service_ids.h).
    Status register_in(agent::service_table &table);
    void stop();

    // PMIx_Spawn into an allocation (PMIX_SPAWN_TARGET / PMIX_ALLOC_ID): the Slurm job of a NEW
    // allocation this bridge obtained and has not given back, or the step's own job for a
    // granted EXTEND / REACQUIRE. Any other id: PMIX_ERR_BAD_PARAM. Thread safe.
    Result<uint32_t> allocation_job(const std::string &alloc_id);

private:
    explicit alloc_bridge(job_context ctx);
    struct incoming {
        agent::responder answer;
        std::vector<uint8_t> body;
    };
    void run();
    void handle(incoming &&in);
    void handle_allocate(agent::responder answer, alloc::agent_request &&req);
    void handle_query(agent::responder answer, alloc::agent_request &&req);
    void poll_pending();
    void check_pending(alloc::request_record &r);
    void cap_time_limit(alloc::request_record &r, const job_snapshot &pending, const job_snapshot &owner);
    bool end_with_owner(alloc::request_record &r, const job_snapshot &started, const job_snapshot &owner);

    void do_new(alloc::request_record &r);
    void do_extend(alloc::request_record &r);
    void start_expansion(alloc::request_record &r, uint64_t nodes, const std::string &node_list,
                         std::optional<uint64_t> cpus);
    void merge_expansion(alloc::request_record &r);
    void do_release(alloc::request_record &r);
    void do_reacquire(alloc::request_record &r);
    void do_cancel(alloc::request_record &r);
    void grant_new(alloc::request_record &r);
    // End the allocation jobs of `job_id` whose requesting step no longer runs (a srun killed
    // with SIGKILL could not): run by the bridge of the job's next step, as the user.
    static void reap_orphans(uint32_t job_id);

    // Final answers.
    void grant(alloc::request_record &r, InfoArray &&extra);
    void fail(alloc::request_record &r, pmix_status_t status, const std::string &message,
              alloc::req_state to = alloc::req_state::failed);
    void answer(const agent::responder &to, const alloc::agent_reply &rep);
    InfoArray id_infos(const alloc::request_record &r);

    job_context _ctx;
    alloc::request_table _table;
    std::map<uint64_t, agent::responder> _waiters;  // waiter id -> the node server's call waiting
    uint64_t _next_waiter = 1;
    std::map<std::string, int> _timeouts;  // request id -> pmix.timeout seconds
    std::map<std::string, uint32_t> _spawn_targets;  // granted allocation id -> its Slurm job (under _mutex)
    std::map<std::string, uint32_t> _owned;  // granted NEW allocations ended with the step: id -> Slurm job
    std::set<std::string> _keep;             // NEW requests asked with pmixcpp.alloc.keep

    std::mutex _mutex;
    std::condition_variable _cv;
    std::deque<incoming> _queue;
    bool _stopping = false;
    std::thread _thread;
};

}  // namespace pmixcpp
