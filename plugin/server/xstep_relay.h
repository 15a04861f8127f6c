// The server's side of the messages between the steps of a job (plugin/services/xstep/xstep_codec.h): what
// the other steps ask of this node (direct modex of a local rank, an event for the local ranks,
// job control of local ranks) and what goes to them (answers, events raised here). No I/O of
// its own: messages leave through ops.send (server_options::xstep, srun's router); the Gets of
// other steps wait here for the rank's commit, its end or their deadline.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "../services/xstep/xstep_codec.h"
#include "get_waits.h"
#include "kvs.h"
#include "../common/step_info.h"

namespace pmixcpp::server {

struct xstep_relay_ops {
    // A message to the other steps (server_options::xstep); `done` may run on any thread.
    using done_fn = std::function<void(int status, const std::string &message, std::vector<uint8_t> body)>;
    std::function<void(std::vector<uint8_t> body, int timeout_ms, done_fn done)> send;
    // The store: whether a local rank holds `key` for `rel` (an empty key: committed anything);
    // its data as `rel` sees it.
    std::function<bool(uint32_t rank, const std::string &key, relation rel)> has;
    std::function<Result<InfoArray>(uint32_t rank, relation rel)> data;
    // "died" or "finalized" for a local rank that will never commit again, else empty.
    std::function<std::string(uint32_t rank)> gone;
    // An event of another step for the local ranks in its range (events.h from_remote).
    std::function<Status(std::span<const uint8_t> payload)> event;
    // Job control of another step reaching the local ranks among `ranks`.
    std::function<void(const std::vector<uint32_t> &ranks, int signal, bool terminate)> job_control;
    // The step's job data (wire::encode_jobdata), for a get of xstep::kJobdataKey (node 0
    // only). Empty = such gets are PMIX_ERR_NOT_FOUND.
    std::function<Result<std::vector<uint8_t>>()> jobdata;
};

class xstep_relay {
public:
    using time_point = server_clock::time_point;

    xstep_relay(const step_info &step, uint32_t timeout_sec, xstep_relay_ops ops);

    // One item of the inbox (malformed ones are dropped with a log line).
    void on_item(const xstep::inbox_item &item, time_point now);
    // To the other steps; `what` names it in log lines.
    void send(xstep::message m, const char *what);

    // A local rank committed / finalized or died: the Gets waiting for it.
    void rank_committed(uint32_t rank);
    void rank_left(uint32_t rank, bool died);
    void expire(time_point now);
    std::optional<time_point> next_deadline() const { return _gets.next_deadline(); }
    size_t size() const { return _gets.size(); }

private:
    struct pending {
        uint64_t srun_id = 0;  // the router's id of the request, for the answer
        relation rel = relation::other_node;
    };
    // The answer to Get `w` (conn = its index in _pending): the rank's data, or `failure`.
    void answer(const get_waiter &w, const std::optional<std::pair<pmix_status_t, std::string>> &failure);
    bool is_local(uint32_t rank) const { return rank < _local.size() && _local[rank]; }

    std::string _nspace, _node_name;
    std::vector<bool> _local;  // by rank
    uint32_t _timeout_sec;
    xstep_relay_ops _ops;
    get_waits _gets;  // conn = an index of _pending
    std::map<uint64_t, pending> _pending;
    uint64_t _next = 1;
};

}  // namespace pmixcpp::server
