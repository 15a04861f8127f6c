// PMIx groups of one step: construct (also an invitation's accept/decline) and destruct are one
// collective among the members' servers. No I/O here: the server hands requests in and carries
// the node collective (plugin/coll, the fence machinery) through `group_ops`.
//
// A collective = (construct | destruct, group name, member ranks). Each node's server waits until
// every local member is accounted for (entered, or gone: died or finalized before entering), then
// contributes its local members' entries (state + the PMIX_GROUP_INFO they add) to one collective
// over the member nodes only: construction at N nodes costs one fence, no round trip per node.
//
// Context ids (PMIX_GROUP_ASSIGN_CONTEXT_ID): a node that asks reserves a candidate
//     counter << 32 | (step id & 0xffff) << 16 | (node id & 0xffff)
// never handing one out twice; the collective takes the greatest candidate among the
// contributions, which was reserved for this collective alone, so the id is unique among the
// groups of the job's steps (below 65536 steps and nodes). Every node raises its counter past the
// winner afterwards.
//
// Members of several steps of the job: the same entries go through the job's rendezvous beside
// srun instead (connect.h), one contribution per node; such groups are no process sets.
//
// Bootstrap (PMIX_GROUP_BOOTSTRAP, and PMIX_GROUP_ADD_MEMBERS): leaders name themselves, the
// number of leaders and perhaps further members; those members call construct with no procs. No
// node knows the membership in advance, so each member's server sends its entry to node 0 (one
// message), which answers the member nodes once every leader and every member a leader named has
// entered; then the ordinary construct collective runs over that membership. Two messages per
// member node, whatever the group's size.
//
// Process sets: a constructed group is also a process set of its name (PMIX_QUERY_PSET_*); the
// server remembers the groups whose members it serves until they are destructed. A name is one
// group: while it is, a construct of its name with other members is PMIX_ERR_EXISTS and a destruct
// naming ranks outside it PMIX_ERR_BAD_PARAM (fewer members, as after a leave, may destruct it). A step of
// several apps (spawned apps, heterogeneous components, --multi-prog lines) defines one set per
// app ("<nspace>.app<N>"), known on every node.
//
// Sets across steps (a spawn's): when a step spawns one app, the parent step and the child step
// both define two sets, known on every node of both: spawned_pset_name(child) = the children, and
// union_pset_name(child) = every rank of the parent step, then every rank of the parent's earlier
// spawned steps still running ("peers", in the order they were spawned: a program that grows in
// steps spawns from a communicator over all of them), then the children. The parent's servers
// define them when the spawn succeeds (the spawner's node tells the others, and the peers'
// servers through the job's cross-step relay: a PMIX_PROCESS_SET_DEFINE event of the parent's
// server, which defines them there too) and delete them when the child step has ended; the
// child's from its environment (spawn::kParentEnv, kParentSizeEnv and kPeersEnv, set by the
// parent's server).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "fence_tracker.h"
#include "node_channels.h"
#include "../common/step_info.h"
#include "wire/group_messages.h"

