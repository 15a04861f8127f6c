// UCX node transport: one ucp worker per server, its event fd in the server's libevent loop,
// one active-message id carrying whole node frames (envelope.h). Endpoints are created from the
// peers' worker addresses (exchanged by the rendezvous), lazily on first send or eagerly.
// UCX_TLS / UCX_NET_DEVICES come from PMIxCppUcxTls / PMIxCppUcxDevices, which only the
// administrator's mpi.conf sets; shared-memory transports are never opened, whatever is configured
// (ucx_policy.h), and the mm transports' error handling stays off. A peer's worker address is
// checked (length, format) before an endpoint is made from it. Received frames: longer than the
// node payload cap refused before anything is allocated (eager or rendezvous), the queue between
// UCX's callbacks and the progress loop bounded, and no exception leaves a callback into UCX.
// Lost peers: endpoints use UCP_ERR_HANDLING_MODE_PEER with an error handler; an endpoint error
// that is not followed by the peer's goodbye within kByeGrace reports the node lost
// (transport.h). A leaving server flushes its goodbyes (remote completion) before its worker
// goes; still, on a loaded host a peer's goodbye can be read after the error its closing worker
// caused on our endpoint (different lanes), so the error alone proves nothing yet.
// UCX's keepalive (every 2 s here) notices a silent peer. UCX itself is loaded by the first
// transport made (ucx_api.h).
// The cap on our endpoints (transport_options::max_connections, conn_lru.h), as TCP's on its
// connections: once more are open, the least recently used idle one (no send of ours in flight
// or waiting, not a watched ring neighbour, no requests of ours outstanding there) is told
// `link idle` and closed in flush mode (the close request completes in a later progress, never
// waited for on the loop); the next message to its node makes a new endpoint. A peer that got
// the idle notice takes the error its endpoint may then see for no loss (it closes its own and
// makes a new one on its next message), and a send of its that fails on such an endpoint is
// posted again, once, on a new one (a frame that did arrive after all is a replay to the
// receiver, dropped there).
// Authentication: UCX has no connection of ours to open with a handshake, so every frame is sealed
// (handshake.h: source, destination, a per-sender sequence number and an HMAC under the link key
// from the source into the destination, identity.h); a frame whose MAC fails, that is addressed
// to another node or whose number was seen already (a replay) is dropped with a rate-limited log
// line. The worker addresses travel in node records signed with credentials only root can make
// and open (identity.h): no endpoint is created from an address whose record was not verified.
// A receiver derives the key of a link into it from its own node key, so frames from a peer that
// learnt the table first are checked before our own table arrives.
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <tuple>

#include "conn_lru.h"
#include "handshake.h"
#include "identity.h"
#include "listener_guard.h"
#include "liveness.h"
#include "log.h"
#include "transport.h"
#include "ucx_api.h"
#include "ucx_policy.h"

namespace pmixcpp::net {

namespace {

// UCX's functions (ucx_api.h), set before the first transport is made.
const ucx_api *g_ucx = nullptr;
const ucx_api &U() { return *g_ucx; }

constexpr unsigned kAmId = 17;
// How long an endpoint error waits for the peer's goodbye before the peer counts as lost.
constexpr std::chrono::milliseconds kByeGrace{500};

struct event_deleter {
    void operator()(event *e) const { event_free(e); }
};
using event_ptr = std::unique_ptr<event, event_deleter>;

std::string to_hex(const void *p, size_t n) {
    static const char *d = "0123456789abcdef";
    std::string s;
    s.reserve(2 * n);
    for (size_t i = 0; i < n; ++i) {
        uint8_t b = static_cast<const uint8_t *>(p)[i];
        s += d[b >> 4];
        s += d[b & 15];
    }
    return s;
}

bool from_hex(const std::string &s, std::vector<uint8_t> *out) {
    if (s.size() % 2) return false;
    out->resize(s.size() / 2);
    for (size_t i = 0; i < out->size(); ++i) {
        auto v = [](char c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1; };
        int hi = v(s[2 * i]), lo = v(s[2 * i + 1]);
        if (hi < 0 || lo < 0) return false;
        (*out)[i] = static_cast<uint8_t>(hi << 4 | lo);
    }
    return true;
}

class ucx_transport;

struct send_req {
    std::vector<uint8_t> frame;
    ucx_transport *owner;
    uint32_t node;
    bool retry = true;  // posted again once if it fails (see above)
};

struct recv_req {
    std::vector<uint8_t> frame;
    ucx_transport *owner;
};

// What the progress loop hands on, in arrival order: a received frame, or an endpoint error.
struct inbound {
    std::vector<uint8_t> frame;
    ucp_ep_h failed_ep = nullptr;
    ucs_status_t error = UCS_OK;
};

class ucx_transport : public node_transport {
public:
    ucx_transport(event_base *base, transport_options opts)
        : _base(base), _opts(std::move(opts)), _refusals("ucx transport (" + _opts.id.nspace + ")"),
          _lru(_opts.max_connections),
          _live(liveness_options{"ucx", _opts.node_id, _opts.node_names, _opts.watch_neighbours, false, kByeGrace},
                liveness_ops{[this](uint32_t node) { close_ep(node); },
                             [this](uint32_t node) {
                                 uint8_t hello = static_cast<uint8_t>(link_kind::hello);
                                 send(node, kLinkChannel, {&hello, 1});
                             },
                             [this](uint32_t node) { return _eps[node] != nullptr; }, _opts.on_peer_lost,
                             _opts.on_peer_unreachable, _opts.on_peer_left}) {
        _windows.resize(_opts.node_names.size());
        _eps.assign(_opts.node_names.size(), nullptr);
        _peer_addr.resize(_opts.node_names.size());
        _queued.resize(_opts.node_names.size());
        _inflight_to.assign(_opts.node_names.size(), 0);
        _idle_from.assign(_opts.node_names.size(), false);
    }

