// Messages between the steps of one job, after (or without) PMIx_Connect: direct modex of a
// proc of another step, events whose range reaches other steps, and PMIx_Job_control of another
// step's procs (shared/PROTOCOL.md, "Between the steps of a job").
//
//   node server of step A --agent call--> srun A --Unix socket in the job's directory--> srun B
//   srun B --answer of the long-lived "inbox" call of the node hosting the rank--> node server B
//   node server B --agent call "answer"--> srun B --same Unix connection--> srun A --> server A
//
// Each step's srun runs a `router` (as the user, beside the job's store, session_srun.h): it
// listens on `<job dir>/.xs.<hex nspace>` (the directory is 0700 and the user's; a peer whose
// SO_PEERCRED uid is not ours is refused), keeps one waiting inbox call per node of its step, and
// routes. Each node server keeps one inbox call open (`inbox`, a thread of its own). No Slurm,
// no server state here.
#pragma once

#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "../../agent/proto/responder.h"
#include "../../agent/srun/service_table.h"
#include "../../common/workers.h"
#include "status.h"
#include "xstep_codec.h"

namespace pmixcpp::xstep {

// srun side: one per step. Thread safe.
class router {
public:
    // `dir`: the job's directory (session::job_store::dir()); `node_of`: rank -> node index.
    static Result<std::unique_ptr<router>> start(std::string dir, std::string nspace, std::vector<uint32_t> node_of,
                                                 uint32_t nnodes);
    ~router();  // stop()
    router(const router &) = delete;
    router &operator=(const router &) = delete;
    // An agent call of one of our step's servers (is_xstep_body): answers it through `answer`.
    // Returns at once; blocking work runs on threads of its own.
    void submit(agent::responder answer, std::vector<uint8_t> body);
    // Its handlers in srun's agent's service table, under its ids (../service_ids.h).
    Status register_in(agent::service_table &table);
    // Stop listening, remove the socket, fail what waits (the step ended). Idempotent.
    void stop();

    struct stats {
        uint64_t gets_out = 0, gets_in = 0, events_out = 0, events_in = 0, answers = 0, expired = 0;
    };

private:
    router() = default;
    void run();                                          // listener thread
    void serve_peer(int fd);                             // a message of another step's srun
    void queue(uint32_t node, std::vector<uint8_t> body, uint64_t id);  // under _mutex
    void flush(uint32_t node);                           // answer a waiting inbox (not under _mutex)
    void forward_get(agent::responder to, message m, std::vector<uint8_t> body);
    void forward_event(agent::responder to, message m, std::vector<uint8_t> body);
    void forward_jobctl(agent::responder to, message m, std::vector<uint8_t> body);
    // `ns` is another running step of the job; otherwise answers `fd` (our own: BAD_PARAM, not
    // registered: NOT_FOUND) and returns false.
    bool other_running_step(const agent::responder &to, const std::string &ns, const char *what);
    Status spawn(std::function<void()> fn);  // on a thread of _workers, or why not

    std::string _dir, _nspace, _socket;
    std::vector<uint32_t> _node_of;
    int _listen_fd = -1;
    int _wake_fd[2] = {-1, -1};
    std::thread _thread;
    std::atomic<bool> _stopping{false};

    std::mutex _mutex;  // everything below
    struct node_box {
        agent::responder inbox;  // a waiting inbox call of that node's server
        std::vector<inbox_item> queued;
    };
    std::vector<node_box> _nodes;
    struct waiting_get {
        agent::responder peer;  // the other srun's call, answered with the node's answer
        std::chrono::steady_clock::time_point deadline;
    };
    std::map<uint64_t, waiting_get> _waiting;
    uint64_t _next_id = 1;
    bounded_workers _workers{kServiceThreads};  // one per forwarded call
    stats _stats;
};

// Path of a step's router socket in the job's directory.
std::string socket_path(const std::string &dir, const std::string &nspace);

}  // namespace pmixcpp::xstep
