// Node transport: send a message to node i of the step; receive messages through a callback.
// Everything runs on the server's libevent loop thread (the transport registers its sockets /
// UCX event fd in that loop). Messages are authenticated by the envelope (envelope.h).
//
// Addresses: a transport publishes address() through the bootstrap (srun agent rendezvous);
// once every node's address is known, set_peers() gets the table (index = node id). Messages
// sent before that are queued. Delivery is best effort: a peer that cannot be reached is logged
// and its messages dropped; collectives and direct modex then run into their timeout.
#pragma once

#include <event2/event.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "envelope.h"
#include "status.h"

namespace pmixcpp::net {

struct transport_options {
    step_identity id;
    uint32_t node_id = 0;
    std::vector<std::string> node_names;  // for log lines; size = number of nodes
    bool eager_connect = false;           // connect to every peer as soon as the table is known
    std::string ucx_tls;                  // UCX only: UCX_TLS (empty = UCX's default)
    std::string ucx_devices;              // UCX only: UCX_NET_DEVICES
    std::function<void(envelope &&)> on_receive;  // on the loop thread
};

class node_transport {
public:
    virtual ~node_transport() = default;
    virtual const char *kind() const = 0;
    // What peers need to reach us. TCP: "tcp:*:<port>" (the rendezvous fills in the host it
    // sees us from); UCX: "ucx:<hex worker address>".
    virtual std::string address() const = 0;
    virtual Status set_peers(const std::vector<std::string> &addresses) = 0;
    virtual bool has_peers() const = 0;
    virtual void send(uint32_t node, channel chan, std::span<const uint8_t> body) = 0;
};

Result<std::unique_ptr<node_transport>> make_tcp_transport(event_base *base, transport_options opts);
// Fails (and the caller falls back to TCP) if UCX cannot start.
Result<std::unique_ptr<node_transport>> make_ucx_transport(event_base *base, transport_options opts);

}  // namespace pmixcpp::net
