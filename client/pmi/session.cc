#include "session.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "preput.h"
#include "process_mapping.h"

namespace pmixcpp::pmi {
namespace {

constexpr const char *kKeyPrefix = "pmi:";
constexpr const char *kDirPrefix = "pmixcpp.pmi.dir.";
constexpr const char *kNodeAttrPrefix = "pmixcpp.pmi2.node:";

std::string dir_key(uint32_t epoch) { return kDirPrefix + std::to_string(epoch); }

// An integer-valued PMIx value as uint32 (the job data's types vary by key).
bool as_u32(const pmix_value_t *v, uint32_t *out) {
    switch (v->type) {
    case PMIX_UINT32: *out = v->data.uint32; return true;
    case PMIX_INT32: *out = static_cast<uint32_t>(v->data.int32); return true;
    case PMIX_UINT: *out = v->data.uint; return true;
    case PMIX_INT: *out = static_cast<uint32_t>(v->data.integer); return true;
    case PMIX_UINT16: *out = v->data.uint16; return true;
    case PMIX_UINT64: *out = static_cast<uint32_t>(v->data.uint64); return true;
    case PMIX_SIZE: *out = static_cast<uint32_t>(v->data.size); return true;
    case PMIX_PROC_RANK: *out = v->data.rank; return true;
    case PMIX_BOOL: *out = v->data.flag ? 1 : 0; return true;
    default: return false;
    }
}

pmix_info_t *infos(size_t n) {
    pmix_info_t *i = nullptr;
    PMIX_INFO_CREATE(i, n);
    if (i == nullptr) throw std::bad_alloc();
    return i;
}

struct info_array {
    pmix_info_t *p;
    size_t n;
    explicit info_array(size_t count) : p(infos(count)), n(count) {}
    ~info_array() { PMIX_INFO_FREE(p, n); }
    info_array(const info_array &) = delete;
    info_array &operator=(const info_array &) = delete;
};

}  // namespace

session &session::instance() {
    static session s;
    return s;
}

bool valid_key(const char *key) {
    if (key == nullptr) return false;
    size_t n = strnlen(key, kMaxKeyLen + 1);
    return n > 0 && n <= kMaxKeyLen && memchr(key, '\n', n) == nullptr;
}

bool copy_out(const std::string &s, char *buf, int len) {
    if (buf == nullptr || len <= 0 || s.size() >= static_cast<size_t>(len)) return false;
    memcpy(buf, s.c_str(), s.size() + 1);
    return true;
}

void debug(const char *fmt, ...) {
    static const bool on = getenv("PMIXCPP_DEBUG") != nullptr;
    if (!on) return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "pmixcpp pmi[%u]: %s\n", session::instance().self().rank, line);
}

pmix_status_t session::init() {
    std::lock_guard<std::mutex> g(_mu);
    if (_up) return PMIX_SUCCESS;
    pmix_proc_t me;
    PMIX_PROC_CONSTRUCT(&me);
    pmix_status_t rc = PMIx_Init(&me, nullptr, 0);
    if (rc != PMIX_SUCCESS) {
        debug("PMIx_Init: %s", PMIx_Error_string(rc));
        return rc;
    }
    _self = me;
    rc = get_u32(PMIX_RANK_WILDCARD, PMIX_JOB_SIZE, &_size);
    if (rc != PMIX_SUCCESS) {
        debug("job size: %s", PMIx_Error_string(rc));
        PMIx_Finalize(nullptr, 0);
        return rc;
    }
    if (get_u32(PMIX_RANK_WILDCARD, PMIX_UNIV_SIZE, &_universe) != PMIX_SUCCESS) _universe = _size;
    if (get_u32(_self.rank, PMIX_APPNUM, &_appnum) != PMIX_SUCCESS) _appnum = 0;
    uint32_t spawned = 0;
    _spawned = get_u32(PMIX_RANK_WILDCARD, PMIX_SPAWNED, &spawned) == PMIX_SUCCESS && spawned != 0;
    _own.clear();
    _preput.clear();
    if (const char *pre = getenv("PMIXCPP_PMI_PREPUT"); pre != nullptr && !decode_preput(pre, &_preput)) {
        debug("PMIXCPP_PMI_PREPUT is malformed: the spawner's keys are ignored");
        _preput.clear();
    }
    _epoch_keys.clear();
    _where.clear();
    _epoch = _read_epochs = 0;
    _up = true;
    return PMIX_SUCCESS;
}

