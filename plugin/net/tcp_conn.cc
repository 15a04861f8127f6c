// The TCP node transport's sealed frames and socket settings (tcp_conn.h).
#include "tcp_conn.h"

#include <netinet/tcp.h>
#include <poll.h>

namespace pmixcpp::net::tcp {

Result<std::vector<uint8_t>> sealed_tcp_frame(const auth::key &k, const std::vector<uint8_t> &inner, uint32_t src,
                                              uint32_t dst, uint64_t seq) {
    auto sealed = auth::seal_frame(k, inner, src, dst, seq);
    PMIXCPP_RETURN_IF_ERROR(sealed);
    return wire::encode_frame(kSealedNodeFrameType, 0, 0, sealed.value(), kMaxSealedPayload);
}

Status open_tcp_frame(const wire::Frame &fr, const auth::key &k, uint32_t me, uint32_t peer, uint64_t *last,
                      std::span<const uint8_t> *inner) {
    if (fr.type != kSealedNodeFrameType)
        return Status(PMIX_ERR_NO_PERMISSIONS, "frame type " + std::to_string(fr.type) + " without a MAC");
    uint32_t src = 0;
    uint64_t seq = 0;
    PMIXCPP_RETURN_IF_ERROR(auth::open_sealed_frame(k, fr.payload, me, inner, &src, &seq));
    if (src != peer)
        return Status(PMIX_ERR_NO_PERMISSIONS, "frame of node " + std::to_string(src) + " on node " +
                                                   std::to_string(peer) + "'s connection");
    if (seq <= *last) return Status(PMIX_ERR_NO_PERMISSIONS, "replayed frame " + std::to_string(seq));
    *last = seq;
    return Status::success();
}

void set_node_socket_options(int fd) {
    int one = 1, idle = 10, intvl = 2, cnt = 5;
    unsigned int user_timeout_ms = 20000;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
    setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout_ms, sizeof(user_timeout_ms));
}

bool write_until(int fd, send_queue &q, std::chrono::steady_clock::time_point deadline) {
    for (;;) {
        int err = q.write_to(fd);
        if (err == 0) return true;
        if (err != EAGAIN) return false;
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) return false;
        pollfd p{fd, POLLOUT, 0};
        if (poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
    }
}

}  // namespace pmixcpp::net::tcp
