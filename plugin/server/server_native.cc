// The native listener of the server: OpenPMIx's own clients (plugin/native) on a TCP port of
// 127.0.0.1, their handshake, and their requests translated into the server's own (server_impl.h).
#include "server_impl.h"

#include <algorithm>

#include "../native/requests_dyn.h"

namespace pmixcpp::server {

// ------------------------------------------------------------------------------------------
// The native listener: OpenPMIx's own clients (plugin/native) on a TCP port of 127.0.0.1.
//
// Who may connect: the kernel's socket table (sock_diag) must name the job's user as the owner
// of the client's socket, checked at accept before a byte is read; the handshake must name this
// step's namespace and a local rank not connected already (the self-asserted native credential
// must agree with the kernel). Pending connections are bounded as on the node transport's
// listener (listener_guard.h: caps per peer and in all, a 10 s handshake deadline, rate-limited
// refusal lines).

Status server_impl::setup_native() {
    net::listener_limits limits;
    limits.auth_timeout = std::chrono::seconds(10);
    _native_guard = std::make_unique<net::listener_guard>(_step.nspace + ": native listener", limits);
    _native_fd = unique_fd(socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (_native_fd.get() < 0) return sys_error("socket");
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    if (bind(_native_fd.get(), reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) != 0)
        return sys_error("bind 127.0.0.1");
    if (listen(_native_fd.get(), SOMAXCONN) != 0) return sys_error("listen");
    socklen_t len = sizeof(addr);
    if (getsockname(_native_fd.get(), reinterpret_cast<sockaddr *>(&addr), &len) != 0) return sys_error("getsockname");
    _native_port = ntohs(addr.sin_port);
    _ev_native.reset(event_new(_base.get(), _native_fd.get(), EV_READ | EV_PERSIST, on_native_accept, this));
    if (!_ev_native || event_add(_ev_native.get(), nullptr) != 0) return Status(PMIX_ERROR, "event_new failed");
    PMIXCPP_LOG_VERBOSE("%s: OpenPMIx clients served on 127.0.0.1:%u", _step.nspace.c_str(),
                        static_cast<unsigned>(_native_port));
    return Status::success();
}

void server_impl::on_native_accept(evutil_socket_t, short, void *arg) {
    auto *self = static_cast<server_impl *>(arg);
    guarded("native accept", [&] {
        self->accept_native();
        self->rearm_timer();
    });
}

void server_impl::on_native_resume(evutil_socket_t, short, void *arg) {
    auto *self = static_cast<server_impl *>(arg);
    guarded("native accept resume", [&] {
        if (!self->_native_paused || !self->_ev_native) return;
        self->_native_paused = false;
        event_add(self->_ev_native.get(), nullptr);
        self->accept_native();
        self->rearm_timer();
    });
}

void server_impl::accept_native() {
    while (!_native_paused) {
        sockaddr_storage peer{};
        socklen_t plen = sizeof(peer);
        int fd = accept4(_native_fd.get(), reinterpret_cast<sockaddr *>(&peer), &plen, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ECONNABORTED) return;
            if (_native_guard->accept_failed(errno)) {
                timeval tv{};
                tv.tv_usec = static_cast<suseconds_t>(
                    std::chrono::duration_cast<std::chrono::microseconds>(_native_guard->limits().accept_pause).count());
                if (event_base_once(_base.get(), -1, EV_TIMEOUT, on_native_resume, this, &tv) == 0) {
                    event_del(_ev_native.get());
                    _native_paused = true;
                }
            }
            return;
        }
        unique_fd guard(fd);
        const std::string label = net::peer_label(fd, peer);
        uint64_t inode = 0;
        const long uid = net::local_peer_uid(fd, &inode);
        if (uid < 0 || static_cast<uid_t>(uid) != _step.uid) {
            _native_guard->refused(label, uid < 0 ? "the kernel does not name the socket's owner"
                                                  : "uid " + std::to_string(uid) + " is not the job's user (uid " +
                                                        std::to_string(_step.uid) + ")");
            continue;
        }
        // As on the Unix socket: only processes of this step (descendants of this slurmstepd),
        // found by the socket they hold.
        auto proc = process_ref::holding_socket(inode, _step.uid, getpid());
        const bool ours = proc.ok() && proc.value()->descends_from(getpid());
        if (!ours && (proc.ok() ? proc.value()->gone() : proc.status().code() == PMIX_ERR_NOT_FOUND)) {
            PMIXCPP_LOG_VERBOSE("%s: the OpenPMIx client at %s exited before its connection was accepted",
                                _step.nspace.c_str(), label.c_str());
            continue;
        }
        if (!proc.ok()) {
            _native_guard->refused(label, proc.status().message());
            continue;
        }
        if (!ours) {
            _native_guard->refused(label, "pid " + std::to_string(proc.value()->pid()) + " is not a process of this step");
            continue;
        }
        native::session_policy policy;
        policy.uid = _step.uid;
        policy.gid = _step.gid;
        policy.nspace = _step.nspace;
        policy.nranks = _step.ntasks;
        policy.rank_is_local = [this](pmix_rank_t r) { return is_local(r); };
        policy.job_blob = [this](native::int_flavour f) { return native_blob(f); };
        auto c = std::make_unique<connection>(kConnectMaxPayload);
        c->native = std::make_unique<native_link>(_opts.max_payload, std::move(policy), label);
        c->id = _next_conn++;
        c->uid = static_cast<uid_t>(uid);
        c->pid = proc.value()->pid();
        c->proc = std::move(proc.value());
        c->server = this;
        c->fd = std::move(guard);
        c->ev_read.reset(event_new(_base.get(), c->fd.get(), EV_READ | EV_PERSIST, on_read, c.get()));
        c->ev_write.reset(event_new(_base.get(), c->fd.get(), EV_WRITE | EV_PERSIST, on_write, c.get()));
        if (!c->ev_read || !c->ev_write || event_add(c->ev_read.get(), nullptr) != 0) {
            PMIXCPP_LOG_ERROR("%s: cannot watch the native connection from %s: event setup failed",
                              _step.nspace.c_str(), label.c_str());
            continue;
        }
        uint64_t id = c->id;
        _conns.emplace(id, std::move(c));
        for (uint64_t evicted : _native_guard->admit(id, label)) close_connection(evicted, "refused");
    }
}

void server_impl::read_native(uint64_t conn_id) {
    uint8_t buf[65536];
    for (int rounds = 0; rounds < 16; ++rounds) {  // bounded: let other clients run too
        connection *c = find(conn_id);
        if (!c) return;
        ssize_t n = recv(c->fd.get(), buf, sizeof(buf), 0);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) return;
            if (c->state == conn_state::awaiting_connect && _native_guard->abandoned(c->native->peer, errno)) {
                close_connection(conn_id, "refused");
                return;
            }
            close_connection(conn_id, std::string("read error: ") + strerror(errno));
            return;
        }
        if (n == 0) {
            if (c->state == conn_state::awaiting_connect) {
                _native_guard->abandoned(c->native->peer, 0);
                close_connection(conn_id, "refused");
                return;
            }
            close_connection(conn_id, "closed by the client");
            return;
        }
        size_t off = 0;
        while (off < static_cast<size_t>(n)) {
            c = find(conn_id);
            if (!c || c->overflowed || c->close_after_flush) return;
            native_link &nl = *c->native;
            size_t take = std::min(nl.reader.wanted(), static_cast<size_t>(n) - off);
            Status st = nl.reader.feed(buf + off, take);
            off += take;
            if (!st.ok()) {
                if (c->state == conn_state::awaiting_connect) {
                    _native_guard->refused(nl.peer, "bad handshake: " + st.message());
                    close_connection(conn_id, "refused");
                } else {
                    close_connection(conn_id, "malformed OpenPMIx message: " + st.message());
                }
                return;
            }
            if (!nl.reader.complete()) continue;
            if (!native_message(*c)) return;
            if (connection *still = find(conn_id)) still->native->reader.next();
        }
        if (static_cast<size_t>(n) < sizeof(buf)) return;
    }
}

