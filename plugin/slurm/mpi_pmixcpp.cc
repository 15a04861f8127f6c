// mpi/pmixcpp: the symbols Slurm (22.05 to 26.05, slurm_compat.h) looks up, and nothing else.
// Each hook validates its arguments, calls C++ and maps any failure to a
// Slurm return code here; no exception leaves this file.
#include "slurm_api.h"

#include "../agent/stepd/agent_client.h"
#include "server_ports.h"
#include "plugin_config.h"
#include "../services/fabric/fabric_srun.h"
#include "../services/service_ids.h"
#include "../services/spawn/mpmd.h"
#include "../services/sessions/session_srun.h"
#include "../services/spawn/spawn_srun.h"
#include "../services/xstep/xstep_stepd.h"
#include "munge_credentials.h"
#include "srun_side.h"
#include "../net/listener_guard.h"
#include "../common/directory_socket.h"
#include "../net/static_route.h"
#include "directory_route.h"
#include "wire/directory_messages.h"
#include "../common/step_env.h"
#include "../server/server.h"
#include "../common/step_info.h"
#include "../server/topology.h"
#include "c_boundary.h"
#include "log.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstddef>
#include <cstring>
#include <cstdarg>
#include <exception>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#define PMIXCPP_EXPORT extern "C" __attribute__((visibility("default")))

PMIXCPP_EXPORT const char plugin_name[] = "PMIx plugin with its own server (pmixcpp)";
PMIXCPP_EXPORT const char plugin_type[] = "mpi/pmixcpp";
// Built-in MPI plugins use 101-107; keep clear of that range.
PMIXCPP_EXPORT const uint32_t plugin_id = 150;
PMIXCPP_EXPORT const uint32_t plugin_version = SLURM_VERSION_NUMBER;

namespace pmixcpp {
namespace {



// Everything this plugin instance holds. One per loading process (srun,
// slurmd, slurmctld or slurmstepd); only slurmstepd fills the step part.
struct plugin_state {
    plugin_config config;
    std::string config_error;  // set when mpi.conf had a bad value
    bool have_step = false;
    step_info step;

    // srun side: the agent that hears from the step's slurmstepds and its services.
    std::unique_ptr<srun_side> srun;
    // srun calls client_prelaunch and client_fini once per component of a heterogeneous step,
    // each from a thread of its own: the components share the one agent above.
    std::mutex srun_mutex;     // prelaunch and fini
    int srun_users = 0;        // components between prelaunch and fini
    env_list srun_env;         // what prelaunch adds to every component's environment

    // slurmstepd side: where that agent listens.
    bool have_agent = false;
    sockaddr_storage agent_host{};
    uint16_t agent_port = 0;
    std::string node_name;
    // slurmstepd side: credentials of Slurm's munge (node records, calls to srun's agent) and
    // what a call credential names.
    std::shared_ptr<munge_credentials> creds;
    std::string cred_nspace;
    uint32_t cred_node = 0;

