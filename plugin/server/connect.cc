#include "connect.h"

#include <algorithm>
#include <cinttypes>
#include <cstdlib>
#include <cstring>

#include "log.h"
#include "value.h"
#include "wire/codec.h"
#include "wire/node_messages.h"
#include "../services/xstep/xstep_codec.h"

namespace pmixcpp::server {

const char *to_string(connect_op op) {
    switch (op) {
    case connect_op::connect: return "connect";
    case connect_op::disconnect: return "disconnect";
    case connect_op::fence: return "fence";
    case connect_op::group: return "group";
    }
    return "unknown";
}

// --- helpers ------------------------------------------------------------------------------

namespace {

std::string ns_of(const pmix_proc_t &p) { return std::string(p.nspace, strnlen(p.nspace, sizeof(p.nspace))); }

uint64_t fnv1a(const std::string &s) {
    uint64_t h = 1469598103934665603ull;
    for (unsigned char c : s) {
        h ^= c;
        h *= 1099511628211ull;
    }
    return h;
}

// Job-level keys that describe the contributor's node, not the namespace.
bool node_relative(const char *key) {
    static const char *keys[] = {PMIX_LOCAL_SIZE, PMIX_NODE_SIZE, PMIX_LOCAL_PEERS, PMIX_LOCALLDR,
                                 PMIX_NODEID,     PMIX_HOSTNAME,  PMIX_TMPDIR,      PMIX_NSDIR,
                                 PMIX_CPUSET,     PMIX_LOCAL_CPUSETS};
    for (const char *k : keys)
        if (strncmp(key, k, PMIX_MAX_KEYLEN + 1) == 0) return true;
    return false;
}

// Copy the infos `keep` selects and append `extra` (taken over).
Result<InfoArray> filtered(const InfoArray &src, const std::function<bool(const pmix_info_t &)> &keep,
                           std::vector<pmix_info_t> extra) {
    size_t n = 0;
    for (size_t i = 0; i < src.size(); ++i) n += keep(src[i]) ? 1 : 0;
    size_t total = n + extra.size();
    auto *infos = static_cast<pmix_info_t *>(calloc(total ? total : 1, sizeof(pmix_info_t)));
    if (infos == nullptr) {
        for (auto &e : extra) info_destruct(&e);
        return Status(PMIX_ERR_NOMEM, "out of memory");
    }
    InfoArray out(infos, total);
    size_t j = 0;
    for (size_t i = 0; i < src.size(); ++i) {
        if (!keep(src[i])) continue;
        Status st = info_xfer(&infos[j++], &src[i]);
        if (!st.ok()) {
            for (auto &e : extra) info_destruct(&e);
            return st;
        }
    }
    for (auto &e : extra) infos[j++] = e;  // moved: the array owns it now
    return out;
}

Result<InfoArray> copy_of(const InfoArray &src) {
    return filtered(src, [](const pmix_info_t &) { return true; }, {});
}

int timeout_ms_of(const InfoArray &infos, uint32_t default_sec) {
    if (const pmix_info_t *t = find_info(infos, PMIX_TIMEOUT)) {
        auto n = value_to_number<int64_t>(t->value);
        if (n.ok() && n.value() > 0) return static_cast<int>(std::min<int64_t>(n.value(), 86400) * 1000);
    }
    return static_cast<int>(std::min<uint32_t>(default_sec, 86400) * 1000);
}

}  // namespace

Result<session::agent_request> namespace_size_record(const std::string &nspace, uint32_t ntasks) {
    wire::publish_request pub;
    std::string key = std::string(kNamespaceSizeKey) + nspace;
    pmix_persistence_t persist = PMIX_PERSIST_APP;  // removed with the step (job_store::step_ended)
    pmix_info_t data{}, dir{};
    strncpy(data.key, key.c_str(), PMIX_MAX_KEYLEN);
    PMIXCPP_RETURN_IF_ERROR(value_load(&data.value, &ntasks, PMIX_UINT32));
    strncpy(dir.key, PMIX_PERSISTENCE, PMIX_MAX_KEYLEN);
    PMIXCPP_RETURN_IF_ERROR(value_load(&dir.value, &persist, PMIX_PERSIST));
    PMIXCPP_ASSIGN_OR_RETURN(auto d, filtered(InfoArray(), [](const pmix_info_t &) { return true; }, {data}));
    PMIXCPP_ASSIGN_OR_RETURN(auto r, filtered(InfoArray(), [](const pmix_info_t &) { return true; }, {dir}));
    pub.data = std::move(d);
    pub.directives = std::move(r);
    wire::Writer w;
    PMIXCPP_RETURN_IF_ERROR(wire::encode(w, pub));
    session::agent_request req;
    req.type = static_cast<uint8_t>(wire::msg_type::publish);
    req.nspace = nspace;
    req.rank = 0;
    req.payload = w.data();
    return req;
}

// --- the service --------------------------------------------------------------------------

connect_service::connect_service(const step_info &step, std::vector<uint32_t> node_of, connect_ops ops,
                                 uint32_t default_timeout_sec)
    : _step(step), _node_of(std::move(node_of)), _ops(std::move(ops)), _default_timeout_sec(default_timeout_sec) {}

std::function<void(const std::string &, connect_ops::size_fn)> namespace_size_lookup(std::string own_nspace,
                                                                                     job_store_fn job_store) {
    return [own_nspace = std::move(own_nspace), job_store = std::move(job_store)](const std::string &nspace,
                                                                                  connect_ops::size_fn done) {
        wire::lookup_request lk;
        lk.keys.push_back(std::string(kNamespaceSizeKey) + nspace);
        wire::Writer w;
        session::agent_request req;
        req.type = static_cast<uint8_t>(wire::msg_type::lookup);
        req.nspace = own_nspace;
        req.rank = PMIX_RANK_WILDCARD;
        Result<std::vector<uint8_t>> body = Status(PMIX_ERROR, "");
        if (wire::encode(w, lk).ok()) {
            req.payload = w.data();
            body = session::encode_request(req);
        }
        if (!body.ok()) return done(std::nullopt);
        job_store(std::move(body.value()), 10000, [done](int status, const std::string &, std::vector<uint8_t> reply) {
            wire::lookup_reply r;
            if (status != PMIX_SUCCESS || !wire::decode_payload(reply, &r).ok() || r.data.size() != 1)
                return done(std::nullopt);
            auto n = value_to_number<uint32_t>(r.data[0].value);
            done(n.ok() ? std::optional<uint32_t>(n.value()) : std::nullopt);
        });
    };
}

void connect_service::on_frame(uint64_t conn, uint32_t rank, uint32_t request_id, connect_op op,
                               std::span<const uint8_t> payload) {
    wire::fence_request m;
    if (Status st = wire::decode_payload(payload, &m); !st.ok()) {
        _ops.reply(conn, request_id, PMIX_ERR_UNPACK_FAILURE, std::string("malformed ") + to_string(op) + ": " + st.message(), {});
        return;
    }
    on_request(conn, rank, request_id, op, m.procs, m.infos);
}

void connect_service::on_request(uint64_t conn, uint32_t rank, uint32_t request_id, connect_op op,
                                 const std::vector<pmix_proc_t> &procs, const InfoArray &infos) {
    enter(conn, rank, request_id, op, procs, timeout_ms_of(infos, _default_timeout_sec));
}

void connect_service::when_size_known(const std::string &nspace, std::function<void()> fn) {
    auto &waiters = _size_waiters[nspace];
    waiters.push_back(std::move(fn));
    if (waiters.size() > 1) return;  // already asked
    _ops.ns_size(nspace, [this, nspace](std::optional<uint32_t> size) {
        _sizes[nspace] = size.value_or(0);
        auto w = std::move(_size_waiters[nspace]);
        _size_waiters.erase(nspace);
        for (auto &f : w) f();
    });
}

std::optional<uint32_t> connect_service::size_of(const std::string &nspace) const {
    if (nspace == _step.nspace) return _step.ntasks;
    if (auto s = _sizes.find(nspace); s != _sizes.end()) return s->second;
    if (auto f = _foreign.find(nspace); f != _foreign.end()) {
        if (auto job = f->second.data.find(PMIX_RANK_WILDCARD); job != f->second.data.end())
            if (const pmix_info_t *i = find_info(job->second, PMIX_JOB_SIZE))
                if (auto n = value_to_number<uint32_t>(i->value); n.ok()) return n.value();
    }
    return std::nullopt;
}

void connect_service::on_group(uint64_t conn, uint32_t rank, uint32_t request_id, wire::group_request &&req,
                               uint64_t candidate) {
    group_entry e;
    e.state = req.op == static_cast<uint8_t>(wire::group_op::join_decline) ? static_cast<uint8_t>(wire::member_state::declined)
                                                                           : static_cast<uint8_t>(wire::member_state::joined);
    e.infos = std::move(req.member_info);
    e.candidate = candidate;
    _group_entries[{conn, request_id}] = std::move(e);
    const bool destruct = req.op == static_cast<uint8_t>(wire::group_op::destruct);
    enter(conn, rank, request_id, connect_op::group, req.procs, timeout_ms_of(req.directives, _default_timeout_sec),
          std::string(destruct ? "destruct:" : "construct:") + req.name + "|");
}

void connect_service::enter(uint64_t conn, uint32_t rank, uint32_t request_id, connect_op op,
                            const std::vector<pmix_proc_t> &procs, int timeout_ms, const std::string &tag) {
    const char *ns = _step.nspace.c_str();
    // The set: per namespace "*" or its sorted ranks.
    std::map<std::string, std::set<uint32_t>> by_ns;
    std::set<std::string> wildcard;
    for (const auto &p : procs) {
        std::string n = ns_of(p);
        if (n.empty()) n = _step.nspace;
        if (p.rank == PMIX_RANK_WILDCARD) wildcard.insert(n);
        else if (p.rank == PMIX_RANK_UNDEF) {
            _group_entries.erase({conn, request_id});
            _ops.reply(conn, request_id, PMIX_ERR_BAD_PARAM, "participant with PMIX_RANK_UNDEF", {});
            return;
        }
        by_ns[n];
        if (p.rank != PMIX_RANK_WILDCARD) by_ns[n].insert(p.rank);
    }
    // Canonical: every rank of a namespace listed = the namespace as a wildcard. A size not
    // known yet is asked of srun's side first (once per namespace), then the request enters.
    std::vector<std::string> ask;
    for (const auto &[n, ranks] : by_ns) {
        if (wildcard.count(n) || ranks.empty()) continue;
        auto size = size_of(n);
        if (!size && _ops.ns_size) ask.push_back(n);
        else if (size && *size > 0 && ranks.size() == *size && *ranks.rbegin() == *size - 1) wildcard.insert(n);
    }
    if (!ask.empty()) {
        auto left = std::make_shared<size_t>(ask.size());
        auto again = [this, conn, rank, request_id, op, procs, timeout_ms, left, tag] {
            if (--*left == 0) enter(conn, rank, request_id, op, procs, timeout_ms, tag);
        };
        for (const auto &n : ask) when_size_known(n, again);
        return;
    }
    std::set<uint32_t> own;
    if (wildcard.count(_step.nspace)) {
        for (uint32_t r = 0; r < _step.ntasks; ++r) own.insert(r);
    } else if (by_ns.count(_step.nspace)) {
        own = by_ns[_step.nspace];
    }
    if (!own.count(rank)) {
        _group_entries.erase({conn, request_id});
        _ops.reply(conn, request_id, PMIX_ERR_BAD_PARAM,
                   std::string(to_string(op)) + ": the caller is not among the participants", {});
        return;
    }
    if (!own.empty() && *own.rbegin() >= _step.ntasks) {
        _group_entries.erase({conn, request_id});
        _ops.reply(conn, request_id, PMIX_ERR_BAD_PARAM,
                   "rank " + std::to_string(*own.rbegin()) + " is not in " + _step.nspace, {});
        return;
    }
    if (by_ns.size() > 1 && !_ops.rendezvous) {
        _group_entries.erase({conn, request_id});
        _ops.reply(conn, request_id, PMIX_ERR_NOT_SUPPORTED,
                   "no srun agent: this step cannot meet other namespaces", {});
        return;
    }
    std::string set = tag;
    for (const auto &[n, ranks] : by_ns) {
        set += n + ":";
        if (wildcard.count(n)) {
            set += "*";
        } else {
            for (uint32_t r : ranks) set += std::to_string(r) + ",";
        }
        set += ";";
    }
    // Join the collective of this set our other local participants started, or start one.
    uint64_t id = 0;
    for (auto &[cid, c] : _pending) {
        if (c.op != op || c.set != set || c.sent) continue;
        if (std::any_of(c.entered.begin(), c.entered.end(), [&](const waiter &w) { return w.rank == rank; })) continue;
        id = cid;
        break;
    }
    if (id == 0) {
        collective c;
        c.op = op;
        c.set = set;
        std::string seq_key = std::string(to_string(op)) + "." + set;
        char sig[40];
        snprintf(sig, sizeof(sig), "%016" PRIx64, fnv1a(set));
        c.key = std::string(to_string(op)) + "." + sig + "." + std::to_string(_sequence[seq_key]++);
        for (const auto &[n, ranks] : by_ns) c.nspaces.push_back(n);
        std::set<uint32_t> nodes;
        for (uint32_t r : own) {
            uint32_t node = r < _node_of.size() ? _node_of[r] : 0;
            nodes.insert(node);
            if (node == _step.node_id) c.local.insert(r);
        }
        c.nodes = static_cast<uint32_t>(nodes.size());
        c.timeout_ms = timeout_ms;
        c.deadline = server_clock::now() + std::chrono::milliseconds(c.timeout_ms);
        id = _next_id++;
        PMIXCPP_LOG_DEBUG("%s: %s %s over %s (%zu local, %u node(s) of ours)", ns, to_string(op), c.key.c_str(),
                          set.c_str(), c.local.size(), c.nodes);
        _pending.emplace(id, std::move(c));
    }
    collective &c = _pending.at(id);
    c.entered.push_back({conn, request_id, rank});
    if (c.entered.size() == c.local.size()) start(id);
}

Result<std::vector<uint8_t>> connect_service::contribution(const collective &c) const {
    wire::Writer w;
    if (c.op == connect_op::group) {
        wire::group_contribution gc;
        for (const auto &wt : c.entered) {
            auto e = _group_entries.find({wt.conn, wt.request_id});
            if (e == _group_entries.end()) continue;
            gc.reservation = std::max(gc.reservation, e->second.candidate);
            wire::group_rank_entry re;
            re.rank = wt.rank;
            re.state = e->second.state;
            PMIXCPP_RETURN_IF_ERROR(info_array_copy(e->second.infos.data(), e->second.infos.size(), &re.infos));
            gc.entries.push_back(std::move(re));
        }
        PMIXCPP_RETURN_IF_ERROR(wire::encode(w, gc));
        return w.data();
    }
    if (c.op != connect_op::connect) return w.data();
    wire::connect_contribution m;
    m.node = _step.node_name();
    PMIXCPP_ASSIGN_OR_RETURN(auto job, _ops.data_of(PMIX_RANK_WILDCARD, relation::same_node));
    m.job = std::move(job);
    for (uint32_t r : c.local) {
        PMIXCPP_ASSIGN_OR_RETURN(auto same, _ops.data_of(r, relation::same_node));
        PMIXCPP_ASSIGN_OR_RETURN(auto other, _ops.data_of(r, relation::other_node));
        m.ranks.push_back({r, std::move(same), std::move(other)});
    }
    PMIXCPP_RETURN_IF_ERROR(wire::encode(w, m));
    return w.data();
}

void connect_service::start(uint64_t id) {
    collective &c = _pending.at(id);
    if (c.nspaces.size() == 1 && c.nodes == 1) {  // only our own ranks, all here: done already
        finish(id, PMIX_SUCCESS, {}, {});
        return;
    }
    if (!_ops.rendezvous) {
        fail(c, PMIX_ERR_NOT_SUPPORTED, "no srun agent for the rendezvous");
        _pending.erase(id);
        return;
    }
    auto contrib = contribution(c);
    rendezvous_request req;
    req.key = c.key;
    req.nspace = _step.nspace;
    req.node = _step.node_id;
    req.nodes = c.nodes;
    req.nspaces = c.nspaces;
    req.timeout_ms = static_cast<uint32_t>(c.timeout_ms);
    if (contrib.ok()) req.contribution = std::move(contrib.value());
    auto body = contrib.ok() ? encode(req) : Result<std::vector<uint8_t>>(contrib.status());
    if (!body.ok()) {
        fail(c, body.status().code(), body.status().message());
        _pending.erase(id);
        return;
    }
    c.sent = true;
    PMIXCPP_LOG_DEBUG("%s: %s %s: contribution of %zu bytes to the rendezvous", _step.nspace.c_str(),
                      to_string(c.op), c.key.c_str(), req.contribution.size());
    _ops.rendezvous(std::move(body.value()), c.timeout_ms + 5000,
                    [this, id](int status, const std::string &message, std::vector<uint8_t> reply) {
                        finish(id, status, message, std::move(reply));
                    });
}

void connect_service::finish(uint64_t id, int status, const std::string &message, std::vector<uint8_t> body) {
    auto it = _pending.find(id);
    if (it == _pending.end()) return;  // failed already (a participant left, a timeout)
    collective &c = it->second;
    if (status == PMIX_SUCCESS && c.op == connect_op::connect && !body.empty()) {
        std::vector<rendezvous_piece> pieces;
        Status st = decode_pieces(body, &pieces);
        if (st.ok()) st = absorb(pieces);
        if (!st.ok()) {
            status = st.code() == PMIX_SUCCESS ? PMIX_ERROR : st.code();
            PMIXCPP_LOG_ERROR("%s: connect %s: %s", _step.nspace.c_str(), c.key.c_str(), st.message().c_str());
        }
    }
    if (status != PMIX_SUCCESS) {
        PMIXCPP_LOG_VERBOSE("%s: %s %s failed: %s", _step.nspace.c_str(), to_string(c.op), c.key.c_str(),
                            message.c_str());
        fail(c, status, message.empty() ? std::string(to_string(c.op)) + " failed" : message);
        _pending.erase(it);
        return;
    }
    std::vector<uint8_t> answer;
    if (c.op == connect_op::group) {
        std::vector<rendezvous_piece> pieces;
        Status st = decode_pieces(body, &pieces);
        auto b = st.ok() ? group_reply_body(pieces) : Result<std::vector<uint8_t>>(st);
        if (!b.ok()) {
            PMIXCPP_LOG_ERROR("%s: group %s: %s", _step.nspace.c_str(), c.key.c_str(), b.status().message().c_str());
            fail(c, PMIX_ERR_UNPACK_FAILURE, b.status().message());
            _pending.erase(it);
            return;
        }
        answer = std::move(b.value());
    }
    if (c.op == connect_op::connect) {
        auto b = reply_body(c);
        if (!b.ok()) {
            fail(c, b.status().code(), b.status().message());
            _pending.erase(it);
            return;
        }
        answer = std::move(b.value());
    }
    PMIXCPP_LOG_DEBUG("%s: %s %s complete", _step.nspace.c_str(), to_string(c.op), c.key.c_str());
    for (const auto &w : c.entered) _group_entries.erase({w.conn, w.request_id});
    for (const auto &w : c.entered) _ops.reply(w.conn, w.request_id, PMIX_SUCCESS, {}, answer);
    _pending.erase(it);
}

void connect_service::fail(collective &c, pmix_status_t status, const std::string &message) {
    for (const auto &w : c.entered) _group_entries.erase({w.conn, w.request_id});
    for (const auto &w : c.entered) _ops.reply(w.conn, w.request_id, status, message, {});
    c.entered.clear();
}

// Every namespace's members as their nodes reported them; the greatest candidate is the
// group's context id (each was reserved once, job-wide: groups.h).
Result<std::vector<uint8_t>> connect_service::group_reply_body(const std::vector<rendezvous_piece> &pieces) const {
    wire::group_reply rep;
    std::map<std::pair<std::string, uint32_t>, wire::group_member> members;
    for (const auto &p : pieces) {
        wire::group_contribution gc;
        uint32_t bound = size_of(p.nspace).value_or(0);
        if (bound == 0) bound = wire::kMaxElementCount;
        PMIXCPP_RETURN_IF_ERROR(
            wire::decode_group_contribution(p.contribution, bound, &gc).with_context("contribution of " + p.nspace));
        rep.context_id = std::max(rep.context_id, gc.reservation);
        for (auto &e : gc.entries) {
            wire::group_member m;
            strncpy(m.proc.nspace, p.nspace.c_str(), PMIX_MAX_NSLEN);
            m.proc.rank = e.rank;
            m.state = e.state;
            m.infos = std::move(e.infos);
            members[{p.nspace, e.rank}] = std::move(m);
        }
    }
    for (auto &[k, m] : members) rep.members.push_back(std::move(m));
    wire::Writer w;
    PMIXCPP_RETURN_IF_ERROR(wire::encode(w, rep));
    return w.take();
}

Status connect_service::absorb(const std::vector<rendezvous_piece> &pieces) {
    std::map<std::string, std::vector<uint32_t>> local_peers;
    std::set<std::string> job_seen;
    // Every contribution decoded before any is kept: a malformed one leaves no trace.
    std::vector<wire::connect_contribution> decoded(pieces.size());
    for (size_t i = 0; i < pieces.size(); ++i) {
        if (pieces[i].nspace == _step.nspace) continue;
        PMIXCPP_RETURN_IF_ERROR(wire::decode(pieces[i].contribution, &decoded[i])
                                    .with_context("contribution of " + pieces[i].nspace));
    }
    for (size_t pi = 0; pi < pieces.size(); ++pi) {
        const auto &p = pieces[pi];
        if (p.nspace == _step.nspace) continue;
        wire::connect_contribution &cm = decoded[pi];
        InfoArray &job = cm.job;
        foreign_ns &f = _foreign[p.nspace];
        const bool same_node = cm.node == _step.node_name();
        if (job_seen.insert(p.nspace).second) {
            PMIXCPP_ASSIGN_OR_RETURN(
                auto kept, filtered(job, [](const pmix_info_t &i) { return !node_relative(i.key); }, {}));
            f.data[PMIX_RANK_WILDCARD] = std::move(kept);
            local_peers[p.nspace];
        }
        for (auto &e : cm.ranks) {
            f.data[e.rank] = same_node ? std::move(e.same_node) : std::move(e.other_node);
            if (same_node) local_peers[p.nspace].push_back(e.rank);
        }
    }
    // What is local to us: the other namespace's ranks on our node.
    for (auto &[n, ranks] : local_peers) {
        std::sort(ranks.begin(), ranks.end());
        std::string list;
        for (uint32_t r : ranks) list += (list.empty() ? "" : ",") + std::to_string(r);
        std::vector<pmix_info_t> extra;
        const auto local_size = static_cast<uint32_t>(ranks.size());
        extra.push_back(make_info(PMIX_LOCAL_SIZE, &local_size, PMIX_UINT32));
        if (!ranks.empty()) extra.push_back(make_info(PMIX_LOCAL_PEERS, list.c_str(), PMIX_STRING));
        InfoArray &job = _foreign[n].data[PMIX_RANK_WILDCARD];
        PMIXCPP_ASSIGN_OR_RETURN(auto merged,
                                 filtered(
                                     job, [](const pmix_info_t &) { return true; }, std::move(extra)));
        job = std::move(merged);
        PMIXCPP_LOG_DEBUG("%s: connected to %s (%zu rank(s) known, %zu on this node)", _step.nspace.c_str(),
                          n.c_str(), _foreign[n].data.size() - 1, ranks.size());
    }
    return Status::success();
}

Result<std::vector<uint8_t>> connect_service::reply_body(const collective &c) const {
    wire::connect_data out;
    for (const auto &n : c.nspaces) {
        auto f = _foreign.find(n);
        if (n == _step.nspace || f == _foreign.end()) continue;
        for (const auto &[rank, infos] : f->second.data) {
            wire::connect_data_entry e;
            strncpy(e.proc.nspace, n.c_str(), PMIX_MAX_NSLEN);
            e.proc.rank = rank;
            PMIXCPP_ASSIGN_OR_RETURN(auto copy, copy_of(infos));
            e.infos = std::move(copy);
            out.entries.push_back(std::move(e));
        }
    }
    wire::Writer w;
    PMIXCPP_RETURN_IF_ERROR(wire::encode(w, out));
    return w.data();
}

void connect_service::get(uint64_t conn, uint32_t request_id, const pmix_proc_t &proc, const std::string &key,
                          const InfoArray &infos) {
    std::string n = ns_of(proc);
    uint32_t rank = proc.rank == PMIX_RANK_UNDEF ? PMIX_RANK_WILDCARD : proc.rank;
    auto f = _foreign.find(n);
    const InfoArray *d = nullptr;
    if (f != _foreign.end()) {
        auto it = f->second.data.find(rank);
        if (it != f->second.data.end()) d = &it->second;
    }
    if (d != nullptr && (key.empty() || find_info(*d, key.c_str()) != nullptr)) {
        ++_cache_hits;
        PMIXCPP_LOG_DEBUG("%s: get of %s of %s:%u answered from the data of the other step held here (%" PRIu64 ")",
                          _step.nspace.c_str(), key.empty() ? "(all data)" : key.c_str(), n.c_str(), rank, _cache_hits);
        wire::Writer w;
        Status st = wire::encode_info_array(w, d->data(), d->size());
        if (!st.ok()) {
            _ops.reply(conn, request_id, st.code(), st.message(), {});
            return;
        }
        _ops.reply(conn, request_id, PMIX_SUCCESS, {}, w.data());
        return;
    }
    const bool immediate = info_flag(infos, PMIX_OPTIONAL) || info_flag(infos, PMIX_IMMEDIATE);
    if (!immediate && rank == PMIX_RANK_WILDCARD && key == PMIX_JOB_SIZE && d == nullptr &&
        (_ops.ns_size || _sizes.count(n))) {
        // The size of a step of the job (e.g. children just spawned) is known before any connect:
        // its srun published it in the job's store.
        auto answer = [this, conn, request_id, n] {
            uint32_t size = _sizes.count(n) ? _sizes[n] : 0;
            if (size == 0) {
                _ops.reply(conn, request_id, PMIX_ERR_NOT_FOUND, "namespace '" + n + "' is not a step of this job", {});
                return;
            }
            pmix_info_t i{};
            strncpy(i.key, PMIX_JOB_SIZE, PMIX_MAX_KEYLEN);
            i.value.type = PMIX_UINT32;
            i.value.data.uint32 = size;
            wire::Writer w;
            Status st = wire::encode_info_array(w, &i, 1);
            if (!st.ok()) return _ops.reply(conn, request_id, st.code(), st.message(), {});
            _ops.reply(conn, request_id, PMIX_SUCCESS, {}, w.data());
        };
        if (auto k = _sizes.find(n); k != _sizes.end() && (k->second > 0 || !_ops.ns_size)) return answer();
        when_size_known(n, std::move(answer));
        return;
    }
    if (immediate || !_ops.xstep || rank == PMIX_RANK_WILDCARD) {
        // Job-level data of another step comes with PMIx_Connect only; OPTIONAL / IMMEDIATE never
        // leave the node (as for the ranks of our own step).
        std::string why = f == _foreign.end() ? "namespace '" + n + "' is not connected to " + _step.nspace
                          : d == nullptr      ? "rank " + std::to_string(rank) + " of " + n + " was not among the connected procs"
                                              : "rank " + std::to_string(rank) + " of " + n + " had no " + key + " when it connected";
        _ops.reply(conn, request_id, PMIX_ERR_NOT_FOUND, why, {});
        return;
    }
    // Direct modex from the proc's own step, through srun (xstep.h); one request per proc and key.
    const std::string id = n + ":" + std::to_string(rank) + ":" + key;
    auto &waiting = _xgets[id];
    waiting.emplace_back(conn, request_id);
    if (waiting.size() > 1) return;
    xstep::message m;
    m.what = xstep::op::get;
    m.nspace = n;
    m.rank = rank;
    m.key = key;
    m.from_nspace = _step.nspace;
    m.from_node = _step.node_name();
    m.timeout_ms = static_cast<uint32_t>(timeout_ms_of(infos, _default_timeout_sec));
    auto body = xstep::encode(m);
    if (!body.ok()) {
        xget_done(id, n, rank, key, body.status().code(), body.status().message(), {});
        return;
    }
    PMIXCPP_LOG_DEBUG("%s: get of %s of %s:%u: direct modex from its step", _step.nspace.c_str(),
                      key.empty() ? "(all data)" : key.c_str(), n.c_str(), rank);
    _ops.xstep(std::move(body.value()), static_cast<int>(m.timeout_ms) + 10000,
               [this, id, n, rank, key](int status, const std::string &message, std::vector<uint8_t> reply) {
                   xget_done(id, n, rank, key, status, message, std::move(reply));
               });
}

void connect_service::xget_done(const std::string &id, const std::string &nspace, uint32_t rank,
                                const std::string &key, int status, const std::string &message,
                                std::vector<uint8_t> body) {
    auto it = _xgets.find(id);
    if (it == _xgets.end()) return;
    auto waiters = std::move(it->second);
    _xgets.erase(it);
    InfoArray data;
    if (status == PMIX_SUCCESS) {
        wire::Reader r(body.data(), body.size());
        Status st = wire::decode_info_array(r, &data);
        if (st.ok()) st = r.expect_end();
        if (!st.ok()) {
            status = PMIX_ERR_UNPACK_FAILURE;
            PMIXCPP_LOG_ERROR("%s: direct modex of %s:%u: %s", _step.nspace.c_str(), nspace.c_str(), rank,
                              st.message().c_str());
        }
    }
    if (status != PMIX_SUCCESS) {
        PMIXCPP_LOG_DEBUG("%s: get of %s of %s:%u: %s (status %d)", _step.nspace.c_str(),
                          key.empty() ? "(all data)" : key.c_str(), nspace.c_str(), rank, message.c_str(), status);
        for (auto &[conn, request_id] : waiters)
            _ops.reply(conn, request_id, status, message.empty() ? "direct modex from " + nspace + " failed" : message, {});
        return;
    }
    // Kept: the proc's data as its node sees it now (it holds what the connect brought, and more).
    InfoArray &kept = _foreign[nspace].data[rank];
    kept = std::move(data);
    const bool found = key.empty() || find_info(kept, key.c_str()) != nullptr;
    wire::Writer w;
    Status st = wire::encode_info_array(w, kept.data(), kept.size());
    for (auto &[conn, request_id] : waiters) {
        if (!st.ok()) _ops.reply(conn, request_id, st.code(), st.message(), {});
        else if (!found) _ops.reply(conn, request_id, PMIX_ERR_NOT_FOUND, "rank " + std::to_string(rank) + " of " + nspace + " has no " + key, {});
        else _ops.reply(conn, request_id, PMIX_SUCCESS, {}, w.data());
    }
}

void connect_service::rank_left(uint32_t rank) {
    for (auto it = _pending.begin(); it != _pending.end();) {
        collective &c = it->second;
        bool waiting_for_it = c.local.count(rank) && !c.sent &&
                              std::none_of(c.entered.begin(), c.entered.end(), [&](const waiter &w) { return w.rank == rank; });
        if (waiting_for_it) {
            fail(c, PMIX_ERR_PROC_ABORTED, "participant rank " + std::to_string(rank) + " of " + _step.nspace + " left");
            it = _pending.erase(it);
        } else {
            ++it;
        }
    }
}

void connect_service::expire(server_clock::time_point now) {
    for (auto it = _pending.begin(); it != _pending.end();) {
        collective &c = it->second;
        // A sent collective is bounded by the rendezvous itself (it answers with a timeout).
        if (!c.sent && c.deadline <= now) {
            PMIXCPP_LOG_ERROR("%s: %s %s timed out: %zu of %zu local participants entered", _step.nspace.c_str(),
                              to_string(c.op), c.key.c_str(), c.entered.size(), c.local.size());
            fail(c, PMIX_ERR_TIMEOUT,
                 std::string(to_string(c.op)) + " timed out waiting for local participants of " + _step.nspace);
            it = _pending.erase(it);
        } else {
            ++it;
        }
    }
}

std::optional<server_clock::time_point> connect_service::next_deadline() const {
    std::optional<server_clock::time_point> d;
    for (const auto &[id, c] : _pending)
        if (!c.sent && (!d || c.deadline < *d)) d = c.deadline;
    return d;
}

}  // namespace pmixcpp::server
