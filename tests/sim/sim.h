// A discrete-event simulator of a step's node servers at scale: N nodes' REAL engines in one
// process (no threads, no sockets), on a simulated network with virtual time and an event queue.
//
// What runs for real (the project's own code, unchanged):
//  - the fence collectives: one coll::fence_manager per node with its tree, ring, direct and dissemination
//    engines and the real message codec (plugin/coll/); every byte they send is the real
//    encoding, delivered to the real decoder of the receiving node's manager;
//  - direct modex: two server::dmodex_engine (the requesting node and the owner), configured
//    as a server at that scale configures them (node_of by rank), with the real request/reply
//    codecs and rank-data encoding (plugin/server/dmodex.h);
//  - the job-data writer: server::build_jobdata + wire::encode_jobdata for the real byte count
//    (up to a size the host can hold; beyond, extrapolated from those runs, said in the output);
//  - the rendezvous' codecs: encode_node_record, agent::encode_rendezvous / encode_table (sizes).
// What is modelled (I/O-bound code that cannot run without sockets and munged), from the code's
// actual message pattern:
//  - srun's address rendezvous (plugin/agent/srun/srun_agent.cc): N connections, one thread,
//    each accepted with an agent credential to open, the table sent to every node in turn;
//  - each node's verification of the table (plugin/net/identity.cc verify_table): one munge
//    credential opened per peer, in sequence;
//  - the clients' part of a fence (a request to the local server and its release) and the cost
//    of a new node connection (TCP + handshake) as fixed costs.
// Payloads: a collecting fence's blobs are really sent, but small (a node id) at large N; their
// cost is charged for the full size (tasks per node x bytes per rank), so the engines' logic
// and encodings are exact and the bytes counted are those of the real step.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "plugin/coll/fence_manager.h"

