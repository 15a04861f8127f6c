// TCP node transport: non-blocking sockets in the server's libevent loop. One outgoing connection
// per peer carries our messages to it (connected lazily on first send, or eagerly), accepted
// connections only carry the peers' messages to us: no connection races to resolve. Both kinds
// are read to their end: EOF or a reset without the peer's goodbye means the peer is lost
// (transport.h); TCP keepalive notices a peer host that went silent.
//
// Every connection opens with the handshake of handshake.h (purpose node, the step's namespace,
// the connecting node's id), keyed by the link key from the connecting node into the listening
// one (identity.h: the listener derives it from its own node key, the connector from the
// listener's verified record). The accepting side reads the handshake frames byte-exactly (never
// past them) into a fixed buffer, and nothing else until the client proved the link key; the
// connecting side sends its queued messages only after the listener proved it too. Afterwards
// every frame in either direction is sealed (handshake.h: source, destination, a sequence number
// that grows on the connection, HMAC under the link key) and carried in a frame of type
// kSealedNodeFrameType; a frame whose MAC fails closes the connection with one log line. Unauthenticated
// connections are bounded by a listener_guard (caps, a 3 s deadline, rate-limited refusal lines,
// a pause on EMFILE); the listener binds to the node's address (transport_options::bind_address).
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <optional>

#include <poll.h>

#include "conn_lru.h"
#include "tcp_conn.h"
#include "handshake.h"
#include "identity.h"
#include "listener_guard.h"
#include "liveness.h"
#include "log.h"
#include "transport.h"
#include "wire/frame.h"

namespace pmixcpp::net {

namespace tcp {

class tcp_transport : public node_transport {
public:
    tcp_transport(event_base *base, transport_options opts)
        : _base(base), _opts(std::move(opts)), _guard("tcp transport (" + _opts.id.nspace + ")"),
          _lru(_opts.max_connections),
          _live(liveness_options{"tcp", _opts.node_id, _opts.node_names, _opts.watch_neighbours, true, {}, kUnlinkedGrace},
                liveness_ops{[this](uint32_t node) { close_peer(node); },
                             [this](uint32_t node) {
                                 uint8_t hello = static_cast<uint8_t>(link_kind::hello);
                                 send(node, kLinkChannel, {&hello, 1});
                             },
                             [this](uint32_t node) { return _out[node].fd >= 0; }, _opts.on_peer_lost,
                             _opts.on_peer_unreachable, _opts.on_peer_left}) {
        _out.resize(_opts.node_names.size());
        for (uint32_t i = 0; i < _out.size(); ++i) {
            _out[i].owner = this;
            _out[i].node = i;
        }
    }
    ~tcp_transport() override {
        for (auto &o : _out) {
            o.ev.reset();
            o.ev_read.reset();
            if (o.fd >= 0) close(o.fd);
        }
        for (auto &[id, c] : _in) {
            c->ev.reset();
            close(c->fd);
        }
        _in.clear();
        _ev_listen.reset();
        _ev_resume.reset();
        _ev_sweep.reset();
        if (_listen_fd >= 0) close(_listen_fd);
    }

    Status listen_on() {
        _listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (_listen_fd < 0) return Status(PMIX_ERROR, std::string("socket: ") + strerror(errno));
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_ANY);
        if (!_opts.bind_address.empty() && inet_pton(AF_INET, _opts.bind_address.c_str(), &a.sin_addr) != 1)
            return Status(PMIX_ERR_BAD_PARAM, "tcp transport: bad bind address " + _opts.bind_address);
        if (_opts.listen_port != 0) {
            // A reserved port comes back to later steps: connections of an earlier one may linger
            // in TIME_WAIT on it (SO_REUSEADDR still refuses a port another socket listens on).
            int one = 1;
            setsockopt(_listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
            a.sin_port = htons(_opts.listen_port);
        }
        socklen_t len = sizeof(a);
        if (bind(_listen_fd, reinterpret_cast<sockaddr *>(&a), sizeof(a)) != 0 || listen(_listen_fd, 256) != 0 ||
            getsockname(_listen_fd, reinterpret_cast<sockaddr *>(&a), &len) != 0)
            return Status(PMIX_ERROR, "tcp listen on " + (_opts.bind_address.empty() ? "*" : _opts.bind_address) +
                                          (_opts.listen_port ? ":" + std::to_string(_opts.listen_port) : "") + ": " +
                                          strerror(errno));
        _port = ntohs(a.sin_port);
        _ev_listen.reset(event_new(_base, _listen_fd, EV_READ | EV_PERSIST, on_accept, this));
        _ev_resume.reset(evtimer_new(_base, on_resume_accept, this));
        _ev_sweep.reset(evtimer_new(_base, on_sweep, this));
        if (!_ev_listen || !_ev_resume || !_ev_sweep || event_add(_ev_listen.get(), nullptr) != 0)
            return Status(PMIX_ERROR, "event_add failed");
        PMIXCPP_LOG_DEBUG("tcp transport: listening on %s:%u", _opts.bind_address.empty() ? "*" : _opts.bind_address.c_str(),
                          _port);
        return Status::success();
    }

    const char *kind() const override { return "tcp"; }
    std::string address() const override {
        return "tcp:" + (_opts.bind_address.empty() ? std::string("*") : _opts.bind_address) + ":" + std::to_string(_port);
    }
    bool has_peers() const override { return _have_peers; }

