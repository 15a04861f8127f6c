// The job data as OpenPMIx's gds/hash REQ reply; see native_jobdata.h.
#include "native_jobdata.h"

#include <cstring>

namespace pmixcpp::server {

namespace {


// Keys of the WILDCARD entry that describe this node, not the job.
bool node_level(const pmix_info_t &i) {
    for (const char *k : {PMIX_HOSTNAME, PMIX_NODEID, PMIX_LOCAL_PEERS, PMIX_LOCAL_PROCS, PMIX_LOCAL_SIZE,
                          PMIX_NODE_SIZE, PMIX_LOCALLDR, PMIX_LOCAL_CPUSETS, PMIX_CPUSET})
        if (key_is(i, k)) return true;
    return false;
}

}  // namespace

bool native_left_out(const pmix_info_t &i) {
    for (const char *k : {PMIX_NODE_MAP, PMIX_PROC_MAP, PMIX_ANL_MAP, wire::kJobLayoutKey})
        if (key_is(i, k)) return true;
    return false;
}

native::job_blob_data native_job_blob(const std::string &nspace, const std::vector<wire::jobdata_entry> &entries) {
    native::job_blob_data out;
    out.nspace = nspace;
    native::job_blob_data::node node;
    for (const auto &e : entries) {
        if (e.rank == PMIX_RANK_WILDCARD) {
            for (size_t i = 0; i < e.infos.size(); ++i) {
                const pmix_info_t &info = e.infos[i];
                if (native_left_out(info)) continue;
                (node_level(info) ? node.infos : out.job).push_back(info);
            }
            continue;
        }
        native::job_blob_data::rank r;
        r.rank = e.rank;
        for (size_t i = 0; i < e.infos.size(); ++i) r.infos.push_back(e.infos[i]);
        out.ranks.push_back(std::move(r));
    }
    if (!node.infos.empty()) out.nodes.push_back(std::move(node));
    return out;
}

}  // namespace pmixcpp::server
