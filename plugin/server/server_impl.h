// The server's I/O shell as one class (server_impl), shared by the files that implement it:
// server.cc (sockets, frames, the loop thread, replies, the dispatch, the node transport's setup),
// server_native.cc (the native listener: OpenPMIx's own clients), client_requests.cc (a
// rank's admission, the request engine's routes), get_policy.cc (the Get policy) and engine_ops.cc (the ops the
// services and engines are built with: the remote-fence backend's, job control's, the monitors',
// the topology's).
// Private to plugin/server: pmix_server (server.h) is the interface.
#pragma once

#include "server.h"
#include "modex_snapshot.h"

#include <arpa/inet.h>
#include <event2/event.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <atomic>
#include <deque>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "../coll/fence_manager.h"
#include "../services/fabric/fabric_codec.h"
#include "../common/step_env.h"
#include "../native/requests.h"
#include "../native/session.h"
#include "../net/listener_guard.h"
#include "../net/directory.h"
#include "../net/transport.h"
#include "dmodex.h"
#include "dyn.h"
#include "engine.h"
#include "fabric_relay.h"
#include "groups.h"
#include "events.h"
#include "get_waits.h"
#include "jctrl_engine.h"
#include "jobdata.h"
#include "kvs.h"
#include "log.h"
#include "log_gate.h"
#include "monitor_engine.h"
#include "multinode.h"
#include "native_dyn.h"
#include "native_grp.h"
#include "native_jobdata.h"
#include "node_channels.h"
#include "node_liveness.h"
#include "proc_table.h"
#include "rank_store.h"
#include "remote_fence.h"
#include "requests.h"
#include "time_alert.h"
#include "topology.h"
#include "topology_engine.h"
#include "xstep_relay.h"
#include "wire/frame.h"
#include "wire/messages.h"
#include "wire/node_messages.h"
#include "sys.h"
namespace pmixcpp::server {

// What the I/O shell's parts share (the files named above); nothing outside them includes this
// header.
namespace shell_detail {

struct event_deleter {
    void operator()(event *e) const { event_free(e); }
};
struct base_deleter {
    void operator()(event_base *b) const { event_base_free(b); }
};
using event_ptr = std::unique_ptr<event, event_deleter>;
using base_ptr = std::unique_ptr<event_base, base_deleter>;

using safe_fs::unique_fd;




enum class conn_state { awaiting_connect, active, finalized };
inline const char *to_string(conn_state s) {
    switch (s) {
    case conn_state::awaiting_connect: return "awaiting connect";
    case conn_state::active: return "active";
    case conn_state::finalized: return "finalized";
    }
    return "unknown";
}

// What one client connection may cost the server (SECURITY.md, "Decoders and queues"):
// - output it does not read: beyond kMaxReplyBacklog bytes or kMaxQueuedReplies replies not yet
//   sent, the connection is closed (one log line);
// - Gets waiting for data and fences entered and not complete: engine.h;
// - before its connect is accepted: frames of at most kConnectMaxPayload bytes, and at most
//   kMaxPendingConnects such connections at a time (others are closed at accept).
constexpr size_t kMaxReplyBacklog = 64u << 20;
constexpr size_t kMaxQueuedReplies = 16384;
constexpr size_t kMaxQueuedDescriptors = 4;  // modex snapshots queued for one client
constexpr uint32_t kConnectMaxPayload = 4096;
constexpr size_t kMaxPendingConnects = 256;
// accept() failing for want of descriptors (EMFILE/ENFILE): accepts pause this long.
constexpr auto kAcceptBackoff = std::chrono::milliseconds(100);

// An OpenPMIx client of the native listener (plugin/native): its handshake and messages in
// OpenPMIx's framing; its requests become our own (wire::Frame) and go through dispatch(), and
// the replies to them are written back in OpenPMIx's format on the request's tag.
struct native_link {
    native_link(uint32_t max_payload, native::session_policy policy, std::string peer_label)
        : reader(max_payload), session(std::move(policy)), peer(std::move(peer_label)) {}
    native::message_reader reader;
    native::session session;
    std::string peer;  // who connected, for the log (net::peer_label)
    struct pending {
        uint32_t tag = 0;
        native::command cmd = native::command::req;
        pmix_proc_t proc{};  // GETNB: the proc asked about
        native_grp_note grp;  // groups: the group and how to judge its outcome
    };
    std::map<uint32_t, pending> requests;  // our request id -> the client's tag
    uint32_t next_request = 1;
    std::vector<pmix_status_t> event_codes;  // what it registered for (REGEVENTS); not delivered yet
    native_grp_link groups;  // the groups it constructed (native_grp.h)
};

struct connection {
    uint64_t id = 0;
    unique_fd fd;
    event_ptr ev_read;
    event_ptr ev_write;
    wire::FrameReader reader;
    std::vector<uint8_t> out;
    size_t out_sent = 0;
    uint64_t out_base = 0;  // stream position of out[0] (out is compacted as it is sent)
    std::deque<uint64_t> reply_ends;  // stream positions where the replies not yet sent end
    // Descriptors to send with the first byte of a queued reply (its stream position): the modex
    // snapshot, shared with every connection it goes to.
    std::deque<std::pair<uint64_t, std::shared_ptr<const unique_fd>>> out_descriptors;
    std::string snapshot_file;  // the id of the snapshot file whose descriptor it was sent last
    bool close_after_flush = false;
    bool overflowed = false;  // its backlog went over the limit: nothing more is read or queued
    bool peer_gone = false;   // a write found the client's end closed: replies are dropped
    size_t fences = 0;        // fences entered, outcome not yet sent
    conn_state state = conn_state::awaiting_connect;
    uint32_t rank = PMIX_RANK_UNDEF;
    pid_t pid = 0;  // from SO_PEERCRED
    process_handle proc;  // a pidfd of the process that connected: the only way it is signalled
    uid_t uid = 0;
    server_impl *server = nullptr;  // for the libevent callbacks (arg = this connection)
    std::unique_ptr<native_link> native;  // an OpenPMIx client of the native listener