    ~ucx_transport() override {
        _ev.reset();
        _ev_progress.reset();
        _ev_grace.reset();
        if (_worker) {
            for (ucs_status_ptr_t r : _closing) {
                for (int i = 0; i < 10000 && U().request_check_status(r) == UCS_INPROGRESS; ++i)
                    U().worker_progress(_worker);
                U().request_free(r);
            }
            _closing.clear();
            for (auto &ep : _eps) {
                if (!ep) continue;
                ucp_request_param_t p{};
                p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
                p.flags = UCP_EP_CLOSE_FLAG_FORCE;
                ucs_status_ptr_t r = U().ep_close_nbx(ep, &p);
                if (UCS_PTR_IS_PTR(r)) {
                    for (int i = 0; i < 10000 && U().request_check_status(r) == UCS_INPROGRESS; ++i)
                        U().worker_progress(_worker);
                    U().request_free(r);
                }
            }
            if (_addr) U().worker_release_address(_worker, _addr);
            U().worker_destroy(_worker);
        }
        if (_ctx) U().cleanup(_ctx);
    }

    Status init() {
        _in_keys.resize(_opts.node_names.size());
        for (uint32_t i = 0; i < _in_keys.size(); ++i) {
            auto k = link_key(_opts.node_key, "ucx", i);
            PMIXCPP_RETURN_IF_ERROR(k, "ucx transport");
            _in_keys[i] = k.value();
        }
        auto tls = root_ucx_tls(_opts.ucx_tls);
        PMIXCPP_RETURN_IF_ERROR(tls, "ucx transport");
        ucp_config_t *cfg = nullptr;
        ucs_status_t s = U().config_read(nullptr, nullptr, &cfg);
        if (s != UCS_OK) return fail("ucp_config_read", s);
        if ((s = U().config_modify(cfg, "TLS", tls.value().c_str())) != UCS_OK) {
            U().config_release(cfg);
            return fail("UCX_TLS=" + tls.value(), s);
        }
        // Not opened anyway (TLS above); should a UCX version open them regardless, without error
        // handling (older UCX versions may not know the keys: nothing to turn off then).
        for (const char *key : {"POSIX_ERROR_HANDLING", "SYSV_ERROR_HANDLING"})
            if (U().config_modify(cfg, key, "n") != UCS_OK) PMIXCPP_LOG_DEBUG("ucx transport: UCX has no %s", key);
        if (!_opts.ucx_devices.empty() &&
            (s = U().config_modify(cfg, "NET_DEVICES", _opts.ucx_devices.c_str())) != UCS_OK) {
            U().config_release(cfg);
            return fail("UCX_NET_DEVICES=" + _opts.ucx_devices, s);
        }
        // A lost peer host that sends no reset is noticed by keepalive (UCX's default: 20 s).
        if (getenv("UCX_KEEPALIVE_INTERVAL") == nullptr) (void)U().config_modify(cfg, "KEEPALIVE_INTERVAL", "2s");
        ucp_params_t params{};
        params.field_mask = UCP_PARAM_FIELD_FEATURES;
        params.features = UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
        s = U().init_version(UCP_API_MAJOR, UCP_API_MINOR, &params, cfg, &_ctx);
        U().config_release(cfg);
        if (s != UCS_OK) return fail("ucp_init", s);
        ucp_worker_params_t wp{};
        wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
        wp.thread_mode = UCS_THREAD_MODE_SERIALIZED;
        if ((s = U().worker_create(_ctx, &wp, &_worker)) != UCS_OK) return fail("ucp_worker_create", s);
        size_t len = 0;
        if ((s = U().worker_get_address(_worker, &_addr, &len)) != UCS_OK) return fail("ucp_worker_get_address", s);
        _address = "ucx:" + to_hex(_addr, len);
        _own_addr.assign(reinterpret_cast<const uint8_t *>(_addr), reinterpret_cast<const uint8_t *>(_addr) + len);
        ucp_am_handler_param_t hp{};
        hp.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_ARG;
        hp.id = kAmId;
        hp.cb = on_am;
        hp.arg = this;
        if ((s = U().worker_set_am_recv_handler(_worker, &hp)) != UCS_OK) return fail("set_am_recv_handler", s);
        int fd = -1;
        if ((s = U().worker_get_efd(_worker, &fd)) != UCS_OK) return fail("ucp_worker_get_efd", s);
        _ev.reset(event_new(_base, fd, EV_READ | EV_PERSIST, on_event, this));
        _ev_progress.reset(evtimer_new(_base, on_event, this));
        _ev_grace.reset(evtimer_new(_base, on_grace, this));
        if (!_ev || !_ev_progress || !_ev_grace || event_add(_ev.get(), nullptr) != 0) return Status(PMIX_ERROR, "ucx: event_add failed");
        progress();
        return Status::success();
    }

