// PMIx_Put / Commit / Fence(_nb) / Get(_nb) / Store_internal / Resolve_peers / Resolve_nodes.
#include <pmix.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <set>
#include <sstream>
#include <string_view>
#include <unordered_set>

#include "api.h"
#include "get.h"
#include "groups.h"
#include "wire/snapshot.h"

using namespace pmixcpp;
using namespace pmixcpp::client;

namespace pmixcpp::client {

Result<GetOptions> parse_get_options(const pmix_info_t *info, size_t ninfo) {
    GetOptions opt;
    opt.optional = info_true(info, ninfo, PMIX_OPTIONAL) || info_true(info, ninfo, PMIX_IMMEDIATE);
    opt.refresh = info_true(info, ninfo, PMIX_GET_REFRESH_CACHE);
    PMIXCPP_ASSIGN_OR_RETURN(auto t, info_timeout(info, ninfo));
    opt.timeout = t;
    return opt;
}

bool standard_key(const char *key) {
    static const std::unordered_set<std::string_view> keys = {
#include "standard_keys.inc"
    };
    return key != nullptr && keys.count(key) != 0;
}

namespace {
// Reserved are the standard's attribute names: absent locally means absent. Any other key, even
// one starting with "pmix" (applications build keys from namespace names), may be a peer's.
bool reserved_key(const char *key) { return standard_key(key); }

// A reply's snapshot (shared/PROTOCOL.md, "Modex snapshot"): its file's id and segments in the
// body (wire::snapshot_ref), the file's descriptor with the frame if this client was not sent it
// before. False if the body names none (""), is malformed (logged), or names a file whose
// descriptor this client does not have: ask for it.
bool take_snapshot(Client &c, wire::Reader &body) {
    wire::snapshot_ref ref;
    Status st = wire::decode(body, &ref);
    if (st.ok()) st = body.expect_end().with_context("modex snapshot reference");
    wire::FrameDescriptor fd = Client::take_reply_descriptor();
    if (!st.ok()) {
        PMIXCPP_LOG_ERROR("malformed reply: %s", st.message().c_str());
        return false;
    }
    if (ref.id.empty()) return false;
    return c.data().set_snapshot(std::move(ref.id), std::move(fd), std::move(ref.segments));
}

// After a fence whose snapshot this client cannot use (none was made, or its file's
// descriptor did not reach it), ask the server for the snapshot with its descriptor, unless on the
// progress thread (which cannot wait; the Get then asks the server for the value).
void fetch_snapshot(Client &c) {
    LocalData &d = c.data();
    if (!d.snapshot_wanted() || c.loop().on_thread()) return;
    Client *cp = &c;
    Status st = c.request_wait(wire::msg_type::snapshot, wire::Writer(),
                               [cp](pmix_status_t status, const std::string &msg, wire::Reader &body) {
                                   if (status == PMIX_SUCCESS && take_snapshot(*cp, body)) return;
                                   PMIXCPP_LOG_DEBUG("modex snapshot: %s %s", PMIx_Error_string(status), msg.c_str());
                                   cp->data().set_snapshot("", nullptr);
                               });
    if (!st.ok()) d.set_snapshot("", nullptr);  // Gets ask the server, as without a snapshot
}

}  // namespace

local_outcome get_local(Client &c, const pmix_proc_t &target, const char *key, const GetOptions &opt,
                        pmix_value_t *out, Status *error, bool may_wait) {
    LocalData &d = c.data();
    bool own_ns = d.is_own_nspace(target.nspace);
    // A peer's data may be in the snapshot of the last fence: made ready (asked for,
    // mapped) only when a Get needs it, not for what the job data or the cache answers.
    const bool peer = own_ns && target.rank != d.rank() && target.rank < PMIX_RANK_VALID;
    auto ready_snapshot = [&] {
        if (may_wait) fetch_snapshot(c);
        d.map_snapshot();
    };
    if (key == nullptr) {
        if (peer) ready_snapshot();
        auto all = d.collect(target);
        if (all.ok() && (own_ns || opt.optional)) {
            auto *arr = static_cast<pmix_data_array_t *>(calloc(1, sizeof(pmix_data_array_t)));
            if (arr == nullptr) {
                *error = Status(PMIX_ERR_NOMEM, "out of memory");
                return local_outcome::not_found;
            }
            arr->type = PMIX_INFO;
            arr->size = all->size();
            arr->array = all->release();
            out->type = PMIX_DATA_ARRAY;
            out->data.darray = arr;
            return local_outcome::found;
        }
        if (own_ns || opt.optional) {
            *error = Status(PMIX_ERR_NOT_FOUND, "no data for that proc");
            return local_outcome::not_found;
        }
        return local_outcome::ask_server;
    }
    auto r = d.lookup(target, key, !opt.refresh, out);
    if (r.ok() && r.value() == lookup_source::none && peer && !opt.refresh && !reserved_key(key) &&
        d.snapshot_waiting()) {
        ready_snapshot();
        r = d.lookup(target, key, true, out);
    }
    if (!r.ok()) {
        *error = r.status();
        return local_outcome::not_found;
    }
    if (r.value() != lookup_source::none) return local_outcome::found;
    *error = Status(PMIX_ERR_NOT_FOUND, std::string("key ") + key + " not found");
    // The node's topology is the node's own data, but not in the job data: its server makes it
    // when first asked for. Asked of it, by a pmix.optional Get as well (OpenMPI's), never of
    // another node.
    if (own_ns && target.rank == PMIX_RANK_WILDCARD && strcmp(key, PMIX_LOCAL_TOPO) == 0)
        return local_outcome::ask_server;
    if (opt.optional) return local_outcome::not_found;
    if (own_ns) {
        // Our own data, job-level data and the reserved pmix.* keys are all local: the server
        // has nothing more (a peer's reserved keys come from the job data).
        if (target.rank == d.rank() || target.rank == PMIX_RANK_WILDCARD || target.rank == PMIX_RANK_UNDEF)
            return local_outcome::not_found;
        if (reserved_key(key)) return local_outcome::not_found;
    }
    return local_outcome::ask_server;
}

Status get_remote(Client &c, const pmix_proc_t &target, const char *key, const pmix_info_t *info,
                  size_t ninfo, const GetOptions &opt, GetDone done, bool wait) {
    wire::get_request req;
    req.proc = target;
    if (req.proc.nspace[0] == '\0') memcpy(req.proc.nspace, c.self().nspace, sizeof(req.proc.nspace));
    if (key != nullptr) req.key = key;
    PMIXCPP_RETURN_IF_ERROR(info_array_copy(info, ninfo, &req.infos));
    wire::Writer w;
    PMIXCPP_RETURN_IF_ERROR(wire::encode(w, req));
    pmix_proc_t proc = req.proc;
    std::string wanted = req.key;
    Client *cp = &c;
    ReplyHandler handler =
        [cp, proc, wanted, done](pmix_status_t status, const std::string &msg, wire::Reader &body) {
            OwnedValue value;
            if (status == PMIX_SUCCESS) {
                wire::get_reply reply;
                Status st = wire::decode(body, &reply);
                if (st.ok()) st = body.expect_end();
                if (!st.ok()) {
                    PMIXCPP_LOG_ERROR("malformed get reply: %s", st.message().c_str());
                    status = PMIX_ERR_UNPACK_FAILURE;
                } else if (wanted.empty()) {
                    // All of the proc's data, as a data array of infos.
                    auto *arr = static_cast<pmix_data_array_t *>(calloc(1, sizeof(pmix_data_array_t)));
                    if (arr == nullptr) {
                        status = PMIX_ERR_NOMEM;
                    } else {
                        arr->type = PMIX_INFO;
                        arr->size = reply.data.size();
                        arr->array = reply.data.release();
                        value.v.type = PMIX_DATA_ARRAY;
                        value.v.data.darray = arr;
                    }
                } else {
                    status = PMIX_ERR_NOT_FOUND;
                    for (size_t i = 0; i < reply.data.size(); ++i) {
                        if (strncmp(reply.data[i].key, wanted.c_str(), PMIX_MAX_KEYLEN) == 0) {
                            Status x = value_xfer(&value.v, &reply.data[i].value);
                            status = x.ok() ? PMIX_SUCCESS : x.code();
                            break;
                        }
                    }
                    cp->data().cache_proc(proc, reply);
                }
            } else {
                PMIXCPP_LOG_DEBUG("get %s of %s:%u: %s %s", wanted.c_str(), proc.nspace, proc.rank,
                                  PMIx_Error_string(status), msg.c_str());
            }
            done(status, status == PMIX_SUCCESS ? &value.v : nullptr);
        };
    if (wait) return c.request_wait(wire::msg_type::get, w, std::move(handler), opt.timeout);
    return c.request(wire::msg_type::get, w, std::move(handler), opt.timeout);
}

}  // namespace pmixcpp::client

