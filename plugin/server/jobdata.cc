#include "jobdata.h"

#include "../services/spawn/mpmd.h"
#include "../services/spawn/spawn_codec.h"
#include "../common/step_env.h"
#include "process_mapping.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <unordered_map>

namespace pmixcpp::server {

namespace {

// Collects (key, value) pairs and turns them into an InfoArray.
class info_builder {
public:
    info_builder() = default;
    info_builder(const info_builder &) = delete;
    ~info_builder() {
        for (auto &i : _infos) value_destruct(&i.value);
    }

    void u32(const char *key, uint32_t v) { add(key, &v, PMIX_UINT32); }
    void u16(const char *key, uint16_t v) { add(key, &v, PMIX_UINT16); }
    void rank(const char *key, uint32_t v) {
        pmix_rank_t r = v;
        add(key, &r, PMIX_PROC_RANK);
    }
    void flag(const char *key, bool v) { add(key, &v, PMIX_BOOL); }
    void bytes(const char *key, const std::vector<uint8_t> &v) {
        pmix_byte_object_t bo{};
        bo.bytes = reinterpret_cast<char *>(const_cast<uint8_t *>(v.data()));
        bo.size = v.size();
        add(key, &bo, PMIX_BYTE_OBJECT);
    }
    // Take over the infos of `a` (left empty), in their order.
    void adopt(InfoArray &a) {
        for (size_t i = 0; i < a.size(); ++i) {
            _infos.push_back(a[i]);
            a[i].value = pmix_value_t{};
            a[i].value.type = PMIX_UNDEF;
        }
    }
    void str(const char *key, const std::string &v) { add(key, v.c_str(), PMIX_STRING); }
    void proc(const char *key, const std::string &nspace, uint32_t rank) {
        pmix_proc_t p{};
        strncpy(p.nspace, nspace.c_str(), PMIX_MAX_NSLEN);
        p.rank = rank;
        add(key, &p, PMIX_PROC);
    }

    // An array of pmix_proc_t: `ranks` of `nspace`.
    void procs(const char *key, const std::string &nspace, const std::vector<uint32_t> &ranks) {
        std::vector<pmix_proc_t> v(ranks.size());
        for (size_t i = 0; i < ranks.size(); ++i) {
            strncpy(v[i].nspace, nspace.c_str(), PMIX_MAX_NSLEN);
            v[i].rank = ranks[i];
        }
        pmix_data_array_t da{};
        da.type = PMIX_PROC;
        da.size = v.size();
        da.array = v.data();
        add(key, &da, PMIX_DATA_ARRAY);
    }

    Result<InfoArray> take() {
        PMIXCPP_RETURN_IF_ERROR(_error);
        auto *arr = static_cast<pmix_info_t *>(calloc(_infos.size() ? _infos.size() : 1, sizeof(pmix_info_t)));
        if (!arr) return Status(PMIX_ERR_NOMEM, "out of memory building job data");
        for (size_t i = 0; i < _infos.size(); ++i) arr[i] = _infos[i];  // ownership moves
        size_t n = _infos.size();
        _infos.clear();
        return InfoArray(arr, n);
    }

private:
    void add(const char *key, const void *data, pmix_data_type_t type) {
        if (!_error.ok()) return;
        pmix_info_t info{};
        strncpy(info.key, key, sizeof(info.key) - 1);
        Status st = value_load(&info.value, data, type);
        if (!st.ok()) {
            _error = st.with_context(std::string("job data key ") + key);
            return;
        }
        _infos.push_back(info);
    }

    std::vector<pmix_info_t> _infos;
    Status _error;
};

std::string join(const std::vector<uint32_t> &v, const char *sep) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) {
        if (i) s += sep;
        s += std::to_string(v[i]);
    }
    return s;
}

// PMI_process_mapping (what Slurm's mpi/pmix gives as PMIX_ANL_MAP): "(vector,(s,n,k),...)" from
// the node of each rank (shared/process_mapping.h), so cyclic and arbitrary layouts read back right.
std::string anl_map(const std::vector<std::vector<uint32_t>> &node_ranks) {
    std::vector<uint32_t> node_of_rank;
    for (size_t n = 0; n < node_ranks.size(); ++n)
        for (uint32_t r : node_ranks[n]) {
            if (r >= node_of_rank.size()) node_of_rank.resize(size_t{r} + 1, 0);
            node_of_rank[r] = static_cast<uint32_t>(n);
        }
    return process_mapping(node_of_rank);
}

// The value of `name` in the step's environment (the last one), "" when it is not there.
std::string job_env_value(const step_info &step, const char *name) {
    const std::string prefix = std::string(name) + "=";
    std::string value;
    for (const auto &e : step.job_env)
        if (e.rfind(prefix, 0) == 0) value = e.substr(prefix.size());
    return value;
}

}  // namespace

