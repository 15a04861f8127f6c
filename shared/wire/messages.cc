#include "wire/messages.h"

#include <cstdlib>
#include <cstring>

namespace pmixcpp::wire {

const char *to_string(msg_type t) {
    switch (t) {
    case msg_type::connect: return "connect";
    case msg_type::finalize: return "finalize";
    case msg_type::abort: return "abort";
    case msg_type::commit: return "commit";
    case msg_type::fence: return "fence";
    case msg_type::get: return "get";
    case msg_type::job_control: return "job_control";
    case msg_type::log: return "log";
    case msg_type::reply: return "reply";
    case msg_type::notify: return "notify";
    case msg_type::event: return "event";
    case msg_type::alloc: return "alloc";
    case msg_type::query: return "query";
    case msg_type::publish: return "publish";
    case msg_type::lookup: return "lookup";
    case msg_type::unpublish: return "unpublish";
    case msg_type::spawn: return "spawn";
    case msg_type::fabric: return "fabric";
    case msg_type::xconnect: return "xconnect";
    case msg_type::xdisconnect: return "xdisconnect";
    case msg_type::monitor: return "monitor";
    case msg_type::group: return "group";
    case msg_type::snapshot: return "snapshot";
    }
    return "unknown";
}

bool is_request_type(uint16_t t) {
    return (t >= static_cast<uint16_t>(msg_type::connect) && t <= static_cast<uint16_t>(msg_type::log)) ||
           t == static_cast<uint16_t>(msg_type::notify) || t == static_cast<uint16_t>(msg_type::alloc) ||
           t == static_cast<uint16_t>(msg_type::query) ||
           (t >= static_cast<uint16_t>(msg_type::publish) && t <= static_cast<uint16_t>(msg_type::snapshot)) ||
           t == static_cast<uint16_t>(msg_type::monitor);
}

namespace {

Status encode_procs(Writer &w, const std::vector<pmix_proc_t> &procs) {
    w.put_u32(static_cast<uint32_t>(procs.size()));
    for (const auto &p : procs) PMIXCPP_RETURN_IF_ERROR(encode_proc(w, p));
    return Status::success();
}

Status decode_procs(Reader &r, std::vector<pmix_proc_t> *procs) {
    uint32_t n = 0;
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&n));
    // each proc takes at least 8 bytes (string length + rank)
    PMIXCPP_RETURN_IF_ERROR(r.take_count(n, 8, sizeof(pmix_proc_t), "procs", r.proc_limit()));
    std::vector<pmix_proc_t> out(n);
    for (auto &p : out) PMIXCPP_RETURN_IF_ERROR(decode_proc(r, &p));
    *procs = std::move(out);
    return Status::success();
}

Status encode_infos(Writer &w, const InfoArray &a) { return encode_info_array(w, a.data(), a.size()); }

}  // namespace

Status encode(Writer &w, const connect_request &m) {
    w.put_u32(m.protocol);
    PMIXCPP_RETURN_IF_ERROR(w.put_string(m.nspace));
    w.put_u32(m.rank);
    PMIXCPP_RETURN_IF_ERROR(w.put_string(m.token));
    w.put_u32(m.pid);
    return Status::success();
}
Status decode(Reader &r, connect_request *m) {
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&m->protocol));
    PMIXCPP_RETURN_IF_ERROR(r.get_string(&m->nspace, PMIX_MAX_NSLEN), "connect nspace");
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&m->rank));
    PMIXCPP_RETURN_IF_ERROR(r.get_string(&m->token, 256), "connect token");
    return r.get_u32(&m->pid);
}

Status encode(Writer &w, const connect_reply &m) {
    PMIXCPP_RETURN_IF_ERROR(w.put_string(m.jobdata_path));
    w.put_u64(m.jobdata_size);
    w.put_u32(m.local_rank);
    return Status::success();
}
Status decode(Reader &r, connect_reply *m) {
    PMIXCPP_RETURN_IF_ERROR(r.get_string(&m->jobdata_path, 4096), "connect reply path");
    PMIXCPP_RETURN_IF_ERROR(r.get_u64(&m->jobdata_size));
    return r.get_u32(&m->local_rank);
}

Status encode(Writer &w, const finalize_request &m) { return encode_infos(w, m.infos); }
Status decode(Reader &r, finalize_request *m) { return decode_info_array(r, &m->infos); }