    // slurmstepd side: the one client of that agent (plugin/agent/stepd/), the ports the
    // server reaches srun's side through, the node's PMIx server and its host (abort, log).
    std::unique_ptr<agent::client> agent_client;
    std::unique_ptr<agent::server_ports> ports;
    std::unique_ptr<server::server_host> host;
    std::unique_ptr<server::pmix_server> server;
    std::unique_ptr<xstep::inbox> xstep_inbox;    // what other steps send this node (xstep.h)
    std::unique_ptr<pmixcpp::directory_socket> directory_socket;  // directory wire-up (directory_route.h)
};

plugin_state &state() {
    static plugin_state s;
    return s;
}

void slurm_log_sink(const log_record &r) {
    // Errors carry their origin, as Slurm's own plugins do.
    switch (r.level) {
    case log_level::error:
        log_var(LOG_LEVEL_ERROR, "mpi/pmixcpp: %s (%s:%d %s)", r.message, r.file, r.line, r.function);
        break;
    case log_level::warning: log_var(LOG_LEVEL_INFO, "mpi/pmixcpp: warning: %s", r.message); break;
    case log_level::info: log_var(LOG_LEVEL_INFO, "mpi/pmixcpp: %s", r.message); break;
    case log_level::verbose: log_var(LOG_LEVEL_VERBOSE, "mpi/pmixcpp: %s", r.message); break;
    case log_level::debug: log_var(LOG_LEVEL_DEBUG, "mpi/pmixcpp: %s", r.message); break;
    default: log_var(LOG_LEVEL_DEBUG2, "mpi/pmixcpp: %s", r.message); break;
    }
}

// PMIxCppDebug 0..5 = error, warning, info, verbose, debug, trace.
void apply_log_level(const plugin_config &cfg) { set_log_level(static_cast<log_level>(cfg.debug)); }

std::vector<std::string> env_vector(char **env) {
    std::vector<std::string> out;
    for (char **e = env; e && *e; ++e) out.emplace_back(*e);
    return out;
}

std::string get_env(char **env, const char *name) {
    const char *v = env ? getenvp(env, name) : nullptr;
    return v ? std::string(v) : std::string();
}

void set_env(char ***env, const env_list &vars) {
    for (const auto &[k, v] : vars) env_array_overwrite(env, k.c_str(), v.c_str());
}

// A heterogeneous step (srun A : B): each component has slurmstepds of its own, and all of
// them serve one namespace, "slurm.<leader job>.<step>".
bool is_het_step(const stepd_step_rec_t *job) {
    return job->het_job_offset != NO_VAL && job->het_job_id && job->het_job_id != NO_VAL;
}

// The combined task map of a heterogeneous step: the servers of every component (a node
// appears once per component that runs on it), their global ranks, and each rank's component.
Status het_map(const stepd_step_rec_t *job, step_info &s) {
    if (job->het_job_ntasks == NO_VAL || job->het_job_nnodes == NO_VAL || !job->het_job_task_cnts ||
        !job->het_job_tids || !job->het_job_node_list)
        return Status(PMIX_ERR_BAD_PARAM, "heterogeneous step without its combined task map");
    if (job->het_job_task_offset == NO_VAL || job->het_job_task_offset >= job->het_job_ntasks)
        return Status(PMIX_ERR_BAD_PARAM, "heterogeneous step without a task offset for its component");
    s.job_id = job->het_job_id;
    s.ntasks = job->het_job_ntasks;
    PMIXCPP_ASSIGN_OR_RETURN(auto names, expand_nodelist(job->het_job_node_list));
    s.node_names = std::move(names);
    if (s.node_names.size() != job->het_job_nnodes)
        return Status(PMIX_ERR_BAD_PARAM, "node list " + std::string(job->het_job_node_list) + " has " +
                                              std::to_string(s.node_names.size()) + " nodes, step has " +
                                              std::to_string(job->het_job_nnodes));
    s.node_ranks.resize(job->het_job_nnodes);
    uint32_t total = 0;
    for (uint32_t n = 0; n < job->het_job_nnodes; ++n) {
        for (uint32_t i = 0; i < job->het_job_task_cnts[n]; ++i) {
            uint32_t r = job->het_job_tids[n][i];
            if (r >= s.ntasks) return Status(PMIX_ERR_BAD_PARAM, "task id " + std::to_string(r) + " out of range");
            s.node_ranks[n].push_back(r);
        }
        total += job->het_job_task_cnts[n];
    }
    if (total != s.ntasks)
        return Status(PMIX_ERR_BAD_PARAM, "task map holds " + std::to_string(total) + " tasks, step has " +
                                              std::to_string(s.ntasks));
    // This server: the entry of this node that holds exactly this component's tasks here (Slurm
    // may have sorted the node list, so the component's node offset does not locate it).
    std::vector<uint32_t> mine;
    for (uint32_t i = 0; i < job->node_tasks; ++i) mine.push_back(job->task[i]->gtid + job->het_job_task_offset);
    bool found = false;
    for (uint32_t n = 0; n < s.node_names.size() && !found; ++n)
        if (job->node_name && s.node_names[n] == job->node_name && s.node_ranks[n] == mine) {
            s.node_id = n;
            found = true;
        }
    if (!found)
        return Status(PMIX_ERR_BAD_PARAM, std::string("node ") + (job->node_name ? job->node_name : "?") +
                                              " with its tasks is not in the step's node list " +
                                              job->het_job_node_list);
    // The apps are the components, numbered in order.
    if (job->het_job_tid_offsets) {
        std::set<uint32_t> offsets(job->het_job_tid_offsets, job->het_job_tid_offsets + s.ntasks);
        std::vector<uint32_t> order(offsets.begin(), offsets.end());
        s.app_of_rank.resize(s.ntasks);
        for (uint32_t r = 0; r < s.ntasks; ++r)
            s.app_of_rank[r] = static_cast<uint32_t>(
                std::lower_bound(order.begin(), order.end(), job->het_job_tid_offsets[r]) - order.begin());
        const uint32_t my_app = s.app_of_rank[job->het_job_task_offset];
        s.app_argv.assign(order.size(), "");
        std::string argv;
        for (uint32_t i = 0; i < job->argc && job->argv && job->argv[i]; ++i) argv += (i ? " " : "") + std::string(job->argv[i]);
        s.app_argv[my_app] = argv;  // the other components' command lines are not sent to this node
    }
    return Status::success();
}

// stepd_step_rec_t -> step_info (plain C++).
Result<step_info> step_from_slurm(const stepd_step_rec_t *job) {
    if (!job) return Status(PMIX_ERR_BAD_PARAM, "no step record");
    if (!job->msg) return Status(PMIX_ERR_NOT_SUPPORTED, "not a task launch (batch step?)");
    const launch_tasks_request_msg_t *msg = job->msg;

    step_info s;
    s.job_id = job->step_id.job_id;
    s.step_id = job->step_id.step_id;
    s.uid = job->uid;
    s.gid = job->gid;
    s.ntasks = job->ntasks;
    s.node_id = job->nodeid;
    s.cpus_per_task = job->cpus_per_task ? job->cpus_per_task : 1;

    if (is_het_step(job)) {
        PMIXCPP_RETURN_IF_ERROR(het_map(job, s), "heterogeneous step");
    } else {
        PMIXCPP_ASSIGN_OR_RETURN(auto names, expand_nodelist(msg->complete_nodelist));
        s.node_names = std::move(names);
        if (s.node_names.size() != job->nnodes)
            return Status(PMIX_ERR_BAD_PARAM, "node list " + std::string(msg->complete_nodelist) + " has " +
                                                  std::to_string(s.node_names.size()) + " nodes, step has " +
                                                  std::to_string(job->nnodes));
        if (s.node_id >= s.node_names.size())
            return Status(PMIX_ERR_BAD_PARAM, "node id " + std::to_string(s.node_id) + " out of range");
        if (!msg->tasks_to_launch || !msg->global_task_ids)
            return Status(PMIX_ERR_BAD_PARAM, "launch message has no task map");

        s.node_ranks.resize(job->nnodes);
        uint32_t total = 0;
        for (uint32_t n = 0; n < job->nnodes; ++n) {
            for (uint32_t i = 0; i < msg->tasks_to_launch[n]; ++i) {
                uint32_t r = msg->global_task_ids[n][i];
                if (r >= job->ntasks)
                    return Status(PMIX_ERR_BAD_PARAM, "task id " + std::to_string(r) + " out of range");
                s.node_ranks[n].push_back(r);
            }
            total += msg->tasks_to_launch[n];
        }
        if (total != job->ntasks)
            return Status(PMIX_ERR_BAD_PARAM, "task map holds " + std::to_string(total) + " tasks, step has " +
                                                  std::to_string(job->ntasks));
        // srun --multi-prog: every line of its configuration (slurmstepd's argv[1]) is an app.
        if ((job->flags & LAUNCH_MULTI_PROG) && job->argc >= 2 && job->argv && job->argv[1]) {
            auto apps = spawn::parse_multi_prog(job->argv[1], s.ntasks);
            if (apps.ok()) {
                s.app_of_rank = std::move(apps->app_of_rank);
                s.app_argv = std::move(apps->argv);
            } else {
                PMIXCPP_LOG_WARNING("%s (the step is one app)", apps.status().message().c_str());
            }
        }
    }
    s.nspace = make_namespace(s.job_id, s.step_id);
    char host[256] = {};
    gethostname(host, sizeof(host) - 1);
    s.hostname = host;
    s.job_env = env_vector(job->env);
    // what the allocation can hold: MPI_UNIVERSE_SIZE, room for MPI_Comm_spawn
    s.universe_size = universe_from_cpus(get_env(job->env, "SLURM_JOB_CPUS_PER_NODE"), s.cpus_per_task, s.ntasks);
    return s;
}

std::string node_tmpfs(const stepd_step_rec_t *job) {
    char *tmp = slurm_get_tmp_fs(job->node_name);
    std::string out = tmp ? tmp : "/tmp";
    xfree(tmp);
    return out;
}

// slurmstepd: the IPv4 address the node transport listens on: the node's NodeAddr as Slurm
// resolves it, else the address this node reaches srun from; "" (every interface) if neither.
std::string node_listen_address(const stepd_step_rec_t *job, const sockaddr_storage *agent_host) {
    slurm_addr_t a{};
    if (job && job->node_name && slurm_conf_get_addr(job->node_name, &a, 0) == SLURM_SUCCESS && a.ss_family == AF_INET &&
        reinterpret_cast<sockaddr_in *>(&a)->sin_addr.s_addr != htonl(INADDR_ANY))
        return net::peer_address(a);
    if (agent_host && agent_host->ss_family == AF_INET) {
        std::string mine = local_address_toward(*agent_host);
        if (!mine.empty()) return mine;
    }
    PMIXCPP_LOG_WARNING("no address known for node %s: the node transport listens on every interface",
                        job && job->node_name ? job->node_name : "?");
    return {};
}

// slurmstepd: static wire-up (net/static_route.h). Every node's TCP address from root's Slurm
// configuration (NodeAddr) and the step's first reserved port, if the site reserves ports
// (MpiParams=ports=) and the step's port passes the checks; else empty, with the reason logged
// when it is not the ordinary absence of reserved ports. The same inputs on every node (one
// configuration, one step environment): every node takes the same route.
bool static_route(char **env, const step_info &step, server::multinode_options &mo) {
    const std::string ports = get_env(env, "SLURM_STEP_RESV_PORTS");
    if (ports.empty() || !slurm_conf.mpi_params) return false;
    auto refuse = [&](const std::string &why) {
        PMIXCPP_LOG_WARNING("%s: static wire-up refused (%s); using the address rendezvous", step.nspace.c_str(),
                            why.c_str());
        return false;
    };
    auto range = net::reserved_port_range(slurm_conf.mpi_params);
    if (!range.ok()) return refuse(range.status().message());
    auto port = net::step_static_port(ports, range.value());
    if (!port.ok()) return refuse(port.status().message());
    std::vector<std::string> addresses;
    addresses.reserve(step.node_names.size());
    for (const auto &name : step.node_names) {
        slurm_addr_t a{};
        if (slurm_conf_get_addr(name.c_str(), &a, 0) != SLURM_SUCCESS || a.ss_family != AF_INET ||
            reinterpret_cast<sockaddr_in *>(&a)->sin_addr.s_addr == htonl(INADDR_ANY))
            return refuse("no IPv4 NodeAddr for node " + name);
        addresses.push_back("tcp:" + net::peer_address(a) + ":" + std::to_string(port.value()));
    }
    mo.bind_address = addresses[step.node_id].substr(4, addresses[step.node_id].rfind(':') - 4);
    mo.static_addresses = std::move(addresses);
    mo.static_port = port.value();
    return true;
}

// slurmstepd: the directory route (net/directory.h), where it can be taken on every node alike:
// a spool directory, not a heterogeneous step (its components are steps of their own), and for
// TCP a listening address of the node's own (a record of "tcp:*" names no host). Else, with
// PMIxCppWireup=auto (a step of PMIxCppDirectoryNodes nodes or more), the rendezvous; with
// =directory, the same, with a warning.
void directory_route(const stepd_step_rec_t *job, const step_info &step, const plugin_config &cfg,
                     server::multinode_options &mo) {
    auto place = slurm_glue::directory_place_of(job->step_id.job_id, job->step_id.step_id, job->node_name);
    std::string why;
    if (!place.ok()) why = place.status().message();
    else if (is_het_step(job)) why = "a heterogeneous step";
    else if (!mo.ucx && mo.bind_address.empty()) why = "no address of this node to listen on";
    if (!why.empty()) {
        if (cfg.wireup == wireup_kind::directory)
            PMIXCPP_LOG_WARNING("%s: directory wire-up not taken (%s); using the address rendezvous", step.nspace.c_str(),
                                why.c_str());
        else
            PMIXCPP_LOG_VERBOSE("%s: directory wire-up not taken (%s)", step.nspace.c_str(), why.c_str());
        return;
    }
    mo.static_addresses.clear();
    mo.directory = true;
    mo.directory_send = [names = step.node_names, address = place->address](const std::vector<uint32_t> &nodes,
                                                                            const std::vector<uint8_t> &message) {
        return slurm_glue::forward_to_nodes(names, address, nodes, message);
    };
    mo.directory_listen = [place = place.value()](std::function<void(std::vector<uint8_t>)> deliver) -> Status {
        auto sock = directory_socket::open(place.local_dir, place.name, {0, slurm_conf.slurm_user_id},
                                                wire::kMaxDirectoryRecord + 64, std::move(deliver));
        PMIXCPP_RETURN_IF_ERROR(sock);
        state().directory_socket = std::move(sock.value());
        return Status::success();
    };
}

// Take the agent's address from the step environment (and hide it from the tasks).
void take_agent_address(const stepd_step_rec_t *job, char ***env) {
    plugin_state &st = state();
    st.node_name = job && job->node_name ? job->node_name : "";
    const std::string port = get_env(*env, kAgentPortEnv);
    unsetenvp(*env, kAgentPortEnv);
    if (port.empty() || !job || !job->sruns) return;
    st.creds = std::make_shared<munge_credentials>(munge_socket_of(slurm_conf.authinfo), job->uid);
    // The step's namespace, as srun's agent knows it: a heterogeneous step's is its leader's, for
    // the calls of every component (a report that this node's setup failed comes before prefork).
    st.cred_nspace = make_namespace(is_het_step(job) ? job->het_job_id : job->step_id.job_id, job->step_id.step_id);
    st.cred_node = job->nodeid;
    auto *srun = static_cast<srun_info_t *>(list_peek(job->sruns));
    if (!srun) return;
    st.agent_host = srun->resp_addr;
    st.agent_port = static_cast<uint16_t>(std::strtoul(port.c_str(), nullptr, 10));
    st.have_agent = st.agent_port != 0;
    // Each call to srun's agent opens with a fresh credential of this slurmstepd (root) that only
    // the job's user can open: srun checks who signed it and for which step (net/identity.h).
    if (st.have_agent)
        st.agent_client = std::make_unique<agent::client>(
            st.agent_host, st.agent_port,
            [] {
                plugin_state &ps = state();
                return net::make_agent_credential(*ps.creds, ps.cred_nspace, ps.cred_node);
            },
            &services::names());
}

// Tell srun (and so the user) what went wrong; srun exits with `status`.
void report_to_srun(agent::report::kind what, int status, const std::string &message) {
    plugin_state &st = state();
    if (!st.agent_client) return;
    agent::report r;
    r.what = what;
    r.status = status;
    r.node = st.node_name;
    r.message = message;
    Status s = st.agent_client->report(r);
    if (!s.ok()) PMIXCPP_LOG_ERROR("could not tell srun: %s", s.message().c_str());
}

// The server's host in slurmstepd. PMIx_Abort: logged with error() (slurmd log), reported to
// srun's agent (srun prints it and exits with the status), and the step is killed through
// slurmctld. The slow parts (TCP to srun, RPC to slurmctld) run on a thread of their own,
// never on the server's loop thread; the client is released as soon as the request is queued.
class slurm_host : public server::server_host {
public:
    // job_id: this node's own Slurm job (a heterogeneous step's other components are ended by
    // srun, with the user's credential: their job ids come from the user's launch message).
    slurm_host(uint32_t job_id, uint32_t step_id, const stepd_step_rec_t *job)
        : _job_id(job_id), _step_id(step_id), _job(job),
          _rank_offset(is_het_step(job) ? job->het_job_task_offset : 0) {}
    ~slurm_host() override {
        std::lock_guard<std::mutex> lock(_mutex);
        if (_killer.joinable()) _killer.join();
    }

