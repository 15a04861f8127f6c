// The allocation channel of srun's agent (srun_agent.h): slurmstepd opens a connection to the
// agent, authenticates (agent_io::connect_authenticated), sends one `alloc` frame (an encoded
// alloc::agent_request) and waits
// on that connection for one `alloc reply` frame (an encoded alloc::agent_reply). The agent hands
// the connection to the srun-side bridge, which answers when the request is done — seconds or
// hours later for a request Slurm keeps pending. Many such connections may be open at once.
#pragma once

#include <sys/socket.h>

#include <atomic>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "status.h"

namespace pmixcpp {

inline constexpr uint16_t kAgentAllocFrame = 4;
inline constexpr uint16_t kAgentAllocReplyFrame = 5;
inline constexpr uint32_t kAgentAllocMax = 16u << 20;

// slurmstepd side: send `body` and wait for the reply body. Gives up after timeout_ms
// (PMIX_ERR_TIMEOUT) or as soon as *cancel turns true (checked every 100 ms).
Result<std::vector<uint8_t>> agent_alloc_call(const sockaddr_storage &agent_host, uint16_t port,
                                              const std::string &secret, std::span<const uint8_t> body,
                                              int timeout_ms, const std::atomic<bool> *cancel = nullptr);

// Agent side: the payload of an alloc frame -> its body (the connection is authenticated).
Result<std::vector<uint8_t>> open_alloc_frame(std::span<const uint8_t> payload);

// Agent side: write one reply frame with `body` on `fd` (bounded by timeout_ms) and close `fd`.
Status send_alloc_reply_and_close(int fd, std::span<const uint8_t> body, int timeout_ms = 5000);

}  // namespace pmixcpp