Status encode(Writer &w, const abort_request &m) {
    w.put_i32(m.status);
    PMIXCPP_RETURN_IF_ERROR(w.put_string(m.message));
    return encode_procs(w, m.procs);
}
Status decode(Reader &r, abort_request *m) {
    PMIXCPP_RETURN_IF_ERROR(r.get_i32(&m->status));
    PMIXCPP_RETURN_IF_ERROR(r.get_string(&m->message, 1u << 20), "abort message");
    return decode_procs(r, &m->procs);
}

Status encode(Writer &w, const commit_request &m) {
    if (m.scopes.size() != m.infos.size())
        return Status(PMIX_ERR_BAD_PARAM, "commit: scopes and infos differ in count");
    w.put_u32(static_cast<uint32_t>(m.infos.size()));
    for (size_t i = 0; i < m.infos.size(); ++i) {
        w.put_u8(m.scopes[i]);
        PMIXCPP_RETURN_IF_ERROR(encode_info(w, m.infos[i]));
    }
    return Status::success();
}
Status decode(Reader &r, commit_request *m) {
    uint32_t n = 0;
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&n));
    // scope byte + key length + flags + type at least
    PMIXCPP_RETURN_IF_ERROR(r.take_count(n, 11, sizeof(pmix_info_t) + 1, "commit"));
    auto *infos = static_cast<pmix_info_t *>(calloc(n ? n : 1, sizeof(pmix_info_t)));
    if (!infos) return Status(PMIX_ERR_NOMEM, "commit: out of memory");
    InfoArray holder(infos, n);  // frees whatever was decoded on failure
    std::vector<uint8_t> scopes(n);
    for (uint32_t i = 0; i < n; ++i) {
        PMIXCPP_RETURN_IF_ERROR(r.get_u8(&scopes[i]));
        if (scopes[i] < PMIX_LOCAL || scopes[i] > PMIX_INTERNAL)
            return Status(PMIX_ERR_UNPACK_FAILURE, "commit: bad scope " + std::to_string(scopes[i]));
        PMIXCPP_RETURN_IF_ERROR(decode_info(r, &infos[i]), "commit");
    }
    m->scopes = std::move(scopes);
    m->infos = std::move(holder);
    return Status::success();
}

Status encode(Writer &w, const fence_request &m) {
    PMIXCPP_RETURN_IF_ERROR(encode_procs(w, m.procs));
    return encode_infos(w, m.infos);
}
Status decode(Reader &r, fence_request *m) {
    PMIXCPP_RETURN_IF_ERROR(decode_procs(r, &m->procs), "fence procs");
    return decode_info_array(r, &m->infos);
}

Status encode(Writer &w, const get_request &m) {
    PMIXCPP_RETURN_IF_ERROR(encode_proc(w, m.proc));
    PMIXCPP_RETURN_IF_ERROR(w.put_string(m.key));
    return encode_infos(w, m.infos);
}
Status decode(Reader &r, get_request *m) {
    PMIXCPP_RETURN_IF_ERROR(decode_proc(r, &m->proc));
    PMIXCPP_RETURN_IF_ERROR(r.get_string(&m->key, PMIX_MAX_KEYLEN), "get key");
    return decode_info_array(r, &m->infos);
}

Status encode(Writer &w, const get_reply &m) { return encode_infos(w, m.data); }
Status decode(Reader &r, get_reply *m) { return decode_info_array(r, &m->data); }

Status encode(Writer &w, const job_control_request &m) {
    PMIXCPP_RETURN_IF_ERROR(encode_procs(w, m.targets));
    return encode_infos(w, m.infos);
}
Status decode(Reader &r, job_control_request *m) {
    PMIXCPP_RETURN_IF_ERROR(decode_procs(r, &m->targets), "job_control targets");
    return decode_info_array(r, &m->infos);
}

Status encode(Writer &w, const job_control_reply &m) { return encode_infos(w, m.results); }
Status decode(Reader &r, job_control_reply *m) { return decode_info_array(r, &m->results); }

