#include "agent_client.h"

#include <chrono>
#include <future>
#include <memory>

#include "../proto/agent_io.h"

namespace pmixcpp::agent {

using agent_io::clock_type;

namespace {
Status step_ending() { return Status(PMIX_ERR_JOB_CANCELED, "the step is ending"); }
}  // namespace

Result<reply> call_agent(const sockaddr_storage &agent_host, uint16_t port, const agent_io::call_credential_fn &credential, service_id s,
                         std::span<const uint8_t> body, int timeout_ms, const std::atomic<bool> *cancel) {
    auto deadline = clock_type::now() + std::chrono::milliseconds(timeout_ms);
    auto frame = request_frame(s, body);
    PMIXCPP_RETURN_IF_ERROR(frame);
    auto fd = agent_io::connect_authenticated(agent_host, port, credential, deadline, cancel);
    PMIXCPP_RETURN_IF_ERROR(fd, "srun agent");
    agent_io::fd_guard guard{fd.value()};
    PMIXCPP_RETURN_IF_ERROR(agent_io::send_all(fd.value(), frame.value(), deadline, cancel), "srun agent");
    auto f = agent_io::read_frame(fd.value(), kMaxPayload, deadline, cancel);
    if (!f.ok()) {
        if (f.status().code() == PMIX_ERR_TIMEOUT && !(cancel && cancel->load()))
            return Status(PMIX_ERR_TIMEOUT, "srun agent: no answer within " + std::to_string(timeout_ms / 1000) + " s");
        if (f.status().code() == PMIX_ERR_UNREACH)
            return Status(PMIX_ERR_UNREACH, "srun agent closed the connection without an answer");
        return f.status().with_context("srun agent");
    }
    if (f->type != kReplyFrame)
        return Status(PMIX_ERR_UNPACK_FAILURE, "srun agent: unexpected frame type " + std::to_string(f->type));
    reply r;
    PMIXCPP_RETURN_IF_ERROR(decode_reply(f->payload, &r), "srun agent: reply");
    return r;
}

client::client(const sockaddr_storage &agent_host, uint16_t port, agent_io::call_credential_fn credential,
               const service_names *names, call_link::options link_options)
    : _names(names), _host(agent_host), _port(port), _credential(std::move(credential)),
      _link(
          [this](clock_type::time_point deadline, const std::atomic<bool> *cancel) {
              return agent_io::connect_authenticated(_host, _port, _credential, deadline, cancel);
          },
          link_options) {}

client::~client() { shutdown(); }

size_t client::lane_of(service_id s) const {
    if (s == kReport || s == kRendezvous) return kOwnLane;
    const unsigned lane = _names ? _names->lane_of(s) : 0;
    return lane < kOwnLane ? lane : 0;
}

Result<reply> client::call_sync(service_id s, std::span<const uint8_t> body, int timeout_ms) {
    if (_stopping.load()) return step_ending();
    auto answer = std::make_shared<std::promise<Result<reply>>>();
    auto got = answer->get_future();
    call(s, std::vector<uint8_t>(body.begin(), body.end()), timeout_ms,
         [answer](Result<reply> r) { answer->set_value(std::move(r)); });
    auto r = got.get();  // the link answers every call: a reply, its deadline, the gate
    if (!r.ok() && _stopping.load()) return step_ending();
    return r;
}

void client::call(service_id s, std::vector<uint8_t> body, int timeout_ms, done_fn done) {
    if (_stopping.load())
        return done(Status(PMIX_ERR_NOT_AVAILABLE, std::string(service_name(_names, s)) + " calls: the step ends"));
    std::atomic<size_t> &count = _in_flight[lane_of(s)];
    if (count.fetch_add(1) >= kMaxInFlight) {
        --count;
        return done(Status(PMIX_ERR_OUT_OF_RESOURCE, std::string("too many ") + service_name(_names, s) +
                                                         " calls in flight on this node (" + std::to_string(kMaxInFlight) +
                                                         " in its lane)"));
    }
    _link.call(s, std::move(body), timeout_ms, [&count, done = std::move(done)](Result<reply> r) {
        --count;
        done(std::move(r));
    });
}

Status client::report(const agent::report &r, int timeout_ms) {
    PMIXCPP_ASSIGN_OR_RETURN(auto body, encode_report(r));
    auto rep = call_agent(_host, _port, _credential, kReport, body, timeout_ms, nullptr);
    if (!rep.ok()) {
        if (rep.status().code() == PMIX_ERR_TIMEOUT) return Status(PMIX_ERR_TIMEOUT, "srun agent: no acknowledgement");
        return rep.status();
    }
    if (rep->status != PMIX_SUCCESS) return Status(PMIX_ERR_UNREACH, "srun agent: report refused");
    return Status::success();
}

void client::rendezvous(uint32_t node, uint32_t nnodes, std::string address, int timeout_ms, table_fn ready) {
    Status st = _rendezvous.start(
        [this, node, nnodes, address = std::move(address), timeout_ms, ready] {
            auto body = encode_rendezvous({node, nnodes, address});
            if (!body.ok()) return ready(body.status());
            // A connection of its own: the agent keeps it until every node has reported.
            auto rep = call_agent(_host, _port, _credential, kRendezvous, body.value(), timeout_ms, &_stopping);
            if (!rep.ok() && _stopping.load()) rep = step_ending();
            if (!rep.ok()) {
                if (rep.status().code() == PMIX_ERR_TIMEOUT)
                    return ready(Status(PMIX_ERR_TIMEOUT, "rendezvous: no address table within " +
                                                              std::to_string(timeout_ms) +
                                                              " ms (a node of the step never reported)"));
                return ready(rep.status().with_context("rendezvous"));
            }
            if (rep->status != PMIX_SUCCESS) return ready(Status(rep->status, "rendezvous: " + rep->message));
            std::vector<std::string> table;
            Status ts = decode_table(rep->body, nnodes, &table);
            if (!ts.ok()) return ready(ts);
            ready(std::move(table));
        },
        "rendezvous");
    if (!st.ok()) ready(st.code() == PMIX_ERR_OUT_OF_RESOURCE ? Status(PMIX_ERROR, "rendezvous started twice") : st);
}

void client::shutdown() {
    _stopping = true;
    _link.close(step_ending());
    _rendezvous.close();  // the rendezvous polls the gate every 100 ms
}

}  // namespace pmixcpp::agent
