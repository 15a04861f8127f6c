// The request engine: the requests of pmixcpp's clients that are not the data path (engine.h
// has commit, fence and Get), without I/O. Connect (the rank's admission), finalize, abort, log,
// notify, the modex snapshot asked for again, and the requests a service answers (allocation,
// query, group, fabric). The I/O shell (server.cc) hands it each request as it came off the
// socket; the engine decodes it, decides, and answers through a reply_sink (reply_sink.h): the
// shell's writes to the sockets, a unit test's vectors (tests/server/test_requests.cc). What is
// not its own (the connection table, the resource manager, the event engine, the other steps,
// the services) it asks through `request_routes`; a service answers through the same sink.
// Loop thread only; the engine never calls back into itself through a route.
#pragma once

#include <pmix_common.h>

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "../services/xstep/xstep_codec.h"
#include "engine.h"
#include "kvs.h"
#include "log_gate.h"
#include "modex_snapshot.h"
#include "reply_sink.h"
#include "status.h"
#include "wire/group_messages.h"
#include "wire/messages.h"

namespace pmixcpp::server {

struct request_config {
    std::string nspace;
    std::string client_token;  // what a client presents at connect (step_info::client_token)
    uint32_t max_procs = 0;    // most procs a request may name
    bool cross_step = false;   // the job's other steps are reachable: a client's event may go to them
};

// What the engine asks of the rest of the server. Every one is required.
struct request_routes {
    // Connect: why connection `conn` may not be `rank` ("" = it may); the rank's admission (the
    // connection stands for the rank from now on) and what its reply carries; after the reply,
    // the rank is connected (the cached events in its range go to it).
    std::function<std::string(uint64_t conn, uint32_t rank)> claim_refusal;
    std::function<wire::connect_reply(uint64_t conn, uint32_t rank)> admit;
    std::function<void(uint32_t rank)> connected;
    // Finalize: the connection and its rank are finalized (gone for new fences and Gets).
    std::function<void(uint64_t conn, uint32_t rank)> finalized;
    // Abort: the job's ranks are told (queued before the resource manager starts killing), then
    // the resource manager aborts the job (host.h); its outcome is the reply's.
    std::function<void(uint32_t rank, int status, const std::string &message)> aborting;
    std::function<Status(uint32_t rank, int status, const std::string &message,
                         const std::vector<pmix_proc_t> &procs)>
        abort;
    // Log: one message, cut, escaped and admitted by the gate, into the resource manager's log.
    std::function<void(uint32_t rank, const std::string &channel, const std::string &text)> log;
    // Notify: the event as from local rank `rank` (events.h notify_from_client), and, once it was
    // accepted, the same to the job's other steps.
    std::function<Status(uint32_t rank, wire::event_notification &&ev)> notify;
    std::function<void(xstep::message m)> to_other_steps;
    // Requests a service answers, through the same sink (alloc.h, groups.h, fabric_relay.h).
    std::function<void(uint64_t conn, uint32_t request_id, uint32_t rank, wire::alloc_request &&m)> alloc;
    std::function<void(uint64_t conn, uint32_t request_id, uint32_t rank, wire::query_request &&m)> query;
    std::function<void(uint64_t conn, uint32_t request_id, uint32_t rank, wire::group_request &&m)> group;
    // A fabric request as it came: an error = its payload does not decode.
    std::function<Status(uint64_t conn, uint32_t request_id, std::span<const uint8_t> payload)> fabric;
};

class request_engine {
public:
    // `kvs`, `snapshots` and `sink` must outlive the engine.
    request_engine(request_config config, request_routes routes, const kv_store &kvs,
                   modex_snapshot_writer &snapshots, reply_sink &sink);

    // Requests (shared/PROTOCOL.md). A payload that does not decode: sink.refuse(). `c.rank` is
    // the rank the connection connected as (PMIX_RANK_UNDEF before its connect).
    void connect(const client_ref &c, uint32_t request_id, std::span<const uint8_t> payload);
    void finalize(const client_ref &c, uint32_t request_id, std::span<const uint8_t> payload);
    void abort(const client_ref &c, uint32_t request_id, std::span<const uint8_t> payload);
    void log(const client_ref &c, uint32_t request_id, std::span<const uint8_t> payload);
    void notify(const client_ref &c, uint32_t request_id, std::span<const uint8_t> payload);
    void snapshot(const client_ref &c, uint32_t request_id, std::span<const uint8_t> payload);
    void alloc(const client_ref &c, uint32_t request_id, std::span<const uint8_t> payload);
    void query(const client_ref &c, uint32_t request_id, std::span<const uint8_t> payload);
    void group(const client_ref &c, uint32_t request_id, std::span<const uint8_t> payload);
    void fabric(const client_ref &c, uint32_t request_id, std::span<const uint8_t> payload);

    uint64_t log_dropped() const { return _log_gate.dropped_total(); }

private:
    // `m` from the payload, or the connection refused with why (false).
    template <typename M>
    bool decode(const client_ref &c, std::span<const uint8_t> payload, M *m, const char *what);

    request_config _cfg;
    request_routes _routes;
    const kv_store &_kvs;
    modex_snapshot_writer &_snapshots;
    reply_sink &_sink;
    log_gate _log_gate;  // PMIx_Log into slurmd's log: cut, escaped, rate-limited
};

}  // namespace pmixcpp::server
