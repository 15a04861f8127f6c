// PMIx_Resolve_peers / PMIx_Resolve_nodes, answered from the job data of our namespace
// (pmix.hname of every rank; pmix.lpeers for this node; pmix.nlist as a fallback).
#include <pmix.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "api.h"
#include "hostlist.h"

using namespace pmixcpp;
using namespace pmixcpp::client;

namespace {

const char *string_of(const pmix_value_t *v) {
    return v != nullptr && v->type == PMIX_STRING ? v->data.string : nullptr;
}

std::vector<pmix_rank_t> sorted_ranks(LocalData &d) {
    std::vector<pmix_rank_t> ranks = d.job_ranks();
    ranks.erase(
        std::remove_if(ranks.begin(), ranks.end(), [](pmix_rank_t r) { return r >= PMIX_RANK_VALID; }),
        ranks.end());
    std::sort(ranks.begin(), ranks.end());
    return ranks;
}

Result<std::vector<pmix_rank_t>> local_peers(LocalData &d) {
    std::vector<pmix_rank_t> out;
    const char *lp = string_of(d.job_value(PMIX_RANK_WILDCARD, PMIX_LOCAL_PEERS));
    if (lp == nullptr) return Status(PMIX_ERR_NOT_FOUND, "no pmix.lpeers in the job data");
    std::string s(lp);
    size_t pos = 0;
    while (pos <= s.size()) {
        size_t comma = s.find(',', pos);
        std::string item = s.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
        if (!item.empty()) out.push_back(static_cast<pmix_rank_t>(strtoul(item.c_str(), nullptr, 10)));
        if (comma == std::string::npos) break;
        pos = comma + 1;
    }
    return out;
}

bool own_or_any(Client &c, const char *nspace) { return nspace == nullptr || c.data().is_own_nspace(nspace); }

}  // namespace

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_Resolve_peers(const char *nodename, const pmix_nspace_t nspace,
                                             pmix_proc_t **procs, size_t *nprocs) {
    return api_guard(__func__, [&]() -> Status {
        if (procs == nullptr || nprocs == nullptr)
            return Status(PMIX_ERR_BAD_PARAM, "procs or nprocs is NULL");
        *procs = nullptr;
        *nprocs = 0;
        PMIXCPP_ASSIGN_OR_RETURN(auto c, require_client());
        if (nspace != nullptr) PMIXCPP_RETURN_IF_ERROR(check_nspace(nspace));
        if (!own_or_any(*c, nspace)) return Status(PMIX_ERR_NOT_FOUND, "unknown namespace");
        LocalData &d = c->data();

        std::vector<pmix_rank_t> found;
        if (nodename == nullptr) {
            auto lp = local_peers(d);
            PMIXCPP_RETURN_IF_ERROR(lp);
            found = lp.value();
        } else {
            for (pmix_rank_t r : sorted_ranks(d)) {
                const char *h = string_of(d.job_value(r, PMIX_HOSTNAME));
                if (h != nullptr && strcmp(h, nodename) == 0) found.push_back(r);
            }
            if (found.empty()) {
                // The real host name of this node names our own node's procs.
                char host[256] = {0};
                if (gethostname(host, sizeof(host) - 1) == 0 && strcmp(host, nodename) == 0) {
                    auto lp = local_peers(d);
                    if (lp.ok()) found = lp.value();
                }
            }
        }
        if (found.empty()) return Status(PMIX_ERR_NOT_FOUND, "no procs on that node");
        auto *out = static_cast<pmix_proc_t *>(calloc(found.size(), sizeof(pmix_proc_t)));
        if (out == nullptr) return Status(PMIX_ERR_NOMEM, "out of memory");
        for (size_t i = 0; i < found.size(); ++i) {
            memcpy(out[i].nspace, c->self().nspace, sizeof(out[i].nspace));
            out[i].rank = found[i];
        }
        *procs = out;
        *nprocs = found.size();
        return Status::success();
    });
}

PMIX_EXPORT pmix_status_t PMIx_Resolve_nodes(const pmix_nspace_t nspace, char **nodelist) {
    return api_guard(__func__, [&]() -> Status {
        if (nodelist == nullptr) return Status(PMIX_ERR_BAD_PARAM, "nodelist is NULL");
        *nodelist = nullptr;
        PMIXCPP_ASSIGN_OR_RETURN(auto c, require_client());
        if (nspace != nullptr) PMIXCPP_RETURN_IF_ERROR(check_nspace(nspace));
        if (!own_or_any(*c, nspace)) return Status(PMIX_ERR_NOT_FOUND, "unknown namespace");
        LocalData &d = c->data();
        std::vector<std::string> nodes;
        std::set<std::string> seen;
        for (pmix_rank_t r : sorted_ranks(d)) {
            const char *h = string_of(d.job_value(r, PMIX_HOSTNAME));
            if (h != nullptr && seen.insert(h).second) nodes.push_back(h);
        }
        if (nodes.empty()) {
            const char *nl = string_of(d.job_value(PMIX_RANK_WILDCARD, PMIX_NODE_LIST));
            if (nl == nullptr) return Status(PMIX_ERR_NOT_FOUND, "no node list in the job data");
            auto expanded = hostlist::expand(nl);
            if (!expanded.ok()) return Status(PMIX_ERR_NOT_FOUND, "bad node list in the job data");
            nodes = expanded.value();
        }
        std::string joined;
        for (auto &n : nodes) {
            if (!joined.empty()) joined += ',';
            joined += n;
        }
        *nodelist = strdup(joined.c_str());
        if (*nodelist == nullptr) return Status(PMIX_ERR_NOMEM, "out of memory");
        return Status::success();
    });
}

}  // extern "C"
