// OpenPMIx's dynamic-process requests and their replies; see requests_dyn.h.
#include "plugin/native/requests_dyn.h"

#include <cstdlib>
#include <cstring>

#include "plugin/native/requests.h"

namespace pmixcpp::native {

namespace {

// An element-level string (no count); NULL is the empty string.
Status get_text(unpacker &up, size_t max_len, const char *what, std::string *out) {
    char *c = nullptr;
    PMIXCPP_RETURN_IF_ERROR(up.get_cstring(&c, max_len), what);
    if (c == nullptr) {
        out->clear();
    } else {
        out->assign(c);
        free(c);
    }
    return Status::success();
}

// [INT32 n][STRING...] inside an APP.
Status get_strings(unpacker &up, const char *what, std::vector<std::string> *out) {
    int32_t n;
    PMIXCPP_RETURN_IF_ERROR(up.get(PMIX_INT32, &n), what);
    if (n < 0) return Status(PMIX_ERR_UNPACK_FAILURE, std::string(what) + ": " + std::to_string(n) + " entries");
    PMIXCPP_RETURN_IF_ERROR(check_announced(up, static_cast<size_t>(n), kMaxAppStrings, 1, what));
    std::vector<std::string> v(static_cast<size_t>(n));
    for (auto &s : v) PMIXCPP_RETURN_IF_ERROR(get_text(up, kMaxAppString, what, &s));
    *out = std::move(v);
    return Status::success();
}

Status get_app(unpacker &up, wire::spawn_app *app) {
    PMIXCPP_RETURN_IF_ERROR(get_text(up, kMaxAppString, "app cmd", &app->cmd));
    PMIXCPP_RETURN_IF_ERROR(get_strings(up, "app argv", &app->argv));
    PMIXCPP_RETURN_IF_ERROR(get_strings(up, "app env", &app->env));
    PMIXCPP_RETURN_IF_ERROR(get_text(up, kMaxAppString, "app cwd", &app->cwd));
    int32_t maxprocs;
    PMIXCPP_RETURN_IF_ERROR(up.get(PMIX_INT, &maxprocs), "app maxprocs");
    app->maxprocs = maxprocs;
    size_t ninfo;
    PMIXCPP_RETURN_IF_ERROR(up.get(PMIX_SIZE, &ninfo), "app infos");
    PMIXCPP_RETURN_IF_ERROR(check_announced(up, ninfo, SIZE_MAX, 3, "app infos"));
    if (ninfo > 0) PMIXCPP_RETURN_IF_ERROR(up.get_infos(ninfo, &app->info), "app infos");
    return Status::success();
}

Result<InfoArray> copy_selected(const InfoArray &in, const std::vector<size_t> &which) {
    if (which.empty()) return InfoArray();
    auto *infos = static_cast<pmix_info_t *>(calloc(which.size(), sizeof(pmix_info_t)));
    if (infos == nullptr) return Status(PMIX_ERR_NOMEM, "out of memory");
    InfoArray out(infos, which.size());
    for (size_t i = 0; i < which.size(); ++i) PMIXCPP_RETURN_IF_ERROR(info_xfer(&out[i], &in[which[i]]));
    return out;
}

bool is_publish_directive(const pmix_info_t &i) {
    for (const char *k : {PMIX_RANGE, PMIX_PERSISTENCE, PMIX_TIMEOUT})
        if (key_is(i, k)) return true;
    return false;
}

}  // namespace

Status decode_spawn(unpacker &up, wire::spawn_request *out) {
    wire::spawn_request d;
    PMIXCPP_RETURN_IF_ERROR(get_info_pack(up, "spawn job infos", &d.job_info));
    size_t napps;
    PMIXCPP_RETURN_IF_ERROR(get_announced(up, kMaxSpawnApps, 16, "spawn apps", &napps));
    if (napps > 0) {
        PMIXCPP_RETURN_IF_ERROR(expect_count(up, napps, "spawn apps"));
        d.apps.resize(napps);
        for (auto &a : d.apps) PMIXCPP_RETURN_IF_ERROR(get_app(up, &a));
    }
    PMIXCPP_RETURN_IF_ERROR(trailing(up, "spawn"));
    *out = std::move(d);
    return Status::success();
}

Status decode_publish(unpacker &up, wire::publish_request *out) {
    uint32_t uid;
    PMIXCPP_RETURN_IF_ERROR(up.unpack(PMIX_UINT32, &uid, 1), "publish uid");
    InfoArray all;
    PMIXCPP_RETURN_IF_ERROR(get_info_pack(up, "publish infos", &all));
    PMIXCPP_RETURN_IF_ERROR(trailing(up, "publish"));
    std::vector<size_t> data, dirs;
    for (size_t i = 0; i < all.size(); ++i) (is_publish_directive(all[i]) ? dirs : data).push_back(i);
    wire::publish_request d;
    PMIXCPP_ASSIGN_OR_RETURN(auto a, copy_selected(all, data));
    PMIXCPP_ASSIGN_OR_RETURN(auto b, copy_selected(all, dirs));
    d.data = std::move(a);
    d.directives = std::move(b);
    *out = std::move(d);
    return Status::success();
}

Status decode_lookup(unpacker &up, wire::lookup_request *out) {
    uint32_t uid;
    PMIXCPP_RETURN_IF_ERROR(up.unpack(PMIX_UINT32, &uid, 1), "lookup uid");
    size_t nkeys;
    PMIXCPP_RETURN_IF_ERROR(get_announced(up, kMaxLookupKeys, 2, "lookup keys", &nkeys));
    wire::lookup_request d;
    d.keys.resize(nkeys);
    for (auto &k : d.keys) {
        PMIXCPP_RETURN_IF_ERROR(expect_count(up, 1, "lookup key"));
        PMIXCPP_RETURN_IF_ERROR(up.get_string(&k, PMIX_MAX_KEYLEN), "lookup key");
    }
    PMIXCPP_RETURN_IF_ERROR(get_info_pack(up, "lookup infos", &d.directives));
    PMIXCPP_RETURN_IF_ERROR(trailing(up, "lookup"));
    *out = std::move(d);
    return Status::success();
}

Status decode_connect(unpacker &up, connect_data *out, size_t max_procs) {
    fence_data f;  // the same layout
    Status st = decode_fence(up, &f, max_procs);
    if (!st.ok()) return Status(st.code(), "connect: " + st.message());
    if (f.procs.empty()) return Status(PMIX_ERR_BAD_PARAM, "connect: no procs");
    connect_data d;
    d.procs = std::move(f.procs);
    d.infos = std::move(f.infos);
    *out = std::move(d);
    return Status::success();
}

Result<std::vector<uint8_t>> encode_spawn_reply(int_flavour f, pmix_status_t status, const std::string &nspace) {
    packer pk(f);
    pk.put_int32(1);
    pk.put_status(status);
    if (status == PMIX_SUCCESS) {
        pk.put_int32(1);
        PMIXCPP_RETURN_IF_ERROR(pk.put_string(nspace.c_str()));
    }
    return pk.take();
}

std::vector<uint8_t> encode_spawn_reply_with_job(int_flavour f, std::span<const uint8_t> job_blob) {
    packer pk(f);
    pk.put_int32(1);
    pk.put_status(PMIX_SUCCESS);
    std::vector<uint8_t> out = pk.take();
    out.insert(out.end(), job_blob.begin(), job_blob.end());
    return out;
}

Result<std::vector<uint8_t>> encode_lookup_reply(int_flavour f, const wire::lookup_reply &r) {
    if (r.owners.size() != r.data.size()) return Status(PMIX_ERR_BAD_PARAM, "lookup reply: owners and data differ");
    packer pk(f);
    pk.put_int32(1);
    pk.put_status(PMIX_SUCCESS);
    const size_t n = r.data.size();
    pk.put_int32(1);
    pk.put_size(n);
    if (n > 0) {
        pk.put_int32(static_cast<int32_t>(n));
        for (size_t i = 0; i < n; ++i) {
            char key[PMIX_MAX_KEYLEN + 1];
            memcpy(key, r.data[i].key, PMIX_MAX_KEYLEN);
            key[PMIX_MAX_KEYLEN] = '\0';
            pk.put_proc(r.owners[i]);
            PMIXCPP_RETURN_IF_ERROR(pk.put_string(key));
            PMIXCPP_RETURN_IF_ERROR(pk.put_value(r.data[i].value), std::string("lookup reply key ") + key);
        }
    }
    return pk.take();
}

std::vector<uint8_t> encode_connect_reply(int_flavour f, const std::vector<std::vector<uint8_t>> &blobs) {
    packer pk(f);
    pk.put_int32(1);
    pk.put_status(PMIX_SUCCESS);
    for (const auto &b : blobs) {
        pk.put_int32(1);
        pk.put_bytes(b);
    }
    return pk.take();
}

Result<std::vector<uint8_t>> encode_get_reply_procs(int_flavour f, const std::vector<proc_data> &procs) {
    packer pk(f);
    pk.put_int32(1);
    pk.put_status(PMIX_SUCCESS);
    for (const auto &p : procs) {
        packer inner(f);
        inner.put_int32(1);
        inner.put_proc(p.proc);
        for (const auto &i : p.infos) {
            char key[PMIX_MAX_KEYLEN + 1];
            memcpy(key, i.key, PMIX_MAX_KEYLEN);
            key[PMIX_MAX_KEYLEN] = '\0';
            inner.put_int32(1);
            PMIXCPP_RETURN_IF_ERROR(inner.put_kval(key, i.value), std::string("get reply key ") + key);
        }
        pk.put_int32(1);
        pk.put_bytes(inner.data());
    }
    return pk.take();
}

}  // namespace pmixcpp::native
