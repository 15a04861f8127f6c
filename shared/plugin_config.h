// The plugin's settings: mpi.conf keys, their defaults, validation, and the
// per-step overrides a user may give through SLURM_PMIXCPP_* variables.
// Knows nothing of Slurm: the glue feeds it key/value strings.
#pragma once

#include "status.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace pmixcpp {

enum class fence_algo { automatic, tree, ring, direct };
enum class transport_kind { ucx, tcp };
// PMIxCppWireup: how the node servers of a multi-node step learn each other's addresses.
// srun: the static route where slurm.conf reserves ports (TCP), else the rendezvous through srun's
// agent (every node sends its record to srun, srun answers with the whole table); directory: the
// directory route through slurmd's forwarding (plugin/net/directory.h), no table; auto (the
// default): the static route where it applies, else for a step of PMIxCppDirectoryNodes nodes or
// more the directory route where it can be taken, else the rendezvous.
enum class wireup_kind { automatic, srun, directory };
// PMIxCppClientLib: the PMIx client libraries a step's tasks may use. ours: pmixcpp's
// libpmix.so.2 first in LD_LIBRARY_PATH, served on the step's Unix socket; native: the
// application's own OpenPMIx, served over OpenPMIx's wire protocol on a loopback TCP port
// (plugin/native); both: both at once (each task uses whichever library it loads).
enum class client_lib_mode : uint8_t { ours = 1, native = 2, both = 3 };
// Does `set` include every kind of `m`?
constexpr bool includes(client_lib_mode set, client_lib_mode m) {
    return (static_cast<uint8_t>(set) & static_cast<uint8_t>(m)) == static_cast<uint8_t>(m);
}

const char *to_string(fence_algo a);
const char *to_string(transport_kind t);
const char *to_string(wireup_kind w);
const char *to_string(client_lib_mode m);

struct plugin_config {
    uint32_t debug = 0;                   // PMIxCppDebug: 0 error, 1 warning, 2 info, 3 verbose, 4 debug, 5 trace
    uint32_t timeout_sec = 300;           // PMIxCppTimeout: collectives and remote Gets
    std::string tmpdir_base;              // PMIxCppTmpDirBase: empty = the node's TmpFS
    transport_kind transport = transport_kind::ucx;  // PMIxCppTransport
    wireup_kind wireup = wireup_kind::automatic;     // PMIxCppWireup
    uint32_t directory_nodes = 64;        // PMIxCppDirectoryNodes: auto's smallest step on the directory route
    std::string ucx_tls;                  // PMIxCppUcxTls: UCX_TLS for the node transport
    std::string ucx_devices;              // PMIxCppUcxDevices: UCX_NET_DEVICES
    fence_algo fence = fence_algo::automatic;  // PMIxCppFence
    uint32_t tree_width = 0;              // PMIxCppTreeWidth: fan-out of the k-ary tree (0 = auto: by the step's nodes)
    bool tree_topology = true;            // PMIxCppTreeTopology: the tree follows Slurm's switch topology
    uint32_t fabric_poll = 10;            // PMIxCppFabricPoll: s between srun's topology checks once a fabric is registered (0 = never)
    uint32_t ring_threshold = 65536;      // PMIxCppRingThreshold: bytes per node above which auto picks the ring
    bool eager_connect = false;           // PMIxCppEagerConnect: connect to all peers at start
    bool dmodex_node = false;             // PMIxCppDmodexNode: a direct-modex answer carries the whole node's data
    uint32_t node_connections = 128;      // PMIxCppNodeConnections: open node connections of a server (0 = no cap)
    client_lib_mode client_lib = client_lib_mode::both;  // PMIxCppClientLib (yes = both, no = native)
    bool ompi_vader_dir = true;           // PMIxCppOmpiVaderDir: per-node OpenMPI vader backing directory
    uint32_t time_limit_alert = 60;       // PMIxCppTimeLimitAlert: seconds before the job's end to alert (0 = never)
    std::string signal_events = "USR1,USR2";  // PMIxCppSignalEvents: signals the client turns into events ("none" = off)
    bool proc_term_all = false;           // PMIxCppProcTermEvents: "all" = also normal exits raise PROC_TERMINATED
    uint32_t alloc_timeout = 120;         // PMIxCppAllocTimeout: s an allocation request without PMIX_TIMEOUT may pend (0 = as long as Slurm keeps it)

    // Set one key (mpi.conf spelling). Unknown key or bad value -> PMIX_ERR_BAD_PARAM
    // with a message naming the key and the accepted values; *this unchanged on failure.
    Status set(const std::string &key, const std::string &value);

    // Apply SLURM_PMIXCPP_<NAME> overrides found in an environment (KEY=VALUE strings). An
    // override of an administrator-only key (admin_only_key) is refused, naming the variable;
    // SLURM_PMIXCPP_CLIENTLIB may only narrow what mpi.conf allows (both -> ours or native).
    Status apply_env_overrides(const std::vector<std::string> &env);

    // Every key with its current value, in mpi.conf spelling, for display.
    std::vector<std::pair<std::string, std::string>> printable() const;

    // The keys whose value differs from the default, as mpi.conf would spell them
    // (what slurmd hands on to slurmstepd).
    std::vector<std::pair<std::string, std::string>> non_default() const;
};

// Whether a step of `nodes` nodes that the static route does not serve asks for the directory
// route (PMIxCppWireup directory, or auto and at least PMIxCppDirectoryNodes nodes). Below that
// size srun's rendezvous is the cheaper one: a single round trip to srun, where the directory
// route pays slurmd's forwarding (a fork and two credentials a message) for every neighbour; from
// it on srun would hold a connection from every node and send N tables of N records.
bool wants_directory_route(const plugin_config &c, size_t nodes);

// The mpi.conf keys this plugin owns (all start with "PMIxCpp", so they never
// collide with mpi/pmix's "PMIx*" keys).
const std::vector<std::string> &config_keys();

// The environment variable that overrides a key: PMIxCppTmpDirBase -> SLURM_PMIXCPP_TMPDIRBASE.
std::string env_override_name(const std::string &key);

// Keys that steer what root does (PMIxCppTmpDirBase, PMIxCppUcxTls, PMIxCppUcxDevices): set only
// in mpi.conf, never by a user's environment.
bool admin_only_key(const std::string &key);

}  // namespace pmixcpp