namespace pmixcpp::server {

// Collective instances of groups carry this bit (fence instances never do).
inline constexpr uint64_t kGroupInstanceBit = 1ull << 63;

struct group_ops {
    // The reply of one member's request (body: group_reply, only on success).
    std::function<void(uint64_t conn, uint32_t request_id, pmix_status_t status, const std::string &message,
                       const wire::group_reply *reply)>
        reply;
    // Start the node collective `instance` over `nodes` (sorted, includes us) with our
    // contribution; a non-ok Status fails it at once.
    std::function<Status(uint64_t instance, uint64_t signature, std::vector<uint32_t> nodes, std::vector<uint8_t> blob)>
        start_collective;
    std::function<void(uint64_t instance)> cancel_collective;
    // Has this local rank already died or finalized?
    std::function<bool(uint32_t rank)> rank_gone;
    // Members of other namespaces (steps of the job): the collective goes through the job's
    // rendezvous (connect.h, connect_service::on_group). Empty = PMIX_ERR_NOT_SUPPORTED.
    std::function<void(uint64_t conn, uint32_t rank, uint32_t request_id, wire::group_request &&req,
                       uint64_t candidate)>
        cross_step;
    // Send a bootstrap message (`chan`: bootstrap entry to node 0, or its result to a member
    // node). Empty, or a non-ok Status: the node transport is not running.
    std::function<Status(uint32_t node, node_channel chan, std::vector<uint8_t> body)> send_node;
    // A process set was defined (true) or deleted: raise PMIX_PROCESS_SET_DEFINE / DELETE.
    std::function<void(const std::string &name, const std::vector<pmix_proc_t> &members, bool defined)> pset_changed;
};

// The largest parent or child step whose spawn defines sets: the members are held as pmix_proc_t
// (260 bytes each) in slurmstepd, and the parent's size comes from the user's environment.
inline constexpr uint32_t kMaxSpawnPsetStep = 1u << 16;
// The names of a spawn's two sets (see above).
std::string spawned_pset_name(const std::string &child_nspace);
std::string union_pset_name(const std::string &child_nspace);
// A running spawned step of the parent: a member of the later spawns' union sets.
struct spawn_peer {
    std::string nspace;
    uint32_t size = 0;
    bool operator==(const spawn_peer &) const = default;
};
// At most this many peers in a union set, and kMaxSpawnPsetStep processes of them in all.
inline constexpr size_t kMaxSpawnPeers = 64;
// A step's servers hold at most this many members of the sets other steps' servers defined for it
// (the peers' side of a union, 260 bytes each).
inline constexpr size_t kMaxAdoptedPsetProcs = 4 * size_t(kMaxSpawnPsetStep);
// The members of both: the parent's ranks 0..parent_size-1 and then every rank of each peer
// (with_parent: the union), then the child's 0..child_size-1.
std::vector<pmix_proc_t> spawn_pset_members(const std::string &parent_nspace, uint32_t parent_size,
                                            const std::string &child_nspace, uint32_t child_size, bool with_parent,
                                            const std::vector<spawn_peer> &peers = {});
// kPeersEnv's value as spawn_pset_members takes it; "" is none. Every namespace a step of the job
// (`job_prefix`, "slurm.<job>."), none twice nor `parent` or `child`, sizes 1..kMaxSpawnPsetStep,
// kMaxSpawnPsetStep in all, at most kMaxSpawnPeers: else nullopt.
std::optional<std::vector<spawn_peer>> parse_spawn_peers(const std::string &value, const std::string &job_prefix,
                                                         const std::string &parent, const std::string &child);
std::string format_spawn_peers(const std::vector<spawn_peer> &peers);

struct group_pset {
    std::vector<uint32_t> ranks;
    uint64_t context_id = 0;
    bool group = false;  // a constructed group (else a set the step defines)
};

class group_service {
public:
    group_service(const step_info &step, std::vector<uint32_t> node_of, group_ops ops, uint32_t default_timeout_sec);

    // A local member's request (already decoded).
    void on_request(uint64_t conn, uint32_t rank, uint32_t request_id, wire::group_request &&req);
    // The node collective `instance` finished: (node, blob) of every member node.
    void collective_done(uint64_t instance, const std::vector<std::pair<uint32_t, std::span<const uint8_t>>> &blobs);
    // It failed (a member node was lost, the transport is down).
    void collective_failed(uint64_t instance, pmix_status_t status, const std::string &message);
    // Bootstrap messages from another node's server (see above); a bad body is logged and dropped.
    // add_channels registers them (group_bootstrap, group_bootstrap_result) into the table.
    Status add_channels(node_channels &table);
    void on_bootstrap_entry(uint32_t from_node, std::span<const uint8_t> body);
    void on_bootstrap_result(uint32_t from_node, std::span<const uint8_t> body);
    // A local rank died or finalized: the collectives it has not entered count it as failed.
    void rank_left(uint32_t rank);
    // A node of the step is lost: collectives with members there fail.
    void node_lost(uint32_t node);

