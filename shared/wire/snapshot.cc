#include "wire/snapshot.h"

#include <cstdlib>
#include <cstring>

namespace pmixcpp::wire {

Result<std::vector<uint8_t>> encode_snapshot(const std::vector<std::pair<uint32_t, const InfoArray *>> &ranks) {
    auto bytes = encode_jobdata(ranks);
    PMIXCPP_RETURN_IF_ERROR(bytes, "snapshot");
    return bytes;
}

Result<std::vector<uint8_t>> encode_snapshot(const std::vector<std::pair<uint32_t, std::span<const pmix_info_t>>> &ranks,
                                             std::vector<uint8_t> buffer) {
    auto bytes = encode_jobdata(ranks, std::move(buffer));
    PMIXCPP_RETURN_IF_ERROR(bytes, "snapshot");
    return bytes;
}

Result<snapshot_view> snapshot_view::parse(std::span<const uint8_t> bytes) {
    auto v = jobdata_view::parse(bytes);
    PMIXCPP_RETURN_IF_ERROR(v, "snapshot");
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
        PMIXCPP_RETURN_IF_ERROR(key);
        if (key->size() > PMIX_MAX_KEYLEN) return Status(PMIX_ERR_UNPACK_FAILURE, "snapshot: key too long");
        memcpy(infos[i].key, key->data(), key->size());
        PMIXCPP_RETURN_IF_ERROR(_view.value(e.value(), key.value(), &infos[i].value));
    }
    *out = std::move(arr);
    return Status::success();
}

Status snapshot_view::value(uint32_t rank, std::string_view key, pmix_value_t *out) const {
    PMIXCPP_ASSIGN_OR_RETURN(auto e, _view.find(rank));
    return _view.value(e, key, out);
}

namespace {
Status bad_ref(const std::string &what, pmix_status_t code = PMIX_ERR_UNPACK_FAILURE) {
    return Status(code, "modex snapshot reference: " + what);
}

// What both sides check of segments (oldest first, in the file's order, none empty).
Status check_segments(std::string_view id, std::span<const snapshot_segment> segments, pmix_status_t code) {
    auto bad = [code](const std::string &what) { return bad_ref(what, code); };
    if (id.empty()) {
        if (!segments.empty()) return bad("segments without a file id");
        return Status::success();
    }
    if (segments.empty()) return bad("file " + std::string(id) + " with no segment");
    if (segments.size() > kMaxSnapshotSegments)
        return bad(std::to_string(segments.size()) + " segments, more than " + std::to_string(kMaxSnapshotSegments));
    uint64_t end = 0;
    for (size_t i = 0; i < segments.size(); ++i) {
        const auto &[offset, length] = segments[i];
        if (length == 0) return bad("segment " + std::to_string(i) + " is empty");
        if (offset > UINT64_MAX - length) return bad("segment " + std::to_string(i) + " ends beyond 2^64");
        if (offset < end)
            return bad("segment " + std::to_string(i) + " at " + std::to_string(offset) +
                       " overlaps the one before (ending at " + std::to_string(end) + ")");
        end = offset + length;
    }
    return Status::success();
}
}  // namespace

Status encode_snapshot_ref(Writer &w, std::string_view id, std::span<const snapshot_segment> segments) {
    if (id.size() > kMaxSnapshotIdLength)
        return bad_ref("file id longer than " + std::to_string(kMaxSnapshotIdLength), PMIX_ERR_PACK_FAILURE);
    if (id.find('\0') != std::string_view::npos) return bad_ref("file id with a NUL byte", PMIX_ERR_PACK_FAILURE);
    PMIXCPP_RETURN_IF_ERROR(check_segments(id, segments, PMIX_ERR_PACK_FAILURE));
    PMIXCPP_RETURN_IF_ERROR(w.put_string(id));
    if (id.empty()) return Status::success();
    w.put_u32(static_cast<uint32_t>(segments.size()));
    for (const auto &[offset, length] : segments) {
        w.put_u64(offset);
        w.put_u64(length);
    }
    return Status::success();
}

Status encode(Writer &w, const snapshot_ref &m) { return encode_snapshot_ref(w, m.id, m.segments); }

Status decode(Reader &r, snapshot_ref *m) {
    std::string id;
    Status st = r.get_string(&id, kMaxSnapshotIdLength);
    if (!st.ok()) return bad_ref("file id: " + st.message());
    std::vector<snapshot_segment> segments;
    if (!id.empty()) {
        uint32_t n = 0;
        if (!r.get_u32(&n).ok()) return bad_ref("file " + id + ": no segment count");
        if (n == 0 || n > kMaxSnapshotSegments)
            return bad_ref("file " + id + ": " + std::to_string(n) + " segments (1 to " +
                           std::to_string(kMaxSnapshotSegments) + ")");
        st = r.take_count(n, 16, sizeof(snapshot_segment), "snapshot segments", kMaxSnapshotSegments);
        if (!st.ok()) return bad_ref("file " + id + ": " + st.message());
        segments.resize(n);
        for (auto &[offset, length] : segments)
            if (!r.get_u64(&offset).ok() || !r.get_u64(&length).ok()) return bad_ref("file " + id + ": truncated segments");
        PMIXCPP_RETURN_IF_ERROR(check_segments(id, segments, PMIX_ERR_UNPACK_FAILURE));
    }
    m->id = std::move(id);
    m->segments = std::move(segments);
    return Status::success();
}

}  // namespace pmixcpp::wire