namespace {

// Target of a Get: NULL proc = own namespace, any rank; "" namespace = own namespace.
Status get_target(Client &c, const pmix_proc_t *proc, pmix_proc_t *target) {
    if (proc == nullptr) {
        *target = c.self();
        target->rank = PMIX_RANK_UNDEF;
        return Status::success();
    }
    PMIXCPP_RETURN_IF_ERROR(check_proc(proc));
    *target = *proc;
    if (target->nspace[0] == '\0') memcpy(target->nspace, c.self().nspace, sizeof(target->nspace));
    return Status::success();
}

Status check_get_args(const char *key, const pmix_info_t *info, size_t ninfo) {
    if (key != nullptr) PMIXCPP_RETURN_IF_ERROR(check_key(key));
    return check_infos(info, ninfo);
}

Status build_fence(Client &c, const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                   size_t ninfo, wire::Writer *w, double *timeout) {
    if (nprocs > 0 && procs == nullptr) return Status(PMIX_ERR_BAD_PARAM, "procs is NULL but nprocs > 0");
    PMIXCPP_RETURN_IF_ERROR(check_infos(info, ninfo));
    PMIXCPP_ASSIGN_OR_RETURN(auto t, info_timeout(info, ninfo));
    *timeout = t;
    wire::fence_request req;
    bool whole_job = false;
    for (size_t i = 0; i < nprocs; ++i) {
        PMIXCPP_RETURN_IF_ERROR(check_proc(&procs[i]));
        pmix_proc_t p = procs[i];
        if (p.nspace[0] == '\0') memcpy(p.nspace, c.self().nspace, sizeof(p.nspace));
        if (p.rank == PMIX_RANK_UNDEF)
            return Status(PMIX_ERR_BAD_PARAM, "fence participant with PMIX_RANK_UNDEF");
        // A group this process belongs to stands for its members (the group's rank n = member n).
        std::vector<pmix_proc_t> members;
        if (!c.data().is_own_nspace(p.nspace) && group_members(std::string(p.nspace, strnlen(p.nspace, sizeof(p.nspace))), &members)) {
            if (p.rank == PMIX_RANK_WILDCARD) {
                req.procs.insert(req.procs.end(), members.begin(), members.end());
            } else if (p.rank < members.size()) {
                req.procs.push_back(members[p.rank]);
            } else {
                return Status(PMIX_ERR_BAD_PARAM, "fence participant beyond the group's members");
            }
            continue;
        }
        if (p.rank == PMIX_RANK_WILDCARD && c.data().is_own_nspace(p.nspace)) whole_job = true;
        req.procs.push_back(p);
    }
    // Our namespace's wildcard alone = the whole namespace: send the canonical empty list.
    if (whole_job && std::all_of(req.procs.begin(), req.procs.end(),
                                 [&](const pmix_proc_t &p) { return c.data().is_own_nspace(p.nspace); }))
        req.procs.clear();
    PMIXCPP_RETURN_IF_ERROR(info_array_copy(info, ninfo, &req.infos));
    return wire::encode(*w, req);
}

// wait: block the calling thread until `done` has run (PMIx_Fence).
Status send_fence(Client &c, const wire::Writer &w, double timeout, std::function<void(pmix_status_t)> done,
                  bool wait) {
    Client *cp = &c;
    ReplyHandler handler =
        [cp, done](pmix_status_t status, const std::string &msg, wire::Reader &body) {
            if (status != PMIX_SUCCESS)
                PMIXCPP_LOG_DEBUG("fence: %s %s", PMIx_Error_string(status), msg.c_str());
            // Data committed before the fence may have changed what peers have: fetch again,
            // from the snapshot the server wrote with the fence.
            cp->data().clear_cache();
            // A fence's reply names the node's snapshot, collecting or not; if it could not be
            // made ("") or its file's descriptor did not reach this client, a Get first asks for
            // it (fetch_snapshot). A failed fence, or one before anything was committed, has no
            // body: no snapshot.
            if (status != PMIX_SUCCESS || body.at_end())
                cp->data().set_snapshot("", nullptr);
            else if (!take_snapshot(*cp, body))
                cp->data().want_snapshot();
            done(status);
        };
    if (wait) return c.request_wait(wire::msg_type::fence, w, std::move(handler), timeout);
    return c.request(wire::msg_type::fence, w, std::move(handler), timeout);
}

}  // namespace

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_Put(pmix_scope_t scope, const char key[], pmix_value_t *val) {
    return api_guard(__func__, [&]() -> Status {
        PMIXCPP_ASSIGN_OR_RETURN(auto c, require_client());
        PMIXCPP_RETURN_IF_ERROR(check_key(key));
        PMIXCPP_RETURN_IF_ERROR(check_scope(scope));
        if (val == nullptr) return Status(PMIX_ERR_BAD_PARAM, "value is NULL");
        if (val->type == PMIX_UNDEF) return Status(PMIX_ERR_BAD_PARAM, "value has no type");
        Status st = c->data().put(scope, key, val);
        if (!st.ok() && st.code() == PMIX_ERR_NOT_SUPPORTED) return Status(PMIX_ERR_BAD_PARAM, st.message());
        return st;
    });
}

