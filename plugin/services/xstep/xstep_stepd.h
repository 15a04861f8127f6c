// The cross-step inbox of a node server (slurmstepd side): one agent call kept open to srun's
// router (xstep_srun.h) on a thread of its own, its items handed to the server.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "status.h"
#include "xstep_codec.h"

namespace pmixcpp::agent {
class client;
}

namespace pmixcpp::xstep {

// slurmstepd side: keeps one inbox call open to srun's agent on a thread of its own and hands
// every item to `deliver` (on that thread). A long poll: srun can push to a node server only by
// answering a call the node made, so the node's connection to srun's agent stays open for the
// step (plugin/agent/README.md, "The inbox and the idle close"). The agent client's shutdown gate ends the call: shut
// the client down before destroying the inbox.
class inbox {
public:
    using deliver_fn = std::function<void(std::vector<inbox_item> items)>;
    // `agent` (slurmstepd's client of srun's agent) must outlive the inbox; its shutdown gate
    // ends the call.
    static Result<std::unique_ptr<inbox>> start(agent::client &agent, uint32_t node, deliver_fn deliver);
    ~inbox();
    inbox(const inbox &) = delete;
    inbox &operator=(const inbox &) = delete;

private:
    inbox() = default;
    void run();
    agent::client *_agent = nullptr;
    uint32_t _node = 0;
    deliver_fn _deliver;
    std::atomic<bool> _cancel{false};
    std::thread _thread;
};

}  // namespace pmixcpp::xstep
