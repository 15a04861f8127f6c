#include "wire/group_messages.h"

#include <cstdlib>
#include <cstring>

namespace pmixcpp::wire {

const char *to_string(group_op op) {
    switch (op) {
    case group_op::construct: return "construct";
    case group_op::destruct: return "destruct";
    case group_op::join_accept: return "join (accept)";
    case group_op::join_decline: return "join (decline)";
    }
    return "unknown";
}

bool valid_group_op(uint8_t op) { return op >= 1 && op <= 4; }

Status group_member_info(const pmix_info_t *dirs, size_t ndirs, InfoArray *out) {
    std::vector<pmix_info_t> mine;
    auto fail = [&](Status st) {
        for (auto &x : mine) info_destruct(&x);
        return st;
    };
    auto add = [&](const char *key, const pmix_value_t &v, pmix_info_directives_t flags) {
        pmix_info_t copy{};
        strncpy(copy.key, key, PMIX_MAX_KEYLEN);
        copy.flags = flags & ~PMIX_INFO_PERSISTENT;  // the copy is ours to free
        Status st = value_xfer(&copy.value, &v);
        if (st.ok()) mine.push_back(copy);
        return st;
    };
    for (size_t d = 0; d < ndirs && dirs != nullptr; ++d) {
        const pmix_info_t &gi = dirs[d];
        if (strncmp(gi.key, PMIX_GROUP_LOCAL_CID, PMIX_MAX_KEYLEN) == 0) {
            if (Status st = add(PMIX_GROUP_LOCAL_CID, gi.value, 0); !st.ok()) return fail(st);
            continue;
        }
        if (strncmp(gi.key, PMIX_GROUP_INFO, PMIX_MAX_KEYLEN) != 0) continue;
        const pmix_data_array_t *da = gi.value.data.darray;
        if (gi.value.type != PMIX_DATA_ARRAY || da == nullptr ||
            (da->size > 0 && (da->type != PMIX_INFO || da->array == nullptr)))
            return fail(Status(PMIX_ERR_BAD_PARAM, "PMIX_GROUP_INFO must be an array of pmix_info_t"));
        const auto *arr = static_cast<const pmix_info_t *>(da->array);
        for (size_t i = 0; i < da->size; ++i) {
            char key[PMIX_MAX_KEYLEN + 1];
            memcpy(key, arr[i].key, PMIX_MAX_KEYLEN);
            key[PMIX_MAX_KEYLEN] = '\0';
            if (Status st = add(key, arr[i].value, arr[i].flags); !st.ok()) return fail(st);
        }
    }
    auto *a = static_cast<pmix_info_t *>(calloc(mine.empty() ? 1 : mine.size(), sizeof(pmix_info_t)));
    if (a == nullptr) return fail(Status(PMIX_ERR_NOMEM, "group member info"));
    for (size_t k = 0; k < mine.size(); ++k) a[k] = mine[k];  // taken over
    *out = InfoArray(a, mine.size());
    return Status::success();
}

const char *to_string(member_state s) {
    switch (s) {
    case member_state::joined: return "joined";
    case member_state::declined: return "declined";
    case member_state::failed: return "failed";
    }
    return "unknown";
}

namespace {

bool valid_state(uint8_t s) { return s >= 1 && s <= 3; }

Status encode_infos(Writer &w, const InfoArray &a) { return encode_info_array(w, a.data(), a.size()); }

Status encode_proc_list(Writer &w, const std::vector<pmix_proc_t> &procs) {
    w.put_u32(static_cast<uint32_t>(procs.size()));
    for (const auto &p : procs) PMIXCPP_RETURN_IF_ERROR(encode_proc(w, p));
    return Status::success();
}

Status decode_proc_list(Reader &r, std::vector<pmix_proc_t> *procs) {
    uint32_t n = 0;
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&n));
    PMIXCPP_RETURN_IF_ERROR(r.take_count(n, 8, sizeof(pmix_proc_t), "group procs", r.proc_limit()));
    procs->assign(n, pmix_proc_t{});
    for (auto &p : *procs) PMIXCPP_RETURN_IF_ERROR(decode_proc(r, &p));
    return Status::success();
}

