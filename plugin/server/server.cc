// The I/O shell of the server: sockets, frames, the loop thread. The protocol decisions live in
// the engines (kv_store, fence_tracker, get_waits); this file decodes, dispatches and replies.
#include "server.h"

#include <event2/event.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "get_waits.h"
#include "jobdata.h"
#include "kvs.h"
#include "log.h"
#include "wire/frame.h"
#include "wire/messages.h"

namespace pmixcpp::server {

namespace {

struct event_deleter {
    void operator()(event *e) const { event_free(e); }
};
struct base_deleter {
    void operator()(event_base *b) const { event_base_free(b); }
};
using event_ptr = std::unique_ptr<event, event_deleter>;
using base_ptr = std::unique_ptr<event_base, base_deleter>;

class unique_fd {
public:
    unique_fd() = default;
    explicit unique_fd(int fd) : _fd(fd) {}
    ~unique_fd() { reset(); }
    unique_fd(unique_fd &&o) noexcept : _fd(o._fd) { o._fd = -1; }
    unique_fd &operator=(unique_fd &&o) noexcept {
        if (this != &o) {
            reset();
            _fd = o._fd;
            o._fd = -1;
        }
        return *this;
    }
    int get() const { return _fd; }
    void reset() {
        if (_fd >= 0) close(_fd);
        _fd = -1;
    }

private:
    int _fd = -1;
};

Status sys_error(const std::string &what) { return Status(PMIX_ERROR, what + ": " + strerror(errno)); }

std::string key_of(const pmix_info_t &info) { return std::string(info.key, strnlen(info.key, sizeof(info.key))); }

const pmix_info_t *find_info(const InfoArray &infos, const char *key) {
    for (size_t i = 0; i < infos.size(); ++i)
        if (strncmp(infos[i].key, key, sizeof(infos[i].key)) == 0) return &infos[i];
    return nullptr;
}

// A flag directive: absent = false; PMIX_UNDEF (no value) or a true bool = true.
bool info_flag(const InfoArray &infos, const char *key) {
    const pmix_info_t *i = find_info(infos, key);
    if (!i) return false;
    if (i->value.type == PMIX_UNDEF) return true;
    if (i->value.type == PMIX_BOOL) return i->value.data.flag;
    auto n = value_to_number<int64_t>(i->value);
    return n.ok() && n.value() != 0;
}

// pmix.timeout in seconds; absent or <= 0 = no deadline.
std::optional<server_clock::time_point> info_deadline(const InfoArray &infos) {
    const pmix_info_t *i = find_info(infos, PMIX_TIMEOUT);
    if (!i) return std::nullopt;
    auto n = value_to_number<int64_t>(i->value);
    if (!n.ok() || n.value() <= 0) return std::nullopt;
    return server_clock::now() + std::chrono::seconds(std::min<int64_t>(n.value(), 365LL * 86400));
}

std::string value_text(const pmix_value_t &v) {
    switch (v.type) {
    case PMIX_STRING: return v.data.string ? v.data.string : "";
    case PMIX_BYTE_OBJECT:
        if (!v.data.bo.bytes) return {};
        return std::string(v.data.bo.bytes, strnlen(v.data.bo.bytes, v.data.bo.size));
    default: return {};
    }
}

enum class conn_state { awaiting_connect, active, finalized };
const char *to_string(conn_state s) {
    switch (s) {
    case conn_state::awaiting_connect: return "awaiting connect";
    case conn_state::active: return "active";
    case conn_state::finalized: return "finalized";
    }
    return "unknown";
}

struct connection {
    uint64_t id = 0;
    unique_fd fd;
    event_ptr ev_read;
    event_ptr ev_write;
    wire::FrameReader reader;
    std::vector<uint8_t> out;
    size_t out_sent = 0;
    bool close_after_flush = false;
    conn_state state = conn_state::awaiting_connect;
    uint32_t rank = PMIX_RANK_UNDEF;
    pid_t pid = 0;  // from SO_PEERCRED
    uid_t uid = 0;
    server_impl *server = nullptr;  // for the libevent callbacks (arg = this connection)

    explicit connection(uint32_t max_payload) : reader(max_payload) {}
};

enum class rank_state { not_connected, connected, finalized, died };

struct cleanup_entry {
    std::string path;
    bool dir = false;
    bool recursive = false;
};

}  // namespace

class server_impl {
public:
    server_impl(const step_info &step, server_host *host, server_options opts)
        : _step(step), _host(host), _opts(opts), _remote_default(),
          _fences(step.nspace, step.ntasks, step.local_ranks(), opts.remote ? opts.remote : &_remote_default) {
        _local_index.assign(step.ntasks, UINT32_MAX);
        const auto &local = step.local_ranks();
        for (uint32_t i = 0; i < local.size(); ++i)
            if (local[i] < step.ntasks) _local_index[local[i]] = i;
        _node_of.assign(step.ntasks, UINT32_MAX);
        for (uint32_t n = 0; n < step.node_ranks.size(); ++n)
            for (uint32_t r : step.node_ranks[n])
                if (r < step.ntasks) _node_of[r] = n;
        _rank_state.assign(step.ntasks, rank_state::not_connected);
        _rank_conn.assign(step.ntasks, 0);
    }

