// Event handler registration and PMIx_Notify_event (the C shell around event_chain.h: chains run
// on the progress thread; events beyond PMIX_RANGE_PROC_LOCAL go through the server, which sends
// them back to every process in range, this one included), PMIx_Log(_nb), PMIx_Job_control(_nb).
#include <pmix.h>

#include <syslog.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <memory>

#include "sched/sched.h"
#include "signals.h"

#include "api.h"
#include "events_signals.h"
#include "groups.h"

using namespace pmixcpp;
using namespace pmixcpp::client;

namespace {

// One event walking its handler chain; owned by whoever runs the current step (the progress
// thread, or the handler until it calls its completion function).
struct running_chain {
    Client *client = nullptr;
    event_chain chain;
    pmix_op_cbfunc_t cbfunc = nullptr;  // PMIx_Notify_event's callback (local delivery)
    void *cbdata = nullptr;

    // A handler that calls its completion function before returning (the common case) lets the
    // chain go on in chain_step's loop: no post, no recursion.
    bool in_call = false;
    bool completed_in_call = false;
    // The info of the current call when its handler registered a PMIX_EVENT_RETURN_OBJECT: the
    // event's infos (shallow copies: the chain owns them) and that object; kept until the next call.
    std::vector<pmix_info_t> call_info;

