// The namespace's job, node and process data (the "job-data" of PROTOCOL.md): built from
// step_info and the node topology, written to <step_dir>/jobdata for clients to map read-only,
// and loaded into the server's key-value store. No Slurm, no sockets.
//
// Keys and types (job level, rank PMIX_RANK_WILDCARD):
//   pmix.nspace STRING, pmix.jobid STRING "<job>.<step>", slurm.jobid UINT32, slurm.stepid UINT32,
//   pmix.job.size UINT32, pmix.univ.size UINT32, pmix.max.size UINT32, pmix.num.nodes UINT32,
//   pmix.job.napps UINT32, pmix.app.size UINT32 (of app 0), pmix.nlist STRING "n1,n2",
//   pmix.nmap STRING "n1,n2", pmix.pmap STRING "0,1;2,3" (ranks per node, ';' between nodes),
//   pmix.anlmap STRING (PMI_process_mapping "(vector,(0,2,1))" style),
//   pmix.local.size UINT32, pmix.node.size UINT32, pmix.lpeers STRING "0,1",
//   pmix.lldr PROC_RANK, pmix.nodeid UINT32 (this node), pmix.hname STRING (this node),
//   pmix.tmpdir STRING, pmix.nsdir STRING, pmix.tdir.rmclean BOOL true, pmix.spawned BOOL false,
//   pmix.cpuset STRING (the node's cpuset for the step), pmix.lcpus STRING "<cpuset>:<ranks>".
// Process level, for EVERY rank of the namespace:
//   pmix.rank PROC_RANK, pmix.grank PROC_RANK, pmix.apprank PROC_RANK, pmix.appnum UINT32,
//   pmix.aldr PROC_RANK (the app's first rank), pmix.lrank UINT16, pmix.nrank UINT16,
//   pmix.nodeid UINT32, pmix.hname STRING (the Slurm node name), with several apps also
//   pmix.app.size UINT32 (of the rank's app), pmix.app.argv STRING (the app's command line, when known),
// Apps: the components of a heterogeneous step or the lines of --multi-prog (step_info::app_of_rank),
// else those of a step spawned with several (PMIXCPP_SPAWN_APP_SIZES, mpmd.h), else one.
// Nodes: the step's servers grouped by node name; the components of a heterogeneous step that share
// a node share its node data (local peers, local ranks, node id), although each has a server.
// and for the ranks on this node also
//   pmix.locstr STRING, pmix.cpuset STRING, pmix.pdir STRING (<step_dir>/rank.<r>).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "../common/step_info.h"
#include "topology.h"
#include "wire/job_layout.h"
#include "wire/messages.h"

namespace pmixcpp::server {

// The full form lists every rank (O(ranks) on every node). The compact form lists this node's
// ranks only and describes every rank in the job-level key wire::kJobLayoutKey
// (wire/job_layout.h), leaving out pmix.pmap (O(ranks): readers make it from the layout when
// asked); what a Get answers from either is the same (tests/server/test_job_layout.cc).
enum class jobdata_form { full, compact };

Result<std::vector<wire::jobdata_entry>> build_jobdata(const step_info &step, const node_topology &topo,
                                                       jobdata_form form = jobdata_form::full);

// The layout a compact form holds (nullopt for the full form); an error if it does not decode.
Result<std::optional<wire::job_layout>> jobdata_layout(const std::vector<wire::jobdata_entry> &entries);

// The full form of compact entries: every rank, pmix.pmap back, no layout key. O(ranks): for the
// native route's REQ reply, which hands OpenPMIx clients every rank's keys.
Result<std::vector<wire::jobdata_entry>> expand_jobdata(const std::vector<wire::jobdata_entry> &compact,
                                                        const wire::job_layout &layout);

}  // namespace pmixcpp::server
