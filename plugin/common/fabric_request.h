// The step's fabric for PMIx_Fabric_register / _update in application processes. srun's side
// (which runs as the user and has Slurm's API) loads Slurm's switch topology once, on a thread of
// its own, and computes the cost matrix (plugin/sched/fabric_cost.h) the first time a process of
// the step asks; an update reloads it. Node servers carry requests there through srun's agent (the
// allocation channel, magic "PXFB") and hand the answer to the client unchanged. No Slurm here:
// the glue supplies the loader.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "../sched/fabric_cost.h"
#include "../sched/fabric_wire.h"
#include "session_store.h"
#include "status.h"

namespace pmixcpp::fabric {

inline constexpr uint32_t kFabricMagic = 0x42465850;  // "PXFB"

// The client request (plugin/sched/fabric_wire.h).
using sched::decode_client_request;
using sched::encode_client_request;
using sched::fabric_op;
using sched::fabric_request;

// Agent body: u32 magic, then the client request.
Result<std::vector<uint8_t>> encode_agent_request(const fabric_request &r);
bool is_fabric_body(std::span<const uint8_t> body);
Status decode_agent_request(std::span<const uint8_t> body, fabric_request *r);
// The agent's reply: session::agent_reply (i32 status, str message, bytes body); body = the
// encoded wire::info_reply of sched::matrix_to_results, which the server relays as its reply.

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
    explicit fabric_service(loader_fn load) : _load(std::move(load)) {}
    ~fabric_service();
    fabric_service(const fabric_service &) = delete;
    fabric_service &operator=(const fabric_service &) = delete;

    // Answer the agent connection `fd` (owned from here on) on a thread of its own.
    void submit(int fd, std::vector<uint8_t> body);
    // The answer to one request (also for tests).
    session::agent_reply handle(const fabric_request &r);
    // The switch records: loaded on first use; `reload` asks Slurm again.
    Result<std::vector<sched::switch_record>> records(bool reload);

private:
    loader_fn _load;
    std::mutex _mutex;  // the records
    bool _loaded = false;
    std::vector<sched::switch_record> _records;
    std::mutex _threads_mutex;
    std::vector<std::thread> _threads;
};

}  // namespace pmixcpp::fabric
