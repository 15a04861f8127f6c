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

#include "../agent/stepd/workers.h"
#include "fabric/fabric_cost.h"
#include "fabric/fabric_wire.h"
#include "session_store.h"
#include "../agent/proto/responder.h"
#include "status.h"

namespace pmixcpp::fabric {

inline constexpr uint32_t kFabricMagic = 0x42465850;  // "PXFB"

// The client request (shared/fabric/fabric_wire.h).
using sched::decode_client_request;
using sched::encode_client_request;
using sched::fabric_op;
using sched::fabric_request;

// Agent body: u32 magic, then the client request.
Result<std::vector<uint8_t>> encode_agent_request(const fabric_request &r);
// A request or a watch (below).
bool is_fabric_body(std::span<const uint8_t> body);
Status decode_agent_request(std::span<const uint8_t> body, fabric_request *r);
// The agent's reply: agent::reply (i32 status, str message, bytes body); body = the
// encoded wire::info_reply of sched::matrix_to_results, which the server relays as its reply.

// Fabric updates for application processes: after the first successful PMIx_Fabric_register on
// its node, a server watches srun's side: body u32 magic "PXFW", u64 the topology generation it
// knows (0 = none yet). srun answers (agent_reply body: u64 generation) once its generation
// differs (at once for 0); the server then raises PMIX_FABRIC_UPDATED for its local processes
// (unless it knew none yet) and watches again. The generation counts changes of Slurm's switch
// records, which srun polls (slurm_load_topo, as the user) every PMIxCppFabricPoll seconds from
// the first watch on: nothing is polled for a step that never registers a fabric.
inline constexpr uint32_t kFabricWatchMagic = 0x57465850;  // "PXFW"
std::vector<uint8_t> encode_watch(uint64_t known_generation);
bool is_watch_body(std::span<const uint8_t> body);
Status decode_watch(std::span<const uint8_t> body, uint64_t *known_generation);

// The tree fence follows the switch topology (coll/engines.h): srun computes each step node's
// group (its leaf switch, numbered in order of first appearance among the step's nodes; a node
// outside the tree is a group of its own) and hands it to slurmstepd in this variable, run-length
// encoded: "g[*count],..." in step node order, e.g. "0*2,1*2".
inline constexpr const char *kNodeGroupsEnv = "SLURM_PMIXCPP_NODE_GROUPS";
// Empty when the topology has no switch, the tree cannot be built, or every node is in one group.
std::vector<uint32_t> node_groups(const std::vector<sched::switch_record> &records,
                                  const std::vector<std::string> &step_nodes);
std::string encode_node_groups(const std::vector<uint32_t> &groups);
// PMIX_ERR_BAD_PARAM unless the text describes exactly `nnodes` groups.
Result<std::vector<uint32_t>> decode_node_groups(const std::string &text, size_t nnodes);

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
