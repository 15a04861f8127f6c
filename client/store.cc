// Client-local key/value data (see store.h).
#include "store.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "log.h"
#include "sys.h"

#include <cstdlib>
#include <cstring>
#include <mutex>

namespace pmixcpp::client {

OwnedValue &OwnedValue::operator=(OwnedValue &&o) noexcept {
    if (this != &o) {
        value_destruct(&v);
        v = o.v;
        o.v = pmix_value_t{};
        o.v.type = PMIX_UNDEF;
    }
    return *this;
}

OwnedValue OwnedValue::adopt(pmix_value_t *src) {
    OwnedValue out;
    out.v = *src;
    *src = pmix_value_t{};
    src->type = PMIX_UNDEF;
    return out;
}

const char *to_string(lookup_source s) {
    switch (s) {
        case lookup_source::none:
            return "none";
        case lookup_source::internal:
            return "internal";
        case lookup_source::own:
            return "own";
        case lookup_source::job:
            return "job";
        case lookup_source::cache:
            return "cache";
        case lookup_source::snapshot:
            return "snapshot";
    }
    return "?";
}

// --- ProcStore ---------------------------------------------------------------------------------
Status ProcStore::store(std::string_view nspace, pmix_rank_t rank, std::string_view key,
                        const pmix_value_t *value) {
    OwnedValue copy;
    PMIXCPP_RETURN_IF_ERROR(value_xfer(&copy.v, value));
    auto ns = _ns.find(nspace);
    if (ns == _ns.end()) ns = _ns.emplace(std::string(nspace), RankMap{}).first;
    auto &keys = ns->second[rank];
    auto it = keys.find(key);
    if (it != keys.end())
        it->second = std::move(copy);
    else
        keys.emplace(std::string(key), std::move(copy));
    return Status::success();
}

void ProcStore::adopt(std::string_view nspace, pmix_rank_t rank, std::string_view key, pmix_value_t *value) {
    OwnedValue owned = OwnedValue::adopt(value);
    auto ns = _ns.find(nspace);
    if (ns == _ns.end()) ns = _ns.emplace(std::string(nspace), RankMap{}).first;
    auto &keys = ns->second[rank];
    auto it = keys.find(key);
    if (it != keys.end())
        it->second = std::move(owned);
    else
        keys.emplace(std::string(key), std::move(owned));
}

const KeyMap *ProcStore::proc(std::string_view nspace, pmix_rank_t rank) const {
    auto ns = _ns.find(nspace);
    if (ns == _ns.end()) return nullptr;
    auto r = ns->second.find(rank);
    return r == ns->second.end() ? nullptr : &r->second;
}

const pmix_value_t *ProcStore::find(std::string_view nspace, pmix_rank_t rank, std::string_view key) const {
    const KeyMap *keys = proc(nspace, rank);
    if (keys == nullptr) return nullptr;
    auto it = keys->find(key);
    return it == keys->end() ? nullptr : &it->second.v;
}

void ProcStore::erase_proc(std::string_view nspace, pmix_rank_t rank) {
    auto ns = _ns.find(nspace);
    if (ns != _ns.end()) ns->second.erase(rank);
}

std::vector<pmix_rank_t> ProcStore::ranks(std::string_view nspace) const {
    std::vector<pmix_rank_t> out;
    auto ns = _ns.find(nspace);
    if (ns == _ns.end()) return out;
    for (auto &[rank, keys] : ns->second)
        if (!keys.empty()) out.push_back(rank);
    return out;
}

// --- JobData -----------------------------------------------------------------------------------
Result<std::unique_ptr<JobData>> JobData::map(const std::string &path) {
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return sys_error("open job data " + path, errno, PMIX_ERR_INIT);
    auto j = map(fd, "job data " + path);
    close(fd);
    return j;
}

Result<std::unique_ptr<JobData>> JobData::map(int fd, const std::string &name) {
    PMIXCPP_ASSIGN_OR_RETURN(auto file, FileMapping::map(fd, name));
    const size_t size = file->bytes().size();
    return segment(std::move(file), 0, size, name);
}

Result<std::shared_ptr<const FileMapping>> FileMapping::map(int fd, const std::string &name) {
    struct stat st {};
    if (fstat(fd, &st) != 0) return sys_error("stat " + name, errno, PMIX_ERR_INIT);
    if (!S_ISREG(st.st_mode) || st.st_size <= 0) return Status(PMIX_ERR_INIT, name + " is not a non-empty file");
    std::shared_ptr<FileMapping> m(new FileMapping());
    void *addr = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_SHARED, fd, 0);
    if (addr == MAP_FAILED) return sys_error("mmap " + name, errno, PMIX_ERR_INIT);
    m->_addr = addr;
    m->_len = static_cast<size_t>(st.st_size);
    return std::shared_ptr<const FileMapping>(std::move(m));
}

