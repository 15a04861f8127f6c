// slurmstepd: the Slurm side of the directory route (plugin/net/directory.h): where this node's
// socket of the step lives, and the sending of a message to other nodes of the step through
// slurmd's forwarding (slurm_forward_data).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "status.h"

namespace pmixcpp::slurm_glue {

struct directory_place {
    std::string local_dir;  // this node's spool directory (SlurmdSpoolDir expanded for this node)
    std::string name;       // the step's socket in it
    std::string address;    // what slurm_forward_data carries: each slurmd expands it for its node
};

// Fails without a SlurmdSpoolDir.
Result<directory_place> directory_place_of(uint32_t job_id, uint32_t step_id, const char *node_name);

// Blocking: `message` to every node of `nodes` (ids into node_names), in one slurm_forward_data
// call; returns the nodes it did not reach.
std::vector<uint32_t> forward_to_nodes(const std::vector<std::string> &node_names, const std::string &address,
                                       const std::vector<uint32_t> &nodes, const std::vector<uint8_t> &message);

}  // namespace pmixcpp::slurm_glue