    explicit connection(uint32_t max_payload) : reader(max_payload) {}
};

enum class queued { ok, overflow };

enum class rank_state { not_connected, connected, finalized, died };


// Bodies of the node messages (direct modex, rank data of a fence, lost nodes): shared/wire/node_messages.h.


}  // namespace shell_detail
using namespace shell_detail;

class server_impl {
public:
    server_impl(const step_info &step, server_host *host, server_options opts)
        : _step(step), _host(host), _opts(opts), _remote_default(),
          _multinode(opts.multinode.enabled && step.node_names.size() > 1),
          _fences(step.nspace, step.ntasks, step.local_ranks(), opts.remote ? opts.remote : &_remote_default) {
        _local_index.assign(step.ntasks, UINT32_MAX);
        const auto &local = step.local_ranks();
        for (uint32_t i = 0; i < local.size(); ++i)
            if (local[i] < step.ntasks) _local_index[local[i]] = i;
        _node_of.assign(step.ntasks, UINT32_MAX);
        for (uint32_t n = 0; n < step.node_ranks.size(); ++n)
            for (uint32_t r : step.node_ranks[n])
                if (r < step.ntasks) _node_of[r] = n;
        _snapshots = std::make_unique<modex_snapshot_writer>(_node_of, step.node_id);
        _rank_state.assign(step.ntasks, rank_state::not_connected);
        _rank_conn.assign(step.ntasks, 0);
        event_ops eops;
        eops.send_to_rank = [this](uint32_t rank, std::span<const uint8_t> frame) {
            return queue_event_frame(rank, frame);
        };
        eops.remote = opts.event_forwarder ? opts.event_forwarder : _multinode ? &_event_backend : nullptr;
        _events = std::make_unique<event_engine>(step, std::move(eops));
        _events->set_normal_termination_events(opts.normal_termination_events);
        alloc_ops aops;
        aops.reply = [this](uint64_t conn, uint32_t id, pmix_status_t st, const std::string &msg, InfoArray &&r) {
            _sink.reply(conn, id, st, msg, [&r](wire::Writer &w) {
                wire::info_reply rep;
                rep.results = std::move(r);
                return wire::encode(w, rep);
            });
        };
        aops.notify = [this](uint32_t rank, wire::event_notification &&ev) {
            Status st = _events->notify_from_client(rank, std::move(ev));
            if (!st.ok()) PMIXCPP_LOG_ERROR("%s: allocation event: %s", _step.nspace.c_str(), st.message().c_str());
        };
        aops.post = [this](std::function<void()> fn) { post(std::move(fn)); };
        aops.local_procs = [this] { return local_proc_rows(); };
        if (_multinode)
            aops.gather_procs = [this](int timeout_sec, std::function<void(std::vector<proc_row>, std::string)> done) {
                _proc_table->gather(std::chrono::seconds(timeout_sec),
                                    [done](proc_table_engine::result r) { done(std::move(r.rows), std::move(r.silent)); },
                                    server_clock::now());
                rearm_timer();
            };
        aops.psets = [this](bool groups_only) {
            std::vector<std::pair<std::string, std::vector<pmix_proc_t>>> out;
            if (!_groups) return out;
            for (const auto &[name, set] : _groups->psets())
                if (set.group || !groups_only) out.emplace_back(name, _groups->members_of(name));
            if (!groups_only)
                for (const auto &[name, members] : _groups->job_psets()) out.emplace_back(name, members);
            return out;
        };
        _alloc = std::make_unique<alloc_service>(step, opts.alloc, std::move(aops), opts.alloc_timeout_sec);
        _rank_pid.assign(step.ntasks, 0);
        _rank_exe.assign(step.ntasks, std::string());
        _proc_table = std::make_unique<proc_table_engine>(step.node_id, step.node_ranks, step.node_names,
                                                          make_proc_table_ops());
        _dyn = std::make_unique<dyn_services>(
            std::make_unique<publish_service>(step, _node_of, make_publish_ops()),
            std::make_unique<spawn_service>(step, make_spawn_ops()),
            std::make_unique<job_control_service>(step, _node_of, make_job_control_service_ops()),
            std::make_unique<connect_service>(step, _node_of, make_connect_ops(), opts.multinode.timeout_sec));
        _groups = std::make_unique<group_service>(step, _node_of, make_group_ops(), opts.multinode.timeout_sec);
        _groups->define_step_psets();
        _groups->define_spawned_step_psets();
        _rank_store = std::make_unique<kvs_rank_store>(_kvs, _node_of);
        _remote_fence = std::make_unique<remote_fence_backend>(make_remote_fence_config(), make_remote_fence_ops(),
                                                               _kvs, *_rank_store, _fences, _sink);
        if (!opts.remote && _multinode) _fences.set_remote(_remote_fence.get());
        _jctrl = std::make_unique<job_control_engine>(make_job_control_config(), make_job_control_ops(), _sink);
        _monitors = std::make_unique<monitor_engine>(monitor_config{step.nspace, step.ntasks, max_procs()},
                                                     make_monitor_ops(), _sink);
        _topology = std::make_unique<topology_engine>(step.nspace, make_topology_ops(), _sink);
        _engine = std::make_unique<protocol_engine>(make_engine_config(), make_engine_routes(), _kvs, *_rank_store,
                                                    _fences, _sink);
        _dmodex = std::make_unique<dmodex_engine>(make_dmodex_config(), make_dmodex_ops(), *_rank_store);
        _fabric = std::make_unique<fabric_relay>(step.nspace, make_fabric_ops());
        _xstep = std::make_unique<xstep_relay>(step, opts.multinode.timeout_sec, make_xstep_ops());
        _requests = std::make_unique<request_engine>(make_request_config(), make_request_routes(), _kvs,
                                                     *_snapshots, _sink);
    }