FileMapping::~FileMapping() {
    if (_addr != nullptr) munmap(_addr, _len);
}

Result<std::unique_ptr<JobData>> JobData::segment(std::shared_ptr<const FileMapping> file, uint64_t offset,
                                                  uint64_t length, const std::string &name) {
    const std::span<const uint8_t> all = file->bytes();
    if (offset > all.size() || length > all.size() - offset)
        return Status(PMIX_ERR_INIT, name + ": segment " + std::to_string(offset) + "+" + std::to_string(length) +
                                         " is outside the file (" + std::to_string(all.size()) + " bytes)");
    std::unique_ptr<JobData> j(new JobData());
    auto view = wire::jobdata_view::parse(all.subspan(offset, length));
    if (!view.ok()) return Status(PMIX_ERR_INIT, name + ": " + view.status().message());
    j->_view = view.value();
    j->_file = std::move(file);
    return j;
}

Result<std::unique_ptr<JobData>> JobData::from_bytes(std::vector<uint8_t> bytes) {
    std::unique_ptr<JobData> j(new JobData());
    j->_owned = std::move(bytes);
    PMIXCPP_ASSIGN_OR_RETURN(auto view, wire::jobdata_view::parse(j->_owned));
    j->_view = view;
    return j;
}

JobData::~JobData() { _decoded.clear(); }

const pmix_value_t *JobData::find(pmix_rank_t rank, std::string_view key) const {
    std::lock_guard<std::mutex> g(_lock);
    auto r = _decoded.find(rank);
    if (r != _decoded.end()) {
        auto k = r->second.find(key);
        if (k != r->second.end()) return &k->second.v;
    }
    OwnedValue v;
    if (!copy(rank, key, &v.v)) return nullptr;
    auto &keys = _decoded[rank];
    return &keys.emplace(std::string(key), std::move(v)).first->second.v;
}

const wire::job_layout *JobData::layout() const {
    if (!_layout_allowed) return nullptr;
    std::call_once(_layout_once, [this] {
        auto e = _view.find(PMIX_RANK_WILDCARD);
        if (!e.ok()) return;
        pmix_value_t v{};
        Status st = _view.value(e.value(), wire::kJobLayoutKey, &v);
        if (st.code() == PMIX_ERR_NOT_FOUND) return;  // the full form
        if (st.ok() && v.type != PMIX_BYTE_OBJECT) st = Status(PMIX_ERR_UNPACK_FAILURE, "job layout is not a byte object");
        if (st.ok()) {
            auto l = wire::job_layout::decode(std::span<const uint8_t>(
                reinterpret_cast<const uint8_t *>(v.data.bo.bytes), v.data.bo.size));
            if (l.ok()) _layout = std::make_unique<wire::job_layout>(std::move(l.value()));
            else st = l.status();
        }
        value_destruct(&v);
        if (!st.ok())
            PMIXCPP_LOG_ERROR("job data: %s; other nodes' ranks are not known here", st.message().c_str());
    });
    return _layout.get();
}

bool JobData::copy(pmix_rank_t rank, std::string_view key, pmix_value_t *out) const {
    if (rank == PMIX_RANK_WILDCARD && key == wire::kJobLayoutKey) return false;  // not a key of the job
    auto e = _view.find(rank);
    if (!e.ok()) {
        if (e.status().code() != PMIX_ERR_NOT_FOUND) {
            PMIXCPP_LOG_ERROR("%s", e.status().message().c_str());
            return false;
        }
        // another node's rank: from the layout
        const wire::job_layout *l = layout();
        return l != nullptr && rank < l->nranks && l->value(rank, key, out).ok();
    }
    Status st = _view.value(e.value(), key, out);
    if (!st.ok() && st.code() != PMIX_ERR_NOT_FOUND) PMIXCPP_LOG_ERROR("%s", st.message().c_str());
    if (st.code() == PMIX_ERR_NOT_FOUND && rank == PMIX_RANK_WILDCARD && key == PMIX_PROC_MAP) {
        if (const wire::job_layout *l = layout()) return value_load(out, l->proc_map().c_str(), PMIX_STRING).ok();
    }
    return st.ok();
}

