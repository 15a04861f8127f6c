// The multi-node plumbing of a server (server.h, multinode_options): its node transport (UCX
// first, TCP when UCX cannot start), the shape of the fence collectives over it, and the exchange
// of the nodes' transport addresses through srun's agent (the bootstrap), or the static wire-up
// that needs no exchange. The server wires the
// callbacks (messages in, lost peers, finished collectives) to its loop.
#pragma once

#include <event2/event.h>

#include <functional>
#include <memory>
#include <string>

#include "../coll/fence_manager.h"
#include "../net/directory.h"
#include "../net/transport.h"
#include "server.h"
#include "../common/step_info.h"

namespace pmixcpp::server {

// The node transport of `step` on `base`: UCX if mo.ucx and it starts, else TCP. `to` carries the
// callbacks; the rest of it is filled in from `step` and `mo`.
Result<std::unique_ptr<net::node_transport>> open_node_transport(event_base *base, const step_info &step,
                                                                 const multinode_options &mo,
                                                                 net::transport_options to);

// The fence collectives' settings (without send / on_done); logs the fence shapes when the nodes
// are grouped by switch.
coll::manager_options fence_options(const step_info &step, const multinode_options &mo);

// Publish our transport address through mo.bootstrap and hand the nodes' table to `net` on the
// loop thread (`post`); `failed(message)` runs there when that did not work. Call on the loop thread.
// With mo.static_addresses (static wire-up) nothing is exchanged: `net` gets the addresses and
// our signed record at once and checks each peer's record when it first connects to it.
// With mo.directory: the directory route (net/directory.h); `*directory` gets the directory,
// which the caller stops before the transport goes.
void exchange_addresses(const step_info &step, const multinode_options &mo, net::node_transport &net,
                        std::function<void(std::function<void()>)> post,
                        std::function<void(const std::string &message)> failed,
                        std::shared_ptr<net::directory> *directory);

}  // namespace pmixcpp::server