    Status set_peers(const std::vector<std::string> &addresses, const std::vector<auth::key> &node_keys) override {
        if (addresses.size() != _out.size() || node_keys.size() != _out.size())
            return Status(PMIX_ERR_BAD_PARAM, "address table has " + std::to_string(addresses.size()) +
                                                  " entries for " + std::to_string(_out.size()) + " nodes");
        PMIXCPP_RETURN_IF_ERROR(take_addresses(addresses));
        for (uint32_t i = 0; i < addresses.size(); ++i) {
            auto k = link_key(node_keys[i], "tcp", _opts.node_id);
            PMIXCPP_RETURN_IF_ERROR(k);
            _out[i].link_key = k.value();
            _out[i].have_key = true;
        }
        _have_peers = true;
        for (auto &o : _out) {
            seal_pending(o);
        }
        for (uint32_t i = 0; i < _out.size(); ++i)
            if (i != _opts.node_id && (_opts.eager_connect || !_out[i].queue.empty())) start_connect(_out[i]);
        _live.start();  // our successor in the ring (an accepted connection watches the predecessor)
        return Status::success();
    }

    // The frames that waited for the node's key (set_peers, add_peer, or the static route's
    // handshake), sealed into its queue in order.
    void seal_pending(out_conn &o) {
        for (auto &f : o.pending_plain) {
            auto sealed = sealed_tcp_frame(o.link_key, f, _opts.node_id, o.node, ++o.send_seq);
            if (sealed.ok()) o.queue.push_back(std::make_shared<const std::vector<uint8_t>>(std::move(sealed.value())));
        }
        o.pending_plain.clear();
    }

    // tcp:<ipv4>:<port> for every node.
    Status take_addresses(const std::vector<std::string> &addresses) {
        for (uint32_t i = 0; i < addresses.size(); ++i) PMIXCPP_RETURN_IF_ERROR(take_address(i, addresses[i]));
        return Status::success();
    }
    Status take_address(uint32_t i, const std::string &a) {
        size_t c1 = a.find(':'), c2 = a.rfind(':');
        if (a.rfind("tcp:", 0) != 0 || c1 == c2)
            return Status(PMIX_ERR_BAD_PARAM, "node " + _opts.node_names[i] + " has no TCP address (" + a + ")");
        std::string host = a.substr(c1 + 1, c2 - c1 - 1);
        unsigned long port = strtoul(a.c_str() + c2 + 1, nullptr, 10);
        sockaddr_in sa{};
        sa.sin_family = AF_INET;
        sa.sin_port = htons(static_cast<uint16_t>(port));
        if (port == 0 || port > 65535 || inet_pton(AF_INET, host.c_str(), &sa.sin_addr) != 1)
            return Status(PMIX_ERR_BAD_PARAM, "node " + _opts.node_names[i] + ": bad address " + a);
        _out[i].addr = sa;
        _out[i].have_addr = true;
        return Status::success();
    }

    // Directory wire-up (transport.h): no table; each peer comes with add_peer.
    Status start_directory(std::function<void(uint32_t node)> need) override {
        if (_have_peers) return Status(PMIX_ERR_BAD_PARAM, "the peers are known already");
        if (!need) return Status(PMIX_ERR_BAD_PARAM, "directory wire-up without a way to ask");
        _need = std::move(need);
        _asked.assign(_out.size(), false);
        _directory = true;
        _have_peers = true;
        for (auto &o : _out)
            if (!o.pending_plain.empty()) ask(o.node);
        _live.start();
        return Status::success();
    }

    Status add_peer(uint32_t node, const std::string &address, const auth::key &node_key) override {
        if (!_directory) return Status(PMIX_ERR_BAD_PARAM, "a peer added without the directory wire-up");
        if (node >= _out.size() || node == _opts.node_id)
            return Status(PMIX_ERR_BAD_PARAM, "peer node " + std::to_string(node) + " of " + std::to_string(_out.size()));
        out_conn &o = _out[node];
        if (o.have_key) return Status::success();  // known already
        PMIXCPP_RETURN_IF_ERROR(take_address(node, address));
        auto k = link_key(node_key, "tcp", _opts.node_id);
        PMIXCPP_RETURN_IF_ERROR(k);
        o.link_key = k.value();
        o.have_key = true;
        seal_pending(o);
        if (!_live.alive(node)) {
            o.queue.clear();
            return Status::success();
        }
        if ((_opts.eager_connect || !o.queue.empty()) && o.fd < 0 && !o.ev_retry) {
            start_connect(o);
            if (o.fd >= 0 || o.ev_retry) _lru.touch(node);
            enforce_cap({&node, 1});
        }
        return Status::success();
    }

    bool knows_address(uint32_t node) const override {
        return node < _out.size() && (!_directory || _out[node].have_key);
    }

    size_t awaiting_address() const override {
        size_t n = 0;
        for (const auto &o : _out)
            if (_directory && !o.have_key && !o.pending_plain.empty() && _live.alive(o.node)) ++n;
        return n;
    }

    void never_known(uint32_t node, const std::string &why) override {
        if (!_directory || node >= _out.size() || node == _opts.node_id || _out[node].have_key) return;
        _out[node].pending_plain.clear();
        _live.never_reached(node, why);
    }

    // Directory wire-up: the first message to a node we have no address for asks for it.
    void ask(uint32_t node) {
        if (!_directory || node >= _asked.size() || _asked[node]) return;
        _asked[node] = true;
        _need(node);
    }

