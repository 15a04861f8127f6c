#include "xstep_srun.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include "../../agent/proto/agent_io.h"
#include "../sessions/session_srun.h"
#include "../service_ids.h"
#include "log.h"
#include "sys.h"
#include "wire/codec.h"
#include "wire/frame.h"

namespace pmixcpp::xstep {

using clock_type = std::chrono::steady_clock;

// --- srun side ----------------------------------------------------------------------------

namespace {

std::vector<uint8_t> reply_bytes(int status, const std::string &message, std::vector<uint8_t> body = {}) {
    auto b = agent::encode_reply(agent::reply{status, message, std::move(body)});
    return b.ok() ? std::move(b.value()) : std::vector<uint8_t>{};
}

void answer(const agent::responder &to, int status, const std::string &message, std::vector<uint8_t> body = {}) {
    Status st = to.send_encoded(reply_bytes(status, message, std::move(body)));
    if (!st.ok()) PMIXCPP_LOG_VERBOSE("cross-step: could not answer: %s", st.message().c_str());
}

Result<int> connect_unix(const std::string &path) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (path.size() >= sizeof(addr.sun_path)) return Status(PMIX_ERR_BAD_PARAM, "socket path " + path + " is too long");
    memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return sys_error("socket");
    if (connect(fd, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) != 0) {
        int err = errno;
        close(fd);
        return Status(err == ENOENT || err == ECONNREFUSED ? PMIX_ERR_NOT_FOUND : PMIX_ERR_UNREACH,
                      path + ": " + strerror(err));
    }
    return fd;
}

// One message to another step's router (the agent's request frame, service xstep) and its
// answer (an encoded agent::reply).
Result<std::vector<uint8_t>> call_peer(const std::string &path, std::span<const uint8_t> body, int timeout_ms,
                                       const std::atomic<bool> *cancel) {
    auto deadline = clock_type::now() + std::chrono::milliseconds(timeout_ms);
    PMIXCPP_ASSIGN_OR_RETURN(auto fd, connect_unix(path));
    agent_io::fd_guard guard{fd};
    auto frame = agent::request_frame(services::id_of(services::service::xstep), body);
    PMIXCPP_RETURN_IF_ERROR(frame);
    PMIXCPP_RETURN_IF_ERROR(agent_io::send_all(fd, frame.value(), deadline, cancel));
    auto f = agent_io::read_frame(fd, agent::kMaxPayload, deadline, cancel);
    PMIXCPP_RETURN_IF_ERROR(f);
    if (f->type != agent::kReplyFrame) return Status(PMIX_ERR_UNPACK_FAILURE, "unexpected frame from a peer step");
    return std::move(f->payload);
}

}  // namespace

std::string socket_path(const std::string &dir, const std::string &nspace) { return dir + "/.xs." + session::hex_name(nspace); }

Result<std::unique_ptr<router>> router::start(std::string dir, std::string nspace, std::vector<uint32_t> node_of,
                                              uint32_t nnodes) {
    std::unique_ptr<router> r(new router());
    r->_dir = std::move(dir);
    r->_nspace = std::move(nspace);
    r->_node_of = std::move(node_of);
    r->_nodes.resize(nnodes);
    r->_socket = socket_path(r->_dir, r->_nspace);
    for (uint32_t n : r->_node_of)
        if (n >= nnodes) return Status(PMIX_ERR_BAD_PARAM, "cross-step router: task map names node " + std::to_string(n));
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (r->_socket.size() >= sizeof(addr.sun_path))
        return Status(PMIX_ERR_BAD_PARAM, "cross-step socket path " + r->_socket + " is too long");
    memcpy(addr.sun_path, r->_socket.c_str(), r->_socket.size() + 1);
    r->_listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (r->_listen_fd < 0) return sys_error("cross-step socket");
    unlink(r->_socket.c_str());
    if (bind(r->_listen_fd, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) != 0 ||
        chmod(r->_socket.c_str(), 0600) != 0 || listen(r->_listen_fd, 128) != 0)
        return sys_error("cross-step socket " + r->_socket);
    if (pipe2(r->_wake_fd, O_CLOEXEC | O_NONBLOCK) != 0)
        return sys_error("cross-step pipe");
    try {
        r->_thread = std::thread([p = r.get()] { p->run(); });
    } catch (const std::exception &e) {
        return Status(PMIX_ERROR, std::string("cross-step router thread: ") + e.what());
    }
    PMIXCPP_LOG_DEBUG("%s: cross-step router on %s", r->_nspace.c_str(), r->_socket.c_str());
    return r;
}

router::~router() {
    stop();
    if (_listen_fd >= 0) close(_listen_fd);
    for (int fd : _wake_fd)
        if (fd >= 0) close(fd);
}

