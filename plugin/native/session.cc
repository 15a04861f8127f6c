// One OpenPMIx client connection as an engine; see session.h.
#include "plugin/native/session.h"

#include <cstring>

namespace pmixcpp::native {

namespace {

Status pack_kval_info(packer &pk, const pmix_info_t &info) {
    pk.put_int32(1);
    char key[PMIX_MAX_KEYLEN + 1];
    memcpy(key, info.key, PMIX_MAX_KEYLEN);
    key[PMIX_MAX_KEYLEN] = '\0';
    return pk.put_kval(key, info.value).with_context(std::string("job data key ") + key);
}

}  // namespace

Result<std::vector<uint8_t>> pack_job_blob(int_flavour f, const job_blob_data &job) {
    packer pk(f);
    pk.put_int32(1);
    PMIXCPP_RETURN_IF_ERROR(pk.put_string(job.nspace.c_str()));
    for (const pmix_info_t &i : job.job) PMIXCPP_RETURN_IF_ERROR(pack_kval_info(pk, i));
    for (const auto &n : job.nodes) {
        pmix_data_array_t arr{PMIX_INFO, n.infos.size(), const_cast<pmix_info_t *>(n.infos.data())};
        pmix_value_t v{};
        v.type = PMIX_DATA_ARRAY;
        v.data.darray = &arr;
        pk.put_int32(1);
        PMIXCPP_RETURN_IF_ERROR(pk.put_kval(PMIX_NODE_INFO_ARRAY, v));
    }
    for (const auto &r : job.ranks) {
        packer inner(f);
        pmix_rank_t rank = r.rank;
        PMIXCPP_RETURN_IF_ERROR(inner.pack(PMIX_PROC_RANK, &rank, 1));
        for (const pmix_info_t &i : r.infos) PMIXCPP_RETURN_IF_ERROR(pack_kval_info(inner, i));
        pmix_value_t v{};
        v.type = PMIX_BYTE_OBJECT;
        v.data.bo.bytes = reinterpret_cast<char *>(const_cast<uint8_t *>(inner.data().data()));
        v.data.bo.size = inner.size();
        pk.put_int32(1);
        PMIXCPP_RETURN_IF_ERROR(pk.put_kval(PMIX_PROC_BLOB, v));
    }
    return pk.take();
}

const char *to_string(session_state s) {
    switch (s) {
        case session_state::awaiting_handshake: return "awaiting handshake";
        case session_state::connected: return "connected";
        case session_state::finalized: return "finalized";
        case session_state::closed: return "closed";
    }
    return "?";
}

session::action session::refuse(pmix_status_t st, Status why, bool send_status) {
    action a;
    if (send_status) a.out = encode_client_ack(st, 0);
    a.close = true;
    a.why = std::move(why);
    _state = session_state::closed;
    return a;
}

session::action session::reply(uint32_t tag, std::vector<uint8_t> payload) {
    action a;
    auto h = encode_header({0, tag, static_cast<uint32_t>(payload.size())});
    a.out.assign(h.begin(), h.end());
    a.out.insert(a.out.end(), payload.begin(), payload.end());
    return a;
}

session::action session::on_handshake(std::span<const uint8_t> payload, uid_t peer_uid) {
    if (_state != session_state::awaiting_handshake)
        return refuse(PMIX_ERR_BAD_PARAM, Status(PMIX_ERR_BAD_PARAM, "a second handshake"), false);
    // The kernel's word first: a process of another user learns nothing and gets nothing.
    if (peer_uid != _p.uid)
        return refuse(PMIX_ERR_NO_PERMISSIONS,
                      Status(PMIX_ERR_NO_PERMISSIONS, "connection from uid " + std::to_string(peer_uid) +
                                                         ", the job's user is " + std::to_string(_p.uid)),
                      true);
    Result<hello> h = parse_hello(payload);
    if (!h.ok()) return refuse(PMIX_ERR_BAD_PARAM, h.status().with_context("handshake"), true);
    _hello = *h;
    if (_hello.flag != peer_flag::simple_client)
        return refuse(PMIX_ERR_NOT_SUPPORTED,
                      Status(PMIX_ERR_NOT_SUPPORTED, std::string("a ") + to_string(_hello.flag) + " is not served here"), true);
    Result<int_flavour> f = flavour_of_bfrops(_hello.bfrops);
    if (!f.ok()) return refuse(PMIX_ERR_NOT_SUPPORTED, f.status(), true);
    _f = *f;
    if (_hello.buffer_type != kBufferNonDesc)
        return refuse(PMIX_ERR_NOT_SUPPORTED, Status(PMIX_ERR_NOT_SUPPORTED, "fully described buffers are not supported"), true);
    if (_hello.gds != "hash")
        return refuse(PMIX_ERR_NOT_SUPPORTED, Status(PMIX_ERR_NOT_SUPPORTED, "gds \"" + _hello.gds + "\" (only hash)"), true);
    if (_hello.psec == "native") {
        uid_t u;
        gid_t g;
        Status st = native_credential(_hello, &u, &g);
        if (!st.ok()) return refuse(PMIX_ERR_INVALID_CRED, st, true);
        if (u != peer_uid)
            return refuse(PMIX_ERR_INVALID_CRED,
                          Status(PMIX_ERR_INVALID_CRED, "credential claims uid " + std::to_string(u) + ", the socket's owner is " +
                                                            std::to_string(peer_uid)),
                          true);
    } else if (_hello.psec != "none") {
        return refuse(PMIX_ERR_NOT_SUPPORTED, Status(PMIX_ERR_NOT_SUPPORTED, "psec \"" + _hello.psec + "\""), true);
    }
    const pmix_proc_t &p = *_hello.proc;
    if (_p.nspace != p.nspace)
        return refuse(PMIX_ERR_NOT_FOUND, Status(PMIX_ERR_NOT_FOUND, std::string("unknown nspace \"") + p.nspace + "\""), true);
    bool local = p.rank < _p.nranks && (!_p.rank_is_local || _p.rank_is_local(p.rank));
    if (!local)
        return refuse(PMIX_ERR_NOT_FOUND, Status(PMIX_ERR_NOT_FOUND, "rank " + std::to_string(p.rank) + " is not served here"), true);
    _state = session_state::connected;
    action a;
    a.out = encode_client_ack(PMIX_SUCCESS, p.rank);
    return a;
}

session::action session::on_message(const header &h, std::span<const uint8_t> payload) {
    if (_state != session_state::connected)
        return refuse(PMIX_ERR_BAD_PARAM,
                      Status(PMIX_ERR_BAD_PARAM, std::string("a message while ") + to_string(_state)), false);
    unpacker up(_f, payload);
    uint8_t cmd = 0;
    Status st = up.unpack(PMIX_COMMAND, &cmd, 1);
    if (!st.ok()) return refuse(PMIX_ERR_BAD_PARAM, st.with_context("command"), false);
    packer status_reply(_f);
    switch (static_cast<command>(cmd)) {
        case command::req: {
            if (!_p.job_blob) return refuse(PMIX_ERR_NOT_SUPPORTED, Status(PMIX_ERR_NOT_SUPPORTED, "no job data"), false);
            Result<std::vector<uint8_t>> blob = _p.job_blob(_f);
            if (!blob.ok()) return refuse(blob.status().code(), blob.status().with_context("job data"), false);
            return reply(h.tag, std::move(blob.value()));
        }
        case command::finalize: {
            pmix_status_t ok = PMIX_SUCCESS;
            (void)status_reply.pack(PMIX_STATUS, &ok, 1);
            _state = session_state::finalized;
            return reply(h.tag, status_reply.take());
        }
        case command::deregevents:
            return action{};  // OpenPMIx sends no reply
        default: {
            pmix_status_t ns = PMIX_ERR_NOT_SUPPORTED;
            (void)status_reply.pack(PMIX_STATUS, &ns, 1);
            return reply(h.tag, status_reply.take());
        }
    }
}

}  // namespace pmixcpp::native