PMIX_EXPORT pmix_status_t PMIx_Commit(void) {
    return api_guard(__func__, [&]() -> Status {
        PMIXCPP_ASSIGN_OR_RETURN(auto c, require_client());
        wire::commit_request req = c->data().take_pending();
        wire::Writer w;
        PMIXCPP_RETURN_IF_ERROR(wire::encode(w, req));
        // Commit is asynchronous: the connection is ordered, so a later fence or a peer's get sees it.
        // Its handler only logs, so any thread may read the reply (a fence's direct wait), and no
        // progress thread is started for it. A lost connection is logged where it is noticed.
        return c->post_request(wire::msg_type::commit, w,
                               [](pmix_status_t status, const std::string &msg, wire::Reader &) {
                                   if (status != PMIX_SUCCESS && status != PMIX_ERR_LOST_CONNECTION)
                                       PMIXCPP_LOG_ERROR("commit refused by the server: %s %s",
                                                         PMIx_Error_string(status), msg.c_str());
                               });
    });
}

PMIX_EXPORT pmix_status_t PMIx_Fence_nb(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                                        size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata) {
    return api_guard(__func__, [&]() -> Status {
        PMIXCPP_ASSIGN_OR_RETURN(auto c, require_client());
        wire::Writer w;
        double timeout = 0;
        PMIXCPP_RETURN_IF_ERROR(build_fence(*c, procs, nprocs, info, ninfo, &w, &timeout));
        return send_fence(
            *c, w, timeout,
            [cbfunc, cbdata](pmix_status_t st) {
                if (cbfunc) cbfunc(st, cbdata);
            },
            false);
    });
}