    // No table: the addresses are known, each node's key comes with its listener's record in the
    // first handshake with it (transport.h).
    Status set_static_peers(const std::vector<std::string> &addresses, std::string own_record,
                            record_check check) override {
        if (addresses.size() != _out.size())
            return Status(PMIX_ERR_BAD_PARAM, "static addresses of " + std::to_string(addresses.size()) + " nodes for " +
                                                  std::to_string(_out.size()));
        if (own_record.empty() || !check) return Status(PMIX_ERR_BAD_PARAM, "static wire-up without our record or a check");
        if (_have_peers) return Status(PMIX_ERR_BAD_PARAM, "the peers are known already");
        PMIXCPP_RETURN_IF_ERROR(take_addresses(addresses));
        _own_record = std::move(own_record);
        _check = std::move(check);
        _static = true;
        _static_deadline = std::chrono::steady_clock::now() + kStaticStartWindow;
        for (auto &[id, c] : _in)  // accepted before this: their challenge is not sent yet unless
            if (c->hs && c->hs->current() == auth::server_handshake::state::await_hello)  // answered
                c->hs->present_record(_own_record);
        _have_peers = true;
        for (uint32_t i = 0; i < _out.size(); ++i)
            if (i != _opts.node_id && (_opts.eager_connect || !_out[i].pending_plain.empty())) start_connect(_out[i]);
        _live.start();
        return Status::success();
    }

    void forget(uint32_t node) override { _live.forget(node); }

    bool said_goodbye(uint32_t node) const override { return _live.said_goodbye(node); }
    bool peer_alive(uint32_t node) const override { return _live.alive(node); }

    void leave(int budget_ms) override {
        uint8_t bye = static_cast<uint8_t>(link_kind::bye);
        auto frame = encode_node_frame(_opts.id, _opts.node_id, kLinkChannel, {&bye, 1});
        if (!frame.ok()) return;
        const auto start = std::chrono::steady_clock::now();
        auto deadline = start + std::chrono::milliseconds(budget_ms);
        _leaving = true;
        // What is queued for a node whose connection the cap closed (our last process table
        // rows, at least) waits for a new connection's handshake: finish those in half the
        // budget, so that they and the goodbye reach those nodes too.
        finish_handshakes(start + std::chrono::milliseconds(budget_ms / 2));
        size_t told = 0;
        for (auto &o : _out) {
            if (o.fd < 0 || !o.authenticated || !_live.alive(o.node)) continue;
            auto bye = sealed_tcp_frame(o.link_key, frame.value(), _opts.node_id, o.node, ++o.send_seq);
            if (!bye.ok()) continue;
            o.queue.push_back(std::make_shared<const std::vector<uint8_t>>(std::move(bye.value())));
            if (write_until(o.fd, o.queue, deadline)) ++told;
            o.queue.clear();
        }
        // The loop has stopped: a handshake whose last frame arrived meanwhile is finished here.
        // A peer that has our challenge already takes its connection for authenticated and would
        // take our closing it for a loss: it gets the goodbye too (it reads it after the challenge).
        std::vector<uint64_t> pending;
        for (auto &[id, c] : _in)
            if (c->hs) pending.push_back(id);
        for (uint64_t id : pending)
            if (auto it = _in.find(id); it != _in.end()) (void)in_handshake(it->second.get());  // gone: nothing to tell
        for (auto &[id, c] : _in) {
            uint32_t node = c->node;
            auth::key k = c->link_key;
            if (c->hs) {
                if (c->hs->current() != auth::server_handshake::state::await_response) continue;
                node = c->hs->peer_node();
                k = c->hs->session_key();
            }
            if (node >= _out.size() || node == _opts.node_id || !_live.alive(node)) continue;
            auto bye = sealed_tcp_frame(k, frame.value(), _opts.node_id, node, ++c->send_seq);
            if (!bye.ok()) continue;
            send_queue q;  // accepted connections carry nothing of ours but this
            q.push_back(std::make_shared<const std::vector<uint8_t>>(std::move(bye.value())));
            if (write_until(c->fd, q, deadline)) ++told;
        }
        PMIXCPP_LOG_DEBUG("tcp transport: said goodbye on %zu connections", told);
        PMIXCPP_LOG_VERBOSE("tcp transport: our node connections: at most %zu open (cap %zu), %llu closed idle and "
                            "reopened on need; peers closed %llu idle connections to us",
                            _lru.peak(), _lru.cap(), static_cast<unsigned long long>(_lru.evictions()),
                            static_cast<unsigned long long>(_idle_in));
    }

    void send(uint32_t node, channel_id chan, std::span<const uint8_t> body) override { send_to({&node, 1}, chan, body); }

