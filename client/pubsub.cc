// PMIx_Publish / PMIx_Lookup / PMIx_Unpublish (blocking and _nb): sent to the node's server, which
// keeps the data in the step's node-0 server (plugin/server/pubsub.h). Directives: PMIX_RANGE,
// PMIX_PERSISTENCE (publish), PMIX_WAIT and PMIX_TIMEOUT (lookup).
#include <pmix.h>

#include <cstdlib>
#include <cstring>
#include <memory>

#include "api.h"
#include "format.h"
#include "info_call.h"

using namespace pmixcpp;
using namespace pmixcpp::client;

namespace {

using status_fn = std::function<void(pmix_status_t)>;
using lookup_fn = std::function<void(pmix_status_t, wire::lookup_reply &&)>;

// A lookup's pmix_pdata_t array, owned until the callback returns.
struct pdata_array {
    pmix_pdata_t *data = nullptr;
    size_t n = 0;
    ~pdata_array() {
        for (size_t i = 0; i < n; ++i) value_destruct(&data[i].value);
        free(data);
    }
};

Status check_keys(char **keys, bool allow_empty, std::vector<std::string> *out) {
    if (keys == nullptr) {
        if (allow_empty) return Status::success();
        return Status(PMIX_ERR_BAD_PARAM, "no keys");
    }
    for (size_t i = 0; keys[i] != nullptr; ++i) {
        PMIXCPP_RETURN_IF_ERROR(check_key(keys[i]));
        out->emplace_back(keys[i]);
    }
    if (out->empty() && !allow_empty) return Status(PMIX_ERR_BAD_PARAM, "no keys");
    return Status::success();
}

Status send_status_request(Client &c, wire::msg_type type, const wire::Writer &w, status_fn done) {
    const char *what = wire::to_string(type);
    return c.request(type, w, [done, what](pmix_status_t st, const std::string &msg, wire::Reader &) {
        if (st != PMIX_SUCCESS) PMIXCPP_LOG_DEBUG("%s: %s %s", what, PMIx_Error_string(st), msg.c_str());
        done(st);
    });
}

Status send_publish(Client &c, const pmix_info_t info[], size_t ninfo, status_fn done) {
    PMIXCPP_RETURN_IF_ERROR(check_infos(info, ninfo));
    if (ninfo == 0) return Status(PMIX_ERR_BAD_PARAM, "nothing to publish");
    wire::publish_request req;
    // Directives travel with the data in one array: split them out.
    size_t ndata = 0, ndirs = 0;
    auto is_directive = [](const pmix_info_t &i) {
        return strncmp(i.key, PMIX_RANGE, PMIX_MAX_KEYLEN) == 0 ||
               strncmp(i.key, PMIX_PERSISTENCE, PMIX_MAX_KEYLEN) == 0 ||
               strncmp(i.key, PMIX_TIMEOUT, PMIX_MAX_KEYLEN) == 0;
    };
    for (size_t i = 0; i < ninfo; ++i) (is_directive(info[i]) ? ndirs : ndata)++;
    if (ndata == 0) return Status(PMIX_ERR_BAD_PARAM, "nothing to publish");
    auto *data = static_cast<pmix_info_t *>(calloc(ndata, sizeof(pmix_info_t)));
    if (data == nullptr) return Status(PMIX_ERR_NOMEM, "out of memory");
    req.data = InfoArray(data, ndata);
    if (ndirs > 0) {
        auto *dirs = static_cast<pmix_info_t *>(calloc(ndirs, sizeof(pmix_info_t)));
        if (dirs == nullptr) return Status(PMIX_ERR_NOMEM, "out of memory");
        req.directives = InfoArray(dirs, ndirs);
    }
    size_t d = 0, k = 0;
    for (size_t i = 0; i < ninfo; ++i) {
        if (is_directive(info[i])) PMIXCPP_RETURN_IF_ERROR(info_xfer(&req.directives[k++], &info[i]));
        else PMIXCPP_RETURN_IF_ERROR(info_xfer(&req.data[d++], &info[i]));
    }
    if (get_log_level() >= log_level::debug)
        PMIXCPP_LOG_DEBUG("publish: %s", format_infos_brief(info, ninfo).c_str());
    wire::Writer w;
    PMIXCPP_RETURN_IF_ERROR(wire::encode(w, req));
    return send_status_request(c, wire::msg_type::publish, w, std::move(done));
}

Status send_lookup(Client &c, std::vector<std::string> keys, const pmix_info_t info[], size_t ninfo,
                   lookup_fn done) {
    PMIXCPP_RETURN_IF_ERROR(check_infos(info, ninfo));
    PMIXCPP_ASSIGN_OR_RETURN(auto timeout, info_timeout(info, ninfo));
    wire::lookup_request req;
    req.keys = std::move(keys);
    PMIXCPP_RETURN_IF_ERROR(info_array_copy(info, ninfo, &req.directives));
    if (get_log_level() >= log_level::debug) {
        std::string k;
        for (const auto &key : req.keys) k += (k.empty() ? "" : ",") + key;
        PMIXCPP_LOG_DEBUG("lookup: %s, directives %s", k.c_str(), format_infos_brief(info, ninfo).c_str());
    }
    wire::Writer w;
    PMIXCPP_RETURN_IF_ERROR(wire::encode(w, req));
    // The server answers a timed-out wait itself; the local timer only guards against a lost node.
    double local = timeout > 0 ? timeout + 5 : 0;
    return c.request(
        wire::msg_type::lookup, w,
        [done](pmix_status_t st, const std::string &msg, wire::Reader &body) {
            wire::lookup_reply reply;
            if (st == PMIX_SUCCESS) {
                Status s = wire::decode(body, &reply);
                if (s.ok()) s = body.expect_end();
                if (!s.ok()) st = PMIX_ERR_UNPACK_FAILURE;
            } else {
                PMIXCPP_LOG_DEBUG("lookup: %s %s", PMIx_Error_string(st), msg.c_str());
            }
            done(st, std::move(reply));
        },
        local);
}

Status send_unpublish(Client &c, char **keys, const pmix_info_t info[], size_t ninfo, status_fn done) {
    PMIXCPP_RETURN_IF_ERROR(check_infos(info, ninfo));
    wire::unpublish_request req;
    PMIXCPP_RETURN_IF_ERROR(check_keys(keys, true, &req.keys));
    PMIXCPP_RETURN_IF_ERROR(info_array_copy(info, ninfo, &req.directives));
    if (get_log_level() >= log_level::debug)
        PMIXCPP_LOG_DEBUG("unpublish: %zu key(s), directives %s", req.keys.size(),
                          format_infos_brief(info, ninfo).c_str());
    wire::Writer w;
    PMIXCPP_RETURN_IF_ERROR(wire::encode(w, req));
    return send_status_request(c, wire::msg_type::unpublish, w, std::move(done));
}

// Blocking form of a request answered by a status alone.
template <typename Send>
Status wait_status(Client *c, const char *what, Send send) {
    if (on_progress_thread(c)) return Status(PMIX_ERR_WOULD_BLOCK, std::string(what) + " called from a callback");
    auto sync = std::make_shared<Sync<pmix_status_t>>();
    PMIXCPP_RETURN_IF_ERROR(send([sync](pmix_status_t st) { sync->set(st); }));
    pmix_status_t st = sync->wait();
    return Status(st, std::string(what) + " failed");
}

}  // namespace

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_Publish_nb(const pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc,
                                          void *cbdata) {
    return api_guard(__func__, [&]() -> Status {
        PMIXCPP_ASSIGN_OR_RETURN(auto c, require_client());
        return send_publish(*c, info, ninfo, [cbfunc, cbdata](pmix_status_t st) {
            if (cbfunc) cbfunc(st, cbdata);
        });
    });
}

