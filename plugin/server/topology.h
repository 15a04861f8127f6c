// What the server reports about this node's hardware, read once with hwloc (in prefork, before
// any task starts, so no client waits for it).
#pragma once

#include <string>

#include "status.h"

namespace pmixcpp::server {

struct node_topology {
    // The CPUs the step's tasks may run on, as an hwloc list ("0-3"): slurmstepd's own binding
    // intersected with the allowed cpuset. Tasks are treated as unbound (TaskPlugin=task/none):
    // every local rank gets this set.
    std::string cpuset;
    // OpenMPI-style locality of that cpuset: "SK0:L30:L20-1:L10-1:CR0-1:HT0-3" (logical indices
    // of the packages, caches, cores and hardware threads it covers; absent levels are skipped).
    std::string locality;
    double load_ms = 0;  // how long hwloc took
};

// Load the topology and summarise it. Fails only if hwloc cannot load at all.
Result<node_topology> load_node_topology();

}  // namespace pmixcpp::server