    Status setup(const node_topology &topo);
    Status launch();
    void stop();
    void post(std::function<void()> fn);
    void drain_awaiting_addresses();  // stop(): messages still waiting for a peer's address
    // The same on the loop thread, without the wake-up pipe: `fn` runs after the current
    // callback has returned, in this turn of the loop (event_active). Off the loop thread, or
    // before the loop runs, it is post().
    void defer(std::function<void()> fn);
    const std::string &jobdata_path() const { return _jobdata_path; }
    std::vector<std::string> lost_nodes() const {
        std::vector<std::string> out;
        if (_liveness)
            for (uint32_t n : _liveness->lost_nodes()) out.push_back(_step.node_names.at(n));
        return out;
    }

private:
    // --- libevent callbacks (C boundary: nothing throws out of them) ---
    static void on_accept(evutil_socket_t, short, void *arg);
    static void on_wake(evutil_socket_t, short, void *arg);
    static void on_deferred(evutil_socket_t, short, void *arg);
    static void on_timer(evutil_socket_t, short, void *arg);
    static void on_read(evutil_socket_t, short, void *arg);
    static void on_write(evutil_socket_t, short, void *arg);
    static void on_accept_resume(evutil_socket_t, short, void *arg);
    static void on_finalized_exit(evutil_socket_t, short, void *arg);
    template <typename F>
    static void guarded(const char *what, F &&f);
    void loop_main();

