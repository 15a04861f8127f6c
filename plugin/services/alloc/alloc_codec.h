// Allocation requests in plain C++: the PMIx_Allocation_request infos checked and turned into a
// `spec`, and the messages between a node's server and the srun-side bridge that executes them
// (plugin/slurm/alloc_bridge.h). Knows nothing of Slurm and does no I/O, so it is unit tested.
//
// Which infos count (PMIx 4 allocation attributes; a required info is one with PMIX_INFO_REQD):
//   PMIX_ALLOC_REQ_ID    string   the caller's name for the request (CANCEL and status queries)
//   PMIX_ALLOC_ID        string   an earlier request or allocation this one refers to
//   PMIX_ALLOC_NUM_NODES number   nodes (> 0)
//   PMIX_ALLOC_NODE_LIST string   Slurm host list of the nodes wanted (or released)
//   PMIX_ALLOC_NUM_CPUS  number   CPUs in all (> 0)
//   PMIX_ALLOC_MEM_SIZE  number   memory per node in MB (> 0)
//   PMIX_ALLOC_TIME      number   seconds: time limit (NEW), extra time (EXTEND), lease (RELEASE)
//   PMIX_ALLOC_QUEUE     string   Slurm partition (NEW)
// PMIX_ALLOC_NUM_CPU_LIST, PMIX_ALLOC_CPU_LIST, PMIX_ALLOC_NETWORK/FABRIC and their sub-attributes
// and any other pmix.alloc.* key cannot be honoured through Slurm's job description: a required
// one refuses the request (PMIX_ERR_NOT_SUPPORTED), an optional one is ignored and named in
// spec::ignored. A value of the wrong type or out of range is PMIX_ERR_BAD_PARAM. Other keys
// (pmix.timeout, ...) are left alone.
#pragma once

#include <pmix_common.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "status.h"
#include "value.h"
#include "wire/codec.h"

namespace pmixcpp::alloc {

// pmixcpp's own attribute (bool, NEW only): the allocation outlives the step that asked for it
// and ends with the requesting job at the latest (its time limit never passes the job's).
inline constexpr const char *kAllocKeep = "pmixcpp.alloc.keep";

enum class directive : uint8_t {
    new_allocation = PMIX_ALLOC_NEW,
    extend = PMIX_ALLOC_EXTEND,
    release = PMIX_ALLOC_RELEASE,
    reacquire = PMIX_ALLOC_REAQUIRE,
    cancel = PMIX_ALLOC_REQ_CANCEL,
};
const char *to_string(directive d);

struct spec {
    directive dir = directive::new_allocation;
    std::string request_id;  // PMIX_ALLOC_REQ_ID
    std::string alloc_id;    // PMIX_ALLOC_ID
    std::optional<uint64_t> num_nodes;
    std::string node_list;
    std::optional<uint64_t> num_cpus;
    std::optional<uint64_t> mem_mb;
    std::optional<uint32_t> time_sec;
    std::string queue;
    std::vector<std::string> ignored;  // optional infos that cannot be honoured

    bool wants_resources() const { return num_nodes.has_value() || !node_list.empty() || num_cpus.has_value(); }
};

// Check the directive and the infos (see the table above). Nothing is sent anywhere.
Result<spec> parse_spec(uint8_t directive, const pmix_info_t *infos, size_t ninfos);

// A short description for logs: "EXTEND nodes=2 time=60s".
std::string describe(const spec &s);

// --- server <-> srun-side bridge ------------------------------------------------------------
// The node's server hands an encoded agent_request to its host (the Slurm glue), which carries it
// to srun's agent; the bridge there answers with an encoded agent_reply.

enum class agent_op : uint8_t {
    allocate = 1,  // directive + the caller's infos
    query = 2,     // keys + qualifiers (PMIX_QUERY_ALLOC_STATUS, PMIX_TIME_REMAINING)
};

struct agent_request {
    agent_op op = agent_op::allocate;
    std::string nspace;  // requester
    uint32_t rank = 0;
    std::string node;    // the requester's node (never released)
    uint8_t directive = 0;
    std::vector<std::string> keys;
    InfoArray infos;
};

struct agent_reply {
    pmix_status_t status = PMIX_SUCCESS;
    std::string message;
    InfoArray results;
};

Status encode(wire::Writer &w, const agent_request &m);
Status decode(wire::Reader &r, agent_request *m);
Status encode(wire::Writer &w, const agent_reply &m);
Status decode(wire::Reader &r, agent_reply *m);
Result<std::vector<uint8_t>> encode_request(const agent_request &m);
Result<std::vector<uint8_t>> encode_reply(const agent_reply &m);

// --- building result infos ------------------------------------------------------------------
// Collects (key, value) pairs and turns them into a C-owned info array.
class info_builder {
public:
    info_builder() = default;
    ~info_builder();
    info_builder(const info_builder &) = delete;
    info_builder &operator=(const info_builder &) = delete;

    info_builder &add_string(const char *key, const std::string &value);
    info_builder &add_u32(const char *key, uint32_t value);
    info_builder &add_u64(const char *key, uint64_t value);
    info_builder &add_size(const char *key, size_t value);
    info_builder &add_status(const char *key, pmix_status_t value);
    info_builder &add_bool(const char *key, bool value);
    // Takes a copy of the value.
    info_builder &add_value(const char *key, const pmix_value_t &value);
    size_t size() const { return _infos.size(); }
    InfoArray take();

private:
    info_builder &add(const char *key, const void *data, pmix_data_type_t type);
    std::vector<pmix_info_t> _infos;
};

// The first info with `key`, or nullptr.
using pmixcpp::find_info;  // shared/value.h
// A string-valued info (PMIX_STRING); nullopt if absent or of another type.
std::optional<std::string> info_string(const InfoArray &a, const char *key);

}  // namespace pmixcpp::alloc
