// The I/O shell of the server: sockets, frames, the loop thread. The protocol decisions live in
// the engines (kv_store, fence_tracker, get_waits, dmodex_engine, node_liveness, ...); this file
// decodes, dispatches and replies. The class is in server_impl.h; the native listener (OpenPMIx's
// own clients) is in server_native.cc.
#include "server_impl.h"

namespace pmixcpp::server {

// ------------------------------------------------------------------------------------------
// Start and stop (caller's thread)

Status server_impl::setup(const node_topology &topo) {
    const step_info &s = _step;
    if (!s.dirs || s.server_socket.empty()) return Status(PMIX_ERR_BAD_PARAM, "step has no directory");
    const safe_fs::dir &root = s.dirs->root;
    if (s.node_id >= s.node_ranks.size()) return Status(PMIX_ERR_BAD_PARAM, "step map has no entry for this node");

    // Job data: build, write, load into the store.
    // The compact form: this node's ranks in full, the others from the step's layout.
    auto entries = build_jobdata(s, topo, jobdata_form::compact);
    PMIXCPP_RETURN_IF_ERROR(entries, "job data of " + s.nspace);
    auto layout = jobdata_layout(entries.value());
    PMIXCPP_RETURN_IF_ERROR(layout, "job layout of " + s.nspace);
    auto bytes = wire::encode_jobdata(entries.value());
    PMIXCPP_RETURN_IF_ERROR(bytes, "encode job data of " + s.nspace);
    _jobdata_path = root.path() + "/jobdata";
    _jobdata_size = bytes->size();
    PMIXCPP_RETURN_IF_ERROR(root.write_new_file("jobdata", bytes.value(), 0400, s.uid, s.gid));
    for (const auto &e : entries.value())
        PMIXCPP_RETURN_IF_ERROR(_kvs.add_job_data(e.rank, e.infos.data(), e.infos.size()));
    if (layout.value()) {
        _job_layout = std::make_shared<const wire::job_layout>(std::move(*layout.value()));
        _kvs.set_job_layout(_job_layout);
    }
    _jobdata_entries = std::move(entries.value());

    // The socket, in the root-owned step root (nobody else can put or replace an entry there):
    // owned by the job's user, mode 0600, so only that user can reach it.
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (s.server_socket.size() >= sizeof(addr.sun_path))
        return Status(PMIX_ERR_BAD_PARAM, "socket path " + s.server_socket + " is too long");
    memcpy(addr.sun_path, s.server_socket.c_str(), s.server_socket.size() + 1);
    _listen_fd = unique_fd(socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (_listen_fd.get() < 0) return sys_error("socket");
    if (bind(_listen_fd.get(), reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) != 0)
        return sys_error("bind " + s.server_socket);
    _socket_created = true;
    PMIXCPP_RETURN_IF_ERROR(root.chown_entry("server.sock", s.uid, s.gid));
    if (fchmodat(root.fd(), "server.sock", 0600, 0) != 0) return sys_error("chmod " + s.server_socket);
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
    if (_multinode) PMIXCPP_RETURN_IF_ERROR(setup_multinode());
    if (_opts.native_listener) PMIXCPP_RETURN_IF_ERROR(setup_native(), "native listener");
    return Status::success();
}

Status server_impl::launch() {
    try {
        _thread = std::thread([this] { loop_main(); });
        if (_multinode) post([this] { start_bootstrap(); });
        // A spawned step's two sets exist from its start; its processes are told too
        // (PMIX_PROCESS_SET_DEFINE, range local): kept in the event cache, so a process gets it
        // when it connects and its handlers when they are registered.
        post([this] {
            const std::vector<uint32_t> &local = _step.local_ranks();
            if (local.empty()) return;
            for (const std::string &name : {spawned_pset_name(_step.nspace), union_pset_name(_step.nspace)}) {
                auto it = _groups->job_psets().find(name);
                if (it != _groups->job_psets().end()) raise_pset_event(name, it->second, true, local.front());
            }
        });
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
    if (_topology_thread.joinable()) _topology_thread.join();  // its post() finds the loop stopping
    // The loop thread is gone: its state is ours now.
    size_t nconn = _conns.size();
    _conns.clear();  // closes the sockets; clients see the server go away
    _coll.reset();
    // This node's last rows (exit codes, states) for the other nodes' process tables: they go
    // out with the goodbye below.
    if (_net && _proc_table) guarded("final process table", [this] { _proc_table->send_final(); });
    if (_net) _net->leave(500);  // our closing connections are a normal end, not a lost node
    _net.reset();  // before the event base its events live in
    _finalized.clear();  // their events live in the base
    _ev_native.reset();
    _native_fd.reset();
    _ev_listen.reset();
    _ev_wake.reset();
    _ev_timer.reset();
    _base.reset();
    _listen_fd.reset();
    if (_socket_created) {
        if (Status st = _step.dirs->root.remove("server.sock"); !st.ok())
            PMIXCPP_LOG_WARNING("%s: server socket not removed: %s", _step.nspace.c_str(), st.message().c_str());
    }
    remove_cleanup_paths();
    PMIXCPP_LOG_DEBUG("%s: server stopped (%zu connections closed, %zu fences and %zu gets pending)",
                      _step.nspace.c_str(), nconn, _fences.pending(), _gets.size() + _dmodex->size() + _xstep->size());
}

void server_impl::remove_cleanup_paths() {
    // Registered paths were checked to lie in the user's step directory; they are resolved again
    // beneath its descriptor, never through a link or "..", whatever the job did since.
    for (const auto &c : _cleanups) {
        Status st = _step.dirs->user.remove_beneath(c.relpath, _step.uid);  // only the user's entries
        if (!st.ok())
            PMIXCPP_LOG_VERBOSE("%s: clean-up of %s/%s: %s", _step.nspace.c_str(), _step.step_dir.c_str(),
                                c.relpath.c_str(), st.message().c_str());
    }
}

// ------------------------------------------------------------------------------------------
// Loop thread: events


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

void server_impl::on_accept_resume(evutil_socket_t, short, void *arg) {
    auto *self = static_cast<server_impl *>(arg);
    guarded("accept resume", [&] {
        if (!self->_accept_paused || !self->_ev_listen) return;
        self->_accept_paused = false;
        event_add(self->_ev_listen.get(), nullptr);
        self->accept_clients();
        self->rearm_timer();
    });
}

// Out of descriptors: the listening socket stays readable, so a persistent read event would
// spin. Stop watching it for kAcceptBackoff (one log line until an accept succeeds again).
void server_impl::pause_accepts(int err) {
    if (_accept_paused) return;
    if (_accept_pauses++ == 0)
        PMIXCPP_LOG_ERROR("%s: accept on %s: %s; pausing new connections for %lld ms at a time until descriptors "
                          "are free",
                          _step.nspace.c_str(), _step.server_socket.c_str(), strerror(err),
                          static_cast<long long>(kAcceptBackoff.count()));
    timeval tv{};
    tv.tv_usec = static_cast<suseconds_t>(std::chrono::microseconds(kAcceptBackoff).count());
    // A one-shot event that the base owns (freed with it if it never fires).
    if (event_base_once(_base.get(), -1, EV_TIMEOUT, on_accept_resume, this, &tv) != 0) return;
    event_del(_ev_listen.get());
    _accept_paused = true;
}

size_t server_impl::pending_connects() const {
    size_t n = 0;
    for (const auto &[id, c] : _conns)
        if (c->state == conn_state::awaiting_connect && !c->native) ++n;
    return n;
}

void server_impl::accept_clients() {
    size_t pending = pending_connects();
    while (!_accept_paused) {
        int fd = accept4(_listen_fd.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR) continue;
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                pause_accepts(errno);
                return;
            }
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != ECONNABORTED)
                PMIXCPP_LOG_ERROR("%s: accept on %s: %m", _step.nspace.c_str(), _step.server_socket.c_str());
            return;
        }
        unique_fd guard(fd);
        if (pending >= kMaxPendingConnects) {
            if (!_pending_refused++)
                PMIXCPP_LOG_ERROR("%s: refusing clients: %zu connections have not completed their connect",
                                  _step.nspace.c_str(), pending);
            continue;
        }
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
        auto c = std::make_unique<connection>(std::min(_opts.max_payload, kConnectMaxPayload));
        c->id = _next_conn++;
        c->pid = cred.pid;
        // Only processes of this step: descendants of this slurmstepd. Another process of the
        // same user that learned a task's token is refused.
        auto proc = process_ref::of_socket_peer(fd);
        // A task that connects, finalizes and exits before its connection is accepted (Init and
        // Finalize need no round trip) cannot be checked any more, nor served: refused all the
        // same, but it is no attack.
        const bool ours = proc.ok() && proc.value()->descends_from(getpid());
        if (!ours && (proc.ok() ? proc.value()->gone() : proc.status().code() == PMIX_ERR_NOT_FOUND)) {
            PMIXCPP_LOG_VERBOSE("%s: pid %d exited before its connection was accepted", _step.nspace.c_str(),
                                static_cast<int>(cred.pid));
            continue;
        }
        if (!proc.ok()) {
            PMIXCPP_LOG_ERROR("%s: refusing a client (pid %d): %s", _step.nspace.c_str(), static_cast<int>(cred.pid),
                              proc.status().message().c_str());
            continue;
        }
        if (!ours) {
            PMIXCPP_LOG_ERROR("%s: refusing a client (pid %d, uid %u): not a process of this step", _step.nspace.c_str(),
                              static_cast<int>(cred.pid), static_cast<unsigned>(cred.uid));
            continue;
        }
        c->proc = std::move(proc.value());
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
        ++pending;
        _pending_refused = 0;
        if (_accept_pauses) {
            PMIXCPP_LOG_VERBOSE("%s: accepting connections again (after %zu pauses)", _step.nspace.c_str(),
                                _accept_pauses);
            _accept_pauses = 0;
        }
    }
}

void server_impl::read_from(uint64_t conn_id) {
    if (connection *c = find(conn_id); c && c->native) {
        read_native(conn_id);
        return;
    }
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
            if (c->overflowed) return;
        }
        if (static_cast<size_t>(n) < sizeof(buf)) return;
    }
}

// Free what is queued for `c` and stop waiting to write it: nobody will read it.
void server_impl::drop_output(connection &c) {
    event_del(c.ev_write.get());
    std::vector<uint8_t>().swap(c.out);
    c.out_sent = 0;
    c.reply_ends.clear();
    c.out_descriptors.clear();
}

