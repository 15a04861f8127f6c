// Direct modex: one rank's data fetched from the node that hosts it when a Get asks for it. No
// I/O: the engine is driven by the server's calls (a Get, a commit, a rank or node gone), by the
// node messages it is handed (channels dmodex_request / dmodex_reply, shared/wire/node_messages.h)
// and by timer ticks; it reads and writes the node's key-value store directly, through the narrow
// interface it is given (rank_store.h: has, encode, store), and answers through `dmodex_ops`
// (send a node message, complete a Get, a local rank's state, the loop's post).
//
// Both sides of the exchange live here:
//  - requesting: a Get of a local client for a remote rank waits here; one request per target
//    rank is in flight (concurrent Gets are coalesced; a request older than the timeout is sent
//    again); the reply's data is stored (all of the rank's data, or every rank of its node) and
//    the Gets it satisfies are answered; Gets for keys the reply did not hold ask again; a
//    failed reply fails the Gets of that rank; a lost node fails the Gets of its ranks. When an
//    answer carries every rank of its node (whole_node), one request per node is in flight: Gets
//    of the node's other ranks wait for it, and those it did not satisfy ask for their rank.
//    Batches: the requests for ranks of one node made while the loop handles one round of
//    client messages (dmodex_ops::defer) travel in one request message; the owner answers the
//    ranks that are ready together in one reply, and each of the others in its own reply when it
//    commits (wire::dmodex_request).
//  - serving: a request for a local rank is answered at once when the data is there, else when
//    the rank commits the key; it fails when the rank finalizes or dies without it, or at the
//    timeout.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "get_waits.h"
#include "rank_store.h"
#include "node_channels.h"
#include "status.h"
#include "wire/node_messages.h"

namespace pmixcpp::server {

struct dmodex_config {
    std::string nspace;                   // for log lines
    uint32_t self_node = 0;
    std::vector<std::string> node_names;  // by node id, for log lines
    std::vector<uint32_t> node_of;        // by rank: the node that hosts it
    std::vector<uint32_t> local_ranks;    // the ranks of this node
    uint32_t timeout_sec = 300;           // remote Gets and served requests
    bool whole_node = false;              // an answer carries every rank of the node (PMIxCppDmodexNode)
    size_t whole_node_max_bytes = 4u << 20;  // ... unless their data is larger: then the one asked for
};

struct dmodex_ops {
    // Node messages: an encoded wire::dmodex_request / wire::dmodex_reply to `node`.
    std::function<void(uint32_t node, std::vector<uint8_t> body)> send_request;
    std::function<void(uint32_t node, std::vector<uint8_t> body)> send_reply;
    // A local client's Get is complete: its data is in the store now (answer from there), or it
    // failed.
    std::function<void(const get_waiter &w)> answer;
    std::function<void(const get_waiter &w, pmix_status_t status, const std::string &message)> fail;
    // Serving: "died" or "finalized" for a local rank that will never commit again, else empty.
    std::function<std::string(uint32_t rank)> gone;
    // Requesting: run `fn` once the loop has handled what is ready now (the server's post). When
    // set, requests wait there for the others of the same round and go out in one message per
    // node (flush()); when not, each request goes out at once.
    std::function<void(std::function<void()> fn)> defer;
};

class dmodex_engine {
public:
    using time_point = server_clock::time_point;

    // `store` must outlive the engine.
    dmodex_engine(dmodex_config config, dmodex_ops ops, rank_data_store &store);

    // The latest deadline a remote Get may have: `asked`, at most the timeout from `now`.
    time_point deadline(std::optional<time_point> asked, time_point now) const;