void server_impl::native_send(connection &c, uint32_t tag, std::span<const uint8_t> payload) {
    auto frame = native::frame_message(tag, payload);
    if (queue_output(c, frame) == queued::ok) flush(c);
}

void server_impl::native_refuse(connection &c, std::span<const uint8_t> answer, const std::string &why) {
    _native_guard->refused(c.native->peer, why);
    c.close_after_flush = true;
    if (answer.empty() || queue_output(c, answer) != queued::ok) {
        close_connection(c.id, "refused");
        return;
    }
    flush(c);  // closes once the answer is out
}

Result<std::vector<uint8_t>> server_impl::native_blob(native::int_flavour f) {
    if (auto it = _native_blobs.find(f); it != _native_blobs.end()) return it->second;
    // OpenPMIx's gds/hash takes every rank's keys with the job: the full form, expanded from the
    // layout for the first native client (O(ranks), as that protocol is).
    std::vector<wire::jobdata_entry> expanded;
    if (_job_layout) {
        PMIXCPP_ASSIGN_OR_RETURN(expanded, expand_jobdata(_jobdata_entries, *_job_layout));
    }
    PMIXCPP_ASSIGN_OR_RETURN(
        auto blob, native::pack_job_blob(f, native_job_blob(_step.nspace, _job_layout ? expanded : _jobdata_entries)));
    return _native_blobs.emplace(f, std::move(blob)).first->second;
}