Status encode(Writer &w, const monitor_request &m) {
    PMIXCPP_RETURN_IF_ERROR(encode_infos(w, m.monitor));
    w.put_i32(m.error);
    return encode_infos(w, m.directives);
}
Status decode(Reader &r, monitor_request *m) {
    PMIXCPP_RETURN_IF_ERROR(decode_info_array(r, &m->monitor), "monitor");
    if (m->monitor.size() != 1) return Status(PMIX_ERR_BAD_PARAM, "monitor: exactly one thing to monitor");
    PMIXCPP_RETURN_IF_ERROR(r.get_i32(&m->error));
    return decode_info_array(r, &m->directives).with_context("monitor directives");
}

Status encode(Writer &w, const log_request &m) {
    PMIXCPP_RETURN_IF_ERROR(encode_infos(w, m.data));
    return encode_infos(w, m.directives);
}
Status decode(Reader &r, log_request *m) {
    PMIXCPP_RETURN_IF_ERROR(decode_info_array(r, &m->data));
    return decode_info_array(r, &m->directives);
}

Status encode(Writer &w, const event_notification &m) {
    w.put_u64(m.id);
    w.put_i32(m.status);
    PMIXCPP_RETURN_IF_ERROR(encode_proc(w, m.source));
    w.put_u8(m.range);
    return encode_infos(w, m.infos);
}
Status decode(Reader &r, event_notification *m) {
    PMIXCPP_RETURN_IF_ERROR(r.get_u64(&m->id));
    PMIXCPP_RETURN_IF_ERROR(r.get_i32(&m->status));
    PMIXCPP_RETURN_IF_ERROR(decode_proc(r, &m->source), "event source");
    PMIXCPP_RETURN_IF_ERROR(r.get_u8(&m->range));
    if (m->range > PMIX_RANGE_PROC_LOCAL)
        return Status(PMIX_ERR_UNPACK_FAILURE, "event: bad range " + std::to_string(m->range));
    return decode_info_array(r, &m->infos).with_context("event infos");
}

Status encode(Writer &w, const reply_header &m) {
    w.put_i32(m.status);
    if (m.status != PMIX_SUCCESS) PMIXCPP_RETURN_IF_ERROR(w.put_string(m.message));
    return Status::success();
}
Status decode(Reader &r, reply_header *m) {
    PMIXCPP_RETURN_IF_ERROR(r.get_i32(&m->status));
    m->message.clear();
    if (m->status != PMIX_SUCCESS)
        PMIXCPP_RETURN_IF_ERROR(r.get_string(&m->message, 1u << 20), "reply message");
    return Status::success();
}

// --- allocation requests and queries --------------------------------------------------------

namespace {
constexpr size_t kMaxQueryKeys = 256;
}  // namespace

Status encode(Writer &w, const alloc_request &m) {
    w.put_u8(m.directive);
    return encode_infos(w, m.infos);
}
Status decode(Reader &r, alloc_request *m) {
    PMIXCPP_RETURN_IF_ERROR(r.get_u8(&m->directive));
    return decode_info_array(r, &m->infos).with_context("alloc infos");
}

Status encode(Writer &w, const query_request &m) {
    w.put_u32(static_cast<uint32_t>(m.queries.size()));
    for (const auto &q : m.queries) {
        w.put_u32(static_cast<uint32_t>(q.keys.size()));
        for (const auto &k : q.keys) PMIXCPP_RETURN_IF_ERROR(w.put_string(k));
        PMIXCPP_RETURN_IF_ERROR(encode_infos(w, q.qualifiers));
    }
    return Status::success();
}
Status decode(Reader &r, query_request *m) {
    uint32_t n = 0;
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&n));
    // a query takes at least 8 bytes (key count + qualifier count)
    PMIXCPP_RETURN_IF_ERROR(r.take_count(n, 8, sizeof(query_entry), "queries", kMaxQueryKeys));
    std::vector<query_entry> out(n);
    for (auto &q : out) {
        uint32_t nkeys = 0;
        PMIXCPP_RETURN_IF_ERROR(r.get_u32(&nkeys));
        PMIXCPP_RETURN_IF_ERROR(r.take_count(nkeys, 4, sizeof(std::string), "query keys", kMaxQueryKeys));
        q.keys.resize(nkeys);
        for (auto &k : q.keys) PMIXCPP_RETURN_IF_ERROR(r.get_string(&k, PMIX_MAX_KEYLEN), "query key");
        PMIXCPP_RETURN_IF_ERROR(decode_info_array(r, &q.qualifiers), "query qualifiers");
    }
    m->queries = std::move(out);
    return Status::success();
}

