// The allocation requests of one step as the srun-side bridge tracks them: ids, an explicit state
// machine, who asked, which Slurm job serves each one, and the nodes a RELEASE lent with a lease
// (for REACQUIRE). No I/O, no Slurm: the bridge drives it and tests check it.
//
//   queued ──> pending ──> granted
//     │           │──────> failed
//     │           └──────> cancelled
//     └──> granted | failed | cancelled
// queued: accepted, nothing asked of Slurm yet; pending: Slurm holds a job for it that waits for
// resources. granted, failed and cancelled are final.
#pragma once

#include <pmix_common.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "alloc_codec.h"
#include "status.h"

namespace pmixcpp::alloc {

enum class req_state : uint8_t { queued, pending, granted, failed, cancelled };
const char *to_string(req_state s);
bool is_final(req_state s);
bool can_transition(req_state from, req_state to);

using alloc_clock = std::chrono::steady_clock;

struct request_record {
    std::string id;          // PMIX_ALLOC_ID given back to the caller: "<job>.<n>"
    spec what;
    std::string requester;   // "<nspace>:<rank>"
    req_state state = req_state::queued;
    uint32_t slurm_job = 0;  // the Slurm job serving it: new allocation or expansion helper
    std::string node_list;   // granted nodes (NEW: the allocation's; EXTEND/REACQUIRE: the job's after)
    std::vector<std::string> released;  // RELEASE: the nodes given back
    std::string added;                  // EXTEND/REACQUIRE: the nodes the job gained
    uint32_t time_limit_min = 0;        // EXTEND with time: the new limit
    pmix_status_t status = PMIX_SUCCESS;
    std::string message;     // why it failed or was cancelled
    uint64_t waiter = 0;     // the bridge's handle of the caller waiting for the answer (0 = none)
    alloc_clock::time_point created{};
};

struct lease {
    std::string id;  // the RELEASE request's id
    std::vector<std::string> nodes;
    alloc_clock::time_point until{};
};

class request_table {
public:
    explicit request_table(std::string id_prefix, size_t keep_final = 256)
        : _prefix(std::move(id_prefix)), _keep_final(keep_final) {}

    // Accept a request. A caller's PMIX_ALLOC_REQ_ID must be unique among the requests not yet
    // final (PMIX_ERR_EXISTS).
    Result<request_record *> add(spec what, const std::string &requester, alloc_clock::time_point now);
    // By our id, else by the caller's PMIX_ALLOC_REQ_ID (the newest one).
    request_record *find(const std::string &id);
    request_record *find_by_job(uint32_t slurm_job);
    // Checked transition; a final state records status and message.
    Status transition(request_record &r, req_state to, pmix_status_t status = PMIX_SUCCESS,
                      const std::string &message = {});
    // Not final (queued or pending), oldest first; requester empty = everyone's.
    std::vector<request_record *> open_requests(const std::string &requester = {});
    // Every request of `requester` still remembered, oldest first.
    std::vector<const request_record *> of(const std::string &requester) const;
    size_t size() const { return _records.size(); }

    // A RELEASE with a lease: remember its nodes until `until`.
    void add_lease(const std::string &id, std::vector<std::string> nodes, alloc_clock::time_point until);
    // Take the nodes of lease `id` (empty = every lease) that have not expired; expired ones are
    // dropped. The taken leases are removed.
    std::vector<std::string> take_leases(const std::string &id, alloc_clock::time_point now);
    size_t lease_count() const { return _leases.size(); }

    // A line per request for PMIX_QUERY_ALLOC_STATUS: "<id> <state> job=<j> nodes=<list> ...".
    static std::string status_line(const request_record &r);

private:
    void prune();

    std::string _prefix;
    size_t _keep_final;
    uint64_t _next = 1;
    std::deque<std::unique_ptr<request_record>> _records;  // creation order
    std::vector<lease> _leases;
};

}  // namespace pmixcpp::alloc