bool server_impl::native_handshake(connection &c, std::span<const uint8_t> payload) {
    const uint64_t id = c.id;
    native::session::action a = c.native->session.on_handshake(payload, c.uid);
    if (a.close) {
        native_refuse(c, a.out, a.why.message());
        return false;
    }
    const uint32_t rank = c.native->session.rank();
    std::string why = rank_claim_refusal(c, rank);
    if (!why.empty()) {
        auto nack = native::encode_client_ack(PMIX_ERR_NO_PERMISSIONS, 0);
        native_refuse(c, nack, "handshake as rank " + std::to_string(rank) + ": " + why);
        return false;
    }
    _native_guard->authenticated(id);
    if (queue_output(c, a.out) != queued::ok) return false;
    flush(c);
    if (!find(id)) return false;
    admit_rank(c, rank);
    PMIXCPP_LOG_DEBUG("%s: rank %u: OpenPMIx %s client (bfrops %s, %s) from %s", _step.nspace.c_str(), rank,
                      c.native->session.peer().version.c_str(), c.native->session.peer().bfrops.c_str(),
                      native::to_string(c.native->session.flavour()), c.native->peer.c_str());
    _events->rank_connected(rank);
    return find(id) != nullptr;
}

template <typename M>
bool server_impl::native_forward(connection &c, uint32_t tag, native::command cmd, wire::msg_type type, const M &m,
                                 const pmix_proc_t &proc) {
    wire::Writer w;
    if (Status st = wire::encode(w, m); !st.ok()) {
        PMIXCPP_LOG_ERROR("%s: rank %u: OpenPMIx request %u: %s", _step.nspace.c_str(), c.rank,
                          static_cast<unsigned>(cmd), st.message().c_str());
        native_send(c, tag, native::encode_status_reply(c.native->session.flavour(), st.code()));
        return find(c.id) != nullptr;
    }
    return native_forward_raw(c, tag, cmd, type, w.take(), proc);
}

bool server_impl::native_forward_raw(connection &c, uint32_t tag, native::command cmd, wire::msg_type type,
                                     std::vector<uint8_t> payload, const pmix_proc_t &proc, native_grp_note grp) {
    native_link &nl = *c.native;
    uint32_t id = nl.next_request++;
    if (id == 0) id = nl.next_request++;
    nl.requests[id] = native_link::pending{tag, cmd, proc, std::move(grp)};
    wire::Frame f;
    f.type = static_cast<uint16_t>(type);
    f.id = id;
    f.payload = std::move(payload);
    return dispatch(c, f);
}

