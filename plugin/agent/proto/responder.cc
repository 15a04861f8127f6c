#include "responder.h"

#include <sys/socket.h>
#include <unistd.h>

#include "agent_io.h"
#include "log.h"

namespace pmixcpp::agent {

connection_out::~connection_out() {
    if (_fd >= 0) close(_fd);
}

Status connection_out::send_frame(std::span<const uint8_t> frame, int timeout_ms) {
    std::lock_guard<std::mutex> g(_mutex);
    if (_broken) return Status(PMIX_ERR_UNREACH, "the slurmstepd's connection is gone");
    Status st = agent_io::send_all(_fd, frame, agent_io::clock_type::now() + std::chrono::milliseconds(timeout_ms));
    if (!st.ok()) {
        _broken = true;
        ::shutdown(_fd, SHUT_RDWR);
    }
    return st;
}

void connection_out::shut() {
    std::lock_guard<std::mutex> g(_mutex);
    if (_broken) return;
    _broken = true;
    ::shutdown(_fd, SHUT_RDWR);
}

struct responder::state {
    std::shared_ptr<connection_out> out;
    uint32_t id = 0;
    std::atomic<bool> answered{false};

    state(std::shared_ptr<connection_out> o, uint32_t i) : out(std::move(o)), id(i) { ++out->in_flight; }
    ~state() {
        if (!answered.exchange(true)) {
            auto frame = reply_frame(reply{PMIX_ERROR, "srun's agent dropped the call without an answer", {}}, id);
            if (frame.ok()) (void)out->send_frame(frame.value(), 1000);
        }
        --out->in_flight;
    }
    Status send(Result<std::vector<uint8_t>> frame, int timeout_ms) {
        if (answered.exchange(true)) return Status(PMIX_ERR_BAD_PARAM, "agent call " + std::to_string(id) + " answered twice");
        if (!frame.ok()) {
            // Too large or unencodable: the caller still gets an answer, with the reason.
            auto fallback = reply_frame(reply{frame.status().code(), frame.status().message(), {}}, id);
            if (fallback.ok()) (void)out->send_frame(fallback.value(), timeout_ms);
            return frame.status();
        }
        return out->send_frame(frame.value(), timeout_ms);
    }
};

responder::responder(std::shared_ptr<connection_out> out, uint32_t id)
    : _state(std::make_shared<state>(std::move(out), id)) {}

responder responder::on_fd(int fd, uint32_t id) { return responder(std::make_shared<connection_out>(fd), id); }

Status responder::send(const reply &r, int timeout_ms) const {
    if (!_state) return Status(PMIX_ERR_BAD_PARAM, "no call to answer");
    return _state->send(reply_frame(r, _state->id), timeout_ms);
}

Status responder::send_encoded(std::span<const uint8_t> encoded_reply, int timeout_ms) const {
    if (!_state) return Status(PMIX_ERR_BAD_PARAM, "no call to answer");
    return _state->send(reply_frame_of(encoded_reply, _state->id), timeout_ms);
}

uint32_t responder::id() const { return _state ? _state->id : 0; }

}  // namespace pmixcpp::agent