void server_impl::flush(connection &c) {
    while (c.out_sent < c.out.size()) {
        // A descriptor goes with the first byte of its reply, and no send crosses the start of the
        // next reply that has one: each arrives with its own frame (the client pairs them in order).
        const uint64_t at = c.out_base + c.out_sent;
        size_t len = c.out.size() - c.out_sent;
        const unique_fd *descriptor = nullptr;
        size_t next = 0;
        if (!c.out_descriptors.empty() && c.out_descriptors.front().first == at) {
            descriptor = c.out_descriptors.front().second.get();
            next = 1;
        }
        if (next < c.out_descriptors.size()) len = std::min<size_t>(len, c.out_descriptors[next].first - at);
        ssize_t n = descriptor ? wire::send_with_descriptor(c.fd.get(), c.out.data() + c.out_sent, len, descriptor->get())
                               : send(c.fd.get(), c.out.data() + c.out_sent, len, MSG_NOSIGNAL);
        if (n > 0 && descriptor) c.out_descriptors.pop_front();
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                event_add(c.ev_write.get(), nullptr);
                return;
            }
            std::string why = std::string("write error: ") + strerror(errno);
            if (errno != EPIPE && errno != ECONNRESET) {
                close_connection(c.id, why);
                return;
            }
            // The client closed its end. It may have done so right after a request that needs no
            // answer (finalize is one): what it sent is still to be read, so read it before the
            // connection is judged, and drop the replies nobody will read.
            c.peer_gone = true;
            drop_output(c);
            post([this, id = c.id, why] {
                read_from(id);
                close_connection(id, why);  // nothing if the read found the end and closed it
            });
            return;
        }
        c.out_sent += static_cast<size_t>(n);
        while (!c.reply_ends.empty() && c.reply_ends.front() <= c.out_base + c.out_sent) c.reply_ends.pop_front();
        // A client that reads while more is queued never drains `out`: drop what was sent.
        if (c.out_sent >= (1u << 20) && c.out_sent * 2 >= c.out.size()) {
            c.out.erase(c.out.begin(), c.out.begin() + static_cast<std::ptrdiff_t>(c.out_sent));
            c.out_base += c.out_sent;
            c.out_sent = 0;
        }
    }
    c.out.clear();
    if (c.out.capacity() > (1u << 20)) c.out.shrink_to_fit();  // a burst is over: give its memory back
    c.out_base += c.out_sent;
    c.out_sent = 0;
    c.reply_ends.clear();
    c.out_descriptors.clear();
    event_del(c.ev_write.get());
    if (c.close_after_flush) close_connection(c.id, "refused");
}

void server_impl::close_connection(uint64_t conn_id, const std::string &reason) {
    auto it = _conns.find(conn_id);
    if (it == _conns.end()) return;
    std::unique_ptr<connection> c = std::move(it->second);
    _conns.erase(it);
    const char *ns = _step.nspace.c_str();
    if (c->native && _native_guard) _native_guard->closed(conn_id);
    if (c->native && c->state == conn_state::awaiting_connect) {
        // Refusals were logged by the listener's guard (rate-limited).
        if (reason != "refused")
            PMIXCPP_LOG_ERROR("%s: closing the native connection from %s before its handshake: %s", ns,
                              c->native->peer.c_str(), reason.c_str());
    } else if (c->state == conn_state::active) {
        PMIXCPP_LOG_ERROR("%s: rank %u (pid %d%s) lost its connection without finalizing: %s", ns, c->rank,
                          static_cast<int>(c->pid), c->native ? ", OpenPMIx client" : "", reason.c_str());
    } else if (c->state == conn_state::finalized) {
        PMIXCPP_LOG_DEBUG("%s: rank %u (pid %d) disconnected after finalize", ns, c->rank, static_cast<int>(c->pid));
    } else if (reason != "refused" && reason != "closed by the client") {
        PMIXCPP_LOG_ERROR("%s: closing the connection of pid %d before connect: %s", ns, static_cast<int>(c->pid),
                          reason.c_str());
    }
    _gets.drop_connection(conn_id);
    _dmodex->drop_connection(conn_id);
    std::erase_if(_topology_waiters, [&](const get_waiter &w) { return w.conn == conn_id; });
    if (c->rank < _rank_conn.size() && _rank_conn[c->rank] == conn_id) {
        _rank_conn[c->rank] = 0;
        if (c->state == conn_state::active) {
            rank_left(c->rank, true);
            _events->rank_terminated(c->rank, false);
        } else if (c->state == conn_state::finalized) {
            watch_finalized(c->rank, c->proc);
        }
    }
    // `c` (events, socket) is released here.
}

void server_impl::watch_finalized(uint32_t rank, process_handle proc) {
    auto w = std::make_unique<finalized_watch>();
    w->server = this;
    w->rank = rank;
    w->proc = std::move(proc);
    if (w->proc && w->proc->fd() >= 0 && !w->proc->gone()) {
        w->ev.reset(event_new(_base.get(), w->proc->fd(), EV_READ, on_finalized_exit, w.get()));
        if (w->ev && event_add(w->ev.get(), nullptr) == 0) {
            _finalized[rank] = std::move(w);
            return;
        }
        PMIXCPP_LOG_ERROR("%s: cannot watch the process of finalized rank %u: it is treated as gone",
                          _step.nspace.c_str(), rank);
    }
    finalized_exited(rank);
}

pid_t server_impl::finalized_pid(uint32_t rank) {
    if (rank >= _rank_conn.size()) return 0;
    if (connection *old = find(_rank_conn[rank]); old && old->state == conn_state::finalized) return old->pid;
    auto it = _finalized.find(rank);
    return it != _finalized.end() && it->second->proc ? it->second->proc->pid() : 0;
}

void server_impl::on_finalized_exit(evutil_socket_t, short, void *arg) {
    auto *w = static_cast<finalized_watch *>(arg);
    guarded("finalized exit", [&] { w->server->finalized_exited(w->rank); });
}

void server_impl::finalized_exited(uint32_t rank) {
    _finalized.erase(rank);  // may free the watch whose callback runs: nothing of it is used after
    if (rank >= _rank_conn.size() || _rank_conn[rank] != 0 || _rank_state[rank] != rank_state::finalized) return;
    PMIXCPP_LOG_DEBUG("%s: rank %u exited after finalize", _step.nspace.c_str(), rank);
    rank_left(rank, false);
    _events->rank_terminated(rank, true);
}

void server_impl::rank_left(uint32_t rank, bool died) {
    _rank_state[rank] = died ? rank_state::died : rank_state::finalized;
    send_fence_outcomes(_fences.rank_gone(rank, died ? PMIX_ERR_PROC_ABORTED : PMIX_ERR_LOST_CONNECTION));
    _dyn->rank_left(rank);
    _jctrl.rank_gone(rank);
    _groups->rank_left(rank);
    _dmodex->rank_left(rank, died);
    _xstep->rank_left(rank, died);
    for (const auto &w : _gets.take_target(rank))
        fail_get(w, PMIX_ERR_NOT_FOUND,
                 "rank " + std::to_string(rank) + (died ? " died" : " finalized") + " without committing " + w.key);
}

void server_impl::rearm_timer() {
    std::optional<server_clock::time_point> next = _fences.next_deadline();
    auto g = _gets.next_deadline();
    if (g && (!next || *g < *next)) next = g;
    auto d = _dyn->next_deadline();
    if (d && (!next || *d < *next)) next = d;
    auto gr = _groups->next_deadline();
    if (gr && (!next || *gr < *next)) next = gr;
    auto ta = _time_alert.next_deadline();
    if (ta && (!next || *ta < *next)) next = ta;
    auto hb = _jctrl.next_deadline();
    if (hb && (!next || *hb < *next)) next = hb;
    auto dm = _dmodex->next_deadline();
    if (dm && (!next || *dm < *next)) next = dm;
    auto xs = _xstep->next_deadline();
    if (xs && (!next || *xs < *next)) next = xs;
    auto lv = _liveness ? _liveness->next_deadline() : std::nullopt;
    if (lv && (!next || *lv < *next)) next = lv;
    auto pt = _proc_table->next_deadline();
    if (pt && (!next || *pt < *next)) next = pt;
    if (_native_guard) {
        // The guard's clock is steady_clock: its deadline as a server_clock time.
        if (auto nd = _native_guard->next_deadline()) {
            auto at = server_clock::now() + std::chrono::duration_cast<server_clock::duration>(
                                                 *nd - net::listener_guard::clock::now());
            if (!next || at < *next) next = at;
        }
    }
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
    _dyn->expire(now);
    _groups->expire(now);
    if (_liveness) _liveness->expire(now);
    if (auto left = _time_alert.due(now)) {
        _events->time_limit_alert(*left);
        // The RM's one warning before the end: ranks that registered a checkpoint method use it.
        std::vector<uint32_t> ckpt;
        for (uint32_t r : _step.local_ranks())
            if (_jctrl.method_of(r) != nullptr) ckpt.push_back(r);
        if (!ckpt.empty()) checkpoint_local(ckpt, "the job reaches its time limit in " + std::to_string(*left) + " s");
    }
    for (const auto &a : _jctrl.expire(now)) _events->monitor_tripped(a.rank, a.code, a.id, a.silent_sec);
    _dmodex->expire(now);
    _xstep->expire(now);
    _proc_table->expire(now);
    if (_native_guard)
        for (uint64_t id : _native_guard->expired()) close_connection(id, "refused");  // logged by the guard
    for (const auto &w : _gets.take_expired(now)) {
        // A Get that times out is an answer the application asked for, not a server error.
        PMIXCPP_LOG_DEBUG("%s: get of %s of rank %u by rank %u timed out", _step.nspace.c_str(),
                          w.key.empty() ? "(all data)" : w.key.c_str(), w.target, w.requester);
        fail_get(w, PMIX_ERR_TIMEOUT, "timed out waiting for rank " + std::to_string(w.target) + " to commit " + w.key);
    }
}

// ------------------------------------------------------------------------------------------
// Replies

void server_impl::send_reply(uint64_t conn_id, uint32_t request_id, pmix_status_t status, const std::string &message,
                             const std::function<Status(wire::Writer &)> &body,
                             std::shared_ptr<const unique_fd> descriptor) {
    connection *c = find(conn_id);
    if (!c) return;  // the requester is gone; nobody to tell
    if (c->native) {
        native_reply(*c, request_id, status, body);
        return;
    }
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
    if (h.status != PMIX_SUCCESS) descriptor.reset();
    auto frame = wire::encode_frame(static_cast<uint16_t>(wire::msg_type::reply),
                                    descriptor ? wire::kFrameFlagDescriptor : 0, request_id, w.data());
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
        descriptor.reset();
    }
    if (queue_output(*c, frame.value(), std::move(descriptor)) == queued::ok) flush(*c);
}

