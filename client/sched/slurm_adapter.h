// The Slurm adapter of the scheduler context: the only file of client/ that touches Slurm.
// Slurm's switch topology through libslurm's public API (slurm_load_topo), loaded with dlopen at
// run time (RTLD_GLOBAL: the Slurm plugins it loads resolve libslurm symbols globally) so that
// ordinary users of libpmix never load libslurm. No Slurm header: the response is read by
// slurm_topo_layout.h for the release slurm_api_version() reports (22.05 to 24.11).
#pragma once

#include <vector>

#include "fabric/fabric_cost.h"
#include "status.h"

namespace pmixcpp::sched {

// The current switch records. Source, in order:
//   PMIXCPP_TOPOLOGY_FILE=<topology.conf>  read and parsed (tests, sites without slurmctld)
//   libslurm: PMIXCPP_LIBSLURM=<path> or the first of libslurmfull.so (in the directory pmixcpp
//             was built against, then Slurm's usual ones; 23.11 on needs it), libslurm.so.42
//             (24.11) ... .38 (22.05), libslurm.so, libslurm.so.* in the usual library directories
// PMIX_ERR_NOT_SUPPORTED for a release whose records are not known (nothing is asked then).
// Slurm without a switch topology (topology/none, or an empty PMIXCPP_TOPOLOGY_FILE): the flat
// cluster, one leaf switch "flat" (fabric_cost.h flat_topology) holding every node of slurm.conf
// ($SLURM_CONF, else /etc/slurm/slurm.conf); PMIX_ERR_NOT_AVAILABLE if that file cannot be read.
Result<std::vector<switch_record>> load_topology();

}  // namespace pmixcpp::sched