    running_chain(Client *c, event_chain ch) : client(c), chain(std::move(ch)) {}
};

// Chains started but not finished: bounded, so a flood of events cannot grow memory without end
// when handlers do not complete (events beyond it are dropped with a log line).
constexpr size_t kMaxRunningChains = 4096;
std::atomic<size_t> g_running_chains{0};
std::atomic<uint64_t> g_dropped_events{0};

void chain_step(running_chain *rc);

void chain_finish(running_chain *rc) {
    if (rc->cbfunc) rc->cbfunc(PMIX_SUCCESS, rc->cbdata);
    delete rc;
    g_running_chains.fetch_sub(1);
}

// The completion function a handler calls when it is done with the event (any thread).
void chain_handler_done(pmix_status_t status, pmix_info_t *results, size_t nresults, pmix_op_cbfunc_t cbfunc,
                        void *thiscbdata, void *notification_cbdata) {
    auto *rc = static_cast<running_chain *>(notification_cbdata);
    if (rc == nullptr) return;
    Status st = rc->chain.handler_done(status, results, nresults);
    if (!st.ok()) PMIXCPP_LOG_ERROR("event %d: %s", rc->chain.status(), st.message().c_str());
    // The handler may release its results now: they were copied.
    if (cbfunc) cbfunc(PMIX_SUCCESS, thiscbdata);
    if (rc->in_call && rc->client->loop().on_thread()) {
        rc->completed_in_call = true;  // chain_step continues once the handler returns
        return;
    }
    // Continue on the progress thread, never recursively inside the handler.
    rc->client->loop().post([rc] { chain_step(rc); });
}

void chain_step(running_chain *rc) {
    while (true) {
        auto h = rc->chain.next();
        if (!h) {
            chain_finish(rc);
            return;
        }
        // A handler deregistered since the chain was built is not called any more.
        if (!rc->client->has_event_handler(h->ref)) {
            // no results to merge, and the chain is in this handler: it cannot fail
            (void)rc->chain.handler_done(rc->chain.last_handler_status(), nullptr, 0);
            continue;
        }
        InfoArray &results = rc->chain.results();
        rc->in_call = true;
        rc->completed_in_call = false;
        const pmix_info_t *info = rc->chain.info().data();
        size_t ninfo = rc->chain.info().size();
        if (h->has_return_object) {
            rc->call_info.assign(info, info + ninfo);
            pmix_info_t ro{};
            strncpy(ro.key, PMIX_EVENT_RETURN_OBJECT, PMIX_MAX_KEYLEN);
            ro.value.type = PMIX_POINTER;
            ro.value.data.ptr = h->return_object;
            rc->call_info.push_back(ro);
            info = rc->call_info.data();
            ninfo = rc->call_info.size();
        }
        h->fn(h->ref, rc->chain.status(), &rc->chain.source(), const_cast<pmix_info_t *>(info), ninfo,
              results.data(), results.size(), chain_handler_done, rc);
        rc->in_call = false;
        if (!rc->completed_in_call) return;  // completes later, from wherever the handler chooses
    }
}

// Start a chain on the progress thread (the caller is on it).
void start_chain(Client *c, pmix_status_t status, const pmix_proc_t &source, InfoArray info,
                 std::vector<event_handler_entry> handlers, pmix_op_cbfunc_t cbfunc, void *cbdata) {
    g_running_chains.fetch_add(1);
    auto *rc = new running_chain(c, event_chain(status, source, std::move(info), std::move(handlers)));
    rc->cbfunc = cbfunc;
    rc->cbdata = cbdata;
    chain_step(rc);
}

// Syslog priority of a log request: PMIX_LOG_SYSLOG_PRI, else LOG_INFO.
int syslog_priority(const pmix_info_t *dirs, size_t ndirs) {
    const pmix_info_t *p = find_info(dirs, ndirs, PMIX_LOG_SYSLOG_PRI);
    if (p == nullptr) return LOG_INFO;
    auto n = value_to_number<int>(p->value);
    return n.ok() && n.value() >= 0 && n.value() <= LOG_DEBUG ? n.value() : LOG_INFO;
}

// Send the syslog channels of a log request to this node's syslog (as the process's own user).
void syslog_log(const pmix_info_t *data, size_t ndata, const pmix_info_t *dirs, size_t ndirs, bool once,
                bool *printed) {
    for (size_t i = 0; i < ndata && !(once && *printed); ++i) {
        const pmix_info_t &d = data[i];
        if (strncmp(d.key, PMIX_LOG_SYSLOG, PMIX_MAX_KEYLEN) != 0 &&
            strncmp(d.key, PMIX_LOG_LOCAL_SYSLOG, PMIX_MAX_KEYLEN) != 0)
            continue;
        if (d.value.type != PMIX_STRING || d.value.data.string == nullptr) continue;
        syslog(syslog_priority(dirs, ndirs) | LOG_USER, "%s", d.value.data.string);
        *printed = true;
    }
}

// Print the messages of a log request locally (with `once`, only the first).
void print_log(const pmix_info_t *data, size_t ndata, bool *printed, bool once = false) {
    for (size_t i = 0; i < ndata && !(once && *printed); ++i) {
        const pmix_info_t &d = data[i];
        FILE *to = nullptr;
        if (strncmp(d.key, PMIX_LOG_MSG, PMIX_MAX_KEYLEN) == 0 ||
            strncmp(d.key, PMIX_LOG_STDERR, PMIX_MAX_KEYLEN) == 0)
            to = stderr;
        else if (strncmp(d.key, PMIX_LOG_STDOUT, PMIX_MAX_KEYLEN) == 0)
            to = stdout;
        if (to == nullptr) continue;
        const pmix_value_t &v = d.value;
        if (v.type == PMIX_STRING && v.data.string != nullptr) {
            size_t n = strlen(v.data.string);
            fprintf(to, "%s%s", v.data.string, n > 0 && v.data.string[n - 1] == '\n' ? "" : "\n");
        } else if (v.type == PMIX_BYTE_OBJECT && v.data.bo.bytes != nullptr) {
            size_t n = strnlen(v.data.bo.bytes, v.data.bo.size);
            fwrite(v.data.bo.bytes, 1, n, to);
            if (n == 0 || v.data.bo.bytes[n - 1] != '\n') fputc('\n', to);
        } else {
            continue;
        }
        fflush(to);
        *printed = true;
    }
}

void release_infos(void *cbdata) { delete static_cast<InfoArray *>(cbdata); }

Status send_job_control(Client &c, const pmix_proc_t targets[], size_t ntargets,
                        const pmix_info_t directives[], size_t ndirs,
                        std::function<void(pmix_status_t, InfoArray &&)> done) {
    if (ntargets > 0 && targets == nullptr)
        return Status(PMIX_ERR_BAD_PARAM, "targets is NULL but ntargets > 0");
    for (size_t i = 0; i < ntargets; ++i) PMIXCPP_RETURN_IF_ERROR(check_proc(&targets[i]));
    PMIXCPP_RETURN_IF_ERROR(check_infos(directives, ndirs));
    wire::job_control_request req;
    req.targets.assign(targets, targets + ntargets);
    PMIXCPP_RETURN_IF_ERROR(info_array_copy(directives, ndirs, &req.infos));
    wire::Writer w;
    PMIXCPP_RETURN_IF_ERROR(wire::encode(w, req));
    return c.request(wire::msg_type::job_control, w,
                     [done](pmix_status_t status, const std::string &msg, wire::Reader &body) {
                         wire::job_control_reply reply;
                         if (status == PMIX_SUCCESS) {
                             Status st = wire::decode(body, &reply);
                             if (!st.ok()) status = PMIX_ERR_UNPACK_FAILURE;
                         } else {
                             PMIXCPP_LOG_DEBUG("job control: %s %s", PMIx_Error_string(status), msg.c_str());
                         }
                         done(status, std::move(reply.results));
                     });
}

// The client for a blocking call that hands back results: none yet, and never from a callback.
Result<Client *> blocking_client(const char *fn, pmix_info_t **results, size_t *nresults) {
    PMIXCPP_ASSIGN_OR_RETURN(auto c, require_client());
    if (results != nullptr) *results = nullptr;
    if (nresults != nullptr) *nresults = 0;
    if (on_progress_thread(c))
        return Status(PMIX_ERR_WOULD_BLOCK, std::string(fn) + " called from a callback");
    return c;
}

Status send_monitor(Client &c, const pmix_info_t *monitor, pmix_status_t error, const pmix_info_t directives[],
                    size_t ndirs, std::function<void(pmix_status_t)> done) {
    if (monitor == nullptr) return Status(PMIX_ERR_BAD_PARAM, "monitor is NULL");
    PMIXCPP_RETURN_IF_ERROR(check_infos(monitor, 1));
    PMIXCPP_RETURN_IF_ERROR(check_infos(directives, ndirs));
    wire::monitor_request req;
    if (monitor->value.type == PMIX_POINTER) {
        // PMIX_MONITOR_HEARTBEAT and PMIX_SEND_HEARTBEAT are loaded as NULL pointers by the
        // standard's own examples: only the key matters, and a pointer means nothing to the server.
        pmix_info_t key_only{};
        memcpy(key_only.key, monitor->key, sizeof(key_only.key));
        key_only.value.type = PMIX_UNDEF;
        PMIXCPP_RETURN_IF_ERROR(info_array_copy(&key_only, 1, &req.monitor));
    } else {
        PMIXCPP_RETURN_IF_ERROR(info_array_copy(monitor, 1, &req.monitor));
    }
    req.error = error;
    PMIXCPP_RETURN_IF_ERROR(info_array_copy(directives, ndirs, &req.directives));
    wire::Writer w;
    PMIXCPP_RETURN_IF_ERROR(wire::encode(w, req));
    return c.request(wire::msg_type::monitor, w, [done](pmix_status_t status, const std::string &msg, wire::Reader &) {
        if (status != PMIX_SUCCESS) PMIXCPP_LOG_DEBUG("monitor: %s %s", PMIx_Error_string(status), msg.c_str());
        done(status);
    });
}

// A process initialised with PMIx_server_init(PMIX_SERVER_SCHEDULER) and no client connection:
// its fabric events come from the scheduler context (client/sched), which waits for every
// handler's completion before it touches a matrix.
sched::scheduler_context *scheduler_events() {
    if (current() != nullptr) return nullptr;
    sched::scheduler_context *ctx = sched::current_context();
    return ctx != nullptr && ctx->scheduler() ? ctx : nullptr;
}

pmix_status_t register_fabric_handler(sched::scheduler_context *ctx, const pmix_status_t codes[], size_t ncodes,
                                      pmix_notification_fn_t evhdlr, pmix_hdlr_reg_cbfunc_t cbfunc, void *cbdata) {
    if (evhdlr == nullptr || (ncodes > 0 && codes == nullptr)) return PMIX_ERR_BAD_PARAM;
    std::vector<pmix_status_t> wanted;  // none = a default handler: both fabric events
    for (size_t i = 0; i < ncodes; ++i) {
        if (codes[i] != PMIX_FABRIC_UPDATE_PENDING && codes[i] != PMIX_FABRIC_UPDATED) {
            PMIXCPP_LOG_DEBUG("scheduler process: only fabric events can be registered, not %s",
                              PMIx_Error_string(codes[i]));
            return PMIX_ERR_NOT_SUPPORTED;
        }
        wanted.push_back(codes[i]);
    }
    size_t ref = ctx->add_handler(evhdlr, std::move(wanted));
    if (cbfunc == nullptr) return static_cast<pmix_status_t>(ref);
    cbfunc(PMIX_SUCCESS, ref, cbdata);
    return PMIX_SUCCESS;
}

}  // namespace

