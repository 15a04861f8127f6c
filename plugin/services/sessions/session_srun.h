// Published data of PMIX_RANGE_SESSION (the default range): shared by every step of a job. It
// lives beside the job's srun processes (which, in a batch script or an salloc shell, run on one
// host, as the user): one directory per job, `${TMPDIR:-/tmp}/pmixcpp-u<uid>-<cluster>-job<job>/`, mode
// 0700, one file per key created with link() so a duplicate is refused atomically. Each step's
// node servers reach it through their own srun's agent (services session and connect of
// plugin/agent/proto/agent_proto.h).
// No Slurm here; the file operations run on the agent's side, on threads of their own.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <memory>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "../../agent/proto/responder.h"
#include "../../agent/srun/service_table.h"
#include "../../common/workers.h"
#include "session_codec.h"
#include "status.h"

namespace pmixcpp::session {

// The registry of the job's running steps in the job's directory `dir` (written by
// job_store::step_started / step_ended): for other srun-side readers (xstep.h).
bool step_registered(const std::string &dir, const std::string &nspace);
std::vector<std::string> registered_steps(const std::string &dir);
// Name of a job-directory entry for `s` (namespaces and keys may hold any byte): lower-case hex.
std::string hex_name(const std::string &s);

// The job's store (srun side). Thread safe; lookups that wait poll the directory.
class job_store {
public:
    // `dir` empty = the default directory for (uid, cluster, job):
    // ${TMPDIR:-/tmp}/pmixcpp-u<uid>-<cluster>-job<job>.
    static Result<std::unique_ptr<job_store>> open(uint32_t job_id, uid_t uid, const std::string &cluster,
                                                   std::string dir = {});
    ~job_store();  // joins request threads
    const std::string &dir() const { return _dir; }

    agent_reply handle(const agent_request &r);
    // srun side, taking the agent connection: answer on a thread (agent_io::send_reply_and_close)
    // a request of the store (service session) or a connect rendezvous (service connect).
    void submit(agent::responder answer, std::vector<uint8_t> body);
    void submit_rendezvous(agent::responder answer, std::vector<uint8_t> body);
    // Its handlers in srun's agent's service table, under its ids (../service_ids.h).
    Status register_in(agent::service_table &table);
    // The step `nspace` started / ended (a namespace registry for PMIx_Connect). At the end its
    // data that does not outlive it (PROC, APP) goes.
    void step_started(const std::string &nspace);
    void step_ended(const std::string &nspace);
    // One node's part of a connect/disconnect rendezvous: waits (polling) until every node of
    // every namespace of the set contributed, or the timeout.
    agent_reply rendezvous(const rendezvous_request &r);

private:
    explicit job_store(std::string dir) : _dir(std::move(dir)) {}
    void start(agent::responder answer, std::vector<uint8_t> body, bool is_rendezvous);
    void remove_orphaned_rendezvous();
    agent_reply publish(const agent_request &r);
    agent_reply lookup(const agent_request &r);
    agent_reply unpublish(const agent_request &r);
    void remove_owned(const std::string &nspace, uint32_t rank, bool proc_only, const std::vector<std::string> &keys);

    static Status private_dir(const std::string &dir, uid_t uid);

    std::string _dir;
    uid_t _uid = 0;
    std::atomic<bool> _stopping{false};
    std::mutex _mutex;
    std::atomic<int> _waiting{0};
    bounded_workers _workers{kServiceThreads};  // one per request; closed first at the end
};

}  // namespace pmixcpp::session