    Status setup(const node_topology &topo);
    Status launch();
    void stop();
    void post(std::function<void()> fn);
    const std::string &jobdata_path() const { return _jobdata_path; }

private:
    // --- libevent callbacks (C boundary: nothing throws out of them) ---
    static void on_accept(evutil_socket_t, short, void *arg);
    static void on_wake(evutil_socket_t, short, void *arg);
    static void on_timer(evutil_socket_t, short, void *arg);
    static void on_read(evutil_socket_t, short, void *arg);
    static void on_write(evutil_socket_t, short, void *arg);
    template <typename F>
    static void guarded(const char *what, F &&f);
    void loop_main();

    void accept_clients();
    void read_from(uint64_t conn_id);
    void flush(connection &c);
    void close_connection(uint64_t conn_id, const std::string &reason);
    connection *find(uint64_t conn_id);
    void rearm_timer();
    void expire_deadlines();

    // Protocol.
    bool dispatch(connection &c, const wire::Frame &f);  // false: the connection was closed
    void handle_connect(connection &c, const wire::Frame &f);
    void handle_finalize(connection &c, const wire::Frame &f);
    void handle_abort(connection &c, const wire::Frame &f);
    void handle_commit(connection &c, const wire::Frame &f);
    void handle_fence(connection &c, const wire::Frame &f);
    void handle_get(connection &c, const wire::Frame &f);
    void handle_job_control(connection &c, const wire::Frame &f);
    void handle_log(connection &c, const wire::Frame &f);

    void send_reply(uint64_t conn_id, uint32_t request_id, pmix_status_t status, const std::string &message,
                    const std::function<Status(wire::Writer &)> &body = {});
    void send_fence_outcomes(const std::vector<fence_outcome> &outcomes);
    void answer_get(const get_waiter &w);
    void fail_get(const get_waiter &w, pmix_status_t status, const std::string &message);
    void rank_left(uint32_t rank, bool died);
    relation relation_of(uint32_t requester, uint32_t target) const;
    bool is_local(uint32_t rank) const { return rank < _local_index.size() && _local_index[rank] != UINT32_MAX; }
    void remove_cleanup_paths();

    step_info _step;
    server_host *_host;
    server_options _opts;
    no_remote_fences _remote_default;

    // Loop-thread state.
    kv_store _kvs;
    fence_tracker _fences;
    get_waits _gets;
    std::map<uint64_t, std::unique_ptr<connection>> _conns;
    uint64_t _next_conn = 1;
    std::vector<uint32_t> _local_index;  // rank -> local rank, UINT32_MAX if remote
    std::vector<uint32_t> _node_of;
    std::vector<rank_state> _rank_state;
    std::vector<uint64_t> _rank_conn;
    std::vector<cleanup_entry> _cleanups;

    std::string _jobdata_path;
    uint64_t _jobdata_size = 0;
    unique_fd _listen_fd;
    unique_fd _wake_rd, _wake_wr;
    base_ptr _base;
    event_ptr _ev_listen, _ev_wake, _ev_timer;
    std::thread _thread;
    bool _socket_created = false;

