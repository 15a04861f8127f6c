// spawn_service: PMIx_Spawn through srun's spawn launcher (plugin/services/spawn/), a grow-spawn
// through srun's allocation bridge, the watch of a spawned step's end.
#include "dyn_spawn.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>

#include "groups.h"
#include "hostlist.h"
#include "log.h"
#include "../services/alloc/alloc_codec.h"
#include "value.h"
#include "wire/codec.h"
#include "wire/messages.h"

namespace pmixcpp::server {

spawn_service::spawn_service(const step_info &step, spawn_ops ops) : _step(step), _ops(std::move(ops)) {}

void spawn_service::on_spawn(uint64_t conn, uint32_t rank, uint32_t request_id, std::span<const uint8_t> payload) {
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

void spawn_service::grow_then_spawn(uint64_t conn, uint32_t rank, uint32_t request_id, spawn::agent_spawn_request &&req,
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
    _ops.agent(services::service::alloc, std::move(body.value()), timeout_sec > 0 ? (timeout_sec + 30) * 1000 : kWatchTimeoutMs,
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

void spawn_service::fail_spawn(uint64_t conn, uint32_t rank, uint32_t request_id, pmix_status_t status,
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
    _ops.agent(services::service::alloc, std::move(body.value()), 60 * 1000,
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

void spawn_service::start_spawn(uint64_t conn, uint32_t rank, uint32_t request_id, spawn::agent_spawn_request &&req,
                              uint32_t child_size, const std::string &grown) {
    auto body = spawn::encode_request(req);
    if (!body.ok()) {
        fail_spawn(conn, rank, request_id, body.status().code(), body.status().message(), grown);
        return;
    }
    PMIXCPP_LOG_VERBOSE("%s: rank %u spawns %zu app(s)", _step.nspace.c_str(), rank, req.request.apps.size());
    _ops.agent(services::service::spawn, std::move(body.value()), (spawn::kStepStartTimeoutSec + 30) * 1000,
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
void spawn_service::watch_child(const std::string &child, uint32_t spawner) {
    if (!_ops.agent || !_ops.child_ended) return;
    auto body = spawn::encode_watch(child);
    if (!body.ok()) return;
    _ops.agent(services::service::spawn_watch, std::move(body.value()), kWatchTimeoutMs,
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
