#include "dyn.h"

#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <set>

#include "groups.h"
#include "hostlist.h"
#include "log.h"
#include "../services/alloc/alloc_codec.h"
#include "../services/sessions/session_codec.h"
#include "../services/spawn/spawn_codec.h"
#include "../services/xstep/xstep_codec.h"
#include "value.h"
#include "wire/codec.h"
#include "wire/messages.h"
#include "wire/node_messages.h"

namespace pmixcpp::server {

namespace {



// A small integer directive in any integer type (or the PMIx enum types of one byte).
std::optional<int64_t> number_of(const pmix_value_t &v) {
    switch (v.type) {
    case PMIX_DATA_RANGE: return v.data.range;
    case PMIX_PERSIST: return v.data.persist;
    case PMIX_BOOL: return v.data.flag ? 1 : 0;
    default: break;
    }
    auto n = value_to_number<int64_t>(v);
    if (!n.ok()) return std::nullopt;
    return n.value();
}

// A boolean directive: present and true (or PMIX_UNDEF, as the standard says).
bool flag_of(const pmix_info_t *i) {
    if (i == nullptr) return false;
    if (i->value.type == PMIX_UNDEF) return true;
    auto n = number_of(i->value);
    return n && *n != 0;
}

std::optional<server_clock::time_point> deadline_of(const InfoArray &dirs) {
    const pmix_info_t *t = find_info(dirs, PMIX_TIMEOUT);
    if (t == nullptr) return std::nullopt;
    auto n = number_of(t->value);
    if (!n || *n <= 0) return std::nullopt;
    return server_clock::now() + std::chrono::seconds(*n);
}

constexpr uint8_t kRankLeft = 0;  // pubsub request type: a rank of the sending node left

}  // namespace

dyn_service::dyn_service(const step_info &step, std::vector<uint32_t> node_of, dyn_ops ops)
    : _step(step), _node_of(std::move(node_of)), _ops(std::move(ops)) {
    connect_ops c;
    c.reply = _ops.reply;
    if (_ops.agent) {
        c.rendezvous = [this](std::vector<uint8_t> body, int timeout_ms, connect_ops::done_fn done) {
            _ops.agent(agent::service::connect, std::move(body), timeout_ms, std::move(done));
        };
        // Another namespace's size: the key its srun published in the job's store.
        c.ns_size = [this](const std::string &nspace, connect_ops::size_fn done) {
            wire::lookup_request lk;
            lk.keys.push_back(std::string(kNamespaceSizeKey) + nspace);
            wire::Writer w;
            session::agent_request req;
            req.type = static_cast<uint8_t>(wire::msg_type::lookup);
            req.nspace = _step.nspace;
            req.rank = PMIX_RANK_WILDCARD;
            Result<std::vector<uint8_t>> body = Status(PMIX_ERROR, "");
            if (wire::encode(w, lk).ok()) {
                req.payload = w.data();
                body = session::encode_request(req);
            }
            if (!body.ok()) return done(std::nullopt);
            _ops.agent(agent::service::session, std::move(body.value()), 10000,
                         [done, nspace](int status, const std::string &, std::vector<uint8_t> reply) {
                             wire::lookup_reply r;
                             if (status != PMIX_SUCCESS || !wire::decode_payload(reply, &r).ok() || r.data.size() != 1)
                                 return done(std::nullopt);
                             auto n = value_to_number<uint32_t>(r.data[0].value);
                             done(n.ok() ? std::optional<uint32_t>(n.value()) : std::nullopt);
                         });
        };
    }
    if (_ops.xstep) c.xstep = _ops.xstep;
    c.data_of = _ops.data_of ? _ops.data_of : [](uint32_t, relation) -> Result<InfoArray> { return InfoArray(); };
    _connect = std::make_unique<connect_service>(_step, _node_of, std::move(c), _ops.connect_timeout_sec);
}

// ------------------------------------------------------------------------------------------
// Connect / disconnect (connect.h)

void dyn_service::on_connect(uint64_t conn, uint32_t rank, uint32_t request_id, connect_op op,
                             std::span<const uint8_t> payload) {
    wire::fence_request m;
    if (Status st = wire::decode_payload(payload, &m); !st.ok()) {
        _ops.reply(conn, request_id, PMIX_ERR_UNPACK_FAILURE, std::string("malformed ") + to_string(op) + ": " + st.message(), {});
        return;
    }
    _connect->on_request(conn, rank, request_id, op, m.procs, m.infos);
}

void dyn_service::foreign_get(uint64_t conn, uint32_t request_id, const pmix_proc_t &proc, const std::string &key,
                              const InfoArray &infos) {
    _connect->get(conn, request_id, proc, key, infos);
}

// ------------------------------------------------------------------------------------------
// Publish / lookup / unpublish

void dyn_service::on_client(uint64_t conn, uint32_t rank, uint16_t type, uint32_t request_id,
                            std::span<const uint8_t> payload) {
    if (to_session(conn, rank, type, request_id, payload)) return;
    pubsub_requester who{_step.node_id, conn, request_id, rank};
    if (_step.node_id == 0) {
        handle_pubsub(who, static_cast<uint8_t>(type), payload);
        return;
    }
    if (!_ops.send_node) {
        _ops.reply(conn, request_id, PMIX_ERR_UNREACH, "node 0's server is not reachable", {});
        return;
    }
    // Forward to node 0 (wire::pubsub_forward).
    wire::Writer w;
    wire::pubsub_forward fwd;
    fwd.type = static_cast<uint8_t>(type);
    fwd.conn = conn;
    fwd.request_id = request_id;
    fwd.rank = rank;
    fwd.payload.assign(payload.begin(), payload.end());
    if (Status st = wire::encode(w, fwd); !st.ok()) {
        _ops.reply(conn, request_id, st.code(), st.message(), {});
        return;
    }
    if (type == static_cast<uint16_t>(wire::msg_type::publish)) _step_publishers.insert(rank);
    _ops.send_node(0, node_channel::pubsub_request, w.data());
}

void dyn_service::answer(const pubsub_requester &to, pmix_status_t status, const std::string &message,
                         std::span<const uint8_t> body) {
    if (to.node == _step.node_id) {
        _ops.reply(to.conn, to.request_id, status, message, body);
        return;
    }
    if (!_ops.send_node) return;
    wire::Writer w;
    wire::pubsub_answer a;
    a.conn = to.conn;
    a.request_id = to.request_id;
    a.status = status;
    a.message = message;
    a.body.assign(body.begin(), body.end());
    if (!wire::encode(w, a).ok()) return;
    _ops.send_node(to.node, node_channel::pubsub_reply, w.data());
}

void dyn_service::answer_lookup(const lookup_answer &a) {
    if (a.status != PMIX_SUCCESS) {
        answer(a.to, a.status, a.message, {});
        return;
    }
    std::vector<wire::encoded_lookup_entry> found(a.found.size());
    for (size_t i = 0; i < a.found.size(); ++i) {
        strncpy(found[i].owner.nspace, _step.nspace.c_str(), PMIX_MAX_NSLEN);
        found[i].owner.rank = a.found[i].owner;
        found[i].info = a.found[i].info;
    }
    wire::Writer w;
    if (Status st = wire::encode_lookup_reply(w, found); !st.ok()) {
        answer(a.to, st.code(), st.message(), {});
        return;
    }
    answer(a.to, PMIX_SUCCESS, {}, w.data());
}

void dyn_service::handle_pubsub(const pubsub_requester &who, uint8_t type, std::span<const uint8_t> payload) {
    const char *ns = _step.nspace.c_str();
    switch (static_cast<wire::msg_type>(type)) {
    case wire::msg_type::publish: {
        wire::publish_request m;
        if (Status st = wire::decode_payload(payload, &m); !st.ok()) {
            answer(who, PMIX_ERR_UNPACK_FAILURE, "malformed publish: " + st.message(), {});
            return;
        }
        uint8_t range = PMIX_RANGE_SESSION, persistence = PMIX_PERSIST_PROC;
        if (const pmix_info_t *r = find_info(m.directives, PMIX_RANGE)) {
            auto n = number_of(r->value);
            if (!n || *n < 0 || *n > PMIX_RANGE_PROC_LOCAL || *n == PMIX_RANGE_INVALID) {
                answer(who, PMIX_ERR_BAD_PARAM, "invalid PMIX_RANGE", {});
                return;
            }
            range = static_cast<uint8_t>(*n);
        }
        if (const pmix_info_t *p = find_info(m.directives, PMIX_PERSISTENCE)) {
            auto n = number_of(p->value);
            if (!n || *n < 0 || *n > PMIX_PERSIST_SESSION) {
                answer(who, PMIX_ERR_BAD_PARAM, "invalid PMIX_PERSISTENCE", {});
                return;
            }
            persistence = static_cast<uint8_t>(*n);
        }
        if (m.data.empty()) {
            answer(who, PMIX_ERR_BAD_PARAM, "nothing to publish", {});
            return;
        }
        std::vector<pubsub_entry> entries;
        for (size_t i = 0; i < m.data.size(); ++i) {
            pubsub_entry e;
            e.key = key_of(m.data[i]);
            e.owner = who.rank;
            e.owner_node = who.node;
            e.range = range;
            e.persistence = persistence;
            wire::Writer w;
            if (Status st = wire::encode_info(w, m.data[i]); !st.ok()) {
                answer(who, st.code(), st.message(), {});
                return;
            }
            e.info = w.data();
            entries.push_back(std::move(e));
        }
        auto ready = _store.publish(std::move(entries));
        if (!ready.ok()) {
            PMIXCPP_LOG_VERBOSE("%s: publish by rank %u refused: %s", ns, who.rank, ready.status().message().c_str());
            answer(who, ready.status().code(), ready.status().message(), {});
            return;
        }
        PMIXCPP_LOG_DEBUG("%s: rank %u published %zu key(s) (range %u, persistence %u)", ns, who.rank,
                          m.data.size(), range, persistence);
        answer(who, PMIX_SUCCESS, {}, {});
        for (const auto &a : ready.value()) answer_lookup(a);
        return;
    }
    case wire::msg_type::lookup: {
        wire::lookup_request m;
        if (Status st = wire::decode_payload(payload, &m); !st.ok()) {
            answer(who, PMIX_ERR_UNPACK_FAILURE, "malformed lookup: " + st.message(), {});
            return;
        }
        if (m.keys.empty()) {
            answer(who, PMIX_ERR_BAD_PARAM, "no keys to look up", {});
            return;
        }
        size_t wait_for = 0;
        if (const pmix_info_t *w = find_info(m.directives, PMIX_WAIT)) {
            if (w->value.type == PMIX_BOOL || w->value.type == PMIX_UNDEF) {
                wait_for = flag_of(w) ? m.keys.size() : 0;
            } else {
                auto n = number_of(w->value);
                if (!n || *n < 0) {
                    answer(who, PMIX_ERR_BAD_PARAM, "invalid PMIX_WAIT", {});
                    return;
                }
                wait_for = *n == 0 ? m.keys.size() : static_cast<size_t>(*n);
            }
        }
        auto a = _store.lookup(who, std::move(m.keys), wait_for, deadline_of(m.directives));
        if (a) answer_lookup(*a);
        else PMIXCPP_LOG_DEBUG("%s: rank %u waits for %zu published key(s)", ns, who.rank, wait_for);
        return;
    }
    case wire::msg_type::unpublish: {
        wire::unpublish_request m;
        if (Status st = wire::decode_payload(payload, &m); !st.ok()) {
            answer(who, PMIX_ERR_UNPACK_FAILURE, "malformed unpublish: " + st.message(), {});
            return;
        }
        size_t n = _store.unpublish(who.rank, m.keys);
        if (n == 0 && !m.keys.empty()) answer(who, PMIX_ERR_NOT_FOUND, "none of the keys is published by this rank", {});
        else answer(who, PMIX_SUCCESS, {}, {});
        return;
    }
    default: answer(who, PMIX_ERR_BAD_PARAM, "not a publish/lookup/unpublish request", {});
    }
}

void dyn_service::rank_left(uint32_t rank) {
    _connect->rank_left(rank);
    if (_ops.agent && rank < _session_publishers.size() && _session_publishers[rank]) {
        _session_publishers[rank] = false;
        session::agent_request req;
        req.type = 0;
        req.nspace = _step.nspace;
        req.rank = rank;
        auto body = session::encode_request(req);
        if (body.ok())
            _ops.agent(agent::service::session, std::move(body.value()), 10000,
                         [](int, const std::string &, std::vector<uint8_t>) {});
    }
    if (_step.node_id == 0) {
        size_t n = _store.rank_left(rank);
        if (n > 0) PMIXCPP_LOG_DEBUG("%s: %zu published key(s) of rank %u removed", _step.nspace.c_str(), n, rank);
        return;
    }
    // Only a rank that published into the step's store has anything to remove there: no node
    // traffic at every rank's exit (the peer's server may be ending too).
    if (!_ops.send_node || _step_publishers.erase(rank) == 0) return;
    wire::Writer w;
    wire::pubsub_forward left;
    left.type = kRankLeft;
    left.rank = rank;
    if (!wire::encode(w, left).ok()) return;
    _ops.send_node(0, node_channel::pubsub_request, w.data());
}

// ------------------------------------------------------------------------------------------
// Job control

bool dyn_service::job_control(uint64_t conn, uint32_t rank, uint32_t request_id, const wire::job_control_request &m) {
    int sig = 0;
    bool terminate = false;
    bool checkpoint = false;
    std::string what;
    if (flag_of(find_info(m.infos, PMIX_JOB_CTRL_KILL))) {
        sig = SIGKILL;
        what = "kill";
    } else if (flag_of(find_info(m.infos, PMIX_JOB_CTRL_TERMINATE))) {
        sig = SIGTERM;
        terminate = true;
        what = "terminate";
    } else if (const pmix_info_t *s = find_info(m.infos, PMIX_JOB_CTRL_SIGNAL)) {
        auto n = number_of(s->value);
        if (!n || *n <= 0 || *n >= 65) {
            _ops.reply(conn, request_id, PMIX_ERR_BAD_PARAM, "invalid PMIX_JOB_CTRL_SIGNAL", {});
            return true;
        }
        sig = static_cast<int>(*n);
        what = "signal " + std::to_string(sig);
    } else if (find_info(m.infos, PMIX_JOB_CTRL_CHECKPOINT) != nullptr) {
        if (!_ops.checkpoint_local) {
            _ops.reply(conn, request_id, PMIX_ERR_NOT_SUPPORTED, "checkpoint requests are not supported here", {});
            return true;
        }
        checkpoint = true;
        what = "checkpoint";
    } else {
        return false;
    }
    // Targets: none or {nspace, WILDCARD} = every rank of the step; other namespaces: steps of
    // the job, each with its ranks (empty = all of them).
    std::vector<bool> chosen(_step.ntasks, m.targets.empty());
    std::map<std::string, std::vector<uint32_t>> others;
    std::set<std::string> whole;  // other namespaces named with PMIX_RANK_WILDCARD
    for (const auto &t : m.targets) {
        std::string ns(t.nspace, strnlen(t.nspace, PMIX_MAX_NSLEN + 1));
        if (!ns.empty() && ns != _step.nspace) {
            if (t.rank == PMIX_RANK_WILDCARD) whole.insert(ns);
            else if (!PMIX_RANK_IS_VALID(t.rank)) {
                _ops.reply(conn, request_id, PMIX_ERR_BAD_PARAM, "invalid rank of " + ns, {});
                return true;
            }
            auto &ranks = others[ns];
            if (t.rank != PMIX_RANK_WILDCARD) ranks.push_back(t.rank);
            continue;
        }
        if (t.rank == PMIX_RANK_WILDCARD) {
            chosen.assign(_step.ntasks, true);
        } else if (t.rank < _step.ntasks) {
            chosen[t.rank] = true;
        } else {
            _ops.reply(conn, request_id, PMIX_ERR_BAD_PARAM, "no rank " + std::to_string(t.rank) + " in " + _step.nspace,
                       {});
            return true;
        }
    }
    for (const auto &ns : whole) others[ns].clear();
    PMIXCPP_LOG_VERBOSE("%s: rank %u asks to %s %zu rank(s) here and %zu other namespace(s)", _step.nspace.c_str(),
                        rank, what.c_str(), static_cast<size_t>(std::count(chosen.begin(), chosen.end(), true)),
                        others.size());
    wire::Writer body;
    wire::job_control_reply reply;
    if (!wire::encode(body, reply).ok()) return true;
    if (others.empty()) {
        // Answer first: the caller may be among the targets.
        _ops.reply(conn, request_id, PMIX_SUCCESS, {}, body.data());
        signal_step(chosen, sig, terminate, checkpoint);
        return true;
    }
    if (checkpoint) {
        // A checkpoint method lives with the process's own server; the cross-step router carries
        // signals only.
        _ops.reply(conn, request_id, PMIX_ERR_NOT_SUPPORTED,
                   "checkpoint of another namespace (" + others.begin()->first + ") is not supported", {});
        return true;
    }
    if (!_ops.xstep) {
        _ops.reply(conn, request_id, PMIX_ERR_NOT_SUPPORTED,
                   "job control of another namespace (" + others.begin()->first + "): no cross-step router", {});
        return true;
    }
    // The other steps first: one refusal (not a step of this job, no such rank) fails the call
    // and our own targets are left alone.
    struct gather {
        size_t left = 0;
        pmix_status_t status = PMIX_SUCCESS;
        std::string message;
    };
    auto g = std::make_shared<gather>();
    g->left = others.size();
    auto reply_bytes = std::make_shared<std::vector<uint8_t>>(body.data());
    for (const auto &[ns, ranks] : others) {
        xstep::message x;
        x.what = xstep::op::jobctl;
        x.nspace = ns;
        x.ranks = ranks;
        x.signal = sig;
        x.terminate = terminate;
        auto bytes = xstep::encode(x);
        if (!bytes.ok()) {
            _ops.reply(conn, request_id, bytes.status().code(), bytes.status().message(), {});
            return true;
        }
        _ops.xstep(std::move(bytes.value()), 10000,
                   [this, g, ns, conn, request_id, chosen, sig, terminate, reply_bytes](
                       int status, const std::string &message, std::vector<uint8_t>) {
                       if (status != PMIX_SUCCESS && g->status == PMIX_SUCCESS) {
                           g->status = status;
                           g->message = "job control of " + ns + ": " + message;
                       }
                       if (--g->left > 0) return;
                       if (g->status != PMIX_SUCCESS) {
                           _ops.reply(conn, request_id, g->status, g->message, {});
                           return;
                       }
                       _ops.reply(conn, request_id, PMIX_SUCCESS, {}, *reply_bytes);
                       signal_step(chosen, sig, terminate);
                   });
    }
    return true;
}

void dyn_service::signal_step(const std::vector<bool> &chosen, int sig, bool terminate, bool checkpoint) {
    std::vector<std::vector<uint32_t>> by_node(_step.node_names.size());
    for (uint32_t r = 0; r < _step.ntasks && r < chosen.size(); ++r)
        if (chosen[r] && r < _node_of.size() && _node_of[r] < by_node.size()) by_node[_node_of[r]].push_back(r);
    for (uint32_t n = 0; n < by_node.size(); ++n) {
        if (n == _step.node_id || by_node[n].empty() || !_ops.send_node) continue;
        wire::Writer w;
        (void)wire::encode(w, wire::job_control_forward{sig, terminate, by_node[n], checkpoint});  // cannot fail
        _ops.send_node(n, node_channel::job_control, w.data());
    }
    if (_step.node_id < by_node.size()) signal_local(by_node[_step.node_id], sig, terminate, checkpoint);
}

void dyn_service::job_control_of_other_step(const std::vector<uint32_t> &ranks, int sig, bool terminate) {
    std::vector<uint32_t> mine;
    for (uint32_t r : _step.local_ranks())
        if (ranks.empty() || std::find(ranks.begin(), ranks.end(), r) != ranks.end()) mine.push_back(r);
    PMIXCPP_LOG_VERBOSE("%s: another step asks for signal %d to %zu rank(s) here", _step.nspace.c_str(), sig, mine.size());
    signal_local(mine, sig, terminate);
}

void dyn_service::signal_local(const std::vector<uint32_t> &ranks, int sig, bool terminate, bool checkpoint) {
    if (checkpoint) {
        if (_ops.checkpoint_local) _ops.checkpoint_local(ranks);
        return;
    }
    for (uint32_t r : ranks) {
        process_handle proc = _ops.process_of ? _ops.process_of(r) : nullptr;
        if (!proc) {
            PMIXCPP_LOG_WARNING("%s: cannot signal rank %u: it has no connection to the server", _step.nspace.c_str(), r);
            continue;
        }
        const int pid = static_cast<int>(proc->pid());
        if (_ops.signal(*proc, sig) != 0) {
            PMIXCPP_LOG_WARNING("%s: signal %d to rank %u (pid %d): %s", _step.nspace.c_str(), sig, r, pid,
                                strerror(errno));
            continue;
        }
        PMIXCPP_LOG_DEBUG("%s: signal %d sent to rank %u (pid %d)", _step.nspace.c_str(), sig, r, pid);
        if (terminate) _kills.push_back({server_clock::now() + std::chrono::seconds(kTerminateGraceSec), std::move(proc)});
    }
}

// ------------------------------------------------------------------------------------------
// Node messages and deadlines

Status dyn_service::add_channels(node_channels &table) {
    PMIXCPP_RETURN_IF_ERROR(table.add(node_channel::pubsub_request, "pubsub request",
                                      [this](uint32_t from, std::span<const uint8_t> body) { on_pubsub_request(from, body); }));
    PMIXCPP_RETURN_IF_ERROR(table.add(node_channel::pubsub_reply, "pubsub reply",
                                      [this](uint32_t from, std::span<const uint8_t> body) { on_pubsub_reply(from, body); }));
    return table.add(node_channel::job_control, "job control",
                     [this](uint32_t from, std::span<const uint8_t> body) { on_job_control(from, body); });
}

void dyn_service::on_pubsub_request(uint32_t from, std::span<const uint8_t> body) {
    const char *ns = _step.nspace.c_str();
    wire::pubsub_forward m;
    Status st = wire::decode(body, &m);
    const uint8_t type = m.type;
    pubsub_requester who;
    who.node = from;
    who.conn = m.conn;
    who.request_id = m.request_id;
    who.rank = m.rank;
    std::span<const uint8_t> payload(m.payload);
    if (!st.ok() || _step.node_id != 0 || who.rank >= _step.ntasks || _node_of[who.rank] != from) {
        PMIXCPP_LOG_ERROR("%s: bad pubsub request from node %u dropped: %s", ns, from,
                          st.ok() ? "wrong node or rank" : st.message().c_str());
        return;
    }
    if (type == kRankLeft) {
        _store.rank_left(who.rank);
        return;
    }
    handle_pubsub(who, type, payload);
}

void dyn_service::on_pubsub_reply(uint32_t from, std::span<const uint8_t> body) {
    wire::pubsub_answer m;
    Status st = wire::decode(body, &m);
    if (!st.ok() || from != 0) {
        PMIXCPP_LOG_ERROR("%s: bad pubsub reply from node %u dropped: %s", _step.nspace.c_str(), from,
                          st.ok() ? "not from node 0" : st.message().c_str());
        return;
    }
    _ops.reply(m.conn, m.request_id, m.status, m.message, m.body);
}

void dyn_service::on_job_control(uint32_t from, std::span<const uint8_t> body) {
    wire::job_control_forward m;
    Status st = wire::decode(body, _step.ntasks, &m);
    for (size_t i = 0; st.ok() && i < m.ranks.size(); ++i)
        if (_node_of[m.ranks[i]] != _step.node_id)
            st = Status(PMIX_ERR_BAD_PARAM, "rank " + std::to_string(m.ranks[i]) + " is not on this node");
    if (!st.ok()) {
        PMIXCPP_LOG_ERROR("%s: bad job control from node %u dropped: %s", _step.nspace.c_str(), from,
                          st.message().c_str());
        return;
    }
    signal_local(m.ranks, m.signal, m.terminate, m.checkpoint);
}

void dyn_service::expire(server_clock::time_point now) {
    _connect->expire(now);
    for (const auto &a : _store.expire(now)) answer_lookup(a);
    for (auto it = _kills.begin(); it != _kills.end();) {
        if (it->when <= now) {
            if (_ops.signal(*it->proc, 0) == 0) _ops.signal(*it->proc, SIGKILL);
            it = _kills.erase(it);
        } else {
            ++it;
        }
    }
}

std::optional<server_clock::time_point> dyn_service::next_deadline() const {
    auto next = _store.next_deadline();
    for (const auto &k : _kills)
        if (!next || k.when < *next) next = k.when;
    if (auto c = _connect->next_deadline(); c && (!next || *c < *next)) next = c;
    return next;
}

// Requests whose range is the session (PMIX_RANGE_SESSION, GLOBAL, UNDEF, or none: the default)
// go to the job's store beside srun, when the step has one. True if sent there.
bool dyn_service::to_session(uint64_t conn, uint32_t rank, uint16_t type, uint32_t request_id,
                             std::span<const uint8_t> payload) {
    if (!_ops.agent) return false;
    const InfoArray *dirs = nullptr;
    wire::publish_request pub;
    wire::lookup_request lk;
    if (type == static_cast<uint16_t>(wire::msg_type::publish)) {
        if (!wire::decode_payload(payload, &pub).ok()) return false;  // the step store reports it
        dirs = &pub.directives;
    } else {
        if (!wire::decode_payload(payload, &lk).ok()) return false;
        dirs = &lk.directives;
    }
    if (const pmix_info_t *r = find_info(*dirs, PMIX_RANGE)) {
        auto n = number_of(r->value);
        if (!n) return false;  // the step's store answers the malformed directive
        switch (*n) {
            case PMIX_RANGE_SESSION:
            case PMIX_RANGE_GLOBAL:
            case PMIX_RANGE_UNDEF: break;
            case PMIX_RANGE_RM:
            case PMIX_RANGE_LOCAL:
            case PMIX_RANGE_NAMESPACE:
            case PMIX_RANGE_CUSTOM:
            case PMIX_RANGE_PROC_LOCAL: return false;
            default:
                // Not a range of the standard: the default range, the session. OpenMPI 5.0's
                // MPI_Lookup_name sends one when its MPI_Info names no "range", while its
                // MPI_Publish_name says PMIX_RANGE_SESSION: they must meet.
                PMIXCPP_LOG_DEBUG("%s: rank %u: PMIX_RANGE %lld is no range of the standard: the session",
                                  _step.nspace.c_str(), rank, static_cast<long long>(*n));
                break;
        }
    }
    int timeout_ms = (session::kMaxWaitSec + 30) * 1000;
    if (const pmix_info_t *t = find_info(*dirs, PMIX_TIMEOUT)) {
        auto n = number_of(t->value);
        if (n && *n > 0 && *n < session::kMaxWaitSec) timeout_ms = static_cast<int>(*n + 30) * 1000;
    }
    session::agent_request req;
    req.type = static_cast<uint8_t>(type);
    req.nspace = _step.nspace;
    req.rank = rank;
    req.payload.assign(payload.begin(), payload.end());
    auto body = session::encode_request(req);
    if (!body.ok()) return false;
    if (type == static_cast<uint16_t>(wire::msg_type::publish)) {
        if (_session_publishers.size() < _step.ntasks) _session_publishers.resize(_step.ntasks, false);
        if (rank < _session_publishers.size()) _session_publishers[rank] = true;
    }
    _ops.agent(agent::service::session, std::move(body.value()), timeout_ms,
                 [this, conn, request_id](int status, const std::string &message, std::vector<uint8_t> reply) {
                     _ops.reply(conn, request_id, status, message, reply);
                 });
    return true;
}

// ------------------------------------------------------------------------------------------
// Spawn

void dyn_service::on_spawn(uint64_t conn, uint32_t rank, uint32_t request_id, std::span<const uint8_t> payload) {
    spawn::agent_spawn_request req;
    if (Status st = wire::decode_payload(payload, &req.request); !st.ok()) {
        _ops.reply(conn, request_id, PMIX_ERR_UNPACK_FAILURE, "malformed spawn: " + st.message(), {});
        return;
    }
    if (!_ops.agent) {
        _ops.reply(conn, request_id, PMIX_ERR_NOT_SUPPORTED, "spawn needs srun's agent, which this step has not", {});
        return;
    }
    req.parent_nspace = _step.nspace;
    req.parent_rank = rank;
    // The same grow asked through an app's environment (PMIXCPP_SPAWN_GROW=<nodes>): the one way
    // an MPI_Comm_spawn can ask it (MPI_Info "env"); taken out of the environment, and as strict
    // as the attribute. Only one of the two, and one value.
    std::optional<std::string> env_grow;
    for (auto &app : req.request.apps) {
        for (auto it = app.env.begin(); it != app.env.end();) {
            const std::string prefix = std::string(kSpawnGrowEnv) + "=";
            if (it->compare(0, prefix.size(), prefix) != 0) {
                ++it;
                continue;
            }
            std::string v = it->substr(prefix.size());
            it = app.env.erase(it);
            if (env_grow && *env_grow != v) {
                _ops.reply(conn, request_id, PMIX_ERR_BAD_PARAM,
                           std::string(kSpawnGrowEnv) + " given twice with different values", {});
                return;
            }
            env_grow = std::move(v);
        }
    }
    if (env_grow) {
        if (find_info(req.request.job_info, kSpawnGrow)) {
            _ops.reply(conn, request_id, PMIX_ERR_BAD_PARAM,
                       std::string(kSpawnGrowEnv) + " and " + kSpawnGrow + " in one spawn: give one", {});
            return;
        }
        uint64_t n = 0;
        const std::string &v = *env_grow;
        const bool digits = !v.empty() && v.size() <= 6 && v.find_first_not_of("0123456789") == std::string::npos;
        if (digits) n = std::stoull(v);
        if (!digits || n < 1 || n > kMaxSpawnGrowNodes) {
            _ops.reply(conn, request_id, PMIX_ERR_BAD_PARAM,
                       std::string(kSpawnGrowEnv) + " must be a number of nodes, 1.." + std::to_string(kMaxSpawnGrowNodes),
                       {});
            return;
        }
        std::vector<pmix_info_t> infos;
        for (size_t k = 0; k < req.request.job_info.size(); ++k) {
            pmix_info_t copy{};
            if (info_xfer(&copy, &req.request.job_info[k]).ok()) infos.push_back(copy);
        }
        infos.push_back(make_info(kSpawnGrow, &n, PMIX_UINT64));
        req.request.job_info = to_array(infos);
    }
    // pmixcpp.spawn.grow: checked and taken out of the job's infos (srun's side never sees it).
    uint64_t grow = 0;
    // 0: no limit (the bridge then waits as long as Slurm keeps the request pending).
    int grow_timeout = static_cast<int>(std::min<uint32_t>(_ops.grow_timeout_sec, 7 * 24 * 3600));
    if (const pmix_info_t *g = find_info(req.request.job_info, kSpawnGrow)) {
        auto n = value_to_number<int64_t>(g->value);
        if (!n.ok() || n.value() < 1 || static_cast<uint64_t>(n.value()) > kMaxSpawnGrowNodes) {
            _ops.reply(conn, request_id, PMIX_ERR_BAD_PARAM,
                       std::string(kSpawnGrow) + " must be a number of nodes, 1.." + std::to_string(kMaxSpawnGrowNodes),
                       {});
            return;
        }
        grow = static_cast<uint64_t>(n.value());
        auto names_host = [](const InfoArray &a) {
            return find_info(a, PMIX_HOST) || find_info(a, PMIX_ADD_HOST) || find_info(a, PMIX_SPAWN_TARGET) || find_info(a, PMIX_ALLOC_ID);
        };
        bool hosts = names_host(req.request.job_info);
        for (const auto &app : req.request.apps) hosts = hosts || names_host(app.info);
        if (hosts) {
            _ops.reply(conn, request_id, PMIX_ERR_BAD_PARAM,
                       std::string(kSpawnGrow) +
                           " places the processes on the nodes it obtains: PMIX_HOST, PMIX_ADD_HOST, "
                           "PMIX_SPAWN_TARGET or PMIX_ALLOC_ID cannot come with it",
                       {});
            return;
        }
        if (const pmix_info_t *t = find_info(req.request.job_info, PMIX_TIMEOUT)) {
            auto v = value_to_number<int64_t>(t->value);
            if (v.ok()) grow_timeout = static_cast<int>(std::clamp<int64_t>(v.value(), 0, 7 * 24 * 3600));
        }
        std::vector<pmix_info_t> rest;
        for (size_t k = 0; k < req.request.job_info.size(); ++k) {
            if (strncmp(req.request.job_info[k].key, kSpawnGrow, PMIX_MAX_KEYLEN + 1) == 0) continue;
            pmix_info_t copy{};
            if (info_xfer(&copy, &req.request.job_info[k]).ok()) rest.push_back(copy);
        }
        req.request.job_info = to_array(rest);
    }
    // One app: the child step learns the parent's size, for the sets of both (groups.h).
    uint32_t child_size = 0;
    if (req.request.apps.size() == 1 && req.request.apps[0].maxprocs > 0 &&
        static_cast<uint32_t>(req.request.apps[0].maxprocs) <= kMaxSpawnPsetStep && _step.ntasks <= kMaxSpawnPsetStep) {
        child_size = static_cast<uint32_t>(req.request.apps[0].maxprocs);
        req.request.apps[0].env.push_back(std::string(spawn::kParentSizeEnv) + "=" + std::to_string(_step.ntasks));
        if (std::string peers = _ops.spawn_peers ? _ops.spawn_peers() : std::string(); !peers.empty())
            req.request.apps[0].env.push_back(std::string(spawn::kPeersEnv) + "=" + peers);
    }
    if (grow > 0) return grow_then_spawn(conn, rank, request_id, std::move(req), child_size, grow, grow_timeout);
    start_spawn(conn, rank, request_id, std::move(req), child_size, "");
}

namespace {

// An allocation request of a rank of this step for srun's agent (the grow of a grow-spawn, or its
// roll-back), in the caller's name as any PMIx_Allocation_request.
alloc::agent_request step_alloc_request(const std::string &nspace, const std::string &node, uint32_t rank,
                                        pmix_alloc_directive_t directive, std::vector<pmix_info_t> infos) {
    alloc::agent_request ar;
    ar.op = alloc::agent_op::allocate;
    ar.nspace = nspace;
    ar.rank = rank;
    ar.node = node;
    ar.directive = directive;
    ar.infos = to_array(infos);
    return ar;
}

}  // namespace

void dyn_service::grow_then_spawn(uint64_t conn, uint32_t rank, uint32_t request_id, spawn::agent_spawn_request &&req,
                                  uint32_t child_size, uint64_t nodes, int timeout_sec) {
    auto body = alloc::encode_request(step_alloc_request(
        _step.nspace, _step.node_name(), rank, PMIX_ALLOC_EXTEND,
        {make_info(PMIX_ALLOC_NUM_NODES, &nodes, PMIX_UINT64), make_info(PMIX_TIMEOUT, &timeout_sec, PMIX_INT)}));
    if (!body.ok()) {
        _ops.reply(conn, request_id, body.status().code(), body.status().message(), {});
        return;
    }
    PMIXCPP_LOG_VERBOSE("%s: rank %u spawns onto %llu new node(s): EXTEND first (up to %d s, 0: no limit)",
                        _step.nspace.c_str(), rank, static_cast<unsigned long long>(nodes), timeout_sec);
    auto held = std::make_shared<spawn::agent_spawn_request>(std::move(req));
    // The bridge answers at the request's PMIX_TIMEOUT; the transport waits a little longer.
    _ops.agent(agent::service::alloc, std::move(body.value()), timeout_sec > 0 ? (timeout_sec + 30) * 1000 : kWatchTimeoutMs,
               [this, conn, request_id, rank, child_size, nodes, held](int status, const std::string &message,
                                                                      std::vector<uint8_t> reply) {
        alloc::agent_reply rep;
        if (status != PMIX_SUCCESS) {
            rep.status = status;
            rep.message = message;
        } else {
            wire::Reader r(reply.data(), reply.size());
            Status st = alloc::decode(r, &rep);
            if (!st.ok()) {
                rep.status = PMIX_ERR_UNPACK_FAILURE;
                rep.message = "malformed answer from the srun agent: " + st.message();
            }
        }
        const pmix_info_t *list = rep.status == PMIX_SUCCESS ? find_info(rep.results, PMIX_ALLOC_NODE_LIST) : nullptr;
        if (list == nullptr || list->value.type != PMIX_STRING || list->value.data.string == nullptr ||
            !*list->value.data.string) {
            const pmix_status_t code = rep.status == PMIX_SUCCESS ? PMIX_ERROR : rep.status;
            _ops.reply(conn, request_id, code,
                       std::string(kSpawnGrow) + ": the job did not grow by " + std::to_string(nodes) +
                           " node(s), nothing was spawned: " + (rep.message.empty() ? "no nodes named" : rep.message),
                       {});
            return;
        }
        const std::string grown = list->value.data.string;
        PMIXCPP_LOG_VERBOSE("%s: rank %u: the job grew by %s; spawning there", _step.nspace.c_str(), rank, grown.c_str());
        std::vector<pmix_info_t> infos;
        for (size_t k = 0; k < held->request.job_info.size(); ++k) {
            pmix_info_t copy{};
            if (info_xfer(&copy, &held->request.job_info[k]).ok()) infos.push_back(copy);
        }
        infos.push_back(make_info(PMIX_HOST, grown.c_str(), PMIX_STRING));
        // Spread over every grown node (srun alone may fill the first one): ceil(procs / nodes)
        // a node, unless the spawn names its own mapping.
        bool mapped = find_info(held->request.job_info, PMIX_MAPBY) || find_info(held->request.job_info, PMIX_PPR);
        uint64_t procs = 0;
        for (const auto &app : held->request.apps) {
            mapped = mapped || find_info(app.info, PMIX_MAPBY) || find_info(app.info, PMIX_PPR);
            procs += app.maxprocs > 0 ? static_cast<uint64_t>(app.maxprocs) : 0;
        }
        auto hosts = hostlist::expand(grown);
        if (!mapped && hosts.ok() && !hosts->empty() && procs > 0) {
            const std::string ppr = "ppr:" + std::to_string((procs + hosts->size() - 1) / hosts->size()) + ":node";
            infos.push_back(make_info(PMIX_MAPBY, ppr.c_str(), PMIX_STRING));
        }
        held->request.job_info = to_array(infos);
        start_spawn(conn, rank, request_id, std::move(*held), child_size, grown);
    });
}

void dyn_service::fail_spawn(uint64_t conn, uint32_t rank, uint32_t request_id, pmix_status_t status,
                             const std::string &message, const std::string &grown) {
    if (grown.empty()) {
        _ops.reply(conn, request_id, status, message, {});
        return;
    }
    // Roll the grow back: exactly the nodes it added go back to Slurm, then the spawner hears.
    auto body = alloc::encode_request(step_alloc_request(_step.nspace, _step.node_name(), rank, PMIX_ALLOC_RELEASE,
                                                         {make_info(PMIX_ALLOC_NODE_LIST, grown.c_str(), PMIX_STRING)}));
    if (!body.ok()) {
        _ops.reply(conn, request_id, status, message + "; the nodes obtained for it (" + grown + ") stay in the job: " +
                                                 body.status().message(), {});
        return;
    }
    PMIXCPP_LOG_VERBOSE("%s: rank %u: spawn onto %s failed; giving the nodes back", _step.nspace.c_str(), rank,
                        grown.c_str());
    _ops.agent(agent::service::alloc, std::move(body.value()), 60 * 1000,
               [this, conn, request_id, status, message, grown](int st, const std::string &msg,
                                                                std::vector<uint8_t> reply) {
        alloc::agent_reply rep;
        if (st != PMIX_SUCCESS) {
            rep.status = st;
            rep.message = msg;
        } else {
            wire::Reader r(reply.data(), reply.size());
            if (!alloc::decode(r, &rep).ok()) {
                rep.status = PMIX_ERR_UNPACK_FAILURE;
                rep.message = "malformed answer from the srun agent";
            }
        }
        if (rep.status == PMIX_SUCCESS)
            _ops.reply(conn, request_id, status, message + "; the grow was rolled back: " + grown + " given back to Slurm",
                       {});
        else {
            PMIXCPP_LOG_WARNING("%s: nodes %s obtained for a failed spawn could not be given back: %s",
                                _step.nspace.c_str(), grown.c_str(), rep.message.c_str());
            _ops.reply(conn, request_id, status,
                       message + "; the nodes obtained for it (" + grown + ") could not be given back: " + rep.message,
                       {});
        }
    });
}

void dyn_service::start_spawn(uint64_t conn, uint32_t rank, uint32_t request_id, spawn::agent_spawn_request &&req,
                              uint32_t child_size, const std::string &grown) {
    auto body = spawn::encode_request(req);
    if (!body.ok()) {
        fail_spawn(conn, rank, request_id, body.status().code(), body.status().message(), grown);
        return;
    }
    PMIXCPP_LOG_VERBOSE("%s: rank %u spawns %zu app(s)", _step.nspace.c_str(), rank, req.request.apps.size());
    _ops.agent(agent::service::spawn, std::move(body.value()), (spawn::kStepStartTimeoutSec + 30) * 1000,
               [this, conn, request_id, rank, child_size, grown](int status, const std::string &message,
                                                                 std::vector<uint8_t> reply) {
        spawn::agent_spawn_reply rep;
        Status st = spawn::from_reply(agent::reply{status, message, std::move(reply)}, &rep);
        if (!st.ok()) {
            fail_spawn(conn, rank, request_id, PMIX_ERR_UNPACK_FAILURE,
                       st.with_context("spawn reply from srun").message(), grown);
            return;
        }
        if (rep.status != PMIX_SUCCESS) {
            fail_spawn(conn, rank, request_id, rep.status, rep.message, grown);
            return;
        }
        const std::string &nspace = rep.nspace;
        wire::Writer w;
        wire::spawn_reply r;
        r.nspace = nspace;
        if (!wire::encode(w, r).ok()) return;
        // the sets first: the spawner's next calls (connect, queries) may look for them
        if (child_size > 0 && _ops.spawned) _ops.spawned(nspace, child_size);
        _ops.reply(conn, request_id, PMIX_SUCCESS, {}, w.data());
        watch_child(nspace, rank);
    });
}

// The parent's srun knows when the child step's srun ends: ask it to tell us, then raise
// PMIX_EVENT_JOB_END at the spawning rank.
void dyn_service::watch_child(const std::string &child, uint32_t spawner) {
    if (!_ops.agent || !_ops.child_ended) return;
    auto body = spawn::encode_watch(child);
    if (!body.ok()) return;
    _ops.agent(agent::service::spawn_watch, std::move(body.value()), kWatchTimeoutMs,
                 [this, child, spawner](int status, const std::string &message, std::vector<uint8_t> reply) {
                     int32_t code = -1;
                     wire::Reader r(reply.data(), reply.size());
                     if (status != PMIX_SUCCESS || !r.get_i32(&code).ok()) {
                         PMIXCPP_LOG_VERBOSE("%s: no end of spawned step %s to report: %s", _step.nspace.c_str(),
                                             child.c_str(), message.c_str());
                         return;
                     }
                     PMIXCPP_LOG_DEBUG("%s: spawned step %s ended (srun status %d)", _step.nspace.c_str(),
                                       child.c_str(), code);
                     _ops.child_ended(child, spawner, code);
                 });
}

}  // namespace pmixcpp::server
