// The scheduler-mode server context of libpmix: what PMIx_server_init(PMIX_SERVER_SCHEDULER)
// creates. It owns the registered fabrics (cost matrices), the delivered inventories, the
// topology poller thread and this context's own fabric event handlers. Not a full PMIx server:
// it has no clients and no connection to any step.
#pragma once

#include <pmix.h>
#include <pmix_server.h>

#include <algorithm>
#include <cstddef>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "fabric/fabric_cost.h"
#include "status.h"
#include "value.h"

// Extension keys of the scheduler context.
#define PMIXCPP_SCHED_POLL      "pmixcpp.sched.poll"    /* uint32_t seconds between topology polls (0 = never) */
#define PMIXCPP_FABRIC_EVHDLR   "pmixcpp.fab.evhdlr"    /* pointer: pmix_notification_fn_t for fabric events */
#define PMIXCPP_INV_ALL         "pmixcpp.inv.all"       /* bool: collect_inventory returns the delivered ones */
#define PMIXCPP_INV_NODES       "pmixcpp.inv.nodes"     /* pmix_data_array_t* of PMIXCPP_INV_NODE */
#define PMIXCPP_INV_NODE        "pmixcpp.inv.node"      /* pmix_data_array_t*: one node's inventory */

namespace pmixcpp::sched {

struct fabric_handler {
    size_t ref = 0;
    pmix_notification_fn_t fn = nullptr;
    std::vector<pmix_status_t> codes;  // empty = both fabric events
    bool wants(pmix_status_t code) const {
        return codes.empty() || std::find(codes.begin(), codes.end(), code) != codes.end();
    }
};

// A registered fabric (pmix_fabric_t::module).
struct fabric_state {
    std::string plane;
    cost_matrix matrix;
    std::vector<uint16_t *> rows;  // PMIX_FABRIC_COST_MATRIX (or the seed layout's commcost) points here
    std::vector<fabric_handler> handlers;
    bool seed_layout = false;      // the caller's struct is seed_fabric (below), not pmix_fabric_t
};

// pmix_fabric_t as the PMIx standard v4.0's scheduler chapter defines it (a program compiled with
// PMIXCPP_FABRIC_SEED_LAYOUT, see pmix_common.h): commcost/nverts where OpenPMIx 4.2.2 has
// info/ninfo. The library is built with the 4.2.2 layout; the *_seed entry points hand it the
// caller's struct as a pmix_fabric_t and fabric_state::seed_layout says how to fill it.
struct seed_fabric {
    char *name;
    size_t index;
    uint16_t **commcost;
    uint32_t nverts;
    void *module;
};
static_assert(sizeof(seed_fabric) == sizeof(pmix_fabric_t));
static_assert(offsetof(seed_fabric, name) == offsetof(pmix_fabric_t, name));
static_assert(offsetof(seed_fabric, index) == offsetof(pmix_fabric_t, index));
static_assert(offsetof(seed_fabric, commcost) == offsetof(pmix_fabric_t, info));
static_assert(offsetof(seed_fabric, nverts) == offsetof(pmix_fabric_t, ninfo));
static_assert(offsetof(seed_fabric, module) == offsetof(pmix_fabric_t, module));

// Free the matrix fields of `fabric` in the given layout (info/ninfo, or commcost/nverts, which
// point into a fabric_state and are only cleared) and set them empty.
void clear_fabric_fields(pmix_fabric_t *fabric, bool seed_layout);

// Make `matrix` st's matrix and point fabric->info at it: PMIX_FABRIC_COST_MATRIX (PMIX_POINTER to uint16_t *rows[n]),
// PMIX_FABRIC_NUM_VERTICES, PMIX_FABRIC_PLANE, PMIX_FABRIC_INDEX (= fabric->index); the previous
// info is freed. With st->seed_layout: commcost = rows, nverts = n instead. On failure nothing changes. Shared by the scheduler context and the client's
// PMIx_Fabric_register.
Status fill_fabric_info(pmix_fabric_t *fabric, fabric_state *st, cost_matrix matrix);

// Free what registration put into `fabric` (its fabric_state, info and name); the struct stays.
void release_fabric(pmix_fabric_t *fabric);

class scheduler_context {
public:
    scheduler_context(bool scheduler, unsigned poll_seconds);
    ~scheduler_context();

    bool scheduler() const { return _scheduler; }

    Status register_fabric(pmix_fabric_t *fabric, const pmix_info_t *dirs, size_t ndirs, bool seed_layout = false);
    Status deregister_fabric(pmix_fabric_t *fabric);
    Status vertex_info(pmix_fabric_t *fabric, uint32_t i, pmix_value_t *vertex, char **nodename);
    Status vertex_index(pmix_fabric_t *fabric, const pmix_value_t *vertex, uint32_t *i);

    Status deliver_inventory(const pmix_info_t *info, size_t ninfo);
    // All delivered inventories as PMIXCPP_INV_NODES.
    Result<InfoArray> delivered_inventories();

    // A handler for PMIX_FABRIC_UPDATE_PENDING and/or PMIX_FABRIC_UPDATED (`codes`; empty =
    // both) of every fabric of this context: PMIx_Register_event_handler in a scheduler process
    // (client/events.cc). Refs share one counter with the fabrics' own handlers.
    size_t add_handler(pmix_notification_fn_t fn, std::vector<pmix_status_t> codes = {});
    bool remove_handler(size_t ref);

    // One poll now (tests, and the poller thread): reload the topology, and if it changed, run
    // the update protocol. Returns true if the matrices were updated.
    Result<bool> poll_once();

private:
    Status ensure_topology();  // _lock held
    Status fill(pmix_fabric_t *fabric, fabric_state *st);  // _lock held
    std::map<std::string, std::vector<nic>> nics_by_node() const;  // _lock held
    void notify_all(pmix_status_t code, const std::vector<std::pair<pmix_fabric_t *, fabric_handler>> &targets);
    void poller();
    void start_poller();  // _lock held

    const bool _scheduler;
    const unsigned _poll_seconds;
    std::mutex _lock;
    std::mutex _update_lock;  // one update at a time
    std::condition_variable _wake;
    bool _stop = false;
    std::thread _thread;
    bool _have_topology = false;
    std::vector<switch_record> _topology;
    std::set<pmix_fabric_t *> _fabrics;
    std::map<std::string, InfoArray> _inventories;  // by node name
    std::vector<fabric_handler> _handlers;
    size_t _next_ref = 1;
    size_t _next_fabric_index = 1;
};

// The process's context (nullptr before PMIx_server_init / after PMIx_server_finalize).
scheduler_context *current_context();

}  // namespace pmixcpp::sched