    std::mutex _post_mutex;
    std::deque<std::function<void()>> _posted;
    bool _stopping = false;  // under _post_mutex
    bool _stopped = false;
};

// ------------------------------------------------------------------------------------------
// Start and stop (caller's thread)

Status server_impl::setup(const node_topology &topo) {
    const step_info &s = _step;
    if (s.step_dir.empty() || s.server_socket.empty()) return Status(PMIX_ERR_BAD_PARAM, "step has no directory");
    if (s.node_id >= s.node_ranks.size()) return Status(PMIX_ERR_BAD_PARAM, "step map has no entry for this node");

    // Job data: build, write, load into the store.
    auto entries = build_jobdata(s, topo);
    if (!entries.ok()) return entries.status().with_context("job data of " + s.nspace);
    auto bytes = wire::encode_jobdata(entries.value());
    if (!bytes.ok()) return bytes.status().with_context("encode job data of " + s.nspace);
    _jobdata_path = s.step_dir + "/jobdata";
    _jobdata_size = bytes->size();
    PMIXCPP_RETURN_IF_ERROR(write_jobdata_file(_jobdata_path, bytes.value()));
    for (const auto &e : entries.value())
        PMIXCPP_RETURN_IF_ERROR(_kvs.add_job_data(e.rank, e.infos.data(), e.infos.size()));
    for (uint32_t r : s.local_ranks()) {
        std::string d = proc_dir(s, r);
        if (mkdir(d.c_str(), 0700) != 0 || lchown(d.c_str(), s.uid, s.gid) != 0)
            PMIXCPP_LOG_WARNING("%s: process directory %s of rank %u: %s", s.nspace.c_str(), d.c_str(), r,
                                strerror(errno));
    }

    // The socket: only the job's user can reach it (directory 0700 owned by the user).
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (s.server_socket.size() >= sizeof(addr.sun_path))
        return Status(PMIX_ERR_BAD_PARAM, "socket path " + s.server_socket + " is too long");
    memcpy(addr.sun_path, s.server_socket.c_str(), s.server_socket.size() + 1);
    _listen_fd = unique_fd(socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (_listen_fd.get() < 0) return sys_error("socket");
    unlink(s.server_socket.c_str());
    if (bind(_listen_fd.get(), reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) != 0)
        return sys_error("bind " + s.server_socket);
    _socket_created = true;
    struct stat st {};
    if (lstat(s.server_socket.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode))
        return Status(PMIX_ERROR, "socket " + s.server_socket + " vanished or was replaced after bind");
    // lchown never follows a symlink someone might have put in place since.
    if (lchown(s.server_socket.c_str(), s.uid, s.gid) != 0) return sys_error("chown " + s.server_socket);
    if (listen(_listen_fd.get(), SOMAXCONN) != 0) return sys_error("listen " + s.server_socket);

    int p[2];
    if (pipe2(p, O_NONBLOCK | O_CLOEXEC) != 0) return sys_error("pipe");
    _wake_rd = unique_fd(p[0]);
    _wake_wr = unique_fd(p[1]);

    _base.reset(event_base_new());
    if (!_base) return Status(PMIX_ERROR, "event_base_new failed");
    _ev_listen.reset(event_new(_base.get(), _listen_fd.get(), EV_READ | EV_PERSIST, on_accept, this));
    _ev_wake.reset(event_new(_base.get(), _wake_rd.get(), EV_READ | EV_PERSIST, on_wake, this));
    _ev_timer.reset(evtimer_new(_base.get(), on_timer, this));
    if (!_ev_listen || !_ev_wake || !_ev_timer) return Status(PMIX_ERROR, "event_new failed");
    if (event_add(_ev_listen.get(), nullptr) != 0 || event_add(_ev_wake.get(), nullptr) != 0)
        return Status(PMIX_ERROR, "event_add failed");
    return Status::success();
}

Status server_impl::launch() {
    try {
        _thread = std::thread([this] { loop_main(); });
    } catch (const std::exception &e) {
        return Status(PMIX_ERROR, std::string("cannot start the server thread: ") + e.what());
    }
    return Status::success();
}

void server_impl::loop_main() {
    // Signals belong to slurmstepd's own threads.
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, nullptr);
    PMIXCPP_LOG_DEBUG("%s: server loop running on %s", _step.nspace.c_str(), _step.server_socket.c_str());
    event_base_dispatch(_base.get());
    PMIXCPP_LOG_DEBUG("%s: server loop stopped", _step.nspace.c_str());
}

void server_impl::post(std::function<void()> fn) {
    {
        std::lock_guard<std::mutex> lock(_post_mutex);
        if (_stopping) return;
        _posted.push_back(std::move(fn));
    }
    char b = 1;
    ssize_t n = write(_wake_wr.get(), &b, 1);
    (void)n;  // a full pipe already means "wake up"
}

void server_impl::stop() {
    if (_stopped) return;
    _stopped = true;
    {
        std::lock_guard<std::mutex> lock(_post_mutex);
        _stopping = true;
    }
    if (_thread.joinable()) {
        char b = 0;
        ssize_t n = write(_wake_wr.get(), &b, 1);
        (void)n;
        _thread.join();
    }
    // The loop thread is gone: its state is ours now.
    size_t nconn = _conns.size();
    _conns.clear();  // closes the sockets; clients see the server go away
    _ev_listen.reset();
    _ev_wake.reset();
    _ev_timer.reset();
    _base.reset();
    _listen_fd.reset();
    if (_socket_created) unlink(_step.server_socket.c_str());
    remove_cleanup_paths();
    PMIXCPP_LOG_DEBUG("%s: server stopped (%zu connections closed, %zu fences and %zu gets pending)",
                      _step.nspace.c_str(), nconn, _fences.pending(), _gets.size());
}

void server_impl::remove_cleanup_paths() {
    namespace fs = std::filesystem;
    const fs::path top = fs::path(_step.step_dir).lexically_normal();
    for (const auto &c : _cleanups) {
        fs::path p = fs::path(c.path).lexically_normal();
        auto rel = p.lexically_relative(top);
        bool inside = !rel.empty() && rel.native() != "." && *rel.begin() != "..";
        if (!inside) {
            PMIXCPP_LOG_VERBOSE("%s: not removing registered clean-up path %s: outside the step directory %s",
                                _step.nspace.c_str(), c.path.c_str(), _step.step_dir.c_str());
            continue;
        }
        std::error_code ec;
        if (c.dir && c.recursive)
            fs::remove_all(p, ec);  // does not follow symlinks
        else
            fs::remove(p, ec);
        if (ec) PMIXCPP_LOG_DEBUG("%s: clean-up of %s: %s", _step.nspace.c_str(), c.path.c_str(), ec.message().c_str());
    }
}

// ------------------------------------------------------------------------------------------
// Loop thread: events

template <typename F>
void server_impl::guarded(const char *what, F &&f) {
    try {
        f();
    } catch (const std::exception &e) {
        PMIXCPP_LOG_ERROR("server %s: internal error: %s", what, e.what());
    } catch (...) {
        PMIXCPP_LOG_ERROR("server %s: internal error", what);
    }
}

void server_impl::on_accept(evutil_socket_t, short, void *arg) {
    auto *self = static_cast<server_impl *>(arg);
    guarded("accept", [&] {
        self->accept_clients();
        self->rearm_timer();
    });
}

void server_impl::on_wake(evutil_socket_t fd, short, void *arg) {
    auto *self = static_cast<server_impl *>(arg);
    guarded("wake-up", [&] {
        char buf[64];
        while (read(fd, buf, sizeof(buf)) > 0) {
        }
        std::deque<std::function<void()>> work;
        bool stopping;
        {
            std::lock_guard<std::mutex> lock(self->_post_mutex);
            work.swap(self->_posted);
            stopping = self->_stopping;
        }
        if (stopping) {
            event_base_loopbreak(self->_base.get());
            return;
        }
        for (auto &fn : work) fn();
        self->rearm_timer();
    });
}

void server_impl::on_timer(evutil_socket_t, short, void *arg) {
    auto *self = static_cast<server_impl *>(arg);
    guarded("timer", [&] {
        self->expire_deadlines();
        self->rearm_timer();
    });
}

void server_impl::on_read(evutil_socket_t, short, void *arg) {
    auto *c = static_cast<connection *>(arg);
    server_impl *self = c->server;
    uint64_t id = c->id;  // `c` may be freed by what follows; only the id is used from here
    guarded("read", [&] {
        self->read_from(id);
        self->rearm_timer();
    });
}

void server_impl::on_write(evutil_socket_t, short, void *arg) {
    auto *c = static_cast<connection *>(arg);
    server_impl *self = c->server;
    uint64_t id = c->id;
    guarded("write", [&] {
        if (connection *conn = self->find(id)) self->flush(*conn);
    });
}

connection *server_impl::find(uint64_t conn_id) {
    auto it = _conns.find(conn_id);
    return it == _conns.end() ? nullptr : it->second.get();
}

void server_impl::accept_clients() {
    while (true) {
        int fd = accept4(_listen_fd.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR) continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != ECONNABORTED)
                PMIXCPP_LOG_ERROR("%s: accept on %s: %m", _step.nspace.c_str(), _step.server_socket.c_str());
            return;
        }
        unique_fd guard(fd);
        ucred cred{};
        socklen_t len = sizeof(cred);
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
            PMIXCPP_LOG_ERROR("%s: refusing a client: SO_PEERCRED: %m", _step.nspace.c_str());
            continue;
        }
        if (cred.uid != _step.uid) {
            PMIXCPP_LOG_ERROR("%s: refusing a client (pid %d, uid %u): not the job's user (uid %u)",
                              _step.nspace.c_str(), static_cast<int>(cred.pid), static_cast<unsigned>(cred.uid),
                              static_cast<unsigned>(_step.uid));
            continue;
        }
        auto c = std::make_unique<connection>(_opts.max_payload);
        c->id = _next_conn++;
        c->pid = cred.pid;
        c->uid = cred.uid;
        c->server = this;
        c->fd = std::move(guard);
        c->ev_read.reset(event_new(_base.get(), c->fd.get(), EV_READ | EV_PERSIST, on_read, c.get()));
        c->ev_write.reset(event_new(_base.get(), c->fd.get(), EV_WRITE | EV_PERSIST, on_write, c.get()));
        if (!c->ev_read || !c->ev_write || event_add(c->ev_read.get(), nullptr) != 0) {
            PMIXCPP_LOG_ERROR("%s: cannot watch client pid %d: event setup failed", _step.nspace.c_str(),
                              static_cast<int>(cred.pid));
            continue;
        }
        PMIXCPP_LOG_TRACE("%s: client pid %d connected (connection %llu)", _step.nspace.c_str(),
                          static_cast<int>(cred.pid), static_cast<unsigned long long>(c->id));
        uint64_t id = c->id;
        _conns.emplace(id, std::move(c));
    }
}