pmix_status_t session::finalize() {
    std::lock_guard<std::mutex> g(_mu);
    if (!_up) return PMIX_ERR_INIT;
    _up = false;
    return PMIx_Finalize(nullptr, 0);
}

bool session::initialized() {
    std::lock_guard<std::mutex> g(_mu);
    return _up;
}

pmix_status_t session::get_u32(pmix_rank_t rank, const char *key, uint32_t *out) {
    pmix_proc_t p = _self;
    p.rank = rank;
    pmix_value_t *v = nullptr;
    pmix_status_t rc = PMIx_Get(&p, key, nullptr, 0, &v);
    if (rc != PMIX_SUCCESS) return rc;
    bool ok = v != nullptr && as_u32(v, out);
    PMIX_VALUE_RELEASE(v);
    return ok ? PMIX_SUCCESS : PMIX_ERR_TYPE_MISMATCH;
}

pmix_status_t session::get_string(pmix_rank_t rank, const char *key, std::string *out) {
    pmix_proc_t p = _self;
    p.rank = rank;
    pmix_value_t *v = nullptr;
    pmix_status_t rc = PMIx_Get(&p, key, nullptr, 0, &v);
    if (rc != PMIX_SUCCESS) return rc;
    bool ok = v != nullptr && v->type == PMIX_STRING;
    if (ok) *out = v->data.string ? v->data.string : "";
    PMIX_VALUE_RELEASE(v);
    return ok ? PMIX_SUCCESS : PMIX_ERR_TYPE_MISMATCH;
}

pmix_status_t session::local_ranks(std::vector<uint32_t> *out) {
    std::lock_guard<std::mutex> g(_mu);
    if (!_up) return PMIX_ERR_INIT;
    std::string peers;
    pmix_status_t rc = get_string(PMIX_RANK_WILDCARD, PMIX_LOCAL_PEERS, &peers);
    if (rc != PMIX_SUCCESS) return rc;
    out->clear();
    const char *p = peers.c_str();
    while (*p) {
        char *end = nullptr;
        unsigned long r = strtoul(p, &end, 10);
        if (end == p || r >= _size) return PMIX_ERR_BAD_PARAM;
        out->push_back(static_cast<uint32_t>(r));
        p = *end == ',' ? end + 1 : end;
        if (*end != ',' && *end != '\0') return PMIX_ERR_BAD_PARAM;
    }
    return PMIX_SUCCESS;
}

pmix_status_t session::process_mapping(std::string *out) {
    std::lock_guard<std::mutex> g(_mu);
    if (!_up) return PMIX_ERR_INIT;
    // From the node of every rank (local lookups in the job data), not from PMIX_ANL_MAP: this
    // library may run over another server, and the ranks' nodes are the truth.
    std::vector<uint32_t> nodes(_size);
    for (uint32_t r = 0; r < _size; ++r) {
        pmix_status_t rc = get_u32(r, PMIX_NODEID, &nodes[r]);
        if (rc != PMIX_SUCCESS) return rc;
    }
    *out = pmixcpp::process_mapping(nodes);
    return PMIX_SUCCESS;
}

pmix_status_t session::put(const char *key, const char *value) {
    std::lock_guard<std::mutex> g(_mu);
    if (!_up) return PMIX_ERR_INIT;
    if (!valid_key(key)) return PMIX_ERR_BAD_PARAM;
    if (value == nullptr || strnlen(value, kMaxValueLen + 1) > kMaxValueLen) return PMIX_ERR_BAD_PARAM;
    pmix_value_t v;
    PMIX_VALUE_CONSTRUCT(&v);
    v.type = PMIX_STRING;
    v.data.string = const_cast<char *>(value);
    std::string k = std::string(kKeyPrefix) + key;
    pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, k.c_str(), &v);  // copies the value
    if (rc != PMIX_SUCCESS) return rc;
    auto [it, added] = _own.insert_or_assign(key, value);
    (void)it;
    // A key put again in the same epoch is listed once; put again later, it is listed again (the
    // newest epoch wins at the readers).
    bool listed = false;
    if (!added)
        for (const auto &e : _epoch_keys) listed = listed || e == key;
    if (!listed) _epoch_keys.emplace_back(key);
    return PMIX_SUCCESS;
}

