#include "alloc_agent.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "agent_io.h"
#include "wire/codec.h"
#include "wire/frame.h"

namespace pmixcpp {

using agent_io::clock_type;
using agent_io::fd_guard;
using agent_io::send_all;

Result<std::vector<uint8_t>> agent_alloc_call(const sockaddr_storage &agent_host, uint16_t port,
                                              const std::string &secret, std::span<const uint8_t> body,
                                              int timeout_ms, const std::atomic<bool> *cancel) {
    auto deadline = clock_type::now() + std::chrono::milliseconds(timeout_ms);
    wire::Writer w;
    PMIXCPP_RETURN_IF_ERROR(w.put_bytes(body.data(), body.size()));
    auto frame = wire::encode_frame(kAgentAllocFrame, 0, 1, w.data(), kAgentAllocMax);
    if (!frame.ok()) return frame.status();

    auto fd = agent_io::connect_authenticated(agent_host, port, secret, deadline, cancel);
    if (!fd.ok()) return fd.status().with_context("srun agent");
    fd_guard guard{fd.value()};
    PMIXCPP_RETURN_IF_ERROR(send_all(fd.value(), frame.value(), deadline, cancel).with_context("srun agent"));
    auto f = agent_io::read_frame(fd.value(), kAgentAllocMax, deadline, cancel);
    if (!f.ok()) {
        if (f.status().code() == PMIX_ERR_TIMEOUT && !(cancel && cancel->load()))
            return Status(PMIX_ERR_TIMEOUT, "srun agent: no answer within " + std::to_string(timeout_ms / 1000) + " s");
        if (f.status().code() == PMIX_ERR_UNREACH)
            return Status(PMIX_ERR_UNREACH, "srun agent closed the connection without an answer");
        return f.status().with_context("srun agent");
    }
    if (f->type != kAgentAllocReplyFrame)
        return Status(PMIX_ERR_UNPACK_FAILURE, "srun agent: unexpected frame type " + std::to_string(f->type));
    return std::move(f->payload);
}

Result<std::vector<uint8_t>> open_alloc_frame(std::span<const uint8_t> payload) {
    wire::Reader r(payload.data(), payload.size());
    std::span<const uint8_t> body;
    PMIXCPP_RETURN_IF_ERROR(r.get_bytes(&body).with_context("alloc frame"));
    PMIXCPP_RETURN_IF_ERROR(r.expect_end().with_context("alloc frame"));
    return std::vector<uint8_t>(body.begin(), body.end());
}

Status send_alloc_reply_and_close(int fd, std::span<const uint8_t> body, int timeout_ms) {
    fd_guard guard{fd};
    auto frame = wire::encode_frame(kAgentAllocReplyFrame, 0, 1, body, kAgentAllocMax);
    if (!frame.ok()) return frame.status();
    return send_all(fd, frame.value(), clock_type::now() + std::chrono::milliseconds(timeout_ms), nullptr);
}

}  // namespace pmixcpp
