// The pieces of the TCP node transport (tcp_transport.cc) below the transport itself: a
// connection's send queue, our connection to a peer and a peer's connection to us, the sealed
// frames they carry, the socket options and the constants of their timing.
#pragma once

#include <event2/event.h>
#include <netinet/in.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <sys/socket.h>
#include <sys/uio.h>
#include <vector>

#include "envelope.h"
#include "handshake.h"
#include "status.h"
#include "wire/frame.h"

namespace pmixcpp::net::tcp {

struct event_deleter {
    void operator()(event *e) const { event_free(e); }
};
using event_ptr = std::unique_ptr<event, event_deleter>;

class tcp_transport;

// A sealed node frame (handshake.h) inside a frame of its own: the inner frame, its trailer.
constexpr uint16_t kSealedNodeFrameType = 0x101;
constexpr uint32_t kMaxSealedPayload = kMaxNodePayload + wire::kFrameHeaderSize + 64 + auth::kSealSize;

Result<std::vector<uint8_t>> sealed_tcp_frame(const auth::key &k, const std::vector<uint8_t> &inner, uint32_t src,
                                              uint32_t dst, uint64_t seq);

// Open one sealed frame of a connection from/to `peer` whose last number was `*last`.
Status open_tcp_frame(const wire::Frame &fr, const auth::key &k, uint32_t me, uint32_t peer, uint64_t *last,
                      std::span<const uint8_t> *inner);

// How long a connecting side waits for the listener's challenge, and how often it retries a
// handshake the listener dropped (it sheds unauthenticated connections under a flood).
constexpr auto kClientHandshakeTimeout = std::chrono::seconds(10);
constexpr int kHandshakeRetries = 3;
constexpr timeval kSweepPeriod{1, 0};
// After a link with a peer was closed for the cap, the peer may leave while we have none: its
// goodbye then comes on the link it opens to say so, maybe after our own new link failed.
constexpr std::chrono::milliseconds kUnlinkedGrace{1000};
// Static wire-up: a peer's slurmstepd may start after ours, so until we first reached it, a
// refused or dropped connection is tried again (50 ms, doubling to 1 s) for this long before the
// usual rules (liveness.h) take it as gone.
constexpr std::chrono::seconds kStaticStartWindow{60};
constexpr std::chrono::milliseconds kStaticRetryFirst{50}, kStaticRetryMax{1000};

// What waits to be written on one connection: whole frames, each held once however many
// connections it goes out on (a fan-out's children share it), written with one sendmsg.
class send_queue {
public:
    using chunk = std::shared_ptr<const std::vector<uint8_t>>;

    bool empty() const { return _chunks.empty(); }
    size_t pending() const { return _bytes - _off; }
    void push_back(chunk c) {
        if (!c || c->empty()) return;
        _bytes += c->size();
        _chunks.push_back(std::move(c));
    }
    // Before everything not yet written (the handshake's response, once the listener proved it).
    void push_front(std::vector<uint8_t> bytes) {
        if (bytes.empty()) return;
        if (_off > 0) {  // the unwritten rest of a frame begun on an earlier connection stays next
            auto rest = std::make_shared<const std::vector<uint8_t>>(_chunks.front()->begin() + static_cast<std::ptrdiff_t>(_off),
                                                                     _chunks.front()->end());
            _bytes -= _chunks.front()->size();
            _chunks.pop_front();
            _off = 0;
            _bytes += rest->size();
            _chunks.push_front(std::move(rest));
        }
        _bytes += bytes.size();
        _chunks.push_front(std::make_shared<const std::vector<uint8_t>>(std::move(bytes)));
    }
    void clear() {
        _chunks.clear();
        _off = 0;
        _bytes = 0;
    }
    // Write what the socket takes now: 0 when all is written, EAGAIN when it would block, else
    // the errno of the failure.
    int write_to(int fd) {
        while (!_chunks.empty()) {
            iovec iov[16];
            int n = 0;
            size_t off = _off;
            for (auto it = _chunks.begin(); it != _chunks.end() && n < 16; ++it, off = 0)
                iov[n++] = {const_cast<uint8_t *>((*it)->data()) + off, (*it)->size() - off};
            msghdr m{};
            m.msg_iov = iov;
            m.msg_iovlen = static_cast<size_t>(n);
            ssize_t w = ::sendmsg(fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (w < 0) {
                if (errno == EINTR) continue;
                return errno == EWOULDBLOCK ? EAGAIN : errno;
            }
            consume(static_cast<size_t>(w));
        }
        return 0;
    }

private:
    void consume(size_t n) {
        while (n > 0 && !_chunks.empty()) {
            size_t left = _chunks.front()->size() - _off;
            if (n < left) {
                _off += n;
                return;
            }
            n -= left;
            _bytes -= _chunks.front()->size();
            _chunks.pop_front();
            _off = 0;
        }
    }

    std::deque<chunk> _chunks;
    size_t _off = 0;    // written of the first chunk
    size_t _bytes = 0;  // of all chunks
};

struct out_conn {
    int fd = -1;
    bool connected = false;
    bool authenticated = false;  // the listener proved the link key; our messages may go
    auth::key link_key;          // of the link from us into this node (from its verified record)
    bool have_key = false;
    uint64_t send_seq = 0, recv_seq = 0;
    std::optional<auth::client_handshake> hs;
    auth::frame_reader hs_reader;
    std::chrono::steady_clock::time_point hs_deadline{};
    int hs_failures = 0;
    event_ptr ev_retry;
    event_ptr ev_read;  // EOF / reset of the peer, its goodbye
    wire::FrameReader reader{kMaxSealedPayload};
    sockaddr_in addr{};
    bool have_addr = false;
    bool ever_reached = false;    // a handshake of ours with it succeeded once
    bool record_refused = false;  // static wire-up: its listener's record failed the check
    int start_waits = 0;          // static wire-up: retries while it may not have started yet
    send_queue queue;
    std::vector<std::vector<uint8_t>> pending_plain;  // before the node's key is known
    event_ptr ev;
    tcp_transport *owner = nullptr;
    uint32_t node = 0;
};

struct in_conn {
    int fd = -1;
    event_ptr ev;
    // Until authenticated: the handshake, read byte-exactly into its fixed buffer.
    std::optional<auth::server_handshake> hs;
    auth::frame_reader hs_reader;
    wire::FrameReader reader{kMaxSealedPayload};  // afterwards
    auth::key link_key;                           // of the link from its node into us
    uint64_t send_seq = 0, recv_seq = 0;
    tcp_transport *owner = nullptr;
    uint64_t id = 0;
    std::string peer;            // its address, for log lines
    uint32_t node = UINT32_MAX;  // known from its handshake
    bool idle_close = false;     // its node said it closes the connection for the cap: EOF is no loss
};

// Every node socket: no Nagle; keepalive so that a peer host that vanished without a reset is
// noticed in about 20 s; unacknowledged data fails the connection after 20 s.
void set_node_socket_options(int fd);

// Write all of `q` to a non-blocking socket, waiting until `deadline` (poll clock ms).
bool write_until(int fd, send_queue &q, std::chrono::steady_clock::time_point deadline);

}  // namespace pmixcpp::net::tcp