    const char *kind() const override { return "ucx"; }
    std::string address() const override { return _address; }
    bool has_peers() const override { return _have_peers; }

    Status set_peers(const std::vector<std::string> &addresses, const std::vector<auth::key> &node_keys) override {
        if (addresses.size() != _eps.size() || node_keys.size() != _eps.size())
            return Status(PMIX_ERR_BAD_PARAM, "address table has " + std::to_string(addresses.size()) +
                                                  " entries for " + std::to_string(_eps.size()) + " nodes");
        std::vector<std::vector<uint8_t>> peers(addresses.size());
        for (uint32_t i = 0; i < addresses.size(); ++i) PMIXCPP_RETURN_IF_ERROR(parse_peer(i, addresses[i], &peers[i]));
        _peer_addr = std::move(peers);
        _out_keys.resize(_eps.size());
        for (uint32_t i = 0; i < _eps.size(); ++i) {
            auto k = link_key(node_keys[i], "ucx", _opts.node_id);
            PMIXCPP_RETURN_IF_ERROR(k, "ucx transport");
            _out_keys[i] = k.value();
        }
        _have_peers = true;
        for (uint32_t i = 0; i < _eps.size(); ++i)
            if (i != _opts.node_id) flush_queued(i);
        _live.start();  // endpoints to both ring neighbours, greeted so that they are wired up and watched
        progress();
        return Status::success();
    }

    // A node whose address and key are known now: connected to (eagerly, or because messages
    // wait), and what waited for its key sealed and sent in order.
    void flush_queued(uint32_t i) {
        auto q = std::move(_queued[i]);
        _queued[i].clear();
        if (_opts.eager_connect || !q.empty()) connect(i);
        for (auto &f : q) {
            auto sealed = auth::seal_frame(_out_keys[i], std::move(f), _opts.node_id, i, ++_send_seq);
            if (sealed.ok()) post_send(i, std::move(sealed.value()));
        }
    }

    // A peer's "ucx:<hex>" address, checked, with kAddressPad zero bytes after it.
    Status parse_peer(uint32_t i, const std::string &address, std::vector<uint8_t> *out) const {
        if (address.rfind("ucx:", 0) != 0 || address.size() > 4 + 2 * kMaxUcxAddress || !from_hex(address.substr(4), out))
            return Status(PMIX_ERR_BAD_PARAM, "node " + _opts.node_names[i] + " has no UCX address (" +
                                                  address.substr(0, 16) + "...): all nodes must use the same transport");
        if (Status st = check_ucx_address(*out, _own_addr); !st.ok())
            return st.with_context("address of node " + _opts.node_names[i]);
        // ucp_ep_create reads the address without a length: a zeroed tail keeps a short read
        // inside our buffer.
        out->resize(out->size() + kAddressPad, 0);
        return Status::success();
    }

    // Directory wire-up (transport.h): no table; each peer comes with add_peer.
    Status start_directory(std::function<void(uint32_t node)> need) override {
        if (_have_peers) return Status(PMIX_ERR_BAD_PARAM, "the peers are known already");
        if (!need) return Status(PMIX_ERR_BAD_PARAM, "directory wire-up without a way to ask");
        _need = std::move(need);
        _asked.assign(_eps.size(), false);
        _known.assign(_eps.size(), false);
        _peer_addr.resize(_eps.size());
        _out_keys.resize(_eps.size());
        _directory = true;
        _have_peers = true;
        for (uint32_t i = 0; i < _eps.size(); ++i)
            if (!_queued[i].empty()) ask(i);
        _live.start();  // greetings to both ring neighbours: they wait for their addresses
        progress();
        return Status::success();
    }