PMIX_EXPORT pmix_status_t PMIx_Fence(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                                     size_t ninfo) {
    return api_guard(__func__, [&]() -> Status {
        PMIXCPP_ASSIGN_OR_RETURN(auto c, require_client());
        wire::Writer w;
        double timeout = 0;
        PMIXCPP_RETURN_IF_ERROR(build_fence(*c, procs, nprocs, info, ninfo, &w, &timeout));
        if (on_progress_thread(c))
            return Status(PMIX_ERR_WOULD_BLOCK, "PMIx_Fence called from a callback");
        pmix_status_t result = PMIX_ERROR;
        PMIXCPP_RETURN_IF_ERROR(
            send_fence(*c, w, timeout, [&result](pmix_status_t st) { result = st; }, true));
        return Status(result, "fence failed");
    });
}

PMIX_EXPORT pmix_status_t PMIx_Get(const pmix_proc_t *proc, const char key[], const pmix_info_t info[],
                                   size_t ninfo, pmix_value_t **val) {
    return api_guard(__func__, [&]() -> Status {
        PMIXCPP_ASSIGN_OR_RETURN(auto c, require_client());
        if (val == nullptr) return Status(PMIX_ERR_BAD_PARAM, "val is NULL");
        *val = nullptr;
        PMIXCPP_RETURN_IF_ERROR(check_get_args(key, info, ninfo));
        pmix_proc_t target;
        PMIXCPP_RETURN_IF_ERROR(get_target(*c, proc, &target));
        PMIXCPP_ASSIGN_OR_RETURN(auto opt, parse_get_options(info, ninfo));

        OwnedValue local;
        Status error;
        local_outcome lo = group_get(target, key, info, ninfo, &local.v, &error);
        if (lo == local_outcome::ask_server) lo = get_local(*c, target, key, opt, &local.v, &error);
        switch (lo) {
            case local_outcome::found: {
                auto *out = static_cast<pmix_value_t *>(malloc(sizeof(pmix_value_t)));
                if (out == nullptr) return Status(PMIX_ERR_NOMEM, "out of memory");
                *out = local.v;  // hand over the content
                local.v = pmix_value_t{};
                local.v.type = PMIX_UNDEF;
                *val = out;
                return Status::success();
            }
            case local_outcome::not_found:
                return error;
            case local_outcome::ask_server:
                break;
        }
        if (on_progress_thread(c))
            return Status(PMIX_ERR_WOULD_BLOCK, "PMIx_Get called from a callback");
        struct Outcome {
            pmix_status_t status = PMIX_ERROR;
            pmix_value_t *value = nullptr;
        };
        Outcome o;
        PMIXCPP_RETURN_IF_ERROR(get_remote(
            *c, target, key, info, ninfo, opt, [&o](pmix_status_t st, pmix_value_t *v) {
                o.status = st;
                if (st == PMIX_SUCCESS && v != nullptr) {
                    o.value = static_cast<pmix_value_t *>(malloc(sizeof(pmix_value_t)));
                    if (o.value == nullptr) {
                        o.status = PMIX_ERR_NOMEM;
                    } else {
                        *o.value = *v;  // take over
                        *v = pmix_value_t{};
                        v->type = PMIX_UNDEF;
                    }
                }
            }, true));
        if (o.status != PMIX_SUCCESS) return Status(o.status, "get failed");
        *val = o.value;
        return Status::success();
    });
}