namespace pmixcpp::client {

void run_server_event(Client &c, shared_event ev) {
    group_observe_event(c, *ev);
    auto handlers = c.take_server_event(ev);
    if (handlers.empty()) return;
    if (g_running_chains.load() >= kMaxRunningChains) {
        uint64_t n = g_dropped_events.fetch_add(1) + 1;
        if ((n & (n - 1)) == 0)  // 1, 2, 4, 8, ...: a flood does not flood the log too
            PMIXCPP_LOG_ERROR("event %d dropped: %zu event chains are still running (%llu dropped so far)",
                              ev->status, kMaxRunningChains, static_cast<unsigned long long>(n));
        return;
    }
    InfoArray info;
    if (!info_array_copy(ev->infos.data(), ev->infos.size(), &info).ok()) return;
    start_chain(&c, ev->status, ev->source, std::move(info), std::move(handlers), nullptr, nullptr);
}

namespace {
// The event a signal becomes: (code, source, infos). See events_signals.h.
InfoArray signal_event_infos(Client &c, int sig, pmix_proc_t *src) {
    *src = c.self();
    src->rank = PMIX_RANK_UNDEF;  // the resource manager
    pmix_proc_t self = c.self();
    const char *name = signal_short_name(sig);
    std::string text = std::string("received SIG") + (name ? name : std::to_string(sig).c_str());
    bool t = true;
    auto *arr = static_cast<pmix_info_t *>(calloc(4, sizeof(pmix_info_t)));
    if (arr == nullptr) return InfoArray();
    InfoArray info(arr, 4);
    PMIx_Info_load(&arr[0], PMIX_EVENT_NON_DEFAULT, &t, PMIX_BOOL);
    PMIx_Info_load(&arr[1], PMIX_EVENT_AFFECTED_PROC, &self, PMIX_PROC);
    PMIx_Info_load(&arr[2], kSignalKey, &sig, PMIX_INT);
    PMIx_Info_load(&arr[3], PMIX_EVENT_TEXT_MESSAGE, text.c_str(), PMIX_STRING);
    return info;
}
}  // namespace

bool signal_event_wanted(Client &c, int sig) {
    pmix_proc_t src;
    InfoArray info = signal_event_infos(c, sig, &src);
    return !c.event_chain_for(signal_event_code(sig), src, info.data(), info.size()).empty();
}

bool run_signal_event(Client &c, int sig) {
    pmix_proc_t src;
    InfoArray info = signal_event_infos(c, sig, &src);
    if (info.data() == nullptr) return false;
    pmix_status_t code = signal_event_code(sig);
    const char *name = signal_short_name(sig);
    std::string text = std::string("SIG") + (name ? name : std::to_string(sig).c_str());
    auto handlers = c.event_chain_for(code, src, info.data(), info.size());
    PMIXCPP_LOG_DEBUG("%s: event %s for %zu handlers", text.c_str(), PMIx_Error_string(code), handlers.size());
    if (handlers.empty()) return false;
    start_chain(&c, code, src, std::move(info), std::move(handlers), nullptr, nullptr);
    return true;
}

}  // namespace pmixcpp::client

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_Register_event_handler(pmix_status_t codes[], size_t ncodes,
                                                      pmix_info_t info[], size_t ninfo,
                                                      pmix_notification_fn_t evhdlr,
                                                      pmix_hdlr_reg_cbfunc_t cbfunc, void *cbdata) {
    return api_guard(__func__, [&]() -> pmix_status_t {
        if (auto *ctx = scheduler_events()) return register_fabric_handler(ctx, codes, ncodes, evhdlr, cbfunc, cbdata);
        auto c = require_client();
        if (!c.ok()) return c.status().code();
        if (evhdlr == nullptr) return PMIX_ERR_BAD_PARAM;
        if (ncodes > 0 && codes == nullptr) return PMIX_ERR_BAD_PARAM;
        if (!check_infos(info, ninfo).ok()) return PMIX_ERR_BAD_PARAM;
        Client *cl = c.value();
        std::vector<shared_event> replay;
        auto ref = cl->add_event_handler(codes, ncodes, info, ninfo, evhdlr, &replay);
        if (!ref.ok()) {
            PMIXCPP_LOG_DEBUG("event handler registration refused: %s", ref.status().message().c_str());
            return ref.status().code();
        }
        size_t r = ref.value();
        update_signal_interest(*cl);
        // Registration callback first, then the cached events this handler missed, to it alone.
        cl->loop().post([cl, cbfunc, r, cbdata, replay = std::move(replay)] {
            if (cbfunc) cbfunc(PMIX_SUCCESS, r, cbdata);
            for (const auto &ev : replay) {
                auto handlers = cl->event_chain_for(ev->status, ev->source, ev->infos.data(), ev->infos.size());
                std::erase_if(handlers, [r](const event_handler_entry &h) { return h.ref != r; });
                InfoArray info;
                if (handlers.empty() || !info_array_copy(ev->infos.data(), ev->infos.size(), &info).ok()) continue;
                start_chain(cl, ev->status, ev->source, std::move(info), std::move(handlers), nullptr, nullptr);
            }
        });
        if (cbfunc == nullptr) return static_cast<pmix_status_t>(r);  // blocking form: the reference
        return PMIX_SUCCESS;
    });
}