    Status add_peer(uint32_t node, const std::string &address, const auth::key &node_key) override {
        if (!_directory) return Status(PMIX_ERR_BAD_PARAM, "a peer added without the directory wire-up");
        if (node >= _eps.size() || node == _opts.node_id)
            return Status(PMIX_ERR_BAD_PARAM, "peer node " + std::to_string(node) + " of " + std::to_string(_eps.size()));
        if (_known[node]) return Status::success();
        std::vector<uint8_t> addr;
        PMIXCPP_RETURN_IF_ERROR(parse_peer(node, address, &addr));
        auto k = link_key(node_key, "ucx", _opts.node_id);
        PMIXCPP_RETURN_IF_ERROR(k, "ucx transport");
        _peer_addr[node] = std::move(addr);
        _out_keys[node] = k.value();
        _known[node] = true;
        if (!_live.alive(node)) {
            _queued[node].clear();
            return Status::success();
        }
        flush_queued(node);
        progress();
        return Status::success();
    }

    bool knows_address(uint32_t node) const override {
        return node < _eps.size() && (!_directory || _known[node]);
    }

    size_t awaiting_address() const override {
        size_t n = 0;
        if (!_directory) return 0;
        for (uint32_t i = 0; i < _eps.size(); ++i)
            if (!_known[i] && !_queued[i].empty() && _live.alive(i)) ++n;
        return n;
    }

    void never_known(uint32_t node, const std::string &why) override {
        if (!_directory || node >= _eps.size() || node == _opts.node_id || _known[node]) return;
        _queued[node].clear();
        _live.never_reached(node, why);
    }

    void ask(uint32_t node) {
        if (!_directory || node >= _asked.size() || _asked[node]) return;
        _asked[node] = true;
        _need(node);
    }

    void forget(uint32_t node) override { _live.forget(node); }

    bool said_goodbye(uint32_t node) const override { return _live.said_goodbye(node); }
    bool peer_alive(uint32_t node) const override { return _live.alive(node); }

    void leave(int budget_ms) override {
        if (!_have_peers) return;
        _leaving = true;  // the goodbyes may open endpoints over the cap: none is closed now
        size_t told = 0;
        uint8_t bye = static_cast<uint8_t>(link_kind::bye);
        // Sends still unfinished now (e.g. to a node whose step already ended) may never finish:
        // wait for the goodbyes only, not for them.
        std::vector<uint32_t> to;
        for (uint32_t i = 0; i < _eps.size(); ++i) {
            if (i == _opts.node_id || !_live.alive(i) || (!_eps[i] && !_live.has_heard(i))) continue;
            send(i, kLinkChannel, {&bye, 1});
            ++told;
            to.push_back(i);
        }
        // Flush the endpoints we said goodbye on: done when the peers have the goodbyes (remote
        // completion), so that our worker going away cannot overtake them.
        std::vector<ucs_status_ptr_t> flushes;
        for (uint32_t i : to) {
            if (!_eps[i]) continue;
            ucp_request_param_t p{};
            ucs_status_ptr_t r = U().ep_flush_nbx(_eps[i], &p);
            if (UCS_PTR_IS_PTR(r)) flushes.push_back(r);
        }
        auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(budget_ms);
        size_t pending = flushes.size();
        while (pending > 0 && std::chrono::steady_clock::now() < deadline) {
            U().worker_progress(_worker);
            pending = 0;
            for (ucs_status_ptr_t r : flushes)
                if (U().request_check_status(r) == UCS_INPROGRESS) ++pending;
        }
        for (ucs_status_ptr_t r : flushes) {
            if (U().request_check_status(r) == UCS_INPROGRESS) U().request_cancel(_worker, r);
            U().request_free(r);
        }
        PMIXCPP_LOG_DEBUG("ucx transport: said goodbye to %zu nodes (%zu not confirmed)", told, pending);
        PMIXCPP_LOG_VERBOSE("ucx transport: our node connections: at most %zu open (cap %zu), %llu closed idle and "
                            "reopened on need; peers closed %llu idle connections to us",
                            _lru.peak(), _lru.cap(), static_cast<unsigned long long>(_lru.evictions()),
                            static_cast<unsigned long long>(_idle_in));
    }

    size_t open_connections() const override { return _lru.open(); }
    size_t peak_connections() const override { return _lru.peak(); }
    uint64_t idle_closes() const override { return _lru.evictions(); }