    Status abort(const std::string &nspace, uint32_t rank, int status, const std::string &message,
                 const std::vector<pmix_proc_t> &procs) override {
        log_var(LOG_LEVEL_ERROR, "mpi/pmixcpp: %s: rank %u called PMIx_Abort (status %d%s): %s; killing step %u.%u",
                nspace.c_str(), rank, status, procs.empty() ? "" : ", procs named: the whole step is killed",
                message.c_str(), _job_id, _step_id);
        std::lock_guard<std::mutex> lock(_mutex);
        if (_killer.joinable()) return Status::success();  // already on its way
        try {
            std::string text = "rank " + std::to_string(rank) + " called PMIx_Abort: " + message;
            _killer = std::thread([job = _job_id, step = _step_id, status, text] {
                report_to_srun(agent::report::kind::abort, status, text);
                if (slurm_signal_step(job, step, SIGKILL) != SLURM_SUCCESS)
                    log_var(LOG_LEVEL_ERROR, "mpi/pmixcpp: slurm_kill_job_step(%u, %u, SIGKILL) failed: %s", job,
                            step, slurm_strerror(slurm_last_error()));
            });
        } catch (const std::exception &e) {
            return Status(PMIX_ERROR, std::string("cannot start the kill request: ") + e.what());
        }
        return Status::success();
    }