std::vector<std::string_view> JobData::keys(pmix_rank_t rank) const {
    std::vector<std::string_view> out;
    auto e = _view.find(rank);
    if (!e.ok()) {
        const wire::job_layout *l = e.status().code() == PMIX_ERR_NOT_FOUND ? layout() : nullptr;
        if (l != nullptr && rank < l->nranks) {
            for (const char *k : l->keys(rank)) out.emplace_back(k);
            std::sort(out.begin(), out.end());  // as the file orders a rank's keys
        }
        return out;
    }
    for (uint32_t i = 0; i < e->nkeys; ++i) {
        auto k = _view.key_at(e.value(), i);
        if (!k.ok()) {
            PMIXCPP_LOG_ERROR("%s", k.status().message().c_str());
            break;
        }
        if (rank == PMIX_RANK_WILDCARD && k.value() == wire::kJobLayoutKey) continue;
        out.push_back(k.value());
    }
    if (rank == PMIX_RANK_WILDCARD && layout() != nullptr &&
        std::find(out.begin(), out.end(), std::string_view(PMIX_PROC_MAP)) == out.end()) {
        out.insert(std::upper_bound(out.begin(), out.end(), std::string_view(PMIX_PROC_MAP)), PMIX_PROC_MAP);
    }
    return out;
}

std::vector<pmix_rank_t> JobData::ranks() const {
    std::vector<pmix_rank_t> out;
    if (const wire::job_layout *l = layout()) {
        out.resize(l->nranks);
        for (uint32_t r = 0; r < l->nranks; ++r) out[r] = r;
        return out;  // the file's ranks are among them
    }
    for (size_t i = 0; i < _view.size(); ++i) {
        auto e = _view.at(i);
        if (!e.ok()) {
            PMIXCPP_LOG_ERROR("%s", e.status().message().c_str());
            break;
        }
        if (e->rank != PMIX_RANK_WILDCARD) out.push_back(e->rank);
    }
    return out;
}

// --- LocalData ---------------------------------------------------------------------------------
void LocalData::set_self(std::string_view nspace, pmix_rank_t rank) {
    _nspace.assign(nspace);
    _rank = rank;
}

Status LocalData::load_jobdata(const std::vector<wire::jobdata_entry> &entries) {
    PMIXCPP_ASSIGN_OR_RETURN(auto bytes, wire::encode_jobdata(entries));
    PMIXCPP_ASSIGN_OR_RETURN(auto job, JobData::from_bytes(std::move(bytes)));
    job->use_layout();
    _job = std::move(job);
    return Status::success();
}

Status LocalData::store_internal(const pmix_proc_t &proc, std::string_view key, const pmix_value_t *value) {
    std::string_view ns = proc.nspace[0] == '\0' ? std::string_view(_nspace) : std::string_view(proc.nspace);
    std::unique_lock<std::shared_mutex> g(_lock);
    return _internal.store(ns, proc.rank, key, value);
}

Status LocalData::put(pmix_scope_t scope, std::string_view key, const pmix_value_t *value) {
    OwnedValue queued;
    if (scope != PMIX_INTERNAL) PMIXCPP_RETURN_IF_ERROR(value_xfer(&queued.v, value));
    std::unique_lock<std::shared_mutex> g(_lock);
    PMIXCPP_RETURN_IF_ERROR(_own.store(_nspace, _rank, key, value));
    if (scope == PMIX_INTERNAL) return Status::success();
    for (auto &p : _pending) {
        if (p.key == key) {
            p.scope = static_cast<uint8_t>(scope);
            p.value = std::move(queued);
            return Status::success();
        }
    }
    _pending.push_back(Pending{static_cast<uint8_t>(scope), std::string(key), std::move(queued)});
    return Status::success();
}

size_t LocalData::pending_count() const {
    std::shared_lock<std::shared_mutex> g(_lock);
    return _pending.size();
}

wire::commit_request LocalData::take_pending() {
    std::vector<Pending> pending;
    {
        std::unique_lock<std::shared_mutex> g(_lock);
        pending.swap(_pending);
    }
    wire::commit_request req;
    if (pending.empty()) return req;
    auto *infos = static_cast<pmix_info_t *>(calloc(pending.size(), sizeof(pmix_info_t)));
    if (infos == nullptr) throw std::bad_alloc();
    for (size_t i = 0; i < pending.size(); ++i) {
        memcpy(infos[i].key, pending[i].key.data(), pending[i].key.size());
        infos[i].value = pending[i].value.v;
        pending[i].value.v = pmix_value_t{};
        pending[i].value.v.type = PMIX_UNDEF;
        req.scopes.push_back(pending[i].scope);
    }
    req.infos = InfoArray(infos, pending.size());
    return req;
}

