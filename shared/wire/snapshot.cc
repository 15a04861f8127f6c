#include "wire/snapshot.h"

#include <cstdlib>
#include <cstring>

namespace pmixcpp::wire {

Result<std::vector<uint8_t>> encode_snapshot(const std::vector<std::pair<uint32_t, const InfoArray *>> &ranks) {
    auto bytes = encode_jobdata(ranks);
    if (!bytes.ok()) return bytes.status().with_context("snapshot");
    return bytes;
}

Result<std::vector<uint8_t>> encode_snapshot(const std::vector<std::pair<uint32_t, std::span<const pmix_info_t>>> &ranks,
                                             std::vector<uint8_t> buffer) {
    auto bytes = encode_jobdata(ranks, std::move(buffer));
    if (!bytes.ok()) return bytes.status().with_context("snapshot");
    return bytes;
}

Result<snapshot_view> snapshot_view::parse(std::span<const uint8_t> bytes) {
    auto v = jobdata_view::parse(bytes);
    if (!v.ok()) return v.status().with_context("snapshot");
    snapshot_view s;
    s._view = v.value();
    return s;
}

Status snapshot_view::rank_data(uint32_t rank, InfoArray *out) const {
    auto e = _view.find(rank);
    if (!e.ok()) {
        if (e.status().code() == PMIX_ERR_NOT_FOUND)
            return Status(PMIX_ERR_NOT_FOUND, "snapshot has no data of rank " + std::to_string(rank));
        return e.status();
    }
    auto *infos = e->nkeys ? static_cast<pmix_info_t *>(calloc(e->nkeys, sizeof(pmix_info_t))) : nullptr;
    if (e->nkeys && infos == nullptr) return Status(PMIX_ERR_NOMEM, "snapshot: out of memory");
    InfoArray arr(infos, e->nkeys);
    for (uint32_t i = 0; i < e->nkeys; ++i) {
        auto key = _view.key_at(e.value(), i);
        if (!key.ok()) return key.status();
        if (key->size() > PMIX_MAX_KEYLEN) return Status(PMIX_ERR_UNPACK_FAILURE, "snapshot: key too long");
        memcpy(infos[i].key, key->data(), key->size());
        PMIXCPP_RETURN_IF_ERROR(_view.value(e.value(), key.value(), &infos[i].value));
    }
    *out = std::move(arr);
    return Status::success();
}

Status snapshot_view::value(uint32_t rank, std::string_view key, pmix_value_t *out) const {
    auto e = _view.find(rank);
    if (!e.ok()) return e.status();
    return _view.value(e.value(), key, out);
}

}  // namespace pmixcpp::wire
