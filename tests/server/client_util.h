// A minimal raw-frame client of the server protocol (shared/PROTOCOL.md), for tests and for the
// standalone test client run under srun. Blocking, one request at a time unless asked otherwise.
#pragma once

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "wire/frame.h"
#include "wire/messages.h"

namespace pmixcpp::testing {

class raw_client {
public:
    raw_client() = default;
    ~raw_client() { close_fd(); }
    raw_client(const raw_client &) = delete;

    bool open(const std::string &path) {
        _fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (_fd < 0) return false;
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        if (path.size() >= sizeof(a.sun_path)) return false;
        memcpy(a.sun_path, path.c_str(), path.size() + 1);
        return connect(_fd, reinterpret_cast<sockaddr *>(&a), sizeof(a)) == 0;
    }
    void close_fd() {
        if (_fd >= 0) ::close(_fd);
        _fd = -1;
    }
    int fd() const { return _fd; }

    bool send_raw(const void *data, size_t n) {
        const auto *p = static_cast<const uint8_t *>(data);
        while (n) {
            ssize_t k = ::send(_fd, p, n, MSG_NOSIGNAL);
            if (k < 0 && errno == EINTR) continue;
            if (k <= 0) return false;
            p += k;
            n -= static_cast<size_t>(k);
        }
        return true;
    }

    template <typename M>
    bool send_msg(wire::msg_type type, uint32_t id, const M &m) {
        wire::Writer w;
        if (!wire::encode(w, m).ok()) return false;
        auto f = wire::encode_frame(static_cast<uint16_t>(type), 0, id, w.data());
        return f.ok() && send_raw(f->data(), f->size());
    }

    // Next frame, or nullopt on EOF / error / timeout.
    std::optional<wire::Frame> recv_frame(int timeout_ms = 5000) {
        while (true) {
            auto f = _reader.next();
            if (!f.ok()) return std::nullopt;
            if (f->has_value()) return std::move(**f);
            pollfd p{_fd, POLLIN, 0};
            if (poll(&p, 1, timeout_ms) <= 0) return std::nullopt;
            uint8_t buf[65536];
            ssize_t n = recv(_fd, buf, sizeof(buf), 0);
            if (n <= 0) return std::nullopt;
            if (!_reader.feed(buf, static_cast<size_t>(n)).ok()) return std::nullopt;
        }
    }

    // True if the server closed the connection (EOF) within the timeout.
    bool wait_closed(int timeout_ms = 5000) {
        while (true) {
            pollfd p{_fd, POLLIN, 0};
            if (poll(&p, 1, timeout_ms) <= 0) return false;
            uint8_t buf[4096];
            ssize_t n = recv(_fd, buf, sizeof(buf), 0);
            if (n == 0) return true;
            if (n < 0) return errno == ECONNRESET;
        }
    }

    // Parse a reply: status, message, and a reader positioned after the header.
    struct reply {
        uint32_t id = 0;
        pmix_status_t status = PMIX_ERROR;
        std::string message;
        std::vector<uint8_t> payload;
        size_t body_offset = 0;
    };
    // Unsolicited event frames (request id 0) that arrived while waiting for a reply.
    std::vector<wire::Frame> events;

    std::optional<reply> recv_reply(int timeout_ms = 5000) {
        auto f = recv_frame(timeout_ms);
        while (f && f->type == static_cast<uint16_t>(wire::msg_type::event) && f->id == 0) {
            events.push_back(std::move(*f));
            f = recv_frame(timeout_ms);
        }
        if (!f || f->type != static_cast<uint16_t>(wire::msg_type::reply)) return std::nullopt;
        reply r;
        r.id = f->id;
        r.payload = std::move(f->payload);
        wire::Reader rd(r.payload);
        wire::reply_header h;
        if (!wire::decode(rd, &h).ok()) return std::nullopt;
        r.status = h.status;
        r.message = h.message;
        r.body_offset = rd.position();
        return r;
    }

    template <typename M>
    static bool body(const reply &r, M *m) {
        return wire::decode_payload(std::span<const uint8_t>(r.payload).subspan(r.body_offset), m).ok();
    }

    // connect + wait for the reply; returns the status.
    pmix_status_t do_connect(const std::string &nspace, uint32_t rank, const std::string &token,
                             wire::connect_reply *out = nullptr) {
        wire::connect_request m;
        m.nspace = nspace;
        m.rank = rank;
        m.token = token;
        m.pid = static_cast<uint32_t>(getpid());
        if (!send_msg(wire::msg_type::connect, 1, m)) return PMIX_ERR_UNREACH;
        auto r = recv_reply();
        if (!r) return PMIX_ERR_LOST_CONNECTION;
        if (r->status == PMIX_SUCCESS && out && !body(*r, out)) return PMIX_ERR_UNPACK_FAILURE;
        return r->status;
    }

private:
    int _fd = -1;
    wire::FrameReader _reader;
};

inline pmix_proc_t make_proc(const std::string &nspace, uint32_t rank) {
    pmix_proc_t p{};
    strncpy(p.nspace, nspace.c_str(), PMIX_MAX_NSLEN);
    p.rank = rank;
    return p;
}

// A calloc'ed InfoArray from (key, value loader) pairs.
inline InfoArray make_infos(size_t n) {
    return InfoArray(static_cast<pmix_info_t *>(calloc(n ? n : 1, sizeof(pmix_info_t))), n);
}
inline void set_info(pmix_info_t &i, const char *key, const void *data, pmix_data_type_t type) {
    strncpy(i.key, key, PMIX_MAX_KEYLEN);
    (void)value_load(&i.value, data, type);
}

}  // namespace pmixcpp::testing