    // One envelope, sealed for each connection it goes out on (the MAC names the destination).
    void send_to(std::span<const uint32_t> nodes, channel_id chan, std::span<const uint8_t> body) override {
        std::optional<std::vector<uint8_t>> frame;
        for (uint32_t node : nodes) {
            if (node >= _out.size()) {
                PMIXCPP_LOG_ERROR("tcp transport: send to node %u of %zu", node, _out.size());
                continue;
            }
            if (node == _opts.node_id) {  // loopback: deliver from the loop, never re-entrantly
                PMIXCPP_LOG_ERROR("tcp transport: message to self dropped");
                continue;
            }
            if (!_live.alive(node)) {
                PMIXCPP_LOG_DEBUG("tcp transport: %s message to node %s dropped: the node %s", channel_name(_opts.channels, chan),
                                  _opts.node_names[node].c_str(), _live.state(node) == peer_state::lost ? "is lost" : "left");
                continue;
            }
            if (!frame) {
                auto f = encode_node_frame(_opts.id, _opts.node_id, chan, body);
                if (!f.ok()) {
                    PMIXCPP_LOG_ERROR("tcp transport: cannot encode a %s message to node %s: %s", channel_name(_opts.channels, chan),
                                      _opts.node_names[node].c_str(), f.status().message().c_str());
                    return;
                }
                frame = std::move(f.value());
            }
            out_conn &o = _out[node];
            if (!o.have_key) {  // sealed once the node's record is verified (set_peers, or its handshake)
                o.pending_plain.push_back(*frame);
                if (_static) {  // static wire-up: its record comes with the first connection
                    if (o.fd < 0 && !o.ev_retry) start_connect(o);
                    if (o.fd >= 0 || o.ev_retry) _lru.touch(node);
                } else if (_directory) {  // directory wire-up: asked for on first need
                    ask(node);
                }
                continue;
            }
            auto sealed = sealed_tcp_frame(o.link_key, *frame, _opts.node_id, node, ++o.send_seq);
            if (!sealed.ok()) {
                PMIXCPP_LOG_ERROR("tcp transport: cannot seal a %s message to node %s: %s", channel_name(_opts.channels, chan),
                                  _opts.node_names[node].c_str(), sealed.status().message().c_str());
                continue;
            }
            o.queue.push_back(std::make_shared<const std::vector<uint8_t>>(std::move(sealed.value())));
            if (!_have_peers) continue;
            if (o.fd < 0 && !o.ev_retry)
                start_connect(o);
            else if (o.authenticated)
                flush(o);
            if (o.fd >= 0 || o.ev_retry) _lru.touch(node);
        }
        enforce_cap(nodes);
    }

    size_t open_connections() const override { return _lru.open(); }
    size_t peak_connections() const override { return _lru.peak(); }
    uint64_t idle_closes() const override { return _lru.evictions(); }

private:
    static void on_accept(evutil_socket_t, short, void *arg) {
        auto *self = static_cast<tcp_transport *>(arg);
        // A few per wake-up (the listening event persists): the loop serves the connections it
        // has between batches instead of taking in a whole flood first.
        for (int batch = 0; batch < 16; ++batch) {
            sockaddr_storage peer{};
            socklen_t plen = sizeof(peer);
            int fd = accept4(self->_listen_fd, reinterpret_cast<sockaddr *>(&peer), &plen, SOCK_NONBLOCK | SOCK_CLOEXEC);
            if (fd < 0) {
                if (errno == EINTR || errno == ECONNABORTED) continue;
                if (self->_guard.accept_failed(errno)) {  // out of descriptors: pause, do not spin
                    event_del(self->_ev_listen.get());
                    auto ms = self->_guard.limits().accept_pause.count();
                    timeval tv{static_cast<time_t>(ms / 1000), static_cast<suseconds_t>((ms % 1000) * 1000)};
                    evtimer_add(self->_ev_resume.get(), &tv);
                }
                return;
            }
            set_node_socket_options(fd);
            auto c = std::make_unique<in_conn>();
            c->fd = fd;
            c->owner = self;
            c->id = self->_next_in++;
            c->peer = peer_address(peer);
            c->hs.emplace(self->in_key_source(), auth::purpose::node, self->_opts.id.nspace);
            if (!self->_own_record.empty()) c->hs->present_record(self->_own_record);
            c->ev.reset(event_new(self->_base, fd, EV_READ | EV_PERSIST, on_in_read, c.get()));
            if (!c->ev || event_add(c->ev.get(), nullptr) != 0) {
                close(fd);
                continue;
            }
            const uint64_t id = c->id;
            in_conn *raw = c.get();
            for (uint64_t old : self->_guard.admit(id, peer_label(fd, peer))) self->close_in(old, nullptr);
            self->_in.emplace(id, std::move(c));
            self->arm_sweep();
            self->in_handshake(raw);  // a real peer's hello is usually here already: answer it now
        }
    }

    // The key of a hello: the link from its node into us, from our own node key; a node id out
    // of range or our own is refused before any MAC is computed.
    auth::key_source in_key_source() {
        return [this](const auth::hello &h) -> Result<auth::key> {
            if (h.node >= _out.size() || h.node == _opts.node_id)
                return Status(PMIX_ERR_NO_PERMISSIONS, "hello from node " + std::to_string(h.node) + " of " +
                                                           std::to_string(_out.size()));
            return link_key(_opts.node_key, "tcp", h.node);
        };
    }

    static void on_resume_accept(evutil_socket_t, short, void *arg) {
        auto *self = static_cast<tcp_transport *>(arg);
        event_add(self->_ev_listen.get(), nullptr);
    }

    void arm_sweep() {
        if (_ev_sweep && !evtimer_pending(_ev_sweep.get(), nullptr)) evtimer_add(_ev_sweep.get(), &kSweepPeriod);
    }

    // Once a second while handshakes are open: drop the accepted ones past their deadline, fail
    // our own that the listener never answered.
    static void on_sweep(evutil_socket_t, short, void *arg) {
        auto *self = static_cast<tcp_transport *>(arg);
        for (uint64_t id : self->_guard.expired()) self->close_in(id, nullptr);
        bool open = self->_guard.pending() > 0;
        auto now = std::chrono::steady_clock::now();
        for (auto &o : self->_out) {
            if (o.fd < 0 || !o.hs || o.authenticated) continue;
            if (now >= o.hs_deadline)
                self->fail_out(o, "no answer to our handshake within " +
                                      std::to_string(std::chrono::duration_cast<std::chrono::seconds>(kClientHandshakeTimeout).count()) + " s");
            else
                open = true;
        }
        self->_live.tick(now);
        if (self->_live.waiting_for_goodbyes()) open = true;
        if (open) self->arm_sweep();
    }

