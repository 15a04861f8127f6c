// The services srun's side runs for the node servers, as srun's agent carries them: every id in
// one enum, owned here, and the names the agent asks for (agent::service_names). The agent
// (plugin/agent/) knows only its own two ids (report, rendezvous) and carries these as opaque
// numbers; each service's srun side registers its handlers in srun's agent's service table under
// its ids (`register_in` of spawn_launcher, job_store, fabric_service, xstep::router, and
// slurm/alloc_bridge), and the node servers call them by these ids.
#pragma once

#include <cstdint>

#include "../agent/proto/agent_proto.h"

namespace pmixcpp::services {

// The frame header's type of a request to srun's agent. srun and slurmstepd are always the same
// build, so the numbers need only be unique; 1 and 2 are the agent's own (agent::kReport,
// agent::kRendezvous).
enum class service : uint16_t {
    alloc = 3,         // PMIx_Allocation_request / queries (alloc/alloc_codec.h, slurm/alloc_bridge.h)
    spawn = 4,         // PMIx_Spawn (spawn/spawn_codec.h)
    spawn_watch = 5,   // the end of a spawned step (spawn/spawn_codec.h encode_watch)
    session = 6,       // the job's store: publish / lookup / unpublish (sessions/session_codec.h)
    connect = 7,       // PMIx_Connect's rendezvous between steps (sessions/session_codec.h)
    fabric = 8,        // PMIx_Fabric_register / update (fabric/fabric_codec.h)
    fabric_watch = 9,  // fabric updates (fabric/fabric_codec.h encode_watch)
    xstep = 10,        // messages between the job's steps (xstep/xstep_codec.h)
};

constexpr agent::service_id id_of(service s) { return static_cast<agent::service_id>(s); }

// Their names and lanes, for srun's agent (agent::service_table::set_names) and slurmstepd's
// client of it (agent::client).
const agent::service_names &names();

}  // namespace pmixcpp::services