void encode_rank_list(Writer &w, const std::vector<uint32_t> &ranks) {
    w.put_u32(static_cast<uint32_t>(ranks.size()));
    for (uint32_t r : ranks) w.put_u32(r);
}

// Sorted, no repeats, each < ntasks.
Status decode_rank_list(Reader &r, uint32_t ntasks, std::vector<uint32_t> *ranks) {
    uint32_t n = 0;
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&n));
    PMIXCPP_RETURN_IF_ERROR(r.take_count(n, 4, sizeof(uint32_t), "group ranks", ntasks));
    ranks->assign(n, 0);
    for (uint32_t i = 0; i < n; ++i) {
        PMIXCPP_RETURN_IF_ERROR(r.get_u32(&(*ranks)[i]));
        if ((*ranks)[i] >= ntasks)
            return Status(PMIX_ERR_UNPACK_FAILURE, "group rank " + std::to_string((*ranks)[i]) + " out of range");
        if (i > 0 && (*ranks)[i] <= (*ranks)[i - 1]) return Status(PMIX_ERR_UNPACK_FAILURE, "group ranks not sorted");
    }
    return Status::success();
}

Status decode_group_name(Reader &r, std::string *name) {
    PMIXCPP_RETURN_IF_ERROR(r.get_string(name, PMIX_MAX_NSLEN), "group name");
    if (name->empty()) return Status(PMIX_ERR_UNPACK_FAILURE, "empty group name");
    return Status::success();
}

}  // namespace

Status encode(Writer &w, const group_request &m) {
    w.put_u8(m.op);
    PMIXCPP_RETURN_IF_ERROR(w.put_string(m.name));
    PMIXCPP_RETURN_IF_ERROR(encode_proc_list(w, m.procs));
    PMIXCPP_RETURN_IF_ERROR(encode_infos(w, m.directives));
    return encode_infos(w, m.member_info);
}

Status decode(Reader &r, group_request *m) {
    PMIXCPP_RETURN_IF_ERROR(r.get_u8(&m->op));
    if (!valid_group_op(m->op)) return Status(PMIX_ERR_UNPACK_FAILURE, "unknown group operation " + std::to_string(m->op));
    PMIXCPP_RETURN_IF_ERROR(decode_group_name(r, &m->name));
    PMIXCPP_RETURN_IF_ERROR(decode_proc_list(r, &m->procs), "group members");
    PMIXCPP_RETURN_IF_ERROR(decode_info_array(r, &m->directives));
    return decode_info_array(r, &m->member_info);
}

Status encode(Writer &w, const group_reply &m) {
    w.put_u64(m.context_id);
    w.put_u32(static_cast<uint32_t>(m.members.size()));
    for (const auto &e : m.members) {
        PMIXCPP_RETURN_IF_ERROR(encode_proc(w, e.proc));
        w.put_u8(e.state);
        PMIXCPP_RETURN_IF_ERROR(encode_infos(w, e.infos));
    }
    return Status::success();
}

Status decode(Reader &r, group_reply *m) {
    PMIXCPP_RETURN_IF_ERROR(r.get_u64(&m->context_id));
    uint32_t n = 0;
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&n));
    PMIXCPP_RETURN_IF_ERROR(r.take_count(n, 8 + 1 + 4, sizeof(group_member), "group members", r.proc_limit()));
    m->members.clear();
    m->members.resize(n);
    for (auto &e : m->members) {
        PMIXCPP_RETURN_IF_ERROR(decode_proc(r, &e.proc));
        PMIXCPP_RETURN_IF_ERROR(r.get_u8(&e.state));
        if (!valid_state(e.state)) return Status(PMIX_ERR_UNPACK_FAILURE, "bad group member state");
        PMIXCPP_RETURN_IF_ERROR(decode_info_array(r, &e.infos));
    }
    return Status::success();
}

