// The step's process table across nodes (PMIx_Query_info(PMIX_QUERY_PROC_TABLE)): each node
// knows its own ranks (pid, state, exit code, executable); a query gathers the others' over the
// node transport. An engine without I/O: messages in, messages and answers out (tests/server).
//
// Protocol (node channels proc_table_request / proc_table_reply, node_channels.h;
// bodies in shared/wire/node_messages.h): a request "your rows, please" (u64 id), a reply (that
// id, the rows; id 0: unsolicited, the node's final rows, sent once as its part of the step
// ends, to the nodes whose address it holds: final_rows_to below). A reply names only ranks of the node that sent it (else it is dropped whole, logged).
//
// gather(): asks every other node that is neither lost nor gone; a node that has ended gives the
// final rows it sent (if they arrived); the answer comes when every asked node replied, was found
// lost, or the timeout passed. Ranks of a node that did not answer: pid 0, state
// PMIX_PROC_STATE_COMM_FAILED (lost or silent) or PMIX_PROC_STATE_UNDEF (ended, no final rows),
// and `silent` names those nodes with the reason.
#pragma once

#include <pmix_common.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "node_channels.h"
#include "status.h"
#include "wire/node_messages.h"

namespace pmixcpp::server {

using proc_row = wire::proc_row;  // the row as it travels (shared/wire/node_messages.h)
using wire::kMaxExecutableLen;

// The executable of a live process (/proc/PID/exe), "" if unknown.
std::string executable_of(pid_t pid);

// The bodies (shared/wire/node_messages.h), and the check the wire codec cannot make: every row
// names a rank of the sending node (`allowed`), once.
std::vector<uint8_t> encode_proc_request(uint64_t id);
Status decode_proc_request(std::span<const uint8_t> body, uint64_t *id);
std::vector<uint8_t> encode_proc_reply(uint64_t id, const std::vector<proc_row> &rows);
Status decode_proc_reply(std::span<const uint8_t> body, const std::vector<uint32_t> &allowed, uint64_t *id,
                         std::vector<proc_row> *rows);

struct proc_table_ops {
    // A message to another node's server: proc_table_request or proc_table_reply.
    std::function<void(uint32_t node, node_channel chan, std::vector<uint8_t> body)> send;
    // This node's rows, now.
    std::function<std::vector<proc_row>()> local_rows;
    // Whether a node is out of reach: lost (crashed), or gone (its part of the step ended).
    std::function<bool(uint32_t node)> lost;
    std::function<bool(uint32_t node)> gone;
    // Whether this node's final rows go to `node` at the step's end: only to nodes whose address
    // is known here (all on the static route and the rendezvous; on the directory route the
    // nodes told or talked to), never an ask through slurmd per node: that would be N x N asks
    // in the step. A node without our final rows answers its queries with our ranks as ended
    // (PMIX_PROC_STATE_UNDEF). Empty: every node.
    std::function<bool(uint32_t node)> final_rows_to;
};

class proc_table_engine {
public:
    using clock = std::chrono::steady_clock;
    struct result {
        std::vector<proc_row> rows;  // every rank of the step, in rank order
        std::string silent;          // "node n3: no answer within 10 s; ..." (empty: all answered)
    };
    using done_fn = std::function<void(result)>;

    // node_ranks[n]: the ranks of node n, node_names[n] its name; `self`: this node.
    proc_table_engine(uint32_t self, std::vector<std::vector<uint32_t>> node_ranks,
                      std::vector<std::string> node_names, proc_table_ops ops);

    // Gather the table; `done` runs once (maybe before gather returns: a single node). While a
    // gather is in flight, another joins it (one request per node in flight, however many
    // queries a process sends).
    void gather(std::chrono::milliseconds timeout, done_fn done, clock::time_point now);
    // Messages of other nodes: add_channels registers on_request and on_reply into the table.
    Status add_channels(node_channels &table);
    void on_request(uint32_t from, std::span<const uint8_t> body);
    void on_reply(uint32_t from, std::span<const uint8_t> body);
    void node_lost(uint32_t node);
    // The rows this node sends as its part of the step ends (to every other node).
    void send_final();
    std::optional<clock::time_point> next_deadline() const;
    void expire(clock::time_point now);
    size_t pending() const { return _pending.size(); }

private:
    struct pending_gather {
        clock::time_point deadline;
        long long timeout_ms = 0;
        std::map<uint32_t, std::vector<proc_row>> have;  // node -> rows
        std::vector<uint32_t> waiting;                   // nodes asked, not answered
        std::string silent;
        std::vector<done_fn> done;  // the queries that asked while it was in flight share it
    };
    void finish(uint64_t id, const std::string &why_waiting);
    proc_row absent_row(uint32_t rank, uint8_t state) const;
    std::string name(uint32_t node) const;

    uint32_t _self;
    std::vector<std::vector<uint32_t>> _node_ranks;
    std::vector<std::string> _node_names;
    uint32_t _ntasks = 0;
    proc_table_ops _ops;
    uint64_t _next_id = 1;
    std::map<uint64_t, pending_gather> _pending;
    std::map<uint32_t, std::vector<proc_row>> _final;  // nodes that ended: their last rows
};

}  // namespace pmixcpp::server
