#include "kvs.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace pmixcpp::server {

const char *to_string(relation r) {
    switch (r) {
    case relation::self: return "self";
    case relation::same_node: return "same node";
    case relation::other_node: return "other node";
    }
    return "unknown";
}

stored_value &stored_value::operator=(stored_value &&o) noexcept {
    if (this != &o) {
        value_destruct(&_v);
        _v = o._v;
        o._v = pmix_value_t{};
        o._v.type = PMIX_UNDEF;
    }
    return *this;
}

Result<stored_value> stored_value::copy_of(const pmix_value_t &v) {
    stored_value out;
    PMIXCPP_RETURN_IF_ERROR(value_xfer(&out._v, &v));
    return out;
}

Status kv_store::add_job_data(uint32_t rank, const pmix_info_t *infos, size_t count) {
    std::vector<std::pair<std::string, stored_value>> copies;
    copies.reserve(count);
    for (size_t i = 0; i < count; ++i) {
        std::string key = key_of(infos[i]);
        if (key.empty()) return Status(PMIX_ERR_BAD_PARAM, "job data with an empty key");
        if (key == wire::kJobLayoutKey) continue;  // the file's description of the layout, not a key of the job
        auto v = stored_value::copy_of(infos[i].value);
        PMIXCPP_RETURN_IF_ERROR(v, "job data key " + key);
        copies.emplace_back(std::move(key), std::move(v.value()));
    }
    auto &job = _ranks[rank].job;
    for (auto &[k, v] : copies) job.insert_or_assign(std::move(k), std::move(v));
    ++_generation;
    return Status::success();
}

void kv_store::set_job_layout(std::shared_ptr<const wire::job_layout> layout) {
    _layout = std::move(layout);
    _proc_map_made = false;
}

void kv_store::from_layout(uint32_t rank) const {
    if (!_layout) return;
    if (rank == PMIX_RANK_WILDCARD) {
        if (_proc_map_made) return;
        _proc_map_made = true;
        auto &job = _ranks[rank].job;
        if (job.count(PMIX_PROC_MAP) != 0) return;
        pmix_value_t v{};
        if (value_load(&v, _layout->proc_map().c_str(), PMIX_STRING).ok())
            job.emplace(PMIX_PROC_MAP, stored_value::adopt(v));
        return;
    }
    if (rank >= _layout->nranks) return;
    auto &job = _ranks[rank].job;
    if (!job.empty()) return;
    for (const char *k : _layout->keys(rank)) {
        pmix_value_t v{};
        if (_layout->value(rank, k, &v).ok()) job.emplace(k, stored_value::adopt(v));
    }
}

Status kv_store::commit(uint32_t rank, const uint8_t *scopes, const pmix_info_t *infos, size_t count) {
    std::vector<std::pair<std::string, entry>> copies;
    copies.reserve(count);
    for (size_t i = 0; i < count; ++i) {
        std::string key = key_of(infos[i]);
        if (key.empty()) return Status(PMIX_ERR_BAD_PARAM, "commit of an empty key");
        if (scopes[i] > PMIX_INTERNAL)
            return Status(PMIX_ERR_BAD_PARAM, "commit of key " + key + " with unknown scope " +
                                                  std::to_string(scopes[i]));
        auto v = stored_value::copy_of(infos[i].value);
        PMIXCPP_RETURN_IF_ERROR(v, "commit of key " + key);
        entry e;
        e.scope = scopes[i] == PMIX_SCOPE_UNDEF ? PMIX_GLOBAL : scopes[i];
        e.value = std::move(v.value());
        copies.emplace_back(std::move(key), std::move(e));
    }
    auto &committed = _ranks[rank].committed;
    _committed = ++_generation;
    for (auto &[k, e] : copies) {
        e.generation = _generation;
        committed.insert_or_assign(std::move(k), std::move(e));
    }
    return Status::success();
}