    void accept_clients();
    void read_from(uint64_t conn_id);
    void flush(connection &c);
    void drop_output(connection &c);
    // Append a frame to the connection's output; over the backlog limits the connection is
    // closed (from the loop, after the current handler) instead and overflow is returned.
    queued queue_output(connection &c, std::span<const uint8_t> frame,
                        std::shared_ptr<const unique_fd> descriptor = nullptr);
    void pause_accepts(int err);
    bool _accept_paused = false;
    size_t _pending_refused = 0;  // connections refused since the last accepted one (logged once)
    size_t _accept_pauses = 0;    // pauses since the last accepted connection (logged once)
    size_t pending_connects() const;
    void close_connection(uint64_t conn_id, const std::string &reason);
    // A rank that finalized and closed its connection may call PMIx_Init again (OpenMPI 5 does at
    // an MPI_Session_init after its last MPI_Session_finalize): it leaves the fences, Gets,
    // groups and events only when its process exits (its pidfd turns readable), unless it
    // connected again first.
    struct finalized_watch {
        server_impl *server = nullptr;
        uint32_t rank = 0;
        process_handle proc;
        event_ptr ev;
    };
    std::map<uint32_t, std::unique_ptr<finalized_watch>> _finalized;
    void watch_finalized(uint32_t rank, process_handle proc);
    // The pid of the process that finalized as `rank` and still runs (its connection open or
    // watched), else 0.
    pid_t finalized_pid(uint32_t rank);
    void finalized_exited(uint32_t rank);
    connection *find(uint64_t conn_id);
    void rearm_timer();
    void expire_deadlines();

    // Protocol.
    bool dispatch(connection &c, const wire::Frame &f);  // false: the connection was closed
    // Most procs a client's request may name: the step's ranks and up to kMaxForeignProcs of
    // other namespaces (connect, fences and job control across steps).
    static constexpr uint32_t kMaxForeignProcs = 65536;
    uint32_t max_procs() const { return _step.ntasks + kMaxForeignProcs; }
    std::unique_ptr<fabric_relay> _fabric;  // PMIx_Fabric_register/update (fabric_relay.h)
    fabric_relay_ops make_fabric_ops();
    // Another step of the job (xstep_relay.h): what it asks of this node, what goes to it.
public:
    void from_other_step(const xstep::inbox_item &item) { _xstep->on_item(item, server_clock::now()); }
private:
    std::unique_ptr<xstep_relay> _xstep;
    xstep_relay_ops make_xstep_ops();
    bool queue_event_frame(uint32_t rank, std::span<const uint8_t> frame);

    void send_reply(uint64_t conn_id, uint32_t request_id, pmix_status_t status, const std::string &message,
                    const std::function<Status(wire::Writer &)> &body = {},
                    std::shared_ptr<const unique_fd> descriptor = nullptr);
    // A reply naming the modex snapshot (shared/PROTOCOL.md, "Modex snapshot"): its file's id and
    // segments, with the file's descriptor if this client was not sent it before (or `resend`),
    // unless it has too many unread; "" if there is none.
    void send_snapshot_reply(uint64_t conn_id, uint32_t request_id, const modex_snapshot *snapshot,
                             bool resend = false);
    void send_fence_outcomes(const std::vector<fence_outcome> &outcomes);
    void answer_get(const get_waiter &w) { _engine->answer(w); }
    void fail_get(const get_waiter &w, pmix_status_t status, const std::string &message) {
        _engine->fail(w, status, message);
    }
    void rank_left(uint32_t rank, bool died);
    relation relation_of(uint32_t requester, uint32_t target) const { return _rank_store->relation_of(requester, target); }
    bool is_local(uint32_t rank) const { return rank < _local_index.size() && _local_index[rank] != UINT32_MAX; }
    // A connect's two halves (the request engine's routes), shared with the native route: why a
    // connection may not be `rank` ("" = it may), and the rank's admission (the caller replies,
    // then tells the events).
    std::string rank_claim_refusal(const connection &c, uint32_t rank);
    void admit_rank(connection &c, uint32_t rank);