void server_impl::read_from(uint64_t conn_id) {
    uint8_t buf[65536];
    for (int rounds = 0; rounds < 16; ++rounds) {  // bounded: let other clients run too
        connection *c = find(conn_id);
        if (!c) return;
        ssize_t n = recv(c->fd.get(), buf, sizeof(buf), 0);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) return;
            close_connection(conn_id, std::string("read error: ") + strerror(errno));
            return;
        }
        if (n == 0) {
            close_connection(conn_id, c->reader.buffered() ? "closed in the middle of a frame" : "closed by the client");
            return;
        }
        Status st = c->reader.feed(buf, static_cast<size_t>(n));
        if (!st.ok()) {
            close_connection(conn_id, "malformed frame: " + st.message());
            return;
        }
        while (true) {
            c = find(conn_id);
            if (!c) return;
            auto f = c->reader.next();
            if (!f.ok()) {
                close_connection(conn_id, "malformed frame: " + f.status().message());
                return;
            }
            if (!f->has_value()) break;
            if (!dispatch(*c, **f)) return;
        }
        if (static_cast<size_t>(n) < sizeof(buf)) return;
    }
}

void server_impl::flush(connection &c) {
    while (c.out_sent < c.out.size()) {
        ssize_t n = send(c.fd.get(), c.out.data() + c.out_sent, c.out.size() - c.out_sent, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                event_add(c.ev_write.get(), nullptr);
                return;
            }
            close_connection(c.id, std::string("write error: ") + strerror(errno));
            return;
        }
        c.out_sent += static_cast<size_t>(n);
    }
    c.out.clear();
    c.out_sent = 0;
    event_del(c.ev_write.get());
    if (c.close_after_flush) close_connection(c.id, "refused");
}

