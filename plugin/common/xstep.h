// Messages between the steps of one job, after (or without) PMIx_Connect: direct modex of a
// proc of another step, events whose range reaches other steps, and PMIx_Job_control of another
// step's procs (shared/PROTOCOL.md, "Between the steps of a job").
//
//   node server of step A --agent call--> srun A --Unix socket in the job's directory--> srun B
//   srun B --answer of the long-lived "inbox" call of the node hosting the rank--> node server B
//   node server B --agent call "answer"--> srun B --same Unix connection--> srun A --> server A
//
// Each step's srun runs a `router` (as the user, beside the job's store, session_store.h): it
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

#include "../agent/proto/responder.h"
#include "../agent/stepd/workers.h"
#include "status.h"

namespace pmixcpp::agent {
class client;
}

namespace pmixcpp::xstep {

inline constexpr uint32_t kMagic = 0x53585850;  // "PXXS"
inline constexpr uint32_t kMaxQueued = 4096;     // messages waiting for one node's inbox
inline constexpr int kInboxCallMs = 3600 * 1000;  // one inbox call; re-issued when it ends

enum class op : uint8_t { get = 1, event = 2, inbox = 3, answer = 4, jobctl = 5 };
// The key of a get of a step's job data (rank PMIX_RANK_WILDCARD): what a spawner's server
// gives an OpenPMIx client in its spawn reply.
inline constexpr char kJobdataKey[] = "pmixcpp.xstep.jobdata";
const char *to_string(op o);

// Body of an agent call (and of a message between sruns): u32 magic, u8 op, then
//   get:    str nspace, u32 rank, str key (empty = all), str requester nspace, str requester node,
//           u32 timeout_ms; rank PMIX_RANK_WILDCARD with key kJobdataKey: the step's job data
//           (node 0 of the step answers at once, data = wire::encode_jobdata of its entries)
//   event:  u32 n, n x str nspace (0 = every other running step of the job), bytes the encoded
//           wire::event_notification
//   inbox:  u32 node (the caller's node index in its step)
//   answer: u64 id (of the inbox item), i32 status, str message, bytes data (encoded info[])
//   jobctl: str nspace (the target step), i32 signal, u8 terminate (SIGTERM, SIGKILL after the
//           grace), u32 n, n x u32 rank (0 = every rank of the step)
// Every call is answered with the agent's one reply (agent::reply: i32 status, str message, bytes body).
struct message {
    op what = op::get;
    std::string nspace;  // get: the target's
    uint32_t rank = 0;
    std::string key;
    std::string from_nspace, from_node;
    uint32_t timeout_ms = 0;
    std::vector<std::string> nspaces;  // event
    std::vector<uint8_t> payload;      // event: the notification; answer: the data
    uint32_t node = 0;                 // inbox
    uint64_t id = 0;                   // answer
    std::vector<uint32_t> ranks;       // jobctl (empty = all)
    int32_t signal = 0;                // jobctl
    bool terminate = false;            // jobctl
    int32_t status = 0;
    std::string text;
};
Result<std::vector<uint8_t>> encode(const message &m);
bool is_xstep_body(std::span<const uint8_t> body);
Status decode(std::span<const uint8_t> body, message *m);

// The body of an inbox call's reply: u32 n, n x (u64 id, bytes an encoded get or event message).
struct inbox_item {
    uint64_t id = 0;
    std::vector<uint8_t> body;
};
Result<std::vector<uint8_t>> encode_items(const std::vector<inbox_item> &items);
Status decode_items(std::span<const uint8_t> body, std::vector<inbox_item> *items);

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

// slurmstepd side: keeps one inbox call open to srun's agent on a thread of its own and hands
// every item to `deliver` (on that thread). The agent client's shutdown gate ends the call: shut
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
