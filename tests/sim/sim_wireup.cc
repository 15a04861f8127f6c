// The wire-up routes of a step at scale, modelled from the code's message pattern with the real
// codecs' sizes (sim.h): srun's rendezvous, the static route and the directory route.
#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "plugin/agent/proto/agent_proto.h"
#include "plugin/coll/engines.h"
#include "plugin/net/identity.h"
#include "sim.h"
#include "wire/directory_messages.h"

namespace pmixcpp::sim {

wireup_result run_wireup(const net_params &p, uint32_t nodes) {
    wireup_result res;
    // A node record as slurmstepd signs it (identity.h), with a TCP transport's address.
    net::node_record rec;
    rec.job_id = 4000000;
    rec.step_id = 0;
    rec.nspace = "slurm.4000000.0";
    rec.nnodes = nodes;
    rec.node = nodes - 1;
    rec.address = "tcp:10.131.255.254:40123";
    const size_t payload = net::encode_node_record(rec).size();
    // munge: "MUNGE:" + base64(header + payload + MAC), cred_overhead bytes before base64.
    res.record_bytes = 6 + (payload + p.cred_overhead + 2) / 3 * 4 + 1;
    const std::string record(res.record_bytes, 'A');

    agent::rendezvous_request rq{nodes - 1, nodes, record};
    auto req = agent::encode_rendezvous(rq);
    const uint64_t req_bytes = req.ok() ? req->size() : 0;
    {
        std::vector<std::string> table(nodes, record);
        auto t = agent::encode_table(table);
        res.table_bytes = t.ok() ? t->size() : 0;
    }
    res.srun_connections = nodes;
    res.srun_bytes_out = res.table_bytes * nodes;
    // srun_agent holds every report (node -> (fd, record)) and then the table's frame.
    res.srun_mem_bytes = uint64_t(nodes) * (res.record_bytes + sizeof(std::string) + 48) + res.table_bytes;
    // A node: the table, then the verified records (node_record each, its address and nspace).
    res.node_mem_bytes = res.table_bytes + uint64_t(nodes) * (sizeof(net::node_record) + rec.address.size() + rec.nspace.size() + 2);

    // srun's agent: one thread; every node connects at t = 0 (the last slurmstepd started),
    // srun opens its agent credential (handshake), reads the request; then sends the table to
    // each node in turn (send_all, blocking) and closes the connection.
    double srun = 0;
    const double arrive = p.cred_make_us + p.connect_us + p.lat_us + double(req_bytes) / p.bw_Bps * 1e6;
    for (uint32_t i = 0; i < nodes; ++i) srun = std::max(srun, arrive) + p.recv_us + p.cred_open_us;
    res.srun_collect_us = srun;
    double last_table = 0;
    for (uint32_t i = 0; i < nodes; ++i) {
        srun += p.send_us + double(res.table_bytes) / p.bw_Bps * 1e6;
        last_table = srun + p.lat_us;
    }
    res.srun_send_us = srun;
    // The last node verifies every peer's record: one credential opened after the other.
    res.verify_us = double(nodes - 1) * p.cred_open_us + double(res.table_bytes) * p.byte_ns * 1e-3;
    res.total_us = last_table + p.recv_us + res.verify_us;
    return res;
}

static_wireup_result run_static_wireup(const net_params &p, uint32_t nodes, uint32_t width) {
    static_wireup_result res;
    wireup_result sizes = run_wireup(p, 2);  // a record's size does not depend on N
    // The last node: the root of the tree has the most links (width children, no parent).
    const uint32_t tree = std::min<uint32_t>(nodes - 1, width + 1), ring = std::min<uint32_t>(nodes - 1, 2);
    res.peers = std::min<uint32_t>(nodes - 1, tree + ring);
    // Sign, then for each peer: a connection (our CPU), hello out, the challenge with the record
    // back (a round trip and the record's bytes), the record opened on our loop (one after the
    // other), our response out: the last response leaves after the last record is opened.
    const double rtt = 2 * p.lat_us + double(sizes.record_bytes + 200) / p.bw_Bps * 1e6;
    double cpu = p.cred_make_us + res.peers * (p.connect_us + p.send_us);
    const double first_challenge = cpu + rtt;
    for (uint32_t i = 0; i < res.peers; ++i) cpu = std::max(cpu, first_challenge) + p.recv_us + p.cred_open_us + p.send_us;
    res.total_us = cpu + p.lat_us + p.recv_us;
    if (p.cpus > 0) {  // every node's record checks on the host's shared CPUs
        res.host_cpu_us = double(nodes) * res.peers * (p.connect_us + p.send_us + p.recv_us + p.cred_open_us) /
                          (double(p.cpus) * p.cpu_share);
        res.total_us = std::max(res.total_us, res.host_cpu_us + p.lat_us + p.recv_us);
    }
    res.node_mem_bytes = uint64_t(res.peers) * (sizeof(net::node_record) + 64);
    res.srun_connections = 0;
    return res;
}


double directory_forwards(uint32_t nodes, uint32_t width, double start_gap_us, double deliver_us, unsigned orders) {
    if (nodes < 2 || orders == 0) return 0;
    double total = 0;
    std::vector<uint32_t> all(nodes);
    for (uint32_t i = 0; i < nodes; ++i) all[i] = i;
    // Every neighbour pair once (the relation is symmetric: tree parent and child, ring).
    std::vector<std::pair<uint32_t, uint32_t>> pairs;
    for (uint32_t i = 0; i < nodes; ++i) {
        const coll::tree_links l = coll::tree_links_of(all, i, width);
        std::vector<uint32_t> nb(l.children.begin(), l.children.end());
        if (l.parent != UINT32_MAX) nb.push_back(l.parent);
        nb.push_back((i + 1) % nodes);
        nb.push_back((i + nodes - 1) % nodes);
        for (uint32_t j : nb)
            if (j > i) pairs.emplace_back(i, j);
    }
    std::sort(pairs.begin(), pairs.end());
    pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
    std::mt19937 rng(12345);
    std::vector<double> start(nodes);
    for (unsigned o = 0; o < orders; ++o) {
        std::shuffle(all.begin(), all.end(), rng);
        for (uint32_t k = 0; k < nodes; ++k) start[all[k]] = double(k) * start_gap_us;
        for (auto [a, b] : pairs) {
            const double early = std::min(start[a], start[b]), late = std::max(start[a], start[b]);
            total += 2;  // the first one's tell, the second one's (which gets there)
            if (late <= early + deliver_us) continue;  // both up in time: one tell each
            // The first tell failed: tried again after 100 ms, 200, 400, ... 2 s while the other
            // is not up; sent again at once when the other's tell comes.
            double at = early, wait = 100e3;
            while ((at += wait) < late) {
                total += 1;
                wait = std::min(2 * wait, 2000e3);
            }
            total += 1;
        }
    }
    return total / orders;
}

// The directory route (plugin/net/directory.h, plugin/slurm/directory_route.cc). Every message is
// one slurm_forward_data: the sending slurmstepd's Slurm RPC to the target node's slurmd (an auth
// credential made, a TCP connection, the credential opened by slurmd), slurmd's connection to the
// step's socket as the sending user (a fork: forward_us), the bytes written, and slurmd's answer
// (a credential made by slurmd, opened by the sender). One call carries one kind to several
// nodes; Slurm sends to each in its own thread, but the credentials go through the node's one
// munged, so the sender's credential work is counted one after the other.
directory_wireup_result run_directory_wireup(const net_params &p, uint32_t nodes, uint32_t width) {
    directory_wireup_result res;
    wireup_result sizes = run_wireup(p, 2);  // a signed record's size
    wire::directory_message m;
    m.kind = wire::directory_kind::ask;
    m.from_node = nodes - 1;
    m.nnodes = nodes;
    m.record.assign(sizes.record_bytes, 'A');
    auto enc = wire::encode_directory_message(m);
    res.message_bytes = enc.ok() ? enc->size() : 0;
    // Slurm's RPC around it: header, the socket's path, the length; a credential for the RPC.
    const double rpc_bytes = double(res.message_bytes) + 200 + double(sizes.record_bytes);

    // Who the last node to start tells: its tree parent and children, its two ring neighbours.
    // Node 1 stands for it: a parent and a full set of children (at width 8 from 73 nodes).
    std::vector<uint32_t> all(nodes);
    for (uint32_t i = 0; i < nodes; ++i) all[i] = i;
    const uint32_t self = nodes > 1 ? 1 : 0;
    std::vector<uint32_t> told;
    const coll::tree_links links = coll::tree_links_of(all, self, width);
    if (links.parent != UINT32_MAX) told.push_back(links.parent);
    for (uint32_t c : links.children) told.push_back(c);
    told.push_back((self + 1) % nodes);
    told.push_back((self + nodes - 1) % nodes);
    std::sort(told.begin(), told.end());
    told.erase(std::unique(told.begin(), told.end()), told.end());
    told.erase(std::remove(told.begin(), told.end(), self), told.end());
    res.tells = uint32_t(told.size());

    // One message's path from the sender's call to the target's worker holding the checked
    // record, and the sender's wait for slurmd's answer.
    const double deliver = p.connect_us + p.lat_us + rpc_bytes / p.bw_Bps * 1e6 + p.recv_us + p.cred_open_us +
                           p.forward_us + p.recv_us + p.cred_open_us;
    const double answered = p.connect_us + p.lat_us + rpc_bytes / p.bw_Bps * 1e6 + p.recv_us + p.cred_open_us +
                            p.forward_us + p.cred_make_us + p.lat_us + p.recv_us + p.cred_open_us;
    // The start: the record signed, then the tells in one call; the call returns when every
    // target answered.
    double t = p.cred_make_us;
    double cpu = t;
    double tells_delivered = 0, tells_done = 0;
    for (size_t i = 0; i < told.size(); ++i) {
        cpu += p.cred_make_us + p.send_us;
        tells_delivered = std::max(tells_delivered, cpu - p.send_us + deliver);
        tells_done = std::max(tells_done, cpu - p.send_us + answered);
    }
    // The neighbours that started before tried to tell it and failed (its socket was not up);
    // they try again with backoff, from 100 ms. It asks its parent on first need instead: the
    // next call of its one worker, after the tells. The parent's worker answers with a tell
    // (one call), which the last node checks.
    const double ask_delivered = tells_done + p.cred_make_us + p.send_us + deliver;
    const double parent_record = ask_delivered + p.cred_make_us + p.send_us + deliver;
    // Its children knew it from the tells: they connect and hand it their part; it connects to
    // its parent once the parent's record is checked.
    res.children_know_us = tells_delivered;
    res.parent_known_us = parent_record;
    res.total_us = std::max(tells_delivered, parent_record) + p.connect_us + p.lat_us + p.recv_us;
    res.messages_per_node = res.tells + 1;  // the tells, one ask (and an ask's answer elsewhere)
    // All nodes on a few shared CPUs (the host preset): the messages are CPU on the same CPUs
    // (credentials, slurmd's RPC and fork, the checks), so the wire-up ends no sooner than that
    // work is done. With the measured CPU per message (dir_msg_cpu_us): the wire-up's messages
    // sent after the last server started (dir_window_share of them), beyond the work the static
    // route does too; else (the first model) every node's tells and one ask at the parts' costs.
    if (p.cpus > 0) {
        // The wire-up's messages, from the protocol and how far apart the nodes' tells start.
        res.forwards = directory_forwards(nodes, width, p.start_gap_us, deliver);
        const double share = double(p.cpus) * p.cpu_share;
        if (p.dir_msg_cpu_us > 0) {
            res.forwards_cpu_us = res.forwards * p.dir_msg_cpu_us;
            res.host_cpu_us = run_static_wireup(p, nodes, width).host_cpu_us + p.dir_window_share * res.forwards_cpu_us / share;
        } else {
            const double per_message = p.cred_make_us + p.send_us + p.recv_us + p.cred_open_us + p.forward_us + p.cred_make_us +
                                       p.recv_us + p.cred_open_us + p.recv_us + p.cred_open_us;
            res.forwards_cpu_us = res.forwards * per_message;
            res.host_cpu_us = double(nodes) * double(res.messages_per_node + 1) * per_message / share;
        }
        res.total_us = std::max(res.total_us, res.host_cpu_us + p.connect_us + p.lat_us + p.recv_us);
    }
    // A node: the records it learnt (its neighbours and the node it asked), no table.
    res.node_mem_bytes = uint64_t(res.tells + 1) * (sizeof(net::node_record) + 64);
    // slurmd's forks on the busiest node: every neighbour's tell and its own node's messages.
    res.slurmd_forwards = res.tells + 1;
    res.srun_connections = 0;
    return res;
}

}  // namespace pmixcpp::sim
