// The directory route (transport.h): how the node servers of a step learn each other's transport
// addresses with no table from srun. Every node's signed node record (identity.h: address and node
// key, signed by munge for root or SlurmUser) travels node to node through Slurm's own slurmd
// forwarding (slurm_forward_data: slurmd connects to a Unix socket of the step on the target node;
// plugin/slurm/directory_socket.h), never through a process of the job's user.
//
//   start: our record to our tree and ring neighbours (the fence tree's parent and children, the
//          liveness ring's two neighbours), in one call (tell). A neighbour whose socket is not up
//          yet fails and is tried again with backoff (it also tells us when it starts).
//   need:  any other node's record on first need (the transport's first message to a node it
//          has no address for waits in its queue): ask, carrying our record, so the answer is a
//          tell to us and the asker is learnt too. What is learnt is kept.
//   in:    a tell or an ask whose record passes the same check as a record of srun's table, for
//          the slot of the node it claims; an ask is answered with a tell.
//   never: a node not reached (its slurmstepd died before it listened, its slurmd refused) is
//          tried again, 0.1 s doubling to 2 s, until give_up since the first try; then, unless its
//          record came meanwhile, it is given up with one error line ("node N (host) never
//          answered the directory ask after T s") and `unreachable` is called: the server takes
//          it for lost, so what waits for it (messages, fences, Gets) fails with that reason
//          instead of waiting for ever.
//
// No Slurm and no I/O here: the sending function and the record check are given (unit tests:
// tests/net/test_directory.cc). Everything blocking (the sends, munge's checks) runs on the
// directory's one worker thread, never on the server's loop; one send is in flight at a time,
// carrying every message that is due (one per kind), and at most max_inbox received messages
// wait.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "handshake.h"
#include "status.h"
#include "wire/directory_messages.h"

namespace pmixcpp::net {

struct directory_stats {
    uint64_t tells_sent = 0, asks_sent = 0;  // messages (one per destination node)
    uint64_t send_calls = 0;                 // calls of the sending function
    uint64_t retries = 0;                    // destinations sent to again after a failure
    uint64_t learned = 0, refused = 0, dropped = 0;
    uint64_t given_up = 0;                   // nodes given up (never reached, record never came)
    uint64_t asked_again = 0;                // asks that got there, sent again for want of an answer
    uint64_t dropped_done = 0;               // waiting messages dropped: the node's step ended (done_with)
};

struct directory_options {
    uint32_t self = 0;
    uint32_t nnodes = 0;
    std::string own_record;           // our signed record (the transport's address)
    std::vector<uint32_t> neighbours;  // told at start (tree and ring)
    std::vector<std::string> node_names;  // for log lines; may be empty
    // Blocking: deliver `message` to every node of `nodes`; returns those it did not reach.
    std::function<std::vector<uint32_t>(const std::vector<uint32_t> &nodes, const std::vector<uint8_t> &message)> send;
    // The check of a record for the slot of `node`: its address and node key.
    struct checked {
        std::string address;
        auth::key node_key;
    };
    std::function<Result<checked>(uint32_t node, std::string_view record)> verify;
    // A node's checked address and key, once per node, from the worker thread.
    std::function<void(uint32_t node, const std::string &address, const auth::key &node_key)> learned;
    // A node whose record never came and that was not reached within give_up (see above), once
    // per node, from the worker thread; `why` names the node and the time. May be empty.
    std::function<void(uint32_t node, const std::string &why)> unreachable;
    // An ask that got there (slurmd delivered it) but whose answer has not come is asked again
    // after this long, until give_up: the target may have died after taking it in.
    std::chrono::milliseconds answer_wait{2000};
    std::chrono::milliseconds first_retry{100};
    std::chrono::milliseconds max_retry{2000};
    // A destination not reached within this time since its first try is given up (logged).
    std::chrono::milliseconds give_up{300000};
    size_t max_inbox = 1024;
};

class directory {
public:
    // create, then begin.
    static Result<std::unique_ptr<directory>> start(directory_options opts);
    // A directory that takes messages (receive, need) but acts on them only once begun.
    static Result<std::unique_ptr<directory>> create(directory_options opts);
    // Starts the worker, which tells the neighbours at once. Once.
    Status begin();
    ~directory();
    directory(const directory &) = delete;
    directory &operator=(const directory &) = delete;

    // The transport needs `node`'s record: ask it, once (any thread, never blocks).
    void need(uint32_t node);
    // The transport no longer talks to `node` (its step ended there, or it is lost): whatever
    // waits to go to it is dropped and nothing more is sent to it (any thread, never blocks).
    void done_with(uint32_t node);
    // A message that arrived (any thread, never blocks): checked and acted on by the worker.
    // Dropped with a log line when max_inbox messages wait already.
    void receive(std::vector<uint8_t> message);
    // Stop the worker (what is not sent is dropped). Idempotent.
    void stop();
    // Blocks until the worker has nothing due or waiting (tests).
    bool wait_idle(std::chrono::milliseconds limit);

    directory_stats stats() const;
    bool known(uint32_t node) const;

private:
    explicit directory(directory_options opts);
    struct pending {
        wire::directory_kind kind;
        uint32_t attempt = 0;
        std::chrono::steady_clock::time_point due, first;
        bool delivered = false;  // an ask that got there, waiting for its answer
    };
    void run();
    void handle(const std::vector<uint8_t> &message);
    void send_due(std::unique_lock<std::mutex> &lk);
    void queue(uint32_t node, wire::directory_kind kind);  // with _mu held
    std::string name(uint32_t node) const;

    directory_options _opts;
    std::vector<uint8_t> _tell, _ask;  // our two messages, encoded once
    mutable std::mutex _mu;
    std::condition_variable _cv, _idle_cv;
    std::vector<std::vector<uint8_t>> _inbox;
    std::map<uint32_t, pending> _out;  // by destination; an ask also tells, so it wins
    std::vector<bool> _known, _asked, _given_up, _done;
    directory_stats _stats;
    bool _stop = false, _busy = false;
    std::thread _worker;
};

}  // namespace pmixcpp::net