    void log(const std::string &nspace, uint32_t rank, const std::string &channel,
             const std::string &message) override {
        log_var(LOG_LEVEL_INFO, "mpi/pmixcpp: %s: rank %u logs (%s): %s", nspace.c_str(), rank, channel.c_str(),
                message.c_str());
    }

    // The task record slurmstepd keeps (stepd_step_task_info_t): its pid, and once slurmstepd's main
    // thread reaped it, `exited` and the wait status. Read from the server's loop thread while the
    // main thread may write them: single aligned words, read atomically, the status after the flag.
    task_status task(uint32_t rank) const override {
        task_status t;
        if (_job == nullptr || _job->task == nullptr) return t;
        for (uint32_t i = 0; i < _job->node_tasks; ++i) {
            const auto *tk = _job->task[i];
            if (tk == nullptr || tk->gtid + _rank_offset != rank) continue;
            t.pid = __atomic_load_n(&tk->pid, __ATOMIC_ACQUIRE);
            t.exited = __atomic_load_n(&tk->exited, __ATOMIC_ACQUIRE);
            if (t.exited) t.wait_status = __atomic_load_n(&tk->estatus, __ATOMIC_ACQUIRE);
            break;
        }
        return t;
    }

private:
    uint32_t _job_id, _step_id;
    const stepd_step_rec_t *_job;  // slurmstepd's, alive as long as slurmstepd (and so this host)
    uint32_t _rank_offset;         // a heterogeneous step's component: its first global rank
    std::mutex _mutex;
    std::thread _killer;
};

Status prefork(const stepd_step_rec_t *job, char ***env) {
    plugin_state &st = state();
    if (!st.config_error.empty()) return Status(PMIX_ERR_BAD_PARAM, st.config_error);

    auto step = step_from_slurm(job);
    PMIXCPP_RETURN_IF_ERROR(step, "step data");

    plugin_config cfg = st.config;
    PMIXCPP_RETURN_IF_ERROR(cfg.apply_env_overrides(step->job_env));
    apply_log_level(cfg);

    PMIXCPP_ASSIGN_OR_RETURN(auto token, random_token());
    step->client_token = token;

    const std::string base = cfg.tmpdir_base.empty() ? node_tmpfs(job) : cfg.tmpdir_base;
    PMIXCPP_RETURN_IF_ERROR(prepare_step_dir(step.value(), base), "step directory");

    // hwloc once, here, before any task exists: no client ever waits for it.
    auto topo = server::load_node_topology();
    if (!topo.ok()) {
        remove_step_dir(step.value());
        return topo.status().with_context("node topology");
    }
    PMIXCPP_LOG_DEBUG("%s: topology loaded in %.1f ms: cpuset %s, locality %s", step->nspace.c_str(),
                      topo->load_ms, topo->cpuset.c_str(), topo->locality.c_str());
    auto host = std::make_unique<slurm_host>(job->step_id.job_id, step->step_id, job);
    server::server_options options;
    server::multinode_options &mo = options.multinode;
    mo.enabled = st.have_agent && step->node_names.size() > 1;
    mo.ucx = cfg.transport == transport_kind::ucx;
    if (st.creds) {
        st.cred_nspace = step->nspace;
        st.cred_node = step->node_id;
        net::step_binding b;
        b.job_id = step->job_id;
        b.step_id = step->step_id;
        b.nspace = step->nspace;
        b.nnodes = static_cast<uint32_t>(step->node_names.size());
        b.trusted_uids = {0, slurm_conf.slurm_user_id};
        mo.identity = std::make_shared<net::node_identity>(*st.creds, std::move(b), step->node_id);
    }
    if (mo.enabled) mo.bind_address = node_listen_address(job, &st.agent_host);  // (UCX may fall back to TCP)
    // No address rendezvous where every node's address can be computed (TCP only: a UCX worker
    // address cannot be).
    // Not for a heterogeneous step: each component has ports of its own, reserved on its own
    // nodes only, and srun hands every component the list of all of them.
    bool is_static = false;
    if (mo.enabled && !mo.ucx && !is_het_step(job) && cfg.wireup != wireup_kind::directory)
        is_static = static_route(*env, *step, mo);
    if (mo.enabled && !is_static && wants_directory_route(cfg, step->node_names.size()))
        directory_route(job, *step, cfg, mo);
    mo.ucx_tls = cfg.ucx_tls;
    mo.ucx_devices = cfg.ucx_devices;
    mo.eager_connect = cfg.eager_connect;
    mo.fence = cfg.fence;
    mo.tree_width = cfg.tree_width;
    // The tree fence follows the switch topology srun found (fabric_request.h).
    if (std::string groups = get_env(*env, fabric::kNodeGroupsEnv); !groups.empty()) {
        auto g = fabric::decode_node_groups(groups, step->node_names.size());
        if (g.ok()) mo.node_groups = std::move(g.value());
        else PMIXCPP_LOG_WARNING("%s: %s (tree without topology)", step->nspace.c_str(), g.status().message().c_str());
        unsetenvp(*env, fabric::kNodeGroupsEnv);
    }
    mo.ring_threshold = cfg.ring_threshold;
    mo.dmodex_node = cfg.dmodex_node;
    mo.max_connections = cfg.node_connections;
    mo.timeout_sec = cfg.timeout_sec;
    options.job_end_time = std::strtoll(get_env(*env, kJobEndEnv).c_str(), nullptr, 10);
    options.time_limit_alert_sec = cfg.time_limit_alert;
    options.alloc_timeout_sec = cfg.alloc_timeout;
    options.normal_termination_events = cfg.proc_term_all;
    options.native_listener = includes(cfg.client_lib, client_lib_mode::native);
    // Address exchange through srun's agent, on a thread of its own: prefork never waits for
    // other nodes; a fence simply waits until the table is there.
    mo.bootstrap = [node_id = step->node_id, nnodes = static_cast<uint32_t>(step->node_names.size()),
                    timeout_ms = static_cast<int>(std::min<uint32_t>(cfg.timeout_sec, 86400) * 1000)](
                       const std::string &address, server::multinode_options::table_fn ready) {
        plugin_state &ps = state();
        if (!ps.agent_client) return ready(Status(PMIX_ERR_NOT_AVAILABLE, "rendezvous: no srun agent"));
        ps.agent_client->rendezvous(node_id, nnodes, address, timeout_ms, std::move(ready));
    };
    // Everything the server asks of srun's side goes through the one agent client.
    std::unique_ptr<agent::server_ports> ports;
    if (st.agent_client) {
        ports = std::make_unique<agent::server_ports>(*st.agent_client);
        ports->wire(options);
    }
    auto server = server::pmix_server::start(step.value(), topo.value(), host.get(), options);
    if (!server.ok()) {
        remove_step_dir(step.value());
        return server.status();
    }
    // Direct modex and events of the job's other steps reach this node through one call kept
    // open to srun's agent (xstep.h). Without it the step still works; only they do not arrive.
    if (st.agent_client) {
        auto inbox = xstep::inbox::start(*st.agent_client, step->node_id,
                                         [srv = server.value().get()](std::vector<xstep::inbox_item> items) {
                                             srv->from_other_steps(std::move(items));
                                         });
        if (inbox.ok()) st.xstep_inbox = std::move(inbox.value());
        else PMIXCPP_LOG_WARNING("%s: %s", step->nspace.c_str(), inbox.status().message().c_str());
    }

    set_env(env, step_task_env(step.value(), cfg, PMIXCPP_CLIENT_LIBDIR, get_env(*env, "LD_LIBRARY_PATH")));
    // OpenPMIx's own clients find the native listener (its port is known now that it listens).
    if (uint16_t port = server.value()->native_port(); port != 0) set_env(env, native_task_env(step.value(), port));

    PMIXCPP_LOG_VERBOSE("%s: node %u (%s) of %zu, %zu local ranks, server %s", step->nspace.c_str(),
                        step->node_id, step->node_name().c_str(), step->node_names.size(),
                        step->local_ranks().size(), step->server_socket.c_str());
    st.config = cfg;
    st.step = std::move(step.value());
    st.host = std::move(host);
    st.ports = std::move(ports);
    st.server = std::move(server.value());
    st.have_step = true;
    return Status::success();
}

// Run a hook body through the C-boundary guard (shared/c_boundary.h); map a failure Status or any
// exception to SLURM_ERROR with a log line.
template <typename F>
int guarded(const char *hook, F &&body) {
    Status s = guard_status(std::forward<F>(body));
    if (s.ok()) return SLURM_SUCCESS;
    PMIXCPP_LOG_ERROR("%s: %s", hook, s.message().c_str());
    return SLURM_ERROR;
}

}  // namespace
}  // namespace pmixcpp