void server_impl::close_connection(uint64_t conn_id, const std::string &reason) {
    auto it = _conns.find(conn_id);
    if (it == _conns.end()) return;
    std::unique_ptr<connection> c = std::move(it->second);
    _conns.erase(it);
    const char *ns = _step.nspace.c_str();
    if (c->state == conn_state::active) {
        PMIXCPP_LOG_ERROR("%s: rank %u (pid %d) lost its connection without finalizing: %s", ns, c->rank,
                          static_cast<int>(c->pid), reason.c_str());
    } else if (c->state == conn_state::finalized) {
        PMIXCPP_LOG_DEBUG("%s: rank %u (pid %d) disconnected after finalize", ns, c->rank, static_cast<int>(c->pid));
    } else if (reason != "refused" && reason != "closed by the client") {
        PMIXCPP_LOG_ERROR("%s: closing the connection of pid %d before connect: %s", ns, static_cast<int>(c->pid),
                          reason.c_str());
    }
    _gets.drop_connection(conn_id);
    if (c->rank < _rank_conn.size() && _rank_conn[c->rank] == conn_id) {
        _rank_conn[c->rank] = 0;
        if (c->state == conn_state::active) rank_left(c->rank, true);
    }
    // `c` (events, socket) is released here.
}

void server_impl::rank_left(uint32_t rank, bool died) {
    _rank_state[rank] = died ? rank_state::died : rank_state::finalized;
    send_fence_outcomes(_fences.rank_gone(rank, died ? PMIX_ERR_PROC_ABORTED : PMIX_ERR_LOST_CONNECTION));
    for (const auto &w : _gets.take_target(rank))
        fail_get(w, PMIX_ERR_NOT_FOUND,
                 "rank " + std::to_string(rank) + (died ? " died" : " finalized") + " without committing " + w.key);
}

void server_impl::rearm_timer() {
    std::optional<server_clock::time_point> next = _fences.next_deadline();
    auto g = _gets.next_deadline();
    if (g && (!next || *g < *next)) next = g;
    if (!next) {
        event_del(_ev_timer.get());
        return;
    }
    auto delta = std::chrono::duration_cast<std::chrono::microseconds>(*next - server_clock::now());
    if (delta.count() < 1000) delta = std::chrono::microseconds(1000);
    timeval tv{};
    tv.tv_sec = static_cast<time_t>(delta.count() / 1000000);
    tv.tv_usec = static_cast<suseconds_t>(delta.count() % 1000000);
    evtimer_add(_ev_timer.get(), &tv);
}

void server_impl::expire_deadlines() {
    auto now = server_clock::now();
    send_fence_outcomes(_fences.expire(now));
    for (const auto &w : _gets.take_expired(now)) {
        PMIXCPP_LOG_ERROR("%s: get of %s of rank %u by rank %u timed out", _step.nspace.c_str(),
                          w.key.empty() ? "(all data)" : w.key.c_str(), w.target, w.requester);
        fail_get(w, PMIX_ERR_TIMEOUT, "timed out waiting for rank " + std::to_string(w.target) + " to commit " + w.key);
    }
}

// ------------------------------------------------------------------------------------------
// Replies

void server_impl::send_reply(uint64_t conn_id, uint32_t request_id, pmix_status_t status, const std::string &message,
                             const std::function<Status(wire::Writer &)> &body) {
    connection *c = find(conn_id);
    if (!c) return;  // the requester is gone; nobody to tell
    wire::Writer w;
    wire::reply_header h;
    h.status = status;
    h.message = message;
    Status st = wire::encode(w, h);
    if (st.ok() && status == PMIX_SUCCESS && body) {
        st = body(w);
        if (!st.ok()) {
            PMIXCPP_LOG_ERROR("%s: cannot encode the reply to rank %u: %s", _step.nspace.c_str(), c->rank,
                              st.message().c_str());
            w.clear();
            h.status = st.code() == PMIX_SUCCESS ? PMIX_ERROR : st.code();
            h.message = "server could not encode the reply: " + st.message();
            st = wire::encode(w, h);
        }
    }
    if (!st.ok()) return;
    auto frame = wire::encode_frame(static_cast<uint16_t>(wire::msg_type::reply), 0, request_id, w.data());
    if (!frame.ok()) {
        PMIXCPP_LOG_ERROR("%s: reply to rank %u too large: %s", _step.nspace.c_str(), c->rank,
                          frame.status().message().c_str());
        // Tell the client in a reply that fits.
        wire::Writer small;
        wire::reply_header err;
        err.status = PMIX_ERR_NOMEM;
        err.message = "reply too large";
        if (!wire::encode(small, err).ok()) return;
        frame = wire::encode_frame(static_cast<uint16_t>(wire::msg_type::reply), 0, request_id, small.data());
        if (!frame.ok()) return;
    }
    c->out.insert(c->out.end(), frame->begin(), frame->end());
    flush(*c);
}

void server_impl::send_fence_outcomes(const std::vector<fence_outcome> &outcomes) {
    for (const auto &o : outcomes)
        for (const auto &w : o.waiters) send_reply(w.conn, w.request_id, o.status, o.message);
}

void server_impl::answer_get(const get_waiter &w) {
    relation rel = relation_of(w.requester, w.target);
    uint32_t data_rank = w.target;
    auto data = _kvs.visible_data(data_rank, rel);
    if (!data.ok()) {
        fail_get(w, data.status().code(), data.status().message());
        return;
    }
    send_reply(w.conn, w.request_id, PMIX_SUCCESS, {}, [&](wire::Writer &wr) {
        return wire::encode_info_array(wr, data->data(), data->size());
    });
}

