// The ops the server's services and engines are built with (make_*_ops): how each replies to a
// client, reaches other nodes, srun's agent and the store; and what the server does for them:
// a spawn's process sets and their events, the process table's local rows, a lost node. Part of
// the server's class (server_impl.h).
#include "server_impl.h"

namespace pmixcpp::server {

// A reply to a local client: the header, then `body` as it is (the dynamic services' replies).
server_impl::raw_reply_fn server_impl::raw_reply() {
    return [this](uint64_t conn, uint32_t request_id, pmix_status_t status, const std::string &message,
                  std::span<const uint8_t> body) {
        std::vector<uint8_t> bytes(body.begin(), body.end());
        send_reply(conn, request_id, status, message, [bytes](wire::Writer &w) {
            w.put_raw(bytes.data(), bytes.size());
            return Status::success();
        });
    };
}

// A call of srun's side for service `s`; its answer comes on another thread: back to the loop
// with it. Empty without srun's agent.
server_impl::agent_call_fn server_impl::agent_call(services::service s) {
    if (!_opts.agent) return nullptr;
    return [this, s](std::vector<uint8_t> body, int timeout_ms, agent_done_fn done) {
        _opts.agent->call(s, std::move(body), timeout_ms,
                          [this, done](int status, const std::string &message, std::vector<uint8_t> reply) {
                              auto held = std::make_shared<std::vector<uint8_t>>(std::move(reply));
                              post([done, status, message, held] { done(status, message, std::move(*held)); });
                          });
    };
}

// A message to another node's server on one of the dynamic services' channels.
server_impl::node_send_fn server_impl::node_sender() {
    return [this](uint32_t node, node_channel channel, std::span<const uint8_t> body) {
        if (_net) _net->send(node, id_of(channel), body);
        else PMIXCPP_LOG_ERROR("%s: no node transport for a message to node %u", _step.nspace.c_str(), node);
    };
}

publish_ops server_impl::make_publish_ops() {
    publish_ops ops;
    ops.reply = raw_reply();
    ops.send_node = node_sender();
    ops.job_store = agent_call(services::service::session);
    return ops;
}

spawn_ops server_impl::make_spawn_ops() {
    spawn_ops ops;
    ops.reply = raw_reply();
    if (_opts.agent)
        ops.agent = [this](services::service s, std::vector<uint8_t> body, int timeout_ms, spawn_ops::done_fn done) {
            agent_call(s)(std::move(body), timeout_ms, std::move(done));
        };
    // A spawn of one app succeeded: its two process sets, here and on the step's other nodes.
    ops.spawned = [this](const std::string &child, uint32_t child_size) { spawn_psets(child, child_size, true); };
    ops.spawn_peers = [this] { return format_spawn_peers(spawn_peers_now("")); };
    // A spawned step ended: PMIX_EVENT_JOB_END to the rank that spawned it (custom range), with
    // the child namespace as affected proc; non-default, so a default handler (OpenMPI's aborts
    // on events) does not take it.
    ops.child_ended = [this](const std::string &child, uint32_t spawner, int exit_code) {
        wire::event_notification ev;
        ev.status = PMIX_EVENT_JOB_END;
        strncpy(ev.source.nspace, child.c_str(), PMIX_MAX_NSLEN);
        ev.source.rank = PMIX_RANK_UNDEF;
        ev.range = PMIX_RANGE_CUSTOM;
        pmix_proc_t to{}, affected{};
        strncpy(to.nspace, _step.nspace.c_str(), PMIX_MAX_NSLEN);
        to.rank = spawner;
        strncpy(affected.nspace, child.c_str(), PMIX_MAX_NSLEN);
        affected.rank = PMIX_RANK_WILDCARD;
        pmix_status_t term = exit_code == 0 ? PMIX_SUCCESS : PMIX_ERR_JOB_TERMINATED;
        bool yes = true;
        std::string text = "spawned step " + child + " ended, srun exit status " + std::to_string(exit_code);
        const char *ctext = text.c_str();
        auto *infos = static_cast<pmix_info_t *>(calloc(6, sizeof(pmix_info_t)));
        if (infos == nullptr) return;
        InfoArray arr(infos, 6);
        auto load = [&](size_t i, const char *key, const void *v, pmix_data_type_t t) {
            strncpy(infos[i].key, key, PMIX_MAX_KEYLEN);
            (void)value_load(&infos[i].value, v, t);
        };
        load(0, PMIX_EVENT_CUSTOM_RANGE, &to, PMIX_PROC);
        load(1, PMIX_EVENT_AFFECTED_PROC, &affected, PMIX_PROC);
        load(2, PMIX_JOB_TERM_STATUS, &term, PMIX_STATUS);
        load(3, PMIX_EXIT_CODE, &exit_code, PMIX_INT);
        load(4, PMIX_EVENT_NON_DEFAULT, &yes, PMIX_BOOL);
        load(5, PMIX_EVENT_TEXT_MESSAGE, ctext, PMIX_STRING);
        ev.infos = std::move(arr);
        wire::Writer w;
        if (!wire::encode(w, ev).ok()) return;
        if (Status st = _events->from_remote(w.data()); !st.ok())
            PMIXCPP_LOG_ERROR("%s: job-end event of %s: %s", _step.nspace.c_str(), child.c_str(), st.message().c_str());
        // the spawn's process sets end with the children (PMIX_PROCESS_SET_DELETE)
        spawn_psets(child, 0, true);
    };
    ops.grow_timeout_sec = _opts.alloc_timeout_sec;
    return ops;
}

job_control_service_ops server_impl::make_job_control_service_ops() {
    job_control_service_ops ops;
    ops.reply = raw_reply();
    ops.send_node = node_sender();
    ops.xstep = agent_call(services::service::xstep);
    ops.checkpoint_local = [this](const std::vector<uint32_t> &ranks) {
        _jctrl->checkpoint(ranks, "checkpoint requested");
    };
    ops.process_of = [this](uint32_t rank) -> process_handle {
        if (rank >= _rank_conn.size()) return nullptr;
        connection *c = find(_rank_conn[rank]);
        return c ? c->proc : nullptr;
    };
    return ops;
}

connect_ops server_impl::make_connect_ops() {
    connect_ops ops;
    ops.reply = raw_reply();
    if (_opts.agent) {
        ops.rendezvous = agent_call(services::service::connect);
        ops.ns_size = namespace_size_lookup(_step.nspace, agent_call(services::service::session));
        ops.xstep = agent_call(services::service::xstep);
    }
    ops.data_of = [this](uint32_t rank, relation rel) { return _kvs.visible_data(rank, rel); };
    return ops;
}

group_ops server_impl::make_group_ops() {
    group_ops o;
    o.reply = [this](uint64_t conn, uint32_t id, pmix_status_t st, const std::string &msg, const wire::group_reply *r) {
        if (st != PMIX_SUCCESS || r == nullptr) return _sink.reply(conn, id, st, msg);
        _sink.reply(conn, id, st, msg, [r](wire::Writer &w) { return wire::encode(w, *r); });
    };
    o.start_collective = [this](uint64_t instance, uint64_t signature, std::vector<uint32_t> nodes,
                                std::vector<uint8_t> blob) -> Status {
        if (!_net || !_coll)
            return transport_not_running();
        for (uint32_t n : nodes)
            if (node_is_lost(n))
                return Status(PMIX_ERR_NODE_DOWN, "node " + _step.node_names.at(n) + " of the group is lost");
        _coll->start(instance, signature, std::move(nodes), std::move(blob), true);
        return Status::success();
    };
    o.cross_step = [this](uint64_t conn, uint32_t rank, uint32_t id, wire::group_request &&req, uint64_t candidate) {
        _dyn->on_group(conn, rank, id, std::move(req), candidate);
    };
    o.cancel_collective = [this](uint64_t instance) {
        if (_coll) _coll->cancel(instance);
    };
    o.send_node = [this](uint32_t node, node_channel chan, std::vector<uint8_t> body) -> Status {
        if (!_net)
            return transport_not_running();
        if (node_is_lost(node))
            return Status(PMIX_ERR_NODE_DOWN, "node " + _step.node_names.at(node) + " is lost");
        _net->send(node, id_of(chan), body);
        return Status::success();
    };
    o.rank_gone = [this](uint32_t rank) {
        return rank < _rank_state.size() &&
               (_rank_state[rank] == rank_state::died || _rank_state[rank] == rank_state::finalized);
    };
    o.pset_changed = [this](const std::string &name, const std::vector<pmix_proc_t> &members, bool defined) {
        // Raised once per node that serves members, for its members on that node.
        uint32_t from = UINT32_MAX;
        for (const auto &p : members)
            if (p.rank < _node_of.size() && _node_of[p.rank] == _step.node_id) {
                from = p.rank;
                break;
            }
        if (from == UINT32_MAX) return;
        raise_pset_event(name, members, defined, from, true);
    };
    return o;
}

// A spawn of ours: define its two sets (groups.h; child_size 0: delete them, the children have
// ended) and tell this node's processes (PMIX_PROCESS_SET_DEFINE / _DELETE, range local: the
// parent step's processes here are members of the union and the requesters of the children).
// `broadcast`: the spawner's node, which tells the step's other nodes first.
void server_impl::spawn_psets(const std::string &child, uint32_t child_size, bool broadcast) {
    if (broadcast && _net) {
        wire::Writer w;
        if (wire::encode(w, wire::spawn_psets_message{child, child_size}).ok())
            for (uint32_t n = 0; n < _step.node_names.size(); ++n)
                if (n != _step.node_id && !node_is_lost(n)) send_node(n, node_channel::spawn_psets, w.data());
    }
    const bool define = child_size > 0;
    // The union's peers: the step's other spawned steps still running (groups.h).
    std::vector<spawn_peer> peers;
    if (define) {
        if (_spawn_peers_of.count(child)) return;  // already defined
        peers = spawn_peers_now(child);
        _spawn_peers_of[child] = peers;
        _spawn_children.push_back({child, child_size});
    } else {
        auto it = _spawn_peers_of.find(child);
        if (it != _spawn_peers_of.end()) {
            peers = std::move(it->second);
            _spawn_peers_of.erase(it);
        }
        std::erase_if(_spawn_children, [&child](const spawn_peer &c) { return c.nspace == child; });
    }
    const std::vector<uint32_t> &local = _step.local_ranks();
    for (bool with_parent : {false, true}) {
        const std::string name = with_parent ? union_pset_name(child) : spawned_pset_name(child);
        std::vector<pmix_proc_t> members;
        if (define) {
            members = spawn_pset_members(_step.nspace, _step.ntasks, child, child_size, with_parent, peers);
            if (!_groups->define_job_pset(name, members)) continue;
        } else if (!_groups->delete_job_pset(name)) {
            continue;
        }
        PMIXCPP_LOG_VERBOSE("%s: process set %s %s", _step.nspace.c_str(), name.c_str(), define ? "defined" : "deleted");
        if (!local.empty()) raise_pset_event(name, members, define, local.front());
        if (broadcast && !peers.empty()) pset_to_peers(name, members, define, peers);
    }
}

std::vector<spawn_peer> server_impl::spawn_peers_now(const std::string &child) const {
    std::vector<spawn_peer> peers;
    uint64_t total = 0;
    for (const auto &c : _spawn_children) {
        if (c.nspace == child) continue;
        peers.push_back(c);
        total += c.size;
    }
    if (peers.size() > kMaxSpawnPeers || total > kMaxSpawnPsetStep) {
        PMIXCPP_LOG_WARNING("%s: %zu spawned steps of %llu processes running: a new spawn's union set names none of them",
                            _step.nspace.c_str(), peers.size(), static_cast<unsigned long long>(total));
        peers.clear();
    }
    return peers;
}

// PMIX_PROCESS_SET_DEFINE / _DELETE to every process of the peers (range custom: their
// namespaces), through the job's cross-step relay; each peer's servers define the set too
// (adopt_pset_event) and raise the event to their local processes.
void server_impl::pset_to_peers(const std::string &name, const std::vector<pmix_proc_t> &members, bool defined,
                                const std::vector<spawn_peer> &peers) {
    if (!_opts.agent || !_xstep) return;
    wire::event_notification ev;
    ev.status = defined ? PMIX_PROCESS_SET_DEFINE : PMIX_PROCESS_SET_DELETE;
    ev.range = PMIX_RANGE_CUSTOM;
    memcpy(ev.source.nspace, _step.nspace.c_str(), std::min(_step.nspace.size(), size_t(PMIX_MAX_NSLEN)));
    ev.source.rank = _step.local_ranks().empty() ? 0 : _step.local_ranks().front();
    std::vector<pmix_proc_t> range;
    xstep::message out;
    out.what = xstep::op::event;
    for (const auto &p : peers) {
        pmix_proc_t all{};
        memcpy(all.nspace, p.nspace.c_str(), std::min(p.nspace.size(), size_t(PMIX_MAX_NSLEN)));
        all.rank = PMIX_RANK_WILDCARD;
        range.push_back(all);
        out.nspaces.push_back(p.nspace);
    }
    std::vector<pmix_info_t> infos;
    infos.push_back(make_info(PMIX_PSET_NAME, name.c_str(), PMIX_STRING));
    if (defined) infos.push_back(procs_info(PMIX_PSET_MEMBERS, members));
    infos.push_back(procs_info(PMIX_EVENT_CUSTOM_RANGE, range));
    bool yes = true;
    infos.push_back(make_info(PMIX_EVENT_NON_DEFAULT, &yes, PMIX_BOOL));
    ev.infos = to_array(infos);
    if (ev.infos.size() == 0) return;
    wire::Writer w;
    if (!wire::encode(w, ev).ok()) return;
    out.payload = w.data();
    _xstep->send(std::move(out), "process set");
}

void server_impl::adopt_pset_event(std::span<const uint8_t> payload) {
    wire::event_notification ev;
    if (!wire::decode_payload(payload, &ev).ok()) return;
    if (ev.status != PMIX_PROCESS_SET_DEFINE && ev.status != PMIX_PROCESS_SET_DELETE) return;
    const pmix_info_t *ni = find_info(ev.infos, PMIX_PSET_NAME);
    if (ni == nullptr || ni->value.type != PMIX_STRING || ni->value.data.string == nullptr) return;
    const std::string name = ni->value.data.string;
    // only a spawn's sets of this job, from another step's server
    const std::string job_prefix = "slurm." + std::to_string(_step.job_id) + ".";
    const std::string src(ev.source.nspace, strnlen(ev.source.nspace, PMIX_MAX_NSLEN + 1));
    std::string child;
    bool is_union = false;
    for (const char *prefix : {"pmixcpp://union/", "pmixcpp://spawned/"})
        if (name.rfind(prefix, 0) == 0) {
            child = name.substr(strlen(prefix));
            is_union = prefix[10] == 'u';
        }
    if (child.rfind(job_prefix, 0) != 0 || src.rfind(job_prefix, 0) != 0 || src == _step.nspace) return;
    if (ev.status == PMIX_PROCESS_SET_DELETE) {
        auto it = _adopted_sets.find(name);
        if (it == _adopted_sets.end()) return;  // only what was adopted
        _adopted_procs -= it->second;
        _adopted_sets.erase(it);
        _groups->delete_job_pset(name);
        PMIXCPP_LOG_VERBOSE("%s: process set %s of step %s deleted", _step.nspace.c_str(), name.c_str(), src.c_str());
        return;
    }
    const pmix_info_t *mi = find_info(ev.infos, PMIX_PSET_MEMBERS);
    std::vector<pmix_proc_t> members = mi ? procs_of(mi->value) : std::vector<pmix_proc_t>{};
    // the union names our processes; the spawned set the children only (we asked for them)
    bool ours = false, children_only = !members.empty();
    for (const auto &p : members) {
        ours = ours || strncmp(p.nspace, _step.nspace.c_str(), PMIX_MAX_NSLEN) == 0;
        children_only = children_only && strncmp(p.nspace, child.c_str(), PMIX_MAX_NSLEN) == 0;
    }
    if (is_union ? !ours : !children_only) return;
    if (_adopted_procs + members.size() > kMaxAdoptedPsetProcs) {
        PMIXCPP_LOG_WARNING("%s: process set %s of step %s not defined here: %zu members of other steps' sets already",
                            _step.nspace.c_str(), name.c_str(), src.c_str(), _adopted_procs);
        return;
    }
    const size_t n = members.size();
    if (!_groups->define_job_pset(name, std::move(members))) return;
    _adopted_procs += n;
    _adopted_sets[name] = n;
    PMIXCPP_LOG_VERBOSE("%s: process set %s of step %s defined (%zu members)", _step.nspace.c_str(), name.c_str(),
                        src.c_str(), n);
}

void server_impl::raise_pset_event(const std::string &name, const std::vector<pmix_proc_t> &members, bool defined,
                                   uint32_t from, bool members_only) {
    wire::event_notification ev;
    ev.status = defined ? PMIX_PROCESS_SET_DEFINE : PMIX_PROCESS_SET_DELETE;
    ev.range = members_only ? PMIX_RANGE_CUSTOM : PMIX_RANGE_LOCAL;
    std::vector<pmix_proc_t> here;  // members_only: this node's members (the range)
    if (members_only) {
        for (const auto &p : members)
            if (strncmp(p.nspace, _step.nspace.c_str(), PMIX_MAX_NSLEN) == 0 && p.rank < _node_of.size() &&
                _node_of[p.rank] == _step.node_id)
                here.push_back(p);
        if (here.empty()) return;
    }
    memcpy(ev.source.nspace, _step.nspace.c_str(), std::min(_step.nspace.size(), size_t(PMIX_MAX_NSLEN)));
    ev.source.rank = from;
    std::vector<pmix_info_t> infos;
    infos.push_back(make_info(PMIX_PSET_NAME, name.c_str(), PMIX_STRING));
    if (defined) infos.push_back(procs_info(PMIX_PSET_MEMBERS, members));
    if (members_only) infos.push_back(procs_info(PMIX_EVENT_CUSTOM_RANGE, here));
    // Non-default: handlers registered for every event (often error handlers) do not see it.
    bool yes = true;
    infos.push_back(make_info(PMIX_EVENT_NON_DEFAULT, &yes, PMIX_BOOL));
    ev.infos = to_array(infos);
    if (ev.infos.size() == 0) return;
    Status st = _events->notify_from_client(from, std::move(ev));
    if (!st.ok()) PMIXCPP_LOG_WARNING("%s: process set event: %s", _step.nspace.c_str(), st.message().c_str());
}

void server_impl::on_spawn_psets(uint32_t from, std::span<const uint8_t> body) {
    wire::spawn_psets_message m;
    if (Status st = wire::decode(body, kMaxSpawnPsetStep, &m); !st.ok())
        PMIXCPP_LOG_ERROR("%s: bad spawn process sets from node %u dropped: %s", _step.nspace.c_str(), from,
                          st.message().c_str());
    else
        spawn_psets(m.child, m.child_size, false);
}

fabric_relay_ops server_impl::make_fabric_ops() {
    fabric_relay_ops o;
    if (_opts.agent)
        o.request = [this](services::service service, std::vector<uint8_t> body, int timeout_ms,
                           fabric_relay_ops::done_fn done) { _opts.agent->call(service, std::move(body), timeout_ms, std::move(done)); };
    o.post = [this](std::function<void()> fn) { post(std::move(fn)); };
    o.reply = [this](uint64_t conn, uint32_t id, pmix_status_t status, const std::string &message,
                     std::span<const uint8_t> body) {
        if (status != PMIX_SUCCESS) return _sink.reply(conn, id, status, message);
        _sink.reply(conn, id, status, message, [body](wire::Writer &w) {
            w.put_raw(body.data(), body.size());
            return Status::success();
        });
    };
    o.updated = [this] { _events->fabric_updated("default"); };
    return o;
}

proc_table_ops server_impl::make_proc_table_ops() {
    proc_table_ops o;
    o.send = [this](uint32_t node, node_channel chan, std::vector<uint8_t> body) { send_node(node, chan, body); };
    o.local_rows = [this] { return local_proc_rows(); };
    o.lost = [this](uint32_t node) { return !_net || node_is_lost(node); };
    o.gone = [this](uint32_t node) { return _net && _net->said_goodbye(node); };
    o.final_rows_to = [this](uint32_t node) { return _net && _net->knows_address(node); };
    return o;
}

// This node's ranks: pid (Slurm's task record, else the one it connected with), state and exit
// code (from Slurm once the task was reaped; before that from its connection), executable.
std::vector<proc_row> server_impl::local_proc_rows() {
    std::vector<proc_row> out;
    for (uint32_t r : _step.local_ranks()) {
        if (r >= _step.ntasks) continue;
        proc_row p;
        p.rank = r;
        server_host::task_status t = _host ? _host->task(r) : server_host::task_status{};
        pid_t pid = t.pid > 0 ? t.pid : _rank_pid[r];
        if (pid <= 0 && _rank_conn[r] != 0)
            if (connection *c = find(_rank_conn[r])) pid = c->pid;
        p.pid = pid > 0 ? pid : 0;
        const rank_state rs = _rank_state[r];
        if (t.exited) {
            if (WIFSIGNALED(t.wait_status)) {
                p.state = PMIX_PROC_STATE_ABORTED_BY_SIG;
                p.exit_code = 128 + WTERMSIG(t.wait_status);
            } else {
                p.exit_code = WIFEXITED(t.wait_status) ? WEXITSTATUS(t.wait_status) : 0;
                p.state = p.exit_code != 0          ? PMIX_PROC_STATE_TERM_NON_ZERO
                          : rs == rank_state::died  ? PMIX_PROC_STATE_TERM_WO_SYNC
                                                    : PMIX_PROC_STATE_TERMINATED;
            }
        } else {
            switch (rs) {
            case rank_state::connected: p.state = PMIX_PROC_STATE_RUNNING; break;
            case rank_state::finalized:  // after PMIx_Finalize: running until its connection ends
                p.state = _rank_conn[r] != 0 ? PMIX_PROC_STATE_RUNNING : PMIX_PROC_STATE_TERMINATED;
                break;
            case rank_state::died: p.state = PMIX_PROC_STATE_TERM_WO_SYNC; break;
            case rank_state::not_connected:
                p.state = p.pid > 0 ? PMIX_PROC_STATE_RUNNING : PMIX_PROC_STATE_LAUNCH_UNDERWAY;
                break;
            }
            if (_rank_exe[r].empty() && p.pid > 0) {
                // Before its exec the task is a fork of slurmstepd: its /proc/<pid>/exe names
                // slurmstepd. A rank that has connected has exec'd: only then is the name kept.
                std::string exe = executable_of(p.pid);
                if (rs != rank_state::not_connected)
                    _rank_exe[r] = std::move(exe);
                else if (exe != executable_of(getpid()))
                    p.executable = std::move(exe);
            }
        }
        if (!_rank_exe[r].empty()) p.executable = _rank_exe[r];
        out.push_back(std::move(p));
    }
    return out;
}

node_liveness_ops server_impl::make_liveness_ops() {
    node_liveness_ops o;
    o.send = [this](uint32_t node, node_channel chan, std::vector<uint8_t> body) { send_node(node, chan, body); };
    o.said_goodbye = [this](uint32_t node) { return _net && _net->said_goodbye(node); };
    o.peer_alive = [this](uint32_t node) { return _net && _net->peer_alive(node); };
    o.forget = [this](uint32_t node) {
        if (_net) _net->forget(node);
    };
    o.lost = [this](uint32_t node, const std::string &why) { on_node_lost(node, why); };
    return o;
}

void server_impl::on_node_lost(uint32_t node, const std::string &why) {
    const std::string &name = _step.node_names.at(node);
    _events->node_down(node, why);
    _groups->node_lost(node);
    _proc_table->node_lost(node);
    if (_directory) _directory->done_with(node);  // no more directory messages for it
    std::string text = "node " + name + " is lost: " + why;
    const size_t failed = _remote_fence->node_lost(node, text);
    size_t gets = _dmodex->node_lost(node, text);  // the Gets of its ranks wait there
    if (failed > 0 || gets > 0)
        PMIXCPP_LOG_VERBOSE("%s: %zu fences and %zu gets failed with node %s", _step.nspace.c_str(), failed,
                            gets, name.c_str());
    rearm_timer();
}

remote_fence_config server_impl::make_remote_fence_config() const {
    remote_fence_config c;
    c.nspace = _step.nspace;
    c.ntasks = _step.ntasks;
    c.node_id = _step.node_id;
    c.node_names = _step.node_names;
    c.node_of = _node_of;
    return c;
}

remote_fence_ops server_impl::make_remote_fence_ops() {
    remote_fence_ops o;
    o.transport = [this]() -> Status {
        if (!_net || !_coll || !_net_error.empty())
            return transport_not_running();
        return Status::success();
    };
    o.start_collective = [this](uint64_t instance, uint64_t signature, std::vector<uint32_t> nodes,
                                std::vector<uint8_t> blob, bool collect) {
        _coll->start(instance, signature, std::move(nodes), std::move(blob), collect);
    };
    o.cancel_collective = [this](uint64_t instance) {
        if (_coll) _coll->cancel(instance);
    };
    o.missing = [this](uint64_t instance) { return _coll ? _coll->missing(instance) : std::vector<uint32_t>(); };
    o.transport_note = [this]() -> std::string {
        if (!_coll) return {};
        if (!_net_error.empty()) return "node transport: " + _net_error;
        if (_net && !_net->has_peers()) return "node addresses never arrived";
        return {};
    };
    // Asked inside the fence tracker's expiry: the probe runs from the loop.
    o.probe = [this](std::vector<uint32_t> nodes) {
        if (_liveness) post([this, nodes = std::move(nodes)] { _liveness->probe(nodes, server_clock::now()); });
    };
    o.node_lost = [this](uint32_t node) { return node_is_lost(node); };
    o.data_stored = [this](uint32_t rank) { _dmodex->data_stored(rank); };
    return o;
}

job_control_config server_impl::make_job_control_config() const {
    job_control_config c;
    c.nspace = _step.nspace;
    c.ntasks = _step.ntasks;
    c.step_dir = _step.step_dir;
    c.max_procs = max_procs();
    return c;
}

job_control_ops server_impl::make_job_control_ops() {
    job_control_ops o;
    o.actions = [this](uint64_t conn, uint32_t rank, uint32_t id, const wire::job_control_request &m) {
        return _dyn->job_control(conn, rank, id, m);
    };
    // Only through the pidfd of the rank's connection: never a pid that may have been reused.
    o.signal_rank = [this](uint32_t rank, int signal) -> Status {
        connection *c = rank < _rank_conn.size() ? find(_rank_conn[rank]) : nullptr;
        if (c == nullptr || !c->proc) return Status(PMIX_ERR_UNREACH, "not connected");
        if (c->proc->send_signal(signal) != 0) return Status(PMIX_ERROR, strerror(errno));
        return Status::success();
    };
    o.checkpoint_event = [this](uint32_t rank, pmix_status_t code, const std::string &why) {
        _events->checkpoint_requested(rank, code, why);
    };
    o.remove_beneath = [this](const std::string &relpath) {
        return _step.dirs->user.remove_beneath(relpath, _step.uid);  // only the user's entries
    };
    return o;
}

monitor_ops server_impl::make_monitor_ops() {
    monitor_ops o;
    o.tripped = [this](const heartbeat_alert &a) { _events->monitor_tripped(a.rank, a.code, a.id, a.silent_sec); };
    return o;
}

// PMIX_LOCAL_TOPO is made by a thread of its own (hwloc's discovery of the I/O devices takes a
// while); what it made is posted to the loop. stop() joins it.
topology_ops server_impl::make_topology_ops() {
    topology_ops o;
    o.make = [this](std::function<void(Result<std::string>)> done) -> Status {
        if (_topology_thread.joinable()) return Status(PMIX_ERR_BAD_PARAM, "the node's topology is made only once");
        try {
            _topology_thread = std::thread([this, done = std::move(done)] {
                auto xml = export_node_topology_xml();
                post([done, xml = std::move(xml)]() mutable { done(std::move(xml)); });
            });
        } catch (const std::exception &e) {
            return Status(PMIX_ERR_OUT_OF_RESOURCE, std::string("cannot start a thread: ") + e.what());
        }
        return Status::success();
    };
    return o;
}

// The node transport cannot work for this step: every remote fence and Get fails now, and every
// later one at once (the ops above and the Get policy see _net_error).
void server_impl::fail_multinode(const std::string &message) {
    _net_error = message;
    const std::string text = "the node transport failed: " + message;
    _remote_fence->transport_failed(text);
    for (uint32_t n = 0; n < _step.node_names.size(); ++n)
        if (n != _step.node_id) (void)_dmodex->node_lost(n, text);
    rearm_timer();
}

xstep_relay_ops server_impl::make_xstep_ops() {
    xstep_relay_ops o;
    if (_opts.agent)
        o.send = [this](std::vector<uint8_t> body, int timeout_ms, xstep_relay_ops::done_fn done) {
            _opts.agent->call(services::service::xstep, std::move(body), timeout_ms, std::move(done));
        };
    o.has = [this](uint32_t rank, const std::string &key, relation rel) {
        return key.empty() ? _kvs.has_committed(rank) : _kvs.has(rank, key, rel);
    };
    o.data = [this](uint32_t rank, relation rel) { return _kvs.visible_data(rank, rel); };
    o.gone = [this](uint32_t rank) -> std::string {
        if (rank >= _rank_state.size()) return {};
        if (_rank_state[rank] == rank_state::died) return "died";
        if (_rank_state[rank] == rank_state::finalized) return "finalized";
        return {};
    };
    o.event = [this](std::span<const uint8_t> payload) {
        adopt_pset_event(payload);
        return _events->from_remote(payload);
    };
    o.job_control = [this](const std::vector<uint32_t> &ranks, int signal, bool terminate) {
        _dyn->job_control_of_other_step(ranks, signal, terminate);
    };
    // A spawner's OpenPMIx client takes every rank's keys of its children: the full form.
    o.jobdata = [this]() -> Result<std::vector<uint8_t>> {
        if (!_job_layout) return wire::encode_jobdata(_jobdata_entries);
        PMIXCPP_ASSIGN_OR_RETURN(auto full, expand_jobdata(_jobdata_entries, *_job_layout));
        return wire::encode_jobdata(full);
    };
    return o;
}

}  // namespace pmixcpp::server