PMIX_EXPORT pmix_status_t PMIx_Deregister_event_handler(size_t evhdlr_ref, pmix_op_cbfunc_t cbfunc,
                                                        void *cbdata) {
    return api_guard(__func__, [&]() -> pmix_status_t {
        if (auto *ctx = scheduler_events()) {
            if (!ctx->remove_handler(evhdlr_ref)) return PMIX_ERR_NOT_FOUND;
            if (cbfunc != nullptr) cbfunc(PMIX_SUCCESS, cbdata);
            return PMIX_SUCCESS;
        }
        auto c = require_client();
        if (!c.ok()) return c.status().code();
        if (!c.value()->remove_event_handler(evhdlr_ref)) return PMIX_ERR_NOT_FOUND;
        update_signal_interest(*c.value());
        if (cbfunc == nullptr) return PMIX_SUCCESS;
        c.value()->loop().post([cbfunc, cbdata] { cbfunc(PMIX_SUCCESS, cbdata); });
        return PMIX_SUCCESS;
    });
}

// PMIX_RANGE_PROC_LOCAL runs this process's own handlers; every other range goes to the server,
// which delivers to the processes in range (this one included) and answers once it has routed
// the event: the callback then carries the server's status.
PMIX_EXPORT pmix_status_t PMIx_Notify_event(pmix_status_t status, const pmix_proc_t *source,
                                            pmix_data_range_t range, const pmix_info_t info[], size_t ninfo,
                                            pmix_op_cbfunc_t cbfunc, void *cbdata) {
    return api_guard(__func__, [&]() -> Status {
        PMIXCPP_ASSIGN_OR_RETURN(auto c, require_client());
        PMIXCPP_RETURN_IF_ERROR(check_infos(info, ninfo));
        if (source != nullptr) PMIXCPP_RETURN_IF_ERROR(check_proc(source));
        if (range == PMIX_RANGE_INVALID || range > PMIX_RANGE_PROC_LOCAL)
            return Status(PMIX_ERR_BAD_PARAM, "invalid range " + std::to_string(range));
        if (range == PMIX_RANGE_CUSTOM && find_info(info, ninfo, PMIX_EVENT_CUSTOM_RANGE) == nullptr)
            return Status(PMIX_ERR_BAD_PARAM, "PMIX_RANGE_CUSTOM needs PMIX_EVENT_CUSTOM_RANGE");
        Client *cl = c;
        const pmix_proc_t src = source != nullptr ? *source : cl->self();
        InfoArray copy;
        PMIXCPP_RETURN_IF_ERROR(info_array_copy(info, ninfo, &copy));
        if (range == PMIX_RANGE_PROC_LOCAL) {
            auto handlers = cl->event_chain_for(status, src, info, ninfo);
            auto held = std::make_shared<InfoArray>(std::move(copy));
            cl->loop().post([cl, status, src, held, handlers = std::move(handlers), cbfunc, cbdata]() mutable {
                start_chain(cl, status, src, std::move(*held), std::move(handlers), cbfunc, cbdata);
            });
            return Status::success();
        }
        wire::event_notification ev;
        ev.status = status;
        ev.source = src;
        ev.range = range;
        ev.infos = std::move(copy);
        wire::Writer w;
        PMIXCPP_RETURN_IF_ERROR(wire::encode(w, ev));
        return cl->request(wire::msg_type::notify, w,
                           [cbfunc, cbdata](pmix_status_t st, const std::string &msg, wire::Reader &) {
                               if (st != PMIX_SUCCESS)
                                   PMIXCPP_LOG_DEBUG("notify: server answered %s %s", PMIx_Error_string(st),
                                                     msg.c_str());
                               if (cbfunc) cbfunc(st, cbdata);
                           });
    });
}

