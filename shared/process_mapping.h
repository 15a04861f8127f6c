// PMI_process_mapping: MPICH's "vector" description of which node each rank runs on, as PMI-1
// (the KVS key PMI_process_mapping), PMI-2 (the job attribute of that name) and PMIx
// (PMIX_ANL_MAP) hand it to MPI libraries. Pure functions, no I/O.
//
// Format: "(vector,(s1,c1,k1),(s2,c2,k2),...)". Each triple places k consecutive ranks on each of
// the c nodes s, s+1, ..., s+c-1, in turn. When the triples are used up before every rank is
// placed, the reader (MPICH's MPIR_NODEMAP_populate_ids_from_mapping) starts over, from the first
// triple whose start node is 0 if any triple started at node 0. So "(vector,(0,2,1))" for 4 ranks
// is the cyclic layout 0,1,0,1 and "(vector,(0,2,2))" the block layout 0,0,1,1.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pmixcpp {

// The shortest vector of triples that, read as MPICH reads it, puts rank r on node_of_rank[r] for
// every rank: the full run-length form always does, a repeating layout (cyclic, block-cyclic)
// takes one period. "(vector)" for no ranks.
std::string process_mapping(const std::vector<uint32_t> &node_of_rank);

// The node of each of `nranks` ranks that `mapping` describes, read as MPICH reads it; nullopt if
// the text is not a vector mapping or places no rank.
std::optional<std::vector<uint32_t>> expand_process_mapping(const std::string &mapping, size_t nranks);

}  // namespace pmixcpp
