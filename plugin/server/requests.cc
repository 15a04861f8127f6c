// The request engine (requests.h): connect, finalize, abort, log, notify, the modex snapshot asked
// for again, and the requests handed to a service; decoded and decided here, answered through
// the reply sink.
#include "requests.h"

#include <algorithm>
#include <cstring>

#include "events.h"
#include "log.h"

namespace pmixcpp::server {

request_engine::request_engine(request_config config, request_routes routes, const kv_store &kvs,
                               modex_snapshot_writer &snapshots, reply_sink &sink)
    : _cfg(std::move(config)), _routes(std::move(routes)), _kvs(kvs), _snapshots(snapshots), _sink(sink) {}

template <typename M>
bool request_engine::decode(const client_ref &c, std::span<const uint8_t> payload, M *m, const char *what) {
    if (Status st = wire::decode_payload(payload, m, _cfg.max_procs); !st.ok()) {
        _sink.refuse(c.conn, std::string("malformed ") + what + " payload: " + st.message());
        return false;
    }
    return true;
}

void request_engine::connect(const client_ref &c, uint32_t request_id, std::span<const uint8_t> payload) {
    wire::connect_request m;
    if (!decode(c, payload, &m, "connect")) return;
    const char *ns = _cfg.nspace.c_str();
    std::string why;
    if (m.protocol != wire::kClientProtocol)
        why = "client speaks protocol " + std::to_string(m.protocol) + ", server " +
              std::to_string(wire::kClientProtocol);
    else if (m.nspace != _cfg.nspace)
        why = "unknown namespace '" + m.nspace + "'";
    else if (m.token.size() != _cfg.client_token.size() ||
             !std::equal(m.token.begin(), m.token.end(), _cfg.client_token.begin()))
        why = "wrong step token";
    else
        why = _routes.claim_refusal(c.conn, m.rank);
    if (!why.empty()) {
        PMIXCPP_LOG_ERROR("%s: refusing client pid %d (uid %u) claiming rank %u: %s", ns, c.pid, c.uid, m.rank,
                          why.c_str());
        _sink.reply_and_close(c.conn, request_id, PMIX_ERR_NO_PERMISSIONS, why);
        return;
    }
    wire::connect_reply r = _routes.admit(c.conn, m.rank);
    _sink.reply(c.conn, request_id, PMIX_SUCCESS, {}, [&](wire::Writer &w) { return wire::encode(w, r); });
    _routes.connected(m.rank);  // cached events in its range, after the connect reply
}

void request_engine::finalize(const client_ref &c, uint32_t request_id, std::span<const uint8_t> payload) {
    wire::finalize_request m;
    if (!decode(c, payload, &m, "finalize")) return;
    PMIXCPP_LOG_DEBUG("%s: rank %u finalized", _cfg.nspace.c_str(), c.rank);
    // Gone for new fences and Gets from now on; for those in flight only once its process exits
    // without connecting again (the shell's watch of finalized ranks).
    _routes.finalized(c.conn, c.rank);
    _sink.reply(c.conn, request_id, PMIX_SUCCESS, {});
}

void request_engine::abort(const client_ref &c, uint32_t request_id, std::span<const uint8_t> payload) {
    wire::abort_request m;
    if (!decode(c, payload, &m, "abort")) return;
    const char *ns = _cfg.nspace.c_str();
    PMIXCPP_LOG_ERROR("%s: rank %u (pid %d) called PMIx_Abort(status %d, %zu procs): %s", ns, c.rank, c.pid,
                      m.status, m.procs.size(), m.message.c_str());
    _routes.aborting(c.rank, m.status, m.message);  // queued before the host starts killing
    Status st = _routes.abort(c.rank, m.status, m.message, m.procs);
    if (!st.ok())
        PMIXCPP_LOG_ERROR("%s: abort requested by rank %u failed: %s", ns, c.rank, st.message().c_str());
    _sink.reply(c.conn, request_id, st.ok() ? PMIX_SUCCESS : st.code(), st.message());
}

void request_engine::log(const client_ref &c, uint32_t request_id, std::span<const uint8_t> payload) {
    wire::log_request m;
    if (!decode(c, payload, &m, "log")) return;
    size_t forwarded = 0, dropped = 0;
    for (size_t i = 0; i < m.data.size(); ++i) {
        std::string key = key_of(m.data[i]);
        std::string text = value_text(m.data[i].value);
        if (text.empty()) continue;
        if (key == PMIX_LOG_MSG || key == PMIX_LOG_STDERR || key == PMIX_LOG_STDOUT || key == PMIX_LOG_SYSLOG ||
            key == PMIX_LOG_LOCAL_SYSLOG || key == PMIX_LOG_GLOBAL_SYSLOG) {
            ++forwarded;
            // Cut, escaped and rate-limited (log_gate.h): the job writes one line per message
            // into slurmd's log, never a line of slurmd's own, never without bound.
            auto v = _log_gate.admit(text);
            if (v.summary) PMIXCPP_LOG_ERROR("%s: %s", _cfg.nspace.c_str(), v.summary->c_str());  // the admin should know
            if (!v.pass) {
                ++dropped;
                continue;
            }
            _routes.log(c.rank, key, v.text);
        }
    }
    if (forwarded == 0) {
        _sink.reply(c.conn, request_id, PMIX_ERR_NOT_SUPPORTED, "no log data the server can forward");
        return;
    }
    if (dropped == forwarded) {
        _sink.reply(c.conn, request_id, PMIX_ERR_OUT_OF_RESOURCE,
                    "the step's log rate limit is reached: message dropped");
        return;
    }
    _sink.reply(c.conn, request_id, PMIX_SUCCESS, {});
}

void request_engine::notify(const client_ref &c, uint32_t request_id, std::span<const uint8_t> payload) {
    wire::event_notification m;
    if (!decode(c, payload, &m, "notify")) return;
    // Only the originating server hands an event to the other steps: what arrives from another
    // node or step is never sent on.
    xstep::message out;
    out.what = xstep::op::event;
    bool cross = false;
    // A spawn's process sets are the servers' to announce to other steps (the shell's
    // adopt_pset_event): a client's event of that kind stays in its step.
    const pmix_info_t *pset = (m.status == PMIX_PROCESS_SET_DEFINE || m.status == PMIX_PROCESS_SET_DELETE)
                                  ? find_info(m.infos, PMIX_PSET_NAME)
                                  : nullptr;
    const bool ours = pset != nullptr && pset->value.type == PMIX_STRING && pset->value.data.string != nullptr &&
                      strncmp(pset->value.data.string, "pmixcpp://", 10) == 0;
    if (_cfg.cross_step && !ours && reaches_other_steps(m, _cfg.nspace, &out.nspaces)) {
        wire::Writer w;
        cross = wire::encode(w, m).ok();
        out.payload = w.data();
    }
    Status st = _routes.notify(c.rank, std::move(m));
    if (!st.ok())
        PMIXCPP_LOG_VERBOSE("%s: notify from rank %u refused: %s", _cfg.nspace.c_str(), c.rank, st.message().c_str());
    else if (cross)
        _routes.to_other_steps(std::move(out));
    _sink.reply(c.conn, request_id, st.ok() ? PMIX_SUCCESS : st.code(), st.message());
}

// The modex snapshot of the node's data as it is now, with its file's descriptor: asked for by a
// client's Get after a collecting fence whose reply it could not use (no snapshot made, or the
// file's descriptor did not reach it).
void request_engine::snapshot(const client_ref &c, uint32_t request_id, std::span<const uint8_t> payload) {
    if (!payload.empty()) {
        _sink.refuse(c.conn, "malformed snapshot request: unexpected payload");
        return;
    }
    auto made = _snapshots.write(_kvs);
    if (!made.ok()) {
        PMIXCPP_LOG_WARNING("%s: %s", _cfg.nspace.c_str(), made.status().message().c_str());
        _sink.reply(c.conn, request_id, made.status().code(), made.status().message());
        return;
    }
    _sink.snapshot(c.conn, request_id, &made.value(), /*resend=*/true);
}

void request_engine::alloc(const client_ref &c, uint32_t request_id, std::span<const uint8_t> payload) {
    wire::alloc_request m;
    if (!decode(c, payload, &m, "alloc")) return;
    _routes.alloc(c.conn, request_id, c.rank, std::move(m));
}

void request_engine::query(const client_ref &c, uint32_t request_id, std::span<const uint8_t> payload) {
    wire::query_request m;
    if (!decode(c, payload, &m, "query")) return;
    _routes.query(c.conn, request_id, c.rank, std::move(m));
}

// PMIx_Group_* (groups.h): construct / destruct / join as one collective of the members' servers.
void request_engine::group(const client_ref &c, uint32_t request_id, std::span<const uint8_t> payload) {
    wire::group_request m;
    if (!decode(c, payload, &m, "group")) return;
    _routes.group(c.conn, request_id, c.rank, std::move(m));
}

// PMIx_Fabric_register/update (fabric_relay.h): the relay decodes what it hands to srun.
void request_engine::fabric(const client_ref &c, uint32_t request_id, std::span<const uint8_t> payload) {
    if (Status st = _routes.fabric(c.conn, request_id, payload); !st.ok())
        _sink.refuse(c.conn, "malformed fabric payload: " + st.message());
}

}  // namespace pmixcpp::server