Status encode(Writer &w, const info_reply &m) { return encode_infos(w, m.results); }
Status decode(Reader &r, info_reply *m) { return decode_info_array(r, &m->results); }

// --- publish / lookup / unpublish ----------------------------------------------------------

namespace {
constexpr size_t kMaxLookupKeys = 1024;
}  // namespace

Status encode(Writer &w, const publish_request &m) {
    PMIXCPP_RETURN_IF_ERROR(encode_infos(w, m.data));
    return encode_infos(w, m.directives);
}
Status decode(Reader &r, publish_request *m) {
    PMIXCPP_RETURN_IF_ERROR(decode_info_array(r, &m->data), "publish data");
    return decode_info_array(r, &m->directives).with_context("publish directives");
}

Status encode(Writer &w, const lookup_request &m) {
    w.put_u32(static_cast<uint32_t>(m.keys.size()));
    for (const auto &k : m.keys) PMIXCPP_RETURN_IF_ERROR(w.put_string(k));
    return encode_infos(w, m.directives);
}
Status decode(Reader &r, lookup_request *m) {
    uint32_t n = 0;
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&n));
    PMIXCPP_RETURN_IF_ERROR(r.take_count(n, 4, sizeof(std::string), "lookup keys", kMaxLookupKeys));
    std::vector<std::string> keys(n);
    for (auto &k : keys) {
        PMIXCPP_RETURN_IF_ERROR(r.get_string(&k, PMIX_MAX_KEYLEN), "lookup key");
        if (k.empty()) return Status(PMIX_ERR_UNPACK_FAILURE, "empty lookup key");
    }
    m->keys = std::move(keys);
    return decode_info_array(r, &m->directives).with_context("lookup directives");
}

Status encode(Writer &w, const lookup_reply &m) {
    if (m.owners.size() != m.data.size()) return Status(PMIX_ERR_BAD_PARAM, "lookup reply: owners and data differ");
    w.put_u32(static_cast<uint32_t>(m.owners.size()));
    for (size_t i = 0; i < m.owners.size(); ++i) {
        PMIXCPP_RETURN_IF_ERROR(encode_proc(w, m.owners[i]));
        PMIXCPP_RETURN_IF_ERROR(encode_info(w, m.data[i]));
    }
    return Status::success();
}
Status encode_lookup_reply(Writer &w, std::span<const encoded_lookup_entry> entries) {
    if (entries.size() > kMaxLookupKeys)
        return Status(PMIX_ERR_PACK_FAILURE, "lookup reply: " + std::to_string(entries.size()) + " entries, more than " +
                                                 std::to_string(kMaxLookupKeys));
    for (const auto &e : entries)
        if (e.info.empty()) return Status(PMIX_ERR_PACK_FAILURE, "lookup reply: an entry without its info");
    w.put_u32(static_cast<uint32_t>(entries.size()));
    for (const auto &e : entries) {
        PMIXCPP_RETURN_IF_ERROR(encode_proc(w, e.owner));
        w.put_raw(e.info.data(), e.info.size());
    }
    return Status::success();
}
Status decode(Reader &r, lookup_reply *m) {
    uint32_t n = 0;
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&n));
    // a proc takes at least 8 bytes, an info at least 6
    PMIXCPP_RETURN_IF_ERROR(
        r.take_count(n, 14, sizeof(pmix_proc_t) + sizeof(pmix_info_t), "lookup entries", kMaxLookupKeys));
    std::vector<pmix_proc_t> owners(n);
    InfoArray data;
    if (n > 0) {
        auto *infos = static_cast<pmix_info_t *>(calloc(n, sizeof(pmix_info_t)));
        if (infos == nullptr) return Status(PMIX_ERR_NOMEM, "out of memory");
        data = InfoArray(infos, n);
    }
    for (uint32_t i = 0; i < n; ++i) {
        PMIXCPP_RETURN_IF_ERROR(decode_proc(r, &owners[i]), "lookup owner");
        PMIXCPP_RETURN_IF_ERROR(decode_info(r, &data[i]), "lookup data");
    }
    m->owners = std::move(owners);
    m->data = std::move(data);
    return Status::success();
}