    // Requesting side. A local client's Get of a remote rank's data that the store does not
    // hold; its deadline is capped by deadline().
    void get(get_waiter w, time_point now);
    // A node's reply (channel dmodex_reply).
    // add_channels registers on_request and on_reply (dmodex_request, dmodex_reply) into the
    // table, at the time a message arrives.
    Status add_channels(node_channels &table);
    void on_reply(uint32_t from, std::span<const uint8_t> body, time_point now);
    // Data of `rank` was stored by other means (a collecting fence): the Gets it satisfies.
    void data_stored(uint32_t rank);
    // `node` is lost: the Gets of its ranks fail with `text`; returns how many.
    size_t node_lost(uint32_t node, const std::string &text);
    // A client connection closed: its Gets are forgotten.
    void drop_connection(uint64_t conn);
    // Gets a client connection has waiting here.
    size_t waiting_of(uint64_t conn) const { return _waiting.count_of(conn); }

    // Serving side. A node's request (channel dmodex_request).
    void on_request(uint32_t from, std::span<const uint8_t> body, time_point now);
    // A local rank committed: the requests it satisfies are answered.
    void rank_committed(uint32_t rank);
    // A local rank finalized or died: the requests still waiting for it fail.
    void rank_left(uint32_t rank, bool died);

    // Timer: Gets and requests past their deadline fail with PMIX_ERR_TIMEOUT.
    void expire(time_point now);
    std::optional<time_point> next_deadline() const;
    size_t size() const { return _waiting.size() + _serving.size(); }
    // Target ranks with a request in flight (tests).
    size_t requests_in_flight() const { return _pending.size(); }
    // The requests waiting for the end of the round go out, one message per node.
    void flush();
    // Request messages sent, and ranks asked for in them (both sides of a batch, for tests and
    // the simulator).
    uint64_t request_messages() const { return _request_messages; }
    uint64_t requested_ranks() const { return _requested_ranks; }
    // Whether requests to `node` are outstanding (asked, not all answered): the node transport
    // keeps its connection there open (plugin/net/conn_lru.h).
    bool outstanding_to(uint32_t node) const { auto it = _outstanding.find(node); return it != _outstanding.end() && it->second > 0; }

private:
    void request(uint32_t target, const std::string &key, time_point now);
    void reply(uint32_t node, uint32_t request_id, uint32_t target, pmix_status_t status, const std::string &message);
    // A successful reply about `target` carrying the data of `ranks` (the whole node's when so
    // configured).
    void reply_data(uint32_t node, uint32_t request_id, uint32_t target, const std::vector<uint32_t> &ranks);
    void serve_item(uint32_t from, uint32_t id, uint32_t target, const std::string &key, time_point now,
                    std::vector<uint32_t> *ready);
    void set_pending(uint32_t target, uint32_t id, time_point sent);
    void clear_pending(uint32_t target);
    void answer_ready(uint32_t rank);
    // The Gets still waiting on `target` ask again (own_request: not coalesced with its node's).
    void ask_again(uint32_t target, time_point now, bool own_request);
    void fail_serving(const get_waiter &w, pmix_status_t status, const std::string &message);
    bool is_local(uint32_t rank) const;
    const std::string &name_of(uint32_t node) const;

    dmodex_config _cfg;
    dmodex_ops _ops;
    rank_data_store &_store;
    std::vector<bool> _local;  // by rank
    get_waits _waiting;  // local clients' Gets of remote ranks (conn = the client's connection)
    get_waits _serving;  // other nodes' requests for local ranks (conn = the node)
    struct pending {
        uint32_t request_id = 0;
        time_point sent;
    };
    std::map<uint32_t, pending> _pending;       // remote target rank -> outstanding request
    std::map<uint32_t, pending> _pending_node;  // whole_node: node -> the request that answers for it
    void request_for(uint32_t target, const std::string &key, time_point now, bool coalesce_by_node);
    uint32_t next_id();
    uint32_t _next_id = 1;
    std::map<uint32_t, std::vector<wire::dmodex_item>> _outbox;  // node -> requests of this round
    bool _flush_scheduled = false;
    std::map<uint32_t, uint32_t> _outstanding;  // node -> target ranks with a request in flight there
    uint64_t _request_messages = 0, _requested_ranks = 0;
};

}  // namespace pmixcpp::server