void LocalData::cache_proc(const pmix_proc_t &proc, wire::get_reply &reply) {
    std::string_view ns = proc.nspace[0] == '\0' ? std::string_view(_nspace) : std::string_view(proc.nspace);
    std::unique_lock<std::shared_mutex> g(_lock);
    _cache.erase_proc(ns, proc.rank);
    for (size_t i = 0; i < reply.data.size(); ++i) {
        pmix_info_t &info = reply.data[i];
        _cache.adopt(ns, proc.rank, key_view(info), &info.value);
    }
}

void LocalData::clear_cache() {
    std::unique_lock<std::shared_mutex> g(_lock);
    _cache.clear();
}

void LocalData::want_snapshot() {
    std::unique_lock<std::shared_mutex> g(_lock);
    _snapshot_wanted.store(true);
    _next_segments.clear();
    _snapshot_pending.store(false);
}

bool LocalData::set_snapshot(std::string id, wire::FrameDescriptor descriptor,
                             std::vector<std::pair<uint64_t, uint64_t>> segments) {
    std::vector<std::unique_ptr<const JobData>> old;
    wire::FrameDescriptor unused;
    std::unique_lock<std::shared_mutex> g(_lock);
    _snapshot_wanted.store(false);
    // The same snapshot again (a fence that collected nothing new): the segments stay mapped.
    if (!id.empty() && !_snapshot_pending.load() && id == _file_id && segments == _mapped_segments &&
        !_snapshot.empty()) {
        unused = std::move(descriptor);
        return true;
    }
    old.swap(_snapshot);  // older data: not used from now on
    _mapped_segments.clear();
    if (id.empty() || segments.empty()) {
        // None (a fence that collected nothing: what was committed before it may be newer than
        // the snapshot). The file stays: a later reply may name it without its descriptor.
        _next_segments.clear();
        _snapshot_pending.store(false);
        return id.empty();
    }
    // The file's descriptor comes with the first reply that names it; later ones name the file
    // this client holds (mapped, or set and not mapped yet).
    const bool known = descriptor || id == _file_id || (id == _next_id && _next_descriptor);
    if (!known) {
        _next_id.clear();
        unused.swap(_next_descriptor);
        _snapshot_pending.store(false);
        return false;
    }
    if (descriptor) {
        unused.swap(_next_descriptor);
        _next_descriptor = std::move(descriptor);
    } else if (id != _next_id) {
        unused.swap(_next_descriptor);  // a file set before this one's and never mapped
    }
    _next_id = std::move(id);
    _next_segments = std::move(segments);
    _snapshot_pending.store(true);
    return true;
}

void LocalData::map_snapshot() {
    if (!_snapshot_pending.load()) return;
    std::shared_ptr<const FileMapping> old_file;
    std::unique_lock<std::shared_mutex> g(_lock);
    if (!_snapshot_pending.load()) return;
    _snapshot_pending.store(false);
    const std::string name = "modex snapshot " + _next_id;
    if (_next_descriptor) {
        auto m = FileMapping::map(*_next_descriptor, name);
        _next_descriptor.reset();  // the mapping keeps the memory
        old_file = std::move(_file);
        _file_id.clear();
        if (!m.ok()) {
            PMIXCPP_LOG_DEBUG("%s", m.status().message().c_str());
            return;
        }
        _file = std::move(m.value());
        _file_id = _next_id;
    }
    if (!_file || _file_id != _next_id) return;
    std::vector<std::unique_ptr<const JobData>> segs;
    for (const auto &[offset, length] : _next_segments) {
        auto j = JobData::segment(_file, offset, length, name);
        if (!j.ok()) {
            PMIXCPP_LOG_DEBUG("%s", j.status().message().c_str());
            return;  // none of it is used: Gets ask the server
        }
        segs.push_back(std::move(j.value()));
    }
    _snapshot = std::move(segs);
    _mapped_segments = std::move(_next_segments);
    _next_segments.clear();
}