Status encode(Writer &w, const group_contribution &m) {
    w.put_u64(m.reservation);
    w.put_u32(static_cast<uint32_t>(m.entries.size()));
    for (const auto &e : m.entries) {
        w.put_u32(e.rank);
        w.put_u8(e.state);
        PMIXCPP_RETURN_IF_ERROR(encode_infos(w, e.infos));
    }
    return Status::success();
}

Status decode_group_contribution(std::span<const uint8_t> bytes, uint32_t ntasks, group_contribution *m) {
    Reader r(bytes);
    PMIXCPP_RETURN_IF_ERROR(r.get_u64(&m->reservation));
    uint32_t n = 0;
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&n));
    PMIXCPP_RETURN_IF_ERROR(r.take_count(n, 4 + 1 + 4, sizeof(group_rank_entry), "group entries", ntasks));
    m->entries.clear();
    m->entries.resize(n);
    for (auto &e : m->entries) {
        PMIXCPP_RETURN_IF_ERROR(r.get_u32(&e.rank));
        if (e.rank >= ntasks) return Status(PMIX_ERR_UNPACK_FAILURE, "group entry for rank " + std::to_string(e.rank) + " out of range");
        PMIXCPP_RETURN_IF_ERROR(r.get_u8(&e.state));
        if (!valid_state(e.state)) return Status(PMIX_ERR_UNPACK_FAILURE, "bad group member state");
        PMIXCPP_RETURN_IF_ERROR(decode_info_array(r, &e.infos));
    }
    return r.expect_end();
}

Status encode(Writer &w, const group_bootstrap_entry &m) {
    PMIXCPP_RETURN_IF_ERROR(w.put_string(m.name));
    w.put_u32(m.rank);
    w.put_u32(m.leaders);
    encode_rank_list(w, m.add);
    return Status::success();
}

Status decode_group_bootstrap_entry(std::span<const uint8_t> bytes, uint32_t ntasks, group_bootstrap_entry *m) {
    Reader r(bytes);
    PMIXCPP_RETURN_IF_ERROR(decode_group_name(r, &m->name));
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&m->rank));
    if (m->rank >= ntasks)
        return Status(PMIX_ERR_UNPACK_FAILURE, "bootstrap entry of rank " + std::to_string(m->rank) + " out of range");
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&m->leaders));
    if (m->leaders > ntasks) return Status(PMIX_ERR_UNPACK_FAILURE, "more bootstrap leaders than ranks");
    PMIXCPP_RETURN_IF_ERROR(decode_rank_list(r, ntasks, &m->add), "bootstrap members");
    if (m->leaders == 0 && !m->add.empty())
        return Status(PMIX_ERR_UNPACK_FAILURE, "a bootstrap follower names members");
    return r.expect_end();
}

Status encode(Writer &w, const group_bootstrap_result &m) {
    PMIXCPP_RETURN_IF_ERROR(w.put_string(m.name));
    w.put_i32(m.status);
    PMIXCPP_RETURN_IF_ERROR(w.put_string(m.message));
    encode_rank_list(w, m.members);
    return Status::success();
}

Status decode_group_bootstrap_result(std::span<const uint8_t> bytes, uint32_t ntasks, group_bootstrap_result *m) {
    Reader r(bytes);
    PMIXCPP_RETURN_IF_ERROR(decode_group_name(r, &m->name));
    PMIXCPP_RETURN_IF_ERROR(r.get_i32(&m->status));
    if (m->status > 0) return Status(PMIX_ERR_UNPACK_FAILURE, "bad bootstrap status");
    PMIXCPP_RETURN_IF_ERROR(r.get_string(&m->message, 4096), "bootstrap message");
    PMIXCPP_RETURN_IF_ERROR(decode_rank_list(r, ntasks, &m->members), "bootstrap members");
    if (m->status == PMIX_SUCCESS && m->members.empty()) return Status(PMIX_ERR_UNPACK_FAILURE, "a bootstrap without members");
    return r.expect_end();
}

}  // namespace pmixcpp::wire
