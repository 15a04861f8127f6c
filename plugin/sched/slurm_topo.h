// Slurm's switch topology through libslurm's public API (slurm_load_topo), loaded with dlopen at
// run time (RTLD_GLOBAL: the Slurm plugins it loads resolve libslurm symbols globally) so that
// ordinary users of libpmix never load libslurm. No Slurm header: the layout of
// topo_info_t / topo_info_response_msg_t (slurm.h of Slurm 22.05) is mirrored in the .cc.
#pragma once

#include <vector>

#include "fabric_cost.h"
#include "status.h"

namespace pmixcpp::sched {

// The current switch records. Source, in order:
//   PMIXCPP_TOPOLOGY_FILE=<topology.conf>  read and parsed (tests, sites without slurmctld)
//   libslurm: PMIXCPP_LIBSLURM=<path> or the first of libslurm.so.38, libslurm.so,
//             libslurm.so.* in the usual library directories
// An empty list means Slurm has no switch topology (topology/none).
Result<std::vector<switch_record>> load_topology();

}  // namespace pmixcpp::sched