pmix_status_t session::commit() {
    std::lock_guard<std::mutex> g(_mu);
    if (!_up) return PMIX_ERR_INIT;
    return PMIx_Commit();
}

pmix_status_t session::fence() {
    std::lock_guard<std::mutex> g(_mu);
    if (!_up) return PMIX_ERR_INIT;
    std::string dir;
    for (const auto &k : _epoch_keys) dir += k + "\n";
    pmix_value_t v;
    PMIX_VALUE_CONSTRUCT(&v);
    v.type = PMIX_STRING;
    v.data.string = const_cast<char *>(dir.c_str());
    std::string dk = dir_key(_epoch + 1);
    pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, dk.c_str(), &v);
    if (rc == PMIX_SUCCESS) rc = PMIx_Commit();
    if (rc != PMIX_SUCCESS) return rc;
    info_array collect(1);
    bool yes = true;
    PMIX_INFO_LOAD(&collect.p[0], PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    rc = PMIx_Fence(nullptr, 0, collect.p, collect.n);
    if (rc != PMIX_SUCCESS) return rc;
    ++_epoch;
    _epoch_keys.clear();
    return PMIX_SUCCESS;
}

pmix_status_t session::read_directories() {
    for (uint32_t e = _read_epochs + 1; e <= _epoch; ++e) {
        std::string dk = dir_key(e);
        for (uint32_t r = 0; r < _size; ++r) {
            if (r == _self.rank) continue;
            std::string dir;
            pmix_status_t rc = get_string(r, dk.c_str(), &dir);
            if (rc != PMIX_SUCCESS) {
                debug("key directory %u of rank %u: %s", e, r, PMIx_Error_string(rc));
                return rc;
            }
            size_t at = 0;
            while (at < dir.size()) {
                size_t nl = dir.find('\n', at);
                if (nl == std::string::npos) nl = dir.size();
                std::string key = dir.substr(at, nl - at);
                at = nl + 1;
                if (key.empty()) continue;
                auto it = _where.find(key);
                if (it == _where.end() || it->second.epoch < e) _where[key] = origin{e, r};
            }
        }
        _read_epochs = e;
    }
    return PMIX_SUCCESS;
}

pmix_status_t session::get(const char *nspace, const char *key, std::string *value) {
    std::unique_lock<std::mutex> g(_mu);
    if (!_up) return PMIX_ERR_INIT;
    if (!valid_key(key)) return PMIX_ERR_BAD_PARAM;
    if (nspace != nullptr && nspace[0] != '\0' && strncmp(nspace, _self.nspace, PMIX_MAX_NSLEN) != 0) {
        debug("KVS get of %s from %s: only this job's KVS (%s) is served", key, nspace, _self.nspace);
        return PMIX_ERR_INVALID_NAMESPACE;
    }
    auto own = _own.find(key);
    if (own != _own.end()) {
        *value = own->second;
        return PMIX_SUCCESS;
    }
    auto pre = _preput.find(key);
    if (pre != _preput.end()) {
        *value = pre->second;
        return PMIX_SUCCESS;
    }
    auto it = _where.find(key);
    if (it == _where.end() && _read_epochs < _epoch) {
        pmix_status_t rc = read_directories();
        if (rc != PMIX_SUCCESS) return rc;
        it = _where.find(key);
    }
    if (it == _where.end()) {
        if (strcmp(key, "PMI_process_mapping") == 0) {
            g.unlock();
            return process_mapping(value);
        }
        debug("KVS get of %s: no rank put it before the last barrier (%u so far)", key, _epoch);
        return PMIX_ERR_NOT_FOUND;
    }
    std::string k = std::string(kKeyPrefix) + key;
    return get_string(it->second.rank, k.c_str(), value);
}

