#include "rank_store.h"

#include <pmix_common.h>

namespace pmixcpp::server {

relation kvs_rank_store::relation_of(uint32_t requester, uint32_t target) const {
    if (requester == target) return relation::self;
    if (target == PMIX_RANK_WILDCARD) return relation::same_node;
    if (target < _node_of.size() && requester < _node_of.size() && _node_of[target] == _node_of[requester])
        return relation::same_node;
    return relation::other_node;
}

bool kvs_rank_store::has(uint32_t requester, uint32_t rank, const std::string &key) const {
    return key.empty() ? _kvs.has_committed(rank) : _kvs.has(rank, key, relation_of(requester, rank));
}

Result<std::vector<uint8_t>> kvs_rank_store::encode(const std::vector<uint32_t> &ranks, uint64_t since) const {
    std::vector<wire::rank_data_entry> entries;
    for (uint32_t r : ranks) {
        if (!_kvs.has_committed(r)) continue;
        auto data = _kvs.visible_data(r, relation::other_node, false, since);
        PMIXCPP_RETURN_IF_ERROR(data);
        if (data->empty()) continue;
        entries.push_back({r, std::move(data.value())});
    }
    wire::Writer w;
    PMIXCPP_RETURN_IF_ERROR(wire::encode_rank_data(w, entries));
    return w.take();
}

Status kvs_rank_store::check(uint32_t from, const std::vector<wire::rank_data_entry> &entries) const {
    for (const auto &e : entries)
        if (e.rank >= _node_of.size() || _node_of[e.rank] != from)
            return Status(PMIX_ERR_BAD_PARAM, "data of rank " + std::to_string(e.rank) + " from node " +
                                                  std::to_string(from) + ", which does not host it");
    return Status::success();
}

Status kvs_rank_store::store(uint32_t from, const std::vector<wire::rank_data_entry> &entries,
                             std::vector<uint32_t> *ranks) {
    PMIXCPP_RETURN_IF_ERROR(check(from, entries));
    for (const auto &e : entries) {
        std::vector<uint8_t> scopes(e.infos.size(), PMIX_GLOBAL);
        PMIXCPP_RETURN_IF_ERROR(_kvs.commit(e.rank, scopes.data(), e.infos.data(), e.infos.size()));
        if (ranks) ranks->push_back(e.rank);
    }
    return Status::success();
}

Status kvs_rank_store::store_encoded(uint32_t from, std::span<const uint8_t> bytes, std::vector<uint32_t> *ranks) {
    if (bytes.empty()) return Status::success();  // a fence without data
    std::vector<wire::rank_data_entry> entries;
    PMIXCPP_RETURN_IF_ERROR(wire::decode_rank_data(bytes, static_cast<uint32_t>(_node_of.size()), &entries));
    PMIXCPP_RETURN_IF_ERROR(check(from, entries));
    for (auto &e : entries) {
        PMIXCPP_RETURN_IF_ERROR(_kvs.commit_adopting(e.rank, e.infos));
        if (ranks) ranks->push_back(e.rank);
    }
    return Status::success();
}

}  // namespace pmixcpp::server
