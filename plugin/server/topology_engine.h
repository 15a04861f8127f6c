// The topology engine: the Gets of PMIX_LOCAL_TOPO, the node's hardware topology as hwloc XML
// (topology.h), without I/O. The topology is not in the job data: discovering the I/O devices
// takes longer than the rest of a launch, and most steps never ask. The first Get has it made
// (`topology_ops::make`: the shell's thread), the Gets that come meanwhile wait for it (a
// client's pmix.optional Get too: this is the node's own data, held by its server, not another
// node's), later ones are answered at once; a topology that could not be made fails them all
// with the reason. At most kMaxTopologyWaiters Gets of one connection wait. Answers go to the
// reply sink. Loop thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "get_waits.h"
#include "reply_sink.h"
#include "status.h"

namespace pmixcpp::server {

constexpr size_t kMaxTopologyWaiters = 16;  // a client's Gets of PMIX_LOCAL_TOPO before it is made

struct topology_ops {
    // Start making the topology; `done` is to run later on the loop thread (posted, never inside
    // this call) with the XML or why there is none. A failure to start: the returned Status.
    std::function<Status(std::function<void(Result<std::string>)> done)> make;
};

class topology_engine {
public:
    // `sink` must outlive the engine, and the engine the `done` the shell was handed.
    topology_engine(std::string nspace, topology_ops ops, reply_sink &sink);

    // A Get of PMIX_LOCAL_TOPO: answered, or waiting for the topology.
    void get(const get_waiter &w);
    // A connection closed: its waiting Gets are forgotten.
    void drop_connection(uint64_t conn);
    size_t waiting() const { return _waiters.size(); }
    bool made() const { return _xml.has_value(); }

private:
    void done(Result<std::string> xml);
    void answer(const get_waiter &w);

    std::string _nspace;
    topology_ops _ops;
    reply_sink &_sink;
    bool _making = false;
    std::vector<get_waiter> _waiters;
    std::optional<Result<std::string>> _xml;
};

}  // namespace pmixcpp::server