void server_impl::native_reply(connection &c, uint32_t request_id, pmix_status_t status,
                               const std::function<Status(wire::Writer &)> &body) {
    native_link &nl = *c.native;
    auto it = nl.requests.find(request_id);
    if (it == nl.requests.end()) {
        // Our connect refusal path never runs for these; anything else is a bug worth a line.
        PMIXCPP_LOG_ERROR("%s: rank %u: a reply to unknown OpenPMIx request %u dropped", _step.nspace.c_str(), c.rank,
                          request_id);
        return;
    }
    const native_link::pending p = it->second;
    nl.requests.erase(it);
    const native::int_flavour f = nl.session.flavour();
    std::vector<uint8_t> payload;
    if (p.cmd == native::command::getnb && status == PMIX_SUCCESS && body) {
        // Our reply body is the proc's data as an info array: the same data in OpenPMIx's form.
        wire::Writer w;
        InfoArray data;
        Status st = body(w);
        if (st.ok()) st = wire::decode_info_array_exact(w.data(), &data);
        if (st.ok()) {
            std::vector<pmix_info_t> kept;  // borrowed from `data`
            for (size_t i = 0; i < data.size(); ++i)
                if (!native_left_out(data[i])) kept.push_back(data[i]);
            auto r = native::encode_get_reply(f, p.proc, kept.data(), kept.size());
            if (r.ok()) payload = std::move(r.value());
            else st = r.status();
        }
        if (!st.ok()) {
            PMIXCPP_LOG_ERROR("%s: cannot encode the reply to rank %u's get in OpenPMIx's format: %s",
                              _step.nspace.c_str(), c.rank, st.message().c_str());
            payload = native::encode_status_reply(f, st.code() == PMIX_SUCCESS ? PMIX_ERROR : st.code());
        }
    } else if (static_cast<uint8_t>(p.cmd) == native::kCmdSpawn && status == PMIX_SUCCESS && body) {
        // The children's namespace; their job data is asked of their step before the reply.
        wire::Writer w;
        wire::spawn_reply m;
        Status st = body(w);
        if (st.ok()) {
            wire::Reader r(w.data());
            st = wire::decode(r, &m);
        }
        if (st.ok()) {
            native_spawned(c.id, p.tag, m.nspace);
            return;
        }
        PMIXCPP_LOG_ERROR("%s: rank %u: spawn reply: %s", _step.nspace.c_str(), c.rank, st.message().c_str());
        payload = native::encode_status_reply(f, st.code() == PMIX_SUCCESS ? PMIX_ERROR : st.code());
    } else if (native_grp_command(static_cast<uint8_t>(p.cmd)) ||
               (status == PMIX_SUCCESS && native_dyn_command(static_cast<uint8_t>(p.cmd)))) {
        // Query (the results), log, group construct (members and context id) and destruct, for
        // any status; spawn (the children's namespace), lookup (the data found), connect (the
        // other jobs' data) when they succeeded: our reply's body re-encoded by the request's file.
        wire::Writer w;
        Status st = status == PMIX_SUCCESS && body ? body(w) : Status::success();
        const auto cmd = static_cast<uint8_t>(p.cmd);
        Result<std::vector<uint8_t>> r(st);
        if (st.ok())
            r = native_grp_command(cmd) ? nl.groups.reply(cmd, f, native::parse_release(nl.session.peer().version),
                                                          status, w.data(), p.grp)
                                        : native_dyn_reply(cmd, f, w.data());
        if (r.ok()) {
            payload = std::move(r.value());
        } else {
            PMIXCPP_LOG_ERROR("%s: cannot encode the reply to rank %u's request %u in OpenPMIx's format: %s",
                              _step.nspace.c_str(), c.rank, static_cast<unsigned>(cmd), r.status().message().c_str());
            payload = native::encode_status_reply(f, r.status().code());
        }
    } else {
        payload = native::encode_status_reply(f, status);
    }
    native_send(c, p.tag, payload);
}

void server_impl::native_spawned(uint64_t conn_id, uint32_t tag, const std::string &child) {
    // Answers the spawner: with the job data when it came, else (no other steps to ask, the
    // child step did not answer) with the namespace alone, as before the data could be asked.
    auto answer = [this, conn_id, tag, child](std::span<const uint8_t> jobdata, const std::string &why) {
        connection *c = find(conn_id);
        if (c == nullptr || !c->native) return;
        const native::int_flavour f = c->native->session.flavour();
        Result<std::vector<uint8_t>> r(Status(PMIX_ERR_NOT_FOUND, why));
        if (why.empty()) r = native_spawn_reply(f, child, jobdata);
        if (!r.ok()) {
            PMIXCPP_LOG_VERBOSE("%s: rank %u: the spawn reply names %s without its job data: %s",
                                _step.nspace.c_str(), c->rank, child.c_str(), r.status().message().c_str());
            r = native::encode_spawn_reply(f, PMIX_SUCCESS, child);
        }
        native_send(*c, tag, r.ok() ? r.value() : native::encode_status_reply(f, r.status().code()));
    };
    if (!_opts.agent) return answer({}, "no other steps to ask");
    constexpr uint32_t kTimeoutMs = 30000;  // the child step's node 0 starts its server
    xstep::message m;
    m.what = xstep::op::get;
    m.nspace = child;
    m.rank = PMIX_RANK_WILDCARD;
    m.key = xstep::kJobdataKey;
    m.from_nspace = _step.nspace;
    m.from_node = _step.node_name();
    m.timeout_ms = kTimeoutMs;
    auto body = xstep::encode(m);
    if (!body.ok()) return answer({}, body.status().message());
    _opts.agent->call(services::service::xstep, std::move(body.value()), static_cast<int>(kTimeoutMs) + 10000,
                      [this, answer](int status, const std::string &message, std::vector<uint8_t> reply) {
                          auto held = std::make_shared<std::vector<uint8_t>>(std::move(reply));
                          post([answer, status, message, held] {
                              answer(*held, status == PMIX_SUCCESS ? std::string()
                                            : message.empty() ? "status " + std::to_string(status) : message);
                          });
                      });
}