void server_impl::send_snapshot_reply(uint64_t conn_id, uint32_t request_id, const modex_snapshot *snapshot,
                                      bool resend) {
    connection *c = find(conn_id);
    if (!c) return;
    // Each queued descriptor keeps its file's memory: a client that does not read its replies
    // holds at most kMaxQueuedDescriptors of them; past that it is sent none (it asks when it
    // needs the file).
    std::shared_ptr<const unique_fd> descriptor;
    if (snapshot != nullptr && (resend || c->snapshot_file != snapshot->id) &&
        c->out_descriptors.size() < kMaxQueuedDescriptors) {
        descriptor = snapshot->fd;
        c->snapshot_file = snapshot->id;
    }
    send_reply(conn_id, request_id, PMIX_SUCCESS, {},
               [&](wire::Writer &wr) {
                   if (snapshot == nullptr) return wire::encode_snapshot_ref(wr, "", {});
                   return wire::encode_snapshot_ref(wr, snapshot->id, snapshot->segments);
               },
               std::move(descriptor));
}

queued server_impl::queue_output(connection &c, std::span<const uint8_t> frame,
                                 std::shared_ptr<const unique_fd> descriptor) {
    if (c.overflowed) return queued::overflow;
    if (c.peer_gone) return queued::ok;  // dropped: the client's end is closed
    const size_t backlog = c.out.size() - c.out_sent;
    if (backlog + frame.size() > kMaxReplyBacklog || c.reply_ends.size() >= kMaxQueuedReplies) {
        c.overflowed = true;
        std::string why = "closed by the server: it does not read its replies (" + std::to_string(backlog) +
                          " bytes, " + std::to_string(c.reply_ends.size()) + " replies queued)";
        // Stop reading it and free the backlog now; close (one log line) from the loop, after the
        // handler that queued this (it may still hold the connection).
        event_del(c.ev_read.get());
        drop_output(c);
        post([this, id = c.id, why] { close_connection(id, why); });
        return queued::overflow;
    }
    if (descriptor) c.out_descriptors.emplace_back(c.out_base + c.out.size(), std::move(descriptor));
    c.out.insert(c.out.end(), frame.begin(), frame.end());
    c.reply_ends.push_back(c.out_base + c.out.size());
    return queued::ok;
}

void server_impl::send_fence_outcomes(const std::vector<fence_outcome> &outcomes) {
    for (const auto &o : outcomes) {
        // A fence leaves the node's data in a snapshot the clients map (PROTOCOL.md): what
        // changed since the last one is appended to it. That is what the fence collected, or for
        // one that collects nothing (OpenMPI's barrier after its modex) what the node's ranks
        // committed since: the clients then read what the server holds, as after the collecting
        // fence before it. Nothing committed yet (a barrier before any Put): none, a Get asks the
        // server. Nothing new: the same one, at no cost. It cannot be made (out of memory): "", a
        // Get asks for it, then for the value.
        const bool snapshot = o.status == PMIX_SUCCESS && _snapshots && _kvs.committed_generation() != 0;
        std::optional<modex_snapshot> made;
        if (snapshot && !o.waiters.empty()) {
            auto written = _snapshots->write(_kvs);
            if (written.ok()) made = std::move(written.value());
            else PMIXCPP_LOG_WARNING("%s: %s", _step.nspace.c_str(), written.status().message().c_str());
        }
        for (const auto &w : o.waiters) {
            if (connection *c = find(w.conn); c && c->fences > 0) --c->fences;
            if (!snapshot) {
                send_reply(w.conn, w.request_id, o.status, o.message);
                continue;
            }
            send_snapshot_reply(w.conn, w.request_id, made ? &*made : nullptr);
        }
    }
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

// The node's topology is not in the job data: discovering the I/O devices takes longer than the
// rest of a launch (topology.h), and most steps never ask. The first Get starts its making, the
// Gets that come meanwhile wait for it (a client's pmix.optional Get too: this is the node's own
// data, held by its server, not another node's), later ones are answered at once.
void server_impl::get_topology(const get_waiter &w) {
    if (_topology_xml) {
        answer_topology(w);
        return;
    }
    size_t mine = 0;
    for (const auto &x : _topology_waiters) mine += x.conn == w.conn;
    if (mine >= kMaxTopologyWaiters) {
        fail_get(w, PMIX_ERR_OUT_OF_RESOURCE,
                 "too many Gets of " + std::string(PMIX_LOCAL_TOPO) + " waiting on this connection");
        return;
    }
    _topology_waiters.push_back(w);
    if (_topology_thread.joinable()) return;  // being made
    try {
        _topology_thread = std::thread([this] {
            auto xml = export_node_topology_xml();
            post([this, xml = std::move(xml)]() mutable { topology_made(std::move(xml)); });
        });
    } catch (const std::exception &e) {
        topology_made(Status(PMIX_ERR_OUT_OF_RESOURCE, std::string("cannot start a thread: ") + e.what()));
    }
}

void server_impl::topology_made(Result<std::string> xml) {
    if (!xml.ok())
        PMIXCPP_LOG_WARNING("%s: the node's topology for %s: %s", _step.nspace.c_str(), PMIX_LOCAL_TOPO,
                            xml.status().message().c_str());
    _topology_xml = std::move(xml);
    std::vector<get_waiter> waiting;
    waiting.swap(_topology_waiters);
    for (const auto &w : waiting) answer_topology(w);
}

void server_impl::answer_topology(const get_waiter &w) {
    const Result<std::string> &xml = *_topology_xml;
    if (!xml.ok()) {
        fail_get(w, PMIX_ERR_NOT_AVAILABLE, "the node's topology: " + xml.status().message());
        return;
    }
    pmix_info_t info;
    memset(&info, 0, sizeof(info));
    strncpy(info.key, PMIX_LOCAL_TOPO, PMIX_MAX_KEYLEN);
    info.value.type = PMIX_STRING;
    info.value.data.string = const_cast<char *>(xml->c_str());  // borrowed for the encoding
    send_reply(w.conn, w.request_id, PMIX_SUCCESS, {},
               [&](wire::Writer &wr) { return wire::encode_info_array(wr, &info, 1); });
}

relation server_impl::relation_of(uint32_t requester, uint32_t target) const {
    if (requester == target) return relation::self;
    if (target == PMIX_RANK_WILDCARD) return relation::same_node;
    if (target < _node_of.size() && requester < _node_of.size() && _node_of[target] == _node_of[requester])
        return relation::same_node;
    return relation::other_node;
}

dyn_ops server_impl::make_dyn_ops() {
    dyn_ops ops;
    ops.reply = [this](uint64_t conn, uint32_t request_id, pmix_status_t status, const std::string &message,
                       std::span<const uint8_t> body) {
        std::vector<uint8_t> bytes(body.begin(), body.end());
        send_reply(conn, request_id, status, message, [bytes](wire::Writer &w) {
            w.put_raw(bytes.data(), bytes.size());
            return Status::success();
        });
    };
    ops.send_node = [this](uint32_t node, node_channel channel, std::span<const uint8_t> body) {
        if (_net) _net->send(node, id_of(channel), body);
        else PMIXCPP_LOG_ERROR("%s: no node transport for a message to node %u", _step.nspace.c_str(), node);
    };
    if (_opts.agent) {
        // The answers come on other threads: back to the loop with them.
        ops.agent = [this](agent::service s, std::vector<uint8_t> body, int timeout_ms, dyn_ops::session_done done) {
            _opts.agent->call(s, std::move(body), timeout_ms,
                              [this, done](int status, const std::string &message, std::vector<uint8_t> reply) {
                                  auto held = std::make_shared<std::vector<uint8_t>>(std::move(reply));
                                  post([done, status, message, held] { done(status, message, std::move(*held)); });
                              });
        };
    }
    ops.data_of = [this](uint32_t rank, relation rel) { return _kvs.visible_data(rank, rel); };
    if (_opts.agent) {
        ops.xstep = [this](std::vector<uint8_t> body, int timeout_ms, dyn_ops::session_done done) {
            _opts.agent->call(agent::service::xstep, std::move(body), timeout_ms,
                              [this, done](int status, const std::string &message, std::vector<uint8_t> reply) {
                                  auto held = std::make_shared<std::vector<uint8_t>>(std::move(reply));
                                  post([done, status, message, held] { done(status, message, std::move(*held)); });
                              });
        };
    }
    // A spawn of one app succeeded: its two process sets, here and on the step's other nodes.
    ops.spawned = [this](const std::string &child, uint32_t child_size) { spawn_psets(child, child_size, true); };
    // A spawned step ended: PMIX_EVENT_JOB_END to the rank that spawned it (custom range), with
    // the child namespace as affected proc; non-default, so a default handler (OpenMPI's aborts
    // on events) does not take it.
    ops.child_ended = [this](const std::string &child, uint32_t spawner, int exit_code) {
        wire::event_notification ev;
        ev.status = PMIX_EVENT_JOB_END;
        strncpy(ev.source.nspace, child.c_str(), PMIX_MAX_NSLEN);
        ev.source.rank = PMIX_RANK_UNDEF;
        ev.range = PMIX_RANGE_CUSTOM;
        pmix_proc_t to{}, affected{};
        strncpy(to.nspace, _step.nspace.c_str(), PMIX_MAX_NSLEN);
        to.rank = spawner;
        strncpy(affected.nspace, child.c_str(), PMIX_MAX_NSLEN);
        affected.rank = PMIX_RANK_WILDCARD;
        pmix_status_t term = exit_code == 0 ? PMIX_SUCCESS : PMIX_ERR_JOB_TERMINATED;
        bool yes = true;
        std::string text = "spawned step " + child + " ended, srun exit status " + std::to_string(exit_code);
        const char *ctext = text.c_str();
        auto *infos = static_cast<pmix_info_t *>(calloc(6, sizeof(pmix_info_t)));
        if (infos == nullptr) return;
        InfoArray arr(infos, 6);
        auto load = [&](size_t i, const char *key, const void *v, pmix_data_type_t t) {
            strncpy(infos[i].key, key, PMIX_MAX_KEYLEN);
            (void)value_load(&infos[i].value, v, t);
        };
        load(0, PMIX_EVENT_CUSTOM_RANGE, &to, PMIX_PROC);
        load(1, PMIX_EVENT_AFFECTED_PROC, &affected, PMIX_PROC);
        load(2, PMIX_JOB_TERM_STATUS, &term, PMIX_STATUS);
        load(3, PMIX_EXIT_CODE, &exit_code, PMIX_INT);
        load(4, PMIX_EVENT_NON_DEFAULT, &yes, PMIX_BOOL);
        load(5, PMIX_EVENT_TEXT_MESSAGE, ctext, PMIX_STRING);
        ev.infos = std::move(arr);
        wire::Writer w;
        if (!wire::encode(w, ev).ok()) return;
        if (Status st = _events->from_remote(w.data()); !st.ok())
            PMIXCPP_LOG_ERROR("%s: job-end event of %s: %s", _step.nspace.c_str(), child.c_str(), st.message().c_str());
        // the spawn's process sets end with the children (PMIX_PROCESS_SET_DELETE)
        spawn_psets(child, 0, true);
    };
    ops.connect_timeout_sec = _opts.multinode.timeout_sec;
    ops.grow_timeout_sec = _opts.alloc_timeout_sec;
    ops.checkpoint_local = [this](const std::vector<uint32_t> &ranks) {
        checkpoint_local(ranks, "checkpoint requested");
    };
    ops.process_of = [this](uint32_t rank) -> process_handle {
        if (rank >= _rank_conn.size()) return nullptr;
        connection *c = find(_rank_conn[rank]);
        return c ? c->proc : nullptr;
    };
    return ops;
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
    case wire::msg_type::monitor: handle_monitor(c, f); break;
    case wire::msg_type::log: handle_log(c, f); break;
    case wire::msg_type::notify: handle_notify(c, f); break;
    case wire::msg_type::alloc: handle_alloc(c, f); break;
    case wire::msg_type::query: handle_query(c, f); break;
    case wire::msg_type::publish:
    case wire::msg_type::lookup:
    case wire::msg_type::unpublish: _dyn->on_client(c.id, c.rank, f.type, f.id, f.payload); break;
    case wire::msg_type::spawn: _dyn->on_spawn(c.id, c.rank, f.id, f.payload); break;
    case wire::msg_type::fabric: handle_fabric(c, f); break;
    case wire::msg_type::xconnect: _dyn->on_connect(c.id, c.rank, f.id, connect_op::connect, f.payload); break;
    case wire::msg_type::xdisconnect: _dyn->on_connect(c.id, c.rank, f.id, connect_op::disconnect, f.payload); break;
    case wire::msg_type::group: handle_group(c, f); break;
    case wire::msg_type::snapshot: handle_snapshot(c, f); break;
    default: close_connection(id, "unexpected message type " + std::to_string(f.type)); break;
    }
    connection *still = find(id);
    return still && !still->close_after_flush && !still->overflowed;
}