    void send(uint32_t node, channel_id chan, std::span<const uint8_t> body) override {
        if (node >= _eps.size() || node == _opts.node_id) {
            PMIXCPP_LOG_ERROR("ucx transport: send to node %u dropped", node);
            return;
        }
        if (!_live.alive(node)) {
            PMIXCPP_LOG_DEBUG("ucx transport: %s message to node %s dropped: the node %s", channel_name(_opts.channels, chan),
                              _opts.node_names[node].c_str(), _live.state(node) == peer_state::lost ? "is lost" : "left");
            return;
        }
        auto plain = encode_node_frame(_opts.id, _opts.node_id, chan, body);
        if (plain.ok() && (!_have_peers || (_directory && !_known[node]))) {  // sealed once the node's
            _queued[node].push_back(std::move(plain.value()));  // record is verified (set_peers, add_peer)
            ask(node);
            return;
        }
        auto frame = plain.ok() ? auth::seal_frame(_out_keys[node], std::move(plain.value()), _opts.node_id, node, ++_send_seq)
                                : plain.status();
        if (!frame.ok()) {
            PMIXCPP_LOG_ERROR("ucx transport: cannot encode a %s message: %s", channel_name(_opts.channels, chan),
                              frame.status().message().c_str());
            return;
        }
        post_send(node, std::move(frame.value()));
        enforce_cap(node);
        progress();
    }

private:
    Status fail(const std::string &what, ucs_status_t s) {
        return Status(PMIX_ERR_NOT_AVAILABLE, "ucx: " + what + ": " + U().status_string(s));
    }

    bool connect(uint32_t node) {
        if (_eps[node]) return true;
        ucp_ep_params_t ep{};
        ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                        UCP_EP_PARAM_FIELD_ERR_HANDLER;
        ep.address = reinterpret_cast<const ucp_address_t *>(_peer_addr[node].data());
        ep.err_mode = UCP_ERR_HANDLING_MODE_PEER;
        ep.err_handler.cb = on_ep_error;
        ep.err_handler.arg = this;
        ucs_status_t s = U().ep_create(_worker, &ep, &_eps[node]);
        if (s != UCS_OK) {
            // Liveness decides what it means (a peer whose step ended, or a lost one) and says so.
            PMIXCPP_LOG_DEBUG("ucx transport: endpoint to node %s: %s", _opts.node_names[node].c_str(),
                              U().status_string(s));
            _eps[node] = nullptr;
            _live.connect_failed(node, std::string("endpoint: ") + U().status_string(s), std::chrono::steady_clock::now());  // (e.g. TCP refused)
            return false;
        }
        _lru.touch(node);
        return true;
    }

    void post_send(uint32_t node, std::vector<uint8_t> &&frame, bool retry = true) {
        if (!connect(node)) return;
        _lru.touch(node);
        auto *req = new send_req{std::move(frame), this, node, retry};
        ucp_request_param_t p{};
        // Eager for every size: the receiver gets whole messages in its callback, no rendezvous
        // round trips (node messages are modest; collectives pipeline them).
        p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS;
        p.flags = UCP_AM_SEND_FLAG_EAGER;
        p.cb.send = on_sent;
        p.user_data = req;
        ucs_status_ptr_t r = U().am_send_nbx(_eps[node], kAmId, nullptr, 0, req->frame.data(), req->frame.size(), &p);
        if (r == nullptr) {
            _live.reached(node);
            delete req;
        } else if (UCS_PTR_IS_ERR(r)) {
            PMIXCPP_LOG_ERROR("ucx transport: send to node %s: %s", _opts.node_names[node].c_str(),
                              U().status_string(UCS_PTR_STATUS(r)));
            delete req;
        } else {
            // The callback owns `req` and frees the request: a request freed before it completes
            // gets no callback (UCX: "no further notifications or callbacks").
            ++_inflight;
            ++_inflight_to[node];
        }
    }

    // More endpoints of ours open than the cap: close the least recently used idle ones;
    // `using_now` was just sent to.
    void enforce_cap(uint32_t using_now) {
        if (_leaving || _lru.cap() == 0 || _lru.open() <= _lru.cap()) return;
        auto victims = _lru.evict([&](uint32_t node) {
            if (node == using_now) return true;
            if (!_eps[node]) return false;  // nothing open to close
            if (_inflight_to[node] > 0 || !_queued[node].empty()) return true;
            if (_live.watched(node)) return true;
            return _opts.busy && _opts.busy(node);
        });
        for (uint32_t node : victims) close_idle(node);
    }

