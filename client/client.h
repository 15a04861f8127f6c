// The client state behind the C API: connection to the node's server, request table, local data
// and event-handler registry. One instance exists between the first PMIx_Init and the last
// PMIx_Finalize (see lifecycle.cc); every other API function reaches it through current().
#pragma once

#include <pmix_common.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

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

struct EventHandler {
    size_t ref = 0;
    std::vector<pmix_status_t> codes;  // empty = default handler (every event)
    pmix_notification_fn_t fn = nullptr;
    std::string name;
};

// Settings read from the environment by PMIx_Init.
struct ClientEnv {
    std::string nspace;
    pmix_rank_t rank = PMIX_RANK_UNDEF;
    std::string socket_path;
    std::string token;
};
// Read PMIX_NAMESPACE, PMIX_RANK, PMIXCPP_SERVER_URI (unix:<path>), PMIXCPP_CLIENT_TOKEN.
Result<ClientEnv> read_client_env();

class Client {
public:
    Client() = default;
    ~Client();
    Client(const Client &) = delete;
    Client &operator=(const Client &) = delete;

    // Connect, handshake, map and load the job data. On failure everything is undone.
    Status start(const ClientEnv &env);
    // Send finalize (bounded wait), stop the progress thread, close the connection.
    void stop();

    // Send a request; `handler` runs exactly once on the progress thread. timeout_s > 0 arms a
    // local timer (the server normally answers first with its own PMIX_ERR_TIMEOUT).
    Status request(wire::msg_type type, const wire::Writer &payload, ReplyHandler handler,
                   double timeout_s = 0);

    ProgressLoop &loop() { return _loop; }
    LocalData &data() { return _data; }
    const pmix_proc_t &self() const { return _self; }
    uint32_t local_rank() const { return _local_rank; }
    bool connected() const { return _loop.connected(); }

    // Event handlers (registration order; prepend puts a handler first).
    size_t add_event_handler(EventHandler h, bool prepend);
    bool remove_event_handler(size_t ref);
    // Handlers interested in `status`, in call order.
    std::vector<EventHandler> event_handlers_for(pmix_status_t status);
    std::vector<size_t> event_handler_refs();

private:
    void on_frame(wire::Frame &&frame);
    void on_close(const Status &why);
    void complete(uint32_t id, pmix_status_t status, const std::string &message, wire::Reader &body);

    ProgressLoop _loop;
    LocalData _data;
    pmix_proc_t _self{};
    uint32_t _local_rank = 0;

    struct PendingRequest {
        ReplyHandler handler;
        uint64_t timer = 0;
    };
    std::mutex _req_lock;
    std::unordered_map<uint32_t, PendingRequest> _pending;
    uint32_t _next_id = 1;
    bool _closed = false;

    std::mutex _ev_lock;
    std::vector<EventHandler> _handlers;
    size_t _next_handler_ref = 1;
};

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
