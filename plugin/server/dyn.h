// The dynamic services of one node's server, each a class of its own with its own ops and state,
// built by the shell (engine_ops.cc make_*_ops): publish / lookup (dyn_publish.h), spawn
// (dyn_spawn.h), the actions of job control (dyn_jctrl.h), connect and groups across steps
// (connect.h). `dyn_services` only holds them and routes: the shell's request handlers reach
// them through it, and a rank that leaves, the node channels and the timers go to each that
// keeps something for them. No state and no ops of its own.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>

#include "connect.h"
#include "dyn_jctrl.h"
#include "dyn_publish.h"
#include "dyn_spawn.h"
#include "node_channels.h"
#include "wire/messages.h"

namespace pmixcpp::server {

class dyn_services {
public:
    dyn_services(std::unique_ptr<publish_service> publish, std::unique_ptr<spawn_service> spawn,
                 std::unique_ptr<job_control_service> job_control, std::unique_ptr<connect_service> connect)
        : _publish(std::move(publish)), _spawn(std::move(spawn)), _job_control(std::move(job_control)),
          _connect(std::move(connect)) {}

    publish_service &publish() { return *_publish; }
    spawn_service &spawn() { return *_spawn; }
    job_control_service &job_control() { return *_job_control; }
    connect_service &connect() { return *_connect; }

    // The shell's requests, each to its service.
    void on_client(uint64_t conn, uint32_t rank, uint16_t type, uint32_t request_id, std::span<const uint8_t> payload) {
        _publish->on_client(conn, rank, type, request_id, payload);
    }
    void on_spawn(uint64_t conn, uint32_t rank, uint32_t request_id, std::span<const uint8_t> payload) {
        _spawn->on_spawn(conn, rank, request_id, payload);
    }
    bool job_control(uint64_t conn, uint32_t rank, uint32_t request_id, const wire::job_control_request &m) {
        return _job_control->job_control(conn, rank, request_id, m);
    }
    void job_control_of_other_step(const std::vector<uint32_t> &ranks, int sig, bool terminate) {
        _job_control->job_control_of_other_step(ranks, sig, terminate);
    }
    void on_connect(uint64_t conn, uint32_t rank, uint32_t request_id, connect_op op, std::span<const uint8_t> payload) {
        _connect->on_frame(conn, rank, request_id, op, payload);
    }
    void on_group(uint64_t conn, uint32_t rank, uint32_t request_id, wire::group_request &&req, uint64_t candidate) {
        _connect->on_group(conn, rank, request_id, std::move(req), candidate);
    }
    void foreign_get(uint64_t conn, uint32_t request_id, const pmix_proc_t &proc, const std::string &key,
                     const InfoArray &infos) {
        _connect->get(conn, request_id, proc, key, infos);
    }

    // Their node channels (pubsub_request, pubsub_reply, job_control) into the table.
    Status add_channels(node_channels &table) {
        PMIXCPP_RETURN_IF_ERROR(_publish->add_channels(table));
        return _job_control->add_channels(table);
    }
    // A local rank finalized or died.
    void rank_left(uint32_t rank) {
        _connect->rank_left(rank);
        _publish->rank_left(rank);
    }
    void expire(server_clock::time_point now) {
        _connect->expire(now);
        _publish->expire(now);
        _job_control->expire(now);
    }
    std::optional<server_clock::time_point> next_deadline() const {
        std::optional<server_clock::time_point> next;
        for (auto d : {_publish->next_deadline(), _job_control->next_deadline(), _connect->next_deadline()})
            if (d && (!next || *d < *next)) next = d;
        return next;
    }

private:
    std::unique_ptr<publish_service> _publish;
    std::unique_ptr<spawn_service> _spawn;
    std::unique_ptr<job_control_service> _job_control;
    std::unique_ptr<connect_service> _connect;
};

}  // namespace pmixcpp::server