void server_impl::fail_get(const get_waiter &w, pmix_status_t status, const std::string &message) {
    send_reply(w.conn, w.request_id, status, message);
}

relation server_impl::relation_of(uint32_t requester, uint32_t target) const {
    if (requester == target) return relation::self;
    if (target == PMIX_RANK_WILDCARD) return relation::same_node;
    if (target < _node_of.size() && requester < _node_of.size() && _node_of[target] == _node_of[requester])
        return relation::same_node;
    return relation::other_node;
}

// ------------------------------------------------------------------------------------------
// Dispatch

bool server_impl::dispatch(connection &c, const wire::Frame &f) {
    const uint64_t id = c.id;
    if (!wire::is_request_type(f.type)) {
        close_connection(id, "unexpected message type " + std::to_string(f.type));
        return false;
    }
    auto type = static_cast<wire::msg_type>(f.type);
    if (f.id == 0) {
        close_connection(id, std::string(wire::to_string(type)) + " with request id 0");
        return false;
    }
    if (c.state == conn_state::awaiting_connect && type != wire::msg_type::connect) {
        close_connection(id, std::string("first message is ") + wire::to_string(type) + ", not connect");
        return false;
    }
    if (c.state != conn_state::awaiting_connect && type == wire::msg_type::connect) {
        close_connection(id, "second connect on one connection");
        return false;
    }
    PMIXCPP_LOG_TRACE("%s: rank %u (%s): %s request %u (%zu bytes)", _step.nspace.c_str(), c.rank,
                      to_string(c.state), wire::to_string(type), f.id, f.payload.size());
    switch (type) {
    case wire::msg_type::connect: handle_connect(c, f); break;
    case wire::msg_type::finalize: handle_finalize(c, f); break;
    case wire::msg_type::abort: handle_abort(c, f); break;
    case wire::msg_type::commit: handle_commit(c, f); break;
    case wire::msg_type::fence: handle_fence(c, f); break;
    case wire::msg_type::get: handle_get(c, f); break;
    case wire::msg_type::job_control: handle_job_control(c, f); break;
    case wire::msg_type::log: handle_log(c, f); break;
    default: close_connection(id, "unexpected message type " + std::to_string(f.type)); break;
    }
    connection *still = find(id);
    return still && !still->close_after_flush;
}

// Decode a payload or close the connection with the reason.
#define DECODE_OR_CLOSE(msg_struct, what)                                                            \
    msg_struct m;                                                                                    \
    if (Status _st = wire::decode_payload(f.payload, &m); !_st.ok()) {                              \
        close_connection(c.id, std::string("malformed ") + (what) + " payload: " + _st.message()); \
        return;                                                                                      \
    }

void server_impl::handle_connect(connection &c, const wire::Frame &f) {
    DECODE_OR_CLOSE(wire::connect_request, "connect");
    const char *ns = _step.nspace.c_str();
    std::string why;
    if (m.protocol != wire::kClientProtocol)
        why = "client speaks protocol " + std::to_string(m.protocol) + ", server " +
              std::to_string(wire::kClientProtocol);
    else if (m.nspace != _step.nspace)
        why = "unknown namespace '" + m.nspace + "'";
    else if (m.token.size() != _step.client_token.size() ||
             !std::equal(m.token.begin(), m.token.end(), _step.client_token.begin()))
        why = "wrong step token";
    else if (!is_local(m.rank))
        why = "rank " + std::to_string(m.rank) + " is not a rank of this node";
    else if (_rank_conn[m.rank] != 0)
        why = "rank " + std::to_string(m.rank) + " is already connected";
    if (!why.empty()) {
        PMIXCPP_LOG_ERROR("%s: refusing client pid %d (uid %u) claiming rank %u: %s", ns, static_cast<int>(c.pid),
                          static_cast<unsigned>(c.uid), m.rank, why.c_str());
        c.close_after_flush = true;
        send_reply(c.id, f.id, PMIX_ERR_NO_PERMISSIONS, why);
        return;
    }
    c.rank = m.rank;
    c.state = conn_state::active;
    _rank_conn[m.rank] = c.id;
    if (_rank_state[m.rank] != rank_state::not_connected)
        PMIXCPP_LOG_VERBOSE("%s: rank %u connects again (pid %d)", ns, m.rank, static_cast<int>(c.pid));
    _rank_state[m.rank] = rank_state::connected;
    _fences.rank_back(m.rank);
    PMIXCPP_LOG_DEBUG("%s: rank %u connected (pid %d)", ns, m.rank, static_cast<int>(c.pid));
    wire::connect_reply r;
    r.jobdata_path = _jobdata_path;
    r.jobdata_size = _jobdata_size;
    r.local_rank = _local_index[m.rank];
    send_reply(c.id, f.id, PMIX_SUCCESS, {}, [&](wire::Writer &w) { return wire::encode(w, r); });
}

void server_impl::handle_finalize(connection &c, const wire::Frame &f) {
    DECODE_OR_CLOSE(wire::finalize_request, "finalize");
    PMIXCPP_LOG_DEBUG("%s: rank %u finalized", _step.nspace.c_str(), c.rank);
    c.state = conn_state::finalized;
    uint64_t id = c.id;
    uint32_t req = f.id;
    rank_left(c.rank, false);
    send_reply(id, req, PMIX_SUCCESS, {});
}

