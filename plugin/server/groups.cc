#include "groups.h"

#include <algorithm>
#include <cstring>

#include "../coll/coll_message.h"
#include "../common/mpmd.h"
#include "log.h"

namespace pmixcpp::server {

namespace {

// Bounds: what one node's clients may keep in flight and defined.
constexpr size_t kMaxPendingGroups = 4096;
constexpr size_t kMaxGroupSets = 65536;

// OpenPMIx 5's PMIX_GROUP_BOOTSTRAP (not in the 4.2 headers we build with).
constexpr const char *kGroupBootstrap = "pmix.grp.btstrp";

const pmix_info_t *find(const InfoArray &infos, const char *key) {
    for (size_t i = 0; i < infos.size(); ++i)
        if (strncmp(infos[i].key, key, sizeof(infos[i].key)) == 0) return &infos[i];
    return nullptr;
}

bool flag(const InfoArray &infos, const char *key) {
    const pmix_info_t *i = find(infos, key);
    if (!i) return false;
    if (i->value.type == PMIX_UNDEF) return true;
    if (i->value.type == PMIX_BOOL) return i->value.data.flag;
    auto n = value_to_number<int64_t>(i->value);
    return n.ok() && n.value() != 0;
}

// The group's signature for the node collective: its members, its name and the operation, so
// a group collective never meets a fence or another group's collective over the same ranks.
uint64_t signature(const std::vector<uint32_t> &members, const std::string &name, bool destruct) {
    uint64_t h = coll::signature_of(members) ^ 0x9e3779b97f4a7c15ull;
    for (unsigned char ch : name) h = (h ^ ch) * 0x100000001b3ull;
    h = (h ^ (destruct ? 0xd5u : 0xc0u)) * 0x100000001b3ull;
    return h;
}

}  // namespace

group_service::group_service(const step_info &step, std::vector<uint32_t> node_of, group_ops ops,
                             uint32_t default_timeout_sec)
    : _step(step), _node_of(std::move(node_of)), _ops(std::move(ops)), _default_timeout_sec(default_timeout_sec) {}

void group_service::define_step_psets() {
    const std::string prefix = std::string(spawn::kAppSizesEnv) + "=";
    std::string value;
    for (const auto &e : _step.job_env)
        if (e.rfind(prefix, 0) == 0) value = e.substr(prefix.size());
    std::vector<uint32_t> sizes = spawn::parse_app_sizes(value);
    uint64_t total = 0;
    for (uint32_t n : sizes) total += n;
    if (sizes.size() < 2 || total != _step.ntasks) return;  // one app: the namespace is the set
    uint32_t first = 0;
    for (size_t a = 0; a < sizes.size(); ++a) {
        group_pset set;
        for (uint32_t k = 0; k < sizes[a]; ++k) set.ranks.push_back(first + k);
        first += sizes[a];
        _psets[_step.nspace + ".app" + std::to_string(a)] = std::move(set);
    }
}

std::vector<pmix_proc_t> group_service::members_of(const std::string &name) const {
    std::vector<pmix_proc_t> out;
    auto it = _psets.find(name);
    if (it == _psets.end()) return out;
    for (uint32_t r : it->second.ranks) {
        pmix_proc_t p{};
        memcpy(p.nspace, _step.nspace.c_str(), std::min(_step.nspace.size(), size_t(PMIX_MAX_NSLEN)));
        p.rank = r;
        out.push_back(p);
    }
    return out;
}

void group_service::on_request(uint64_t conn, uint32_t rank, uint32_t request_id, wire::group_request &&req) {
    auto refuse = [&](pmix_status_t st, const std::string &why) {
        PMIXCPP_LOG_DEBUG("%s: rank %u: group %s %s: %s", _step.nspace.c_str(), rank, req.name.c_str(),
                          wire::to_string(static_cast<wire::group_op>(req.op)), why.c_str());
        _ops.reply(conn, request_id, st, why, nullptr);
    };
    if (!wire::valid_group_op(req.op)) return refuse(PMIX_ERR_BAD_PARAM, "unknown group operation");
    const auto op = static_cast<wire::group_op>(req.op);
    if (req.name == _step.nspace) return refuse(PMIX_ERR_BAD_PARAM, "a group cannot take the name of the namespace");
    if (find(req.directives, kGroupBootstrap))
        return refuse(PMIX_ERR_NOT_SUPPORTED, "bootstrap mode (PMIX_GROUP_BOOTSTRAP) is not supported");
    for (const auto &p : req.procs)
        if (strncmp(p.nspace, _step.nspace.c_str(), sizeof(p.nspace)) != 0) {
            if (!_ops.cross_step)
                return refuse(PMIX_ERR_NOT_SUPPORTED, "members of other steps, and no srun agent to meet them");
            uint64_t candidate = flag(req.directives, PMIX_GROUP_ASSIGN_CONTEXT_ID) ? reserve() : 0;
            _ops.cross_step(conn, rank, request_id, std::move(req), candidate);
            return;
        }
    std::vector<uint32_t> members;
    for (const auto &p : req.procs) {
        if (p.rank == PMIX_RANK_WILDCARD) {
            for (uint32_t r = 0; r < _step.ntasks; ++r) members.push_back(r);
            continue;
        }
        if (p.rank >= _step.ntasks)
            return refuse(PMIX_ERR_BAD_PARAM, "member rank " + std::to_string(p.rank) + " is not in the step");
        members.push_back(p.rank);
    }
    std::sort(members.begin(), members.end());
    members.erase(std::unique(members.begin(), members.end()), members.end());
    if (members.empty()) return refuse(PMIX_ERR_BAD_PARAM, "a group needs members");
    if (!std::binary_search(members.begin(), members.end(), rank))
        return refuse(PMIX_ERR_BAD_PARAM, "the caller is not among the group's members");

    const key k{op == wire::group_op::destruct, req.name};
    auto it = _pending.find(k);
    if (it == _pending.end() && _pending.size() >= kMaxPendingGroups)
        return refuse(PMIX_ERR_OUT_OF_RESOURCE, "too many group collectives in flight on this node");
    if (it == _pending.end() && !k.first && !_psets.count(req.name) && _psets.size() >= kMaxGroupSets)
        return refuse(PMIX_ERR_OUT_OF_RESOURCE, "too many groups on this node (destruct some)");
    if (it == _pending.end()) {
        collective c;
        c.instance = kGroupInstanceBit | _next_instance++;
        c.destruct = k.first;
        c.name = req.name;
        c.members = members;
        for (uint32_t r : members) {
            if (_node_of[r] == _step.node_id) c.local.push_back(r);
            c.nodes.push_back(_node_of[r]);
        }
        std::sort(c.nodes.begin(), c.nodes.end());
        c.nodes.erase(std::unique(c.nodes.begin(), c.nodes.end()), c.nodes.end());
        c.deadline = server_clock::now() + std::chrono::seconds(_default_timeout_sec);
        for (uint32_t r : c.local)
            if (r != rank && _ops.rank_gone && _ops.rank_gone(r)) c.accounted[r] = entry{wire::member_state::failed, {}};
        it = _pending.emplace(k, std::move(c)).first;
    } else if (it->second.members != members) {
        return refuse(PMIX_ERR_BAD_PARAM, "the group is being " + std::string(k.first ? "destructed" : "constructed") +
                                              " with other members");
    } else if (it->second.started || it->second.accounted.count(rank)) {
        return refuse(PMIX_ERR_BAD_PARAM, "this rank already entered the group's " +
                                              std::string(k.first ? "destruct" : "construct"));
    }
    collective &c = it->second;
    if (const pmix_info_t *t = find(req.directives, PMIX_TIMEOUT)) {
        auto secs = value_to_number<int64_t>(t->value);
        if (secs.ok() && secs.value() > 0) {
            auto d = server_clock::now() + std::chrono::seconds(secs.value());
            if (d < c.deadline) c.deadline = d;
        }
    }
    if (flag(req.directives, PMIX_GROUP_ASSIGN_CONTEXT_ID)) c.assign_cid = true;
    c.accounted[rank] = entry{op == wire::group_op::join_decline ? wire::member_state::declined : wire::member_state::joined,
                              std::move(req.member_info)};
    c.waiters.push_back({conn, request_id, rank});
    PMIXCPP_LOG_DEBUG("%s: rank %u entered group %s %s (%zu of %zu local members)", _step.nspace.c_str(), rank,
                      c.name.c_str(), wire::to_string(op), c.accounted.size(), c.local.size());
    advance(k);
}

void group_service::advance(const key &k) {
    auto it = _pending.find(k);
    if (it == _pending.end()) return;
    collective &c = it->second;
    if (c.started || c.accounted.size() < c.local.size()) return;
    c.started = true;
    wire::group_contribution mine;
    if (c.assign_cid) {
        mine.reservation = reserve();
        _reservations[c.instance] = mine.reservation;
    }
    for (auto &[r, e] : c.accounted) {
        wire::group_rank_entry re;
        re.rank = r;
        re.state = static_cast<uint8_t>(e.state);
        Status st = info_array_copy(e.infos.data(), e.infos.size(), &re.infos);
        if (!st.ok()) return fail(k, st.code(), "group info: " + st.message());
        mine.entries.push_back(std::move(re));
    }
    if (c.nodes.size() == 1) {
        std::vector<std::pair<uint32_t, wire::group_contribution>> parts;
        parts.emplace_back(_step.node_id, std::move(mine));
        finish(k, std::move(parts));
        return;
    }
    wire::Writer w;
    Status st = wire::encode(w, mine);
    if (st.ok()) st = _ops.start_collective(c.instance, signature(c.members, c.name, c.destruct), c.nodes, w.take());
    if (!st.ok()) fail(k, st.code() == PMIX_SUCCESS ? PMIX_ERROR : st.code(), st.message());
}

uint64_t group_service::reserve() {
    return (_next_reservation++ << 32) | (uint64_t(_step.step_id & 0xffff) << 16) | (_step.node_id & 0xffff);
}

std::optional<group_service::key> group_service::by_instance(uint64_t instance) const {
    for (const auto &[k, c] : _pending)
        if (c.instance == instance) return k;
    return std::nullopt;
}

void group_service::collective_done(uint64_t instance,
                                    const std::vector<std::pair<uint32_t, std::span<const uint8_t>>> &blobs) {
    auto k = by_instance(instance);
    if (!k) return;  // failed meanwhile
    const collective &c = _pending.at(*k);
    std::vector<std::pair<uint32_t, wire::group_contribution>> parts;
    for (const auto &[node, bytes] : blobs) {
        wire::group_contribution gc;
        Status st = wire::decode_group_contribution(bytes, _step.ntasks, &gc);
        if (st.ok())
            for (const auto &e : gc.entries)
                if (_node_of[e.rank] != node || !std::binary_search(c.members.begin(), c.members.end(), e.rank))
                    st = Status(PMIX_ERR_BAD_PARAM, "an entry for rank " + std::to_string(e.rank) +
                                                        ", which that node does not serve in this group");
        if (!st.ok()) {
            std::string why = "contribution of node " + (node < _step.node_names.size() ? _step.node_names[node] : std::to_string(node)) +
                              ": " + st.message();
            PMIXCPP_LOG_ERROR("%s: group %s: %s", _step.nspace.c_str(), k->second.c_str(), why.c_str());
            return fail(*k, PMIX_ERR_UNPACK_FAILURE, why);
        }
        parts.emplace_back(node, std::move(gc));
    }
    finish(*k, std::move(parts));
}

void group_service::finish(const key &k, std::vector<std::pair<uint32_t, wire::group_contribution>> &&parts) {
    auto it = _pending.find(k);
    if (it == _pending.end()) return;
    collective c = std::move(it->second);
    _pending.erase(it);
    _reservations.erase(c.instance);

    wire::group_reply reply;
    // The greatest candidate wins the context id.
    std::map<uint32_t, wire::group_rank_entry *> by_rank;
    for (auto &[node, gc] : parts) {
        reply.context_id = std::max(reply.context_id, gc.reservation);
        for (auto &e : gc.entries) by_rank[e.rank] = &e;
    }
    if (reply.context_id != 0 && _next_reservation <= (reply.context_id >> 32))
        _next_reservation = (reply.context_id >> 32) + 1;
    std::vector<uint32_t> joined;
    size_t failed = 0;
    for (uint32_t r : c.members) {
        wire::group_member m;
        memcpy(m.proc.nspace, _step.nspace.c_str(), std::min(_step.nspace.size(), size_t(PMIX_MAX_NSLEN)));
        m.proc.rank = r;
        auto e = by_rank.find(r);
        if (e == by_rank.end()) {
            m.state = static_cast<uint8_t>(wire::member_state::failed);  // its node said nothing of it
        } else {
            m.state = e->second->state;
            m.infos = std::move(e->second->infos);
        }
        if (m.state == static_cast<uint8_t>(wire::member_state::joined)) joined.push_back(r);
        if (m.state == static_cast<uint8_t>(wire::member_state::failed)) ++failed;
        reply.members.push_back(std::move(m));
    }
    PMIXCPP_LOG_DEBUG("%s: group %s %s complete over %zu nodes: %zu members joined, %zu failed, context id %llu",
                      _step.nspace.c_str(), c.name.c_str(), c.destruct ? "destruct" : "construct", c.nodes.size(),
                      joined.size(), failed, static_cast<unsigned long long>(reply.context_id));
    for (const auto &w : c.waiters) _ops.reply(w.conn, w.request_id, PMIX_SUCCESS, {}, &reply);

    if (c.destruct) {
        auto p = _psets.find(c.name);
        if (p != _psets.end()) {
            std::vector<pmix_proc_t> procs = members_of(c.name);
            _psets.erase(p);
            if (_ops.pset_changed) _ops.pset_changed(c.name, procs, false);
        }
    } else if (!joined.empty()) {
        _psets[c.name] = group_pset{joined, reply.context_id, true};
        if (_ops.pset_changed) _ops.pset_changed(c.name, members_of(c.name), true);
    }
}

void group_service::fail(const key &k, pmix_status_t status, const std::string &message) {
    auto it = _pending.find(k);
    if (it == _pending.end()) return;
    collective c = std::move(it->second);
    _pending.erase(it);
    _reservations.erase(c.instance);
    if (c.started && c.nodes.size() > 1 && _ops.cancel_collective) _ops.cancel_collective(c.instance);
    PMIXCPP_LOG_ERROR("%s: group %s %s failed: %s", _step.nspace.c_str(), c.name.c_str(),
                      c.destruct ? "destruct" : "construct", message.c_str());
    for (const auto &w : c.waiters) _ops.reply(w.conn, w.request_id, status, message, nullptr);
}

void group_service::collective_failed(uint64_t instance, pmix_status_t status, const std::string &message) {
    if (auto k = by_instance(instance)) fail(*k, status, message);
}

void group_service::rank_left(uint32_t rank) {
    std::vector<key> touched;
    for (auto &[k, c] : _pending) {
        if (c.started || c.accounted.count(rank)) continue;
        if (!std::binary_search(c.members.begin(), c.members.end(), rank) || _node_of[rank] != _step.node_id) continue;
        c.accounted[rank] = entry{wire::member_state::failed, {}};
        touched.push_back(k);
    }
    for (const auto &k : touched) advance(k);
}

void group_service::node_lost(uint32_t node) {
    std::vector<key> hit;
    for (const auto &[k, c] : _pending)
        if (std::binary_search(c.nodes.begin(), c.nodes.end(), node)) hit.push_back(k);
    std::string name = node < _step.node_names.size() ? _step.node_names[node] : std::to_string(node);
    for (const auto &k : hit) fail(k, PMIX_ERR_NODE_DOWN, "node " + name + " of the group is lost");
}

void group_service::expire(server_clock::time_point now) {
    std::vector<key> late;
    for (const auto &[k, c] : _pending)
        if (c.deadline <= now) late.push_back(k);
    for (const auto &k : late) {
        const collective &c = _pending.at(k);
        std::string missing;
        for (uint32_t r : c.local)
            if (!c.accounted.count(r)) missing += (missing.empty() ? "" : ",") + std::to_string(r);
        fail(k, PMIX_ERR_TIMEOUT,
             "timed out" + (missing.empty() ? std::string(" waiting for the other nodes' members")
                                            : " waiting for local members " + missing));
    }
}

std::optional<server_clock::time_point> group_service::next_deadline() const {
    std::optional<server_clock::time_point> next;
    for (const auto &[k, c] : _pending)
        if (!next || c.deadline < *next) next = c.deadline;
    return next;
}

}  // namespace pmixcpp::server
