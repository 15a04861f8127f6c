#include "srun_side.h"
#include "munge_credentials.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <unistd.h>

#include <csignal>
#include <cstddef>
#include <cstring>
#include <set>

#include "../net/listener_guard.h"
#include "fabric/slurm_topo_layout.h"
#include "../server/connect.h"

namespace pmixcpp {

Result<std::vector<std::string>> expand_nodelist(const char *list) {
    if (!list || !*list) return Status(PMIX_ERR_BAD_PARAM, "the step has no node list");
    slurm_hostlist hl = hostlist_create(list);
    if (!hl) return Status(PMIX_ERR_BAD_PARAM, std::string("cannot parse node list ") + list);
    std::vector<std::string> names;
    while (char *h = hostlist_shift(hl)) {
        names.emplace_back(h);
        free(h);
    }
    hostlist_destroy(hl);
    return names;
}

// The local IPv4/IPv6 address this host sends from to reach `to` (a connected UDP socket sends
// nothing; the kernel picks the route and the source): the address `to` sees us at. "" if none.
std::string local_address_toward(const slurm_addr_t &to) {
    if (to.ss_family != AF_INET && to.ss_family != AF_INET6) return {};
    sockaddr_storage dst = to;
    socklen_t len = to.ss_family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
    if (to.ss_family == AF_INET) reinterpret_cast<sockaddr_in *>(&dst)->sin_port = htons(9);
    else reinterpret_cast<sockaddr_in6 *>(&dst)->sin6_port = htons(9);
    int fd = socket(to.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return {};
    sockaddr_storage self{};
    socklen_t slen = sizeof(self);
    bool ok = connect(fd, reinterpret_cast<sockaddr *>(&dst), len) == 0 &&
              getsockname(fd, reinterpret_cast<sockaddr *>(&self), &slen) == 0;
    close(fd);
    return ok ? net::peer_address(self) : std::string();
}

namespace {

// srun: the addresses the step's nodes reach srun at, one per route to them (usually one).
std::vector<std::string> agent_listen_addresses(const std::vector<std::string> &nodes) {
    std::set<std::string> out;
    std::set<std::string> seen_node_addrs;
    for (const std::string &n : nodes) {
        slurm_addr_t a{};
        if (slurm_conf_get_addr(n.c_str(), &a, 0) != SLURM_SUCCESS) continue;
        if (!seen_node_addrs.insert(net::peer_address(a)).second) continue;
        std::string mine = local_address_toward(a);
        if (!mine.empty()) out.insert(mine);
        if (seen_node_addrs.size() >= 4096) break;  // a route per node is plenty
    }
    if (out.empty())
        PMIXCPP_LOG_WARNING("no route to the step's nodes found: srun's agent listens on every interface");
    return {out.begin(), out.end()};
}

// srun side: Slurm's switch topology records (empty without topology/tree), read by the mirror
// of this release's response (shared/fabric/slurm_topo_layout.h), checked here against slurm.h.
#if PMIXCPP_SLURM_TOPO_LAYOUT != 0
namespace topo_abi = sched::slurm_abi;
static_assert(sizeof(topo_info_t) == sizeof(topo_abi::topo_record) &&
              offsetof(topo_info_t, level) == offsetof(topo_abi::topo_record, level) &&
              offsetof(topo_info_t, link_speed) == offsetof(topo_abi::topo_record, link_speed) &&
              offsetof(topo_info_t, name) == offsetof(topo_abi::topo_record, name) &&
              offsetof(topo_info_t, nodes) == offsetof(topo_abi::topo_record, nodes) &&
              offsetof(topo_info_t, switches) == offsetof(topo_abi::topo_record, switches),
              "topo_info_t differs from its mirror");
#if PMIXCPP_SLURM_TOPO_LAYOUT == 2205
static_assert(sched::topo_layout_of(SLURM_VERSION_NUMBER) == sched::topo_layout::v22_05);
using topo_response_mirror = topo_abi::topo_response_22_05;
#else
static_assert(sched::topo_layout_of(SLURM_VERSION_NUMBER) == sched::topo_layout::v23_11);
using topo_response_mirror = topo_abi::topo_response_23_11;
static_assert(offsetof(topo_info_response_msg_t, topo_info) == offsetof(topo_response_mirror, topo_info),
              "topo_info_response_msg_t.topo_info differs from its mirror");
static_assert(sizeof(dynamic_plugin_data_t) == sizeof(topo_abi::dynamic_plugin_data) &&
              offsetof(dynamic_plugin_data_t, data) == offsetof(topo_abi::dynamic_plugin_data, data) &&
              offsetof(dynamic_plugin_data_t, plugin_id) == offsetof(topo_abi::dynamic_plugin_data, plugin_id),
              "dynamic_plugin_data_t differs from its mirror");
static_assert(TOPOLOGY_PLUGIN_TREE == topo_abi::kTopologyTree && TOPOLOGY_PLUGIN_DEFAULT == topo_abi::kTopologyDefault &&
              TOPOLOGY_PLUGIN_BLOCK == topo_abi::kTopologyBlock && TOPOLOGY_PLUGIN_3DTORUS == topo_abi::kTopology3dTorus);
#endif
static_assert(sizeof(topo_info_response_msg_t) == sizeof(topo_response_mirror) &&
              offsetof(topo_info_response_msg_t, record_count) == offsetof(topo_response_mirror, record_count) &&
              offsetof(topo_info_response_msg_t, topo_array) == offsetof(topo_response_mirror, topo_array),
              "topo_info_response_msg_t differs from its mirror");

Result<std::vector<sched::switch_record>> load_slurm_topology() {
    topo_info_response_msg_t *msg = nullptr;
    if (slurm_load_topo(&msg) != SLURM_SUCCESS)
        return Status(PMIX_ERR_NOT_AVAILABLE, std::string("slurm_load_topo: ") + slurm_strerror(slurm_last_error()));
    auto out = sched::decode_topo_response(msg, SLURM_VERSION_NUMBER);
    if (msg != nullptr) slurm_free_topo_info_msg(msg);
    return out;
}
#else
Result<std::vector<sched::switch_record>> load_slurm_topology() {
    return sched::decode_topo_response(nullptr, SLURM_VERSION_NUMBER);  // PMIX_ERR_NOT_SUPPORTED
}
#endif

// The step's size in the job's store (server/connect.h kNamespaceSizeKey), so that other steps'
// servers can tell a full rank list of this namespace from a part of it.
void publish_namespace_size(session::job_store &store, const std::string &nspace, uint32_t ntasks) {
    auto req = server::namespace_size_record(nspace, ntasks);
    auto rep = req.ok() ? store.handle(req.value()) : session::agent_reply{req.status().code(), req.status().message(), {}};
    if (rep.status != PMIX_SUCCESS)
        log_var(LOG_LEVEL_VERBOSE, "mpi/pmixcpp: size of %s in the job's store: %s", nspace.c_str(), rep.message.c_str());
}

// Lost nodes (node_done reports, see fini): once every node of the step is done or lost,
// nothing will ever report the lost nodes' tasks, so the step is ended (srun then stops
// waiting for them after KillWait, as after any kill).
struct lost_tracker {
    uint32_t nnodes = 0;
    std::set<std::string> done, lost;
    bool killed = false;
};

srun_agent::report_fn report_handler(std::shared_ptr<lost_tracker> tracker, std::shared_ptr<step_components> components,
                                     uint32_t job_id, uint32_t step_id) {
    return [tracker, components, job_id, step_id](const agent::report &r) {
        if (r.what != agent::report::kind::node_done) {
            log_var(LOG_LEVEL_ERROR, "mpi/pmixcpp: node %s: %s", r.node.c_str(), r.message.c_str());
            // Without that node's server the step cannot work: the other nodes' tasks would
            // wait for it until the timeout. End it now; srun exits with the report's status.
            if (r.what == agent::report::kind::setup_failed)
                components->end("node " + r.node + " could not set up step " + std::to_string(job_id) + "." +
                                std::to_string(step_id));
            // A PMIx_Abort: the aborting node's slurmstepd ends its own Slurm step; the other
            // components of a heterogeneous step are ended here, with the user's credential.
            else if (r.what == agent::report::kind::abort && components->count() > 1)
                components->end("a rank of step " + std::to_string(job_id) + "." + std::to_string(step_id) +
                                " called PMIx_Abort");
            return;
        }
        tracker->done.insert(r.node);
        size_t start = 0;
        while (start < r.message.size()) {
            size_t comma = r.message.find(',', start);
            if (comma == std::string::npos) comma = r.message.size();
            std::string n = r.message.substr(start, comma - start);
            if (!n.empty() && tracker->lost.insert(n).second)
                log_var(LOG_LEVEL_ERROR, "mpi/pmixcpp: node %s of step %u.%u was lost (its slurmstepd went away)",
                        n.c_str(), job_id, step_id);
            start = comma + 1;
        }
        std::set<std::string> all = tracker->done;
        all.insert(tracker->lost.begin(), tracker->lost.end());
        if (tracker->killed || all.size() < tracker->nnodes) return;
        tracker->killed = true;
        log_var(LOG_LEVEL_ERROR, "mpi/pmixcpp: every other node of step %u.%u is done: ending the step", job_id,
                step_id);
        components->end("nodes lost");
    };
}

// PMIx_Spawn: a new step of this job, or of an allocation this step's bridge obtained
// (PMIX_SPAWN_TARGET). Spawned steps still running when this step's tasks have all ended are
// terminated (unless spawned with PMIX_SPAWN_CHILD_SEP), with the user's authority, as mpirun
// ends the jobs its job spawned.
std::unique_ptr<spawn::spawn_launcher> make_launcher(const slurm_mpi_step_info *job, uint32_t ns_job, alloc_bridge *b) {
    auto resolve = [b](const std::string &id) { return b->allocation_job(id); };
    auto end_step = [parent_job = job->step_id.job_id, parent_step = job->step_id.step_id](
                        uint32_t child_job, uint32_t child_step, int sig) {
        log_var(LOG_LEVEL_INFO, "mpi/pmixcpp: step %u.%u ended: %s its spawned step %u.%u (%s)", parent_job,
                parent_step, sig == SIGKILL ? "killing" : "terminating", child_job, child_step,
                sig == SIGKILL ? "still running after SIGTERM" : "not spawned with PMIX_SPAWN_CHILD_SEP");
        if (slurm_signal_step(child_job, child_step, sig) != SLURM_SUCCESS &&
            slurm_last_error() != ESLURM_ALREADY_DONE && slurm_last_error() != ESLURM_INVALID_JOB_ID)
            log_var(LOG_LEVEL_ERROR, "mpi/pmixcpp: slurm_kill_job_step(%u, %u, %d): %s", child_job, child_step, sig,
                    slurm_strerror(slurm_last_error()));
    };
    return std::make_unique<spawn::spawn_launcher>(ns_job, resolve, end_step);
}

// The step's router to the job's other steps (direct modex, events: xstep.h).
std::unique_ptr<xstep::router> make_router(const slurm_mpi_step_info *job, const session::job_store &store,
                                           const std::string &nspace) {
    const slurm_step_layout_t *layout = job->step_layout;
    if (!layout || !layout->tasks || !layout->tids) return nullptr;
    std::vector<uint32_t> node_of(layout->task_cnt, 0);
    for (uint32_t n = 0; n < layout->node_cnt; ++n)
        for (uint32_t i = 0; i < layout->tasks[n]; ++i)
            if (layout->tids[n][i] < node_of.size()) node_of[layout->tids[n][i]] = n;
    auto router = xstep::router::start(store.dir(), nspace, std::move(node_of), layout->node_cnt);
    if (router.ok()) return std::move(router.value());
    log_var(LOG_LEVEL_ERROR, "mpi/pmixcpp: %s", router.status().message().c_str());
    return nullptr;
}

}  // namespace

Result<std::unique_ptr<srun_side>> srun_side::start(const slurm_mpi_step_info *job, const plugin_config &cfg,
                                                    uint32_t ns_job, const std::string &nspace, env_list *step_env) {
    auto side = std::make_unique<srun_side>();
    side->nspace = nspace;
    side->components = std::make_shared<step_components>();
    (void)side->components->add(job->step_id.job_id, job->step_id.step_id);
    auto tracker = std::make_shared<lost_tracker>();
    tracker->nnodes = job->step_layout ? job->step_layout->node_cnt : 0;
    std::vector<std::string> step_nodes;
    if (job->step_layout && job->step_layout->node_list) {
        auto nodes = expand_nodelist(job->step_layout->node_list);
        if (nodes.ok()) step_nodes = std::move(nodes.value());
    }
    // Who may talk to the agent: a slurmstepd of this step, proven by a credential root or
    // SlurmUser made for this namespace, that only we (the job's user) and root can open, and
    // that nobody opened before (net/identity.h).
    auto creds = std::make_shared<munge_credentials>(munge_socket_of(slurm_conf.authinfo), getuid());
    net::step_binding binding;
    binding.nspace = nspace;
    binding.trusted_uids = {0, slurm_conf.slurm_user_id};
    net::auth::key_source keys = [creds, binding](const net::auth::hello &h) {
        return net::open_agent_credential(*creds, binding, h.credential);
    };
    auto agent = srun_agent::start(report_handler(tracker, side->components, ns_job, job->step_id.step_id), keys,
                                   step_nodes.empty() ? std::vector<std::string>() : agent_listen_addresses(step_nodes));
    PMIXCPP_RETURN_IF_ERROR(agent, "srun agent");
    side->agent = std::move(agent.value());
    // Allocation requests of the step's processes: executed here, in srun, as the user.
    alloc_bridge::job_context ctx;
    ctx.job_id = ns_job;
    ctx.step_id = job->step_id.step_id;
    ctx.step_nodes = step_nodes;
    PMIXCPP_ASSIGN_OR_RETURN(auto bridge, alloc_bridge::start(std::move(ctx)));
    side->bridge = std::move(bridge);
    side->launcher = make_launcher(job, ns_job, side->bridge.get());
    auto store = session::job_store::open(ns_job, getuid(), slurm_conf.cluster_name ? slurm_conf.cluster_name : "");
    if (!store.ok())
        log_var(LOG_LEVEL_ERROR, "mpi/pmixcpp: %s", store.status().message().c_str());  // publish: step only
    else side->job_store = std::move(store.value());
    // Slurm's switch topology: loaded by the first PMIx_Fabric_register of the step, as the user.
    side->fabric = std::make_unique<fabric::fabric_service>(load_slurm_topology, cfg.fabric_poll);
    // With topology/tree, srun loads it now (one RPC, kept for PMIx_Fabric_register) so that
    // the step's tree fence follows the switches: nodes under one switch form a subtree.
    if (cfg.tree_topology && step_nodes.size() > 2 && slurm_conf.topology_plugin &&
        strstr(slurm_conf.topology_plugin, "tree") != nullptr) {
        auto recs = side->fabric->records(false);
        if (!recs.ok())
            log_var(LOG_LEVEL_VERBOSE, "mpi/pmixcpp: switch topology: %s", recs.status().message().c_str());
        else if (auto groups = fabric::node_groups(recs.value(), step_nodes); !groups.empty())
            step_env->emplace_back(fabric::kNodeGroupsEnv, fabric::encode_node_groups(groups));
    }
    if (side->job_store) {
        side->xstep_router = make_router(job, *side->job_store, nspace);
        side->job_store->step_started(nspace);  // for PMIx_Connect: the namespace and its size
        if (job->step_layout) publish_namespace_size(*side->job_store, nspace, job->step_layout->task_cnt);
    }
    // A step started by PMIx_Spawn: tell the parent's srun which step this is.
    if (const char *fd = getenv(spawn::kReportFdEnv)) {
        std::string ns = nspace + "\n";
        int f = atoi(fd);
        if (f > 2 && write(f, ns.data(), ns.size()) < 0)
            log_var(LOG_LEVEL_ERROR, "mpi/pmixcpp: cannot report the spawned step: %m");
        if (f > 2) close(f);
        unsetenv(spawn::kReportFdEnv);
    }
    step_env->emplace_back(kAgentPortEnv, std::to_string(side->agent->port()));
    // The job's end, for the time-limit alert (slurmstepd's step record does not carry it).
    time_t end = 0;
    if (slurm_get_end_time(job->step_id.job_id, &end) == SLURM_SUCCESS && end > 0)
        step_env->emplace_back(kJobEndEnv, std::to_string(static_cast<long long>(end)));
    return side;
}

int srun_side::stop() {
    agent->stop();
    if (bridge) bridge->stop();  // withdraws what still waits in Slurm
    launcher.reset();  // joins spawn requests in flight (the agent is stopped), ends spawned steps
    bridge.reset();    // after the launcher: a spawn request may still ask it for its allocations
    fabric.reset();    // joins fabric requests in flight
    xstep_router.reset();  // removes its socket; what waits on it fails
    if (job_store) job_store->step_ended(nspace);
    job_store.reset();
    int code = agent->exit_code();
    agent.reset();
    if (components) components->end_late_comers();
    components.reset();
    return code;
}

}  // namespace pmixcpp