using namespace pmixcpp;

PMIXCPP_EXPORT int init(void) {
    set_log_sink(slurm_log_sink);
    return SLURM_SUCCESS;
}

PMIXCPP_EXPORT slurm_fini_result fini(void) {
    plugin_state &st = state();
    try {
        // The gate: every call to srun's agent in flight (rendezvous, inbox, the server's calls)
        // ends within 100 ms and its worker is joined, before the server its answers go to.
        if (st.agent_client) st.agent_client->shutdown();
        st.xstep_inbox.reset();  // its call ended with the gate
        st.directory_socket.reset();  // no more messages of the directory route; the socket is removed
        if (st.server) {
            st.server->stop();  // joins the loop thread, removes the socket
            // Nodes of the step were lost: their tasks will never be reported to srun, which
            // would wait for them forever. Tell srun's agent that this node is done; once every
            // node is done or lost it ends the step.
            std::string lost;
            for (const auto &n : st.server->lost_nodes()) lost += (lost.empty() ? "" : ",") + n;
            st.server.reset();
            if (!lost.empty()) report_to_srun(agent::report::kind::node_done, 1, lost);
        }
        st.host.reset();   // waits for a pending abort's kill request
        st.ports.reset();
        st.agent_client.reset();
    } catch (...) {
        PMIXCPP_LOG_ERROR("fini: internal error while stopping the server");
    }
    if (st.have_step) {
        remove_step_dir(st.step);
        st.have_step = false;
    }
    return fini_result(SLURM_SUCCESS);
}

