// The PMIx server of one job step on one node: a Unix socket in the step directory, its own
// libevent loop thread that owns every piece of server state (clients, key-value store, fences,
// waiting Gets), and the job-data file. Other threads only start, stop, or post work to it.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "../services/xstep/xstep_codec.h"
#include "alloc.h"
#include "events.h"
#include "fence_tracker.h"
#include "host.h"
#include "plugin_config.h"
#include "../net/identity.h"
#include "status.h"
#include "../common/step_info.h"
#include "topology.h"

namespace pmixcpp::server {

// The multi-node part: node transport, collectives, direct modex. Used when the step spans
// several nodes and `enabled`.
struct multinode_options {
    bool enabled = false;
    bool ucx = true;               // try UCX first; TCP if UCX cannot start
    // This node's identity (net/identity.h): signs our node record, checks the peers' records;
    // the node links' keys come from it. Required for multi-node steps.
    std::shared_ptr<net::node_identity> identity;
    std::string ucx_tls, ucx_devices;
    std::string bind_address;      // TCP: listen on this IPv4 address (the node's), empty: any
    // Static wire-up (net/transport.h; TCP only): every node's transport address "tcp:<ip>:<port>"
    // (index = node id), from Slurm's configuration and the step's reserved port; ours is listened
    // on. Empty: the addresses are exchanged through `bootstrap`.
    std::vector<std::string> static_addresses;
    uint16_t static_port = 0;
    bool eager_connect = false;
    fence_algo fence = fence_algo::automatic;  // PMIxCppFence
    uint32_t tree_width = 0;       // PMIxCppTreeWidth; 0: auto (coll::default_tree_width)
    std::vector<uint32_t> node_groups;  // per node id: leaf switch, for the tree fence (coll/engines.h)
    uint32_t ring_threshold = 65536;
    bool dmodex_node = false;      // a direct-modex answer carries every rank of the node
    uint32_t max_connections = 0;  // PMIxCppNodeConnections: our open node connections (0: no cap)
    uint32_t timeout_sec = 300;    // collectives and remote Gets
    // Publish our signed node record and learn everyone's (index = node id), unchanged. Called
    // once on the loop thread; must return at once and call `ready` exactly once, from any thread.
    using table_fn = std::function<void(Result<std::vector<std::string>>)>;
    std::function<void(const std::string &address, table_fn ready)> bootstrap;
    // Directory wire-up (net/directory.h): set, the nodes learn each other's addresses through
    // slurmd's forwarding instead of `bootstrap` (and of the static route). `directory_send`
    // delivers a message to nodes (blocking; returns those not reached); `directory_listen`
    // opens this node's socket of the step, handing each message to `deliver` (any thread, never
    // blocks). If it cannot, this node's wire-up fails: the others take the same route.
    bool directory = false;
    std::function<std::vector<uint32_t>(const std::vector<uint32_t> &nodes, const std::vector<uint8_t> &message)>
        directory_send;
    std::function<Status(std::function<void(std::vector<uint8_t>)> deliver)> directory_listen;
};

struct server_options {
    // Multi-node fence backend; nullptr = the built-in one (multinode below), or refuse
    // multi-node fences (PMIX_ERR_NOT_SUPPORTED) when multinode is not enabled.
    remote_fences *remote = nullptr;
    multinode_options multinode;
    // Cross-node events (events.h); nullptr = events reach this node's processes only.
    remote_events *event_forwarder = nullptr;
    // srun's side (host.h agent_port): PMIx_Spawn and spawn watches (plugin/services/spawn/spawn_codec.h),
    // the job's store and connect rendezvous (session_store.h), PMIx_Fabric_register/update
    // (fabric_request.h), messages to the other steps of the job (xstep.h: direct modex of their
    // procs, events of range SESSION/GLOBAL/CUSTOM; what comes from them is handed in with
    // pmix_server::from_other_steps). nullptr: spawn and fabric are PMIX_ERR_NOT_SUPPORTED, the
    // session is the step, Gets of other namespaces are answered from what PMIx_Connect brought
    // and events stay in the step.
    agent_port *agent = nullptr;
    // Largest frame payload a client may send.
    uint32_t max_payload = 64u << 20;
    // Allocation requests and resource-manager queries (alloc.h); nullptr = not supported.
    alloc_host *alloc = nullptr;
    // How long an allocation request that grows the job (NEW, EXTEND, REACQUIRE, a
    // pmixcpp.spawn.grow) may wait for Slurm when it names no PMIX_TIMEOUT (PMIxCppAllocTimeout);
    // 0: as long as Slurm keeps it pending.
    uint32_t alloc_timeout_sec = 120;
    // The job's end (Unix time, 0 = unknown) and how long before it every local process gets
    // PMIX_JCTRL_PREEMPT_ALERT (0 = never).
    int64_t job_end_time = 0;
    uint32_t time_limit_alert_sec = 0;
    // PMIX_EVENT_PROC_TERMINATED also for ranks that exit after PMIx_Finalize (events.h).
    bool normal_termination_events = false;
    // Serve OpenPMIx's own clients (plugin/native) on a TCP port of 127.0.0.1 (PMIxCppClientLib
    // native or both): only sockets of the job's user, one connection per local rank.
    bool native_listener = false;
};

class server_impl;

class pmix_server {
public:
    // Write the job data, create and listen on step.server_socket, start the loop thread.
    // `host` must outlive the server. Nothing is left behind on failure.
    static Result<std::unique_ptr<pmix_server>> start(const step_info &step, const node_topology &topo,
                                                      server_host *host, server_options options = {});
    ~pmix_server();  // stop()
    pmix_server(const pmix_server &) = delete;
    pmix_server &operator=(const pmix_server &) = delete;

    // Stop the loop, join the thread, close every connection, remove the socket and the
    // registered clean-up paths. Idempotent; call from any thread but the loop thread.
    void stop();

    // Run `fn` on the loop thread (thread safe). Dropped if the server is stopping.
    void post(std::function<void()> fn);

    // Messages of other steps for this node (the inbox of plugin/services/xstep/xstep_stepd.h), any thread:
    // direct-modex requests for local ranks (answered through options.xstep) and events.
    void from_other_steps(std::vector<xstep::inbox_item> items);

    const std::string &jobdata_path() const;
    // The native listener's port on 127.0.0.1 (options.native_listener), else 0.
    uint16_t native_port() const;
    // Names of the step's nodes found lost (plugin/net/transport.h); call after stop().
    std::vector<std::string> lost_nodes() const;

private:
    explicit pmix_server(std::unique_ptr<server_impl> impl);
    std::unique_ptr<server_impl> _impl;
};

}  // namespace pmixcpp::server
