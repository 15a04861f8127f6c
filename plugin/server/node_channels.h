// The channels between the servers of a step: every id in one enum, and the registration table
// through which each service takes the messages of its own channels. The node transport
// (plugin/net) carries a channel id and bytes and knows none of them: it asks the table whether
// an id is one (node_channels is its net::channel_names) and what to call it in a log line.
//
// A service registers its handlers once, before the transport delivers anything
// (its add_channels(node_channels &)); the shell hands every message that arrives to dispatch().
// No I/O here.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "../net/envelope.h"
#include "status.h"

namespace pmixcpp::server {

// The envelope's u16 channel (plugin/net/envelope.h). The numbers are on the wire between the
// servers of a step: never reuse or renumber one. 5 is the transports' own link channel
// (net::kLinkChannel), never registered here.
enum class node_channel : uint16_t {
    coll = 1,                     // fence and group collectives (plugin/coll), the shell's remote-fence backend
    dmodex_request = 2,           // a Get of a rank on the receiving node (dmodex.h)
    dmodex_reply = 3,             // its answer
    event = 4,                    // an event for the receiving node's ranks (events.h)
    node_down = 6,                // "node X is lost", from the node that noticed (node_liveness.h)
    node_probe = 7,               // does your server still answer? (a collective timed out on it)
    node_query = 8,               // did node X say goodbye to you? (dead or finished?)
    pubsub_request = 16,          // a publish/lookup/unpublish for node 0 (dyn.h)
    pubsub_reply = 17,            // node 0's answer
    job_control = 18,             // signal ranks of the receiving node (dyn.h)
    group_bootstrap = 19,         // a member's entry, for node 0 (groups.h)
    group_bootstrap_result = 20,  // node 0's answer to a member node
    proc_table_request = 21,      // "your ranks' pids and states" (proc_table.h)
    proc_table_reply = 22,        // the answer, or a node's final rows
    spawn_psets = 23,             // a spawn's process sets, from the spawner's node to the others (groups.h)
};

constexpr net::channel_id id_of(node_channel c) { return static_cast<net::channel_id>(c); }

class node_channels final : public net::channel_names {
public:
    using handler = std::function<void(uint32_t from_node, std::span<const uint8_t> body)>;

    // `c`'s handler, and its name in log lines. Once per channel: a second registration of a
    // channel, the link channel's id or an empty handler is refused (a programming error the
    // server's setup reports).
    Status add(node_channel c, const char *name, handler h);

    // The registered channel's name; nullptr for an id nothing registered.
    const char *name_of(net::channel_id id) const override;
    const char *name_of(node_channel c) const { return name_of(id_of(c)); }

    // Hand a message to its channel's handler; false (and nothing runs) if none is registered.
    bool dispatch(uint32_t from_node, net::channel_id id, std::span<const uint8_t> body) const;

private:
    struct entry {
        const char *name = nullptr;
        handler on_message;
    };
    std::vector<entry> _by_id;  // index: channel id
};

}  // namespace pmixcpp::server
