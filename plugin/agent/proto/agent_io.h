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

#include <functional>

#include "../../net/identity.h"
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

// A fresh slurmstepd credential for one call (net/identity.h make_agent_credential).
using call_credential_fn = std::function<Result<net::agent_call_credential>()>;

// connect_to, then the handshake (purpose agent): the hello carries a fresh credential from
// `credential` (only the job's user and root can open it; it names the step and holds the
// call's key), and both sides prove they hold that key. The agent sheds unauthenticated
// connections under a flood: a handshake it drops is tried again a few times while the deadline
// allows. PMIX_ERR_NO_PERMISSIONS if the listener could not open the credential.
Result<int> connect_authenticated(const sockaddr_storage &host, uint16_t port, const call_credential_fn &credential,
                                  clock_type::time_point deadline, const std::atomic<bool> *cancel = nullptr);

// The listening side of that handshake on an accepted socket, blocking until `deadline` (for
// simple servers and tests; srun's agent runs it non-blocking in its loop). `keys` opens the
// hello's credential (net/identity.h open_agent_credential).
Status accept_authenticated(int fd, const net::auth::key_source &keys, clock_type::time_point deadline);

// Read one frame (payload at most `max_payload`). PMIX_ERR_TIMEOUT at the deadline,
// PMIX_ERR_UNREACH if the peer closes first, the reader's error for a malformed stream.
Result<wire::Frame> read_frame(int fd, uint32_t max_payload, clock_type::time_point deadline,
                               const std::atomic<bool> *cancel = nullptr);

// srun side: write one reply frame on `fd` (bounded by timeout_ms) and close `fd`.
Status send_reply_and_close(int fd, const agent::reply &r, int timeout_ms = 5000);
// The same with a reply already encoded (agent::encode_reply), e.g. one relayed from another srun.
Status send_reply_bytes_and_close(int fd, std::span<const uint8_t> encoded_reply, int timeout_ms = 5000);

}  // namespace pmixcpp::agent_io
