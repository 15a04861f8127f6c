// The client state behind the C API: connection to the node's server, request table, local data
// and event-handler registry. One instance exists between the first PMIx_Init and the last
// PMIx_Finalize (see lifecycle.cc); every other API function reaches it through current().
#pragma once

#include <pmix_common.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "event_chain.h"
#include "progress.h"
#include "status.h"
#include "store.h"
#include "wire/codec.h"
#include "wire/messages.h"

namespace pmixcpp::client {

// Runs once per request on the progress thread: with the reply (body = payload after the
// status header), or with a local failure (lost connection, local timeout; body empty).
using ReplyHandler =
    std::function<void(pmix_status_t status, const std::string &message, wire::Reader &body)>;

// An event received from the server, shared between the chains that run it and the replay cache.
using shared_event = std::shared_ptr<const wire::event_notification>;

// Settings read from the environment by PMIx_Init.
struct ClientEnv {
    std::string nspace;
    pmix_rank_t rank = PMIX_RANK_UNDEF;
    std::string socket_path;
    std::string token;
    std::string jobdata_path;
};
// Read PMIX_NAMESPACE, PMIX_RANK, PMIXCPP_SERVER_URI (unix:<path>), PMIXCPP_CLIENT_TOKEN, and
// PMIXCPP_JOBDATA (default: "jobdata" beside the socket).
Result<ClientEnv> read_client_env();

class Client {
public:
    Client() = default;
    ~Client();
    Client(const Client &) = delete;
    Client &operator=(const Client &) = delete;

    // Map the job data, connect and send the connect request without waiting for its answer; no
    // thread is started (the first request whose reply the thread must read starts it; blocking
    // calls read their own). On failure everything is undone.
    Status start(const ClientEnv &env);
    // Send finalize without waiting for an answer, stop the progress thread, close the connection.
    void stop();

    // Send a request; `handler` runs exactly once on the progress thread. timeout_s > 0 arms a
    // local timer (the server normally answers first with its own PMIX_ERR_TIMEOUT).
    // any_thread: the handler is ours alone (no application callback in it) and may run on
    // whichever thread reads the reply, e.g. an application thread in a direct wait.
    Status request(wire::msg_type type, const wire::Writer &payload, ReplyHandler handler,
                   double timeout_s = 0, bool any_thread = false);
    // A request nobody waits for, whose handler is ours alone and only logs (a commit): sent
    // without starting the progress thread; whoever next reads the socket runs the handler (a
    // direct wait, or the progress thread once it runs); Finalize fails it with
    // PMIX_ERR_LOST_CONNECTION if nobody did. Past kMaxUnreadReplies unanswered requests the
    // progress thread is started after all, to read the answers before the server's send queue
    // for this process fills.
    Status post_request(wire::msg_type type, const wire::Writer &payload, ReplyHandler handler);
    static constexpr size_t kMaxUnreadReplies = 64;
    // request() and wait on the calling thread (never the progress thread) until `handler` has
    // run. The caller usually reads the socket itself meanwhile (ProgressLoop's direct waits), so
    // the handler runs on it; frames for others go to the progress thread in their order. A
    // non-ok Status means the request was not sent and the handler will not run.
    Status request_wait(wire::msg_type type, const wire::Writer &payload, ReplyHandler handler,
                        double timeout_s = 0);

    // Inside a ReplyHandler: the descriptor that came with the reply (nullptr if none). Taking it
    // leaves none for a later call in the same handler.
    static wire::FrameDescriptor take_reply_descriptor();

    ProgressLoop &loop() { return _loop; }
    LocalData &data() { return _data; }
    const pmix_proc_t &self() const { return _self; }
    uint32_t local_rank() const { return _local_rank; }
    bool connected() const { return _loop.connected(); }

    // Event handlers (order and filters: event_chain.h). add_event_handler also returns, in
    // `replay`, the cached server events the new handler accepts: they reached this process before
    // the handler existed (events.cc runs them for it alone).
    Result<size_t> add_event_handler(const pmix_status_t *codes, size_t ncodes, const pmix_info_t *info,
                                     size_t ninfo, pmix_notification_fn_t fn, std::vector<shared_event> *replay);
    bool remove_event_handler(size_t ref);
    // The handlers for this event, in call order.
    std::vector<event_handler_entry> event_chain_for(pmix_status_t status, const pmix_proc_t &source,
                                                     const pmix_info_t *info, size_t ninfo);
    // Same, for an event from the server, which is also kept for handlers registered later
    // (the last kEventCacheSize events, unless it carries PMIX_EVENT_DO_NOT_CACHE).
    std::vector<event_handler_entry> take_server_event(const shared_event &ev);
    std::vector<size_t> event_handler_refs();
    bool has_event_handler(size_t ref);
    bool is_local_peer(const pmix_proc_t &p) const;
    static constexpr size_t kEventCacheSize = 64;

private:
    // request() without starting the progress thread.
    Status send_request(wire::msg_type type, const wire::Writer &payload, ReplyHandler handler, double timeout_s,
                        bool any_thread);
    void on_frame(wire::Frame &&frame);
    void on_close(const Status &why);
    void complete(uint32_t id, pmix_status_t status, const std::string &message, wire::Reader &body);
    bool waits_for_progress_thread();  // a pending reply must be read by the progress thread

    ProgressLoop _loop;
    LocalData _data;
    pmix_proc_t _self{};
    uint32_t _local_rank = 0;

    struct PendingRequest {
        ReplyHandler handler;
        uint64_t timer = 0;
        bool any_thread = false;
    };
    std::mutex _req_lock;
    std::unordered_map<uint32_t, PendingRequest> _pending;
    uint32_t _next_id = 1;
    bool _closed = false;

    std::mutex _ev_lock;
    event_registry _events;
    std::deque<shared_event> _event_cache;
    std::vector<pmix_rank_t> _local_peers;  // sorted; from pmix.lpeers
};

// Run an event the server sent through this process's handler chain (events.cc; progress thread).
void run_server_event(Client &c, shared_event ev);

// The live client, or nullptr before PMIx_Init / after the last PMIx_Finalize.
Client *current();
// Used by PMIx_Init / PMIx_Finalize only.
void set_current(Client *client);

// One-shot rendezvous between a callback (any thread) and a waiting application thread.
template <typename T>
class Sync {
public:
    void set(T value) {
        std::lock_guard<std::mutex> g(_m);
        _value = std::move(value);
        _done = true;
        _cv.notify_all();
    }
    T &wait() {
        std::unique_lock<std::mutex> g(_m);
        _cv.wait(g, [this] { return _done; });
        return _value;
    }
    // false on timeout
    bool wait_for(std::chrono::milliseconds d) {
        std::unique_lock<std::mutex> g(_m);
        return _cv.wait_for(g, d, [this] { return _done; });
    }
    T &value() { return _value; }

private:
    std::mutex _m;
    std::condition_variable _cv;
    bool _done = false;
    T _value{};
};

}  // namespace pmixcpp::client
