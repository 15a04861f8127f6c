// Node transport: send a message to node i of the step; receive messages through a callback.
// Everything runs on the server's libevent loop thread (the transport registers its sockets /
// UCX event fd in that loop). Peers are authenticated by link keys from the node identity exchange
// (identity.h), never by anything srun made: a TCP connection opens with the handshake of
// handshake.h (neither side reads the other's messages before it), and every node frame, TCP and
// UCX, carries a MAC and a sequence number (a bad MAC or a replay is dropped with a log line). The TCP
// listener binds to the node's own address and bounds what an unauthenticated peer costs
// (listener_guard.h).
//
// Addresses: a transport publishes address() through the bootstrap (srun agent rendezvous) in a
// signed node record; once every node's record is known and verified, set_peers() gets the
// addresses and node keys (index = node id). Static wire-up (TCP only, where the site reserves
// ports for steps: plugin/slurm static_route): every node's address is computed from root's
// Slurm configuration, so set_static_peers() gets the addresses without keys and no table is
// exchanged; each peer's listener presents its signed record in the handshake's challenge, which
// the connecting side checks (record_check) before it takes the node key from it, once per peer
// (kept for its later connections). Directory wire-up (TCP and UCX, directory.h): no table and no
// reserved port; each node's signed record reaches the nodes that need it through Slurm's slurmd
// forwarding (our tree and ring neighbours at start, any other node on first need), and
// add_peer() takes them one by one. Messages
// sent before that are queued. Delivery is best effort: a peer that cannot be reached is logged
// and its messages dropped.
//
// Lost peers (the policy is one for every transport: liveness.h; a transport reports what its
// links tell it): a server whose step ends normally says goodbye (the link channel) on every connection
// it has, just before its connections close (leave()). A connection to a peer that breaks without
// that goodbye -- TCP EOF/reset/refused/keepalive expiry, a UCX endpoint error
// (UCP_ERR_HANDLING_MODE_PEER; UCX waits up to 0.5 s for a goodbye read after the error) --
// means the peer's slurmstepd is gone: on_peer_lost(node) runs once, and messages to that node
// are dropped from then on. So that every node is watched even
// if nothing else talks to it, each server connects to its ring neighbours ((id +- 1) mod n) as
// soon as the address table is known and greets them (hello).
//
// The ring closes over the survivors: once a node is lost (found here, or forget()), each
// transport watches its nearest live neighbours on both sides (alive = neither lost nor left),
// connecting to and greeting any it did not watch yet. So a run of consecutive dead nodes is
// found in a cascade, each refused connection leading to the next node.
// Dead or finished? A peer we never reached that refuses us may have ended its part of the step
// normally before we came (short steps end at different times), or may be dead. Before any loss
// (the start of every step) it is quietly taken as gone (left), as it always was. Once a loss was
// seen, the transport still stops talking to it (left) and moves on to the next node, but hands
// the question to the server (on_peer_unreachable): the server asks every other live node
// whether that peer said goodbye to it (said_goodbye()); a node that ended normally said
// goodbye to the neighbours it had, so someone knows, unless those died too. Nobody knows
// within a deadline: it is lost (forget()). We chose this over asking srun's agent (which hears
// of a node's end only when the node saw a loss) and over a probe (a refused connection
// already says the server is gone; only whether it ended well is open).
#pragma once

#include <event2/event.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "envelope.h"
#include "handshake.h"
#include "status.h"
#include "wire/node_messages.h"

