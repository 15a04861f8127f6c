// The frame I/O of the channel to srun's agent (agent_proto.h): connect with a deadline and
// authenticate (plugin/net/handshake.h), send a whole frame, read one frame back, answer and
// close. Blocking calls bounded in time, made from threads of their own (never the server's
// loop): the client of plugin/agent/stepd/ and the services of plugin/agent/srun/.
#pragma once

#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <span>
#include <string>

#include "agent_proto.h"
#include "status.h"
#include "wire/frame.h"

namespace pmixcpp::agent_io {

using clock_type = std::chrono::steady_clock;

// Closes the descriptor it holds.
struct fd_guard {
    int fd = -1;
    ~fd_guard() {
        if (fd >= 0) close(fd);
    }
};

// Wait for `events` until `deadline`, in slices of 100 ms so that `cancel` (if given) is
// honoured. PMIX_ERR_TIMEOUT at the deadline or when cancelled.
Status wait_fd(int fd, short events, clock_type::time_point deadline, const std::atomic<bool> *cancel = nullptr);

// Send all of `bytes` on a non-blocking socket before `deadline`.
Status send_all(int fd, std::span<const uint8_t> bytes, clock_type::time_point deadline,
                const std::atomic<bool> *cancel = nullptr);

// A connected non-blocking TCP socket to `host` (IPv4 or IPv6; its port is replaced by `port`).
// The caller owns the descriptor.
Result<int> connect_to(const sockaddr_storage &host, uint16_t port, clock_type::time_point deadline,
                       const std::atomic<bool> *cancel = nullptr);

// connect_to, then the handshake (purpose agent) proving both sides know `secret`, which never
// travels. The agent sheds unauthenticated connections under a flood: a handshake it drops is
// tried again a few times while the deadline allows. PMIX_ERR_NO_PERMISSIONS if the listener
// does not know the secret.
Result<int> connect_authenticated(const sockaddr_storage &host, uint16_t port, const std::string &secret,
                                  clock_type::time_point deadline, const std::atomic<bool> *cancel = nullptr);

// The listening side of that handshake on an accepted socket, blocking until `deadline` (for
// simple servers and tests; srun's agent runs it non-blocking in its loop).
Status accept_authenticated(int fd, const std::string &secret, clock_type::time_point deadline);

// Read one frame (payload at most `max_payload`). PMIX_ERR_TIMEOUT at the deadline,
// PMIX_ERR_UNREACH if the peer closes first, the reader's error for a malformed stream.
Result<wire::Frame> read_frame(int fd, uint32_t max_payload, clock_type::time_point deadline,
                               const std::atomic<bool> *cancel = nullptr);

// srun side: write one reply frame on `fd` (bounded by timeout_ms) and close `fd`.
Status send_reply_and_close(int fd, const agent::reply &r, int timeout_ms = 5000);
// The same with a reply already encoded (agent::encode_reply), e.g. one relayed from another srun.
Status send_reply_bytes_and_close(int fd, std::span<const uint8_t> encoded_reply, int timeout_ms = 5000);

}  // namespace pmixcpp::agent_io
