#include "fabric_srun.h"

#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <map>

#include "../../agent/proto/agent_io.h"
#include "../service_ids.h"
#include "log.h"
#include "wire/messages.h"

namespace pmixcpp::fabric {

std::vector<uint32_t> node_groups(const std::vector<sched::switch_record> &records,
                                  const std::vector<std::string> &step_nodes) {
    if (records.empty() || step_nodes.empty()) return {};
    auto tree = sched::switch_tree::build(records);
    if (!tree.ok()) return {};
    std::map<std::string, uint32_t> ids;
    std::vector<uint32_t> out;
    uint32_t next = 0;
    for (const auto &n : step_nodes) {
        std::string leaf = tree->leaf_of(n);
        if (leaf.empty()) leaf = "\n" + n;  // not in the tree: its own group
        auto [it, fresh] = ids.emplace(leaf, next);
        if (fresh) ++next;
        out.push_back(it->second);
    }
    if (next < 2) return {};
    return out;
}

fabric_service::~fabric_service() {
    {
        std::lock_guard<std::mutex> g(_mutex);
        _stopping = true;
    }
    _changed.notify_all();
    if (_poller.joinable()) _poller.join();
    _requests.close();
}

Result<std::vector<sched::switch_record>> fabric_service::records(bool reload) {
    std::lock_guard<std::mutex> g(_mutex);
    if (!_loaded || reload) {
        PMIXCPP_ASSIGN_OR_RETURN(
            auto r,
            _load ? _load() : Result<std::vector<sched::switch_record>>(std::vector<sched::switch_record>{}));
        take_records(std::move(r));
    }
    return _records;
}

void fabric_service::take_records(std::vector<sched::switch_record> &&recs) {
    if (_loaded && recs == _records) return;
    _generation = _loaded ? _generation + 1 : 1;
    _records = std::move(recs);
    _loaded = true;
    _changed.notify_all();
}

session::agent_reply fabric_service::watch(uint64_t known) {
    session::agent_reply rep;
    if (_poll_sec == 0) {
        rep.status = PMIX_ERR_NOT_SUPPORTED;
        rep.message = "fabric updates are off (PMIxCppFabricPoll=0)";
        return rep;
    }
    if (auto r = records(false); !r.ok()) {
        rep.status = r.status().code() == PMIX_SUCCESS ? PMIX_ERROR : r.status().code();
        rep.message = r.status().with_context("switch topology").message();
        return rep;
    }
    std::unique_lock<std::mutex> g(_mutex);
    if (!_poller.joinable() && !_stopping) {
        try {
            _poller = std::thread([this] { poll_loop(); });
        } catch (const std::exception &e) {
            rep.status = PMIX_ERR_OUT_OF_RESOURCE;
            rep.message = std::string("cannot start the topology poller: ") + e.what();
            return rep;
        }
    }
    _changed.wait(g, [&] { return _stopping || _generation != known; });
    if (_generation == known) {
        rep.status = PMIX_ERR_NOT_AVAILABLE;
        rep.message = "srun ends";
        return rep;
    }
    wire::Writer w;
    w.put_u64(_generation);
    rep.body = w.data();
    return rep;
}

// Reload Slurm's switch records every _poll_sec (outside the lock: an RPC to slurmctld).
void fabric_service::poll_loop() {
    std::unique_lock<std::mutex> g(_mutex);
    while (!_stopping) {
        if (_changed.wait_for(g, std::chrono::seconds(_poll_sec), [this] { return _stopping; })) break;
        g.unlock();
        auto r = _load ? _load() : Result<std::vector<sched::switch_record>>(std::vector<sched::switch_record>{});
        g.lock();
        if (!r.ok()) {
            PMIXCPP_LOG_VERBOSE("fabric: switch topology not reloaded: %s", r.status().message().c_str());
            continue;
        }
        uint64_t before = _generation;
        take_records(std::move(r.value()));
        if (_generation != before)
            PMIXCPP_LOG_VERBOSE("fabric: Slurm's switch topology changed (generation %llu)",
                                static_cast<unsigned long long>(_generation));
    }
}

session::agent_reply fabric_service::handle(const fabric_request &r) {
    session::agent_reply rep;
    auto fail = [&rep](const Status &st) {
        rep.status = st.code() == PMIX_SUCCESS ? PMIX_ERROR : st.code();
        rep.message = st.message();
        return rep;
    };
    std::string plane = r.plane.empty() ? "default" : r.plane;
    if (plane != "default") return fail(Status(PMIX_ERR_NOT_FOUND, "no network plane '" + plane + "' (only 'default')"));
    auto recs = records(r.op == fabric_op::update);
    if (!recs.ok()) return fail(recs.status().with_context("switch topology"));
    if (recs->empty())
        return fail(Status(PMIX_ERR_NOT_AVAILABLE, "Slurm reports no switch topology (TopologyPlugin=topology/tree)"));
    auto tree = sched::switch_tree::build(recs.value());
    if (!tree.ok()) return fail(tree.status());
    sched::cost_matrix m = sched::build_cost_matrix(tree.value(), {});
    auto results = sched::matrix_to_results(m, plane);
    if (!results.ok()) return fail(results.status());
    wire::info_reply reply;
    reply.results = std::move(results.value());
    wire::Writer w;
    if (Status st = wire::encode(w, reply); !st.ok()) return fail(st);
    rep.body = w.data();
    return rep;
}

void fabric_service::submit(agent::responder answer, std::vector<uint8_t> body) { start(std::move(answer), std::move(body), false); }

void fabric_service::submit_watch(agent::responder answer, std::vector<uint8_t> body) { start(std::move(answer), std::move(body), true); }

void fabric_service::start(agent::responder answer, std::vector<uint8_t> body, bool is_watch) {
    Status started = _requests.start(
        [this, answer, body = std::move(body), is_watch] {
            fabric_request req;
            session::agent_reply rep;
            uint64_t known = 0;
            if (is_watch) {
                if (Status st = decode_watch(body, &known); !st.ok()) {
                    rep.status = PMIX_ERR_UNPACK_FAILURE;
                    rep.message = "malformed fabric watch: " + st.message();
                } else {
                    rep = watch(known);
                }
            } else if (Status st = decode_agent_request(body, &req); !st.ok()) {
                rep.status = PMIX_ERR_UNPACK_FAILURE;
                rep.message = "malformed fabric request: " + st.message();
            } else {
                rep = handle(req);
            }
            (void)answer.send(rep);
        },
        is_watch ? "fabric watches" : "fabric requests");
    if (!started.ok())
        (void)answer.send(session::agent_reply{started.code(), started.message(), {}});
}

Status fabric_service::register_in(agent::service_table &table) {
    PMIXCPP_RETURN_IF_ERROR(table.add(
        services::id_of(services::service::fabric),
        [this](agent::responder answer, std::vector<uint8_t> body) { submit(std::move(answer), std::move(body)); }));
    return table.add(services::id_of(services::service::fabric_watch),
                     [this](agent::responder answer, std::vector<uint8_t> body) { submit_watch(std::move(answer), std::move(body)); });
}

}  // namespace pmixcpp::fabric
