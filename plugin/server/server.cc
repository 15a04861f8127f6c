// The I/O shell of the server: sockets, frames, the loop thread. The protocol decisions live in
// the engines (kv_store, fence_tracker, get_waits, dmodex_engine, node_liveness, ...); this file
// reads, dispatches and replies. The class is in server_impl.h; the native listener (OpenPMIx's
// own clients) is in server_native.cc; the requests of the clients go to the engines: the
// protocol engine (engine.h, wired in get_policy.cc), the request engine (requests.h, wired in
// client_requests.cc), jctrl_engine.h, monitor_engine.h, topology_engine.h, remote_fence.h; the
// services' and engines' ops are in engine_ops.cc.
#include "server_impl.h"

#include <algorithm>
#include <future>

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
    _ev_deferred.reset(event_new(_base.get(), -1, 0, on_deferred, this));
    if (!_ev_listen || !_ev_wake || !_ev_timer || !_ev_deferred) return Status(PMIX_ERROR, "event_new failed");
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
    _loop_thread = std::this_thread::get_id();
    event_base_dispatch(_base.get());
    _loop_thread = std::thread::id();
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

void server_impl::defer(std::function<void()> fn) {
    if (!_ev_deferred || std::this_thread::get_id() != _loop_thread.load()) return post(std::move(fn));
    _deferred.push_back(std::move(fn));
    if (_deferred_armed) return;
    _deferred_armed = true;
    event_active(_ev_deferred.get(), EV_TIMEOUT, 1);
}

void server_impl::on_deferred(evutil_socket_t, short, void *arg) {
    auto *self = static_cast<server_impl *>(arg);
    guarded("deferred work", [&] {
        // Work deferred by what runs here waits for the next activation (armed again below).
        std::vector<std::function<void()>> work;
        work.swap(self->_deferred);
        self->_deferred_armed = false;
        for (auto &fn : work) fn();
        self->rearm_timer();
    });
}

