// The step's layout described compactly (PROTOCOL.md "Job data in shared memory", the layout
// key): which node each rank runs on, its rank on that node and its app, for every rank of the
// namespace, in O(segments + nodes + apps) bytes instead of one entry per rank. The job-data
// file keeps this node's ranks in full and this description for the others; a rank-level Get of
// another node's rank (pmix.hname, pmix.nodeid, pmix.lrank, pmix.nrank, pmix.appnum, ...) is
// answered from it in O(log segments).
//
// A segment describes ranks [first, first + count) laid out as Slurm's block, cyclic and plane
// distributions do: rank first + i runs on node first_node + (i / block) % nodes, with local
// rank lbase + (i / (block * nodes)) * block + i % block. One segment is a whole block, cyclic
// or plane layout; an uneven block layout takes two; an arbitrary one (a hostfile) one per run
// of consecutive ranks on one node. App runs do the same for apps: ranks [first, first + count)
// belong to app `app` with app ranks app_rank, app_rank + 1, ...
//
// Wire form (little-endian, wire/codec.h): u32 version 1, string nspace, u32 nranks,
// u32 nnodes, nnodes x string, u32 nsegments, nsegments x 6 u32 (first count first_node nodes
// block lbase), u32 napps, napps x (u32 size, u32 leader, string argv), u32 nruns, nruns x 4 u32
// (first count app app_rank). decode() trusts nothing: segments and runs must tile 0..nranks-1
// in order and every node, app and local rank they name must exist, else PMIX_ERR_UNPACK_FAILURE.
#pragma once

#include <pmix_common.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "status.h"
#include "value.h"

namespace pmixcpp::wire {

// The job-level key of the job-data file that holds the layout (a PMIX_BYTE_OBJECT); never
// shown to a Get.
inline constexpr const char *kJobLayoutKey = "pmixcpp.jlayout";

struct job_layout {
    struct segment {
        uint32_t first = 0, count = 0, first_node = 0, nodes = 1, block = 1, lbase = 0;
    };
    struct app {
        uint32_t size = 0, leader = 0;
        std::string argv;  // "" = not known
    };
    struct app_run {
        uint32_t first = 0, count = 0, app = 0, app_rank = 0;
    };
    struct place {
        uint32_t node = 0, lrank = 0;
    };
    struct app_place {
        uint32_t app = 0, app_rank = 0;
    };

    std::string nspace;
    uint32_t nranks = 0;
    std::vector<std::string> nodes;  // PMIx node id -> host name
    std::vector<segment> segments;   // ascending, tiling 0..nranks-1
    std::vector<app> apps;
    std::vector<app_run> app_runs;   // ascending, tiling 0..nranks-1

    // From the ranks of each node in local-rank order (every rank 0..nranks-1 exactly once), the
    // app of each rank (app_of.size() == nranks, apps numbered 0..napps-1, each with a rank) and
    // each app's command line (may be shorter than the apps).
    static Result<job_layout> build(std::string nspace, const std::vector<std::string> &node_names,
                                    const std::vector<std::vector<uint32_t>> &node_ranks,
                                    const std::vector<uint32_t> &app_of, const std::vector<std::string> &app_argv);

    // rank < nranks (else {0, 0}).
    place locate(uint32_t rank) const;
    app_place app_of(uint32_t rank) const;

    // The value of a rank-level key the layout knows for `rank` (< nranks) into *out (empty on
    // entry): PMIX_ERR_NOT_FOUND for any other key. Exactly what the full job data holds.
    Status value(uint32_t rank, std::string_view key, pmix_value_t *out) const;
    // Every key value() knows for `rank`, in the order the job data lists them.
    std::vector<const char *> keys(uint32_t rank) const;
    // Those keys with their values, in that order.
    Result<InfoArray> rank_infos(uint32_t rank) const;
    // Each node's ranks in local-rank order.
    std::vector<std::vector<uint32_t>> node_ranks() const;
    // PMIX_PROC_MAP as the full job data holds it: "0,1;2,3" (O(ranks): made only when asked).
    std::string proc_map() const;

    std::vector<uint8_t> encode() const;
    static Result<job_layout> decode(std::span<const uint8_t> bytes);
};

}  // namespace pmixcpp::wire
