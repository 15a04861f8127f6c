// Client core: connection handshake, request/reply matching, job data (see client.h).
#include "client.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include <pmix.h>

#include "log.h"
#include "sys.h"

namespace pmixcpp::client {

namespace {
std::atomic<Client *> g_client{nullptr};

// How long PMIx_Finalize may block writing its last message (a server that reads nothing).
constexpr auto kFinalizeFlushTimeout = std::chrono::seconds(10);
// What the requests still pending at Finalize are failed with (no answer will come).
constexpr char kFinalizedReason[] = "finalized";
// Extra time a local timer gives the server to answer with its own timeout status.
constexpr double kTimeoutGrace = 1.0;
constexpr const char *kLocalTimeout = "timed out (client side)";

}  // namespace

Client *current() { return g_client.load(std::memory_order_acquire); }
void set_current(Client *client) { g_client.store(client, std::memory_order_release); }

Result<ClientEnv> read_client_env() {
    ClientEnv env;
    const char *ns = getenv("PMIX_NAMESPACE");
    const char *rank = getenv("PMIX_RANK");
    const char *uri = getenv("PMIXCPP_SERVER_URI");
    const char *token = getenv("PMIXCPP_CLIENT_TOKEN");
    std::string missing;
    if (ns == nullptr || *ns == '\0') missing += " PMIX_NAMESPACE";
    if (rank == nullptr || *rank == '\0') missing += " PMIX_RANK";
    if (uri == nullptr || *uri == '\0') missing += " PMIXCPP_SERVER_URI";
    if (token == nullptr) missing += " PMIXCPP_CLIENT_TOKEN";
    if (!missing.empty())
        return Status(PMIX_ERR_INIT,
                      "not started by a pmixcpp server (srun --mpi=pmixcpp): missing" + missing);
    if (strlen(ns) > PMIX_MAX_NSLEN) return Status(PMIX_ERR_INIT, "PMIX_NAMESPACE is too long");
    env.nspace = ns;
    char *end = nullptr;
    errno = 0;
    unsigned long r = strtoul(rank, &end, 10);
    if (errno != 0 || end == rank || *end != '\0' || r >= PMIX_RANK_VALID)
        return Status(PMIX_ERR_INIT, std::string("PMIX_RANK is not a rank: ") + rank);
    env.rank = static_cast<pmix_rank_t>(r);
    if (strncmp(uri, "unix:", 5) != 0)
        return Status(PMIX_ERR_INIT, std::string("PMIXCPP_SERVER_URI is not unix:<path>: ") + uri);
    env.socket_path = uri + 5;
    if (env.socket_path.size() >= sizeof(sockaddr_un::sun_path))
        return Status(PMIX_ERR_INIT, "server socket path too long: " + env.socket_path);
    env.token = token;
    // The server writes the job data beside its socket (PROTOCOL.md); PMIXCPP_JOBDATA may name it.
    const char *jd = getenv("PMIXCPP_JOBDATA");
    if (jd != nullptr && *jd != '\0')
        env.jobdata_path = jd;
    else
        env.jobdata_path = env.socket_path.substr(0, env.socket_path.rfind('/') + 1) + "jobdata";
    return env;
}

Client::~Client() { _loop.stop(); }

Status Client::start(const ClientEnv &env) {
    memset(&_self, 0, sizeof(_self));
    memcpy(_self.nspace, env.nspace.data(), env.nspace.size());
    _self.rank = env.rank;
    _data.set_self(env.nspace, env.rank);
    _events = event_registry(_self, [this](const pmix_proc_t &p) { return is_local_peer(p); });

    // Job data: mapped and looked up in place; only what is asked for is decoded.
    auto job = JobData::map(env.jobdata_path);
    PMIXCPP_RETURN_IF_ERROR(job);
    job.value()->use_layout();  // other nodes' ranks from the layout (the compact form)
    _data.set_jobdata(std::move(job.value()));
    const pmix_value_t *lr = _data.job_value(_self.rank, PMIX_LOCAL_RANK);
    if (lr == nullptr || lr->type != PMIX_UINT16)
        return Status(PMIX_ERR_INIT, "job data " + env.jobdata_path + " has no local rank of rank " +
                                         std::to_string(_self.rank));
    _local_rank = lr->data.uint16;
    if (const pmix_value_t *lp = _data.job_value(PMIX_RANK_WILDCARD, PMIX_LOCAL_PEERS);
        lp != nullptr && lp->type == PMIX_STRING && lp->data.string != nullptr) {
        std::vector<pmix_rank_t> peers;
        for (const char *p = lp->data.string; *p != '\0';) {
            char *end = nullptr;
            unsigned long r = strtoul(p, &end, 10);
            if (end == p) break;
            peers.push_back(static_cast<pmix_rank_t>(r));
            p = *end == ',' ? end + 1 : end;
        }
        std::sort(peers.begin(), peers.end());
        std::lock_guard<std::mutex> g(_ev_lock);
        _local_peers = std::move(peers);
    }

    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return sys_error("socket", errno, PMIX_ERR_INIT);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    memcpy(addr.sun_path, env.socket_path.data(), env.socket_path.size());
    int rc;
    do {
        rc = ::connect(fd, reinterpret_cast<sockaddr *>(&addr), sizeof(addr));
    } while (rc != 0 && errno == EINTR);
    if (rc != 0) {
        Status st(PMIX_ERR_UNREACH, "connect to " + env.socket_path + ": " + strerror(errno));
        close(fd);
        return st;
    }
    // No progress thread yet: the connect request is written from here and its answer read by
    // whoever first waits for the server (the connection is ordered, so every later request
    // queues behind it). A refusal closes the connection: calls that need the server then fail
    // with PMIX_ERR_LOST_CONNECTION, and the reason is logged here.
    _loop.attach(
        fd, [this](wire::Frame &&f) { on_frame(std::move(f)); },
        [this](const Status &why) { on_close(why); });

    wire::connect_request req;
    req.nspace = env.nspace;
    req.rank = env.rank;
    req.token = env.token;
    req.pid = static_cast<uint32_t>(getpid());
    wire::Writer w;
    PMIXCPP_RETURN_IF_ERROR(wire::encode(w, req));
    const uint32_t rank = _self.rank, local_rank = _local_rank;
    Status st = send_request(
        wire::msg_type::connect, w,
        [rank, local_rank](pmix_status_t status, const std::string &msg, wire::Reader &body) {
            if (status != PMIX_SUCCESS) {
                // A client that finalizes before anything waited for the server never read this
                // answer: Finalize fails the request here, which is no refusal.
                if (status == PMIX_ERR_LOST_CONNECTION && msg == kFinalizedReason) return;
                PMIXCPP_LOG_ERROR("the pmixcpp server refused rank %u: %s %s", rank, PMIx_Error_string(status),
                                  msg.c_str());
                return;
            }
            wire::connect_reply reply;
            Status d = wire::decode(body, &reply);
            if (d.ok() && reply.local_rank != local_rank)
                PMIXCPP_LOG_WARNING("server says local rank %u, job data %u", reply.local_rank, local_rank);
        },
        0, true);
    if (!st.ok()) {
        _loop.stop();
        return st;
    }
    PMIXCPP_LOG_DEBUG("%s:%u (local rank %u): job data mapped, connect sent", _self.nspace, _self.rank,
                      _local_rank);
    return Status::success();
}

void Client::stop() {
    if (_loop.connected()) {
        // No round trip: the finalize request goes out behind everything sent before it, then the
        // connection closes; the server learns of the orderly end in that order.
        wire::finalize_request req;
        wire::Writer w;
        uint32_t id;
        {
            std::lock_guard<std::mutex> g(_req_lock);
            do {
                id = _next_id++;
            } while (id == 0 || _pending.count(id) != 0);
        }
        if (wire::encode(w, req).ok()) {
            auto frame = wire::encode_frame(static_cast<uint16_t>(wire::msg_type::finalize), 0, id, w.data());
            if (frame.ok()) _loop.finish(std::move(frame.value()), kFinalizeFlushTimeout);
        }
    }
    _loop.stop();
    // Anything still pending is answered (the loop is gone, so run the handlers here).
    std::unordered_map<uint32_t, PendingRequest> left;
    {
        std::lock_guard<std::mutex> g(_req_lock);
        left.swap(_pending);
        _closed = true;
    }
    for (auto &[id, p] : left) {
        wire::Reader empty(nullptr, 0);
        p.handler(PMIX_ERR_LOST_CONNECTION, kFinalizedReason, empty);
    }
}

Status Client::request(wire::msg_type type, const wire::Writer &payload, ReplyHandler handler,
                       double timeout_s, bool any_thread) {
    // Someone must read the reply (and, from now on, what else the server sends).
    if (!_loop.running()) PMIXCPP_RETURN_IF_ERROR(_loop.start());
    return send_request(type, payload, std::move(handler), timeout_s, any_thread);
}

Status Client::post_request(wire::msg_type type, const wire::Writer &payload, ReplyHandler handler) {
    size_t pending;
    {
        std::lock_guard<std::mutex> g(_req_lock);
        pending = _pending.size();
    }
    if (pending >= kMaxUnreadReplies) return request(type, payload, std::move(handler), 0, true);
    return send_request(type, payload, std::move(handler), 0, true);
}

Status Client::send_request(wire::msg_type type, const wire::Writer &payload, ReplyHandler handler,
                            double timeout_s, bool any_thread) {
    uint32_t id;
    {
        std::lock_guard<std::mutex> g(_req_lock);
        if (_closed || !_loop.connected())
            return Status(PMIX_ERR_LOST_CONNECTION, "not connected to the server");
        do {
            id = _next_id++;
        } while (id == 0 || _pending.count(id) != 0);
        _pending.emplace(id, PendingRequest{std::move(handler), 0, any_thread});
    }
    // Its reply must reach the progress thread, which may have lent the socket to a direct waiter.
    if (!any_thread) _loop.hand_back_socket();
    auto frame = wire::encode_frame(static_cast<uint16_t>(type), 0, id, payload.data());
    if (!frame.ok()) {
        std::lock_guard<std::mutex> g(_req_lock);
        _pending.erase(id);
        return frame.status();
    }
    if (timeout_s > 0) {
        auto delay = std::chrono::duration_cast<ProgressLoop::Clock::duration>(
            std::chrono::duration<double>(timeout_s + kTimeoutGrace));
        uint64_t timer = _loop.add_timer(delay, [this, id] {
            wire::Reader empty(nullptr, 0);
            complete(id, PMIX_ERR_TIMEOUT, kLocalTimeout, empty);
        });
        std::lock_guard<std::mutex> g(_req_lock);
        auto it = _pending.find(id);
        if (it != _pending.end()) it->second.timer = timer;
    }
    if (!_loop.send(std::move(frame.value()))) {
        // The connection died in between: answer on the progress thread like any other failure.
        _loop.post([this, id] {
            wire::Reader empty(nullptr, 0);
            complete(id, PMIX_ERR_LOST_CONNECTION, "connection to the server lost", empty);
        });
    }
    PMIXCPP_LOG_TRACE("request %s id %u (%zu bytes)", wire::to_string(type), id, payload.size());
    return Status::success();
}

Status Client::request_wait(wire::msg_type type, const wire::Writer &payload, ReplyHandler handler,
                            double timeout_s) {
    struct WaitState {
        std::atomic<bool> done{false};
        std::mutex m;
        std::condition_variable cv;
    };
    auto ws = std::make_shared<WaitState>();
    const bool direct = _loop.claim_socket();
    const std::thread::id waiter = std::this_thread::get_id();
    auto finished = [this, ws, direct, waiter] {
        if (direct) {
            ws->done.store(true, std::memory_order_release);
            if (std::this_thread::get_id() != waiter) _loop.wake_direct();
            return;
        }
        std::lock_guard<std::mutex> g(ws->m);
        ws->done.store(true, std::memory_order_release);
        ws->cv.notify_all();
    };
    ReplyHandler wrapped = [handler = std::move(handler), finished](pmix_status_t status, const std::string &message,
                                                                    wire::Reader &body) {
        try {
            handler(status, message, body);
        } catch (...) {
            finished();
            throw;
        }
        finished();
    };
    // A direct waiter reads its own reply, so no progress thread is needed for it: a program that
    // only makes blocking calls never starts one (it starts for a local timer, for a reply or event
    // that must run there, for a write the socket cannot take at once).
    Status st = direct && timeout_s <= 0 ? send_request(type, payload, std::move(wrapped), 0, true)
                                         : request(type, payload, std::move(wrapped), timeout_s, true);
    if (!st.ok()) {
        if (direct) _loop.release_socket(true);
        return st;
    }
    if (!direct) {
        std::unique_lock<std::mutex> g(ws->m);
        ws->cv.wait(g, [&] { return ws->done.load(std::memory_order_acquire); });
        return Status::success();
    }
    // Replies whose handlers are ours run here; anything else (events, replies with application
    // callbacks) goes to the progress thread, and from then on everything does, to keep the order.
    bool forward = false;
    _loop.wait_direct([&] { return ws->done.load(std::memory_order_acquire); },
                      [&](wire::Frame &&f) {
                          if (!forward && f.type == static_cast<uint16_t>(wire::msg_type::reply) && f.id != 0) {
                              bool here;
                              {
                                  std::lock_guard<std::mutex> g(_req_lock);
                                  auto it = _pending.find(f.id);
                                  here = it == _pending.end() || it->second.any_thread;
                              }
                              if (here) {
                                  on_frame(std::move(f));
                                  return;
                              }
                          }
                          forward = true;
                          auto shared = std::make_shared<wire::Frame>(std::move(f));
                          _loop.post([this, shared] { on_frame(std::move(*shared)); });
                      });
    _loop.release_socket(waits_for_progress_thread());
    return Status::success();
}

bool Client::waits_for_progress_thread() {
    std::lock_guard<std::mutex> g(_req_lock);
    for (const auto &[id, p] : _pending)
        if (!p.any_thread) return true;
    return false;
}

void Client::complete(uint32_t id, pmix_status_t status, const std::string &message, wire::Reader &body) {
    PendingRequest p;
    {
        std::lock_guard<std::mutex> g(_req_lock);
        auto it = _pending.find(id);
        if (it == _pending.end()) return;  // already answered (e.g. timed out locally)
        p = std::move(it->second);
        _pending.erase(it);
    }
    if (p.timer != 0) _loop.cancel_timer(p.timer);
    try {
        p.handler(status, message, body);
    } catch (const std::exception &e) {
        PMIXCPP_LOG_ERROR("reply handler for request %u failed: %s", id, e.what());
    } catch (...) {
        PMIXCPP_LOG_ERROR("reply handler for request %u failed", id);
    }
}

namespace {
// The descriptor of the reply whose handler runs on this thread (set around complete()).
thread_local wire::FrameDescriptor *t_reply_descriptor = nullptr;
}  // namespace

wire::FrameDescriptor Client::take_reply_descriptor() {
    if (t_reply_descriptor == nullptr) return nullptr;
    return std::move(*t_reply_descriptor);
}

void Client::on_frame(wire::Frame &&frame) {
    if (frame.type == static_cast<uint16_t>(wire::msg_type::event) && frame.id == 0) {
        auto ev = std::make_shared<wire::event_notification>();
        Status st = wire::decode_payload(frame.payload, ev.get());
        if (!st.ok()) {
            PMIXCPP_LOG_ERROR("malformed event from the server: %s", st.message().c_str());
            return;
        }
        run_server_event(*this, std::move(ev));
        return;
    }
    if (frame.type != static_cast<uint16_t>(wire::msg_type::reply)) {
        PMIXCPP_LOG_DEBUG("ignoring unexpected message type %u (id %u) from the server", frame.type,
                          frame.id);
        return;
    }
    if (frame.id == 0) {
        PMIXCPP_LOG_DEBUG("ignoring unsolicited message from the server");
        return;
    }
    wire::Reader r(frame.payload);
    wire::reply_header hdr;
    Status st = wire::decode(r, &hdr);
    if (!st.ok()) {
        PMIXCPP_LOG_ERROR("malformed reply %u from the server: %s", frame.id, st.message().c_str());
        wire::Reader empty(nullptr, 0);
        complete(frame.id, PMIX_ERR_UNPACK_FAILURE, st.message(), empty);
        return;
    }
    wire::FrameDescriptor *outer = t_reply_descriptor;
    t_reply_descriptor = &frame.descriptor;
    complete(frame.id, hdr.status, hdr.message, r);
    t_reply_descriptor = outer;
}

void Client::on_close(const Status &why) {
    std::unordered_map<uint32_t, PendingRequest> left;
    {
        std::lock_guard<std::mutex> g(_req_lock);
        left.swap(_pending);
    }
    if (!left.empty())
        PMIXCPP_LOG_ERROR("lost the connection to the pmixcpp server (%s); failing %zu pending requests",
                          why.message().c_str(), left.size());
    for (auto &[id, p] : left) {
        if (p.timer != 0) _loop.cancel_timer(p.timer);
        wire::Reader empty(nullptr, 0);
        try {
            p.handler(PMIX_ERR_LOST_CONNECTION, why.message(), empty);
        } catch (...) {
        }
    }
}

Result<size_t> Client::add_event_handler(const pmix_status_t *codes, size_t ncodes, const pmix_info_t *info,
                                         size_t ninfo, pmix_notification_fn_t fn, std::vector<shared_event> *replay) {
    std::lock_guard<std::mutex> g(_ev_lock);
    auto ref = _events.add(codes, ncodes, info, ninfo, fn);
    if (!ref.ok() || replay == nullptr) return ref;
    for (const auto &ev : _event_cache)
        if (_events.accepts(ref.value(), ev->status, ev->source, ev->infos.data(), ev->infos.size()))
            replay->push_back(ev);
    return ref;
}

bool Client::remove_event_handler(size_t ref) {
    std::lock_guard<std::mutex> g(_ev_lock);
    return _events.remove(ref);
}

std::vector<event_handler_entry> Client::event_chain_for(pmix_status_t status, const pmix_proc_t &source,
                                                         const pmix_info_t *info, size_t ninfo) {
    std::lock_guard<std::mutex> g(_ev_lock);
    return _events.chain_for(status, source, info, ninfo);
}

std::vector<event_handler_entry> Client::take_server_event(const shared_event &ev) {
    std::lock_guard<std::mutex> g(_ev_lock);
    bool no_cache = false;
    for (size_t i = 0; i < ev->infos.size(); ++i)
        if (strncmp(ev->infos[i].key, PMIX_EVENT_DO_NOT_CACHE, PMIX_MAX_KEYLEN) == 0)
            no_cache = ev->infos[i].value.type != PMIX_BOOL || ev->infos[i].value.data.flag;
    if (!no_cache) {
        _event_cache.push_back(ev);
        if (_event_cache.size() > kEventCacheSize) _event_cache.pop_front();
    }
    return _events.chain_for(ev->status, ev->source, ev->infos.data(), ev->infos.size());
}

bool Client::has_event_handler(size_t ref) {
    std::lock_guard<std::mutex> g(_ev_lock);
    return _events.has(ref);
}

bool Client::is_local_peer(const pmix_proc_t &p) const {
    if (strncmp(p.nspace, _self.nspace, PMIX_MAX_NSLEN) != 0) return false;
    return std::binary_search(_local_peers.begin(), _local_peers.end(), p.rank);
}

std::vector<size_t> Client::event_handler_refs() {
    std::lock_guard<std::mutex> g(_ev_lock);
    std::vector<size_t> out;
    for (size_t r : _events.refs_in_order()) out.push_back(r);
    return out;
}

}  // namespace pmixcpp::client
