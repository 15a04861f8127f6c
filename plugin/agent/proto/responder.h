// srun's side of one call on a connection of its agent: where a service sends its one answer.
// A connection of a slurmstepd carries many calls at once (agent_proto.h: the frame id numbers
// the call); its services answer from threads of their own, in any order, each through the
// `responder` of its call. The agent's loop reads the connection; the responders write to it,
// one whole frame at a time under a mutex. The descriptor is closed with its last owner.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "agent_proto.h"
#include "status.h"

namespace pmixcpp::agent {

// The sending half of one connection, shared by the agent's loop and its calls in flight.
class connection_out {
public:
    explicit connection_out(int fd) : _fd(fd) {}
    ~connection_out();  // closes the descriptor
    connection_out(const connection_out &) = delete;
    connection_out &operator=(const connection_out &) = delete;

    int fd() const { return _fd; }
    // One whole frame, bounded by timeout_ms. A send that fails or runs out of time shuts the
    // connection down (a frame cut short would corrupt the stream): the agent's loop sees that
    // and drops it, and every later send fails at once.
    Status send_frame(std::span<const uint8_t> frame, int timeout_ms);
    // The connection is gone for good (the loop dropped it): shutdown(2), later sends fail.
    void shut();
    // Calls answered through this connection that have no answer yet.
    std::atomic<uint32_t> in_flight{0};

private:
    const int _fd;
    std::mutex _mutex;
    bool _broken = false;
};

// The one answer of one call. Copies share it: the first send() answers, later ones are refused.
// When the last copy goes without an answer (a service dropped the call: stopped, replaced by a
// newer call), the call is answered PMIX_ERROR so that the slurmstepd's caller never waits for
// nothing.
class responder {
public:
    responder() = default;  // answers nothing
    responder(std::shared_ptr<connection_out> out, uint32_t id);
    // A connection of its own that carries this one call (id `id`), closed after the answer.
    static responder on_fd(int fd, uint32_t id);

    Status send(const reply &r, int timeout_ms = 5000) const;
    // An answer already encoded (encode_reply), e.g. one relayed from another srun.
    Status send_encoded(std::span<const uint8_t> encoded_reply, int timeout_ms = 5000) const;
    // Drop this copy (the last one answers PMIX_ERROR if nobody answered).
    void reset() { _state.reset(); }
    bool valid() const { return _state != nullptr; }
    uint32_t id() const;

private:
    struct state;
    std::shared_ptr<state> _state;
};

}  // namespace pmixcpp::agent
