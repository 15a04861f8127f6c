// Event handler registration, PMIx_Notify_event (this process's own handlers only, range
// PMIX_RANGE_PROC_LOCAL), PMIx_Log(_nb), PMIx_Job_control(_nb).
#include <pmix.h>

#include <cstdio>
#include <memory>

#include "api.h"

using namespace pmixcpp;
using namespace pmixcpp::client;

namespace {

// One notification walking the handler chain on the progress thread.
struct EventChain {
    Client *client = nullptr;
    pmix_status_t status = PMIX_SUCCESS;
    pmix_proc_t source{};
    InfoArray info;
    std::vector<EventHandler> handlers;
    size_t next = 0;
    pmix_op_cbfunc_t cbfunc = nullptr;
    void *cbdata = nullptr;
};

void chain_step(EventChain *chain);

void chain_finish(EventChain *chain) {
    if (chain->cbfunc) chain->cbfunc(PMIX_SUCCESS, chain->cbdata);
    delete chain;
}

// The completion function a handler calls when it is done with the event.
void chain_handler_done(pmix_status_t status, pmix_info_t *, size_t, pmix_op_cbfunc_t cbfunc,
                        void *thiscbdata, void *notification_cbdata) {
    auto *chain = static_cast<EventChain *>(notification_cbdata);
    if (cbfunc) cbfunc(PMIX_SUCCESS, thiscbdata);
    if (status == PMIX_EVENT_ACTION_COMPLETE) {
        chain->next = chain->handlers.size();
    }
    // Continue on the progress thread, never recursively inside the handler.
    chain->client->loop().post([chain] { chain_step(chain); });
}

void chain_step(EventChain *chain) {
    if (chain->next >= chain->handlers.size()) {
        chain_finish(chain);
        return;
    }
    const EventHandler &h = chain->handlers[chain->next++];
    h.fn(h.ref, chain->status, &chain->source, chain->info.data(), chain->info.size(), nullptr, 0,
         chain_handler_done, chain);
}

Status copy_infos(const pmix_info_t *info, size_t ninfo, InfoArray *out) {
    if (ninfo == 0) return Status::success();
    auto *copy = static_cast<pmix_info_t *>(calloc(ninfo, sizeof(pmix_info_t)));
    if (copy == nullptr) return Status(PMIX_ERR_NOMEM, "out of memory");
    *out = InfoArray(copy, ninfo);
    for (size_t i = 0; i < ninfo; ++i) PMIXCPP_RETURN_IF_ERROR(info_xfer(&copy[i], &info[i]));
    return Status::success();
}

// Print the messages of a log request locally.
void print_log(const pmix_info_t *data, size_t ndata, bool *printed) {
    for (size_t i = 0; i < ndata; ++i) {
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
    PMIXCPP_RETURN_IF_ERROR(copy_infos(directives, ndirs, &req.infos));
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

}  // namespace

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_Register_event_handler(pmix_status_t codes[], size_t ncodes,
                                                      pmix_info_t info[], size_t ninfo,
                                                      pmix_notification_fn_t evhdlr,
                                                      pmix_hdlr_reg_cbfunc_t cbfunc, void *cbdata) {
    return api_guard(__func__, [&]() -> pmix_status_t {
        auto c = require_client();
        if (!c.ok()) return c.status().code();
        if (evhdlr == nullptr) return PMIX_ERR_BAD_PARAM;
        if (ncodes > 0 && codes == nullptr) return PMIX_ERR_BAD_PARAM;
        if (!check_infos(info, ninfo).ok()) return PMIX_ERR_BAD_PARAM;
        EventHandler h;
        h.codes.assign(codes, codes + ncodes);
        h.fn = evhdlr;
        if (const pmix_info_t *n = find_info(info, ninfo, PMIX_EVENT_HDLR_NAME))
            if (n->value.type == PMIX_STRING && n->value.data.string) h.name = n->value.data.string;
        bool prepend =
            info_true(info, ninfo, PMIX_EVENT_HDLR_PREPEND) || info_true(info, ninfo, PMIX_EVENT_HDLR_FIRST);
        size_t ref = c.value()->add_event_handler(std::move(h), prepend);
        if (cbfunc == nullptr) return static_cast<pmix_status_t>(ref);  // blocking form: the reference
        c.value()->loop().post([cbfunc, ref, cbdata] { cbfunc(PMIX_SUCCESS, ref, cbdata); });
        return PMIX_SUCCESS;
    });
}

PMIX_EXPORT pmix_status_t PMIx_Deregister_event_handler(size_t evhdlr_ref, pmix_op_cbfunc_t cbfunc,
                                                        void *cbdata) {
    return api_guard(__func__, [&]() -> pmix_status_t {
        auto c = require_client();
        if (!c.ok()) return c.status().code();
        if (!c.value()->remove_event_handler(evhdlr_ref)) return PMIX_ERR_NOT_FOUND;
        if (cbfunc == nullptr) return PMIX_SUCCESS;
        c.value()->loop().post([cbfunc, cbdata] { cbfunc(PMIX_SUCCESS, cbdata); });
        return PMIX_SUCCESS;
    });
}

// Delivery to other processes needs server support (a later issue): only PMIX_RANGE_PROC_LOCAL
// is served, by running this process's own handlers.
PMIX_EXPORT pmix_status_t PMIx_Notify_event(pmix_status_t status, const pmix_proc_t *source,
                                            pmix_data_range_t range, const pmix_info_t info[], size_t ninfo,
                                            pmix_op_cbfunc_t cbfunc, void *cbdata) {
    return api_guard(__func__, [&]() -> Status {
        auto c = require_client();
        if (!c.ok()) return c.status();
        PMIXCPP_RETURN_IF_ERROR(check_infos(info, ninfo));
        if (source != nullptr) PMIXCPP_RETURN_IF_ERROR(check_proc(source));
        if (range != PMIX_RANGE_PROC_LOCAL)
            return Status(PMIX_ERR_NOT_SUPPORTED,
                          "events beyond PMIX_RANGE_PROC_LOCAL are not supported yet");
        auto chain = std::make_unique<EventChain>();
        chain->client = c.value();
        chain->status = status;
        chain->source = source != nullptr ? *source : c.value()->self();
        PMIXCPP_RETURN_IF_ERROR(copy_infos(info, ninfo, &chain->info));
        chain->handlers = c.value()->event_handlers_for(status);
        chain->cbfunc = cbfunc;
        chain->cbdata = cbdata;
        EventChain *p = chain.release();
        c.value()->loop().post([p] { chain_step(p); });
        return Status::success();
    });
}

PMIX_EXPORT pmix_status_t PMIx_Log_nb(const pmix_info_t data[], size_t ndata, const pmix_info_t directives[],
                                      size_t ndirs, pmix_op_cbfunc_t cbfunc, void *cbdata) {
    return api_guard(__func__, [&]() -> Status {
        PMIXCPP_RETURN_IF_ERROR(check_infos(data, ndata));
        PMIXCPP_RETURN_IF_ERROR(check_infos(directives, ndirs));
        if (ndata == 0) return Status(PMIX_ERR_BAD_PARAM, "nothing to log");
        bool printed = false;
        print_log(data, ndata, &printed);  // even before init: the user must see early errors
        auto c = require_client();
        if (!c.ok()) return c.status();
        wire::log_request req;
        PMIXCPP_RETURN_IF_ERROR(copy_infos(data, ndata, &req.data));
        PMIXCPP_RETURN_IF_ERROR(copy_infos(directives, ndirs, &req.directives));
        wire::Writer w;
        PMIXCPP_RETURN_IF_ERROR(wire::encode(w, req));
        Status st = c.value()->request(
            wire::msg_type::log, w, [](pmix_status_t status, const std::string &msg, wire::Reader &) {
                if (status != PMIX_SUCCESS)
                    PMIXCPP_LOG_DEBUG("log: server answered %s %s", PMIx_Error_string(status), msg.c_str());
            });
        if (!st.ok() && !printed) return st;
        if (cbfunc) c.value()->loop().post([cbfunc, cbdata] { cbfunc(PMIX_SUCCESS, cbdata); });
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
        auto c = require_client();
        if (!c.ok()) return c.status();
        return send_job_control(*c.value(), targets, ntargets, directives, ndirs,
                                [cbfunc, cbdata](pmix_status_t status, InfoArray &&results) {
                                    if (cbfunc == nullptr) return;
                                    auto *keep = new InfoArray(std::move(results));
                                    cbfunc(status, keep->data(), keep->size(), cbdata, release_infos, keep);
                                });
    });
}

PMIX_EXPORT pmix_status_t PMIx_Job_control(const pmix_proc_t targets[], size_t ntargets,
                                           const pmix_info_t directives[], size_t ndirs,
                                           pmix_info_t **results, size_t *nresults) {
    return api_guard(__func__, [&]() -> Status {
        auto c = require_client();
        if (!c.ok()) return c.status();
        if (results != nullptr) *results = nullptr;
        if (nresults != nullptr) *nresults = 0;
        if (on_progress_thread(c.value()))
            return Status(PMIX_ERR_WOULD_BLOCK, "PMIx_Job_control called from a callback");
        struct Outcome {
            pmix_status_t status = PMIX_ERROR;
            InfoArray results;
        };
        auto sync = std::make_shared<Sync<Outcome>>();
        PMIXCPP_RETURN_IF_ERROR(send_job_control(*c.value(), targets, ntargets, directives, ndirs,
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