PMIX_EXPORT pmix_status_t PMIx_Publish(const pmix_info_t info[], size_t ninfo) {
    return api_guard(__func__, [&]() -> Status {
        PMIXCPP_ASSIGN_OR_RETURN(auto c, require_client());
        return wait_status(c, "PMIx_Publish",
                           [&](status_fn done) { return send_publish(*c, info, ninfo, std::move(done)); });
    });
}

PMIX_EXPORT pmix_status_t PMIx_Lookup_nb(char **keys, const pmix_info_t info[], size_t ninfo,
                                         pmix_lookup_cbfunc_t cbfunc, void *cbdata) {
    return api_guard(__func__, [&]() -> Status {
        PMIXCPP_ASSIGN_OR_RETURN(auto c, require_client());
        std::vector<std::string> k;
        PMIXCPP_RETURN_IF_ERROR(check_keys(keys, false, &k));
        return send_lookup(
            *c, std::move(k), info, ninfo, [cbfunc, cbdata](pmix_status_t st, wire::lookup_reply &&r) {
                if (cbfunc == nullptr) return;
                pdata_array pd;
                if (st == PMIX_SUCCESS && !r.owners.empty()) {
                    pd.data = static_cast<pmix_pdata_t *>(calloc(r.owners.size(), sizeof(pmix_pdata_t)));
                    if (pd.data == nullptr) {
                        cbfunc(PMIX_ERR_NOMEM, nullptr, 0, cbdata);
                        return;
                    }
                    pd.n = r.owners.size();
                    for (size_t i = 0; i < pd.n; ++i) {
                        pd.data[i].proc = r.owners[i];
                        memcpy(pd.data[i].key, r.data[i].key, PMIX_MAX_KEYLEN + 1);
                        pd.data[i].value = r.data[i].value;  // ownership moves
                        r.data[i].value.type = PMIX_UNDEF;
                    }
                }
                cbfunc(st, pd.data, pd.n, cbdata);
            });
    });
}

