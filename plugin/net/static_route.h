// Static wire-up (transport.h): whether a step can skip the address rendezvous, and on which port.
//
// Where slurm.conf has MpiParams=ports=LO-HI, slurmctld reserves for every step a set of ports
// that is the same on all of the step's nodes and used by no other step on any of them
// (slurmctld/port_mgr.c; as many as the most tasks on one node, plus one), and hands it to the
// step as SLURM_STEP_RESV_PORTS ("12000-12004", "12000,12007"). Every slurmstepd of the step then
// knows every node's transport address without asking anyone: the node's NodeAddr from root's own
// Slurm configuration and the first reserved port (the one the daemon side takes, as OpenMPI's
// ORTE did; the others stay for the tasks).
//
// The port list reaches slurmstepd only through the step's environment, which srun (the job's
// user) builds: it is taken only if its first port lies inside root's configured range and is not
// privileged (>= 1024), and the list is well formed; anything else is refused with a reason, and
// the step uses the rendezvous. A forged port inside the range can at worst make this step fail:
// the port is then another step's, whose listener refuses us (another namespace), or nobody's.
// No I/O and no Slurm here (unit-tested: tests/net/test_static_route.cc).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "status.h"

namespace pmixcpp::net {

struct port_range {
    uint16_t lo = 0, hi = 0;
};

// The "ports=LO-HI" of an MpiParams value (other comma-separated options are ignored); fails
// without one or for a malformed or empty range.
Result<port_range> reserved_port_range(std::string_view mpi_params);

// The first port of a SLURM_STEP_RESV_PORTS value, if the value is a well-formed list of ports and
// ranges and that port lies in `allowed` and is >= 1024.
Result<uint16_t> step_static_port(std::string_view resv_ports, port_range allowed);

}  // namespace pmixcpp::net
