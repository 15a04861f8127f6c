#include "wire/snapshot.h"

#include <algorithm>

#include "wire/codec.h"

namespace pmixcpp::wire {

namespace {
constexpr size_t kHeaderSize = 16;
constexpr size_t kIndexEntrySize = 16;

uint32_t load_u32(const uint8_t *p) {
    return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 | static_cast<uint32_t>(p[2]) << 16 |
           static_cast<uint32_t>(p[3]) << 24;
}
uint64_t load_u64(const uint8_t *p) { return load_u32(p) | static_cast<uint64_t>(load_u32(p + 4)) << 32; }
}  // namespace

Result<std::vector<uint8_t>> encode_snapshot(const std::vector<std::pair<uint32_t, const InfoArray *>> &ranks) {
    std::vector<std::pair<uint32_t, const InfoArray *>> sorted = ranks;
    std::sort(sorted.begin(), sorted.end(), [](const auto &a, const auto &b) { return a.first < b.first; });
    for (size_t i = 1; i < sorted.size(); ++i)
        if (sorted[i].first == sorted[i - 1].first)
            return Status(PMIX_ERR_BAD_PARAM, "snapshot: rank " + std::to_string(sorted[i].first) + " twice");

    Writer blobs;
    std::vector<std::pair<uint64_t, uint32_t>> where;  // offset within blobs, length
    for (const auto &[rank, data] : sorted) {
        size_t start = blobs.size();
        PMIXCPP_RETURN_IF_ERROR(encode_info_array(blobs, data->data(), data->size())
                                    .with_context("snapshot rank " + std::to_string(rank)));
        where.emplace_back(start, static_cast<uint32_t>(blobs.size() - start));
    }
    const uint64_t base = kHeaderSize + kIndexEntrySize * sorted.size();
    Writer out;
    out.put_u32(kSnapshotMagic);
    out.put_u32(kSnapshotVersion);
    out.put_u32(static_cast<uint32_t>(sorted.size()));
    out.put_u32(0);
    for (size_t i = 0; i < sorted.size(); ++i) {
        out.put_u32(sorted[i].first);
        out.put_u32(where[i].second);
        out.put_u64(base + where[i].first);
    }
    out.put_raw(blobs.data().data(), blobs.size());
    return out.take();
}

Result<snapshot_view> snapshot_view::parse(std::span<const uint8_t> bytes) {
    if (bytes.size() < kHeaderSize) return Status(PMIX_ERR_UNPACK_FAILURE, "snapshot: shorter than its header");
    if (load_u32(bytes.data()) != kSnapshotMagic) return Status(PMIX_ERR_UNPACK_FAILURE, "snapshot: bad magic");
    if (load_u32(bytes.data() + 4) != kSnapshotVersion)
        return Status(PMIX_ERR_UNPACK_FAILURE, "snapshot: unsupported version");
    uint32_t count = load_u32(bytes.data() + 8);
    if (count > (bytes.size() - kHeaderSize) / kIndexEntrySize)
        return Status(PMIX_ERR_UNPACK_FAILURE, "snapshot: index larger than the file");
    const uint64_t data_start = kHeaderSize + static_cast<uint64_t>(count) * kIndexEntrySize;
    uint32_t prev = 0;
    for (uint32_t i = 0; i < count; ++i) {
        const uint8_t *e = bytes.data() + kHeaderSize + i * kIndexEntrySize;
        uint32_t rank = load_u32(e), length = load_u32(e + 4);
        uint64_t offset = load_u64(e + 8);
        if (i > 0 && rank <= prev) return Status(PMIX_ERR_UNPACK_FAILURE, "snapshot: index not sorted");
        if (offset < data_start || offset > bytes.size() || length > bytes.size() - offset)
            return Status(PMIX_ERR_UNPACK_FAILURE, "snapshot: rank " + std::to_string(rank) + " outside the file");
        prev = rank;
    }
    snapshot_view v;
    v._bytes = bytes;
    v._count = count;
    return v;
}

const uint8_t *snapshot_view::find(uint32_t rank, uint32_t *length) const {
    // binary search over the sorted index
    uint32_t lo = 0, hi = _count;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        const uint8_t *e = _bytes.data() + kHeaderSize + static_cast<size_t>(mid) * kIndexEntrySize;
        uint32_t r = load_u32(e);
        if (r == rank) {
            if (length) *length = load_u32(e + 4);
            return _bytes.data() + load_u64(e + 8);
        }
        if (r < rank) lo = mid + 1;
        else hi = mid;
    }
    return nullptr;
}

Status snapshot_view::rank_data(uint32_t rank, InfoArray *out) const {
    uint32_t length = 0;
    const uint8_t *p = find(rank, &length);
    if (!p) return Status(PMIX_ERR_NOT_FOUND, "snapshot has no data of rank " + std::to_string(rank));
    return decode_info_array_exact(std::span<const uint8_t>(p, length), out);
}

}  // namespace pmixcpp::wire