Result<std::vector<wire::jobdata_entry>> build_jobdata(const step_info &step, const node_topology &topo,
                                                       jobdata_form form) {
    if (step.node_id >= step.node_ranks.size() || step.node_names.size() != step.node_ranks.size())
        return Status(PMIX_ERR_BAD_PARAM, "step map: node id " + std::to_string(step.node_id) + " of " +
                                              std::to_string(step.node_ranks.size()) + " nodes");
    const uint32_t universe = step.universe_size ? step.universe_size : step.ntasks;

    // The PMIx nodes: the step's servers grouped by node name (the components of a heterogeneous
    // step each have a server of their own on a node they share), in order of first appearance.
    // A rank's local rank counts through the ranks of every server on its node.
    std::vector<std::string> hosts;
    std::vector<std::vector<uint32_t>> host_ranks;
    std::vector<uint32_t> host_of_server(step.node_names.size());
    std::unordered_map<std::string, uint32_t> host_index;  // (a linear search is O(nodes^2))
    for (size_t n = 0; n < step.node_names.size(); ++n) {
        auto [it, added] = host_index.emplace(step.node_names[n], static_cast<uint32_t>(hosts.size()));
        host_of_server[n] = it->second;
        if (added) {
            hosts.push_back(step.node_names[n]);
            host_ranks.emplace_back();
        }
        auto &hr = host_ranks[host_of_server[n]];
        hr.insert(hr.end(), step.node_ranks[n].begin(), step.node_ranks[n].end());
    }
    const uint32_t my_host = host_of_server[step.node_id];
    const auto &local = host_ranks[my_host];

    // Node of every rank, and its rank on that node.
    std::vector<uint32_t> node_of(step.ntasks, UINT32_MAX), lrank_of(step.ntasks, 0);
    for (uint32_t h = 0; h < host_ranks.size(); ++h)
        for (uint32_t i = 0; i < host_ranks[h].size(); ++i) {
            uint32_t r = host_ranks[h][i];
            if (r >= step.ntasks) return Status(PMIX_ERR_BAD_PARAM, "rank " + std::to_string(r) + " out of range");
            if (node_of[r] != UINT32_MAX)
                return Status(PMIX_ERR_BAD_PARAM, "rank " + std::to_string(r) + " is on two nodes of the step map");
            node_of[r] = h;
            lrank_of[r] = i;
        }
    for (uint32_t r = 0; r < step.ntasks; ++r)
        if (node_of[r] == UINT32_MAX)
            return Status(PMIX_ERR_BAD_PARAM, "rank " + std::to_string(r) + " is on no node of the step map");

    std::string node_list, proc_map;
    for (size_t h = 0; h < hosts.size(); ++h) {
        if (h) {
            node_list += ",";
            proc_map += ";";
        }
        node_list += hosts[h];
        proc_map += join(host_ranks[h], ",");
    }

    // The apps: the components of a heterogeneous step or the lines of --multi-prog
    // (step.app_of_rank), else a spawned step of several apps (plugin/services/spawn/mpmd.h), else one.
    std::vector<uint32_t> app_of(step.ntasks, 0);
    size_t napps = 1;
    if (step.app_of_rank.size() == step.ntasks && step.ntasks > 0) {
        app_of = step.app_of_rank;
        napps = *std::max_element(app_of.begin(), app_of.end()) + 1u;
    } else {
        std::vector<uint32_t> app_sizes = spawn::parse_app_sizes(job_env_value(step, spawn::kAppSizesEnv));
        uint64_t apps_total = 0;
        for (uint32_t n : app_sizes) apps_total += n;
        if (apps_total == step.ntasks && !app_sizes.empty()) {  // else one app (or a table not of this step)
            napps = app_sizes.size();
            for (uint32_t a = 0, r = 0; a < app_sizes.size(); ++a)
                for (uint32_t k = 0; k < app_sizes[a]; ++k) app_of[r++] = a;
        }
    }
    // Per app: its size and leader (lowest rank); per rank: its rank within its app.
    std::vector<uint32_t> app_size(napps, 0), app_ldr(napps, UINT32_MAX), app_rank_of(step.ntasks, 0);
    for (uint32_t r = 0; r < step.ntasks; ++r) {
        const uint32_t a = app_of[r];
        if (a >= napps) return Status(PMIX_ERR_BAD_PARAM, "rank " + std::to_string(r) + " has no app");
        if (app_ldr[a] == UINT32_MAX) app_ldr[a] = r;
        app_rank_of[r] = app_size[a]++;
    }
    for (size_t a = 0; a < napps; ++a)
        if (app_size[a] == 0) return Status(PMIX_ERR_BAD_PARAM, "app " + std::to_string(a) + " has no rank");

    // The compact form: the layout of every rank, built from what was checked above.
    std::optional<wire::job_layout> layout;
    if (form == jobdata_form::compact) {
        auto l = wire::job_layout::build(step.nspace, hosts, host_ranks, app_of, step.app_argv);
        PMIXCPP_RETURN_IF_ERROR(l);
        layout = std::move(l.value());
    }

    // The keys only a rank's own node has: its locality, cpuset and process directory.
    auto add_node_local = [&](info_builder &b, uint32_t r) {
        if (!topo.locality.empty()) b.str(PMIX_LOCALITY_STRING, topo.locality);
        if (!topo.cpuset.empty()) b.str(PMIX_CPUSET, topo.cpuset);
        b.str(PMIX_PROCDIR, proc_dir(step, r));
    };

    std::vector<wire::jobdata_entry> entries;
    entries.reserve(layout ? local.size() + 1 : step.ntasks + 1);
    {
        info_builder b;
        b.str(PMIX_NSPACE, step.nspace);
        b.str(PMIX_JOBID, std::to_string(step.job_id) + "." + std::to_string(step.step_id));
        b.u32("slurm.jobid", step.job_id);
        b.u32("slurm.stepid", step.step_id);
        b.u32(PMIX_JOB_SIZE, step.ntasks);
        b.u32(PMIX_UNIV_SIZE, universe);
        b.u32(PMIX_MAX_PROCS, universe);
        b.u32(PMIX_NUM_NODES, static_cast<uint32_t>(hosts.size()));
        b.u32(PMIX_JOB_NUM_APPS, static_cast<uint32_t>(napps));
        b.u32(PMIX_APP_SIZE, app_size[0]);
        b.str(PMIX_NODE_LIST, node_list);
        b.str(PMIX_NODE_MAP, node_list);
        if (!layout) b.str(PMIX_PROC_MAP, proc_map);  // O(ranks): the compact form makes it when asked
        b.str(PMIX_ANL_MAP, anl_map(host_ranks));
        b.u32(PMIX_LOCAL_SIZE, static_cast<uint32_t>(local.size()));
        b.u32(PMIX_NODE_SIZE, static_cast<uint32_t>(local.size()));
        b.str(PMIX_LOCAL_PEERS, join(local, ","));
        b.procs(PMIX_LOCAL_PROCS, step.nspace, local);
        if (!local.empty()) b.rank(PMIX_LOCALLDR, local.front());
        b.u32(PMIX_NODEID, my_host);
        b.str(PMIX_HOSTNAME, step.node_name());
        b.str(PMIX_TMPDIR, step.step_dir);
        b.str(PMIX_NSDIR, step.step_dir);
        b.flag(PMIX_TDIR_RMCLEAN, true);
        if (!step.server_socket.empty()) {
            // this node's server, as OpenPMIx publishes it (the connection still needs the token)
            b.str(PMIX_SERVER_URI, "unix:" + step.server_socket);
            b.str(PMIX_MYSERVER_URI, "unix:" + step.server_socket);
        }
        // A step started by PMIx_Spawn carries its parent in PMIXCPP_SPAWN_PARENT=<nspace>:<rank>.
        const std::string parent = job_env_value(step, spawn::kParentEnv);
        auto colon = parent.rfind(':');
        if (colon != std::string::npos && colon > 0 && colon + 1 < parent.size() &&
            parent.find_first_not_of("0123456789", colon + 1) == std::string::npos) {
            b.flag(PMIX_SPAWNED, true);
            b.proc(PMIX_PARENT_ID, parent.substr(0, colon),
                   static_cast<uint32_t>(strtoul(parent.c_str() + colon + 1, nullptr, 10)));
        } else {
            b.flag(PMIX_SPAWNED, false);
        }
        if (!topo.cpuset.empty()) {
            b.str(PMIX_CPUSET, topo.cpuset);
            b.str(PMIX_LOCAL_CPUSETS, topo.cpuset + ":" + join(local, ","));
        }
        if (layout) b.bytes(wire::kJobLayoutKey, layout->encode());
        PMIXCPP_ASSIGN_OR_RETURN(auto infos, b.take());
        entries.push_back({PMIX_RANK_WILDCARD, std::move(infos)});
    }
    if (layout) {
        // This node's ranks in full (the layout's keys, then the local ones), the others only
        // in the layout.
        for (uint32_t r : local) {
            PMIXCPP_ASSIGN_OR_RETURN(auto base, layout->rank_infos(r));
            info_builder b;
            b.adopt(base);
            add_node_local(b, r);
            PMIXCPP_ASSIGN_OR_RETURN(auto infos, b.take());
            entries.push_back({r, std::move(infos)});
        }
        return entries;
    }
    for (uint32_t r = 0; r < step.ntasks; ++r) {
        info_builder b;
        const uint32_t n = node_of[r];
        b.rank(PMIX_RANK, r);
        b.rank(PMIX_GLOBAL_RANK, r);
        const uint32_t app = app_of[r];
        b.rank(PMIX_APP_RANK, app_rank_of[r]);
        b.u32(PMIX_APPNUM, app);
        b.rank(PMIX_APPLDR, app_ldr[app]);
        if (napps > 1) {
            b.u32(PMIX_APP_SIZE, app_size[app]);
            // the step's process set of its app (groups.h): OpenMPI 5 finds a pset's members by it
            b.str(PMIX_PSET_NAME, step.nspace + ".app" + std::to_string(app));
        }
        if (app < step.app_argv.size() && !step.app_argv[app].empty()) b.str(PMIX_APP_ARGV, step.app_argv[app]);
        b.u16(PMIX_LOCAL_RANK, static_cast<uint16_t>(lrank_of[r]));
        b.u16(PMIX_NODE_RANK, static_cast<uint16_t>(lrank_of[r]));
        b.u32(PMIX_NODEID, n);
        b.str(PMIX_HOSTNAME, hosts[n]);
        if (n == my_host) add_node_local(b, r);
        PMIXCPP_ASSIGN_OR_RETURN(auto infos, b.take());
        entries.push_back({r, std::move(infos)});
    }
    return entries;
}

}  // namespace pmixcpp::server

