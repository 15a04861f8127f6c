// PMIx groups (blocking and _nb): construct, destruct, invite, join, leave. Construct, an
// invitation's join and destruct are one collective of the members' servers
// (plugin/server/groups.h); the reply names every member's outcome, the context id and the data
// members added with PMIX_GROUP_INFO. Invite = PMIX_GROUP_INVITED to the invitees (an event of
// custom range) + the leader's construct; an invitee's join enters the same collective with the
// membership the invitation carried. Leave = PMIX_GROUP_LEFT to the other members, who drop the
// leaver from their membership. Fences over a group name are fences over its members (data.cc).
#include "groups.h"

#include <pmix.h>

#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>

#include "api.h"
#include "wire/group_messages.h"

using namespace pmixcpp;
using namespace pmixcpp::client;

namespace {

// Group data kept for qualified Gets after a destruct: the last kKeptGroups context ids.
constexpr size_t kKeptGroups = 1024;
// Invitations not answered yet that are kept (beyond, one is dropped to make room).
constexpr size_t kKeptInvitations = 1024;

struct group_entry {
    std::vector<pmix_proc_t> members;
    uint64_t context_id = 0;
};

struct proc_key {
    std::string nspace;
    uint32_t rank;
    bool operator<(const proc_key &o) const { return nspace != o.nspace ? nspace < o.nspace : rank < o.rank; }
};

struct group_tables {
    std::mutex m;
    std::map<std::string, group_entry> groups;
    std::map<std::string, std::vector<pmix_proc_t>> invitations;
    std::map<uint64_t, std::map<proc_key, InfoArray>> data;  // context id -> member -> its group info
    std::deque<uint64_t> data_order;
    // Groups this process's construct, invite or join is in flight for, and the members that left
    // them meanwhile: a member that finished the construct first may leave at once, and its
    // PMIX_GROUP_LEFT can reach us before our own construct's answer (it came from another node).
    std::map<std::string, size_t> building;
    std::map<std::string, std::vector<pmix_proc_t>> left_early;
    size_t left_early_count = 0;
};

group_tables &tables() {
    static group_tables t;
    return t;
}

std::string nspace_of(const pmix_proc_t &p) { return std::string(p.nspace, strnlen(p.nspace, sizeof(p.nspace))); }

bool same_proc(const pmix_proc_t &a, const pmix_proc_t &b) {
    return a.rank == b.rank && strncmp(a.nspace, b.nspace, sizeof(a.nspace)) == 0;
}



// Raise an event for this process's own handlers: those registered for its code (not the
// default handlers, often error handlers).
void local_event(pmix_status_t code, const pmix_proc_t &source, std::vector<pmix_info_t> infos) {
    bool yes = true;
    infos.push_back(make_info(PMIX_EVENT_NON_DEFAULT, &yes, PMIX_BOOL));
    InfoArray a = to_array(infos);
    (void)PMIx_Notify_event(code, &source, PMIX_RANGE_PROC_LOCAL, a.data(), a.size(), nullptr, nullptr);
}

enum class role { construct, invite, join_accept, join_decline, destruct };

wire::group_op op_of(role r) {
    switch (r) {
    case role::construct:
    case role::invite: return wire::group_op::construct;
    case role::join_accept: return wire::group_op::join_accept;
    case role::join_decline: return wire::group_op::join_decline;
    case role::destruct: return wire::group_op::destruct;
    }
    return wire::group_op::construct;
}

Status check_name(const char *grp) {
    if (grp == nullptr || grp[0] == '\0') return Status(PMIX_ERR_BAD_PARAM, "no group name");
    if (strnlen(grp, PMIX_MAX_NSLEN + 1) > PMIX_MAX_NSLEN)
        return Status(PMIX_ERR_BAD_PARAM, "group name longer than PMIX_MAX_NSLEN");
    return Status::success();
}

using group_done = std::function<void(pmix_status_t, InfoArray &&)>;

// Send one member's group request; `done` runs once on the progress thread.
Status send_group(Client &c, role r, const std::string &name, std::vector<pmix_proc_t> members,
                  const pmix_info_t *dirs, size_t ndirs, group_done done) {
    PMIXCPP_RETURN_IF_ERROR(check_infos(dirs, ndirs));
    PMIXCPP_ASSIGN_OR_RETURN(auto t, info_timeout(dirs, ndirs));
    wire::group_request req;
    req.op = static_cast<uint8_t>(op_of(r));
    req.name = name;
    for (auto &p : members) {
        PMIXCPP_RETURN_IF_ERROR(check_proc(&p));
        if (p.nspace[0] == '\0') memcpy(p.nspace, c.self().nspace, sizeof(p.nspace));
        if (p.rank == PMIX_RANK_UNDEF) return Status(PMIX_ERR_BAD_PARAM, "group member with PMIX_RANK_UNDEF");
    }
    req.procs = members;
    PMIXCPP_RETURN_IF_ERROR(info_array_copy(dirs, ndirs, &req.directives));
    if (r != role::destruct && r != role::join_decline) PMIXCPP_RETURN_IF_ERROR(wire::group_member_info(dirs, ndirs, &req.member_info));
    const bool notify_termination = info_true(dirs, ndirs, PMIX_GROUP_NOTIFY_TERMINATION);
    wire::Writer w;
    PMIXCPP_RETURN_IF_ERROR(wire::encode(w, req));
    double timeout = t > 0 ? t + 5 : 0;
    const pmix_proc_t self = c.self();
    const bool building = r != role::destruct && r != role::join_decline;
    auto built = [name, building] {  // the request is answered: no longer in flight
        if (!building) return;
        group_tables &gt = tables();
        std::lock_guard<std::mutex> g(gt.m);
        auto b = gt.building.find(name);
        if (b != gt.building.end() && --b->second == 0) {
            gt.building.erase(b);
            if (auto e = gt.left_early.find(name); e != gt.left_early.end()) {
                gt.left_early_count -= e->second.size();
                gt.left_early.erase(e);
            }
        }
    };
    if (building) {
        group_tables &gt = tables();
        std::lock_guard<std::mutex> g(gt.m);
        ++gt.building[name];
    }
    Status sent = c.request(
        wire::msg_type::group, w,
        [r, name, self, notify_termination, done, built](pmix_status_t st, const std::string &msg, wire::Reader &body) {
            struct at_end {
                decltype(built) fn;
                ~at_end() { fn(); }
            } end{built};
            if (st != PMIX_SUCCESS) {
                PMIXCPP_LOG_DEBUG("group %s: %s %s", name.c_str(), PMIx_Error_string(st), msg.c_str());
                return done(st, InfoArray());
            }
            wire::group_reply rep;
            Status s = wire::decode(body, &rep);
            if (!s.ok()) {
                PMIXCPP_LOG_ERROR("malformed group reply: %s", s.message().c_str());
                return done(PMIX_ERR_UNPACK_FAILURE, InfoArray());
            }
            group_tables &gt = tables();
            if (r == role::destruct || r == role::join_decline) {
                std::lock_guard<std::mutex> g(gt.m);
                if (r == role::destruct) gt.groups.erase(name);
                else gt.invitations.erase(name);
                return done(PMIX_SUCCESS, InfoArray());
            }
            std::vector<pmix_proc_t> joined, failed, declined;
            for (const auto &m : rep.members) {
                if (m.state == static_cast<uint8_t>(wire::member_state::joined)) joined.push_back(m.proc);
                else if (m.state == static_cast<uint8_t>(wire::member_state::declined)) declined.push_back(m.proc);
                else failed.push_back(m.proc);
            }
            // A plain construct needs every member, unless the caller asked to be told of failures.
            if (r == role::construct && !failed.empty() && !notify_termination) {
                PMIXCPP_LOG_DEBUG("group %s: %zu members failed during construction", name.c_str(), failed.size());
                return done(PMIX_ERR_PROC_ABORTED, InfoArray());
            }
            {
                std::lock_guard<std::mutex> g(gt.m);
                gt.invitations.erase(name);
                std::vector<pmix_proc_t> kept = joined;  // our record: without members that left already
                if (auto e = gt.left_early.find(name); e != gt.left_early.end())
                    for (const auto &p : e->second)
                        std::erase_if(kept, [&](const pmix_proc_t &q) { return same_proc(q, p); });
                gt.groups[name] = group_entry{std::move(kept), rep.context_id};
                if (rep.context_id != 0) {
                    auto &d = gt.data[rep.context_id];
                    for (auto &m : rep.members)
                        if (m.state == static_cast<uint8_t>(wire::member_state::joined))
                            d[proc_key{nspace_of(m.proc), m.proc.rank}] = std::move(m.infos);
                    gt.data_order.push_back(rep.context_id);
                    while (gt.data_order.size() > kKeptGroups) {
                        gt.data.erase(gt.data_order.front());
                        gt.data_order.pop_front();
                    }
                }
            }
            std::vector<pmix_info_t> results;
            if (rep.context_id != 0) {
                size_t cid = static_cast<size_t>(rep.context_id);
                results.push_back(make_info(PMIX_GROUP_CONTEXT_ID, &cid, PMIX_SIZE));
            }
            results.push_back(procs_info(PMIX_GROUP_MEMBERSHIP, joined));
            // The events of the outcome, for this process's own handlers.
            auto base = [&](std::vector<pmix_info_t> extra) {
                extra.insert(extra.begin(), make_info(PMIX_GROUP_ID, name.c_str(), PMIX_STRING));
                return extra;
            };
            if (r == role::invite) {
                for (const auto &p : joined)
                    if (!same_proc(p, self))
                        local_event(PMIX_GROUP_INVITE_ACCEPTED, p, base({make_info(PMIX_EVENT_AFFECTED_PROC, &p, PMIX_PROC)}));
                for (const auto &p : declined)
                    local_event(PMIX_GROUP_INVITE_DECLINED, p, base({make_info(PMIX_EVENT_AFFECTED_PROC, &p, PMIX_PROC)}));
                for (const auto &p : failed)
                    local_event(PMIX_GROUP_INVITE_FAILED, p, base({make_info(PMIX_EVENT_AFFECTED_PROC, &p, PMIX_PROC)}));
            } else if (r == role::construct) {
                for (const auto &p : failed)
                    local_event(PMIX_GROUP_MEMBER_FAILED, p, base({make_info(PMIX_EVENT_AFFECTED_PROC, &p, PMIX_PROC)}));
            } else if (r == role::join_accept) {
                std::vector<pmix_info_t> extra;
                extra.push_back(procs_info(PMIX_GROUP_MEMBERSHIP, joined));
                if (rep.context_id != 0) {
                    size_t cid = static_cast<size_t>(rep.context_id);
                    extra.push_back(make_info(PMIX_GROUP_CONTEXT_ID, &cid, PMIX_SIZE));
                }
                local_event(PMIX_GROUP_CONSTRUCT_COMPLETE, self, base(std::move(extra)));
            }
            done(PMIX_SUCCESS, to_array(results));
        },
        timeout);
    if (!sent.ok()) built();
    return sent;
}

struct outcome {
    pmix_status_t status = PMIX_ERROR;
    InfoArray results;
};

// Run `start` (which sends a request calling the done it is given) and wait for the outcome.
pmix_status_t blocking(const char *fn, const std::function<Status(Client &, group_done)> &start,
                       pmix_info_t **results, size_t *nresults) {
    return api_guard(fn, [&]() -> Status {
        PMIXCPP_ASSIGN_OR_RETURN(auto c, require_client());
        if (results) *results = nullptr;
        if (nresults) *nresults = 0;
        if (on_progress_thread(c))
            return Status(PMIX_ERR_WOULD_BLOCK, std::string(fn) + " called from a callback");
        auto sync = std::make_shared<Sync<std::shared_ptr<outcome>>>();
        PMIXCPP_RETURN_IF_ERROR(start(*c, [sync](pmix_status_t st, InfoArray &&r) {
            auto o = std::make_shared<outcome>();
            o->status = st;
            o->results = std::move(r);
            sync->set(o);
        }));
        std::shared_ptr<outcome> o = sync->wait();
        if (o->status == PMIX_SUCCESS && results && nresults && !o->results.empty()) {
            *nresults = o->results.size();
            *results = o->results.release();
        }
        return Status(o->status, std::string(fn) + " failed");
    });
}

void release_results(void *cbdata) { delete static_cast<InfoArray *>(cbdata); }

group_done info_callback(pmix_info_cbfunc_t cbfunc, void *cbdata) {
    return [cbfunc, cbdata](pmix_status_t st, InfoArray &&r) {
        if (!cbfunc) return;
        auto *held = new InfoArray(std::move(r));
        cbfunc(st, held->data(), held->size(), cbdata, release_results, held);
    };
}

group_done op_callback(pmix_op_cbfunc_t cbfunc, void *cbdata) {
    return [cbfunc, cbdata](pmix_status_t st, InfoArray &&) {
        if (cbfunc) cbfunc(st, cbdata);
    };
}

Status start_construct(Client &c, const char *grp, const pmix_proc_t procs[], size_t nprocs, const pmix_info_t *dirs,
                       size_t ndirs, group_done done) {
    PMIXCPP_RETURN_IF_ERROR(check_name(grp));
    // No procs: a member that a bootstrap's leaders name (PMIX_GROUP_BOOTSTRAP,
    // PMIX_GROUP_ADD_MEMBERS); the server learns the membership from them.
    if (procs == nullptr && nprocs != 0) return Status(PMIX_ERR_BAD_PARAM, "no group members");
    std::vector<pmix_proc_t> members;
    if (procs != nullptr) members.assign(procs, procs + nprocs);
    return send_group(c, role::construct, grp, std::move(members), dirs, ndirs, std::move(done));
}

Status start_invite(Client &c, const char *grp, const pmix_proc_t procs[], size_t nprocs, const pmix_info_t *dirs,
                    size_t ndirs, group_done done) {
    PMIXCPP_RETURN_IF_ERROR(check_name(grp));
    if (procs == nullptr || nprocs == 0) return Status(PMIX_ERR_BAD_PARAM, "no procs to invite");
    std::vector<pmix_proc_t> members(procs, procs + nprocs);
    for (auto &p : members)
        if (p.nspace[0] == '\0') memcpy(p.nspace, c.self().nspace, sizeof(p.nspace));
    // The leader is a member even if it did not list itself.
    bool listed = false;
    for (const auto &p : members) listed |= same_proc(p, c.self());
    if (!listed) members.insert(members.begin(), c.self());
    std::vector<pmix_proc_t> invitees;
    for (const auto &p : members)
        if (!same_proc(p, c.self())) invitees.push_back(p);
    if (!invitees.empty()) {
        std::vector<pmix_info_t> ev;
        ev.push_back(make_info(PMIX_GROUP_ID, grp, PMIX_STRING));
        ev.push_back(procs_info(PMIX_EVENT_CUSTOM_RANGE, invitees));
        ev.push_back(procs_info(PMIX_GROUP_MEMBERSHIP, members));
        bool t = true;
        ev.push_back(make_info(PMIX_EVENT_NON_DEFAULT, &t, PMIX_BOOL));
        InfoArray a = to_array(ev);
        pmix_status_t st = PMIx_Notify_event(PMIX_GROUP_INVITED, &c.self(), PMIX_RANGE_CUSTOM, a.data(), a.size(),
                                             nullptr, nullptr);
        if (st != PMIX_SUCCESS) return Status(st, "inviting the members");
    }
    return send_group(c, role::invite, grp, std::move(members), dirs, ndirs, std::move(done));
}

Status start_join(Client &c, const char *grp, const pmix_proc_t *leader, pmix_group_opt_t opt, const pmix_info_t *info,
                  size_t ninfo, group_done done) {
    PMIXCPP_RETURN_IF_ERROR(check_name(grp));
    if (leader != nullptr) PMIXCPP_RETURN_IF_ERROR(check_proc(leader));
    std::vector<pmix_proc_t> members;
    {
        group_tables &gt = tables();
        std::lock_guard<std::mutex> g(gt.m);
        auto it = gt.invitations.find(grp);
        if (it == gt.invitations.end()) return Status(PMIX_ERR_NOT_FOUND, std::string("no invitation to group ") + grp);
        members = it->second;
    }
    return send_group(c, opt == PMIX_GROUP_ACCEPT ? role::join_accept : role::join_decline, grp, std::move(members),
                      info, ninfo, std::move(done));
}

Status start_destruct(Client &c, const char *grp, const pmix_info_t *info, size_t ninfo, group_done done) {
    PMIXCPP_RETURN_IF_ERROR(check_name(grp));
    std::vector<pmix_proc_t> members;
    if (!group_members(grp, &members)) return Status(PMIX_ERR_NOT_FOUND, std::string("not a member of group ") + grp);
    return send_group(c, role::destruct, grp, std::move(members), info, ninfo, std::move(done));
}

Status do_leave(Client &c, const char *grp) {
    PMIXCPP_RETURN_IF_ERROR(check_name(grp));
    std::vector<pmix_proc_t> members;
    if (!group_members(grp, &members)) return Status(PMIX_ERR_NOT_FOUND, std::string("not a member of group ") + grp);
    std::vector<pmix_proc_t> others;
    for (const auto &p : members)
        if (!same_proc(p, c.self())) others.push_back(p);
    {
        group_tables &gt = tables();
        std::lock_guard<std::mutex> g(gt.m);
        gt.groups.erase(grp);
    }
    if (others.empty()) return Status::success();
    std::vector<pmix_info_t> ev;
    ev.push_back(make_info(PMIX_GROUP_ID, grp, PMIX_STRING));
    ev.push_back(procs_info(PMIX_EVENT_CUSTOM_RANGE, others));
    pmix_proc_t self = c.self();
    ev.push_back(make_info(PMIX_EVENT_AFFECTED_PROC, &self, PMIX_PROC));
    bool yes = true;
    ev.push_back(make_info(PMIX_EVENT_NON_DEFAULT, &yes, PMIX_BOOL));
    InfoArray a = to_array(ev);
    pmix_status_t st = PMIx_Notify_event(PMIX_GROUP_LEFT, &self, PMIX_RANGE_CUSTOM, a.data(), a.size(), nullptr, nullptr);
    return Status(st, "telling the other members");
}

}  // namespace