// Decode a payload or close the connection with the reason.
#define DECODE_OR_CLOSE(msg_struct, what)                                                            \
    msg_struct m;                                                                                    \
    if (Status _st = wire::decode_payload(f.payload, &m, max_procs()); !_st.ok()) {                \
        close_connection(c.id, std::string("malformed ") + (what) + " payload: " + _st.message()); \
        return;                                                                                      \
    }

std::string server_impl::rank_claim_refusal(const connection &c, uint32_t rank) {
    if (!is_local(rank)) return "rank " + std::to_string(rank) + " is not a rank of this node";
    if (connection *old = find(_rank_conn[rank]); old && old->state != conn_state::finalized)
        return "rank " + std::to_string(rank) + " is already connected";
    if (pid_t was = finalized_pid(rank); was != 0 && was != c.pid)
        return "rank " + std::to_string(rank) + " finalized in pid " + std::to_string(was) +
               ", which still runs: only that process may connect as it again";
    return {};
}

void server_impl::admit_rank(connection &c, uint32_t rank) {
    const char *ns = _step.nspace.c_str();
    // A rank that finalized connects again (PMIx_Init after its last PMIx_Finalize): its old
    // connection, if the server has not seen it close yet, no longer stands for the rank.
    if (connection *old = find(_rank_conn[rank]); old && old != &c) old->rank = PMIX_RANK_UNDEF;
    _finalized.erase(rank);
    c.rank = rank;
    c.state = conn_state::active;
    c.reader.set_max_payload(_opts.max_payload);  // connected: frames up to the configured size
    _rank_conn[rank] = c.id;
    _rank_pid[rank] = c.pid;
    if (_rank_state[rank] != rank_state::not_connected)
        PMIXCPP_LOG_VERBOSE("%s: rank %u connects again (pid %d)", ns, rank, static_cast<int>(c.pid));
    _rank_state[rank] = rank_state::connected;
    _fences.rank_back(rank);
    PMIXCPP_LOG_DEBUG("%s: rank %u connected (pid %d%s)", ns, rank, static_cast<int>(c.pid),
                      c.native ? ", OpenPMIx client" : "");
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
    else
        why = rank_claim_refusal(c, m.rank);
    if (!why.empty()) {
        PMIXCPP_LOG_ERROR("%s: refusing client pid %d (uid %u) claiming rank %u: %s", ns, static_cast<int>(c.pid),
                          static_cast<unsigned>(c.uid), m.rank, why.c_str());
        c.close_after_flush = true;
        send_reply(c.id, f.id, PMIX_ERR_NO_PERMISSIONS, why);
        return;
    }
    admit_rank(c, m.rank);
    wire::connect_reply r;
    r.jobdata_path = _jobdata_path;
    r.jobdata_size = _jobdata_size;
    r.local_rank = _local_index[m.rank];
    send_reply(c.id, f.id, PMIX_SUCCESS, {}, [&](wire::Writer &w) { return wire::encode(w, r); });
    _events->rank_connected(m.rank);  // cached events in its range, after the connect reply
}

void server_impl::handle_finalize(connection &c, const wire::Frame &f) {
    DECODE_OR_CLOSE(wire::finalize_request, "finalize");
    PMIXCPP_LOG_DEBUG("%s: rank %u finalized", _step.nspace.c_str(), c.rank);
    c.state = conn_state::finalized;
    // Gone for new fences and Gets from now on; for those in flight only once its process exits
    // without connecting again (watch_finalized).
    _rank_state[c.rank] = rank_state::finalized;
    send_reply(c.id, f.id, PMIX_SUCCESS, {});
}

void server_impl::handle_abort(connection &c, const wire::Frame &f) {
    DECODE_OR_CLOSE(wire::abort_request, "abort");
    PMIXCPP_LOG_ERROR("%s: rank %u (pid %d) called PMIx_Abort(status %d, %zu procs): %s", _step.nspace.c_str(),
                      c.rank, static_cast<int>(c.pid), m.status, m.procs.size(), m.message.c_str());
    _events->job_aborting(c.rank, m.status, m.message);  // queued before the host starts killing
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
    _dmodex->rank_committed(rank);
    _xstep->rank_committed(rank);
}

// The modex snapshot of the node's data as it is now, with its file's descriptor: asked for by a
// client's Get after a collecting fence whose reply it could not use (no snapshot made, or the
// file's descriptor did not reach it).
void server_impl::handle_snapshot(connection &c, const wire::Frame &f) {
    if (!f.payload.empty()) {
        close_connection(c.id, "malformed snapshot request: unexpected payload");
        return;
    }
    auto made = _snapshots->write(_kvs);
    if (!made.ok()) {
        PMIXCPP_LOG_WARNING("%s: %s", _step.nspace.c_str(), made.status().message().c_str());
        send_reply(c.id, f.id, made.status().code(), made.status().message());
        return;
    }
    send_snapshot_reply(c.id, f.id, &made.value(), /*resend=*/true);
}

void server_impl::handle_fence(connection &c, const wire::Frame &f) {
    DECODE_OR_CLOSE(wire::fence_request, "fence");
    std::vector<uint32_t> ranks;
    for (const auto &p : m.procs) {
        if (strncmp(p.nspace, _step.nspace.c_str(), sizeof(p.nspace)) != 0) {
            // Procs of other steps of the job (OpenMPI's MPI_Comm_disconnect): a barrier through
            // the job's rendezvous (connect.h); data is not collected across namespaces.
            _dyn->on_connect(c.id, c.rank, f.id, connect_op::fence, f.payload);
            return;
        }
        ranks.push_back(p.rank);
    }
    auto participants = _fences.normalise(ranks);
    if (!participants.ok()) {
        send_reply(c.id, f.id, participants.status().code(), participants.status().message());
        return;
    }
    if (c.fences >= kMaxFencesInFlight) {
        send_reply(c.id, f.id, PMIX_ERR_OUT_OF_RESOURCE,
                   "too many fences in flight (" + std::to_string(kMaxFencesInFlight) + " per client)");
        return;
    }
    ++c.fences;
    fence_waiter w{c.id, f.id, c.rank};
    auto deadline = info_deadline(m.infos);
    if (_multinode) deadline = remote_deadline(deadline);
    std::vector<fence_outcome> outcomes;
    {
        struct entry_flag {
            bool &flag;
            explicit entry_flag(bool &f) : flag(f) { flag = true; }
            ~entry_flag() { flag = false; }
        } in_entry(_in_fence_entry);
        outcomes = _fences.enter(participants.value(), w, info_flag(m.infos, PMIX_COLLECT_DATA), deadline);
    }
    send_fence_outcomes(outcomes);
    auto done = std::move(_done_in_entry);
    _done_in_entry.clear();
    for (auto &[instance, result] : done) finish_remote_fence(instance, std::move(result));
}