    void close_in(uint64_t id, const char *why) {
        auto it = _in.find(id);
        if (it == _in.end()) return;
        if (why) PMIXCPP_LOG_ERROR("tcp transport: dropping an incoming node connection: %s", why);
        _guard.closed(id);
        it->second->ev.reset();
        close(it->second->fd);
        _in.erase(it);
    }

    // An accepted connection before authentication: read exactly the handshake frame's bytes,
    // answer the hello, check the response. Returns false if the connection is gone.
    bool in_handshake(in_conn *c) {
        const uint64_t id = c->id;
        while (c->hs) {
            uint8_t buf[auth::kMaxHandshakeFrame];
            ssize_t n = recv(c->fd, buf, c->hs_reader.wanted(), 0);
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return true;
            if (n <= 0) {
                (void)_guard.abandoned(c->peer, n == 0 ? 0 : errno);  // logged there either way
                close_in(id, nullptr);
                return false;
            }
            Status st = c->hs_reader.feed(buf, static_cast<size_t>(n));
            if (st.ok() && c->hs_reader.complete()) {
                auto reply = c->hs->on_frame(c->hs_reader.type(), c->hs_reader.payload());
                c->hs_reader.reset();
                st = reply.status();
                if (st.ok() && !reply->empty() &&
                    ::send(c->fd, reply->data(), reply->size(), MSG_NOSIGNAL | MSG_DONTWAIT) != static_cast<ssize_t>(reply->size()))
                    st = Status(PMIX_ERR_UNREACH, "cannot send the challenge");
                if (st.ok() && c->hs->done()) {
                    const uint32_t node = c->hs->peer_node();
                    if (node >= _out.size() || node == _opts.node_id)
                        st = Status(PMIX_ERR_BAD_PARAM, "authenticated as node " + std::to_string(node) + " of " +
                                                            std::to_string(_out.size()));
                    else {
                        c->node = node;
                        c->link_key = c->hs->session_key();
                        c->hs.reset();
                        _guard.authenticated(id);
                        _live.heard(node);
                        // Static wire-up: its listener is up (it listened before connecting);
                        // ours to it need not wait for its retry timer.
                        if (out_conn &o = _out[node]; _static && o.ev_retry && !o.ever_reached) {
                            o.ev_retry.reset();
                            start_connect(o);
                        }
                        PMIXCPP_LOG_DEBUG("tcp transport: node %s authenticated", _opts.node_names[node].c_str());
                    }
                }
            }
            if (!st.ok()) {
                _guard.refused(c->peer, st.message());
                close_in(id, nullptr);
                return false;
            }
        }
        return true;
    }

    static void on_in_read(evutil_socket_t fd, short, void *arg) {
        auto *c = static_cast<in_conn *>(arg);
        tcp_transport *self = c->owner;
        uint64_t id = c->id;
        if (c->hs && (!self->in_handshake(c) || c->hs)) return;
        uint8_t buf[65536];
        ssize_t n = recv(fd, buf, sizeof(buf), 0);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
            std::string why = n == 0 ? "its connection to us closed" : std::string("its connection to us: ") + strerror(errno);
            uint32_t node = c->node;
            const bool idle = c->idle_close;
            self->close_in(id, nullptr);
            if (idle) {
                ++self->_idle_in;
                self->_live.unlinked(node);
                PMIXCPP_LOG_DEBUG("tcp transport: node %s closed its idle connection to us",
                                  self->_opts.node_names[node].c_str());
                return;
            }
            if (node != UINT32_MAX) self->_live.broken(node, why, std::chrono::steady_clock::now());
            self->arm_sweep();
            return;
        }
        if (n < 0) return;
        if (!c->reader.feed(buf, static_cast<size_t>(n)).ok()) {
            self->close_in(id, ("malformed frame: " + c->reader.error().message()).c_str());
            return;
        }
        while (true) {
            auto f = c->reader.next();
            if (!f.ok()) {
                self->close_in(id, ("malformed frame: " + f.status().message()).c_str());
                return;
            }
            if (!f->has_value()) return;
            const wire::Frame &fr = **f;
            envelope env;
            std::span<const uint8_t> inner;
            Status st = open_tcp_frame(fr, c->link_key, self->_opts.node_id, c->node, &c->recv_seq, &inner);
            if (st.ok()) st = decode_node_frame(inner, self->_opts.id, self->_out.size(), self->_opts.channels, &env);
            if (st.ok() && env.src_node != c->node)
                st = Status(PMIX_ERR_NO_PERMISSIONS, "node " + std::to_string(c->node) + " sent a message as node " +
                                                         std::to_string(env.src_node));
            if (!st.ok()) {
                self->close_in(id, ("message refused: " + st.message()).c_str());
                return;
            }
            if (env.chan == kLinkChannel && env.body.size() == 1 &&
                env.body[0] == static_cast<uint8_t>(link_kind::idle)) {
                c->idle_close = true;  // its EOF follows
                continue;
            }
            c->idle_close = false;  // it kept the connection after all
            self->dispatch(std::move(env));
            if (self->_in.find(id) == self->_in.end()) return;
        }
    }

    // A link message is ours (liveness.h); everything else goes up.
    void dispatch(envelope &&env) {
        if (env.chan != kLinkChannel) {
            if (_opts.on_receive) _opts.on_receive(std::move(env));
            return;
        }
        _live.link_message(env.src_node, env.body);
    }