PMIX_EXPORT pmix_status_t PMIx_Lookup(pmix_pdata_t data[], size_t ndata, const pmix_info_t info[], size_t ninfo) {
    return api_guard(__func__, [&]() -> Status {
        PMIXCPP_ASSIGN_OR_RETURN(auto c, require_client());
        if (data == nullptr || ndata == 0) return Status(PMIX_ERR_BAD_PARAM, "no data to look up");
        if (on_progress_thread(c)) return Status(PMIX_ERR_WOULD_BLOCK, "PMIx_Lookup called from a callback");
        std::vector<std::string> keys;
        for (size_t i = 0; i < ndata; ++i) {
            PMIXCPP_RETURN_IF_ERROR(check_key(data[i].key));
            keys.emplace_back(data[i].key);
        }
        struct Outcome {
            pmix_status_t status = PMIX_ERROR;
            wire::lookup_reply reply;
        };
        auto sync = std::make_shared<Sync<Outcome>>();
        PMIXCPP_RETURN_IF_ERROR(
            send_lookup(*c, std::move(keys), info, ninfo, [sync](pmix_status_t st, wire::lookup_reply &&r) {
                Outcome o;
                o.status = st;
                o.reply = std::move(r);
                sync->set(std::move(o));
            }));
        Outcome &o = sync->wait();
        if (o.status != PMIX_SUCCESS) return Status(o.status, "lookup failed");
        for (size_t j = 0; j < o.reply.owners.size(); ++j) {
            for (size_t i = 0; i < ndata; ++i) {
                if (strncmp(data[i].key, o.reply.data[j].key, PMIX_MAX_KEYLEN) != 0) continue;
                value_destruct(&data[i].value);
                data[i].proc = o.reply.owners[j];
                PMIXCPP_RETURN_IF_ERROR(value_xfer(&data[i].value, &o.reply.data[j].value));
            }
        }
        return Status::success();
    });
}

PMIX_EXPORT pmix_status_t PMIx_Unpublish_nb(char **keys, const pmix_info_t info[], size_t ninfo,
                                            pmix_op_cbfunc_t cbfunc, void *cbdata) {
    return api_guard(__func__, [&]() -> Status {
        PMIXCPP_ASSIGN_OR_RETURN(auto c, require_client());
        return send_unpublish(*c, keys, info, ninfo, [cbfunc, cbdata](pmix_status_t st) {
            if (cbfunc) cbfunc(st, cbdata);
        });
    });
}

PMIX_EXPORT pmix_status_t PMIx_Unpublish(char **keys, const pmix_info_t info[], size_t ninfo) {
    return api_guard(__func__, [&]() -> Status {
        PMIXCPP_ASSIGN_OR_RETURN(auto c, require_client());
        return wait_status(c, "PMIx_Unpublish", [&](status_fn done) {
            return send_unpublish(*c, keys, info, ninfo, std::move(done));
        });
    });
}

}  // extern "C"
