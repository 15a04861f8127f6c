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

// The node's topology as hwloc XML (PMIX_LOCAL_TOPO), the important I/O devices (NICs, GPUs,
// their PCI bridges) included, as a process of the step sees the machine: what an MPI library
// would otherwise discover in every process (OpenMPI loads this instead). Costs a full hwloc
// discovery with I/O (about 12 ms here, more on nodes with many PCI devices): made once per
// step, when a client first asks for it, off the server's loop.
Result<std::string> export_node_topology_xml();

}  // namespace pmixcpp::server