namespace pmixcpp::sim {

// The cost of moving and handling a message. All times in microseconds.
struct net_params {
    std::string name;
    double lat_us = 0;        // one-way wire latency of a hop
    double bw_Bps = 0;        // bytes per second one node's link sends (serializes its sends)
    double send_us = 0;       // sender's CPU per message (framing, the write)
    double recv_us = 0;       // receiver's CPU per message (wake-up, read, dispatch)
    double byte_ns = 0;       // receiver's CPU per byte of a message (the real codec: decode, re-encode)
    double store_ns = 0;      // per byte of a completed collecting fence's result taken into the
                              // node's store and its clients' view (the measured end-to-end b)
    double client_us = 0;     // a local client's fence request and release (1 node x 1 task)
    double proc_us = 0;       // the server's CPU per local process per fence
    double client_cpu_us = 0; // with a shared pool: each local process's own CPU per fence (its
                              // wake-ups), taken from the pool off the server's path
    unsigned cpus = 0;        // 0: every node has its own CPU; > 0: all nodes share this many
    double cpu_share = 1;     // with shared CPUs: the part of them the step gets (other load)
    double cred_make_us = 0;  // make one munge credential (slurmstepd signs its node record)
    double cred_open_us = 0;  // open one munge credential (a round trip to munged)
    size_t cred_overhead = 0; // bytes a munge credential adds to its payload before base64
    double connect_us = 0;    // a new node connection before its first message (TCP + handshake)
    double forward_us = 0;    // slurmd's own work to hand on one slurm_forward_data: a fork that
                              // connects to the step's socket as the sender and passes the
                              // descriptor back (slurmd's _connect_as_other), the write
    // The directory route on shared CPUs (cpus > 0): the CPU of all processes (the sender's call,
    // slurmd's RPC thread and its fork, munged, the receiver's check) per message beyond what the
    // static route costs; 0: the sum of the parts above. And the launch: how far apart the nodes'
    // servers start (the last one (N-1) x start_gap_us after the first), which decides how many
    // tells find their target not up yet and are tried again.
    // dir_window_share: the part of those messages the measured wire-up time (from the last
    // server's start) waits for; the others are sent before it starts.
    double dir_msg_cpu_us = 0;
    double start_gap_us = 0;
    double dir_window_share = 1;
};
// This host's loopback (measured: tests/sim/sim_measure, docs/cost-model.md's inputs), all
// nodes sharing 2 CPUs: for the validation against the local cluster.
net_params host_preset();
// A 100 Gb/s fabric (published latency and bandwidth, docs/simulator.md), each node its own
// CPU, the software costs measured here.
net_params fabric_preset();

struct fence_setup {
    uint32_t nodes = 4;
    uint32_t ppn = 1;                 // tasks per node
    bool collect = false;
    uint64_t bytes_per_rank = 0;      // a collecting fence's data per rank (charged)
    uint32_t real_blob_bytes = 8;     // what each node really puts in its blob (>= 4: its id, checked)
    coll::algorithm algo = coll::algorithm::automatic;
    uint32_t width = 8;
    uint32_t fences = 1;              // fences in a row (the first pays new connections if cold)
    bool cold = false;                // connections not yet open before the first fence
};

struct fence_result {
    bool ok = false;
    std::string error;                // the first violated property
    double max_us = 0, median_us = 0; // the last fence: slowest and median node (client released)
    double first_max_us = 0;          // the first fence: slowest node
    uint64_t messages = 0, delivered = 0;
    uint64_t wire_bytes = 0;          // bytes on the wire, at full size (all fences)
    uint64_t max_message_bytes = 0;   // the largest message at full size
    uint64_t max_node_in_bytes = 0;   // the most bytes one node took in during one fence
    uint32_t max_peers = 0;           // node connections: the most distinct peers of one node
    double mean_peers = 0;
    uint64_t completions = 0;         // on_done calls (nodes x fences when ok)
    uint64_t log_errors = 0;          // error lines of the real code (dropped messages)
    double host_seconds = 0;          // the simulator's own run time
};
fence_result run_fence(const net_params &p, const fence_setup &s);
// The tree fence's message pattern without the engines, for node counts whose real engines do
// not fit in this host's memory (each node's manager and engine hold the participant list: 8 N
// bytes per node, 34 GB for 65k nodes in one process). The shape is the real tree_links_of;
// a node sends up once it started and heard every child, the root sends the union down, every
// node passes it on; sizes are the real encoding's (17 + 8 + data per blob). The same costs as
// run_fence; test_sim checks that both give the same times and message counts.
fence_result run_tree_pattern(const net_params &p, const fence_setup &s);
// The same for the dissemination barrier (a fence without data, coll::dissemination_engine):
// log2 N rounds, in each one message out and one in per node, a node sending round r once it
// has heard round r - 1; the real message's size, run_fence's costs and event order (test_sim
// checks both give the same times). One fence, nodes with their own CPUs (the fabric preset).
fence_result run_dissemination_pattern(const net_params &p, const fence_setup &s);

struct dmodex_result {
    bool ok = false;
    std::string error;
    double cold_us = 0;     // first Get of a rank on a node we have no connection to
    double warm_us = 0;     // a Get of another rank of the same node, connection open
    uint64_t request_bytes = 0, reply_bytes = 0;
    uint64_t per_node_bytes = 0;  // what a node's engine holds per configured step (node_of)
    // Every other local rank Gets a different rank of the owner's node at once (one round of
    // client messages): the time until the last is answered, request and reply messages.
    uint32_t burst_gets = 0;
    double burst_us = 0;
    uint64_t burst_requests = 0, burst_replies = 0;
};
// batched: the requests of one round travel in one message per node (dmodex_ops::defer, as the
// server sets it); else one message per Get (as before batches).
dmodex_result run_dmodex(const net_params &p, uint32_t nodes, uint32_t ppn, uint64_t bytes_per_rank,
                         bool batched = true);

struct conn_result {
    uint32_t max_out = 0;       // the most connections one node had open of its own (the cap's count)
    double mean_out = 0;        // at the end, per node
    uint32_t max_in = 0;        // the most connections other nodes had open to one node
    uint32_t max_total = 0;     // out + in of one node, the most at any time
    uint64_t opened = 0;        // connections opened in all (a reopen after a close counts)
    uint64_t idle_closes = 0;   // closed for the cap
    uint64_t gets = 0;          // node-to-node fetches simulated
    double host_seconds = 0;
};
// Connections per process: every node takes part in a tree fence (width `width`), watches its
// ring successor, then fetches by direct modex from `peers` distinct random other nodes (the
// requests go out on the fetcher's connection, the replies on the owner's), in rounds that
// interleave all nodes; `cap` 0: no cap, else the real conn_lru with the TCP transport's rules
// (the watched neighbour and the connection being used kept; a fetch's connection kept until its
// reply). Only the connection bookkeeping runs (not the engines: 65k nodes' dmodex state is
// O(ranks) each).
conn_result run_connections(uint32_t nodes, uint32_t width, uint32_t peers, uint32_t cap, uint32_t seed = 1);

struct node_loss_result {
    bool ok = false;
    std::string error;
    double all_told_us = 0;            // from the loss noticed to the last live node told
    uint64_t messages = 0;             // node-down messages, all nodes
    uint32_t noticer_sends = 0;        // node-down messages from the noticing node
    uint32_t noticer_connections = 0;  // connections the noticing node had to open
    uint32_t max_sends = 0;            // most node-down messages from one node
    uint32_t max_new_connections = 0;  // most connections one node had to open
    bool receivers_real = false;       // the receivers' engines ran (else their handling is modelled)
    uint64_t per_node_bytes = 0;       // what one node's liveness engine holds (names, lost flags)
};
// A node's slurmstepd dies; its fence-tree parent notices (the real node_liveness engine:
// node_lost) and the loss is told through the tree rooted at the lost node: each receiver takes
// it and passes it on to its children there. Receivers run the real engine up to `real_max`
// nodes; above, their handling is modelled (decode, the same node_liveness::tree_children).
// A node's open links are its fence tree's; any other costs a connection first.
node_loss_result run_node_loss(const net_params &p, uint32_t nodes, uint32_t width, uint32_t real_max);

struct wireup_result {
    double srun_collect_us = 0;   // last node's request taken in by srun
    double srun_send_us = 0;      // srun done sending every node the table
    double verify_us = 0;         // one node's verification of the table
    double total_us = 0;          // last node holds a verified table (from the last start)
    uint64_t record_bytes = 0;    // one signed node record (credential)
    uint64_t table_bytes = 0;     // the table one node receives (real encoding)
    uint64_t srun_bytes_out = 0;  // every table srun sends
    uint64_t srun_mem_bytes = 0;  // records held + the table frame
    uint64_t node_mem_bytes = 0;  // table + verified records, per node
    uint32_t srun_connections = 0;
};
wireup_result run_wireup(const net_params &p, uint32_t nodes);

// The static wire-up (plugin/net/static_route.h): no table, srun not involved. The last node to
// start signs its record and connects to the peers a first fence needs (ring neighbours, tree
// parent and children: `peers`); each listener presents its record in the challenge, which the
// node opens on its loop, one after the other; those peers had tried to reach it before and
// connect again as soon as its first connection reaches them (tcp_transport.cc). Modelled from
// the code's message pattern, with the record's real size.
struct static_wireup_result {
    double total_us = 0;        // the last node has checked every record it needs (from its start)
    uint32_t peers = 0;         // records a node opens for a first fence
    uint64_t node_mem_bytes = 0;  // those peers' verified records
    uint32_t srun_connections = 0;
    double host_cpu_us = 0;       // shared CPUs (cpus > 0): every node's record checks on them
};
static_wireup_result run_static_wireup(const net_params &p, uint32_t nodes, uint32_t width);

// The directory route (plugin/net/directory.h): no table, srun not involved, the records travel
// node to node through slurmd (slurm_forward_data). The last node to start signs its record and
// tells its tree and ring neighbours in one call; the neighbours that tried it earlier failed and
// wait for their backoff, so it asks its tree parent on first need (the next call of its one
// worker), whose answer is a tell. Modelled from the code's message pattern, with the real
// message encoding's size and Slurm's RPC around it.
struct directory_wireup_result {
    double children_know_us = 0;  // the last node's record checked by every node it told
    double parent_known_us = 0;   // the last node holds its parent's checked record (ask, answer)
    double total_us = 0;          // and the connection to the parent is open
    uint32_t tells = 0;           // nodes told at start (tree children and ring of the busiest)
    uint32_t messages_per_node = 0;
    uint32_t slurmd_forwards = 0; // forks of the busiest node's slurmd for the step's wire-up
    uint64_t message_bytes = 0;   // one directory message (real encoding)
    uint64_t node_mem_bytes = 0;  // the records a node learnt
    uint32_t srun_connections = 0;
    double host_cpu_us = 0;       // shared CPUs (cpus > 0): every node's wire-up work on them
    // Shared CPUs (cpus > 0): the wire-up's messages through slurmd (directory_forwards): every
    // node's tells, the tries of a target not up yet and their retries, the tells again once it
    // is; and their CPU.
    double forwards = 0;
    double forwards_cpu_us = 0;
};
directory_wireup_result run_directory_wireup(const net_params &p, uint32_t nodes, uint32_t width);
// The directory route's wire-up messages through slurmd (plugin/net/directory.cc): the nodes
// send their tells at start (N-1) x start_gap_us apart in a random order, each to its tree and
// ring neighbours; a tell to a neighbour not up yet (it did not start deliver_us before the
// tell gets there) fails and is tried again 100 ms later, doubling to 2 s, until the
// neighbour's own tell comes, upon which it is sent at once. Mean over `orders` start orders
// (fixed seeds). Not counted: asks (a node that needs a neighbour before its tell came) and the
// step end's messages.
double directory_forwards(uint32_t nodes, uint32_t width, double start_gap_us, double deliver_us, unsigned orders = 64);

struct jobdata_result {
    uint64_t file_bytes = 0;   // the encoded job data one node writes and every client maps
    uint64_t entries = 0;      // entries written (this node's ranks and the job level)
    bool extrapolated = false; // from runs at smaller node counts (linear in nodes)
    std::string how;
};
// Real build_jobdata + encode_jobdata up to `max_real_ranks`; beyond, a linear fit of
// three real sizes (the fit's worst relative error is in `how`).
jobdata_result run_jobdata(uint32_t nodes, uint32_t ppn, uint64_t max_real_ranks);

// The real fence codec's cost per byte on this host: encode + decode of a 16 MiB fan-out
// message (64 blobs of 256 KiB), the best of `rounds`.
double measure_codec_ns(int rounds = 5);

}  // namespace pmixcpp::sim
