// Modex snapshot: after a fence that collected data, a node's server writes
// the committed data of every rank, as visible to that node's processes, into
// one read-only file that its clients map; a client then answers a Get of a
// peer's key without a round trip. The file is indexed by rank, so a client
// decodes only the ranks it asks about.
//
//   u32 magic "PXMS", u32 version 1, u32 count, u32 reserved,
//   count x (u32 rank, u32 length, u64 offset)   sorted by rank
//   blobs: an encoded info array per rank (codec.h), at their offsets
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "status.h"
#include "value.h"

namespace pmixcpp::wire {

inline constexpr uint32_t kSnapshotMagic = 0x534d5850;  // "PXMS" little-endian
inline constexpr uint32_t kSnapshotVersion = 1;

// Encode (rank, data) pairs; ranks must be distinct.
Result<std::vector<uint8_t>> encode_snapshot(const std::vector<std::pair<uint32_t, const InfoArray *>> &ranks);

// A validated view over snapshot bytes it does not own.
class snapshot_view {
public:
    // Checks the header and the whole index (offsets and lengths inside the data).
    static Result<snapshot_view> parse(std::span<const uint8_t> bytes);

    bool has(uint32_t rank) const { return find(rank) != nullptr; }
    size_t size() const { return _count; }
    // Decode the data of `rank`; PMIX_ERR_NOT_FOUND if the snapshot has none.
    Status rank_data(uint32_t rank, InfoArray *out) const;

private:
    const uint8_t *find(uint32_t rank, uint32_t *length = nullptr) const;

    std::span<const uint8_t> _bytes;
    uint32_t _count = 0;
};

}  // namespace pmixcpp::wire
