// TCP node transport: non-blocking sockets in the server's libevent loop. One outgoing connection
// per peer carries our messages to it (connected lazily on first send, or eagerly), accepted
// connections only carry the peers' messages to us: no connection races to resolve.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <map>

#include "log.h"
#include "transport.h"
#include "wire/frame.h"

namespace pmixcpp::net {

namespace {

struct event_deleter {
    void operator()(event *e) const { event_free(e); }
};
using event_ptr = std::unique_ptr<event, event_deleter>;

class tcp_transport;

struct out_conn {
    int fd = -1;
    bool connected = false;
    sockaddr_in addr{};
    bool have_addr = false;
    std::vector<uint8_t> buf;
    size_t sent = 0;
    event_ptr ev;
    tcp_transport *owner = nullptr;
    uint32_t node = 0;
};

struct in_conn {
    int fd = -1;
    event_ptr ev;
    wire::FrameReader reader{kMaxNodePayload};
    tcp_transport *owner = nullptr;
    uint64_t id = 0;
};

class tcp_transport : public node_transport {
public:
    tcp_transport(event_base *base, transport_options opts) : _base(base), _opts(std::move(opts)) {
        _out.resize(_opts.node_names.size());
        for (uint32_t i = 0; i < _out.size(); ++i) {
            _out[i].owner = this;
            _out[i].node = i;
        }
    }
    ~tcp_transport() override {
        for (auto &o : _out) {
            o.ev.reset();
            if (o.fd >= 0) close(o.fd);
        }
        _in.clear();
        _ev_listen.reset();
        if (_listen_fd >= 0) close(_listen_fd);
    }

    Status listen_any() {
        _listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (_listen_fd < 0) return Status(PMIX_ERROR, std::string("socket: ") + strerror(errno));
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_ANY);
        socklen_t len = sizeof(a);
        if (bind(_listen_fd, reinterpret_cast<sockaddr *>(&a), sizeof(a)) != 0 || listen(_listen_fd, 256) != 0 ||
            getsockname(_listen_fd, reinterpret_cast<sockaddr *>(&a), &len) != 0)
            return Status(PMIX_ERROR, std::string("tcp listen: ") + strerror(errno));
        _port = ntohs(a.sin_port);
        _ev_listen.reset(event_new(_base, _listen_fd, EV_READ | EV_PERSIST, on_accept, this));
        if (!_ev_listen || event_add(_ev_listen.get(), nullptr) != 0) return Status(PMIX_ERROR, "event_add failed");
        return Status::success();
    }

    const char *kind() const override { return "tcp"; }
    std::string address() const override { return "tcp:*:" + std::to_string(_port); }
    bool has_peers() const override { return _have_peers; }

    Status set_peers(const std::vector<std::string> &addresses) override {
        if (addresses.size() != _out.size())
            return Status(PMIX_ERR_BAD_PARAM, "address table has " + std::to_string(addresses.size()) +
                                                  " entries for " + std::to_string(_out.size()) + " nodes");
        for (uint32_t i = 0; i < addresses.size(); ++i) {
            const std::string &a = addresses[i];
            // tcp:<ipv4>:<port>
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
        }
        _have_peers = true;
        for (uint32_t i = 0; i < _out.size(); ++i)
            if (i != _opts.node_id && (_opts.eager_connect || !_out[i].buf.empty())) start_connect(_out[i]);
        return Status::success();
    }