    // Close an idle endpoint of ours: the peer is told first (link idle, flushed by the close)
    // so that an error its endpoint sees is no loss to it; the next message makes a new one.
    void close_idle(uint32_t node) {
        ucp_ep_h ep = _eps[node];
        if (!ep) return;
        uint8_t idle = static_cast<uint8_t>(link_kind::idle);
        auto plain = encode_node_frame(_opts.id, _opts.node_id, kLinkChannel, {&idle, 1});
        auto frame = plain.ok() ? auth::seal_frame(_out_keys[node], std::move(plain.value()), _opts.node_id, node, ++_send_seq)
                                : plain.status();
        if (frame.ok()) post_send(node, std::move(frame.value()), false);
        _lru.closed(node);  // post_send touched it again
        _eps[node] = nullptr;
        ucp_request_param_t p{};  // flush mode: what was sent on it (the idle notice) goes first
        ucs_status_ptr_t r = U().ep_close_nbx(ep, &p);
        if (UCS_PTR_IS_PTR(r))
            _closing.push_back(r);  // completes in a later progress
        else if (UCS_PTR_IS_ERR(r))
            PMIXCPP_LOG_DEBUG("ucx transport: closing the idle endpoint to node %s: %s", _opts.node_names[node].c_str(),
                              U().status_string(UCS_PTR_STATUS(r)));
        _live.unlinked(node);
        PMIXCPP_LOG_DEBUG("ucx transport: closed the idle endpoint to node %s (%zu of at most %zu open)",
                          _opts.node_names[node].c_str(), _lru.open(), _lru.cap());
    }

    // From inside ucp_worker_progress: queued, handled in order by progress().
    static void on_ep_error(void *arg, ucp_ep_h ep, ucs_status_t status) {
        auto *self = static_cast<ucx_transport *>(arg);
        try {
            inbound in;
            in.failed_ep = ep;
            in.error = status;
            self->_received.push_back(std::move(in));
        } catch (const std::exception &e) {
            PMIXCPP_LOG_ERROR("ucx transport: endpoint error not handled: %s", e.what());
        }
    }

    void close_ep(uint32_t node) {
        ucp_ep_h ep = _eps[node];
        if (!ep) return;
        _eps[node] = nullptr;
        _lru.closed(node);
        ucp_request_param_t p{};
        p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
        p.flags = UCP_EP_CLOSE_FLAG_FORCE;
        ucs_status_ptr_t r = U().ep_close_nbx(ep, &p);
        if (UCS_PTR_IS_PTR(r)) U().request_free(r);  // completes in a later progress
    }

    // An endpoint error: the peer's worker is gone. Lost, unless its goodbye comes within the
    // grace (liveness.h); nothing more is sent to it meanwhile.
    void endpoint_failed(ucp_ep_h ep, ucs_status_t status) {
        uint32_t node = 0;
        while (node < _eps.size() && _eps[node] != ep) ++node;
        if (node == _eps.size()) return;  // already closed
        close_ep(node);
        if (_idle_from[node]) {  // the peer closed its idle endpoint to us: no loss
            _idle_from[node] = false;
            _live.unlinked(node);
            PMIXCPP_LOG_DEBUG("ucx transport: endpoint to node %s closed after its idle close (%s); a new one on need",
                              _opts.node_names[node].c_str(), U().status_string(status));
            return;
        }
        _live.broken(node, std::string("endpoint error: ") + U().status_string(status), std::chrono::steady_clock::now());
        if (_live.waiting_for_goodbyes()) {
            timeval tv{0, 100 * 1000};
            evtimer_add(_ev_grace.get(), &tv);
        }
    }

    static void on_grace(evutil_socket_t, short, void *arg) {
        guarded("grace timer", [&] { static_cast<ucx_transport *>(arg)->check_suspects(); });
    }

    // Every callback from C (UCX, libevent) runs its body through this: no exception crosses.
    template <typename F>
    static void guarded(const char *where, F &&f) noexcept {
        try {
            f();
        } catch (const std::exception &e) {
            PMIXCPP_LOG_ERROR("ucx transport: %s: %s", where, e.what());
        } catch (...) {
            PMIXCPP_LOG_ERROR("ucx transport: %s: unknown exception", where);
        }
    }

    void check_suspects() {
        progress();  // a goodbye may be waiting in UCX
        _live.tick(std::chrono::steady_clock::now());
        if (_live.waiting_for_goodbyes()) {
            timeval tv{0, 100 * 1000};
            evtimer_add(_ev_grace.get(), &tv);
        }
    }

    static void on_sent(void *request, ucs_status_t status, void *user) {
        U().request_free(request);
        std::unique_ptr<send_req> req(static_cast<send_req *>(user));
        --req->owner->_inflight;
        --req->owner->_inflight_to[req->node];
        guarded("send completion", [&] {
            if (status != UCS_OK && status != UCS_ERR_CANCELED) {
                PMIXCPP_LOG_DEBUG("ucx transport: send to node %s failed: %s",
                                  req->owner->_opts.node_names[req->node].c_str(), U().status_string(status));
                // Posted again once after the endpoint errors are handled (progress), if the
                // node is still alive then (an idle close of the peer's, not a loss).
                if (req->retry) req->owner->_resend.emplace_back(req->node, std::move(req->frame));
            }
            if (status == UCS_OK) req->owner->_live.reached(req->node);
        });
    }

