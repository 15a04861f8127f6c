// OpenPMIx client requests served by translation, and their replies; see requests.h.
#include "plugin/native/requests.h"

#include <cstring>
#include <map>

#include "plugin/native/connection.h"

namespace pmixcpp::native {

Status trailing(const unpacker &up, const char *what) {
    if (up.at_end()) return Status::success();
    return Status(PMIX_ERR_UNPACK_FAILURE,
                  std::string(what) + ": " + std::to_string(up.remaining()) + " unexpected bytes at the end");
}

Status expect_count(unpacker &up, size_t n, const char *what) {
    int32_t count;
    PMIXCPP_RETURN_IF_ERROR(up.unpack_count(&count), what);
    if (count < 0 || static_cast<size_t>(count) != n)
        return Status(PMIX_ERR_UNPACK_FAILURE,
                      std::string(what) + ": " + std::to_string(count) + " elements, " + std::to_string(n) + " announced");
    return Status::success();
}

Status check_announced(const unpacker &up, size_t v, size_t cap, size_t min_bytes, const char *what) {
    if (v > cap) return Status(PMIX_ERR_BAD_PARAM, std::string(what) + ": " + std::to_string(v) + " (at most " + std::to_string(cap) + ")");
    if (v > up.remaining() / min_bytes)
        return Status(PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER,
                      std::string(what) + ": " + std::to_string(v) + " announced, " + std::to_string(up.remaining()) + " bytes remain");
    return Status::success();
}

Status get_announced(unpacker &up, size_t cap, size_t min_bytes, const char *what, size_t *n) {
    size_t v;
    PMIXCPP_RETURN_IF_ERROR(up.unpack(PMIX_SIZE, &v, 1), what);
    PMIXCPP_RETURN_IF_ERROR(check_announced(up, v, cap, min_bytes, what));
    *n = v;
    return Status::success();
}

Status get_procs(unpacker &up, size_t max_procs, const char *what, bool pack_when_empty, std::vector<pmix_proc_t> *out) {
    size_t n;
    PMIXCPP_RETURN_IF_ERROR(get_announced(up, max_procs, 2, what, &n));
    std::vector<pmix_proc_t> procs;
    if (n > 0 || pack_when_empty) {
        PMIXCPP_RETURN_IF_ERROR(expect_count(up, n, what));
        procs.resize(n);
        for (size_t i = 0; i < n; ++i) PMIXCPP_RETURN_IF_ERROR(up.get_proc(&procs[i]), what);
    }
    *out = std::move(procs);
    return Status::success();
}

Status get_info_pack(unpacker &up, const char *what, InfoArray *out) {
    size_t n;
    PMIXCPP_RETURN_IF_ERROR(get_announced(up, SIZE_MAX, 3, what, &n));
    if (n == 0) {
        *out = InfoArray();
        return Status::success();
    }
    PMIXCPP_RETURN_IF_ERROR(expect_count(up, n, what));
    return up.get_infos(n, out).with_context(what);
}

Status decode_commit(unpacker &up, commit_data *out) {
    // key -> (scope bits, value): LOCAL and REMOTE of one key merge into GLOBAL.
    struct entry {
        uint8_t scopes = 0;
        pmix_value_t value{};
    };
    std::map<std::string, entry> keys;
    std::vector<std::string> order;
    auto release = [&] {
        for (auto &[k, e] : keys) value_destruct(&e.value);
    };
    Status st = [&]() -> Status {
        while (!up.at_end()) {
            uint8_t scope;
            PMIXCPP_RETURN_IF_ERROR(up.unpack(PMIX_SCOPE, &scope, 1), "commit scope");
            if (scope != PMIX_LOCAL && scope != PMIX_REMOTE && scope != PMIX_GLOBAL)
                return Status(PMIX_ERR_BAD_PARAM, "commit: scope " + std::to_string(scope));
            PMIXCPP_RETURN_IF_ERROR(expect_count(up, 1, "commit buffer"));
            uint8_t type;
            std::span<const uint8_t> bytes;
            PMIXCPP_RETURN_IF_ERROR(up.get_buffer(&type, &bytes), "commit buffer");
            unpacker inner(up.flavour(), bytes, up.reader().budget_left());
            while (!inner.at_end()) {
                int32_t n;
                PMIXCPP_RETURN_IF_ERROR(inner.unpack_count(&n), "commit kval");
                for (int32_t i = 0; i < n; ++i) {
                    std::string key;
                    pmix_value_t v{};
                    PMIXCPP_RETURN_IF_ERROR(inner.get_kval(&key, &v), "commit kval");
                    if (key.empty() || key.size() > PMIX_MAX_KEYLEN) {
                        value_destruct(&v);
                        return Status(PMIX_ERR_BAD_PARAM, "commit: a key of " + std::to_string(key.size()) + " characters");
                    }
                    auto [it, fresh] = keys.try_emplace(key);
                    if (fresh) order.push_back(key);
                    else value_destruct(&it->second.value);  // a later value of a key replaces it
                    it->second.value = v;
                    it->second.scopes |= scope == PMIX_GLOBAL ? 3 : scope == PMIX_LOCAL ? 1 : 2;
                }
            }
            PMIXCPP_RETURN_IF_ERROR(up.reader().charge(inner.reader().charged(), "commit buffer"));
        }
        return Status::success();
    }();
    if (!st.ok()) {
        release();
        return st;
    }
    auto *infos = static_cast<pmix_info_t *>(calloc(order.empty() ? 1 : order.size(), sizeof(pmix_info_t)));
    if (infos == nullptr) {
        release();
        return Status(PMIX_ERR_NOMEM, "commit");
    }
    commit_data d;
    d.infos = InfoArray(infos, order.size());
    for (size_t i = 0; i < order.size(); ++i) {
        entry &e = keys[order[i]];
        memcpy(infos[i].key, order[i].data(), order[i].size());
        infos[i].value = e.value;  // taken over
        e.value = pmix_value_t{};
        d.scopes.push_back(e.scopes == 3 ? PMIX_GLOBAL : e.scopes == 1 ? PMIX_LOCAL : PMIX_REMOTE);
    }
    *out = std::move(d);
    return Status::success();
}

Status decode_fence(unpacker &up, fence_data *out, size_t max_procs) {
    fence_data d;
    // OpenPMIx packs the procs whatever their number (a NULL array is one WILDCARD proc).
    PMIXCPP_RETURN_IF_ERROR(get_procs(up, max_procs, "fence procs", true, &d.procs));
    PMIXCPP_RETURN_IF_ERROR(get_info_pack(up, "fence infos", &d.infos));
    PMIXCPP_RETURN_IF_ERROR(trailing(up, "fence"));
    *out = std::move(d);
    return Status::success();
}

Status decode_get(unpacker &up, get_data *out) {
    get_data d;
    std::string nspace;
    PMIXCPP_RETURN_IF_ERROR(expect_count(up, 1, "get nspace"));
    PMIXCPP_RETURN_IF_ERROR(up.get_string(&nspace, PMIX_MAX_NSLEN), "get nspace");
    memcpy(d.proc.nspace, nspace.data(), nspace.size());
    PMIXCPP_RETURN_IF_ERROR(up.unpack(PMIX_PROC_RANK, &d.proc.rank, 1), "get rank");
    PMIXCPP_RETURN_IF_ERROR(get_info_pack(up, "get infos", &d.infos));
    if (!up.at_end()) {
        PMIXCPP_RETURN_IF_ERROR(expect_count(up, 1, "get key"));
        PMIXCPP_RETURN_IF_ERROR(up.get_string(&d.key, PMIX_MAX_KEYLEN), "get key");
    }
    PMIXCPP_RETURN_IF_ERROR(trailing(up, "get"));
    *out = std::move(d);
    return Status::success();
}

Status decode_abort(unpacker &up, abort_data *out, size_t max_procs) {
    abort_data d;
    PMIXCPP_RETURN_IF_ERROR(up.unpack(PMIX_STATUS, &d.status, 1), "abort status");
    PMIXCPP_RETURN_IF_ERROR(expect_count(up, 1, "abort message"));
    char *msg = nullptr;
    PMIXCPP_RETURN_IF_ERROR(up.get_cstring(&msg, 65536), "abort message");
    if (msg) {
        d.message = msg;
        free(msg);
    }
    PMIXCPP_RETURN_IF_ERROR(get_procs(up, max_procs, "abort procs", false, &d.procs));
    PMIXCPP_RETURN_IF_ERROR(trailing(up, "abort"));
    *out = std::move(d);
    return Status::success();
}

Status decode_regevents(unpacker &up, regevents_data *out) {
    regevents_data d;
    size_t n;
    PMIXCPP_RETURN_IF_ERROR(get_announced(up, 65536, 1, "event codes", &n));
    if (n > 0) {
        PMIXCPP_RETURN_IF_ERROR(expect_count(up, n, "event codes"));
        d.codes.resize(n);
        for (size_t i = 0; i < n; ++i) PMIXCPP_RETURN_IF_ERROR(up.get_status(&d.codes[i]), "event code");
    }
    PMIXCPP_RETURN_IF_ERROR(get_info_pack(up, "event infos", &d.infos));
    PMIXCPP_RETURN_IF_ERROR(trailing(up, "regevents"));
    *out = std::move(d);
    return Status::success();
}

Status decode_notify(unpacker &up, notify_data *out) {
    notify_data d;
    PMIXCPP_RETURN_IF_ERROR(up.unpack(PMIX_STATUS, &d.status, 1), "event code");
    PMIXCPP_RETURN_IF_ERROR(up.unpack(PMIX_DATA_RANGE, &d.range, 1), "event range");
    PMIXCPP_RETURN_IF_ERROR(get_info_pack(up, "event infos", &d.infos));
    PMIXCPP_RETURN_IF_ERROR(trailing(up, "notify"));
    *out = std::move(d);
    return Status::success();
}

Result<std::vector<uint8_t>> encode_event(int_flavour f, pmix_status_t status, const pmix_proc_t &source,
                                          uint8_t range, const pmix_info_t *infos, size_t count) {
    packer pk(f);
    uint8_t cmd = 12;  // PMIX_NOTIFY_CMD
    PMIXCPP_RETURN_IF_ERROR(pk.pack(PMIX_COMMAND, &cmd, 1));
    PMIXCPP_RETURN_IF_ERROR(pk.pack(PMIX_STATUS, &status, 1));
    PMIXCPP_RETURN_IF_ERROR(pk.pack(PMIX_PROC, &source, 1));
    PMIXCPP_RETURN_IF_ERROR(pk.pack(PMIX_SIZE, &count, 1));
    if (count > 0)
        PMIXCPP_RETURN_IF_ERROR(pk.pack(PMIX_INFO, infos, static_cast<int32_t>(count)), "event infos");
    PMIXCPP_RETURN_IF_ERROR(pk.pack(PMIX_DATA_RANGE, &range, 1));
    return pk.take();
}

std::vector<uint8_t> encode_status_reply(int_flavour f, pmix_status_t status) {
    packer pk(f);
    pk.put_int32(1);
    pk.put_status(status);
    return pk.take();
}

Result<std::vector<uint8_t>> encode_get_reply(int_flavour f, const pmix_proc_t &proc, const pmix_info_t *data,
                                              size_t count) {
    packer inner(f);
    inner.put_int32(1);
    inner.put_proc(proc);
    for (size_t i = 0; i < count; ++i) {
        char key[PMIX_MAX_KEYLEN + 1];
        memcpy(key, data[i].key, PMIX_MAX_KEYLEN);
        key[PMIX_MAX_KEYLEN] = '\0';
        inner.put_int32(1);
        PMIXCPP_RETURN_IF_ERROR(inner.put_kval(key, data[i].value), std::string("get reply key ") + key);
    }
    packer pk(f);
    pk.put_int32(1);
    pk.put_status(PMIX_SUCCESS);
    pk.put_int32(1);
    pk.put_bytes(inner.data());
    return pk.take();
}

std::vector<uint8_t> frame_message(uint32_t tag, std::span<const uint8_t> payload) {
    auto h = encode_header({0, tag, static_cast<uint32_t>(payload.size())});
    std::vector<uint8_t> out(h.size() + payload.size());
    memcpy(out.data(), h.data(), h.size());
    if (!payload.empty()) memcpy(out.data() + h.size(), payload.data(), payload.size());
    return out;
}

}  // namespace pmixcpp::native