PMIX_EXPORT pmix_status_t PMIx_Log_nb(const pmix_info_t data[], size_t ndata, const pmix_info_t directives[],
                                      size_t ndirs, pmix_op_cbfunc_t cbfunc, void *cbdata) {
    return api_guard(__func__, [&]() -> Status {
        PMIXCPP_RETURN_IF_ERROR(check_infos(data, ndata));
        PMIXCPP_RETURN_IF_ERROR(check_infos(directives, ndirs));
        if (ndata == 0) return Status(PMIX_ERR_BAD_PARAM, "nothing to log");
        bool printed = false;
        // PMIX_LOG_ONCE: the first channel that can take the message gets it, in the order
        // stderr/stdout, syslog, then the server's host log (Slurm's log of the step).
        const bool once = info_true(directives, ndirs, PMIX_LOG_ONCE);
        print_log(data, ndata, &printed, once);  // even before init: the user must see early errors
        syslog_log(data, ndata, directives, ndirs, once, &printed);
        PMIXCPP_ASSIGN_OR_RETURN(auto c, require_client());
        if (once && printed) {
            if (cbfunc) c->loop().post([cbfunc, cbdata] { cbfunc(PMIX_SUCCESS, cbdata); });
            return Status::success();
        }
        wire::log_request req;
        PMIXCPP_RETURN_IF_ERROR(info_array_copy(data, ndata, &req.data));
        PMIXCPP_RETURN_IF_ERROR(info_array_copy(directives, ndirs, &req.directives));
        wire::Writer w;
        PMIXCPP_RETURN_IF_ERROR(wire::encode(w, req));
        Status st = c->request(
            wire::msg_type::log, w, [](pmix_status_t status, const std::string &msg, wire::Reader &) {
                if (status != PMIX_SUCCESS)
                    PMIXCPP_LOG_DEBUG("log: server answered %s %s", PMIx_Error_string(status), msg.c_str());
            });
        if (!st.ok() && !printed) return st;
        if (cbfunc) c->loop().post([cbfunc, cbdata] { cbfunc(PMIX_SUCCESS, cbdata); });
        return Status::success();
    });
}