namespace pmixcpp::net {

struct transport_options {
    step_identity id;
    uint32_t node_id = 0;
    auth::key node_key;  // ours (identity.h): the links into this node are derived from it
    std::vector<std::string> node_names;  // for log lines; size = number of nodes
    // TCP: the IPv4 address to listen on, the node's own (the one Slurm reaches it at); empty:
    // every interface (only when that address is unknown).
    std::string bind_address;
    // TCP: the port to listen on (static wire-up: the step's reserved port); 0: any free one.
    uint16_t listen_port = 0;
    bool eager_connect = false;           // connect to every peer as soon as the table is known
    std::string ucx_tls;                  // UCX only: UCX_TLS (empty = UCX's default)
    std::string ucx_devices;              // UCX only: UCX_NET_DEVICES
    // The layer above's channels (envelope.h): which ids it receives, their names in log lines.
    // Outlives the transport. Null: only the transports' own link channel is known.
    const channel_names *channels = nullptr;
    std::function<void(envelope &&)> on_receive;  // on the loop thread
    // A peer is lost (see above); on the loop thread, at most once per node.
    std::function<void(uint32_t node, const std::string &why)> on_peer_lost;
    bool watch_neighbours = true;  // connect to the ring neighbours at once (lost-node detection)
    // After a loss: a peer we never reached is gone, dead or finished (see above); on the loop
    // thread, at most once per node. The transport already treats it as left.
    std::function<void(uint32_t node, const std::string &why)> on_peer_unreachable;
    // A peer is no longer alive here for another reason (its goodbye, gone before we talked, a
    // broken link waiting for its goodbye: liveness.h `left`); on the loop thread. May be empty.
    std::function<void(uint32_t node)> on_peer_left;
    // At most this many of our connections (UCX: endpoints) to other nodes stay open (0: no cap;
    // conn_lru.h): once more are open, the least recently used idle ones are closed (with a
    // `link` idle message first, so the peer takes the EOF or endpoint error for no loss) and
    // opened again on the next message to their node. Never closed: one with a handshake or
    // bytes not yet written (UCX: sends in flight), the ring neighbour it watches, or one to a
    // node `busy` names (requests of ours outstanding there). Answers travel on the answering
    // node's own connection (UCX: its own endpoint; a send of its that fails because we closed
    // ours is posted again once), so closing ours loses none.
    size_t max_connections = 0;
    std::function<bool(uint32_t node)> busy;
};

class node_transport {
public:
    virtual ~node_transport() = default;
    virtual const char *kind() const = 0;
    // What peers need to reach us. TCP: "tcp:<bound ip>:<port>", or "tcp:*:<port>" when bound to
    // every interface (the rendezvous fills in the host it sees us from); UCX: "ucx:<hex worker
    // address>".
    virtual std::string address() const = 0;
    // Verified records only (identity.h): addresses and node keys, index = node id.
    virtual Status set_peers(const std::vector<std::string> &addresses, const std::vector<auth::key> &node_keys) = 0;
    // Static wire-up: `addresses` as computed (index = node id); `own_record` is our signed record
    // (for address()), presented to every connecting peer; `check(node, record)` verifies a
    // listener's record for the slot of `node` and returns its node key. Not every transport can.
    using record_check = std::function<Result<auth::key>(uint32_t node, std::string_view record)>;
    virtual Status set_static_peers(const std::vector<std::string> &addresses, std::string own_record,
                                    record_check check) {
        (void)addresses, (void)own_record, (void)check;
        return Status(PMIX_ERR_NOT_SUPPORTED, std::string(kind()) + " transport: no static wire-up");
    }
    // Directory wire-up (directory.h; TCP and UCX): no table at all. Peers come one by one
    // (add_peer, with a verified record's address and node key); the first message to a node we
    // have no address for waits in its queue and `need(node)` is called (on the loop, once per
    // node) so that the caller asks for the node's record. The ring neighbours are greeted at once
    // (their greetings wait for their addresses like any message).
    virtual Status start_directory(std::function<void(uint32_t node)> need) {
        (void)need;
        return Status(PMIX_ERR_NOT_SUPPORTED, std::string(kind()) + " transport: no directory wire-up");
    }
    // A verified peer (directory wire-up; on the loop): what waits for it goes out. A peer known
    // already is left as it is.
    virtual Status add_peer(uint32_t node, const std::string &address, const auth::key &node_key) {
        (void)node, (void)address, (void)node_key;
        return Status(PMIX_ERR_NOT_SUPPORTED, std::string(kind()) + " transport: no directory wire-up");
    }
    // Directory wire-up: `node`'s record never came and the node was not reached (directory.h,
    // "never"; on the loop): it is lost (on_peer_lost with `why`), what waited for it dropped.
    virtual void never_known(uint32_t node, const std::string &why) { (void)node, (void)why; }
    virtual bool has_peers() const = 0;
    virtual void send(uint32_t node, channel_id chan, std::span<const uint8_t> body) = 0;
    // The same message to several nodes (a fan-out): a transport whose frames do not name their
    // destination keeps one copy for all of them (TCP); by default, one send each.
    virtual void send_to(std::span<const uint32_t> nodes, channel_id chan, std::span<const uint8_t> body) {
        for (uint32_t n : nodes) send(n, chan, body);
    }
    // `node` is lost (another node reported it, or the server decided): stop talking to it (its
    // messages are dropped) and close the ring over it. Also for a node taken as left.
    virtual void forget(uint32_t node) = 0;
    // Whether `node` said goodbye to us (its step ended normally), and whether we still take it
    // for alive (neither lost nor left).
    virtual bool said_goodbye(uint32_t node) const = 0;
    virtual bool peer_alive(uint32_t node) const = 0;
    // Live nodes that messages of ours wait for because their address is not known yet (the
    // directory route's ask is under way). A step that ends here keeps its loop running a little
    // for them: the peer may be waiting for exactly these (the release of a fence it is in).
    virtual size_t awaiting_address() const { return 0; }
    // Whether `node`'s address is known here (every node's on the static route and after the
    // rendezvous; on the directory route only the nodes told or asked so far): a message to any
    // other node first costs an ask through slurmd.
    virtual bool knows_address(uint32_t node) const { return node < UINT32_MAX; }
    // The step ends normally on this node: say goodbye on every connection, waiting at most
    // `budget_ms` for the bytes to leave. Called once the loop thread has stopped.
    virtual void leave(int budget_ms) = 0;
    // Our connections to other nodes open now, the most at once, and how many were closed for
    // the cap (0 where the transport does not count them).
    virtual size_t open_connections() const { return 0; }
    virtual size_t peak_connections() const { return 0; }
    virtual uint64_t idle_closes() const { return 0; }
};

// The body of a `link` message: u8 kind (shared/wire/node_messages.h).
using wire::link_kind;

Result<std::unique_ptr<node_transport>> make_tcp_transport(event_base *base, transport_options opts);
// Fails (and the caller falls back to TCP) if UCX cannot start.
Result<std::unique_ptr<node_transport>> make_ucx_transport(event_base *base, transport_options opts);

}  // namespace pmixcpp::net