// --- spawn -----------------------------------------------------------------------------------

namespace {
constexpr size_t kMaxSpawnApps = 64;
constexpr size_t kMaxSpawnStrings = 4096;

Status encode_strings(Writer &w, const std::vector<std::string> &v) {
    w.put_u32(static_cast<uint32_t>(v.size()));
    for (const auto &s : v) PMIXCPP_RETURN_IF_ERROR(w.put_string(s));
    return Status::success();
}
Status decode_strings(Reader &r, std::vector<std::string> *v) {
    uint32_t n = 0;
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&n));
    PMIXCPP_RETURN_IF_ERROR(r.take_count(n, 4, sizeof(std::string), "strings", kMaxSpawnStrings));
    std::vector<std::string> out(n);
    for (auto &s : out) PMIXCPP_RETURN_IF_ERROR(r.get_string(&s, 1u << 20));
    *v = std::move(out);
    return Status::success();
}
}  // namespace

Status encode(Writer &w, const spawn_request &m) {
    PMIXCPP_RETURN_IF_ERROR(encode_infos(w, m.job_info));
    w.put_u32(static_cast<uint32_t>(m.apps.size()));
    for (const auto &a : m.apps) {
        PMIXCPP_RETURN_IF_ERROR(w.put_string(a.cmd));
        PMIXCPP_RETURN_IF_ERROR(encode_strings(w, a.argv));
        PMIXCPP_RETURN_IF_ERROR(encode_strings(w, a.env));
        PMIXCPP_RETURN_IF_ERROR(w.put_string(a.cwd));
        w.put_i32(a.maxprocs);
        PMIXCPP_RETURN_IF_ERROR(encode_infos(w, a.info));
    }
    return Status::success();
}
Status decode(Reader &r, spawn_request *m) {
    PMIXCPP_RETURN_IF_ERROR(decode_info_array(r, &m->job_info), "spawn job info");
    uint32_t n = 0;
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&n));
    // an app takes at least 24 bytes
    PMIXCPP_RETURN_IF_ERROR(r.take_count(n, 24, sizeof(spawn_app), "spawn apps", kMaxSpawnApps));
    std::vector<spawn_app> apps(n);
    for (auto &a : apps) {
        PMIXCPP_RETURN_IF_ERROR(r.get_string(&a.cmd, 4096), "spawn cmd");
        PMIXCPP_RETURN_IF_ERROR(decode_strings(r, &a.argv), "spawn argv");
        PMIXCPP_RETURN_IF_ERROR(decode_strings(r, &a.env), "spawn env");
        PMIXCPP_RETURN_IF_ERROR(r.get_string(&a.cwd, 4096), "spawn cwd");
        PMIXCPP_RETURN_IF_ERROR(r.get_i32(&a.maxprocs));
        PMIXCPP_RETURN_IF_ERROR(decode_info_array(r, &a.info), "spawn app info");
    }
    m->apps = std::move(apps);
    return Status::success();
}

Status encode(Writer &w, const spawn_reply &m) { return w.put_string(m.nspace); }
Status decode(Reader &r, spawn_reply *m) { return r.get_string(&m->nspace, PMIX_MAX_NSLEN); }

}  // namespace pmixcpp::wire

namespace pmixcpp::wire {

Status encode(Writer &w, const connect_data &m) {
    w.put_u32(static_cast<uint32_t>(m.entries.size()));
    for (const auto &e : m.entries) {
        PMIXCPP_RETURN_IF_ERROR(encode_proc(w, e.proc));
        PMIXCPP_RETURN_IF_ERROR(encode_info_array(w, e.infos.data(), e.infos.size()));
    }
    return Status::success();
}

Status decode(Reader &r, connect_data *m) {
    uint32_t n = 0;
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&n));
    PMIXCPP_RETURN_IF_ERROR(r.take_count(n, 8 + 4, sizeof(connect_data_entry), "connect data entries", r.proc_limit()));
    m->entries.clear();
    m->entries.resize(n);
    for (auto &e : m->entries) {
        PMIXCPP_RETURN_IF_ERROR(decode_proc(r, &e.proc));
        PMIXCPP_RETURN_IF_ERROR(decode_info_array(r, &e.infos));
    }
    return Status::success();
}

}  // namespace pmixcpp::wire