void server_impl::handle_abort(connection &c, const wire::Frame &f) {
    DECODE_OR_CLOSE(wire::abort_request, "abort");
    PMIXCPP_LOG_ERROR("%s: rank %u (pid %d) called PMIx_Abort(status %d, %zu procs): %s", _step.nspace.c_str(),
                      c.rank, static_cast<int>(c.pid), m.status, m.procs.size(), m.message.c_str());
    Status st = _host ? _host->abort(_step.nspace, c.rank, m.status, m.message, m.procs)
                      : Status(PMIX_ERR_NOT_SUPPORTED, "no host to abort the job");
    if (!st.ok())
        PMIXCPP_LOG_ERROR("%s: abort requested by rank %u failed: %s", _step.nspace.c_str(), c.rank,
                          st.message().c_str());
    send_reply(c.id, f.id, st.ok() ? PMIX_SUCCESS : st.code(), st.message());
}

void server_impl::handle_commit(connection &c, const wire::Frame &f) {
    DECODE_OR_CLOSE(wire::commit_request, "commit");
    if (m.scopes.size() != m.infos.size()) {
        close_connection(c.id, "malformed commit payload: scope count differs from value count");
        return;
    }
    const uint32_t rank = c.rank;
    Status st = _kvs.commit(rank, m.scopes.data(), m.infos.data(), m.infos.size());
    if (!st.ok()) {
        PMIXCPP_LOG_ERROR("%s: commit of rank %u refused: %s", _step.nspace.c_str(), rank, st.message().c_str());
        send_reply(c.id, f.id, st.code(), st.message());
        return;
    }
    PMIXCPP_LOG_TRACE("%s: rank %u committed %zu keys", _step.nspace.c_str(), rank, m.infos.size());
    send_reply(c.id, f.id, PMIX_SUCCESS, {});
    auto ready = _gets.take_ready(rank, [&](const get_waiter &w) {
        return w.key.empty() || _kvs.has(rank, w.key, relation_of(w.requester, rank));
    });
    for (const auto &w : ready) answer_get(w);
}

void server_impl::handle_fence(connection &c, const wire::Frame &f) {
    DECODE_OR_CLOSE(wire::fence_request, "fence");
    std::vector<uint32_t> ranks;
    for (const auto &p : m.procs) {
        if (strncmp(p.nspace, _step.nspace.c_str(), sizeof(p.nspace)) != 0) {
            std::string ns(p.nspace, strnlen(p.nspace, sizeof(p.nspace)));
            PMIXCPP_LOG_ERROR("%s: rank %u: fence including namespace %s is not supported", _step.nspace.c_str(),
                              c.rank, ns.c_str());
            send_reply(c.id, f.id, PMIX_ERR_NOT_SUPPORTED, "fence across namespaces (" + ns + ") is not supported");
            return;
        }
        ranks.push_back(p.rank);
    }
    auto participants = _fences.normalise(ranks);
    if (!participants.ok()) {
        send_reply(c.id, f.id, participants.status().code(), participants.status().message());
        return;
    }
    fence_waiter w{c.id, f.id, c.rank};
    send_fence_outcomes(_fences.enter(participants.value(), w, info_flag(m.infos, PMIX_COLLECT_DATA),
                                      info_deadline(m.infos)));
}

void server_impl::handle_get(connection &c, const wire::Frame &f) {
    DECODE_OR_CLOSE(wire::get_request, "get");
    const char *ns = _step.nspace.c_str();
    get_waiter w;
    w.conn = c.id;
    w.request_id = f.id;
    w.requester = c.rank;
    w.target = m.proc.rank;
    w.key = m.key;
    w.deadline = info_deadline(m.infos);
    const bool immediate = info_flag(m.infos, PMIX_OPTIONAL) || info_flag(m.infos, PMIX_IMMEDIATE);
    const std::string what = m.key.empty() ? std::string("(all data)") : m.key;

    if (strncmp(m.proc.nspace, _step.nspace.c_str(), sizeof(m.proc.nspace)) != 0) {
        std::string other(m.proc.nspace, strnlen(m.proc.nspace, sizeof(m.proc.nspace)));
        fail_get(w, PMIX_ERR_NOT_FOUND, "unknown namespace '" + other + "'");
        return;
    }
    if (w.target == PMIX_RANK_WILDCARD) {  // job-level data: present or not, never waits
        if (m.key.empty() || _kvs.has(PMIX_RANK_WILDCARD, m.key, relation::same_node))
            answer_get(w);
        else
            fail_get(w, PMIX_ERR_NOT_FOUND, "no job-level key " + m.key + " in " + _step.nspace);
        return;
    }
    if (w.target >= _step.ntasks) {
        fail_get(w, PMIX_ERR_NOT_FOUND,
                 "rank " + std::to_string(w.target) + " is not in " + _step.nspace + " (" +
                     std::to_string(_step.ntasks) + " ranks)");
        return;
    }
    relation rel = relation_of(w.requester, w.target);
    if (m.key.empty() || _kvs.has(w.target, m.key, rel)) {
        answer_get(w);
        return;
    }
    if (immediate) {
        fail_get(w, PMIX_ERR_NOT_FOUND, "rank " + std::to_string(w.target) + " has no " + what);
        return;
    }
    if (is_local(w.target)) {
        rank_state rs = _rank_state[w.target];
        if (rs == rank_state::finalized || rs == rank_state::died) {
            fail_get(w, PMIX_ERR_NOT_FOUND,
                     "rank " + std::to_string(w.target) + (rs == rank_state::died ? " died" : " finalized") +
                         " without committing " + what);
            return;
        }
        PMIXCPP_LOG_TRACE("%s: rank %u waits for %s of rank %u", ns, w.requester, what.c_str(), w.target);
        _gets.add(std::move(w));
        return;
    }
    // The data lives on another node: direct modex (the node transport's job).
    PMIXCPP_LOG_ERROR("%s: rank %u asked for %s of rank %u on node %s: direct modex across nodes is not supported yet",
                      ns, w.requester, what.c_str(), w.target, _step.node_names.at(_node_of[w.target]).c_str());
    fail_get(w, PMIX_ERR_NOT_SUPPORTED,
             "rank " + std::to_string(w.target) + " is on another node and direct modex is not implemented yet");
}