    // The native listener (plugin/native): OpenPMIx's own clients over TCP on 127.0.0.1.
public:
    uint16_t native_port() const { return _native_port; }
private:
    Status setup_native();
    static void on_native_accept(evutil_socket_t, short, void *arg);
    static void on_native_resume(evutil_socket_t, short, void *arg);
    void accept_native();
    void read_native(uint64_t conn_id);
    bool native_message(connection &c);  // false: the connection was closed
    bool native_handshake(connection &c, std::span<const uint8_t> payload);
    // A decoded OpenPMIx request as our own, through dispatch(); its reply comes to native_reply.
    template <typename M>
    bool native_forward(connection &c, uint32_t tag, native::command cmd, wire::msg_type type, const M &m,
                        const pmix_proc_t &proc = {});
    bool native_forward_raw(connection &c, uint32_t tag, native::command cmd, wire::msg_type type,
                            std::vector<uint8_t> payload, const pmix_proc_t &proc, native_grp_note grp = {});
    void native_reply(connection &c, uint32_t request_id, pmix_status_t status,
                      const std::function<Status(wire::Writer &)> &body);
    void native_send(connection &c, uint32_t tag, std::span<const uint8_t> payload);
    // Refuse a connection during its handshake: one (rate-limited) log line, the status to the
    // client, then close.
    void native_refuse(connection &c, std::span<const uint8_t> answer, const std::string &why);
    Result<std::vector<uint8_t>> native_blob(native::int_flavour f);
    // A spawn of an OpenPMIx client succeeded: its reply carries the child step's job data,
    // asked of the child's node-0 server (xstep::kJobdataKey); without it, the namespace alone.
    void native_spawned(uint64_t conn_id, uint32_t tag, const std::string &child);
    // An event to or from an OpenPMIx client that makes a group by invitation
    // (native_invited_group): the client's membership is kept (native_grp_link::invited).
    void native_note_group(connection &c, pmix_status_t status, const InfoArray &infos);

    // Multi-node: transport, collectives, direct modex.
    // Events leave the node over the node transport (channel event); the receiving server
    // delivers them to its own ranks and never forwards again.
    class event_backend : public remote_events {
    public:
        explicit event_backend(server_impl *s) : _s(s) {}
        void forward_event(uint32_t node, std::span<const uint8_t> payload) override {
            _s->send_node(node, node_channel::event, payload);
        }

    private:
        server_impl *_s;
    };
    Status setup_multinode();
    void start_bootstrap();
    // The node transport cannot work for this step (the address table was refused or never came):
    // every remote fence and Get fails now, and every later one at once.
    void fail_multinode(const std::string &message);
    // The remote-fence backend (remote_fence.h): the multi-node part of a fence, through _coll.
    std::unique_ptr<remote_fence_backend> _remote_fence;
    remote_fence_config make_remote_fence_config() const;
    remote_fence_ops make_remote_fence_ops();
    // The node channels (node_channels.h): the table every service registers its handlers in,
    // before the transport delivers anything; what arrives goes through it.
    node_channels _channels;
    Status add_node_channels();
    void on_node_message(net::envelope &&env);
    void on_spawn_psets(uint32_t from, std::span<const uint8_t> body);
    void send_node(uint32_t node, node_channel c, std::span<const uint8_t> body) {
        if (_net) _net->send(node, id_of(c), body);
    }
    // Direct modex (dmodex.h): remote ranks' data on demand, requests of other nodes for ours.
    std::unique_ptr<dmodex_engine> _dmodex;
    dmodex_config make_dmodex_config() const;
    dmodex_ops make_dmodex_ops();
    // The rank data that crosses nodes, read from and written to _kvs (rank_store.h): direct
    // modex's only way to the store, and the remote fences' data.
    std::unique_ptr<kvs_rank_store> _rank_store;
    // The protocol engine (engine.h): commit, fence and Get, answering through _sink.
    class shell_sink : public reply_sink {
    public:
        explicit shell_sink(server_impl *s) : _s(s) {}
        void reply(uint64_t conn, uint32_t request_id, pmix_status_t status, const std::string &message,
                   const std::function<Status(wire::Writer &)> &body = {}) override {
            _s->send_reply(conn, request_id, status, message, body);
        }
        void fence_outcomes(const std::vector<fence_outcome> &outcomes) override { _s->send_fence_outcomes(outcomes); }
        void snapshot(uint64_t conn, uint32_t request_id, const modex_snapshot *snapshot, bool resend) override {
            _s->send_snapshot_reply(conn, request_id, snapshot, resend);
        }
        void reply_and_close(uint64_t conn, uint32_t request_id, pmix_status_t status,
                             const std::string &message) override {
            if (connection *c = _s->find(conn)) c->close_after_flush = true;
            _s->send_reply(conn, request_id, status, message);
        }
        void refuse(uint64_t conn, const std::string &reason) override { _s->close_connection(conn, reason); }