void server_impl::native_note_group(connection &c, pmix_status_t status, const InfoArray &infos) {
    if (c.native && status == PMIX_GROUP_LEFT) {  // a member left: the client's record drops it
        const pmix_info_t *id = find_info(infos, PMIX_GROUP_ID);
        const pmix_info_t *who = find_info(infos, PMIX_EVENT_AFFECTED_PROC);
        if (id != nullptr && id->value.type == PMIX_STRING && id->value.data.string != nullptr && who != nullptr &&
            who->value.type == PMIX_PROC && who->value.data.proc != nullptr) {
            pmix_proc_t p = *who->value.data.proc;
            p.nspace[PMIX_MAX_NSLEN] = '\0';
            std::string name(id->value.data.string, strnlen(id->value.data.string, PMIX_MAX_NSLEN));
            if (!c.native->groups.member_left(name, p))
                PMIXCPP_LOG_DEBUG("%s: rank %u: rank %u left group %s before its construct ended here (kept)",
                                    _step.nspace.c_str(), c.rank, p.rank, name.c_str());
        }
        return;
    }
    std::string name;
    std::vector<pmix_proc_t> members;
    if (!c.native || !native_invited_group(status, infos, max_procs(), &name, &members)) return;
    if (name == _step.nspace) return;
    const bool member = std::any_of(members.begin(), members.end(), [&](const pmix_proc_t &p) {
        return strncmp(p.nspace, _step.nspace.c_str(), PMIX_MAX_NSLEN) == 0 &&
               (p.rank == c.rank || p.rank == PMIX_RANK_WILDCARD);
    });
    if (!member) return;
    PMIXCPP_LOG_DEBUG("%s: rank %u is a member of group %s (%zu procs, made by invitation)", _step.nspace.c_str(),
                      c.rank, name.c_str(), members.size());
    c.native->groups.invited(name, std::move(members));
}