    void send(uint32_t node, channel chan, std::span<const uint8_t> body) override {
        if (node >= _out.size()) {
            PMIXCPP_LOG_ERROR("tcp transport: send to node %u of %zu", node, _out.size());
            return;
        }
        auto frame = encode_node_frame(_opts.id, _opts.node_id, chan, body);
        if (!frame.ok()) {
            PMIXCPP_LOG_ERROR("tcp transport: cannot encode a %s message to node %s: %s", to_string(chan),
                              _opts.node_names[node].c_str(), frame.status().message().c_str());
            return;
        }
        if (node == _opts.node_id) {  // loopback: deliver from the loop, never re-entrantly
            PMIXCPP_LOG_ERROR("tcp transport: message to self dropped");
            return;
        }
        out_conn &o = _out[node];
        o.buf.insert(o.buf.end(), frame->begin(), frame->end());
        if (!_have_peers) return;
        if (o.fd < 0)
            start_connect(o);
        else if (o.connected)
            flush(o);
    }

private:
    static void on_accept(evutil_socket_t, short, void *arg) {
        auto *self = static_cast<tcp_transport *>(arg);
        for (;;) {
            int fd = accept4(self->_listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
            if (fd < 0) return;
            int one = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
            auto c = std::make_unique<in_conn>();
            c->fd = fd;
            c->owner = self;
            c->id = self->_next_in++;
            c->ev.reset(event_new(self->_base, fd, EV_READ | EV_PERSIST, on_in_read, c.get()));
            if (!c->ev || event_add(c->ev.get(), nullptr) != 0) {
                close(fd);
                continue;
            }
            self->_in.emplace(c->id, std::move(c));
        }
    }

    void close_in(uint64_t id, const char *why) {
        auto it = _in.find(id);
        if (it == _in.end()) return;
        if (why) PMIXCPP_LOG_ERROR("tcp transport: dropping an incoming node connection: %s", why);
        it->second->ev.reset();
        close(it->second->fd);
        _in.erase(it);
    }

    static void on_in_read(evutil_socket_t fd, short, void *arg) {
        auto *c = static_cast<in_conn *>(arg);
        tcp_transport *self = c->owner;
        uint64_t id = c->id;
        uint8_t buf[65536];
        ssize_t n = recv(fd, buf, sizeof(buf), 0);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
            self->close_in(id, nullptr);
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
            Status st = fr.type == kNodeFrameType
                            ? decode_node_payload(fr.payload, self->_opts.id, self->_out.size(), &env)
                            : Status(PMIX_ERR_BAD_PARAM, "frame type " + std::to_string(fr.type));
            if (!st.ok()) {
                self->close_in(id, ("message refused: " + st.message()).c_str());
                return;
            }
            if (self->_opts.on_receive) self->_opts.on_receive(std::move(env));
            if (self->_in.find(id) == self->_in.end()) return;
        }
    }

    void start_connect(out_conn &o) {
        if (o.fd >= 0 || !o.have_addr) return;
        o.fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (o.fd < 0) {
            PMIXCPP_LOG_ERROR("tcp transport: socket for node %s: %m", _opts.node_names[o.node].c_str());
            return;
        }
        int one = 1;
        setsockopt(o.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        o.connected = false;
        o.ev.reset(event_new(_base, o.fd, EV_WRITE | EV_PERSIST, on_out_write, &o));
        int rc = connect(o.fd, reinterpret_cast<sockaddr *>(&o.addr), sizeof(o.addr));
        if (rc != 0 && errno != EINPROGRESS) {
            fail_out(o, strerror(errno));
            return;
        }
        event_add(o.ev.get(), nullptr);
    }

    void fail_out(out_conn &o, const std::string &why) {
        PMIXCPP_LOG_ERROR("tcp transport: connection to node %s (%u) failed: %s; %zu bytes dropped",
                          _opts.node_names[o.node].c_str(), o.node, why.c_str(), o.buf.size() - o.sent);
        o.ev.reset();
        if (o.fd >= 0) close(o.fd);
        o.fd = -1;
        o.connected = false;
        o.buf.clear();
        o.sent = 0;
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
            PMIXCPP_LOG_DEBUG("tcp transport: connected to node %s", self->_opts.node_names[o->node].c_str());
        }
        self->flush(*o);
    }

    void flush(out_conn &o) {
        while (o.sent < o.buf.size()) {
            ssize_t n = ::send(o.fd, o.buf.data() + o.sent, o.buf.size() - o.sent, MSG_NOSIGNAL);
            if (n < 0) {
                if (errno == EINTR) continue;
                if (errno == EAGAIN || errno == EWOULDBLOCK) {
                    event_add(o.ev.get(), nullptr);
                    return;
                }
                fail_out(o, strerror(errno));
                return;
            }
            o.sent += static_cast<size_t>(n);
        }
        o.buf.clear();
        o.sent = 0;
        event_del(o.ev.get());
    }

    event_base *_base;
    transport_options _opts;
    int _listen_fd = -1;
    uint16_t _port = 0;
    event_ptr _ev_listen;
    bool _have_peers = false;
    std::vector<out_conn> _out;
    std::map<uint64_t, std::unique_ptr<in_conn>> _in;
    uint64_t _next_in = 1;
};

}  // namespace

Result<std::unique_ptr<node_transport>> make_tcp_transport(event_base *base, transport_options opts) {
    auto t = std::make_unique<tcp_transport>(base, std::move(opts));
    PMIXCPP_RETURN_IF_ERROR(t->listen_any());
    return std::unique_ptr<node_transport>(std::move(t));
}

}  // namespace pmixcpp::net