namespace pmixcpp::client {

bool group_members(const std::string &name, std::vector<pmix_proc_t> *out) {
    group_tables &gt = tables();
    std::lock_guard<std::mutex> g(gt.m);
    auto it = gt.groups.find(name);
    if (it == gt.groups.end()) return false;
    *out = it->second.members;
    return true;
}

local_outcome group_get(const pmix_proc_t &target, const char *key, const pmix_info_t *info, size_t ninfo,
                        pmix_value_t *out, Status *error) {
    const pmix_info_t *q = find_info(info, ninfo, PMIX_GROUP_CONTEXT_ID);
    if (q == nullptr) return local_outcome::ask_server;
    auto cid = value_to_number<uint64_t>(q->value);
    if (!cid.ok()) {
        *error = Status(PMIX_ERR_BAD_PARAM, "PMIX_GROUP_CONTEXT_ID qualifier is not a number");
        return local_outcome::not_found;
    }
    if (key == nullptr) {
        *error = Status(PMIX_ERR_NOT_SUPPORTED, "a group-qualified Get needs a key");
        return local_outcome::not_found;
    }
    group_tables &gt = tables();
    std::lock_guard<std::mutex> g(gt.m);
    auto grp = gt.data.find(cid.value());
    if (grp != gt.data.end()) {
        auto m = grp->second.find(proc_key{nspace_of(target), target.rank});
        if (m != grp->second.end())
            for (size_t i = 0; i < m->second.size(); ++i)
                if (strncmp(m->second[i].key, key, PMIX_MAX_KEYLEN) == 0) {
                    Status st = value_xfer(out, &m->second[i].value);
                    if (st.ok()) return local_outcome::found;
                    *error = st;
                    return local_outcome::not_found;
                }
    }
    *error = Status(PMIX_ERR_NOT_FOUND, std::string(key) + " of that group member");
    return local_outcome::not_found;
}

void group_observe_event(Client &c, const wire::event_notification &ev) {
    if (ev.status != PMIX_GROUP_INVITED && ev.status != PMIX_GROUP_LEFT) return;
    const pmix_info_t *id = find_info(ev.infos.data(), ev.infos.size(), PMIX_GROUP_ID);
    if (id == nullptr || id->value.type != PMIX_STRING || id->value.data.string == nullptr) return;
    std::string name = id->value.data.string;
    group_tables &gt = tables();
    std::lock_guard<std::mutex> g(gt.m);
    if (ev.status == PMIX_GROUP_INVITED) {
        const pmix_info_t *m = find_info(ev.infos.data(), ev.infos.size(), PMIX_GROUP_MEMBERSHIP);
        if (m == nullptr) return;
        auto members = procs_of(m->value);
        if (members.empty()) return;
        // Invitations come from other processes: a bounded number is kept.
        if (gt.invitations.size() >= kKeptInvitations && !gt.invitations.count(name)) gt.invitations.erase(gt.invitations.begin());
        gt.invitations[name] = std::move(members);
        return;
    }
    auto it = gt.groups.find(name);
    if (it == gt.groups.end()) {
        // Our construct of it is still in flight: applied to our record when it completes.
        constexpr size_t kKeptEarlyLeaves = 4096;
        if (gt.building.count(name) && gt.left_early_count < kKeptEarlyLeaves) {
            gt.left_early[name].push_back(ev.source);
            ++gt.left_early_count;
        }
        return;
    }
    auto &mem = it->second.members;
    for (size_t i = 0; i < mem.size(); ++i)
        if (same_proc(mem[i], ev.source)) {
            mem.erase(mem.begin() + static_cast<long>(i));
            break;
        }
    (void)c;
}

}  // namespace pmixcpp::client

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_Group_construct(const char grp[], const pmix_proc_t procs[], size_t nprocs,
                                               const pmix_info_t directives[], size_t ndirs,
                                               pmix_info_t **results, size_t *nresults) {
    return blocking(
        __func__,
        [&](Client &c, group_done d) { return start_construct(c, grp, procs, nprocs, directives, ndirs, std::move(d)); },
        results, nresults);
}
PMIX_EXPORT pmix_status_t PMIx_Group_construct_nb(const char grp[], const pmix_proc_t procs[], size_t nprocs,
                                                  const pmix_info_t info[], size_t ninfo,
                                                  pmix_info_cbfunc_t cbfunc, void *cbdata) {
    return api_guard(__func__, [&]() -> Status {
        PMIXCPP_ASSIGN_OR_RETURN(auto c, require_client());
        return start_construct(*c, grp, procs, nprocs, info, ninfo, info_callback(cbfunc, cbdata));
    });
}
PMIX_EXPORT pmix_status_t PMIx_Group_invite(const char grp[], const pmix_proc_t procs[], size_t nprocs,
                                            const pmix_info_t info[], size_t ninfo, pmix_info_t **results,
                                            size_t *nresult) {
    return blocking(
        __func__, [&](Client &c, group_done d) { return start_invite(c, grp, procs, nprocs, info, ninfo, std::move(d)); },
        results, nresult);
}
PMIX_EXPORT pmix_status_t PMIx_Group_invite_nb(const char grp[], const pmix_proc_t procs[], size_t nprocs,
                                               const pmix_info_t info[], size_t ninfo,
                                               pmix_info_cbfunc_t cbfunc, void *cbdata) {
    return api_guard(__func__, [&]() -> Status {
        PMIXCPP_ASSIGN_OR_RETURN(auto c, require_client());
        return start_invite(*c, grp, procs, nprocs, info, ninfo, info_callback(cbfunc, cbdata));
    });
}
PMIX_EXPORT pmix_status_t PMIx_Group_join(const char grp[], const pmix_proc_t *leader, pmix_group_opt_t opt,
                                          const pmix_info_t info[], size_t ninfo, pmix_info_t **results,
                                          size_t *nresult) {
    return blocking(
        __func__, [&](Client &c, group_done d) { return start_join(c, grp, leader, opt, info, ninfo, std::move(d)); },
        results, nresult);
}
PMIX_EXPORT pmix_status_t PMIx_Group_join_nb(const char grp[], const pmix_proc_t *leader,
                                             pmix_group_opt_t opt, const pmix_info_t info[], size_t ninfo,
                                             pmix_info_cbfunc_t cbfunc, void *cbdata) {
    return api_guard(__func__, [&]() -> Status {
        PMIXCPP_ASSIGN_OR_RETURN(auto c, require_client());
        return start_join(*c, grp, leader, opt, info, ninfo, info_callback(cbfunc, cbdata));
    });
}
PMIX_EXPORT pmix_status_t PMIx_Group_leave(const char grp[], const pmix_info_t info[], size_t ninfo) {
    return api_guard(__func__, [&]() -> Status {
        PMIXCPP_ASSIGN_OR_RETURN(auto c, require_client());
        PMIXCPP_RETURN_IF_ERROR(check_infos(info, ninfo));
        return do_leave(*c, grp);
    });
}
PMIX_EXPORT pmix_status_t PMIx_Group_leave_nb(const char grp[], const pmix_info_t info[], size_t ninfo,
                                              pmix_op_cbfunc_t cbfunc, void *cbdata) {
    return api_guard(__func__, [&]() -> Status {
        PMIXCPP_ASSIGN_OR_RETURN(auto c, require_client());
        PMIXCPP_RETURN_IF_ERROR(check_infos(info, ninfo));
        PMIXCPP_RETURN_IF_ERROR(do_leave(*c, grp));
        if (cbfunc) c->loop().post([cbfunc, cbdata] { cbfunc(PMIX_SUCCESS, cbdata); });
        return Status::success();
    });
}
PMIX_EXPORT pmix_status_t PMIx_Group_destruct(const char grp[], const pmix_info_t info[], size_t ninfo) {
    return blocking(
        __func__, [&](Client &c, group_done d) { return start_destruct(c, grp, info, ninfo, std::move(d)); }, nullptr,
        nullptr);
}
PMIX_EXPORT pmix_status_t PMIx_Group_destruct_nb(const char grp[], const pmix_info_t info[], size_t ninfo,
                                                 pmix_op_cbfunc_t cbfunc, void *cbdata) {
    return api_guard(__func__, [&]() -> Status {
        PMIXCPP_ASSIGN_OR_RETURN(auto c, require_client());
        return start_destruct(*c, grp, info, ninfo, op_callback(cbfunc, cbdata));
    });
}

}  // extern "C"