    // Room for one more received frame of `length` bytes (counted once it is queued or in flight),
    // else a refusal: the frame is dropped before anything is allocated for it.
    bool admit(size_t length, bool rendezvous) {
        const char *why = nullptr;
        if (length > kUcxFrameMax) why = "longer than the node payload cap";
        else if (_received.size() + static_cast<size_t>(_inflight_recv) >= kUcxReceivedFramesMax ||
                 _received_bytes + length > kUcxReceivedBytesMax)
            why = "the receive queue is full";
        if (why == nullptr) {
            _received_bytes += length;
            return true;
        }
        _refusals.refused("a UCX peer", std::string(rendezvous ? "rendezvous" : "eager") + " message of " +
                                            std::to_string(length) + " bytes refused: " + why);
        return false;
    }

    void queue_frame(std::vector<uint8_t> &&frame) {
        inbound in;
        in.frame = std::move(frame);
        _received.push_back(std::move(in));
    }

    static ucs_status_t on_am(void *arg, const void *, size_t, void *data, size_t length, const ucp_am_recv_param_t *param) {
        auto *self = static_cast<ucx_transport *>(arg);
        const bool rndv = (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0;
        guarded("receive", [&] {
            if (!self->admit(length, rndv)) return;  // a rendezvous not received is released by UCX
            if (rndv) {
                auto req = std::make_unique<recv_req>(recv_req{std::vector<uint8_t>(length), self});
                ucp_request_param_t p{};
                p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
                p.cb.recv_am = on_rndv_done;
                p.user_data = req.get();
                ucs_status_ptr_t r = U().am_recv_data_nbx(self->_worker, data, req->frame.data(), length, &p);
                if (r == nullptr) {
                    self->queue_frame(std::move(req->frame));
                } else if (UCS_PTR_IS_ERR(r)) {
                    self->_received_bytes -= length;
                    PMIXCPP_LOG_ERROR("ucx transport: receive: %s", U().status_string(UCS_PTR_STATUS(r)));
                } else {
                    ++self->_inflight;
                    ++self->_inflight_recv;
                    (void)req.release();  // on_rndv_done owns it and frees the request
                }
                return;
            }
            const auto *p = static_cast<const uint8_t *>(data);
            try {
                self->queue_frame(std::vector<uint8_t>(p, p + length));
            } catch (...) {
                self->_received_bytes -= length;
                throw;
            }
        });
        return UCS_OK;
    }

    static void on_rndv_done(void *request, ucs_status_t status, size_t, void *user) {
        U().request_free(request);
        std::unique_ptr<recv_req> req(static_cast<recv_req *>(user));
        ucx_transport *self = req->owner;
        --self->_inflight;
        --self->_inflight_recv;
        const size_t length = req->frame.size();
        guarded("rendezvous completion", [&] {
            if (status == UCS_OK) {
                self->queue_frame(std::move(req->frame));
                return;
            }
            self->_received_bytes -= length;
            PMIXCPP_LOG_ERROR("ucx transport: receive failed: %s", U().status_string(status));
        });
    }

    static void on_event(evutil_socket_t, short, void *arg) {
        guarded("progress", [&] { static_cast<ucx_transport *>(arg)->progress(); });
    }

    // Progress until UCX has nothing more, deliver what arrived, re-arm the event fd. While
    // requests are in flight, poll on a short timer too (not every completion signals the fd).
    void progress() {
        if (_in_progress) return;
        _in_progress = true;
        struct reset {
            bool &flag;
            ~reset() { flag = false; }
        } done{_in_progress};  // also when a handler throws
        for (;;) {
            // Frames are handed on while at most half the receive queue is used, so that a flood
            // from one peer meets a full queue (and is dropped) only if we cannot keep up at all.
            bool stopped_early = false;
            while (U().worker_progress(_worker) != 0) {
                if (_received.size() >= kUcxReceivedFramesMax / 2 || _received_bytes >= kUcxReceivedBytesMax / 2) {
                    stopped_early = true;
                    break;
                }
            }
            while (!_received.empty()) {
                inbound in = std::move(_received.front());
                _received.pop_front();
                _received_bytes -= in.frame.size();
                if (in.failed_ep) {
                    endpoint_failed(in.failed_ep, in.error);
                    continue;
                }
                envelope env;
                std::span<const uint8_t> inner;
                uint64_t seq = 0;
                uint32_t src = UINT32_MAX;
                Status st = auth::sealed_source(in.frame, &src);
                if (st.ok() && (src >= _in_keys.size() || src == _opts.node_id))
                    st = Status(PMIX_ERR_NO_PERMISSIONS, "frame from node " + std::to_string(src));
                if (st.ok()) st = auth::open_sealed_frame(_in_keys[src], in.frame, _opts.node_id, &inner, &src, &seq);
                if (st.ok()) st = decode_node_frame(inner, _opts.id, static_cast<uint32_t>(_eps.size()), _opts.channels, &env);
                if (st.ok() && env.src_node != src)
                    st = Status(PMIX_ERR_NO_PERMISSIONS, "frame of node " + std::to_string(env.src_node) +
                                                             " sealed by node " + std::to_string(src));
                if (st.ok() && (env.src_node == _opts.node_id || !_windows[env.src_node].accept(seq)))
                    st = Status(PMIX_ERR_NO_PERMISSIONS, "replayed frame " + std::to_string(seq) + " of node " +
                                                             std::to_string(env.src_node));
                if (!st.ok()) {
                    _refusals.refused("a UCX peer", "message refused: " + st.message());
                    continue;
                }
                _live.heard(env.src_node);
                if (env.chan == kLinkChannel) {
                    if (env.body.size() == 1 && env.body[0] == static_cast<uint8_t>(link_kind::idle)) {
                        _idle_from[env.src_node] = true;  // an error on our endpoint there follows, or not
                        ++_idle_in;
                        PMIXCPP_LOG_DEBUG("ucx transport: node %s closed its idle endpoint to us",
                                          _opts.node_names[env.src_node].c_str());
                    }
                    _live.link_message(env.src_node, env.body);
                    continue;
                }
                if (_opts.on_receive) _opts.on_receive(std::move(env));  // may send (re-entry guarded)
                while (U().worker_progress(_worker) != 0) {
                }
            }
            if (stopped_early) continue;
            if (!_resend.empty()) {
                auto again = std::move(_resend);
                _resend.clear();
                for (auto &[node, frame] : again)
                    if (_live.alive(node)) post_send(node, std::move(frame), false);
                continue;
            }
            std::erase_if(_closing, [](ucs_status_ptr_t r) {
                if (U().request_check_status(r) == UCS_INPROGRESS) return false;
                U().request_free(r);
                return true;
            });
            ucs_status_t s = U().worker_arm(_worker);
            if (s == UCS_ERR_BUSY) continue;
            break;
        }
        if (_inflight > 0 || !_closing.empty()) {
            timeval tv{0, 200};
            evtimer_add(_ev_progress.get(), &tv);
        }
    }

    event_base *_base;
    transport_options _opts;
    std::vector<auth::key> _in_keys;            // links into us, by source node (our node key)
    std::vector<auth::key> _out_keys;           // links from us, by destination (their records)
    uint64_t _send_seq = 0;                     // our frames' numbers (one counter for all peers)
    std::vector<auth::replay_window> _windows;  // by source node
    listener_guard _refusals;                   // its rate-limited log only
    ucp_context_h _ctx = nullptr;
    ucp_worker_h _worker = nullptr;
    ucp_address_t *_addr = nullptr;
    std::string _address;
    event_ptr _ev, _ev_progress, _ev_grace;
    bool _have_peers = false;
    bool _directory = false;                   // directory wire-up (start_directory)
    std::function<void(uint32_t node)> _need;  // directory wire-up: ask for a node's record
    std::vector<bool> _asked, _known;
    bool _in_progress = false;
    long _inflight = 0;
    std::vector<ucp_ep_h> _eps;
    static constexpr size_t kAddressPad = 256;
    std::vector<uint8_t> _own_addr;                 // our worker's address (the format a peer's must have)
    std::vector<std::vector<uint8_t>> _peer_addr;  // checked, with kAddressPad zero bytes after each
    size_t _received_bytes = 0;                    // frames in _received and rendezvous in flight
    long _inflight_recv = 0;                       // rendezvous receives in flight
    std::vector<std::vector<std::vector<uint8_t>>> _queued;
    std::deque<inbound> _received;
    conn_lru _lru;                                  // our open endpoints, by last use (the cap)
    std::vector<uint32_t> _inflight_to;             // our sends in flight, by node
    std::vector<bool> _idle_from;                   // the node told us it closed its idle endpoint
    uint64_t _idle_in = 0;                          // idle closes peers told us of
    std::vector<ucs_status_ptr_t> _closing;         // idle endpoints' close requests
    std::vector<std::pair<uint32_t, std::vector<uint8_t>>> _resend;  // failed sends, posted again once
    bool _leaving = false;
    peer_liveness _live;  // declared last: its operations use the endpoints above
};

}  // namespace

Result<std::unique_ptr<node_transport>> make_ucx_transport(event_base *base, transport_options opts) {
    auto api = load_ucx();
    PMIXCPP_RETURN_IF_ERROR(api);
    g_ucx = api.value();
    auto t = std::make_unique<ucx_transport>(base, std::move(opts));
    PMIXCPP_RETURN_IF_ERROR(t->init());
    return std::unique_ptr<node_transport>(std::move(t));
}

}  // namespace pmixcpp::net