    // Our connection to a peer: only its goodbye arrives here, then EOF.
    static void on_out_read(evutil_socket_t fd, short, void *arg) {
        auto *o = static_cast<out_conn *>(arg);
        tcp_transport *self = o->owner;
        if (!o->authenticated) {
            self->out_handshake(*o);
            return;
        }
        uint8_t buf[4096];
        ssize_t n = recv(fd, buf, sizeof(buf), 0);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
            self->_live.broken(o->node,
                               n == 0 ? std::string("our connection to it closed")
                                      : std::string("our connection to it: ") + strerror(errno),
                               std::chrono::steady_clock::now());
            self->arm_sweep();
            return;
        }
        if (n < 0) return;
        if (!o->reader.feed(buf, static_cast<size_t>(n)).ok()) return;
        for (;;) {
            auto f = o->reader.next();
            if (!f.ok() || !f->has_value()) return;
            envelope env;
            std::span<const uint8_t> inner;
            Status st = open_tcp_frame(**f, o->link_key, self->_opts.node_id, o->node, &o->recv_seq, &inner);
            if (st.ok()) st = decode_node_frame(inner, self->_opts.id, self->_out.size(), self->_opts.channels, &env);
            if (st.ok() && env.src_node != o->node) st = Status(PMIX_ERR_NO_PERMISSIONS, "sent as another node");
            if (!st.ok()) {
                PMIXCPP_LOG_ERROR("tcp transport: node %s: message refused: %s", self->_opts.node_names[o->node].c_str(),
                                  st.message().c_str());
                return;
            }
            self->dispatch(std::move(env));
            if (o->fd != fd) return;
        }
    }

    // Our connection's handshake: the listener's challenge, read byte-exactly; once it proved the
    // link key, our response goes first and the queued messages after it.
    void out_handshake(out_conn &o) {
        const int fd = o.fd;
        while (fd == o.fd && !o.authenticated) {
            uint8_t buf[auth::kMaxHandshakeFrame];
            ssize_t n = recv(o.fd, buf, o.hs_reader.wanted(), 0);
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
            if (n <= 0) {
                retry_handshake(o, n == 0 ? "the listener closed the connection during the handshake"
                                          : std::string("during the handshake: ") + strerror(errno));
                return;
            }
            Status st = o.hs_reader.feed(buf, static_cast<size_t>(n));
            if (st.ok() && o.hs_reader.complete()) {
                auto response = o.hs->on_frame(o.hs_reader.type(), o.hs_reader.payload());
                o.hs_reader.reset();
                st = response.status();
                if (st.ok() && !o.have_key) {
                    // Static wire-up: the key from the listener's checked record, kept for
                    // later connections; what waited for it is sealed now.
                    o.link_key = o.hs->session_key();
                    o.have_key = true;
                    seal_pending(o);
                }
                if (st.ok()) {
                    o.queue.push_front(std::move(response.value()));
                    o.authenticated = true;
                    o.ever_reached = true;
                    _live.reached(o.node);
                    o.hs.reset();
                    o.hs_failures = 0;
                    PMIXCPP_LOG_DEBUG("tcp transport: node %s authenticated", _opts.node_names[o.node].c_str());
                    flush(o);
                    return;
                }
            }
            if (!st.ok()) {
                PMIXCPP_LOG_ERROR("tcp transport: node %s: %s", _opts.node_names[o.node].c_str(), st.message().c_str());
                fail_out(o, st.message());
                return;
            }
        }
    }

    // The listener dropped our handshake (it may be shedding a flood of unauthenticated
    // connections): try again shortly, a few times, before taking the node for gone.
    void retry_handshake(out_conn &o, const std::string &why) {
        if (++o.hs_failures > kHandshakeRetries) {
            fail_out(o, why);
            return;
        }
        PMIXCPP_LOG_DEBUG("tcp transport: node %s: %s; retrying", _opts.node_names[o.node].c_str(), why.c_str());
        o.ev.reset();
        o.ev_read.reset();
        close(o.fd);
        o.fd = -1;
        o.connected = false;
        o.hs.reset();
        o.hs_reader.reset();
        o.ev_retry.reset(evtimer_new(_base, on_retry, &o));
        timeval tv{0, 100000 * o.hs_failures};
        if (o.ev_retry) evtimer_add(o.ev_retry.get(), &tv);
    }

    static void on_retry(evutil_socket_t, short, void *arg) {
        auto *o = static_cast<out_conn *>(arg);
        o->ev_retry.reset();
        o->owner->start_connect(*o);
    }

    void close_peer(uint32_t node) {
        _lru.closed(node);
        out_conn &o = _out[node];
        o.ev.reset();
        o.ev_read.reset();
        o.ev_retry.reset();
        if (o.fd >= 0) close(o.fd);
        o.fd = -1;
        o.connected = false;
        o.authenticated = false;
        o.hs.reset();
        o.hs_reader.reset();
        o.queue.clear();
        o.pending_plain.clear();
        o.reader = wire::FrameReader{kMaxSealedPayload};
        o.recv_seq = 0;
        std::vector<uint64_t> ids;
        for (auto &[id, c] : _in)
            if (c->node == node) ids.push_back(id);
        for (uint64_t id : ids) close_in(id, nullptr);
    }