void server_impl::handle_job_control(connection &c, const wire::Frame &f) {
    DECODE_OR_CLOSE(wire::job_control_request, "job_control");
    bool recursive = info_flag(m.infos, PMIX_CLEANUP_RECURSIVE);
    size_t registered = 0;
    std::string unsupported;
    for (size_t i = 0; i < m.infos.size(); ++i) {
        std::string key = key_of(m.infos[i]);
        if (key == PMIX_REGISTER_CLEANUP || key == PMIX_REGISTER_CLEANUP_DIR) {
            std::string path = value_text(m.infos[i].value);
            if (path.empty() || path[0] != '/') {
                send_reply(c.id, f.id, PMIX_ERR_BAD_PARAM, key + " needs an absolute path");
                return;
            }
            _cleanups.push_back({path, key == PMIX_REGISTER_CLEANUP_DIR, recursive});
            ++registered;
            PMIXCPP_LOG_DEBUG("%s: rank %u registered %s for clean-up", _step.nspace.c_str(), c.rank, path.c_str());
        } else if (key.rfind("pmix.clnup.", 0) == 0 || key == PMIX_TIMEOUT) {
            // directives of a clean-up registration
        } else if (unsupported.empty()) {
            unsupported = key;
        }
    }
    if (registered == 0) {
        std::string why = "job control " + (unsupported.empty() ? std::string("without an action") : unsupported) +
                          " is not supported";
        PMIXCPP_LOG_VERBOSE("%s: rank %u: %s", _step.nspace.c_str(), c.rank, why.c_str());
        send_reply(c.id, f.id, PMIX_ERR_NOT_SUPPORTED, why);
        return;
    }
    send_reply(c.id, f.id, PMIX_SUCCESS, {}, [](wire::Writer &w) {
        wire::job_control_reply r;
        return wire::encode(w, r);
    });
}

void server_impl::handle_log(connection &c, const wire::Frame &f) {
    DECODE_OR_CLOSE(wire::log_request, "log");
    size_t forwarded = 0;
    for (size_t i = 0; i < m.data.size(); ++i) {
        std::string key = key_of(m.data[i]);
        std::string text = value_text(m.data[i].value);
        if (text.empty()) continue;
        if (key == PMIX_LOG_MSG || key == PMIX_LOG_STDERR || key == PMIX_LOG_STDOUT || key == PMIX_LOG_SYSLOG ||
            key == PMIX_LOG_LOCAL_SYSLOG || key == PMIX_LOG_GLOBAL_SYSLOG) {
            if (_host) _host->log(_step.nspace, c.rank, key, text);
            ++forwarded;
        }
    }
    if (forwarded == 0) {
        send_reply(c.id, f.id, PMIX_ERR_NOT_SUPPORTED, "no log data the server can forward");
        return;
    }
    send_reply(c.id, f.id, PMIX_SUCCESS, {});
}

#undef DECODE_OR_CLOSE

// ------------------------------------------------------------------------------------------
// pmix_server

pmix_server::pmix_server(std::unique_ptr<server_impl> impl) : _impl(std::move(impl)) {}

pmix_server::~pmix_server() { stop(); }

Result<std::unique_ptr<pmix_server>> pmix_server::start(const step_info &step, const node_topology &topo,
                                                         server_host *host, server_options options) {
    if (step.ntasks == 0 || step.node_id >= step.node_ranks.size())
        return Status(PMIX_ERR_BAD_PARAM, "step " + step.nspace + " has no task map for this node");
    std::unique_ptr<server_impl> impl;
    try {
        impl = std::make_unique<server_impl>(step, host, options);
        Status st = impl->setup(topo);
        if (st.ok()) st = impl->launch();
        if (!st.ok()) {
            impl->stop();
            return st.with_context(step.nspace + " server");
        }
    } catch (const std::exception &e) {
        if (impl) impl->stop();
        return Status(PMIX_ERROR, step.nspace + " server: " + e.what());
    }
    PMIXCPP_LOG_VERBOSE("%s: server listening on %s, job data %s", step.nspace.c_str(), step.server_socket.c_str(),
                        impl->jobdata_path().c_str());
    return std::unique_ptr<pmix_server>(new pmix_server(std::move(impl)));
}

void pmix_server::stop() {
    if (_impl) _impl->stop();
}

void pmix_server::post(std::function<void()> fn) {
    if (_impl) _impl->post(std::move(fn));
}

const std::string &pmix_server::jobdata_path() const { return _impl->jobdata_path(); }

}  // namespace pmixcpp::server