PMIX_EXPORT pmix_status_t PMIx_Log(const pmix_info_t data[], size_t ndata, const pmix_info_t directives[],
                                   size_t ndirs) {
    // Local printing is synchronous and the forward needs no answer: the nb twin without a callback.
    return PMIx_Log_nb(data, ndata, directives, ndirs, nullptr, nullptr);
}

PMIX_EXPORT pmix_status_t PMIx_Job_control_nb(const pmix_proc_t targets[], size_t ntargets,
                                              const pmix_info_t directives[], size_t ndirs,
                                              pmix_info_cbfunc_t cbfunc, void *cbdata) {
    return api_guard(__func__, [&]() -> Status {
        PMIXCPP_ASSIGN_OR_RETURN(auto c, require_client());
        return send_job_control(*c, targets, ntargets, directives, ndirs,
                                [cbfunc, cbdata](pmix_status_t status, InfoArray &&results) {
                                    if (cbfunc == nullptr) return;
                                    auto *keep = new InfoArray(std::move(results));
                                    cbfunc(status, keep->data(), keep->size(), cbdata, release_infos, keep);
                                });
    });
}

PMIX_EXPORT pmix_status_t PMIx_Process_monitor_nb(const pmix_info_t *monitor, pmix_status_t error,
                                                  const pmix_info_t directives[], size_t ndirs,
                                                  pmix_info_cbfunc_t cbfunc, void *cbdata) {
    return api_guard(__func__, [&]() -> Status {
        PMIXCPP_ASSIGN_OR_RETURN(auto c, require_client());
        // PMIx_Heartbeat passes no callback: nobody waits for the answer.
        return send_monitor(*c, monitor, error, directives, ndirs, [cbfunc, cbdata](pmix_status_t status) {
            if (cbfunc != nullptr) cbfunc(status, nullptr, 0, cbdata, nullptr, nullptr);
        });
    });
}

