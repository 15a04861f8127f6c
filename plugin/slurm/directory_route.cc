// The Slurm side of the directory route (directory_route.h).
#include "directory_route.h"

#include <map>

#include "hostlist.h"
#include "log.h"
#include "munge_credentials.h"
#include "slurm_api.h"

namespace pmixcpp::slurm_glue {

Result<directory_place> directory_place_of(uint32_t job_id, uint32_t step_id, const char *node_name) {
    if (!slurm_conf.slurmd_spooldir || !*slurm_conf.slurmd_spooldir)
        return Status(PMIX_ERR_NOT_AVAILABLE, "no SlurmdSpoolDir");
    if (!node_name || !*node_name) return Status(PMIX_ERR_NOT_AVAILABLE, "no node name");
    directory_place p;
    p.name = "pmixcpp.dir." + std::to_string(job_id) + "." + std::to_string(step_id);
    // As slurmd expands it for the forwarded address: the node's name for %n and %h.
    char *dir = slurm_conf_expand_slurmd_path(slurm_conf.slurmd_spooldir, node_name, node_name);
    if (!dir) return Status(PMIX_ERR_NOT_AVAILABLE, "cannot expand SlurmdSpoolDir");
    p.local_dir = dir;
    xfree(dir);
    p.address = std::string(slurm_conf.slurmd_spooldir) + "/" + p.name;
    return p;
}

std::vector<uint32_t> forward_to_nodes(const std::vector<std::string> &node_names, const std::string &address,
                                       const std::vector<uint32_t> &nodes, const std::vector<uint8_t> &message) {
    std::vector<std::string> names;
    std::map<std::string, uint32_t> id_of;
    for (uint32_t n : nodes) {
        if (n >= node_names.size()) continue;
        names.push_back(node_names[n]);
        id_of[node_names[n]] = n;
    }
    if (names.empty()) return {};
    char *list = xstrdup(pmixcpp::hostlist::compress(names).c_str());
    std::vector<char> addr(address.begin(), address.end());
    addr.push_back('\0');
    // Slurm signs the forwarding request with munge as whoever we are at that moment: not in a
    // moment when slurmstepd runs as the job's user (the target slurmd would then connect to the
    // root-only socket as the user and fail, and the answer would be sealed for the user). A
    // call that overlaps such a moment anyway fails and is sent again by the directory's backoff.
    wait_for_root_euid();
    int rc = slurm_forward_data(&list, addr.data(), static_cast<uint32_t>(message.size()),
                                reinterpret_cast<const char *>(message.data()));
    std::vector<uint32_t> failed;
    if (rc != SLURM_SUCCESS) {
        // Slurm rewrites the list to the nodes that failed (when it sent to more than one).
        auto down = pmixcpp::hostlist::expand(list ? list : "");
        if (down.ok() && !down->empty()) {
            for (const auto &h : down.value())
                if (auto it = id_of.find(h); it != id_of.end()) failed.push_back(it->second);
        }
        if (failed.empty()) failed = nodes;
        PMIXCPP_LOG_DEBUG("directory: slurm_forward_data to %s: %s", list ? list : "?", slurm_strerror(rc));
    }
    xfree(list);
    return failed;
}

}  // namespace pmixcpp::slurm_glue