    private:
        server_impl *_s;
    };
    shell_sink _sink{this};
    std::unique_ptr<protocol_engine> _engine;
    engine_config make_engine_config() const;
    engine_routes make_engine_routes();
    // The request engine (requests.h): connect, finalize, abort, log, notify, the snapshot asked
    // for again, and the requests handed to a service, answering through _sink.
    std::unique_ptr<request_engine> _requests;
    request_config make_request_config() const;
    request_routes make_request_routes();
    static client_ref client_of(connection &c) {
        return {c.id, c.rank, &c.fences, static_cast<int>(c.pid), static_cast<unsigned>(c.uid)};
    }
    // Lost nodes (node_liveness.h): which nodes are lost, probes, queries, node-down messages.
    // What the server does when a node is lost: raise PMIX_ERR_NODE_DOWN for the local ranks,
    // fail the fences and Gets that need it.
    std::unique_ptr<node_liveness> _liveness;
    node_liveness_ops make_liveness_ops();
    void on_node_lost(uint32_t node, const std::string &why);
    bool node_is_lost(uint32_t node) const { return _liveness && _liveness->is_lost(node); }
    // The refusal of what needs the node transport while it is not running (with why it failed).
    Status transport_not_running() const {
        return Status(PMIX_ERR_NOT_SUPPORTED,
                      "the node transport is not running" + (_net_error.empty() ? std::string() : ": " + _net_error));
    }

    step_info _step;
    server_host *_host;
    server_options _opts;
    no_remote_fences _remote_default;
    event_backend _event_backend{this};
    bool _multinode;
    std::unique_ptr<net::node_transport> _net;
    std::shared_ptr<net::directory> _directory;  // directory wire-up (multinode.h)
    std::unique_ptr<coll::fence_manager> _coll;
    std::string _net_error;  // set when the transport or the bootstrap failed

    // Loop-thread state.
    kv_store _kvs;
    fence_tracker _fences;
    std::unique_ptr<event_engine> _events;
    std::unique_ptr<alloc_service> _alloc;
    // The process table (proc_table.h): this node's rows; the others' gathered on a query.
    std::unique_ptr<proc_table_engine> _proc_table;
    std::vector<pid_t> _rank_pid;          // per rank: the pid it connected with (0: never)
    std::vector<std::string> _rank_exe;    // per rank: its executable, once known
    proc_table_ops make_proc_table_ops();
    std::vector<proc_row> local_proc_rows();
    std::unique_ptr<dyn_services> _dyn;  // publish/lookup, spawn, job control actions, connect (dyn.h)
    // Job control (jctrl_engine.h): what the processes say of themselves, clean-up paths,
    // checkpoint requests; monitors (monitor_engine.h); PMIX_LOCAL_TOPO (topology_engine.h).
    std::unique_ptr<job_control_engine> _jctrl;
    job_control_config make_job_control_config() const;
    job_control_ops make_job_control_ops();
    std::unique_ptr<monitor_engine> _monitors;
    monitor_ops make_monitor_ops();
    std::unique_ptr<topology_engine> _topology;
    topology_ops make_topology_ops();
    std::unique_ptr<group_service> _groups;  // PMIx groups and the process sets they define (groups.h)
    group_ops make_group_ops();
    void spawn_psets(const std::string &child, uint32_t child_size, bool broadcast);
    // The step's spawned steps still running (one app each), in spawn order, and the peers each
    // one's union set named (groups.h); the same on every node of the step.
    std::vector<spawn_peer> _spawn_children;
    std::map<std::string, std::vector<spawn_peer>> _spawn_peers_of;
    // The peers of a new spawn: the running children, none when beyond kMaxSpawnPeers or
    // kMaxSpawnPsetStep processes (logged).
    std::vector<spawn_peer> spawn_peers_now(const std::string &child) const;
    // A spawn's set defined or deleted: tell the peers' servers (the job's cross-step relay).
    void pset_to_peers(const std::string &name, const std::vector<pmix_proc_t> &members, bool defined,
                       const std::vector<spawn_peer> &peers);
    // A PMIX_PROCESS_SET_DEFINE / _DELETE of a spawn's set from another step's server, whose
    // members include ours: define or delete it here too (bounded: kMaxAdoptedPsetProcs).
    void adopt_pset_event(std::span<const uint8_t> payload);
    size_t _adopted_procs = 0;
    std::map<std::string, size_t> _adopted_sets;  // name -> members
    // PMIX_PROCESS_SET_DEFINE (with the members) or _DELETE of `name`, raised as from local rank
    // `from`; non-default. To this node's processes (range LOCAL), or with `members_only` to this
    // node's members of the set alone (range CUSTOM over them): a group's set concerns its members,
    // and a node's other processes must not be flooded by groups they are not in.
    void raise_pset_event(const std::string &name, const std::vector<pmix_proc_t> &members, bool defined,
                          uint32_t from, bool members_only = false);
    // The dynamic services' ops (engine_ops.cc), each with what its service needs.
    publish_ops make_publish_ops();
    spawn_ops make_spawn_ops();
    job_control_service_ops make_job_control_service_ops();
    connect_ops make_connect_ops();
    using raw_reply_fn = std::function<void(uint64_t conn, uint32_t request_id, pmix_status_t status,
                                            const std::string &message, std::span<const uint8_t> body)>;
    raw_reply_fn raw_reply();
    using node_send_fn = std::function<void(uint32_t node, node_channel channel, std::span<const uint8_t> body)>;
    node_send_fn node_sender();
    using agent_done_fn = std::function<void(int status, const std::string &message, std::vector<uint8_t> body)>;
    using agent_call_fn = std::function<void(std::vector<uint8_t> body, int timeout_ms, agent_done_fn done)>;
    agent_call_fn agent_call(services::service s);
    std::map<uint64_t, std::unique_ptr<connection>> _conns;
    uint64_t _next_conn = 1;
    std::vector<uint32_t> _local_index;  // rank -> local rank, UINT32_MAX if remote
    std::vector<uint32_t> _node_of;
    std::unique_ptr<modex_snapshot_writer> _snapshots;
    time_alert _time_alert{_opts.job_end_time, _opts.time_limit_alert_sec};
    std::vector<rank_state> _rank_state;
    std::vector<uint64_t> _rank_conn;

