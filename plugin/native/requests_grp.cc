// OpenPMIx's group, query and log requests and their replies; see requests_grp.h.
#include "plugin/native/requests_grp.h"

#include <cstdlib>
#include <cstring>

#include "plugin/native/requests.h"

namespace pmixcpp::native {

namespace {

// A group name: a STRING pack of one, 1..PMIX_MAX_NSLEN characters.
Status get_group_name(unpacker &up, std::string *name) {
    PMIXCPP_RETURN_IF_ERROR(expect_count(up, 1, "group name"));
    PMIXCPP_RETURN_IF_ERROR(up.get_string(name, PMIX_MAX_NSLEN), "group name");
    if (name->empty()) return Status(PMIX_ERR_BAD_PARAM, "group: an empty name");
    return Status::success();
}

}  // namespace

Status decode_query(unpacker &up, wire::query_request *out) {
    size_t nq;
    PMIXCPP_RETURN_IF_ERROR(get_announced(up, kMaxQueries, 5, "queries", &nq));
    if (nq == 0) return Status(PMIX_ERR_BAD_PARAM, "query: no queries");
    PMIXCPP_RETURN_IF_ERROR(expect_count(up, nq, "queries"));
    wire::query_request m;
    for (size_t q = 0; q < nq; ++q) {
        wire::query_entry e;
        int32_t nkeys;
        PMIXCPP_RETURN_IF_ERROR(up.get(PMIX_INT32, &nkeys), "query keys");
        if (nkeys <= 0) return Status(PMIX_ERR_BAD_PARAM, "query " + std::to_string(q) + ": " + std::to_string(nkeys) + " keys");
        PMIXCPP_RETURN_IF_ERROR(check_announced(up, static_cast<size_t>(nkeys), kMaxQueryKeys, 1, "query keys"));
        for (int32_t k = 0; k < nkeys; ++k) {
            std::string key;
            PMIXCPP_RETURN_IF_ERROR(up.get_string(&key, PMIX_MAX_KEYLEN), "query key");
            if (key.empty()) return Status(PMIX_ERR_BAD_PARAM, "query " + std::to_string(q) + ": an empty key");
            e.keys.push_back(std::move(key));
        }
        size_t nqual;
        PMIXCPP_RETURN_IF_ERROR(up.get(PMIX_SIZE, &nqual), "query qualifiers");
        PMIXCPP_RETURN_IF_ERROR(check_announced(up, nqual, SIZE_MAX, 3, "query qualifiers"));
        if (nqual > 0) PMIXCPP_RETURN_IF_ERROR(up.get_infos(nqual, &e.qualifiers), "query qualifiers");
        m.queries.push_back(std::move(e));
    }
    PMIXCPP_RETURN_IF_ERROR(trailing(up, "query"));
    *out = std::move(m);
    return Status::success();
}

Status decode_log(unpacker &up, wire::log_request *out) {
    uint64_t stamp;  // when the client logged; the server stamps its own lines
    PMIXCPP_RETURN_IF_ERROR(up.unpack(PMIX_TIME, &stamp, 1), "log time");
    wire::log_request m;
    PMIXCPP_RETURN_IF_ERROR(get_info_pack(up, "log data", &m.data));
    PMIXCPP_RETURN_IF_ERROR(get_info_pack(up, "log directives", &m.directives));
    PMIXCPP_RETURN_IF_ERROR(trailing(up, "log"));
    if (m.data.empty()) return Status(PMIX_ERR_BAD_PARAM, "log: no data");
    *out = std::move(m);
    return Status::success();
}

Status decode_job_control(unpacker &up, size_t max_procs, wire::job_control_request *out) {
    wire::job_control_request m;
    PMIXCPP_RETURN_IF_ERROR(get_procs(up, max_procs, "job control targets", false, &m.targets));
    PMIXCPP_RETURN_IF_ERROR(get_info_pack(up, "job control directives", &m.infos));
    PMIXCPP_RETURN_IF_ERROR(trailing(up, "job control"));
    if (m.infos.empty()) return Status(PMIX_ERR_BAD_PARAM, "job control: no directives");
    *out = std::move(m);
    return Status::success();
}

Status decode_monitor(unpacker &up, wire::monitor_request *out) {
    wire::monitor_request m;
    PMIXCPP_RETURN_IF_ERROR(expect_count(up, 1, "monitor"));
    PMIXCPP_RETURN_IF_ERROR(up.get_infos(1, &m.monitor), "monitor");
    // PMIX_MONITOR_HEARTBEAT / PMIX_SEND_HEARTBEAT come as NULL pointers (a sentinel byte on the
    // wire): only the key matters, as for pmixcpp's own client
    if (m.monitor.data()[0].value.type == PMIX_POINTER) m.monitor.data()[0].value.type = PMIX_UNDEF;
    PMIXCPP_RETURN_IF_ERROR(up.unpack(PMIX_STATUS, &m.error, 1), "monitor error code");
    PMIXCPP_RETURN_IF_ERROR(get_info_pack(up, "monitor directives", &m.directives));
    PMIXCPP_RETURN_IF_ERROR(trailing(up, "monitor"));
    *out = std::move(m);
    return Status::success();
}

Status decode_alloc(unpacker &up, wire::alloc_request *out) {
    wire::alloc_request m;
    PMIXCPP_RETURN_IF_ERROR(up.unpack(PMIX_ALLOC_DIRECTIVE, &m.directive, 1), "allocation directive");
    PMIXCPP_RETURN_IF_ERROR(get_info_pack(up, "allocation infos", &m.infos));
    PMIXCPP_RETURN_IF_ERROR(trailing(up, "allocation request"));
    *out = std::move(m);
    return Status::success();
}

Status decode_group_construct(unpacker &up, wire::group_request *out, size_t max_procs) {
    wire::group_request m;
    m.op = static_cast<uint8_t>(wire::group_op::construct);
    PMIXCPP_RETURN_IF_ERROR(get_group_name(up, &m.name));
    PMIXCPP_RETURN_IF_ERROR(get_procs(up, max_procs, "group members", false, &m.procs));
    if (m.procs.empty()) return Status(PMIX_ERR_BAD_PARAM, "group " + m.name + ": no members");
    for (const auto &p : m.procs)
        if (p.rank == PMIX_RANK_UNDEF || p.rank == PMIX_RANK_INVALID || p.nspace[0] == '\0')
            return Status(PMIX_ERR_BAD_PARAM, "group " + m.name + ": a member without namespace or rank");
    PMIXCPP_RETURN_IF_ERROR(get_info_pack(up, "group directives", &m.directives));
    PMIXCPP_RETURN_IF_ERROR(trailing(up, "group construct"));
    PMIXCPP_RETURN_IF_ERROR(wire::group_member_info(m.directives.data(), m.directives.size(), &m.member_info));
    *out = std::move(m);
    return Status::success();
}

Status decode_group_destruct(unpacker &up, const release &client, size_t max_procs, wire::group_request *out) {
    wire::group_request m;
    m.op = static_cast<uint8_t>(wire::group_op::destruct);
    PMIXCPP_RETURN_IF_ERROR(get_group_name(up, &m.name));
    if (at_least(client, 4, 2, 4)) {
        std::vector<pmix_proc_t> theirs;
        PMIXCPP_RETURN_IF_ERROR(get_procs(up, max_procs, "group members", true, &theirs));
    }
    PMIXCPP_RETURN_IF_ERROR(get_info_pack(up, "group directives", &m.directives));
    PMIXCPP_RETURN_IF_ERROR(trailing(up, "group destruct"));
    *out = std::move(m);
    return Status::success();
}

Status decode_group_leave(unpacker &up, std::string *name, InfoArray *directives) {
    std::string n;
    InfoArray d;
    PMIXCPP_RETURN_IF_ERROR(get_group_name(up, &n));
    PMIXCPP_RETURN_IF_ERROR(get_info_pack(up, "group leave directives", &d));
    PMIXCPP_RETURN_IF_ERROR(trailing(up, "group leave"));
    *name = std::move(n);
    *directives = std::move(d);
    return Status::success();
}

Result<std::vector<uint8_t>> encode_query_reply(int_flavour f, pmix_status_t status, const pmix_info_t *results,
                                                size_t n) {
    packer pk(f);
    pk.put_int32(1);
    pk.put_status(status);
    if (status != PMIX_SUCCESS && status != PMIX_ERR_PARTIAL_SUCCESS) return pk.take();
    pk.put_int32(1);
    pk.put_size(n);
    if (n > 0) {
        pk.put_int32(static_cast<int32_t>(n));
        for (size_t i = 0; i < n; ++i) PMIXCPP_RETURN_IF_ERROR(pk.put_info(results[i]), "query reply");
    }
    return pk.take();
}

release parse_release(std::string_view version) {
    release r;
    int *parts[] = {&r.major, &r.minor, &r.patch};
    size_t i = 0;
    for (int *p : parts) {
        int v = 0;
        bool any = false;
        while (i < version.size() && version[i] >= '0' && version[i] <= '9' && v < 100000) {
            v = v * 10 + (version[i++] - '0');
            any = true;
        }
        if (!any) break;
        *p = v;
        if (i >= version.size() || version[i] != '.') break;
        ++i;
    }
    return r;
}

bool at_least(const release &r, int major, int minor, int patch) {
    if (r.major != major) return r.major > major;
    if (r.minor != minor) return r.minor > minor;
    return r.patch >= patch;
}

Result<std::vector<uint8_t>> encode_group_construct_reply(int_flavour f, const release &client, pmix_status_t status,
                                                          const std::vector<pmix_proc_t> &members, uint64_t ctxid) {
    packer pk(f);
    pk.put_int32(1);
    pk.put_status(status);
    if (status != PMIX_SUCCESS) return pk.take();
    const size_t cid = static_cast<size_t>(ctxid);
    if (!at_least(client, 4, 2, 4)) {
        if (ctxid != 0) {
            pk.put_int32(1);
            pk.put_size(cid);
        }
        return pk.take();
    }
    pk.put_int32(1);
    pk.put_size(members.size());
    if (!members.empty()) {
        pk.put_int32(static_cast<int32_t>(members.size()));
        for (const auto &p : members) pk.put_proc(p);
    }
    if (!at_least(client, 6, 0, 0)) {
        if (ctxid != 0) {
            pk.put_int32(1);
            pk.put_size(cid);
        }
        return pk.take();
    }
    const bool has = ctxid != 0;
    PMIXCPP_RETURN_IF_ERROR(pk.pack(PMIX_BOOL, &has, 1));
    if (has) {
        pk.put_int32(1);
        pk.put_size(cid);
    }
    if (at_least(client, 6, 1, 0)) {
        pk.put_int32(1);
        pk.put_size(0);
    }
    return pk.take();
}

}  // namespace pmixcpp::native