void router::stop() {
    if (_stopping.exchange(true)) return;
    char c = 1;
    (void)!write(_wake_fd[1], &c, 1);
    if (_thread.joinable()) _thread.join();
    unlink(_socket.c_str());
    std::map<uint64_t, waiting_get> waiting;
    {
        std::lock_guard<std::mutex> g(_mutex);
        waiting.swap(_waiting);
        for (auto &b : _nodes) {
            b.inbox.reset();  // its call is failed
            
            b.queued.clear();
        }
    }
    for (auto &[id, w] : waiting) answer(w.peer, PMIX_ERR_NOT_FOUND, "step " + _nspace + " ended");
    _workers.close();
    PMIXCPP_LOG_DEBUG("%s: cross-step router stopped: %lu get(s) out, %lu in, %lu event(s) out, %lu in, %lu expired",
                      _nspace.c_str(), (unsigned long)_stats.gets_out, (unsigned long)_stats.gets_in,
                      (unsigned long)_stats.events_out, (unsigned long)_stats.events_in, (unsigned long)_stats.expired);
}

Status router::spawn(std::function<void()> fn) { return _workers.start(std::move(fn), "cross-step calls"); }

void router::submit(agent::responder fd, std::vector<uint8_t> body) {
    message m;
    if (Status st = decode(body, &m); !st.ok()) {
        answer(fd, PMIX_ERR_UNPACK_FAILURE, "malformed cross-step request: " + st.message());
        return;
    }
    if (_stopping) {
        answer(fd, PMIX_ERR_NOT_FOUND, "step " + _nspace + " is ending");
        return;
    }
    try {
        switch (m.what) {
        case op::get:
            if (Status st = spawn([this, fd, m = std::move(m), body = std::move(body)]() mutable {
                    forward_get(fd, std::move(m), std::move(body));
                });
                !st.ok())
                answer(fd, st.code(), st.message());
            return;
        case op::event:
            if (Status st = spawn([this, fd, m = std::move(m), body = std::move(body)]() mutable {
                    forward_event(fd, std::move(m), std::move(body));
                });
                !st.ok())
                answer(fd, st.code(), st.message());
            return;
        case op::jobctl:
            if (Status st = spawn([this, fd, m = std::move(m), body = std::move(body)]() mutable {
                    forward_jobctl(fd, std::move(m), std::move(body));
                });
                !st.ok())
                answer(fd, st.code(), st.message());
            return;
        case op::inbox: {
            if (m.node >= _nodes.size()) {
                answer(fd, PMIX_ERR_BAD_PARAM, "inbox of node " + std::to_string(m.node) + ": no such node");
                return;
            }
            agent::responder old;
            {
                std::lock_guard<std::mutex> g(_mutex);
                old = std::move(_nodes[m.node].inbox);
                _nodes[m.node].inbox = fd;
            }
            old.reset();  // its server gave up on it: that call is failed
            flush(m.node);
            return;
        }
        case op::answer: {
            agent::responder peer;
            {
                std::lock_guard<std::mutex> g(_mutex);
                auto it = _waiting.find(m.id);
                if (it != _waiting.end()) {
                    peer = std::move(it->second.peer);
                    _waiting.erase(it);
                    ++_stats.answers;
                }
            }
            // Two small writes on local sockets whose readers wait for them: no thread needed.
            if (peer.valid()) answer(peer, m.status, m.text, std::move(m.payload));
            answer(fd, peer.valid() ? PMIX_SUCCESS : PMIX_ERR_NOT_FOUND, peer.valid() ? "" : "nobody waits for it any more");
            return;
        }
        }
    } catch (const std::exception &e) {
        answer(fd, PMIX_ERR_OUT_OF_RESOURCE, std::string("cross-step: ") + e.what());
        return;
    }
    answer(fd, PMIX_ERR_BAD_PARAM, "cross-step: unknown operation");
}

bool router::other_running_step(const agent::responder &fd, const std::string &ns, const char *what) {
    if (ns == _nspace) {
        answer(fd, PMIX_ERR_BAD_PARAM, std::string("cross-step ") + what + " of our own namespace " + _nspace);
        return false;
    }
    if (!session::step_registered(_dir, ns)) {
        answer(fd, PMIX_ERR_NOT_FOUND, "namespace " + ns + " is not a running step of this job");
        return false;
    }
    return true;
}