pmix_status_t session::put_node_attr(const char *name, const char *value) {
    {
        std::lock_guard<std::mutex> g(_mu);
        if (!_up) return PMIX_ERR_INIT;
    }
    if (!valid_key(name)) return PMIX_ERR_BAD_PARAM;
    if (value == nullptr || strnlen(value, kMaxValueLen + 1) > kMaxValueLen) return PMIX_ERR_BAD_PARAM;
    std::string key = std::string(kNodeAttrPrefix) + name;
    auto publish_once = [&] {
        info_array in(3);
        pmix_data_range_t range = PMIX_RANGE_LOCAL;
        pmix_persistence_t persist = PMIX_PERSIST_APP;
        PMIX_INFO_LOAD(&in.p[0], key.c_str(), value, PMIX_STRING);
        PMIX_INFO_LOAD(&in.p[1], PMIX_RANGE, &range, PMIX_DATA_RANGE);
        PMIX_INFO_LOAD(&in.p[2], PMIX_PERSISTENCE, &persist, PMIX_PERSIST);
        return PMIx_Publish(in.p, in.n);
    };
    pmix_status_t rc = publish_once();
    if (rc == PMIX_ERR_DUPLICATE_KEY) {
        // Put again by this rank: replace it. Another rank's attribute of that name stays.
        info_array in(1);
        pmix_data_range_t range = PMIX_RANGE_LOCAL;
        PMIX_INFO_LOAD(&in.p[0], PMIX_RANGE, &range, PMIX_DATA_RANGE);
        char *keys[] = {key.data(), nullptr};
        if (PMIx_Unpublish(keys, in.p, in.n) == PMIX_SUCCESS) rc = publish_once();
        if (rc != PMIX_SUCCESS) debug("node attribute %s: another rank of this node put it", name);
    }
    return rc;
}

pmix_status_t session::get_node_attr(const char *name, bool wait, std::string *value) {
    {
        std::lock_guard<std::mutex> g(_mu);
        if (!_up) return PMIX_ERR_INIT;
    }
    if (!valid_key(name)) return PMIX_ERR_BAD_PARAM;
    std::string key = std::string(kNodeAttrPrefix) + name;
    pmix_pdata_t pd;
    PMIX_PDATA_CONSTRUCT(&pd);
    PMIX_LOAD_KEY(pd.key, key.c_str());
    info_array in(wait ? 2 : 1);
    pmix_data_range_t range = PMIX_RANGE_LOCAL;
    PMIX_INFO_LOAD(&in.p[0], PMIX_RANGE, &range, PMIX_DATA_RANGE);
    bool yes = true;
    if (wait) PMIX_INFO_LOAD(&in.p[1], PMIX_WAIT, &yes, PMIX_BOOL);
    pmix_status_t rc = PMIx_Lookup(&pd, 1, in.p, in.n);
    if (rc == PMIX_SUCCESS) {
        if (pd.value.type == PMIX_STRING && pd.value.data.string != nullptr)
            *value = pd.value.data.string;
        else
            rc = PMIX_ERR_TYPE_MISMATCH;
    }
    PMIX_PDATA_DESTRUCT(&pd);
    return rc;
}

pmix_status_t session::job_attr(const char *name, std::string *value) {
    if (name == nullptr) return PMIX_ERR_BAD_PARAM;
    if (strcmp(name, "PMI_process_mapping") == 0) return process_mapping(value);
    std::lock_guard<std::mutex> g(_mu);
    if (!_up) return PMIX_ERR_INIT;
    if (strcmp(name, "universeSize") == 0) {
        *value = std::to_string(_universe);
        return PMIX_SUCCESS;
    }
    if (!valid_key(name)) return PMIX_ERR_BAD_PARAM;
    // Any other name: a job-level PMIx key of this job, as text when it is a string or a number.
    pmix_proc_t p = _self;
    p.rank = PMIX_RANK_WILDCARD;
    info_array in(1);
    bool yes = true;
    PMIX_INFO_LOAD(&in.p[0], PMIX_OPTIONAL, &yes, PMIX_BOOL);
    pmix_value_t *v = nullptr;
    pmix_status_t rc = PMIx_Get(&p, name, in.p, in.n, &v);
    if (rc != PMIX_SUCCESS) return rc;
    uint32_t u = 0;
    if (v->type == PMIX_STRING && v->data.string != nullptr)
        *value = v->data.string;
    else if (as_u32(v, &u))
        *value = std::to_string(u);
    else
        rc = PMIX_ERR_TYPE_MISMATCH;
    PMIX_VALUE_RELEASE(v);
    return rc;
}