// A client may have kMaxWaitingGets Gets waiting; the next one fails at once.
bool server_impl::room_for_get(const get_waiter &w) {
    if (_gets.count_of(w.conn) + _dmodex->waiting_of(w.conn) < kMaxWaitingGets) return true;
    fail_get(w, PMIX_ERR_OUT_OF_RESOURCE,
             "too many Gets waiting (" + std::to_string(kMaxWaitingGets) + " per client)");
    return false;
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
        // What PMIx_Connect brought, else direct modex from the proc's step (connect.h).
        _dyn->foreign_get(c.id, f.id, m.proc, m.key, m.infos);
        return;
    }
    if (w.target == PMIX_RANK_WILDCARD && m.key == PMIX_LOCAL_TOPO) {
        get_topology(w);
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
        if (!room_for_get(w)) return;
        PMIXCPP_LOG_TRACE("%s: rank %u waits for %s of rank %u", ns, w.requester, what.c_str(), w.target);
        _gets.add(std::move(w));
        return;
    }
    // The data lives on another node: direct modex. Also for a new key of a rank whose earlier
    // data came with a collecting fence: what we hold may be older than what it committed since.
    if (!_multinode || !_net || !_net_error.empty()) {
        fail_get(w, _net_error.empty() ? PMIX_ERR_NOT_SUPPORTED : PMIX_ERR_UNREACH,
                 "rank " + std::to_string(w.target) + " is on another node and the node transport is not running" +
                     (_net_error.empty() ? std::string() : ": " + _net_error));
        return;
    }
    uint32_t target_node = _node_of[w.target];
    if (node_is_lost(target_node)) {
        fail_get(w, PMIX_ERR_NODE_DOWN,
                 "rank " + std::to_string(w.target) + " is on node " + _step.node_names.at(target_node) + ", which is lost");
        return;
    }
    if (!room_for_get(w)) return;
    PMIXCPP_LOG_TRACE("%s: rank %u waits for %s of remote rank %u", ns, w.requester, what.c_str(), w.target);
    _dmodex->get(std::move(w), server_clock::now());
}

