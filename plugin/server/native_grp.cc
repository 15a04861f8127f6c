// Groups, queries and logging for OpenPMIx clients; see native_grp.h.
#include "native_grp.h"

#include <cstdlib>
#include <cstring>

#include "../native/requests.h"
#include "wire/group_messages.h"
#include "wire/messages.h"

namespace pmixcpp::server {

namespace {

// Our query reply: results, with our partial status carried as an info (alloc.cc) turned back
// into OpenPMIx's PMIX_ERR_PARTIAL_SUCCESS, the only partial status its client reads results with.
// The answers go flat, (key, value) per answered key, as OpenPMIx's hosts give them: the v4.1
// PMIX_QUERY_RESULTS arrays our own clients also get are left out (OpenPMIx's clients pass them
// to programs that print every value with PMIx_Data_print, which crashes on them in 5.0).
Result<std::vector<uint8_t>> query_reply(native::int_flavour f, std::span<const uint8_t> body) {
    wire::info_reply m;
    wire::Reader r(body);
    PMIXCPP_RETURN_IF_ERROR(wire::decode(r, &m), "query reply");
    pmix_status_t status = PMIX_SUCCESS;
    std::vector<pmix_info_t> kept;  // borrowed from m
    for (size_t i = 0; i < m.results.size(); ++i) {
        if (strncmp(m.results[i].key, "pmixcpp.query.status", PMIX_MAX_KEYLEN) == 0) {
            status = PMIX_ERR_PARTIAL_SUCCESS;
            continue;
        }
        if (strncmp(m.results[i].key, PMIX_QUERY_RESULTS, PMIX_MAX_KEYLEN) == 0) continue;
        kept.push_back(m.results[i]);
    }
    return native::encode_query_reply(f, status, kept.data(), kept.size());
}

// Our reply of job control, monitoring or allocation (M: a message with `results`; no body: no
// results) in OpenPMIx's query layout.
template <typename M>
Result<std::vector<uint8_t>> results_reply(native::int_flavour f, std::span<const uint8_t> body, const char *what) {
    if (body.empty()) return native::encode_query_reply(f, PMIX_SUCCESS, nullptr, 0);
    M m;
    wire::Reader r(body);
    PMIXCPP_RETURN_IF_ERROR(wire::decode(r, &m), what);
    return native::encode_query_reply(f, PMIX_SUCCESS, m.results.data(), m.results.size());
}

}  // namespace

bool native_invited_group(pmix_status_t status, const InfoArray &infos, size_t max_procs, std::string *name,
                          std::vector<pmix_proc_t> *members) {
    if (status != PMIX_GROUP_CONSTRUCT_COMPLETE) return false;
    const pmix_info_t *id = find_info(infos, PMIX_GROUP_ID);
    const pmix_info_t *range = find_info(infos, PMIX_EVENT_CUSTOM_RANGE);
    if (id == nullptr || range == nullptr || id->value.type != PMIX_STRING || id->value.data.string == nullptr)
        return false;
    const size_t len = strnlen(id->value.data.string, PMIX_MAX_NSLEN + 1);
    if (len == 0 || len > PMIX_MAX_NSLEN) return false;  // a group's name stands where a namespace does
    std::vector<pmix_proc_t> procs;
    if (range->value.type == PMIX_PROC && range->value.data.proc != nullptr) {
        procs.push_back(*range->value.data.proc);
    } else if (range->value.type == PMIX_DATA_ARRAY && range->value.data.darray != nullptr &&
               range->value.data.darray->type == PMIX_PROC &&
               (range->value.data.darray->size == 0 || range->value.data.darray->array != nullptr)) {
        if (range->value.data.darray->size > max_procs) return false;
        const auto *p = static_cast<const pmix_proc_t *>(range->value.data.darray->array);
        procs.assign(p, p + range->value.data.darray->size);
    } else {
        return false;
    }
    if (procs.empty()) return false;
    for (auto &p : procs) p.nspace[PMIX_MAX_NSLEN] = '\0';
    name->assign(id->value.data.string, len);
    *members = std::move(procs);
    return true;
}

void native_grp_link::invited(const std::string &name, std::vector<pmix_proc_t> members) {
    if (_groups.count(name)) return;  // a construct of this client's made it already
    if (!_invited.count(name) && _groups.size() + _invited.size() >= kMaxGroups) return;
    _invited[name] = std::move(members);
}

const std::vector<pmix_proc_t> *native_grp_link::invited_members(const std::string &name) const {
    auto it = _invited.find(name);
    return it == _invited.end() ? nullptr : &it->second;
}

Result<std::vector<pmix_proc_t>> native_grp_link::leave(const std::string &name, const pmix_proc_t &self) {
    for (auto *table : {&_groups, &_invited}) {
        auto it = table->find(name);
        if (it == table->end()) continue;
        std::vector<pmix_proc_t> others;
        for (const auto &p : it->second)
            if (!(strncmp(p.nspace, self.nspace, PMIX_MAX_NSLEN) == 0 && p.rank == self.rank)) others.push_back(p);
        table->erase(it);
        return others;
    }
    return Status(PMIX_ERR_NOT_FOUND, "group " + name + " is not one of this client's");
}

namespace {
void drop_proc(std::vector<pmix_proc_t> &procs, const pmix_proc_t &who) {
    std::erase_if(procs, [&](const pmix_proc_t &p) {
        return strncmp(p.nspace, who.nspace, PMIX_MAX_NSLEN) == 0 && p.rank == who.rank;
    });
}
}  // namespace

void native_grp_link::built(const std::string &name) {
    auto b = _building.find(name);
    if (b == _building.end() || --b->second > 0) return;
    _building.erase(b);
    if (auto e = _left_early.find(name); e != _left_early.end()) {
        _left_early_count -= e->second.size();
        _left_early.erase(e);
    }
}

bool native_grp_link::member_left(const std::string &name, const pmix_proc_t &who) {
    bool known = false;
    for (auto *table : {&_groups, &_invited}) {
        auto it = table->find(name);
        if (it == table->end()) continue;
        drop_proc(it->second, who);
        known = true;
    }
    if (!known && _building.count(name) && _left_early_count < kMaxGroups) {
        _left_early[name].push_back(who);
        ++_left_early_count;
    }
    return known;
}

bool native_grp_command(uint8_t cmd) {
    return cmd == native::kCmdQuery || cmd == native::kCmdLog || cmd == native::kCmdGroupConstruct ||
           cmd == native::kCmdGroupDestruct || cmd == native::kCmdJobControl || cmd == native::kCmdMonitor ||
           cmd == native::kCmdAlloc;
}

Result<native_dyn_request> native_grp_link::decode(uint8_t cmd, native::unpacker &up, const native::release &client,
                                                   size_t max_procs, native_grp_note *note) {
    switch (cmd) {
    case native::kCmdQuery: {
        wire::query_request m;
        PMIXCPP_RETURN_IF_ERROR(native::decode_query(up, &m));
        return as_request(wire::msg_type::query, m);
    }
    case native::kCmdLog: {
        wire::log_request m;
        PMIXCPP_RETURN_IF_ERROR(native::decode_log(up, &m));
        return as_request(wire::msg_type::log, m);
    }
    case native::kCmdJobControl: {
        wire::job_control_request m;
        PMIXCPP_RETURN_IF_ERROR(native::decode_job_control(up, max_procs, &m));
        return as_request(wire::msg_type::job_control, m);
    }
    case native::kCmdMonitor: {
        wire::monitor_request m;
        PMIXCPP_RETURN_IF_ERROR(native::decode_monitor(up, &m));
        return as_request(wire::msg_type::monitor, m);
    }
    case native::kCmdAlloc: {
        wire::alloc_request m;
        PMIXCPP_RETURN_IF_ERROR(native::decode_alloc(up, &m));
        return as_request(wire::msg_type::alloc, m);
    }
    case native::kCmdGroupConstruct: {
        wire::group_request m;
        PMIXCPP_RETURN_IF_ERROR(native::decode_group_construct(up, &m, max_procs));
        if (_groups.size() + _invited.size() >= kMaxGroups && !_groups.count(m.name))
            return Status(PMIX_ERR_OUT_OF_RESOURCE, "more than " + std::to_string(kMaxGroups) + " groups");
        note->group = m.name;
        note->notify_termination = info_flag(m.directives, PMIX_GROUP_NOTIFY_TERMINATION);
        ++_building[m.name];
        return as_request(wire::msg_type::group, m);
    }
    case native::kCmdGroupDestruct: {
        wire::group_request m;
        PMIXCPP_RETURN_IF_ERROR(native::decode_group_destruct(up, client, max_procs, &m));
        if (auto inv = _invited.find(m.name); inv != _invited.end()) {
            // A group made by invitation: destructed together, as a fence of its members.
            wire::fence_request f;
            f.procs = inv->second;
            note->group = m.name;
            return as_request(wire::msg_type::fence, f);
        }
        auto it = _groups.find(m.name);
        if (it == _groups.end()) return Status(PMIX_ERR_NOT_FOUND, "group " + m.name + " is not one of this client's");
        m.procs = it->second;
        note->group = m.name;
        return as_request(wire::msg_type::group, m);
    }
    default: return Status(PMIX_ERR_NOT_SUPPORTED, "command " + std::to_string(cmd));
    }
}

Result<std::vector<uint8_t>> native_grp_link::reply(uint8_t cmd, native::int_flavour f, const native::release &client,
                                                    pmix_status_t status, std::span<const uint8_t> body,
                                                    const native_grp_note &note) {
    struct construct_answered {  // whatever the answer, the construct is no longer in flight
        native_grp_link *link;
        const std::string &name;
        ~construct_answered() {
            if (link) link->built(name);
        }
    } answered{cmd == native::kCmdGroupConstruct ? this : nullptr, note.group};
    // A failure is [STATUS] alone, which every release reads for each of these commands.
    if (status != PMIX_SUCCESS) return native::encode_status_reply(f, status);
    switch (cmd) {
    case native::kCmdQuery: return query_reply(f, body);
    case native::kCmdJobControl:
    case native::kCmdMonitor: return results_reply<wire::job_control_reply>(f, body, "job control reply");
    case native::kCmdAlloc: return results_reply<wire::info_reply>(f, body, "allocation reply");
    case native::kCmdGroupConstruct: {
        wire::group_reply m;
        wire::Reader r(body);
        PMIXCPP_RETURN_IF_ERROR(wire::decode(r, &m), "group reply");
        std::vector<pmix_proc_t> joined;
        bool failed = false;
        for (const auto &mb : m.members) {
            if (mb.state == static_cast<uint8_t>(wire::member_state::joined)) joined.push_back(mb.proc);
            else failed = true;
        }
        // As pmixcpp's client: a construct needs every member, unless told of failures was asked.
        if (failed && !note.notify_termination)
            return native::encode_group_construct_reply(f, client, PMIX_ERR_PROC_ABORTED, {}, 0);
        std::vector<pmix_proc_t> kept = joined;  // the record: without members that left already
        if (auto early = _left_early.find(note.group); early != _left_early.end()) {
            for (const auto &p : early->second) drop_proc(kept, p);
            _left_early_count -= early->second.size();
            _left_early.erase(early);
        }
        if (_groups.size() + _invited.size() < kMaxGroups || _groups.count(note.group)) _groups[note.group] = std::move(kept);
        _invited.erase(note.group);
        if (m.context_id != 0) {
            std::vector<member_entry> data;
            for (const auto &mb : m.members) {
                if (mb.state != static_cast<uint8_t>(wire::member_state::joined) || mb.infos.empty()) continue;
                member_entry e;
                e.proc = mb.proc;
                PMIXCPP_RETURN_IF_ERROR(info_array_copy(mb.infos.data(), mb.infos.size(), &e.infos));
                data.push_back(std::move(e));
            }
            if (!data.empty()) {
                _member_data[m.context_id] = std::move(data);
                if (_member_data.size() > kMaxContexts) _member_data.erase(_member_data.begin());  // the oldest id
            }
        }
        return native::encode_group_construct_reply(f, client, PMIX_SUCCESS, joined, m.context_id);
    }
    case native::kCmdGroupDestruct:
        _groups.erase(note.group);
        _invited.erase(note.group);
        return native::encode_status_reply(f, PMIX_SUCCESS);
    default: return native::encode_status_reply(f, PMIX_SUCCESS);
    }
}

InfoArray native_grp_link::member_data(uint64_t ctxid, const pmix_proc_t &proc, const char *key) const {
    auto it = _member_data.find(ctxid);
    if (it == _member_data.end()) return InfoArray();
    std::vector<const pmix_info_t *> items;
    for (const auto &e : it->second) {
        if (e.proc.rank != proc.rank || strncmp(e.proc.nspace, proc.nspace, PMIX_MAX_NSLEN) != 0) continue;
        for (size_t i = 0; i < e.infos.size(); ++i)
            if (key == nullptr || key[0] == '\0' || strncmp(e.infos.data()[i].key, key, PMIX_MAX_KEYLEN) == 0)
                items.push_back(&e.infos.data()[i]);
    }
    if (items.empty()) return InfoArray();
    auto *out = static_cast<pmix_info_t *>(calloc(items.size(), sizeof(pmix_info_t)));
    if (out == nullptr) return InfoArray();
    InfoArray result(out, items.size());  // frees what is filled in, on every path
    for (size_t n = 0; n < items.size(); ++n) {
        // [item, PMIX_GROUP_CONTEXT_ID = ctxid (size_t, as the standard's examples load it)]
        auto *pair = static_cast<pmix_info_t *>(calloc(2, sizeof(pmix_info_t)));
        auto *arr = static_cast<pmix_data_array_t *>(calloc(1, sizeof(pmix_data_array_t)));
        if (pair == nullptr || arr == nullptr || !info_xfer(&pair[0], items[n]).ok()) {
            free(pair);
            free(arr);
            return InfoArray();
        }
        size_t id = ctxid;
        pair[1] = make_info(PMIX_GROUP_CONTEXT_ID, &id, PMIX_SIZE);
        pair[1].flags |= PMIX_INFO_QUALIFIER;
        arr->type = PMIX_INFO;
        arr->size = 2;
        arr->array = pair;
        strncpy(out[n].key, PMIX_QUALIFIED_VALUE, PMIX_MAX_KEYLEN);
        out[n].value.type = PMIX_DATA_ARRAY;
        out[n].value.data.darray = arr;
    }
    return result;
}

}  // namespace pmixcpp::server