PMIXCPP_EXPORT int mpi_p_slurmstepd_prefork(const stepd_step_rec_t *job, char ***env) {
    if (!env) return SLURM_ERROR;
    std::string failure;
    int rc = guarded("slurmstepd_prefork", [&] {
        take_agent_address(job, env);
        Status s = prefork(job, env);
        if (!s.ok()) failure = s.message();
        return s;
    });
    if (rc != SLURM_SUCCESS)
        report_to_srun(agent::report::kind::setup_failed, 1,
                       "step setup failed: " + (failure.empty() ? std::string("internal error") : failure));
    return rc;
}

// Runs in the forked task, just before exec, as the job's user: Slurm (slurmstepd's
// _fork_all_tasks) drops the task's real, effective and saved ids to the user's before it calls
// this. The task's environment, and its process directory (PMIX_PROCDIR), made here as the user
// (never by root in the user's directory), so that it exists before the program starts and no
// Get makes it. A failure ends the task before exec (Slurm: "Unable to configure MPI plugin"),
// with the reason in slurmd's log and on the task's stderr.
PMIXCPP_EXPORT int mpi_p_slurmstepd_task(const slurm_mpi_task_info *task, char ***env) {
    if (!task || !env) return SLURM_ERROR;
    std::string failure;
    int rc = guarded("slurmstepd_task", [&]() -> Status {
        if (!state().have_step) return Status(PMIX_ERR_INIT, "the step was not prepared by slurmstepd_prefork");
        // Slurm gives a heterogeneous component's task its rank in the whole step already.
        if (Status s = make_proc_dir(state().step, task->gtaskid); !s.ok()) {
            failure = s.message();
            return s;
        }
        set_env(env, task_env(state().step, task->gtaskid, static_cast<uint32_t>(task->ltaskid)));
        return Status::success();
    });
    if (!failure.empty()) {
        // The task's stderr is the user's output by now (Slurm set up its stdio before this hook).
        const std::string line = "mpi/pmixcpp: rank " + std::to_string(task->gtaskid) + ": " + failure + "\n";
        (void)!write(STDERR_FILENO, line.data(), line.size());
    }
    return rc;
}