void server_impl::handle_job_control(connection &c, const wire::Frame &f) {
    DECODE_OR_CLOSE(wire::job_control_request, "job_control");
    // What the caller says of itself (targets do not apply: the standard calls these informational).
    size_t informed = 0;
    for (size_t i = 0; i < m.infos.size(); ++i) {
        std::string key = key_of(m.infos[i]);
        if (key == PMIX_JOB_CTRL_CHECKPOINT_METHOD) {
            Status st = _jctrl.set_checkpoint_method(c.rank, m.infos[i].value);
            if (st.code() == PMIX_ERR_NOT_FOUND) {
                // A key without a value (the caller never set its type): nothing to record.
                PMIXCPP_LOG_VERBOSE("%s: rank %u: %s without a value: no checkpoint method recorded",
                                    _step.nspace.c_str(), c.rank, PMIX_JOB_CTRL_CHECKPOINT_METHOD);
                ++informed;
                continue;
            }
            if (!st.ok()) {
                send_reply(c.id, f.id, st.code(), st.message());
                return;
            }
            const checkpoint_method *cm = _jctrl.method_of(c.rank);
            PMIXCPP_LOG_VERBOSE("%s: rank %u checkpoints on%s%s", _step.nspace.c_str(), c.rank,
                                cm->signal ? (" signal " + std::to_string(cm->signal)).c_str() : "",
                                cm->event != PMIX_SUCCESS ? (" event " + std::to_string(cm->event)).c_str() : "");
            ++informed;
        } else if (key == PMIX_JOB_CTRL_PREEMPTIBLE) {
            bool on = info_flag(m.infos, PMIX_JOB_CTRL_PREEMPTIBLE);
            _jctrl.set_preemptible(c.rank, on);
            // Slurm preempts by the site's partition and QOS policy, not by what a process says.
            PMIXCPP_LOG_VERBOSE("%s: rank %u says it is%s preemptible (Slurm's preemption policy decides)",
                                _step.nspace.c_str(), c.rank, on ? "" : " not");
            ++informed;
        }
    }
    if (_dyn->job_control(c.id, c.rank, f.id, m)) return;  // kill, terminate, signal, checkpoint
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
            // The server removes, as root, only what lies in the user's own step directory.
            std::string rel;
            if (!safe_fs::lexically_inside(path, _step.step_dir, &rel) || rel.empty()) {
                std::string why = "clean-up path " + path + " is not inside the step directory " + _step.step_dir;
                PMIXCPP_LOG_VERBOSE("%s: rank %u: %s", _step.nspace.c_str(), c.rank, why.c_str());
                send_reply(c.id, f.id, PMIX_ERR_NO_PERMISSIONS, why);
                return;
            }
            if (_cleanups.size() >= kMaxCleanups) {
                send_reply(c.id, f.id, PMIX_ERR_OUT_OF_RESOURCE,
                           "more than " + std::to_string(kMaxCleanups) + " clean-up registrations");
                return;
            }
            _cleanups.push_back({rel, key == PMIX_REGISTER_CLEANUP_DIR, recursive});
            ++registered;
            PMIXCPP_LOG_DEBUG("%s: rank %u registered %s for clean-up", _step.nspace.c_str(), c.rank, path.c_str());
        } else if (key.rfind("pmix.clnup.", 0) == 0 || key == PMIX_TIMEOUT || key == PMIX_JOB_CTRL_CHECKPOINT_METHOD ||
                   key == PMIX_JOB_CTRL_PREEMPTIBLE) {
            // directives of a clean-up registration, and what the caller said of itself
        } else if (unsupported.empty()) {
            unsupported = key;
        }
    }
    if (registered == 0 && informed == 0) {
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

void server_impl::handle_monitor(connection &c, const wire::Frame &f) {
    DECODE_OR_CLOSE(wire::monitor_request, "monitor");
    const pmix_info_t &what = m.monitor[0];
    const std::string key = key_of(what);
    const auto now = server_clock::now();
    if (key == PMIX_SEND_HEARTBEAT) {
        // PMIx_Heartbeat: nobody waits for the answer.
        bool known = _jctrl.beat(c.rank, now);
        send_reply(c.id, f.id, known ? PMIX_SUCCESS : PMIX_ERR_NOT_FOUND, known ? "" : "no heartbeat monitor");
        return;
    }
    if (key == PMIX_MONITOR_HEARTBEAT) {
        std::string id;
        if (const pmix_info_t *i = find_info(m.directives, PMIX_MONITOR_ID)) id = value_text(i->value);
        auto number = [&](const char *k, int64_t dflt) -> std::optional<int64_t> {
            const pmix_info_t *i = find_info(m.directives, k);
            if (i == nullptr) return dflt;
            auto n = value_to_number<int64_t>(i->value);
            if (!n.ok() || n.value() < 0) return std::nullopt;
            return n.value();
        };
        auto period = number(PMIX_MONITOR_HEARTBEAT_TIME, -1);
        auto drops = number(PMIX_MONITOR_HEARTBEAT_DROPS, 0);
        if (!period || *period <= 0 || !drops || *period > UINT32_MAX || *drops > UINT32_MAX) {
            send_reply(c.id, f.id, PMIX_ERR_BAD_PARAM,
                       "a heartbeat monitor needs PMIX_MONITOR_HEARTBEAT_TIME (s) and a valid PMIX_MONITOR_HEARTBEAT_DROPS");
            return;
        }
        Status st = _jctrl.add_heartbeat(c.rank, id, static_cast<uint32_t>(*period), static_cast<uint32_t>(*drops),
                                         m.error, now);
        if (st.ok())
            PMIXCPP_LOG_VERBOSE("%s: rank %u: heartbeat monitor '%s' every %lld s, %lld may be missed",
                                _step.nspace.c_str(), c.rank, id.c_str(), static_cast<long long>(*period),
                                static_cast<long long>(*drops));
        send_reply(c.id, f.id, st.code(), st.message());
        rearm_timer();
        return;
    }
    if (key == PMIX_MONITOR_CANCEL) {
        std::string id = value_text(what.value);
        size_t n = _jctrl.cancel(c.rank, id);
        send_reply(c.id, f.id, n > 0 ? PMIX_SUCCESS : PMIX_ERR_NOT_FOUND, n > 0 ? "" : "no monitor " + id);
        rearm_timer();
        return;
    }
    if (key == PMIX_MONITOR_FILE) {
        send_reply(c.id, f.id, PMIX_ERR_NOT_SUPPORTED, "file monitoring is not supported");
        return;
    }
    send_reply(c.id, f.id, PMIX_ERR_BAD_PARAM, "nothing to monitor named " + key);
}

void server_impl::checkpoint_local(const std::vector<uint32_t> &ranks, const std::string &why) {
    for (uint32_t r : ranks) {
        const checkpoint_method *cm = _jctrl.method_of(r);
        if (cm == nullptr) {
            PMIXCPP_LOG_VERBOSE("%s: rank %u registered no checkpoint method: not told (%s)", _step.nspace.c_str(), r,
                                why.c_str());
            continue;
        }
        if (cm->signal != 0) {
            connection *c = r < _rank_conn.size() ? find(_rank_conn[r]) : nullptr;
            if (c == nullptr || !c->proc || c->proc->send_signal(cm->signal) != 0)
                PMIXCPP_LOG_WARNING("%s: checkpoint signal %d to rank %u: %s", _step.nspace.c_str(), cm->signal, r,
                                    c && c->proc ? strerror(errno) : "not connected");
        }
        if (cm->event != PMIX_SUCCESS) _events->checkpoint_requested(r, cm->event, why);
        PMIXCPP_LOG_VERBOSE("%s: rank %u asked to checkpoint (%s)", _step.nspace.c_str(), r, why.c_str());
    }
}

void server_impl::handle_log(connection &c, const wire::Frame &f) {
    DECODE_OR_CLOSE(wire::log_request, "log");
    size_t forwarded = 0, dropped = 0;
    for (size_t i = 0; i < m.data.size(); ++i) {
        std::string key = key_of(m.data[i]);
        std::string text = value_text(m.data[i].value);
        if (text.empty()) continue;
        if (key == PMIX_LOG_MSG || key == PMIX_LOG_STDERR || key == PMIX_LOG_STDOUT || key == PMIX_LOG_SYSLOG ||
            key == PMIX_LOG_LOCAL_SYSLOG || key == PMIX_LOG_GLOBAL_SYSLOG) {
            ++forwarded;
            // Cut, escaped and rate-limited (log_gate.h): the job writes one line per message
            // into slurmd's log, never a line of slurmd's own, never without bound.
            auto v = _log_gate.admit(text);
            if (v.summary) PMIXCPP_LOG_ERROR("%s: %s", _step.nspace.c_str(), v.summary->c_str());  // the admin should know
            if (!v.pass) {
                ++dropped;
                continue;
            }
            if (_host) _host->log(_step.nspace, c.rank, key, v.text);
        }
    }
    if (forwarded == 0) {
        send_reply(c.id, f.id, PMIX_ERR_NOT_SUPPORTED, "no log data the server can forward");
        return;
    }
    if (dropped == forwarded) {
        send_reply(c.id, f.id, PMIX_ERR_OUT_OF_RESOURCE, "the step's log rate limit is reached: message dropped");
        return;
    }
    send_reply(c.id, f.id, PMIX_SUCCESS, {});
}

void server_impl::handle_notify(connection &c, const wire::Frame &f) {
    DECODE_OR_CLOSE(wire::event_notification, "notify");
    // Only the originating server hands an event to the other steps: what arrives from another
    // node or step is never sent on.
    xstep::message out;
    out.what = xstep::op::event;
    bool cross = false;
    if (_opts.agent && reaches_other_steps(m, _step.nspace, &out.nspaces)) {
        wire::Writer w;
        cross = wire::encode(w, m).ok();
        out.payload = w.data();
    }
    Status st = _events->notify_from_client(c.rank, std::move(m));
    if (!st.ok())
        PMIXCPP_LOG_VERBOSE("%s: notify from rank %u refused: %s", _step.nspace.c_str(), c.rank, st.message().c_str());
    else if (cross)
        _xstep->send(std::move(out), "event");
    send_reply(c.id, f.id, st.ok() ? PMIX_SUCCESS : st.code(), st.message());
}

void server_impl::handle_alloc(connection &c, const wire::Frame &f) {
    DECODE_OR_CLOSE(wire::alloc_request, "alloc");
    _alloc->allocate(c.id, f.id, c.rank, std::move(m));
}

// PMIx_Group_* (groups.h): construct / destruct / join as one collective of the members' servers.
void server_impl::handle_group(connection &c, const wire::Frame &f) {
    DECODE_OR_CLOSE(wire::group_request, "group");
    _groups->on_request(c.id, c.rank, f.id, std::move(m));
    rearm_timer();
}

group_ops server_impl::make_group_ops() {
    group_ops o;
    o.reply = [this](uint64_t conn, uint32_t id, pmix_status_t st, const std::string &msg, const wire::group_reply *r) {
        if (st != PMIX_SUCCESS || r == nullptr) return send_reply(conn, id, st, msg);
        send_reply(conn, id, st, msg, [r](wire::Writer &w) { return wire::encode(w, *r); });
    };
    o.start_collective = [this](uint64_t instance, uint64_t signature, std::vector<uint32_t> nodes,
                                std::vector<uint8_t> blob) -> Status {
        if (!_net || !_coll)
            return Status(PMIX_ERR_NOT_SUPPORTED, "the node transport is not running" +
                                                      (_net_error.empty() ? std::string() : ": " + _net_error));
        for (uint32_t n : nodes)
            if (node_is_lost(n))
                return Status(PMIX_ERR_NODE_DOWN, "node " + _step.node_names.at(n) + " of the group is lost");
        _coll->start(instance, signature, std::move(nodes), std::move(blob), true);
        return Status::success();
    };
    o.cross_step = [this](uint64_t conn, uint32_t rank, uint32_t id, wire::group_request &&req, uint64_t candidate) {
        _dyn->on_group(conn, rank, id, std::move(req), candidate);
    };
    o.cancel_collective = [this](uint64_t instance) {
        if (_coll) _coll->cancel(instance);
    };
    o.send_node = [this](uint32_t node, node_channel chan, std::vector<uint8_t> body) -> Status {
        if (!_net)
            return Status(PMIX_ERR_NOT_SUPPORTED, "the node transport is not running" +
                                                      (_net_error.empty() ? std::string() : ": " + _net_error));
        if (node_is_lost(node))
            return Status(PMIX_ERR_NODE_DOWN, "node " + _step.node_names.at(node) + " is lost");
        _net->send(node, id_of(chan), body);
        return Status::success();
    };
    o.rank_gone = [this](uint32_t rank) {
        return rank < _rank_state.size() &&
               (_rank_state[rank] == rank_state::died || _rank_state[rank] == rank_state::finalized);
    };
    o.pset_changed = [this](const std::string &name, const std::vector<pmix_proc_t> &members, bool defined) {
        // Raised once per node that serves members, for the step's processes on that node.
        uint32_t from = UINT32_MAX;
        for (const auto &p : members)
            if (p.rank < _node_of.size() && _node_of[p.rank] == _step.node_id) {
                from = p.rank;
                break;
            }
        if (from == UINT32_MAX) return;
        raise_pset_event(name, members, defined, from);
    };
    return o;
}

// A spawn of ours: define its two sets (groups.h; child_size 0: delete them, the children have
// ended) and tell this node's processes (PMIX_PROCESS_SET_DEFINE / _DELETE, range local: the
// parent step's processes here are members of the union and the requesters of the children).
// `broadcast`: the spawner's node, which tells the step's other nodes first.
void server_impl::spawn_psets(const std::string &child, uint32_t child_size, bool broadcast) {
    if (broadcast && _net) {
        wire::Writer w;
        if (wire::encode(w, wire::spawn_psets_message{child, child_size}).ok())
            for (uint32_t n = 0; n < _step.node_names.size(); ++n)
                if (n != _step.node_id && !node_is_lost(n)) send_node(n, node_channel::spawn_psets, w.data());
    }
    const bool define = child_size > 0;
    const std::vector<uint32_t> &local = _step.local_ranks();
    for (bool with_parent : {false, true}) {
        const std::string name = with_parent ? union_pset_name(child) : spawned_pset_name(child);
        std::vector<pmix_proc_t> members;
        if (define) {
            members = spawn_pset_members(_step.nspace, _step.ntasks, child, child_size, with_parent);
            if (!_groups->define_job_pset(name, members)) continue;
        } else if (!_groups->delete_job_pset(name)) {
            continue;
        }
        PMIXCPP_LOG_VERBOSE("%s: process set %s %s", _step.nspace.c_str(), name.c_str(), define ? "defined" : "deleted");
        if (!local.empty()) raise_pset_event(name, members, define, local.front());
    }
}

void server_impl::raise_pset_event(const std::string &name, const std::vector<pmix_proc_t> &members, bool defined,
                                   uint32_t from) {
    wire::event_notification ev;
    ev.status = defined ? PMIX_PROCESS_SET_DEFINE : PMIX_PROCESS_SET_DELETE;
    ev.range = PMIX_RANGE_LOCAL;
    memcpy(ev.source.nspace, _step.nspace.c_str(), std::min(_step.nspace.size(), size_t(PMIX_MAX_NSLEN)));
    ev.source.rank = from;
    std::vector<pmix_info_t> infos;
    infos.push_back(make_info(PMIX_PSET_NAME, name.c_str(), PMIX_STRING));
    if (defined) {
        pmix_data_array_t da{};
        da.type = PMIX_PROC;
        da.size = members.size();
        da.array = const_cast<pmix_proc_t *>(members.data());
        pmix_data_array_t *dp = &da;
        infos.push_back(make_info(PMIX_PSET_MEMBERS, dp, PMIX_DATA_ARRAY));
    }
    // Non-default: handlers registered for every event (often error handlers) do not see it.
    bool yes = true;
    infos.push_back(make_info(PMIX_EVENT_NON_DEFAULT, &yes, PMIX_BOOL));
    ev.infos = to_array(infos);
    if (ev.infos.size() == 0) return;
    Status st = _events->notify_from_client(from, std::move(ev));
    if (!st.ok()) PMIXCPP_LOG_WARNING("%s: process set event: %s", _step.nspace.c_str(), st.message().c_str());
}

void server_impl::handle_query(connection &c, const wire::Frame &f) {
    DECODE_OR_CLOSE(wire::query_request, "query");
    _alloc->query(c.id, f.id, c.rank, std::move(m));
}

// PMIx_Fabric_register/update (fabric_relay.h).
void server_impl::handle_fabric(connection &c, const wire::Frame &f) {
    if (Status st = _fabric->on_client(c.id, f.id, f.payload); !st.ok())
        close_connection(c.id, "malformed fabric payload: " + st.message());
}

fabric_relay_ops server_impl::make_fabric_ops() {
    fabric_relay_ops o;
    if (_opts.agent)
        o.request = [this](agent::service service, std::vector<uint8_t> body, int timeout_ms,
                           fabric_relay_ops::done_fn done) { _opts.agent->call(service, std::move(body), timeout_ms, std::move(done)); };
    o.post = [this](std::function<void()> fn) { post(std::move(fn)); };
    o.reply = [this](uint64_t conn, uint32_t id, pmix_status_t status, const std::string &message,
                     std::span<const uint8_t> body) {
        if (status != PMIX_SUCCESS) return send_reply(conn, id, status, message);
        send_reply(conn, id, status, message, [body](wire::Writer &w) {
            w.put_raw(body.data(), body.size());
            return Status::success();
        });
    };
    o.updated = [this] { _events->fabric_updated("default"); };
    return o;
}

// An event frame for a local rank: queued, written when the socket is writable (never closes a
// connection from inside the event engine). A client that stops reading loses events beyond
// kMaxEventBacklog of unsent bytes instead of growing our memory.
bool server_impl::queue_event_frame(uint32_t rank, std::span<const uint8_t> frame) {
    constexpr size_t kMaxEventBacklog = 8u << 20;
    if (rank >= _rank_conn.size() || _rank_conn[rank] == 0) return false;
    connection *c = find(_rank_conn[rank]);
    if (!c || c->state != conn_state::active) return false;
    std::vector<uint8_t> native_frame;
    if (c->native) {
        // The same event in OpenPMIx's form, on tag 0.
        wire::event_notification ev;
        if (frame.size() < wire::kFrameHeaderSize ||
            !wire::decode_payload(frame.subspan(wire::kFrameHeaderSize), &ev).ok())
            return false;
        auto payload = native::encode_event(c->native->session.flavour(), ev.status, ev.source, ev.range,
                                            ev.infos.data(), ev.infos.size());
        if (!payload.ok()) {
            PMIXCPP_LOG_VERBOSE("%s: event %d not sent to rank %u (OpenPMIx client): %s", _step.nspace.c_str(),
                                ev.status, rank, payload.status().message().c_str());
            return false;
        }
        native_note_group(*c, ev.status, ev.infos);  // a member of a group made by invitation
        native_frame = native::frame_message(native::kTagNotify, payload.value());
        frame = native_frame;
    }
    // Events beyond kMaxEventBacklog are dropped for that client (events.h); they never close it.
    if (c->overflowed || c->out.size() - c->out_sent + frame.size() > kMaxEventBacklog) return false;
    c->out.insert(c->out.end(), frame.begin(), frame.end());
    event_add(c->ev_write.get(), nullptr);
    return true;
}

#undef DECODE_OR_CLOSE

// ------------------------------------------------------------------------------------------
// Multi-node: node transport, fence collectives, direct modex (loop thread)

// The node transport (multinode.h) with its callbacks on the loop, lost nodes, the fence collectives.
Status server_impl::setup_multinode() {
    net::transport_options to;
    to.channels = &_channels;
    to.on_receive = [this](net::envelope &&e) { on_node_message(std::move(e)); };
    // A send that finds the peer gone may happen deep inside the fence tracker or the collectives:
    // react from the loop, never re-entrantly (the transport already drops messages to it).
    to.on_peer_lost = [this](uint32_t node, const std::string &why) {
        post([this, node, why] { _liveness->node_lost(node, why, true); });
    };
    to.on_peer_unreachable = [this](uint32_t node, const std::string &why) {
        post([this, node, why] { _liveness->unreachable(node, why, server_clock::now()); });
    };
    // The cap on our open node connections spares those with direct-modex requests outstanding.
    to.max_connections = _opts.multinode.max_connections;
    to.busy = [this](uint32_t node) { return _dmodex && _dmodex->outstanding_to(node); };
    auto t = open_node_transport(_base.get(), _step, _opts.multinode, std::move(to));
    PMIXCPP_RETURN_IF_ERROR(t);
    _net = std::move(t.value());
    _liveness = std::make_unique<node_liveness>(_step.nspace, _step.node_id, _step.node_names, make_liveness_ops());
    coll::manager_options co = fence_options(_step, _opts.multinode);
    co.send = [this](uint32_t node, std::span<const uint8_t> body) { _net->send(node, id_of(node_channel::coll), body); };
    co.send_to = [this](std::span<const uint32_t> nodes, std::span<const uint8_t> body) {
        _net->send_to(nodes, id_of(node_channel::coll), body);
    };
    co.on_done = [this](uint64_t instance, std::vector<coll::node_blob> &&result) {
        if (instance & kGroupInstanceBit) {
            // A group collective: completed from the loop, never inside the group service's start.
            auto held = std::make_shared<std::vector<coll::node_blob>>(std::move(result));
            post([this, instance, held] {
                std::vector<std::pair<uint32_t, std::span<const uint8_t>>> blobs;
                for (const auto &b : *held) blobs.emplace_back(b.node, std::span<const uint8_t>(b.data));
                _groups->collective_done(instance, blobs);
                rearm_timer();
            });
            return;
        }
        // Never re-entrantly into the fence tracker (it may be inside start()).
        if (_in_fence_entry)
            _done_in_entry.emplace_back(instance, std::move(result));
        else
            finish_remote_fence(instance, std::move(result));
    };
    _coll = std::make_unique<coll::fence_manager>(std::move(co));
    PMIXCPP_RETURN_IF_ERROR(add_node_channels());
    PMIXCPP_LOG_VERBOSE("%s: node transport %s at %s", _step.nspace.c_str(), _net->kind(), _net->address().c_str());
    return Status::success();
}

void server_impl::start_bootstrap() {
    exchange_addresses(
        _step, _opts.multinode, *_net, [this](std::function<void()> fn) { post(std::move(fn)); },
        [this](const std::string &message) { fail_multinode(message); });
}

void server_impl::fail_multinode(const std::string &message) {
    _net_error = message;
    const std::string text = "the node transport failed: " + message;
    std::vector<uint64_t> failed;
    for (const auto &[instance, fence] : _remote_fence_nodes) failed.push_back(instance);
    for (uint64_t instance : failed) {
        _remote_fence_nodes.erase(instance);
        if (_coll) _coll->cancel(instance);
        send_fence_outcomes(_fences.remote_done(instance, PMIX_ERR_UNREACH, text));
    }
    for (uint32_t n = 0; n < _step.node_names.size(); ++n)
        if (n != _step.node_id) (void)_dmodex->node_lost(n, text);
    rearm_timer();
}

std::optional<server_clock::time_point> server_impl::remote_deadline(std::optional<server_clock::time_point> asked) const {
    auto limit = server_clock::now() + std::chrono::seconds(_opts.multinode.timeout_sec);
    if (!asked || *asked > limit) return limit;
    return asked;
}

Result<std::vector<uint8_t>> server_impl::encode_ranks(const std::vector<uint32_t> &ranks, uint64_t since) const {
    std::vector<wire::rank_data_entry> entries;
    for (uint32_t r : ranks) {
        if (!_kvs.has_committed(r)) continue;
        auto data = _kvs.visible_data(r, relation::other_node, false, since);
        PMIXCPP_RETURN_IF_ERROR(data);
        if (data->empty()) continue;
        entries.push_back({r, std::move(data.value())});
    }
    wire::Writer w;
    PMIXCPP_RETURN_IF_ERROR(wire::encode_rank_data(w, entries));
    return w.take();
}

// Every rank checked before anything is stored: a bad message leaves no trace.
Status server_impl::check_ranks(uint32_t from_node, const std::vector<wire::rank_data_entry> &entries) const {
    for (const auto &e : entries)
        if (e.rank >= _step.ntasks || _node_of[e.rank] != from_node)
            return Status(PMIX_ERR_BAD_PARAM, "data of rank " + std::to_string(e.rank) + " from node " +
                                                  std::to_string(from_node) + ", which does not host it");
    return Status::success();
}

// A fence's data: decoded once, and the decoded values go into the store as they are.
Status server_impl::store_ranks(uint32_t from_node, std::span<const uint8_t> bytes, std::vector<uint32_t> *ranks) {
    if (bytes.empty()) return Status::success();  // a fence without data
    std::vector<wire::rank_data_entry> entries;
    PMIXCPP_RETURN_IF_ERROR(wire::decode_rank_data(bytes, _step.ntasks, &entries));
    PMIXCPP_RETURN_IF_ERROR(check_ranks(from_node, entries));
    for (auto &e : entries) {
        PMIXCPP_RETURN_IF_ERROR(_kvs.commit_adopting(e.rank, e.infos));
        if (ranks) ranks->push_back(e.rank);
    }
    return Status::success();
}

Status server_impl::store_ranks(uint32_t from_node, const std::vector<wire::rank_data_entry> &entries,
                                std::vector<uint32_t> *ranks) {
    PMIXCPP_RETURN_IF_ERROR(check_ranks(from_node, entries));
    for (const auto &e : entries) {
        std::vector<uint8_t> scopes(e.infos.size(), PMIX_GLOBAL);
        PMIXCPP_RETURN_IF_ERROR(_kvs.commit(e.rank, scopes.data(), e.infos.data(), e.infos.size()));
        if (ranks) ranks->push_back(e.rank);
    }
    return Status::success();
}

Status server_impl::start_remote_fence(uint64_t instance, const std::vector<uint32_t> &participants, bool collect) {
    if (!_net || !_coll || !_net_error.empty())
        return Status(PMIX_ERR_NOT_SUPPORTED, "the node transport is not running" +
                                                  (_net_error.empty() ? std::string() : ": " + _net_error));
    std::vector<uint32_t> nodes, local;
    for (uint32_t r : participants) {
        nodes.push_back(_node_of[r]);
        if (is_local(r)) local.push_back(r);
    }
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    for (uint32_t n : nodes)
        if (node_is_lost(n))
            return Status(PMIX_ERR_NODE_DOWN, "node " + _step.node_names.at(n) + " of the fence is lost");
    // A collecting fence of every rank sends what the local ranks committed since the last such
    // fence completed: every node holds the rest already. (A node that failed to store it fetches
    // what it lacks by direct modex, as for any key it does not hold.)
    std::vector<uint32_t> distinct(participants);
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    const bool whole_step = collect && distinct.size() == _step.ntasks && !distinct.empty() &&
                            distinct.back() == _step.ntasks - 1;
    std::vector<uint8_t> blob;
    const uint64_t generation = _kvs.generation();
    if (collect) {
        auto b = encode_ranks(local, whole_step ? _whole_step_base : 0);
        PMIXCPP_RETURN_IF_ERROR(b, "fence contribution");
        blob = std::move(b.value());
    }
    _remote_fence_nodes[instance] = {nodes, whole_step ? generation : 0};
    _coll->start(instance, coll::signature_of(participants), std::move(nodes), std::move(blob), collect);
    return Status::success();
}

std::string server_impl::missing_nodes(uint64_t instance) const {
    if (!_coll) return {};
    std::string out;
    for (uint32_t n : _coll->missing(instance))
        out += (out.empty() ? "" : ",") + _step.node_names.at(n);
    if (!_net_error.empty()) out += (out.empty() ? "" : "; ") + ("node transport: " + _net_error);
    else if (_net && !_net->has_peers()) out += (out.empty() ? "" : "; ") + std::string("node addresses never arrived");
    return out;
}

void server_impl::finish_remote_fence(uint64_t instance, std::vector<coll::node_blob> &&result) {
    auto f = _remote_fence_nodes.find(instance);
    if (f == _remote_fence_nodes.end()) return;  // failed meanwhile (a node was lost)
    const uint64_t whole_step_generation = f->second.whole_step_generation;
    _remote_fence_nodes.erase(f);
    pmix_status_t status = PMIX_SUCCESS;
    std::string message;
    std::vector<uint32_t> ranks;
    for (const auto &b : result) {
        if (b.node == _step.node_id) continue;
        Status st = store_ranks(b.node, b.data, &ranks);
        if (!st.ok()) {
            status = st.code() == PMIX_SUCCESS ? PMIX_ERROR : st.code();
            message = "data from node " + _step.node_names.at(b.node) + ": " + st.message();
            PMIXCPP_LOG_ERROR("%s: fence %llu: %s", _step.nspace.c_str(), static_cast<unsigned long long>(instance),
                              message.c_str());
        }
    }
    if (status == PMIX_SUCCESS && whole_step_generation > _whole_step_base) _whole_step_base = whole_step_generation;
    send_fence_outcomes(_fences.remote_done(instance, status, message));
    for (uint32_t r : ranks) _dmodex->data_stored(r);  // the Gets of remote ranks wait there
}

// Every node channel's handler (node_channels.h): each service registers its own; the shell
// registers the collectives' (plugin/coll knows no server) and a spawn's process sets.
Status server_impl::add_node_channels() {
    PMIXCPP_RETURN_IF_ERROR(_channels.add(node_channel::coll, "collective", [this](uint32_t from, std::span<const uint8_t> body) {
        if (_coll) _coll->receive(from, body);
    }));
    PMIXCPP_RETURN_IF_ERROR(_channels.add(node_channel::spawn_psets, "spawn process sets",
                                          [this](uint32_t from, std::span<const uint8_t> body) { on_spawn_psets(from, body); }));
    PMIXCPP_RETURN_IF_ERROR(_dmodex->add_channels(_channels));
    PMIXCPP_RETURN_IF_ERROR(_events->add_channels(_channels));
    PMIXCPP_RETURN_IF_ERROR(_liveness->add_channels(_channels));
    PMIXCPP_RETURN_IF_ERROR(_dyn->add_channels(_channels));
    PMIXCPP_RETURN_IF_ERROR(_groups->add_channels(_channels));
    return _proc_table->add_channels(_channels);
}

void server_impl::on_node_message(net::envelope &&env) {
    // The transport refuses a channel nothing registered, so a handler is always there.
    if (!_channels.dispatch(env.src_node, env.chan, env.body))
        PMIXCPP_LOG_ERROR("%s: message on channel %u from node %u dropped: no handler", _step.nspace.c_str(),
                          static_cast<unsigned>(env.chan), env.src_node);
    rearm_timer();
}

void server_impl::on_spawn_psets(uint32_t from, std::span<const uint8_t> body) {
    wire::spawn_psets_message m;
    if (Status st = wire::decode(body, kMaxSpawnPsetStep, &m); !st.ok())
        PMIXCPP_LOG_ERROR("%s: bad spawn process sets from node %u dropped: %s", _step.nspace.c_str(), from,
                          st.message().c_str());
    else
        spawn_psets(m.child, m.child_size, false);
}

proc_table_ops server_impl::make_proc_table_ops() {
    proc_table_ops o;
    o.send = [this](uint32_t node, node_channel chan, std::vector<uint8_t> body) { send_node(node, chan, body); };
    o.local_rows = [this] { return local_proc_rows(); };
    o.lost = [this](uint32_t node) { return !_net || node_is_lost(node); };
    o.gone = [this](uint32_t node) { return _net && _net->said_goodbye(node); };
    return o;
}

// This node's ranks: pid (Slurm's task record, else the one it connected with), state and exit
// code (from Slurm once the task was reaped; before that from its connection), executable.
std::vector<proc_row> server_impl::local_proc_rows() {
    std::vector<proc_row> out;
    for (uint32_t r : _step.local_ranks()) {
        if (r >= _step.ntasks) continue;
        proc_row p;
        p.rank = r;
        server_host::task_status t = _host ? _host->task(r) : server_host::task_status{};
        pid_t pid = t.pid > 0 ? t.pid : _rank_pid[r];
        if (pid <= 0 && _rank_conn[r] != 0)
            if (connection *c = find(_rank_conn[r])) pid = c->pid;
        p.pid = pid > 0 ? pid : 0;
        const rank_state rs = _rank_state[r];
        if (t.exited) {
            if (WIFSIGNALED(t.wait_status)) {
                p.state = PMIX_PROC_STATE_ABORTED_BY_SIG;
                p.exit_code = 128 + WTERMSIG(t.wait_status);
            } else {
                p.exit_code = WIFEXITED(t.wait_status) ? WEXITSTATUS(t.wait_status) : 0;
                p.state = p.exit_code != 0          ? PMIX_PROC_STATE_TERM_NON_ZERO
                          : rs == rank_state::died  ? PMIX_PROC_STATE_TERM_WO_SYNC
                                                    : PMIX_PROC_STATE_TERMINATED;
            }
        } else {
            switch (rs) {
            case rank_state::connected: p.state = PMIX_PROC_STATE_RUNNING; break;
            case rank_state::finalized:  // after PMIx_Finalize: running until its connection ends
                p.state = _rank_conn[r] != 0 ? PMIX_PROC_STATE_RUNNING : PMIX_PROC_STATE_TERMINATED;
                break;
            case rank_state::died: p.state = PMIX_PROC_STATE_TERM_WO_SYNC; break;
            case rank_state::not_connected:
                p.state = p.pid > 0 ? PMIX_PROC_STATE_RUNNING : PMIX_PROC_STATE_LAUNCH_UNDERWAY;
                break;
            }
            if (_rank_exe[r].empty() && p.pid > 0) {
                // Before its exec the task is a fork of slurmstepd: its /proc/<pid>/exe names
                // slurmstepd. A rank that has connected has exec'd: only then is the name kept.
                std::string exe = executable_of(p.pid);
                if (rs != rank_state::not_connected)
                    _rank_exe[r] = std::move(exe);
                else if (exe != executable_of(getpid()))
                    p.executable = std::move(exe);
            }
        }
        if (!_rank_exe[r].empty()) p.executable = _rank_exe[r];
        out.push_back(std::move(p));
    }
    return out;
}

node_liveness_ops server_impl::make_liveness_ops() {
    node_liveness_ops o;
    o.send = [this](uint32_t node, node_channel chan, std::vector<uint8_t> body) { send_node(node, chan, body); };
    o.said_goodbye = [this](uint32_t node) { return _net && _net->said_goodbye(node); };
    o.peer_alive = [this](uint32_t node) { return _net && _net->peer_alive(node); };
    o.forget = [this](uint32_t node) {
        if (_net) _net->forget(node);
    };
    o.lost = [this](uint32_t node, const std::string &why) { on_node_lost(node, why); };
    return o;
}

void server_impl::on_node_lost(uint32_t node, const std::string &why) {
    const std::string &name = _step.node_names.at(node);
    _events->node_down(node, why);
    _groups->node_lost(node);
    _proc_table->node_lost(node);
    std::string text = "node " + name + " is lost: " + why;
    std::vector<uint64_t> failed;
    for (const auto &[instance, fence] : _remote_fence_nodes)
        if (std::binary_search(fence.nodes.begin(), fence.nodes.end(), node)) failed.push_back(instance);
    for (uint64_t instance : failed) {
        _remote_fence_nodes.erase(instance);
        if (_coll) _coll->cancel(instance);
        send_fence_outcomes(_fences.remote_done(instance, PMIX_ERR_NODE_DOWN, text));
    }
    size_t gets = _dmodex->node_lost(node, text);  // the Gets of its ranks wait there
    if (!failed.empty() || gets > 0)
        PMIXCPP_LOG_VERBOSE("%s: %zu fences and %zu gets failed with node %s", _step.nspace.c_str(), failed.size(),
                            gets, name.c_str());
    rearm_timer();
}

xstep_relay_ops server_impl::make_xstep_ops() {
    xstep_relay_ops o;
    if (_opts.agent)
        o.send = [this](std::vector<uint8_t> body, int timeout_ms, xstep_relay_ops::done_fn done) {
            _opts.agent->call(agent::service::xstep, std::move(body), timeout_ms, std::move(done));
        };
    o.has = [this](uint32_t rank, const std::string &key, relation rel) {
        return key.empty() ? _kvs.has_committed(rank) : _kvs.has(rank, key, rel);
    };
    o.data = [this](uint32_t rank, relation rel) { return _kvs.visible_data(rank, rel); };
    o.gone = [this](uint32_t rank) -> std::string {
        if (rank >= _rank_state.size()) return {};
        if (_rank_state[rank] == rank_state::died) return "died";
        if (_rank_state[rank] == rank_state::finalized) return "finalized";
        return {};
    };
    o.event = [this](std::span<const uint8_t> payload) { return _events->from_remote(payload); };
    o.job_control = [this](const std::vector<uint32_t> &ranks, int signal, bool terminate) {
        _dyn->job_control_of_other_step(ranks, signal, terminate);
    };
    o.jobdata = [this] { return wire::encode_jobdata(_jobdata_entries); };  // a spawner's OpenPMIx client
    return o;
}

dmodex_config server_impl::make_dmodex_config() const {
    dmodex_config c;
    c.nspace = _step.nspace;
    c.self_node = _step.node_id;
    c.node_names = _step.node_names;
    c.node_of = _node_of;
    c.local_ranks = _step.local_ranks();
    c.timeout_sec = _opts.multinode.timeout_sec;
    c.whole_node = _opts.multinode.dmodex_node;
    return c;
}

dmodex_ops server_impl::make_dmodex_ops() {
    dmodex_ops o;
    o.send_request = [this](uint32_t node, std::vector<uint8_t> body) {
        send_node(node, node_channel::dmodex_request, body);
    };
    o.send_reply = [this](uint32_t node, std::vector<uint8_t> body) {
        send_node(node, node_channel::dmodex_reply, body);
    };
    o.answer = [this](const get_waiter &w) { answer_get(w); };
    o.fail = [this](const get_waiter &w, pmix_status_t status, const std::string &message) {
        fail_get(w, status, message);
    };
    // The requests of one round of client messages go out together, one message per node.
    o.defer = [this](std::function<void()> fn) { post(std::move(fn)); };
    o.has = [this](uint32_t requester, uint32_t rank, const std::string &key) {
        return key.empty() ? _kvs.has_committed(rank) : _kvs.has(rank, key, relation_of(requester, rank));
    };
    o.encode_ranks = [this](const std::vector<uint32_t> &ranks) { return encode_ranks(ranks); };
    o.store = [this](uint32_t from, const std::vector<wire::rank_data_entry> &entries, std::vector<uint32_t> *ranks) {
        return store_ranks(from, entries, ranks);
    };
    o.gone = [this](uint32_t rank) -> std::string {
        if (rank >= _rank_state.size()) return {};
        if (_rank_state[rank] == rank_state::died) return "died";
        if (_rank_state[rank] == rank_state::finalized) return "finalized";
        return {};
    };
    return o;
}

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

uint16_t pmix_server::native_port() const { return _impl->native_port(); }

void pmix_server::stop() {
    if (_impl) _impl->stop();
}

void pmix_server::post(std::function<void()> fn) {
    if (_impl) _impl->post(std::move(fn));
}

void pmix_server::from_other_steps(std::vector<xstep::inbox_item> items) {
    if (!_impl) return;
    auto held = std::make_shared<std::vector<xstep::inbox_item>>(std::move(items));
    server_impl *impl = _impl.get();
    _impl->post([impl, held] {
        for (const auto &i : *held) impl->from_other_step(i);
    });
}

const std::string &pmix_server::jobdata_path() const { return _impl->jobdata_path(); }

std::vector<std::string> pmix_server::lost_nodes() const { return _impl ? _impl->lost_nodes() : std::vector<std::string>{}; }

}  // namespace pmixcpp::server