pmix_status_t session::publish(const char *service, const char *port) {
    if (!initialized()) return PMIX_ERR_INIT;
    if (!valid_key(service) || port == nullptr || strnlen(port, kMaxPortLen + 1) > kMaxPortLen)
        return PMIX_ERR_BAD_PARAM;
    info_array in(1);
    PMIX_INFO_LOAD(&in.p[0], service, port, PMIX_STRING);
    return PMIx_Publish(in.p, in.n);
}

pmix_status_t session::lookup(const char *service, std::string *port) {
    if (!initialized()) return PMIX_ERR_INIT;
    if (!valid_key(service)) return PMIX_ERR_BAD_PARAM;
    pmix_pdata_t pd;
    PMIX_PDATA_CONSTRUCT(&pd);
    PMIX_LOAD_KEY(pd.key, service);
    pmix_status_t rc = PMIx_Lookup(&pd, 1, nullptr, 0);
    if (rc == PMIX_SUCCESS) {
        if (pd.value.type == PMIX_STRING && pd.value.data.string != nullptr)
            *port = pd.value.data.string;
        else
            rc = PMIX_ERR_TYPE_MISMATCH;
    }
    PMIX_PDATA_DESTRUCT(&pd);
    return rc;
}

pmix_status_t session::unpublish(const char *service) {
    if (!initialized()) return PMIX_ERR_INIT;
    if (!valid_key(service)) return PMIX_ERR_BAD_PARAM;
    std::string k = service;
    char *keys[] = {k.data(), nullptr};
    return PMIx_Unpublish(keys, nullptr, 0);
}

pmix_status_t session::spawn(const std::vector<spawn_app> &apps,
                             const std::vector<std::pair<std::string, std::string>> &preput, std::string *nspace) {
    if (!initialized()) return PMIX_ERR_INIT;
    if (apps.empty()) return PMIX_ERR_BAD_PARAM;
    for (const auto &[k, v] : preput)
        if (!valid_key(k.c_str())) return PMIX_ERR_BAD_PARAM;
    std::string env = "PMIXCPP_PMI_PREPUT=" + encode_preput(preput);
    // The strings stay alive in `apps`/`env` while PMIx_Spawn copies them; the arrays are ours.
    std::vector<std::vector<char *>> argvs(apps.size());
    std::vector<pmix_app_t> papps(apps.size());
    char *envp[] = {env.data(), nullptr};
    for (size_t i = 0; i < apps.size(); ++i) {
        if (apps[i].cmd.empty() || apps[i].maxprocs <= 0) return PMIX_ERR_BAD_PARAM;
        argvs[i].push_back(const_cast<char *>(apps[i].cmd.c_str()));
        for (const auto &a : apps[i].args) argvs[i].push_back(const_cast<char *>(a.c_str()));
        argvs[i].push_back(nullptr);
        pmix_app_t &a = papps[i];
        memset(&a, 0, sizeof a);
        a.cmd = const_cast<char *>(apps[i].cmd.c_str());
        a.argv = argvs[i].data();
        a.env = envp;
        a.cwd = apps[i].cwd.empty() ? nullptr : const_cast<char *>(apps[i].cwd.c_str());
        a.maxprocs = apps[i].maxprocs;
    }
    pmix_nspace_t child;
    memset(child, 0, sizeof child);
    pmix_status_t rc = PMIx_Spawn(nullptr, 0, papps.data(), papps.size(), child);
    if (rc == PMIX_SUCCESS) *nspace = child;
    else debug("spawn: %s", PMIx_Error_string(rc));
    return rc;
}

pmix_status_t session::abort(int code, const char *msg, bool all) {
    if (!initialized()) return PMIX_ERR_INIT;
    pmix_proc_t me = _self;
    return PMIx_Abort(code, msg ? msg : "", all ? nullptr : &me, all ? 0 : 1);
}

}  // namespace pmixcpp::pmi
