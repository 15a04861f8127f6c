// The job data as OpenPMIx's gds/hash REQ reply; see native_jobdata.h.
#include "native_jobdata.h"

#include <cstdlib>
#include <cstring>

namespace pmixcpp::server {

namespace {

bool is_key(const pmix_info_t &i, const char *key) { return strncmp(i.key, key, PMIX_MAX_KEYLEN) == 0; }

// Keys of the WILDCARD entry that describe this node, not the job.
bool node_level(const pmix_info_t &i) {
    for (const char *k : {PMIX_HOSTNAME, PMIX_NODEID, PMIX_LOCAL_PEERS, PMIX_LOCAL_SIZE, PMIX_NODE_SIZE, PMIX_LOCALLDR,
                          PMIX_LOCAL_CPUSETS, PMIX_CPUSET})
        if (is_key(i, k)) return true;
    return false;
}

}  // namespace

bool native_left_out(const pmix_info_t &i) {
    for (const char *k : {PMIX_NODE_MAP, PMIX_PROC_MAP, PMIX_ANL_MAP})
        if (is_key(i, k)) return true;
    return false;
}

namespace {

// PMIX_LOCAL_PROCS (the procs of this node, an array of pmix_proc_t), which OpenPMIx's clients
// read and OpenPMIx's server has from its host, made from the node's PMIX_LOCAL_PEERS.
InfoArray local_procs(const std::string &nspace, const pmix_info_t &peers) {
    std::vector<pmix_proc_t> procs;
    if (peers.value.type == PMIX_STRING && peers.value.data.string != nullptr) {
        const char *p = peers.value.data.string;
        while (*p != '\0') {
            char *end = nullptr;
            unsigned long r = strtoul(p, &end, 10);
            if (end == p) break;
            pmix_proc_t proc{};
            strncpy(proc.nspace, nspace.c_str(), PMIX_MAX_NSLEN);
            proc.rank = static_cast<pmix_rank_t>(r);
            procs.push_back(proc);
            p = *end == ',' ? end + 1 : end;
        }
    }
    auto *arr = static_cast<pmix_info_t *>(calloc(1, sizeof(pmix_info_t)));
    if (arr == nullptr) return InfoArray();
    strncpy(arr[0].key, PMIX_LOCAL_PROCS, PMIX_MAX_KEYLEN);
    pmix_data_array_t da{};
    da.type = PMIX_PROC;
    da.size = procs.size();
    da.array = procs.data();
    if (!value_load(&arr[0].value, &da, PMIX_DATA_ARRAY).ok()) {
        free(arr);
        return InfoArray();
    }
    return InfoArray(arr, 1);
}

}  // namespace

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
                if (is_key(info, PMIX_LOCAL_PEERS) && out.owned.empty()) {
                    out.owned = local_procs(nspace, info);
                    if (!out.owned.empty()) node.infos.push_back(out.owned[0]);
                }
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
