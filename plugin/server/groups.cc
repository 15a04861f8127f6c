#include "groups.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "../coll/coll_message.h"
#include "../services/spawn/mpmd.h"
#include "../services/spawn/spawn_codec.h"
#include "log.h"

namespace pmixcpp::server {

namespace {

// Bounds: what one node's clients may keep in flight and defined.
constexpr size_t kMaxPendingGroups = 4096;
constexpr size_t kMaxGroupSets = 65536;

// PMIX_GROUP_BOOTSTRAP (OpenPMIx 5; pmix_common.h has it).
constexpr const char *kGroupBootstrap = PMIX_GROUP_BOOTSTRAP;



// Bootstraps one node coordinates at once (node 0, for the whole step).
constexpr size_t kMaxBootstraps = 4096;

// The ranks of a PMIX_GROUP_ADD_MEMBERS array (procs of this step; the wildcard is every rank).
Status add_members_of(const pmix_info_t &info, const step_info &step, std::vector<uint32_t> *out) {
    if (info.value.type != PMIX_DATA_ARRAY || info.value.data.darray == nullptr ||
        info.value.data.darray->type != PMIX_PROC || (info.value.data.darray->size > 0 && info.value.data.darray->array == nullptr))
        return Status(PMIX_ERR_BAD_PARAM, "PMIX_GROUP_ADD_MEMBERS must be an array of procs");
    const auto *procs = static_cast<const pmix_proc_t *>(info.value.data.darray->array);
    for (size_t i = 0; i < info.value.data.darray->size; ++i) {
        const pmix_proc_t &p = procs[i];
        if (p.nspace[0] != '\0' && strncmp(p.nspace, step.nspace.c_str(), sizeof(p.nspace)) != 0)
            return Status(PMIX_ERR_NOT_SUPPORTED, "a bootstrap with members of other steps");
        if (p.rank == PMIX_RANK_WILDCARD) {
            for (uint32_t r = 0; r < step.ntasks; ++r) out->push_back(r);
        } else if (p.rank >= step.ntasks) {
            return Status(PMIX_ERR_BAD_PARAM, "member rank " + std::to_string(p.rank) + " is not in the step");
        } else {
            out->push_back(p.rank);
        }
    }
    return Status::success();
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
    if (sizes.size() >= 2 && total == _step.ntasks) {
        uint32_t first = 0;
        for (size_t a = 0; a < sizes.size(); ++a) {
            group_pset set;
            for (uint32_t k = 0; k < sizes[a]; ++k) set.ranks.push_back(first + k);
            first += sizes[a];
            _psets[_step.nspace + ".app" + std::to_string(a)] = std::move(set);
        }
        return;
    }
    // The apps of the step itself: heterogeneous components, --multi-prog lines.
    if (_step.app_of_rank.size() != _step.ntasks) return;
    std::map<uint32_t, std::vector<uint32_t>> by_app;
    for (uint32_t r = 0; r < _step.ntasks; ++r) by_app[_step.app_of_rank[r]].push_back(r);
    if (by_app.size() < 2) return;  // one app: the namespace is the set
    for (auto &[app, ranks] : by_app) {
        group_pset set;
        set.ranks = std::move(ranks);
        _psets[_step.nspace + ".app" + std::to_string(app)] = std::move(set);
    }
}

std::string spawned_pset_name(const std::string &child_nspace) { return "pmixcpp://spawned/" + child_nspace; }
std::string union_pset_name(const std::string &child_nspace) { return "pmixcpp://union/" + child_nspace; }

std::vector<pmix_proc_t> spawn_pset_members(const std::string &parent_nspace, uint32_t parent_size,
                                            const std::string &child_nspace, uint32_t child_size, bool with_parent,
                                            const std::vector<spawn_peer> &peers) {
    std::vector<pmix_proc_t> out;
    auto add = [&out](const std::string &ns, uint32_t n) {
        for (uint32_t r = 0; r < n; ++r) {
            pmix_proc_t p{};
            memcpy(p.nspace, ns.c_str(), std::min(ns.size(), size_t(PMIX_MAX_NSLEN)));
            p.rank = r;
            out.push_back(p);
        }
    };
    if (with_parent) {
        add(parent_nspace, parent_size);
        for (const auto &p : peers) add(p.nspace, p.size);
    }
    add(child_nspace, child_size);
    return out;
}

std::optional<std::vector<spawn_peer>> parse_spawn_peers(const std::string &value, const std::string &job_prefix,
                                                         const std::string &parent, const std::string &child) {
    std::vector<spawn_peer> out;
    if (value.empty()) return out;
    uint64_t total = 0;
    size_t at = 0;
    while (at <= value.size()) {
        size_t end = value.find(',', at);
        if (end == std::string::npos) end = value.size();
        const std::string item = value.substr(at, end - at);
        const size_t colon = item.rfind(':');
        if (colon == std::string::npos || out.size() >= kMaxSpawnPeers) return std::nullopt;
        spawn_peer p;
        p.nspace = item.substr(0, colon);
        const std::string n = item.substr(colon + 1);
        if (n.empty() || n.size() > 9 || n.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
        const unsigned long size = strtoul(n.c_str(), nullptr, 10);
        // "slurm.<job>.<step>": this job's, a step number of digits
        const std::string step = p.nspace.size() > job_prefix.size() ? p.nspace.substr(job_prefix.size()) : "";
        if (p.nspace.rfind(job_prefix, 0) != 0 || step.empty() || step.size() > 10 ||
            step.find_first_not_of("0123456789") != std::string::npos || p.nspace.size() > PMIX_MAX_NSLEN ||
            p.nspace == parent || p.nspace == child || size == 0 || size > kMaxSpawnPsetStep)
            return std::nullopt;
        for (const auto &q : out)
            if (q.nspace == p.nspace) return std::nullopt;
        total += size;
        if (total > kMaxSpawnPsetStep) return std::nullopt;
        p.size = static_cast<uint32_t>(size);
        out.push_back(std::move(p));
        at = end + 1;
    }
    return out;
}

std::string format_spawn_peers(const std::vector<spawn_peer> &peers) {
    std::string out;
    for (const auto &p : peers) out += (out.empty() ? "" : ",") + p.nspace + ":" + std::to_string(p.size);
    return out;
}

bool group_service::define_job_pset(const std::string &name, std::vector<pmix_proc_t> members) {
    if (_job_psets.count(name)) return false;
    if (_job_psets.size() >= kMaxGroupSets) {
        PMIXCPP_LOG_WARNING("%s: process set %s not defined: %zu sets already", _step.nspace.c_str(), name.c_str(),
                            _job_psets.size());
        return false;
    }
    _job_psets.emplace(name, std::move(members));
    return true;
}

void group_service::define_spawned_step_psets() {
    auto env = [this](const char *key) -> std::optional<std::string> {
        const std::string prefix = std::string(key) + "=";
        std::optional<std::string> value;
        for (const auto &e : _step.job_env)
            if (e.rfind(prefix, 0) == 0) value = e.substr(prefix.size());
        return value;
    };
    auto parent = env(spawn::kParentEnv);
    auto size = env(spawn::kParentSizeEnv);
    auto peers_value = env(spawn::kPeersEnv);
    if (!parent || !size) return;
    // The environment is the user's: "<nspace>:<rank>" of a step of this job, a size in
    // 1..kMaxSpawnPsetStep.
    const std::string job_prefix = "slurm." + std::to_string(_step.job_id) + ".";
    auto colon = parent->rfind(':');
    std::string pns = colon == std::string::npos ? std::string() : parent->substr(0, colon);
    const bool digits = !size->empty() && size->size() <= 9 && size->find_first_not_of("0123456789") == std::string::npos;
    const unsigned long n = digits ? strtoul(size->c_str(), nullptr, 10) : 0;
    if (pns.rfind(job_prefix, 0) != 0 || pns.size() > PMIX_MAX_NSLEN || pns == _step.nspace || n == 0 ||
        n > kMaxSpawnPsetStep || _step.ntasks > kMaxSpawnPsetStep) {
        PMIXCPP_LOG_WARNING("%s: no process sets of the spawn: bad %s/%s (%s, %s)", _step.nspace.c_str(),
                            spawn::kParentEnv, spawn::kParentSizeEnv, parent->c_str(), size->c_str());
        return;
    }
    auto peers = parse_spawn_peers(peers_value.value_or(""), job_prefix, pns, _step.nspace);
    if (!peers) {
        PMIXCPP_LOG_WARNING("%s: no process sets of the spawn: bad %s (%s)", _step.nspace.c_str(), spawn::kPeersEnv,
                            peers_value->c_str());
        return;
    }
    define_job_pset(spawned_pset_name(_step.nspace), spawn_pset_members(pns, 0, _step.nspace, _step.ntasks, false));
    define_job_pset(union_pset_name(_step.nspace),
                    spawn_pset_members(pns, static_cast<uint32_t>(n), _step.nspace, _step.ntasks, true, *peers));
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
    // Bootstrap: a leader gives PMIX_GROUP_BOOTSTRAP (the number of leaders) or names further
    // members with PMIX_GROUP_ADD_MEMBERS (then its procs are the leaders); a member it named
    // calls construct with no procs.
    const pmix_info_t *boot = find_info(req.directives, kGroupBootstrap);
    const pmix_info_t *add = find_info(req.directives, PMIX_GROUP_ADD_MEMBERS);
    if (op == wire::group_op::construct && (boot != nullptr || add != nullptr || req.procs.empty())) {
        std::vector<uint32_t> named;
        uint32_t leaders = 0;
        if (!req.procs.empty()) {
            std::set<uint32_t> listed;
            for (const auto &p : req.procs) {
                if (strncmp(p.nspace, _step.nspace.c_str(), sizeof(p.nspace)) != 0)
                    return refuse(PMIX_ERR_NOT_SUPPORTED, "a bootstrap with members of other steps");
                if (p.rank == PMIX_RANK_WILDCARD) return refuse(PMIX_ERR_BAD_PARAM, "a bootstrap leader names single procs");
                if (p.rank >= _step.ntasks)
                    return refuse(PMIX_ERR_BAD_PARAM, "member rank " + std::to_string(p.rank) + " is not in the step");
                listed.insert(p.rank);
            }
            if (!listed.count(rank)) return refuse(PMIX_ERR_BAD_PARAM, "the caller is not among the group's members");
            if (boot != nullptr) {
                auto n = value_to_number<uint32_t>(boot->value);
                if (!n.ok() || n.value() == 0 || n.value() > _step.ntasks)
                    return refuse(PMIX_ERR_BAD_PARAM, "PMIX_GROUP_BOOTSTRAP must be a number of leaders from 1 to the step's size");
                leaders = n.value();
            } else {
                leaders = static_cast<uint32_t>(listed.size());
            }
            named.assign(listed.begin(), listed.end());
            if (add != nullptr) {
                Status st = add_members_of(*add, _step, &named);
                if (!st.ok()) return refuse(st.code(), st.message());
            }
            std::sort(named.begin(), named.end());
            named.erase(std::unique(named.begin(), named.end()), named.end());
        }
        return bootstrap_request(conn, rank, request_id, std::move(req), leaders, std::move(named));
    }
    for (const auto &p : req.procs)
        if (strncmp(p.nspace, _step.nspace.c_str(), sizeof(p.nspace)) != 0) {
            if (!_ops.cross_step)
                return refuse(PMIX_ERR_NOT_SUPPORTED, "members of other steps, and no srun agent to meet them");
            uint64_t candidate = info_flag(req.directives, PMIX_GROUP_ASSIGN_CONTEXT_ID) ? reserve() : 0;
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
    // A name is one group: a construct cannot take that of a group this node's ranks are in with
    // other members (nor a set the step defines), a destruct names members of the group (all of
    // them, or fewer once some left it); else a rank could replace or delete the process set of
    // a group it is not in.
    if (auto ps = _psets.find(req.name); ps != _psets.end()) {
        const std::vector<uint32_t> &in = ps->second.ranks;
        if (!ps->second.group)
            return refuse(k.first ? PMIX_ERR_BAD_PARAM : PMIX_ERR_EXISTS, "a process set the step defines has this name");
        if (!k.first && in != members)
            return refuse(PMIX_ERR_EXISTS, "a group of other members has this name (destruct it first)");
        if (k.first && !std::includes(in.begin(), in.end(), members.begin(), members.end()))
            return refuse(PMIX_ERR_BAD_PARAM, "ranks that are not members of the group");
    }
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
    if (const pmix_info_t *t = find_info(req.directives, PMIX_TIMEOUT)) {
        auto secs = value_to_number<int64_t>(t->value);
        if (secs.ok() && secs.value() > 0) {
            auto d = server_clock::now() + std::chrono::seconds(secs.value());
            if (d < c.deadline) c.deadline = d;
        }
    }
    if (info_flag(req.directives, PMIX_GROUP_ASSIGN_CONTEXT_ID)) c.assign_cid = true;
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

void group_service::bootstrap_request(uint64_t conn, uint32_t rank, uint32_t request_id, wire::group_request &&req,
                                      uint32_t leaders, std::vector<uint32_t> &&named) {
    auto it = _boot_local.find(req.name);
    if (it == _boot_local.end()) {
        if (_boot_local.size() >= kMaxPendingGroups) {
            _ops.reply(conn, request_id, PMIX_ERR_OUT_OF_RESOURCE, "too many group bootstraps in flight on this node", nullptr);
            return;
        }
        boot_local b;
        // node 0 answers by its own deadline; this one only covers a node 0 that cannot
        b.deadline = server_clock::now() + std::chrono::seconds(_default_timeout_sec + 5);
        it = _boot_local.emplace(req.name, std::move(b)).first;
    }
    for (const auto &w : it->second.waiters)
        if (w.rank == rank) {
            _ops.reply(conn, request_id, PMIX_ERR_BAD_PARAM, "this rank already entered the group's bootstrap", nullptr);
            return;
        }
    if (const pmix_info_t *t = find_info(req.directives, PMIX_TIMEOUT)) {
        auto secs = value_to_number<int64_t>(t->value);
        if (secs.ok() && secs.value() > 0)
            it->second.deadline = std::min(it->second.deadline, server_clock::now() + std::chrono::seconds(secs.value()));
    }
    wire::group_bootstrap_entry e;
    e.name = req.name;
    e.rank = rank;
    e.leaders = leaders;
    for (uint32_t r : named)
        if (r != rank) e.add.push_back(r);
    const std::string name = req.name;
    PMIXCPP_LOG_DEBUG("%s: rank %u entered the bootstrap of group %s as %s", _step.nspace.c_str(), rank, name.c_str(),
                      leaders ? "a leader" : "a member");
    it->second.waiters.push_back({conn, request_id, rank, std::move(req)});
    if (_step.node_id == 0) return coord_entry(std::move(e));
    wire::Writer w;
    Status st = wire::encode(w, e);
    if (st.ok())
        st = _ops.send_node ? _ops.send_node(0, node_channel::group_bootstrap, w.take())
                            : Status(PMIX_ERR_NOT_SUPPORTED, "the node transport is not running");
    if (!st.ok()) boot_fail_local(name, st.code() == PMIX_SUCCESS ? PMIX_ERROR : st.code(), "bootstrap: " + st.message());
}

Status group_service::add_channels(node_channels &table) {
    PMIXCPP_RETURN_IF_ERROR(table.add(node_channel::group_bootstrap, "group bootstrap",
                                      [this](uint32_t from, std::span<const uint8_t> body) { on_bootstrap_entry(from, body); }));
    return table.add(node_channel::group_bootstrap_result, "group bootstrap result",
                     [this](uint32_t from, std::span<const uint8_t> body) { on_bootstrap_result(from, body); });
}

void group_service::on_bootstrap_entry(uint32_t from_node, std::span<const uint8_t> body) {
    wire::group_bootstrap_entry e;
    Status st = wire::decode_group_bootstrap_entry(body, _step.ntasks, &e);
    if (st.ok() && _step.node_id != 0) st = Status(PMIX_ERR_BAD_PARAM, "this node does not coordinate bootstraps");
    if (st.ok() && _node_of[e.rank] != from_node)
        st = Status(PMIX_ERR_BAD_PARAM, "an entry for rank " + std::to_string(e.rank) + ", which that node does not serve");
    if (!st.ok()) {
        PMIXCPP_LOG_ERROR("%s: group bootstrap entry from node %u dropped: %s", _step.nspace.c_str(), from_node,
                          st.message().c_str());
        return;
    }
    coord_entry(std::move(e));
}

void group_service::coord_entry(wire::group_bootstrap_entry &&e) {
    auto it = _boot_coord.find(e.name);
    if (it == _boot_coord.end()) {
        if (_boot_coord.size() >= kMaxBootstraps) {
            // Nothing is recorded: the entering node's deadline ends its member's wait.
            PMIXCPP_LOG_ERROR("%s: group bootstrap %s of rank %u refused: %zu bootstraps in flight", _step.nspace.c_str(),
                              e.name.c_str(), e.rank, _boot_coord.size());
            return;
        }
        boot_coord c;
        c.deadline = server_clock::now() + std::chrono::seconds(_default_timeout_sec);
        it = _boot_coord.emplace(e.name, std::move(c)).first;
    }
    boot_coord &c = it->second;
    c.entered.insert(e.rank);
    if (e.leaders != 0) {
        if (c.leaders_expected != 0 && c.leaders_expected != e.leaders)
            return coord_finish(e.name, PMIX_ERR_BAD_PARAM,
                                "the leaders disagree on the number of leaders (" + std::to_string(c.leaders_expected) +
                                    " and " + std::to_string(e.leaders) + ")");
        c.leaders_expected = e.leaders;
        c.leaders.insert(e.rank);
        c.named.insert(e.rank);
        c.named.insert(e.add.begin(), e.add.end());
        if (c.leaders.size() > c.leaders_expected)
            return coord_finish(e.name, PMIX_ERR_BAD_PARAM,
                                "more leaders than the " + std::to_string(c.leaders_expected) + " announced");
    }
    if (c.leaders_expected == 0 || c.leaders.size() < c.leaders_expected) return;
    for (uint32_t r : c.named)
        if (!c.entered.count(r)) return;
    coord_finish(e.name, PMIX_SUCCESS, {});
}

void group_service::coord_finish(const std::string &name, pmix_status_t status, const std::string &message) {
    auto it = _boot_coord.find(name);
    if (it == _boot_coord.end()) return;
    boot_coord c = std::move(it->second);
    _boot_coord.erase(it);
    wire::group_bootstrap_result r;
    r.name = name;
    r.status = status;
    r.message = message;
    if (status == PMIX_SUCCESS) r.members.assign(c.entered.begin(), c.entered.end());
    PMIXCPP_LOG_DEBUG("%s: group bootstrap %s resolved: %s, %zu members", _step.nspace.c_str(), name.c_str(),
                      status == PMIX_SUCCESS ? "ok" : message.c_str(), r.members.size());
    std::set<uint32_t> nodes;
    for (uint32_t rank : c.entered) nodes.insert(_node_of[rank]);
    wire::Writer w;
    Status st = wire::encode(w, r);
    for (uint32_t n : nodes) {
        if (n == _step.node_id) continue;
        Status sent = st.ok() ? (_ops.send_node ? _ops.send_node(n, node_channel::group_bootstrap_result, w.data())
                                                : Status(PMIX_ERR_NOT_SUPPORTED, "no node transport"))
                              : st;
        if (!sent.ok())
            PMIXCPP_LOG_ERROR("%s: group bootstrap %s: cannot answer node %u: %s", _step.nspace.c_str(), name.c_str(), n,
                              sent.message().c_str());
    }
    if (nodes.count(_step.node_id)) bootstrap_result(std::move(r));
}

void group_service::on_bootstrap_result(uint32_t from_node, std::span<const uint8_t> body) {
    wire::group_bootstrap_result r;
    Status st = wire::decode_group_bootstrap_result(body, _step.ntasks, &r);
    if (st.ok() && from_node != 0) st = Status(PMIX_ERR_BAD_PARAM, "bootstrap results come from node 0 only");
    if (!st.ok()) {
        PMIXCPP_LOG_ERROR("%s: group bootstrap result from node %u dropped: %s", _step.nspace.c_str(), from_node,
                          st.message().c_str());
        return;
    }
    bootstrap_result(std::move(r));
}

void group_service::bootstrap_result(wire::group_bootstrap_result &&r) {
    auto it = _boot_local.find(r.name);
    if (it == _boot_local.end()) return;  // timed out here meanwhile
    if (r.status != PMIX_SUCCESS) return boot_fail_local(r.name, r.status, r.message);
    boot_local b = std::move(it->second);
    _boot_local.erase(it);
    // Every waiter must be a member: node 0 counted exactly the entries it got.
    std::vector<pmix_proc_t> procs;
    for (uint32_t m : r.members) {
        pmix_proc_t p{};
        memcpy(p.nspace, _step.nspace.c_str(), std::min(_step.nspace.size(), size_t(PMIX_MAX_NSLEN)));
        p.rank = m;
        procs.push_back(p);
    }
    for (auto &w : b.waiters) {
        wire::group_request req = std::move(w.req);
        req.procs = procs;
        InfoArray dirs;
        std::vector<pmix_info_t> keep;
        for (size_t i = 0; i < req.directives.size(); ++i) {
            const char *k = req.directives[i].key;
            if (strncmp(k, kGroupBootstrap, PMIX_MAX_KEYLEN) == 0 || strncmp(k, PMIX_GROUP_ADD_MEMBERS, PMIX_MAX_KEYLEN) == 0)
                continue;
            keep.push_back(req.directives[i]);
        }
        Status st = info_array_copy(keep.data(), keep.size(), &dirs);
        if (!st.ok()) {
            _ops.reply(w.conn, w.request_id, st.code(), "group directives: " + st.message(), nullptr);
            continue;
        }
        req.directives = std::move(dirs);
        on_request(w.conn, w.rank, w.request_id, std::move(req));
    }
}

void group_service::boot_fail_local(const std::string &name, pmix_status_t status, const std::string &message) {
    auto it = _boot_local.find(name);
    if (it == _boot_local.end()) return;
    boot_local b = std::move(it->second);
    _boot_local.erase(it);
    PMIXCPP_LOG_ERROR("%s: group %s bootstrap failed: %s", _step.nspace.c_str(), name.c_str(), message.c_str());
    for (const auto &w : b.waiters) _ops.reply(w.conn, w.request_id, status, message, nullptr);
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

namespace {

// The keys of the entries of `m` whose deadline has passed.
template <typename Map>
std::vector<typename Map::key_type> expired_in(const Map &m, server_clock::time_point now) {
    std::vector<typename Map::key_type> out;
    for (const auto &[k, v] : m)
        if (v.deadline <= now) out.push_back(k);
    return out;
}

// The earliest deadline of `m`'s entries and `next`.
template <typename Map>
void earliest_in(const Map &m, std::optional<server_clock::time_point> *next) {
    for (const auto &[k, v] : m)
        if (!*next || v.deadline < **next) *next = v.deadline;
}

// "r1,r2,..." of the ranks of `ranks` that `present` does not hold.
template <typename Ranks, typename Present>
std::string missing_ranks(const Ranks &ranks, const Present &present) {
    std::string out;
    for (uint32_t r : ranks)
        if (!present.count(r)) out += (out.empty() ? "" : ",") + std::to_string(r);
    return out;
}

}  // namespace

void group_service::expire(server_clock::time_point now) {
    for (const auto &name : expired_in(_boot_coord, now)) {
        const boot_coord &c = _boot_coord.at(name);
        std::string missing = missing_ranks(c.named, c.entered);
        std::string why = "bootstrap timed out: " + std::to_string(c.leaders.size()) + " of " +
                          (c.leaders_expected ? std::to_string(c.leaders_expected) : std::string("?")) +
                          " leaders entered";
        if (!missing.empty()) why += ", members " + missing + " did not";
        coord_finish(name, PMIX_ERR_TIMEOUT, why);
    }
    for (const auto &name : expired_in(_boot_local, now))
        boot_fail_local(name, PMIX_ERR_TIMEOUT,
                        "bootstrap timed out before the leaders and every member they name had entered");
    for (const auto &k : expired_in(_pending, now)) {
        const collective &c = _pending.at(k);
        std::string missing = missing_ranks(c.local, c.accounted);
        fail(k, PMIX_ERR_TIMEOUT,
             "timed out" + (missing.empty() ? std::string(" waiting for the other nodes' members")
                                            : " waiting for local members " + missing));
    }
}

std::optional<server_clock::time_point> group_service::next_deadline() const {
    std::optional<server_clock::time_point> next;
    earliest_in(_pending, &next);
    earliest_in(_boot_coord, &next);
    earliest_in(_boot_local, &next);
    return next;
}

}  // namespace pmixcpp::server