// At the step's end here, messages of ours may still wait for a peer's address (the directory
// route asks for it on the first message to a node): a fence's release to a child that has not
// told us its record yet, say. The peer waits for them, so the loop runs on until they left or
// kAddressDrain passed, never longer (a peer whose record never comes).
void server_impl::drain_awaiting_addresses() {
    constexpr auto kAddressDrain = std::chrono::seconds(5);
    if (!_net || !_thread.joinable() || std::this_thread::get_id() == _loop_thread.load()) return;
    const auto start = std::chrono::steady_clock::now();
    size_t waiting = 0;
    for (bool first = true;; first = false) {
        auto answer = std::make_shared<std::promise<size_t>>();
        auto got = answer->get_future();
        post([this, answer] { answer->set_value(_net ? _net->awaiting_address() : 0); });
        if (got.wait_for(std::chrono::seconds(1)) != std::future_status::ready) return;  // the loop is stuck or gone
        waiting = got.get();
        if (waiting == 0) {
            if (!first)
                PMIXCPP_LOG_VERBOSE("%s: step end: the messages that waited for nodes' addresses left after %.0f ms",
                                    _step.nspace.c_str(),
                                    std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
            return;
        }
        if (std::chrono::steady_clock::now() - start >= kAddressDrain) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    PMIXCPP_LOG_WARNING("%s: step end: messages for %zu node(s) never left: their addresses did not come within %lld s",
                        _step.nspace.c_str(), waiting, static_cast<long long>(kAddressDrain.count()));
}

void server_impl::stop() {
    if (_stopped) return;
    drain_awaiting_addresses();
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
    if (_directory) _directory->stop();  // nothing more for the transport
    if (_net) _net->leave(500);  // our closing connections are a normal end, not a lost node
    _net.reset();  // before the event base its events live in
    _finalized.clear();  // their events live in the base
    _ev_native.reset();
    _native_fd.reset();
    _ev_listen.reset();
    _ev_wake.reset();
    _ev_deferred.reset();
    _deferred.clear();
    _ev_timer.reset();
    _base.reset();
    _listen_fd.reset();
    if (_socket_created) {
        if (Status st = _step.dirs->root.remove("server.sock"); !st.ok())
            PMIXCPP_LOG_WARNING("%s: server socket not removed: %s", _step.nspace.c_str(), st.message().c_str());
    }
    _jctrl->remove_cleanups();
    PMIXCPP_LOG_DEBUG("%s: server stopped (%zu connections closed, %zu fences and %zu gets pending)",
                      _step.nspace.c_str(), nconn, _fences.pending(), _engine->waiting() + _dmodex->size() + _xstep->size());
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
    _engine->drop_connection(conn_id);
    _dmodex->drop_connection(conn_id);
    _topology->drop_connection(conn_id);
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
    _jctrl->rank_gone(rank);
    _monitors->rank_gone(rank);
    _groups->rank_left(rank);
    _dmodex->rank_left(rank, died);
    _xstep->rank_left(rank, died);
    _engine->rank_left(rank, died);
}

void server_impl::rearm_timer() {
    std::optional<server_clock::time_point> next = _fences.next_deadline();
    auto g = _engine->next_deadline();
    if (g && (!next || *g < *next)) next = g;
    auto d = _dyn->next_deadline();
    if (d && (!next || *d < *next)) next = d;
    auto gr = _groups->next_deadline();
    if (gr && (!next || *gr < *next)) next = gr;
    auto ta = _time_alert.next_deadline();
    if (ta && (!next || *ta < *next)) next = ta;
    auto hb = _monitors->next_deadline();
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
            if (_jctrl->has_checkpoint_method(r)) ckpt.push_back(r);
        if (!ckpt.empty()) _jctrl->checkpoint(ckpt, "the job reaches its time limit in " + std::to_string(*left) + " s");
    }
    _monitors->expire(now);
    _dmodex->expire(now);
    _xstep->expire(now);
    _proc_table->expire(now);
    if (_native_guard)
        for (uint64_t id : _native_guard->expired()) close_connection(id, "refused");  // logged by the guard
    _engine->expire(now);
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
    case wire::msg_type::connect: _requests->connect(client_of(c), f.id, f.payload); break;
    case wire::msg_type::finalize: _requests->finalize(client_of(c), f.id, f.payload); break;
    case wire::msg_type::abort: _requests->abort(client_of(c), f.id, f.payload); break;
    case wire::msg_type::commit: _engine->commit(client_of(c), f.id, f.payload); break;
    case wire::msg_type::fence: _engine->fence(client_of(c), f.id, f.payload); break;
    case wire::msg_type::get: _engine->get(client_of(c), f.id, f.payload); break;
    case wire::msg_type::job_control: _jctrl->request(c.id, c.rank, f.id, f.payload); break;
    case wire::msg_type::monitor:
        _monitors->request(c.id, c.rank, f.id, f.payload, server_clock::now());
        rearm_timer();  // a monitor added or cancelled
        break;
    case wire::msg_type::log: _requests->log(client_of(c), f.id, f.payload); break;
    case wire::msg_type::notify: _requests->notify(client_of(c), f.id, f.payload); break;
    case wire::msg_type::alloc: _requests->alloc(client_of(c), f.id, f.payload); break;
    case wire::msg_type::query: _requests->query(client_of(c), f.id, f.payload); break;
    case wire::msg_type::publish:
    case wire::msg_type::lookup:
    case wire::msg_type::unpublish: _dyn->on_client(c.id, c.rank, f.type, f.id, f.payload); break;
    case wire::msg_type::spawn: _dyn->on_spawn(c.id, c.rank, f.id, f.payload); break;
    case wire::msg_type::fabric: _requests->fabric(client_of(c), f.id, f.payload); break;
    case wire::msg_type::xconnect: _dyn->on_connect(c.id, c.rank, f.id, connect_op::connect, f.payload); break;
    case wire::msg_type::xdisconnect: _dyn->on_connect(c.id, c.rank, f.id, connect_op::disconnect, f.payload); break;
    case wire::msg_type::group: _requests->group(client_of(c), f.id, f.payload); break;
    case wire::msg_type::snapshot: _requests->snapshot(client_of(c), f.id, f.payload); break;
    default: close_connection(id, "unexpected message type " + std::to_string(f.type)); break;
    }
    connection *still = find(id);
    return still && !still->close_after_flush && !still->overflowed;
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

// ------------------------------------------------------------------------------------------
// Multi-node: the node transport and its channels (loop thread)

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
    // A node whose step ended (or that the transport stopped talking to) needs no more of the
    // directory route's tells or asks (directory.h; thread-safe).
    to.on_peer_left = [this](uint32_t node) {
        if (_directory) _directory->done_with(node);
    };
    // The cap on our open node connections spares those with direct-modex requests outstanding.
    to.max_connections = _opts.multinode.max_connections;
    to.busy = [this](uint32_t node) { return _dmodex && _dmodex->outstanding_to(node); };
    auto t = open_node_transport(_base.get(), _step, _opts.multinode, std::move(to));
    PMIXCPP_RETURN_IF_ERROR(t);
    _net = std::move(t.value());
    _liveness = std::make_unique<node_liveness>(_step.nspace, _step.node_id, _step.node_names, make_liveness_ops(),
                                                coll::tree_width_for(_opts.multinode.tree_width, _step.node_names.size()));
    coll::manager_options co = fence_options(_step, _opts.multinode);
    co.send = [this](uint32_t node, std::span<const uint8_t> body) { _net->send(node, id_of(node_channel::coll), body); };
    co.send_to = [this](std::span<const uint32_t> nodes, std::span<const uint8_t> body) {
        _net->send_to(nodes, id_of(node_channel::coll), body);
    };
    // A collective's completion is posted (README.md, "Re-entrancy"): it may come inside the
    // call that started it (a fence whose other nodes were all early completes inside the fence
    // tracker's enter(), a group's inside the group service's start).
    co.on_done = [this](uint64_t instance, std::vector<coll::node_blob> &&result) {
        auto held = std::make_shared<std::vector<coll::node_blob>>(std::move(result));
        defer([this, instance, held] {
            if (!(instance & kGroupInstanceBit)) {
                _remote_fence->finish(instance, std::move(*held));
                return;
            }
            std::vector<std::pair<uint32_t, std::span<const uint8_t>>> blobs;
            for (const auto &b : *held) blobs.emplace_back(b.node, std::span<const uint8_t>(b.data));
            _groups->collective_done(instance, blobs);
        });
    };
    _coll = std::make_unique<coll::fence_manager>(std::move(co));
    PMIXCPP_RETURN_IF_ERROR(add_node_channels());
    PMIXCPP_LOG_VERBOSE("%s: node transport %s at %s", _step.nspace.c_str(), _net->kind(), _net->address().c_str());
    return Status::success();
}

void server_impl::start_bootstrap() {
    exchange_addresses(
        _step, _opts.multinode, *_net, [this](std::function<void()> fn) { post(std::move(fn)); },
        [this](const std::string &message) { fail_multinode(message); }, &_directory);
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