void router::forward_get(agent::responder fd, message m, std::vector<uint8_t> body) {
    if (!other_running_step(fd, m.nspace, "get")) return;
    {
        std::lock_guard<std::mutex> g(_mutex);
        ++_stats.gets_out;
    }
    auto reply = call_peer(socket_path(_dir, m.nspace), body, static_cast<int>(m.timeout_ms) + 3000, &_stopping);
    if (!reply.ok()) {
        int code = reply.status().code();
        std::string why = code == PMIX_ERR_TIMEOUT ? "no answer from step " + m.nspace + " in time"
                                                   : "step " + m.nspace + " is gone: " + reply.status().message();
        PMIXCPP_LOG_VERBOSE("%s: cross-step get of %s:%u: %s", _nspace.c_str(), m.nspace.c_str(), m.rank, why.c_str());
        answer(fd, code == PMIX_ERR_TIMEOUT ? PMIX_ERR_TIMEOUT : PMIX_ERR_NOT_FOUND, why);
        return;
    }
    Status sent = fd.send_encoded(reply.value());
    if (!sent.ok()) PMIXCPP_LOG_VERBOSE("%s: cross-step get: %s", _nspace.c_str(), sent.message().c_str());
}

void router::forward_event(agent::responder fd, message m, std::vector<uint8_t> body) {
    std::vector<std::string> targets = m.nspaces;
    if (targets.empty()) targets = session::registered_steps(_dir);  // every other running step of the job
    int reached = 0;
    for (const auto &ns : targets) {
        if (ns == _nspace) continue;
        auto reply = call_peer(socket_path(_dir, ns), body, 5000, &_stopping);
        if (reply.ok()) ++reached;
        else PMIXCPP_LOG_VERBOSE("%s: cross-step event to %s: %s", _nspace.c_str(), ns.c_str(), reply.status().message().c_str());
    }
    {
        std::lock_guard<std::mutex> g(_mutex);
        ++_stats.events_out;
    }
    answer(fd, PMIX_SUCCESS, "reached " + std::to_string(reached) + " other step(s)");
}

void router::forward_jobctl(agent::responder fd, message m, std::vector<uint8_t> body) {
    if (!other_running_step(fd, m.nspace, "job control")) return;
    auto reply = call_peer(socket_path(_dir, m.nspace), body, 5000, &_stopping);
    if (!reply.ok()) {
        answer(fd, PMIX_ERR_NOT_FOUND, "step " + m.nspace + " is gone: " + reply.status().message());
        return;
    }
    Status sent = fd.send_encoded(reply.value());  // the other step's verdict
    if (!sent.ok()) PMIXCPP_LOG_VERBOSE("%s: cross-step job control: %s", _nspace.c_str(), sent.message().c_str());
}

void router::queue(uint32_t node, std::vector<uint8_t> body, uint64_t id) {
    _nodes[node].queued.push_back(inbox_item{id, std::move(body)});
}

void router::flush(uint32_t node) {
    agent::responder fd;
    std::vector<inbox_item> items;
    {
        std::lock_guard<std::mutex> g(_mutex);
        node_box &b = _nodes[node];
        if (!b.inbox.valid() || b.queued.empty()) return;
        fd = std::move(b.inbox);
        b.inbox.reset();
        items.swap(b.queued);
    }
    auto body = encode_items(items);
    Status st = body.ok() ? fd.send_encoded(reply_bytes(PMIX_SUCCESS, {}, std::move(body.value())))
                          : body.status();
    if (!body.ok()) {
        fd.reset();  // its call is failed
        PMIXCPP_LOG_ERROR("%s: %zu cross-step message(s) for node %u lost: %s", _nspace.c_str(), items.size(), node,
                          st.message().c_str());
    } else if (!st.ok()) {
        // The node's slurmstepd closed its connection while its inbox call waited: its part of
        // the step ended (a message that crossed a step's end, e.g. the deletion of a set the
        // two steps shared), or its link broke and it asks again. Nothing to deliver it to.
        PMIXCPP_LOG_VERBOSE("%s: %zu cross-step message(s) for node %u not delivered: %s", _nspace.c_str(),
                            items.size(), node, st.message().c_str());
    }
}