    void expire(server_clock::time_point now);
    std::optional<server_clock::time_point> next_deadline() const;

    // The process sets the step itself defines: one per app of a step of several apps (a spawn
    // of several apps, plugin/services/spawn/mpmd.h, read from the step's environment; the components of
    // a heterogeneous step; the lines of --multi-prog), named "<nspace>.app<N>".
    void define_step_psets();

    // A spawned step's two sets, from its environment (spawn::kParentEnv, kParentSizeEnv,
    // kPeersEnv); nothing when they are absent or malformed (logged).
    void define_spawned_step_psets();
    // Define (true: it is new) a set whose members may be of several steps.
    bool define_job_pset(const std::string &name, std::vector<pmix_proc_t> members);
    // Delete it (true: it was defined).
    bool delete_job_pset(const std::string &name) { return _job_psets.erase(name) > 0; }
    const std::map<std::string, std::vector<pmix_proc_t>> &job_psets() const { return _job_psets; }

    size_t pending() const { return _pending.size() + _boot_local.size(); }
    // Groups (= process sets) with members on this node, by name.
    const std::map<std::string, group_pset> &psets() const { return _psets; }
    std::vector<pmix_proc_t> members_of(const std::string &name) const;

private:
    struct waiter {
        uint64_t conn;
        uint32_t request_id;
        uint32_t rank;
    };
    struct entry {
        wire::member_state state;
        InfoArray infos;
    };
    struct collective {
        uint64_t instance = 0;
        bool destruct = false;
        std::string name;
        std::vector<uint32_t> members;  // sorted ranks
        std::vector<uint32_t> local;    // our members
        std::vector<uint32_t> nodes;    // member nodes, sorted
        std::map<uint32_t, entry> accounted;
        std::vector<waiter> waiters;
        bool assign_cid = false;
        bool started = false;
        server_clock::time_point deadline;
    };
    using key = std::pair<bool, std::string>;  // (destruct, name)

    // Bootstrap: the waiting local members (their requests, replayed as ordinary constructs once
    // the membership is known) and, on node 0, the coordinator's count.
    struct boot_waiter {
        uint64_t conn;
        uint32_t request_id;
        uint32_t rank;
        wire::group_request req;
    };
    struct boot_local {
        std::vector<boot_waiter> waiters;
        server_clock::time_point deadline;
    };
    struct boot_coord {
        uint32_t leaders_expected = 0;  // 0 until a leader entered
        std::set<uint32_t> leaders, entered, named;
        server_clock::time_point deadline;
    };
    void bootstrap_request(uint64_t conn, uint32_t rank, uint32_t request_id, wire::group_request &&req,
                           uint32_t leaders, std::vector<uint32_t> &&named);
    void coord_entry(wire::group_bootstrap_entry &&e);
    void coord_finish(const std::string &name, pmix_status_t status, const std::string &message);
    void bootstrap_result(wire::group_bootstrap_result &&r);
    void boot_fail_local(const std::string &name, pmix_status_t status, const std::string &message);
    std::map<std::string, boot_local> _boot_local;
    std::map<std::string, boot_coord> _boot_coord;

    void advance(const key &k);
    void finish(const key &k, std::vector<std::pair<uint32_t, wire::group_contribution>> &&parts);
    void fail(const key &k, pmix_status_t status, const std::string &message);
    std::optional<key> by_instance(uint64_t instance) const;

    step_info _step;
    std::vector<uint32_t> _node_of;
    group_ops _ops;
    uint32_t _default_timeout_sec;
    uint64_t _next_instance = 1;
    uint64_t _next_reservation = 1;
    uint64_t reserve();
    std::map<key, collective> _pending;
    std::map<uint64_t, uint64_t> _reservations;  // instance -> the counter value we reserved for it
    std::map<std::string, group_pset> _psets;
    std::map<std::string, std::vector<pmix_proc_t>> _job_psets;
};

}  // namespace pmixcpp::server