Status kv_store::commit_adopting(uint32_t rank, InfoArray &infos) {
    for (size_t i = 0; i < infos.size(); ++i)
        if (infos[i].key[0] == '\0') return Status(PMIX_ERR_BAD_PARAM, "commit of an empty key");
    auto &committed = _ranks[rank].committed;
    _committed = ++_generation;
    for (size_t i = 0; i < infos.size(); ++i) {
        entry e;
        e.scope = PMIX_GLOBAL;
        e.generation = _generation;
        e.value = stored_value::adopt(infos[i].value);
        committed.insert_or_assign(key_of(infos[i]), std::move(e));
    }
    return Status::success();
}

bool kv_store::scope_visible(uint8_t scope, relation rel) {
    switch (rel) {
    case relation::self: return true;
    case relation::same_node: return scope == PMIX_LOCAL || scope == PMIX_GLOBAL;
    case relation::other_node: return scope == PMIX_REMOTE || scope == PMIX_GLOBAL;
    }
    return false;
}

bool kv_store::has(uint32_t rank, const std::string &key, relation rel) const {
    from_layout(rank);
    auto it = _ranks.find(rank);
    if (it == _ranks.end()) return false;
    auto c = it->second.committed.find(key);
    if (c != it->second.committed.end() && scope_visible(c->second.scope, rel)) return true;
    return it->second.job.count(key) != 0;
}

bool kv_store::has_committed(uint32_t rank) const {
    auto it = _ranks.find(rank);
    return it != _ranks.end() && !it->second.committed.empty();
}

size_t kv_store::committed_keys(uint32_t rank) const {
    auto it = _ranks.find(rank);
    return it == _ranks.end() ? 0 : it->second.committed.size();
}

void kv_store::forget_committed(uint32_t rank) {
    auto it = _ranks.find(rank);
    if (it != _ranks.end() && !it->second.committed.empty()) {
        it->second.committed.clear();
        _forgotten = ++_generation;
    }
}

std::vector<pmix_info_t> kv_store::visible_view(uint32_t rank, relation rel, bool with_job_data, uint64_t since,
                                                bool *hidden_change) const {
    std::vector<pmix_info_t> out;
    if (with_job_data && since == 0) from_layout(rank);
    auto it = _ranks.find(rank);
    if (it == _ranks.end()) return out;
    const rank_data &d = it->second;
    auto add = [&](const std::string &key, const pmix_value_t &v) {
        pmix_info_t info{};
        memcpy(info.key, key.data(), std::min(key.size(), sizeof(info.key) - 1));
        info.value = v;  // borrowed
        out.push_back(info);
    };
    for (const auto &[k, e] : d.committed) {
        if (e.generation <= since) continue;
        if (scope_visible(e.scope, rel)) add(k, e.value.get());
        else if (hidden_change != nullptr) *hidden_change = true;
    }
    for (const auto &[k, v] : d.job) {
        if (!with_job_data || since > 0) break;
        auto c = d.committed.find(k);
        if (c != d.committed.end() && scope_visible(c->second.scope, rel)) continue;
        add(k, v.get());
    }
    return out;
}

Result<InfoArray> kv_store::visible_data(uint32_t rank, relation rel, bool with_job_data, uint64_t since) const {
    const std::vector<pmix_info_t> view = visible_view(rank, rel, with_job_data, since);
    if (view.empty()) return InfoArray();
    auto *infos = static_cast<pmix_info_t *>(calloc(view.size(), sizeof(pmix_info_t)));
    if (!infos) return Status(PMIX_ERR_NOMEM, "out of memory copying data of rank " + std::to_string(rank));
    InfoArray out(infos, view.size());  // frees what was filled so far on failure
    for (size_t i = 0; i < view.size(); ++i) {
        memcpy(infos[i].key, view[i].key, sizeof(infos[i].key));
        PMIXCPP_RETURN_IF_ERROR(
            value_xfer(&infos[i].value, &view[i].value),
            "copy of key " + std::string(view[i].key) + " of rank " + std::to_string(rank));
    }
    return out;
}

}  // namespace pmixcpp::server