    std::string _jobdata_path;
    uint64_t _jobdata_size = 0;
    unique_fd _listen_fd;
    // The thread making PMIX_LOCAL_TOPO for _topology (joined in stop()).
    std::thread _topology_thread;
    unique_fd _wake_rd, _wake_wr;
    base_ptr _base;
    event_ptr _ev_listen, _ev_wake, _ev_timer;
    event_ptr _ev_deferred;  // active while _deferred holds work (loop thread only)
    std::vector<std::function<void()>> _deferred;
    bool _deferred_armed = false;
    std::atomic<std::thread::id> _loop_thread{};  // while the loop runs
    unique_fd _native_fd;
    event_ptr _ev_native;
    uint16_t _native_port = 0;
    std::unique_ptr<net::listener_guard> _native_guard;
    bool _native_paused = false;
    std::vector<wire::jobdata_entry> _jobdata_entries;  // the job data, for the native REQ replies
    std::shared_ptr<const wire::job_layout> _job_layout;  // the step's layout (compact job data)
    std::map<native::int_flavour, std::vector<uint8_t>> _native_blobs;  // packed once per codec
    std::thread _thread;
    bool _socket_created = false;

    std::mutex _post_mutex;
    std::deque<std::function<void()>> _posted;
    bool _stopping = false;  // under _post_mutex
    bool _stopped = false;
};

// In the shell's request handlers (connection &c, const wire::Frame &f): decode the payload into `m` or
// close the connection with the reason.
#define DECODE_OR_CLOSE(msg_struct, what)                                                            \
    msg_struct m;                                                                                    \
    if (Status _st = wire::decode_payload(f.payload, &m, max_procs()); !_st.ok()) {                \
        close_connection(c.id, std::string("malformed ") + (what) + " payload: " + _st.message()); \
        return;                                                                                      \
    }

template <typename F>
void server_impl::guarded(const char *what, F &&f) {
    try {
        f();
    } catch (const std::exception &e) {
        PMIXCPP_LOG_ERROR("server %s: internal error: %s", what, e.what());
    } catch (...) {
        PMIXCPP_LOG_ERROR("server %s: internal error", what);
    }
}

}  // namespace pmixcpp::server