static mpi_plugin_client_state_t *client_prelaunch(const slurm_mpi_step_info *job, char ***env) {
    // srun side: refuse a bad SLURM_PMIXCPP_* override before anything is
    // launched, then start the agent that hears from the step's daemons.
    if (!env || !job) return nullptr;
    plugin_state &st = state();
    std::lock_guard<std::mutex> srun_lock(st.srun_mutex);
    // A heterogeneous step is one namespace, named after the leader job; its components share
    // the agent the first of them started.
    const bool het = job->het_job_id != NO_VAL && job->het_job_id != 0;
    const uint32_t ns_job = het ? job->het_job_id : job->step_id.job_id;
    const std::string nspace = make_namespace(ns_job, job->step_id.step_id);
    if (st.srun && st.srun_users > 0 && st.srun->nspace == nspace) {
        if (!st.srun->components->add(job->step_id.job_id, job->step_id.step_id)) {
            log_var(LOG_LEVEL_VERBOSE, "mpi/pmixcpp: step %s was ended before its component %u.%u started",
                    nspace.c_str(), job->step_id.job_id, job->step_id.step_id);
            return nullptr;
        }
        set_env(env, st.srun_env);
        ++st.srun_users;
        return static_cast<mpi_plugin_client_state_t *>(st.srun->agent.get());
    }
    env_list step_env;
    int rc = guarded("client_prelaunch", [&]() -> Status {
        plugin_config cfg = state().config;
        PMIXCPP_RETURN_IF_ERROR(cfg.apply_env_overrides(env_vector(environ)));
        PMIXCPP_ASSIGN_OR_RETURN(auto side, srun_side::start(job, cfg, ns_job, nspace, &step_env));
        srun_side &s = *side;
        // The services srun's agent dispatches the node servers' requests to: each registers its
        // handlers under its ids (plugin/services/service_ids.h).
        agent::service_table &table = s.agent->services();
        table.set_names(&services::names());
        PMIXCPP_RETURN_IF_ERROR(s.bridge->register_in(table));
        PMIXCPP_RETURN_IF_ERROR(s.launcher->register_in(table));
        PMIXCPP_RETURN_IF_ERROR(s.fabric->register_in(table));
        if (s.job_store) {
            PMIXCPP_RETURN_IF_ERROR(s.job_store->register_in(table));
        }
        if (s.xstep_router) {
            PMIXCPP_RETURN_IF_ERROR(s.xstep_router->register_in(table));
        }
        state().srun = std::move(side);
        return Status::success();
    });
    if (rc != SLURM_SUCCESS) return nullptr;
    set_env(env, step_env);
    st.srun_env = std::move(step_env);
    st.srun_users = 1;
    return static_cast<mpi_plugin_client_state_t *>(st.srun->agent.get());
}