    // More connections of ours open than the cap: close the least recently used idle ones
    // (transport_options::max_connections); `using_now` are the nodes just sent to.
    void enforce_cap(std::span<const uint32_t> using_now) {
        if (_lru.cap() == 0 || _lru.open() <= _lru.cap()) return;
        auto victims = _lru.evict([&](uint32_t node) {
            const out_conn &o = _out[node];
            if (std::find(using_now.begin(), using_now.end(), node) != using_now.end()) return true;
            if (o.fd < 0) return false;  // nothing open to close
            if (!o.authenticated || o.ev_retry || !o.queue.empty() || !o.pending_plain.empty()) return true;
            if (_live.watched(node)) return true;
            return _opts.busy && _opts.busy(node);
        });
        for (uint32_t node : victims) close_idle(_out[node]);
    }

    // Close an idle connection of ours: the peer is told first (link idle) so that the EOF is no
    // loss to it; the next message to the node opens a new one.
    void close_idle(out_conn &o) {
        if (o.fd < 0) return;
        uint8_t idle = static_cast<uint8_t>(link_kind::idle);
        auto frame = encode_node_frame(_opts.id, _opts.node_id, kLinkChannel, {&idle, 1});
        if (frame.ok()) {
            auto sealed = sealed_tcp_frame(o.link_key, frame.value(), _opts.node_id, o.node, ++o.send_seq);
            if (sealed.ok()) o.queue.push_back(std::make_shared<const std::vector<uint8_t>>(std::move(sealed.value())));
        }
        if (int err = o.queue.write_to(o.fd); err != 0) {
            if (err != EAGAIN) {
                fail_out(o, strerror(err));
                return;
            }
            // The socket takes no more now: the connection stays (the peer takes the next
            // message on it as a sign that it does) and is closed on a later round.
            PMIXCPP_LOG_DEBUG("tcp transport: idle connection to node %s kept: its socket is full",
                              _opts.node_names[o.node].c_str());
            _lru.touch(o.node);
            event_add(o.ev.get(), nullptr);
            return;
        }
        PMIXCPP_LOG_DEBUG("tcp transport: closed the idle connection to node %s (%zu of at most %zu open)",
                          _opts.node_names[o.node].c_str(), _lru.open(), _lru.cap());
        o.ev.reset();
        o.ev_read.reset();
        ::shutdown(o.fd, SHUT_WR);
        close(o.fd);
        _live.unlinked(o.node);
        o.fd = -1;
        o.connected = false;
        o.authenticated = false;
        o.hs.reset();
        o.hs_reader.reset();
        o.reader = wire::FrameReader{kMaxSealedPayload};
        o.recv_seq = 0;
    }

    void start_connect(out_conn &o) {
        if (o.fd >= 0 || !o.have_addr || !_live.alive(o.node)) return;
        o.fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (o.fd < 0) {
            PMIXCPP_LOG_ERROR("tcp transport: socket for node %s: %m", _opts.node_names[o.node].c_str());
            return;
        }
        set_node_socket_options(o.fd);
        o.connected = false;
        o.authenticated = false;
        o.recv_seq = 0;  // the listener numbers what it sends on each connection from 1
        o.ev.reset(event_new(_base, o.fd, EV_WRITE | EV_PERSIST, on_out_write, &o));
        int rc = connect(o.fd, reinterpret_cast<sockaddr *>(&o.addr), sizeof(o.addr));
        if (rc != 0 && errno != EINPROGRESS) {
            fail_out(o, strerror(errno));
            return;
        }
        event_add(o.ev.get(), nullptr);
    }

    // Connecting or writing failed: the peer's server is gone (what that means: liveness.h).
    void fail_out(out_conn &o, const std::string &why) {
        if (_leaving) {  // we are going: nothing to conclude about the peer
            PMIXCPP_LOG_DEBUG("tcp transport: while leaving, connection to node %s failed: %s", _opts.node_names[o.node].c_str(),
                              why.c_str());
            close_peer(o.node);
            return;
        }
        // Static wire-up: a node we never reached nor heard from may not have started yet.
        if (_static && !o.ever_reached && !o.record_refused && !_live.talked(o.node) && _live.alive(o.node) &&
            std::chrono::steady_clock::now() < _static_deadline) {
            wait_for_listener(o, why);
            return;
        }
        // After an idle close the node may have left while we had no link (a loss only if no
        // goodbye follows: liveness.h, which reports it then); otherwise this is the node's loss.
        if (_live.alive(o.node) && _live.talked(o.node) && !_live.was_unlinked(o.node))
            PMIXCPP_LOG_ERROR("tcp transport: connection to node %s (%u) failed: %s; %zu bytes dropped",
                              _opts.node_names[o.node].c_str(), o.node, why.c_str(), o.queue.pending());
        _live.connect_failed(o.node, "connection failed: " + why, std::chrono::steady_clock::now());
        arm_sweep();
    }

    // Try node o's listener again shortly, keeping what waits for it.
    void wait_for_listener(out_conn &o, const std::string &why) {
        auto delay = std::min<std::chrono::milliseconds>(kStaticRetryFirst * (1 << std::min(o.start_waits, 5)), kStaticRetryMax);
        if (o.start_waits++ == 0 || o.start_waits % 10 == 0)
            PMIXCPP_LOG_DEBUG("tcp transport: node %s not reachable yet (%s); trying again in %lld ms",
                              _opts.node_names[o.node].c_str(), why.c_str(), static_cast<long long>(delay.count()));
        o.ev.reset();
        o.ev_read.reset();
        if (o.fd >= 0) close(o.fd);
        o.fd = -1;
        o.connected = false;
        o.hs.reset();
        o.hs_reader.reset();
        o.hs_failures = 0;
        o.ev_retry.reset(evtimer_new(_base, on_retry, &o));
        timeval tv{static_cast<time_t>(delay.count() / 1000), static_cast<suseconds_t>((delay.count() % 1000) * 1000)};
        if (o.ev_retry) evtimer_add(o.ev_retry.get(), &tv);
    }