PMIX_EXPORT pmix_status_t PMIx_Get_nb(const pmix_proc_t *proc, const char key[], const pmix_info_t info[],
                                      size_t ninfo, pmix_value_cbfunc_t cbfunc, void *cbdata) {
    return api_guard(__func__, [&]() -> Status {
        PMIXCPP_ASSIGN_OR_RETURN(auto c, require_client());
        if (cbfunc == nullptr) return Status(PMIX_ERR_BAD_PARAM, "cbfunc is NULL");
        PMIXCPP_RETURN_IF_ERROR(check_get_args(key, info, ninfo));
        pmix_proc_t target;
        PMIXCPP_RETURN_IF_ERROR(get_target(*c, proc, &target));
        PMIXCPP_ASSIGN_OR_RETURN(auto opt, parse_get_options(info, ninfo));

        auto local = std::make_shared<OwnedValue>();
        Status error;
        local_outcome outcome = group_get(target, key, info, ninfo, &local->v, &error);
        if (outcome == local_outcome::ask_server)
            outcome = get_local(*c, target, key, opt, &local->v, &error, false);
        if (outcome != local_outcome::ask_server) {
            pmix_status_t st = outcome == local_outcome::found ? PMIX_SUCCESS : error.code();
            c->loop().post([local, st, cbfunc, cbdata] {
                cbfunc(st, st == PMIX_SUCCESS ? &local->v : nullptr, cbdata);
            });
            return Status::success();
        }
        return get_remote(
            *c, target, key, info, ninfo, opt,
            [cbfunc, cbdata](pmix_status_t st, pmix_value_t *v) { cbfunc(st, v, cbdata); }, false);
    });
}

PMIX_EXPORT pmix_status_t PMIx_Store_internal(const pmix_proc_t *proc, const char key[], pmix_value_t *val) {
    return api_guard(__func__, [&]() -> Status {
        PMIXCPP_ASSIGN_OR_RETURN(auto c, require_client());
        PMIXCPP_RETURN_IF_ERROR(check_proc(proc));
        PMIXCPP_RETURN_IF_ERROR(check_key(key));
        if (val == nullptr) return Status(PMIX_ERR_BAD_PARAM, "value is NULL");
        if (proc->rank == PMIX_RANK_UNDEF) return Status(PMIX_ERR_BAD_PARAM, "rank is PMIX_RANK_UNDEF");
        Status st = c->data().store_internal(*proc, key, val);
        if (!st.ok() && st.code() == PMIX_ERR_NOT_SUPPORTED) return Status(PMIX_ERR_BAD_PARAM, st.message());
        return st;
    });
}

}  // extern "C"
