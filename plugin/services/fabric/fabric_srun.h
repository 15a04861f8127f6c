// The step's fabric for PMIx_Fabric_register / _update in application processes. srun's side
// (which runs as the user and has Slurm's API) loads Slurm's switch topology once, on a thread of
// its own, and computes the cost matrix (shared/fabric/fabric_cost.h) the first time a process of
// the step asks; an update reloads it. Node servers carry requests there through srun's agent
// (services fabric and fabric_watch of plugin/agent/proto/agent_proto.h) and hand the answer to
// the client unchanged. No Slurm here: the glue supplies the loader.
#pragma once

#include <condition_variable>
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
#include "../sessions/session_codec.h"
#include "fabric/fabric_cost.h"
#include "fabric_codec.h"
#include "status.h"

namespace pmixcpp::fabric {

std::vector<uint32_t> node_groups(const std::vector<sched::switch_record> &records,
                                  const std::vector<std::string> &step_nodes);

// srun side. Thread safe.
class fabric_service {
public:
    using loader_fn = std::function<Result<std::vector<sched::switch_record>>()>;
    // poll_sec: how often watches reload the topology (0 = watches are refused).
    explicit fabric_service(loader_fn load, uint32_t poll_sec = 10) : _load(std::move(load)), _poll_sec(poll_sec) {}
    ~fabric_service();
    fabric_service(const fabric_service &) = delete;
    fabric_service &operator=(const fabric_service &) = delete;

    // Answer the call (`answer`) on a thread of its own: a request
    // (service fabric) or a watch (service fabric_watch).
    void submit(agent::responder answer, std::vector<uint8_t> body);
    void submit_watch(agent::responder answer, std::vector<uint8_t> body);
    // Its handlers in srun's agent's service table, under its ids (../service_ids.h).
    Status register_in(agent::service_table &table);
    // The answer to one request (also for tests).
    session::agent_reply handle(const fabric_request &r);
    // The switch records: loaded on first use; `reload` asks Slurm again.
    Result<std::vector<sched::switch_record>> records(bool reload);
    // The answer to a watch (encode_watch): waits until the generation differs from `known` or
    // the service ends (also for tests).
    session::agent_reply watch(uint64_t known);

private:
    void start(agent::responder answer, std::vector<uint8_t> body, bool is_watch);
    void poll_loop();
    // Under _mutex: take freshly loaded records, counting a change.
    void take_records(std::vector<sched::switch_record> &&recs);

    loader_fn _load;
    uint32_t _poll_sec;
    std::mutex _mutex;  // the records, the generation, the poller
    std::condition_variable _changed;
    bool _loaded = false;
    bool _stopping = false;
    uint64_t _generation = 0;  // 1 once loaded, +1 per change
    std::thread _poller;       // from the first watch on
    std::vector<sched::switch_record> _records;
    bounded_workers _requests{kServiceThreads};  // one per request or watch; closed first at the end
};

}  // namespace pmixcpp::fabric