    // While leaving (the loop has stopped): drive our connections that have messages queued
    // through their handshake until `deadline`, with the handlers the loop would call.
    void finish_handshakes(std::chrono::steady_clock::time_point deadline) {
        for (;;) {
            std::vector<pollfd> fds;
            std::vector<out_conn *> who;
            for (auto &o : _out) {
                if (o.fd < 0 || o.authenticated || (o.queue.empty() && o.pending_plain.empty()) || !_live.alive(o.node))
                    continue;
                fds.push_back({o.fd, static_cast<short>(o.connected ? POLLIN : POLLOUT), 0});
                who.push_back(&o);
            }
            if (fds.empty()) return;
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
            if (left.count() <= 0) {
                PMIXCPP_LOG_DEBUG("tcp transport: leaving with %zu handshakes unfinished", fds.size());
                return;
            }
            if (poll(fds.data(), fds.size(), static_cast<int>(left.count())) < 0 && errno != EINTR) return;
            for (size_t i = 0; i < fds.size(); ++i) {
                out_conn &o = *who[i];
                if (fds[i].revents == 0 || o.fd != fds[i].fd) continue;
                if (!o.connected)
                    on_out_write(o.fd, 0, &o);
                else
                    out_handshake(o);
            }
        }
    }

    static void on_out_write(evutil_socket_t, short, void *arg) {
        auto *o = static_cast<out_conn *>(arg);
        tcp_transport *self = o->owner;
        if (!o->connected) {
            int err = 0;
            socklen_t len = sizeof(err);
            getsockopt(o->fd, SOL_SOCKET, SO_ERROR, &err, &len);
            if (err) {
                self->fail_out(*o, strerror(err));
                return;
            }
            o->connected = true;
            o->ev_read.reset(event_new(self->_base, o->fd, EV_READ | EV_PERSIST, on_out_read, o));
            if (o->ev_read) event_add(o->ev_read.get(), nullptr);
            PMIXCPP_LOG_DEBUG("tcp transport: connected to node %s", self->_opts.node_names[o->node].c_str());
            // Our hello; nothing else until the listener's challenge proved it holds the link key.
            if (o->have_key)
                o->hs.emplace(o->link_key, auth::purpose::node, self->_opts.id.nspace, self->_opts.node_id);
            else  // static wire-up, first contact: K from the listener's record, once checked
                o->hs.emplace(
                    [self, o](std::string_view record) -> Result<auth::key> {
                        auto t0 = std::chrono::steady_clock::now();
                        auto nk = self->_check(o->node, record);
                        if (!nk.ok()) {
                            o->record_refused = true;
                            return nk.status();
                        }
                        PMIXCPP_LOG_DEBUG("tcp transport: node %s's record checked in %.1f ms",
                                          self->_opts.node_names[o->node].c_str(),
                                          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
                        return link_key(nk.value(), "tcp", self->_opts.node_id);
                    },
                    auth::purpose::node, self->_opts.id.nspace, self->_opts.node_id);
            o->hs_reader.reset();
            o->hs_deadline = std::chrono::steady_clock::now() + kClientHandshakeTimeout;
            auto hello = o->hs->hello_frame();
            if (!hello.ok() || ::send(o->fd, hello->data(), hello->size(), MSG_NOSIGNAL | MSG_DONTWAIT) !=
                                   static_cast<ssize_t>(hello->size())) {
                self->fail_out(*o, hello.ok() ? std::string("cannot send our handshake") : hello.status().message());
                return;
            }
            event_del(o->ev.get());
            self->arm_sweep();
            return;
        }
        if (o->authenticated) self->flush(*o);
    }

    void flush(out_conn &o) {
        int err = o.queue.write_to(o.fd);
        if (err == EAGAIN) {
            event_add(o.ev.get(), nullptr);
            return;
        }
        if (err != 0) {
            fail_out(o, strerror(err));
            return;
        }
        event_del(o.ev.get());
    }

    event_base *_base;
    transport_options _opts;
    listener_guard _guard;
    int _listen_fd = -1;
    uint16_t _port = 0;
    event_ptr _ev_listen, _ev_resume, _ev_sweep;
    bool _have_peers = false;
    bool _static = false;        // static wire-up (set_static_peers)
    std::string _own_record;     // static wire-up: presented in our challenges
    record_check _check;         // static wire-up: a listener's record -> its node key
    std::chrono::steady_clock::time_point _static_deadline{};
    bool _directory = false;                   // directory wire-up (start_directory)
    std::function<void(uint32_t node)> _need;  // directory wire-up: ask for a node's record
    std::vector<bool> _asked;
    std::vector<out_conn> _out;
    conn_lru _lru;  // our open connections, by last use (the cap)
    uint64_t _idle_in = 0;  // connections to us that their node closed as idle
    bool _leaving = false;  // leave() has begun
    std::map<uint64_t, std::unique_ptr<in_conn>> _in;
    uint64_t _next_in = 1;
    peer_liveness _live;  // declared last: its operations use the connections above
};

}  // namespace tcp

Result<std::unique_ptr<node_transport>> make_tcp_transport(event_base *base, transport_options opts) {
    auto t = std::make_unique<tcp::tcp_transport>(base, std::move(opts));
    PMIXCPP_RETURN_IF_ERROR(t->listen_on());
    return std::unique_ptr<node_transport>(std::move(t));
}

}  // namespace pmixcpp::net
