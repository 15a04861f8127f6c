#include "info_call.h"

#include <cstdlib>
#include <cstring>

namespace pmixcpp::client {

namespace {

void release_info_array(void *cbdata) { delete static_cast<InfoArray *>(cbdata); }

// Move a "pmixcpp.query.status" result into the status.
void take_status_info(pmix_status_t *status, InfoArray *results) {
    size_t n = results->size();
    for (size_t k = 0; k < n; ++k) {
        pmix_info_t &i = (*results)[k];
        if (strncmp(i.key, "pmixcpp.query.status", PMIX_MAX_KEYLEN) != 0 || i.value.type != PMIX_STATUS) continue;
        *status = i.value.data.status;
        auto *rest = static_cast<pmix_info_t *>(calloc(n > 1 ? n - 1 : 1, sizeof(pmix_info_t)));
        if (rest == nullptr) return;
        size_t m = 0;
        for (size_t j = 0; j < n; ++j)
            if (j != k) rest[m++] = (*results)[j];  // ownership moves
        info_destruct(&i);
        free(results->release());
        *results = InfoArray(rest, m);
        return;
    }
}

}  // namespace

Status send_info_request(Client &c, wire::msg_type type, const wire::Writer &payload, info_done_fn done) {
    return c.request(type, payload, [done, type](pmix_status_t status, const std::string &msg, wire::Reader &body) {
        wire::info_reply reply;
        if (status == PMIX_SUCCESS) {
            Status st = wire::decode(body, &reply);
            if (!st.ok()) {
                status = PMIX_ERR_UNPACK_FAILURE;
                reply.results = InfoArray();
            } else {
                take_status_info(&status, &reply.results);
            }
        } else {
            PMIXCPP_LOG_DEBUG("%s: %s %s", wire::to_string(type), PMIx_Error_string(status), msg.c_str());
            // The reason (Slurm's, for a refused allocation) as a result the caller can read.
            if (!msg.empty()) {
                auto *i = static_cast<pmix_info_t *>(calloc(1, sizeof(pmix_info_t)));
                if (i != nullptr) {
                    strncpy(i->key, PMIX_EVENT_TEXT_MESSAGE, PMIX_MAX_KEYLEN);
                    if (value_load(&i->value, msg.c_str(), PMIX_STRING).ok())
                        reply.results = InfoArray(i, 1);
                    else
                        free(i);
                }
            }
        }
        done(status, msg, std::move(reply.results));
    });
}

info_done_fn to_info_cbfunc(pmix_info_cbfunc_t cbfunc, void *cbdata) {
    return [cbfunc, cbdata](pmix_status_t status, const std::string &, InfoArray &&results) {
        if (cbfunc == nullptr) return;
        auto *keep = new InfoArray(std::move(results));
        cbfunc(status, keep->data(), keep->size(), cbdata, release_info_array, keep);
    };
}

Status wait_info_request(Client &c, wire::msg_type type, const wire::Writer &payload, pmix_info_t **results,
                         size_t *nresults, const char *what) {
    struct Outcome {
        pmix_status_t status = PMIX_ERROR;
        std::string message;
        InfoArray results;
    };
    auto sync = std::make_shared<Sync<Outcome>>();
    PMIXCPP_RETURN_IF_ERROR(
        send_info_request(c, type, payload, [sync](pmix_status_t status, const std::string &msg, InfoArray &&r) {
            Outcome o;
            o.status = status;
            o.message = msg;
            o.results = std::move(r);
            sync->set(std::move(o));
        }));
    Outcome &o = sync->wait();
    if (results != nullptr && nresults != nullptr && !o.results.empty()) {
        *nresults = o.results.size();
        *results = *nresults ? o.results.release() : nullptr;
    }
    if (o.status == PMIX_SUCCESS) return Status::success();
    return Status(o.status, std::string(what) + ": " + o.message);
}

}  // namespace pmixcpp::client