bool server_impl::native_message(connection &c) {
    native_link &nl = *c.native;
    const native::header h = nl.reader.current();
    std::span<const uint8_t> payload = nl.reader.payload();
    if (c.state == conn_state::awaiting_connect) return native_handshake(c, payload);
    const uint64_t id = c.id;
    const native::int_flavour f = nl.session.flavour();
    if (h.tag == native::kTagHeartbeat && payload.empty()) {
        // PMIx_Heartbeat: OpenPMIx's client sends an empty message on this tag, one way
        if (!_monitors->beat(c.rank, server_clock::now()))
            PMIXCPP_LOG_DEBUG("%s: rank %u: a heartbeat without a heartbeat monitor", _step.nspace.c_str(), c.rank);
        return true;
    }
    native::unpacker up(f, payload);
    uint8_t cmd = 0;
    if (Status st = up.unpack(PMIX_COMMAND, &cmd, 1); !st.ok()) {
        close_connection(id, "malformed OpenPMIx message (tag " + std::to_string(h.tag) + "): " + st.message());
        return false;
    }
    auto malformed = [&](const char *what, const Status &st) {
        close_connection(id, std::string("malformed OpenPMIx ") + what + " (tag " + std::to_string(h.tag) +
                                 "): " + st.message());
        return false;
    };
    PMIXCPP_LOG_TRACE("%s: rank %u: OpenPMIx command %u, tag %u (%zu bytes)", _step.nspace.c_str(), c.rank,
                      static_cast<unsigned>(cmd), h.tag, payload.size());
    switch (static_cast<native::command>(cmd)) {
    case native::command::commit: {
        native::commit_data d;
        if (Status st = native::decode_commit(up, &d); !st.ok()) return malformed("commit", st);
        wire::commit_request m;
        m.scopes = std::move(d.scopes);
        m.infos = std::move(d.infos);
        return native_forward(c, h.tag, native::command::commit, wire::msg_type::commit, m);
    }
    case native::command::fencenb: {
        native::fence_data d;
        if (Status st = native::decode_fence(up, &d, max_procs()); !st.ok()) return malformed("fence", st);
        // Procs of other namespaces (after a connect): the protocol engine hands them to the connect service.
        // A group made by invitation stands for its members.
        wire::fence_request m;
        for (const pmix_proc_t &p : d.procs) {
            const std::vector<pmix_proc_t> *members =
                strncmp(p.nspace, _step.nspace.c_str(), PMIX_MAX_NSLEN) != 0
                    ? nl.groups.invited_members(std::string(p.nspace, strnlen(p.nspace, PMIX_MAX_NSLEN)))
                    : nullptr;
            if (members == nullptr) m.procs.push_back(p);
            else m.procs.insert(m.procs.end(), members->begin(), members->end());
        }
        if (m.procs.size() > max_procs()) {  // groups of many members named together
            native_send(c, h.tag, native::encode_status_reply(f, PMIX_ERR_BAD_PARAM));
            return find(id) != nullptr;
        }
        m.infos = std::move(d.infos);
        return native_forward(c, h.tag, native::command::fencenb, wire::msg_type::fence, m);
    }
    case native::command::getnb: {
        native::get_data d;
        if (Status st = native::decode_get(up, &d); !st.ok()) return malformed("get", st);
        if (const pmix_info_t *q = find_info(d.infos, PMIX_GROUP_CONTEXT_ID)) {
            // What a member gave a group (its PMIX_GROUP_LOCAL_CID): from the construct's reply,
            // kept for this connection; pmixcpp's own client answers it from its own copy.
            auto ctxid = value_to_number<uint64_t>(q->value);
            InfoArray found = ctxid.ok() ? nl.groups.member_data(ctxid.value(), d.proc, d.key.c_str()) : InfoArray();
            Result<std::vector<uint8_t>> r = found.empty()
                ? Result<std::vector<uint8_t>>(native::encode_status_reply(f, PMIX_ERR_NOT_FOUND))
                : native::encode_get_reply(f, d.proc, found.data(), found.size());
            native_send(c, h.tag, r.ok() ? r.value() : native::encode_status_reply(f, r.status().code()));
            return find(id) != nullptr;
        }
        // Another namespace's proc: the protocol engine asks the connect service (foreign_get).
        wire::get_request m;
        m.proc = d.proc;
        m.key = std::move(d.key);
        m.infos = std::move(d.infos);
        return native_forward(c, h.tag, native::command::getnb, wire::msg_type::get, m, d.proc);
    }
    case native::command::finalize: {
        if (!up.at_end()) return malformed("finalize", Status(PMIX_ERR_BAD_PARAM, "unexpected bytes"));
        wire::finalize_request m;
        return native_forward(c, h.tag, native::command::finalize, wire::msg_type::finalize, m);
    }
    case native::command::abort: {
        native::abort_data d;
        if (Status st = native::decode_abort(up, &d, max_procs()); !st.ok()) return malformed("abort", st);
        wire::abort_request m;
        m.status = d.status;
        m.message = std::move(d.message);
        m.procs = std::move(d.procs);
        return native_forward(c, h.tag, native::command::abort, wire::msg_type::abort, m);
    }
    case native::command::notify: {
        native::notify_data d;
        if (Status st = native::decode_notify(up, &d); !st.ok()) return malformed("notify", st);
        native_note_group(c, d.status, d.infos);  // the leader of a group made by invitation
        wire::event_notification m;
        m.status = d.status;
        m.range = d.range;
        m.infos = std::move(d.infos);
        strncpy(m.source.nspace, _step.nspace.c_str(), PMIX_MAX_NSLEN);  // the client itself, always
        m.source.rank = c.rank;
        return native_forward(c, h.tag, native::command::notify, wire::msg_type::notify, m);
    }
    case native::command::regevents: {
        native::regevents_data d;
        if (Status st = native::decode_regevents(up, &d); !st.ok()) return malformed("event registration", st);
        // Remembered; delivering events to OpenPMIx clients is not done yet.
        constexpr size_t kMaxCodes = 1024;
        for (pmix_status_t code : d.codes)
            if (nl.event_codes.size() < kMaxCodes) nl.event_codes.push_back(code);
        native_send(c, h.tag, native::encode_status_reply(f, PMIX_SUCCESS));
        return find(id) != nullptr;
    }
    default: {
        if (cmd == native::kCmdGroupLeave) {
            // The leaver is forgotten, the other members are told (PMIX_GROUP_LEFT, as our own
            // client library does it), and the answer is [STATUS].
            std::string name;
            InfoArray directives;
            if (Status st = native::decode_group_leave(up, &name, &directives); !st.ok())
                return malformed("group leave", st);
            pmix_proc_t self{};
            strncpy(self.nspace, _step.nspace.c_str(), PMIX_MAX_NSLEN);
            self.rank = c.rank;
            auto others = nl.groups.leave(name, self);
            if (!others.ok() || others.value().empty()) {
                native_send(c, h.tag, native::encode_status_reply(f, others.ok() ? PMIX_SUCCESS : others.status().code()));
                return find(id) != nullptr;
            }
            bool yes = true;
            wire::event_notification m;
            m.status = PMIX_GROUP_LEFT;
            m.range = PMIX_RANGE_CUSTOM;
            std::vector<pmix_info_t> infos{make_info(PMIX_GROUP_ID, name.c_str(), PMIX_STRING),
                                           procs_info(PMIX_EVENT_CUSTOM_RANGE, others.value()),
                                           make_info(PMIX_EVENT_AFFECTED_PROC, &self, PMIX_PROC),
                                           make_info(PMIX_EVENT_NON_DEFAULT, &yes, PMIX_BOOL)};
            m.infos = to_array(infos);
            m.source = self;
            PMIXCPP_LOG_DEBUG("%s: rank %u leaves group %s (%zu other members told)", _step.nspace.c_str(), c.rank,
                              name.c_str(), others.value().size());
            return native_forward(c, h.tag, static_cast<native::command>(cmd), wire::msg_type::notify, m);
        }
        if (native_grp_command(cmd)) {  // query, log, group construct/destruct
            native_grp_note note;
            auto r = nl.groups.decode(cmd, up, native::parse_release(nl.session.peer().version), max_procs(), &note);
            const pmix_status_t refused = r.ok() ? PMIX_SUCCESS : r.status().code();
            if (refused == PMIX_ERR_NOT_FOUND || refused == PMIX_ERR_OUT_OF_RESOURCE) {
                // A destruct of a group it is not in, a construct beyond the cap: answered here,
                // [STATUS] alone (every client release reads a failed group reply so).
                native_send(c, h.tag, native::encode_status_reply(f, refused));
                return find(id) != nullptr;
            }
            if (!r.ok()) return malformed("group, query or log request", r.status());
            return native_forward_raw(c, h.tag, static_cast<native::command>(cmd), r.value().type,
                                      std::move(r.value().payload), pmix_proc_t{}, std::move(note));
        }
        if (native_dyn_command(cmd)) {  // spawn, publish/lookup/unpublish, connect/disconnect
            auto r = native_dyn_decode(cmd, up, max_procs());
            if (!r.ok()) return malformed("dynamic-process request", r.status());
            return native_forward_raw(c, h.tag, static_cast<native::command>(cmd), r.value().type,
                                      std::move(r.value().payload), pmix_proc_t{});
        }
        // REQ (the job-data blob), DEREGEVENTS (no reply), and PMIX_ERR_NOT_SUPPORTED for the rest.
        native::session::action a = nl.session.on_message(h, payload);
        if (!a.out.empty() && queue_output(c, a.out) == queued::ok) flush(c);
        if (!find(id)) return false;
        if (a.close) {
            close_connection(id, a.why.message());
            return false;
        }
        return true;
    }
    }
}

}  // namespace pmixcpp::server