const pmix_value_t *LocalData::find_locked(std::string_view ns, pmix_rank_t rank, std::string_view key,
                                           bool use_cache, lookup_source *src) const {
    bool own_ns = ns == _nspace;
    if (const pmix_value_t *v = _internal.find(ns, rank, key)) {
        *src = lookup_source::internal;
        return v;
    }
    if (own_ns && rank == _rank) {
        if (const pmix_value_t *v = _own.find(ns, rank, key)) {
            *src = lookup_source::own;
            return v;
        }
    }
    if (own_ns) {
        if (const pmix_value_t *v = job_value(rank, key)) {
            *src = lookup_source::job;
            return v;
        }
        if (rank != PMIX_RANK_WILDCARD) {
            if (const pmix_value_t *v = job_value(PMIX_RANK_WILDCARD, key)) {
                *src = lookup_source::job;
                return v;
            }
        }
    }
    if (use_cache) {
        if (const pmix_value_t *v = _cache.find(ns, rank, key)) {
            *src = lookup_source::cache;
            return v;
        }
    }
    *src = lookup_source::none;
    return nullptr;
}

Result<lookup_source> LocalData::lookup(const pmix_proc_t &proc, std::string_view key, bool use_cache,
                                        pmix_value_t *out) const {
    std::string_view ns = proc.nspace[0] == '\0' ? std::string_view(_nspace) : std::string_view(proc.nspace);
    lookup_source src = lookup_source::none;
    std::shared_lock<std::shared_mutex> g(_lock);
    const pmix_value_t *v;
    if (proc.rank == PMIX_RANK_UNDEF) {
        v = find_locked(ns, PMIX_RANK_WILDCARD, key, use_cache, &src);
        if (v == nullptr && ns == _nspace) v = find_locked(ns, _rank, key, use_cache, &src);
    } else {
        v = find_locked(ns, proc.rank, key, use_cache, &src);
        // A peer's key after a fence: decoded from the mapped snapshot into *out, from
        // the newest segment that holds it.
        if (v == nullptr && use_cache && !_snapshot.empty() && !_snapshot_wanted.load() && ns == _nspace &&
            proc.rank != PMIX_RANK_WILDCARD) {
            for (auto seg = _snapshot.rbegin(); seg != _snapshot.rend(); ++seg)
                if ((*seg)->copy(proc.rank, key, out)) return lookup_source::snapshot;
        }
    }
    if (v == nullptr) return lookup_source::none;
    PMIXCPP_RETURN_IF_ERROR(value_xfer(out, v));
    return src;
}

Result<InfoArray> LocalData::collect(const pmix_proc_t &proc) const {
    std::string_view ns = proc.nspace[0] == '\0' ? std::string_view(_nspace) : std::string_view(proc.nspace);
    pmix_rank_t rank = proc.rank == PMIX_RANK_UNDEF ? PMIX_RANK_WILDCARD : proc.rank;
    std::shared_lock<std::shared_mutex> g(_lock);
    // Later sources do not override earlier ones (same order as lookup).
    std::unordered_map<std::string_view, const pmix_value_t *> seen;
    std::vector<std::pair<std::string_view, const pmix_value_t *>> order;
    auto add_all = [&](const KeyMap *keys) {
        if (keys == nullptr) return;
        for (auto &[k, v] : *keys)
            if (seen.emplace(k, &v.v).second) order.emplace_back(k, &v.v);
    };
    add_all(_internal.proc(ns, rank));
    if (ns == _nspace && rank == _rank) add_all(_own.proc(ns, rank));
    if (ns == _nspace && _job) {
        for (std::string_view k : _job->keys(rank))
            if (const pmix_value_t *v = _job->find(rank, k); v != nullptr && seen.emplace(k, v).second)
                order.emplace_back(k, v);
    }
    add_all(_cache.proc(ns, rank));
    if (ns == _nspace && !_snapshot_wanted.load() && rank != PMIX_RANK_WILDCARD) {
        for (auto seg = _snapshot.rbegin(); seg != _snapshot.rend(); ++seg)
            for (std::string_view k : (*seg)->keys(rank))
                if (const pmix_value_t *v = (*seg)->find(rank, k); v != nullptr && seen.emplace(k, v).second)
                    order.emplace_back(k, v);
    }
    if (order.empty()) return Status(PMIX_ERR_NOT_FOUND, "no data for that proc");
    auto *infos = static_cast<pmix_info_t *>(calloc(order.size(), sizeof(pmix_info_t)));
    if (infos == nullptr) return Status(PMIX_ERR_NOMEM, "out of memory");
    InfoArray arr(infos, order.size());
    for (size_t i = 0; i < order.size(); ++i) {
        memcpy(infos[i].key, order[i].first.data(), std::min<size_t>(order[i].first.size(), PMIX_MAX_KEYLEN));
        PMIXCPP_RETURN_IF_ERROR(value_xfer(&infos[i].value, order[i].second));
    }
    return arr;
}

}  // namespace pmixcpp::client