PMIX_EXPORT pmix_status_t PMIx_Process_monitor(const pmix_info_t *monitor, pmix_status_t error,
                                               const pmix_info_t directives[], size_t ndirs, pmix_info_t **results,
                                               size_t *nresults) {
    return api_guard(__func__, [&]() -> Status {
        PMIXCPP_ASSIGN_OR_RETURN(auto c, blocking_client("PMIx_Process_monitor", results, nresults));
        auto sync = std::make_shared<Sync<pmix_status_t>>();
        PMIXCPP_RETURN_IF_ERROR(send_monitor(*c, monitor, error, directives, ndirs,
                                             [sync](pmix_status_t status) { sync->set(status); }));
        return Status(sync->wait(), "process monitor failed");
    });
}

PMIX_EXPORT pmix_status_t PMIx_Job_control(const pmix_proc_t targets[], size_t ntargets,
                                           const pmix_info_t directives[], size_t ndirs,
                                           pmix_info_t **results, size_t *nresults) {
    return api_guard(__func__, [&]() -> Status {
        PMIXCPP_ASSIGN_OR_RETURN(auto c, blocking_client("PMIx_Job_control", results, nresults));
        struct Outcome {
            pmix_status_t status = PMIX_ERROR;
            InfoArray results;
        };
        auto sync = std::make_shared<Sync<Outcome>>();
        PMIXCPP_RETURN_IF_ERROR(send_job_control(*c, targets, ntargets, directives, ndirs,
                                                 [sync](pmix_status_t status, InfoArray &&r) {
                                                     Outcome o;
                                                     o.status = status;
                                                     o.results = std::move(r);
                                                     sync->set(std::move(o));
                                                 }));
        Outcome &o = sync->wait();
        if (o.status == PMIX_SUCCESS && results != nullptr && nresults != nullptr) {
            *nresults = o.results.size();
            *results = o.results.release();
        }
        return Status(o.status, "job control failed");
    });
}

}  // extern "C"