void router::run() {
    for (;;) {
        pollfd fds[2] = {{_listen_fd, POLLIN, 0}, {_wake_fd[0], POLLIN, 0}};
        int n = poll(fds, 2, 500);
        if (n < 0 && errno != EINTR) {
            PMIXCPP_LOG_ERROR("%s: cross-step router: poll: %m", _nspace.c_str());
            return;
        }
        if (_stopping) return;
        if (n > 0 && (fds[0].revents & POLLIN)) {
            for (;;) {
                int fd = accept4(_listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (fd < 0) break;
                serve_peer(fd);
            }
        }
        // Gets whose node never answered (its server is gone): answer them ourselves.
        auto now = clock_type::now();
        std::vector<agent::responder> expired;
        {
            std::lock_guard<std::mutex> g(_mutex);
            for (auto it = _waiting.begin(); it != _waiting.end();) {
                if (it->second.deadline <= now) {
                    expired.push_back(std::move(it->second.peer));
                    it = _waiting.erase(it);
                    ++_stats.expired;
                } else {
                    ++it;
                }
            }
        }
        for (auto &fd : expired) answer(fd, PMIX_ERR_TIMEOUT, "step " + _nspace + ": the node did not answer in time");
    }
}

void router::serve_peer(int raw) {
    ucred cred{};
    socklen_t len = sizeof(cred);
    if (getsockopt(raw, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.uid != getuid()) {
        PMIXCPP_LOG_ERROR("%s: cross-step router: refusing a peer (uid %u), not the job's user", _nspace.c_str(),
                          static_cast<unsigned>(cred.uid));
        close(raw);
        return;
    }
    auto f = agent_io::read_frame(raw, agent::kMaxPayload, clock_type::now() + std::chrono::seconds(5), &_stopping);
    message m;
    Status st = f.ok() ? decode(f->payload, &m) : f.status();
    if (st.ok() && f->type != static_cast<uint16_t>(services::id_of(services::service::xstep))) st = Status(PMIX_ERR_UNPACK_FAILURE, "unexpected frame type");
    if (!st.ok()) {
        PMIXCPP_LOG_ERROR("%s: cross-step router: dropped a message: %s", _nspace.c_str(), st.message().c_str());
        close(raw);
        return;
    }
    // The other srun's one call on this connection: answered through `fd`, which closes it.
    agent::responder fd = agent::responder::on_fd(raw, f->id);
    if (m.what == op::event) {
        {
            std::lock_guard<std::mutex> g(_mutex);
            ++_stats.events_in;
            for (uint32_t node = 0; node < _nodes.size(); ++node)
                if (_nodes[node].queued.size() < kMaxQueued) queue(node, f->payload, 0);
                else PMIXCPP_LOG_ERROR("%s: cross-step event dropped for node %u: %u messages queued", _nspace.c_str(), node, kMaxQueued);
        }
        for (uint32_t node = 0; node < _nodes.size(); ++node) flush(node);
        answer(fd, PMIX_SUCCESS, {});
        return;
    }
    if (m.what == op::jobctl) {
        // Each node's server signals the ranks it hosts: only the nodes of the targets are told.
        if (m.nspace != _nspace) {
            answer(fd, PMIX_ERR_NOT_FOUND, "job control of " + m.nspace + " reached step " + _nspace);
            return;
        }
        std::vector<bool> told(_nodes.size(), m.ranks.empty());
        for (uint32_t r : m.ranks) {
            if (r >= _node_of.size()) {
                answer(fd, PMIX_ERR_BAD_PARAM, "no rank " + std::to_string(r) + " in " + _nspace);
                return;
            }
            if (_node_of[r] < told.size()) told[_node_of[r]] = true;
        }
        {
            std::lock_guard<std::mutex> g(_mutex);
            for (uint32_t node = 0; node < _nodes.size(); ++node)
                if (told[node] && _nodes[node].queued.size() >= kMaxQueued) {
                    answer(fd, PMIX_ERR_OUT_OF_RESOURCE, "step " + _nspace + ": too many cross-step requests waiting");
                    return;
                }
            for (uint32_t node = 0; node < _nodes.size(); ++node)
                if (told[node]) queue(node, f->payload, 0);
        }
        for (uint32_t node = 0; node < _nodes.size(); ++node)
            if (told[node]) flush(node);
        answer(fd, PMIX_SUCCESS, {});
        return;
    }
    if (m.what != op::get) {
        answer(fd, PMIX_ERR_BAD_PARAM, std::string("cross-step: ") + to_string(m.what) + " from another step");
        return;
    }
    // The step's job data (rank WILDCARD, kJobdataKey): node 0's server answers it.
    const bool jobdata = m.rank == PMIX_RANK_WILDCARD && m.key == kJobdataKey && !_nodes.empty();
    if (m.nspace != _nspace || (m.rank >= _node_of.size() && !jobdata)) {
        answer(fd, PMIX_ERR_NOT_FOUND, m.nspace + ":" + std::to_string(m.rank) + " is not a proc of step " + _nspace);
        return;
    }
    uint32_t node = jobdata ? 0 : _node_of[m.rank];
    {
        std::lock_guard<std::mutex> g(_mutex);
        if (_nodes[node].queued.size() >= kMaxQueued) {
            answer(fd, PMIX_ERR_OUT_OF_RESOURCE, "step " + _nspace + ": too many cross-step requests waiting");
            return;
        }
        uint64_t id = _next_id++;
        ++_stats.gets_in;
        _waiting[id] = waiting_get{fd, clock_type::now() + std::chrono::milliseconds(m.timeout_ms) + std::chrono::seconds(5)};
        queue(node, f->payload, id);
    }
    flush(node);
}

Status router::register_in(agent::service_table &table) {
    return table.add(services::id_of(services::service::xstep),
                     [this](agent::responder answer, std::vector<uint8_t> body) { submit(std::move(answer), std::move(body)); });
}

}  // namespace pmixcpp::xstep