namespace pmixcpp::server {

Result<std::optional<wire::job_layout>> jobdata_layout(const std::vector<wire::jobdata_entry> &entries) {
    for (const auto &e : entries) {
        if (e.rank != PMIX_RANK_WILDCARD) continue;
        const pmix_info_t *i = find_info(e.infos, wire::kJobLayoutKey);
        if (i == nullptr) return std::optional<wire::job_layout>();
        if (i->value.type != PMIX_BYTE_OBJECT) return Status(PMIX_ERR_BAD_PARAM, "job layout is not a byte object");
        const pmix_byte_object_t &bo = i->value.data.bo;
        PMIXCPP_ASSIGN_OR_RETURN(auto l, wire::job_layout::decode(std::span<const uint8_t>(
                                             reinterpret_cast<const uint8_t *>(bo.bytes), bo.size)));
        return std::optional<wire::job_layout>(std::move(l));
    }
    return std::optional<wire::job_layout>();
}

Result<std::vector<wire::jobdata_entry>> expand_jobdata(const std::vector<wire::jobdata_entry> &compact,
                                                        const wire::job_layout &layout) {
    std::vector<wire::jobdata_entry> out;
    out.reserve(size_t{layout.nranks} + 1);
    std::unordered_map<uint32_t, const wire::jobdata_entry *> stored;
    for (const auto &e : compact) {
        if (e.rank != PMIX_RANK_WILDCARD) {
            stored.emplace(e.rank, &e);
            continue;
        }
        // the job level as the full form has it: no layout, the process map after the node map
        std::vector<pmix_info_t> infos;
        Status st;
        auto copy = [&](const pmix_info_t &from) {
            pmix_info_t to{};
            if (st.ok()) st = info_xfer(&to, &from);
            infos.push_back(to);
        };
        for (size_t i = 0; i < e.infos.size(); ++i) {
            if (key_is(e.infos[i], wire::kJobLayoutKey)) continue;
            copy(e.infos[i]);
            if (key_is(e.infos[i], PMIX_NODE_MAP)) {
                const std::string pmap = layout.proc_map();
                pmix_info_t p = make_info(PMIX_PROC_MAP, pmap.c_str(), PMIX_STRING);
                infos.push_back(p);
            }
        }
        InfoArray arr = to_array(infos);
        PMIXCPP_RETURN_IF_ERROR(st, "job data");
        out.push_back({PMIX_RANK_WILDCARD, std::move(arr)});
    }
    for (uint32_t r = 0; r < layout.nranks; ++r) {
        auto it = stored.find(r);
        if (it != stored.end()) {
            InfoArray copy;
            PMIXCPP_RETURN_IF_ERROR(info_array_copy(it->second->infos.data(), it->second->infos.size(), &copy));
            out.push_back({r, std::move(copy)});
            continue;
        }
        PMIXCPP_ASSIGN_OR_RETURN(auto infos, layout.rank_infos(r));
        out.push_back({r, std::move(infos)});
    }
    return out;
}

}  // namespace pmixcpp::server