PMIXCPP_EXPORT mpi_plugin_client_state_t *mpi_p_client_prelaunch(const slurm_mpi_step_info *job, char ***env) {
    return c_boundary_or("client_prelaunch", static_cast<mpi_plugin_client_state_t *>(nullptr),
                         [&] { return client_prelaunch(job, env); });
}

// srun side, after the step: the exit code srun returns (a PMIx_Abort status,
// or 1 when a node could not set the step up; 0 otherwise).
static int client_fini(mpi_plugin_client_state_t *client_state) {
    plugin_state &st = state();
    std::lock_guard<std::mutex> srun_lock(st.srun_mutex);
    if (!st.srun) return SLURM_SUCCESS;
    if (--st.srun_users > 0) return st.srun->agent->exit_code();  // other components still run
    int code = st.srun->stop();
    st.srun.reset();
    st.srun_env.clear();
    return code;
}

PMIXCPP_EXPORT int mpi_p_client_fini(mpi_plugin_client_state_t *client_state) {
    return c_boundary_or("client_fini", static_cast<int>(SLURM_ERROR), [&] { return client_fini(client_state); });
}

// --- mpi.conf ------------------------------------------------------------

namespace {
// Our keys as a NULL-terminated Slurm option table; every value is a string
// that plugin_config validates itself, so errors name our key.
std::vector<s_p_options_t> option_table() {
    std::vector<s_p_options_t> opts;
    for (const auto &key : config_keys()) {
        s_p_options_t o{};
        o.key = const_cast<char *>(key.c_str());
        o.type = S_P_STRING;
        opts.push_back(o);
    }
    opts.push_back(s_p_options_t{});  // terminator
    return opts;
}
}  // namespace

PMIXCPP_EXPORT void mpi_p_conf_options(s_p_options_t **full_options, int *full_options_cnt) {
    c_boundary_void("conf_options", [&] {
        std::vector<s_p_options_t> opts = option_table();
        transfer_s_p_options(full_options, opts.data(), full_options_cnt);
    });
}

static void conf_set(s_p_hashtbl_t *tbl) {
    plugin_state &st = state();
    st.config = plugin_config{};
    st.config_error.clear();
    if (!tbl) return;
    for (const auto &key : config_keys()) {
        char *value = nullptr;
        if (!s_p_get_string(&value, key.c_str(), tbl)) continue;
        Status s = st.config.set(key, value ? value : "");
        xfree(value);
        if (!s.ok()) {
            // The daemon reading mpi.conf refuses to start, as Slurm does for a bad
            // slurm.conf value; a step launched with it would fail anyway.
            st.config_error = s.message();
            fatal("mpi/pmixcpp: %s", s.message().c_str());
        }
    }
    apply_log_level(st.config);
}

PMIXCPP_EXPORT void mpi_p_conf_set(s_p_hashtbl_t *tbl) {
    c_boundary_void("conf_set", [&] { conf_set(tbl); });
}

static s_p_hashtbl_t *conf_get() {
    // Re-create the table from the current settings so slurmd can pass it to slurmstepd.
    std::vector<s_p_options_t> opts = option_table();
    s_p_hashtbl_t *tbl = s_p_hashtbl_create(opts.data());
    for (const auto &[key, value] : state().config.non_default())
        s_p_parse_pair(tbl, key.c_str(), value.c_str());
    return tbl;
}

PMIXCPP_EXPORT s_p_hashtbl_t *mpi_p_conf_get(void) {
    return c_boundary_or("conf_get", static_cast<s_p_hashtbl_t *>(nullptr), [] { return conf_get(); });
}

static slurm_list conf_get_printable() {
    slurm_list data = list_create(destroy_config_key_pair);
    for (const auto &[name, value] : state().config.printable()) {
        auto *pair = static_cast<config_key_pair_t *>(xmalloc(sizeof(config_key_pair_t)));
        pair->name = xstrdup(name.c_str());
        pair->value = xstrdup(value.c_str());
        list_append(data, pair);
    }
    return data;
}

PMIXCPP_EXPORT slurm_list mpi_p_conf_get_printable(void) {
    return c_boundary_or("conf_get_printable", static_cast<slurm_list>(nullptr), [] { return conf_get_printable(); });
}
