// Modex snapshot: after a fence that collected data, a node's server encodes the committed data
// of every rank, as visible to that node's processes, into one sealed memory file whose
// descriptor it passes to its clients, which map it; a client then answers a Get of a peer's key
// without a round trip.
//
// The contents have the job-data file's format (jobdata.h): one entry per rank, its keys sorted, so a
// client finds one key of one rank in place (two binary searches) and decodes that value only.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "status.h"
#include "value.h"
#include "wire/codec.h"
#include "wire/jobdata.h"

namespace pmixcpp::wire {

// Encode (rank, data) pairs; ranks must be distinct, and keys within a rank.
Result<std::vector<uint8_t>> encode_snapshot(const std::vector<std::pair<uint32_t, const InfoArray *>> &ranks);
// From borrowed arrays, into `buffer` (as encode_jobdata).
Result<std::vector<uint8_t>> encode_snapshot(const std::vector<std::pair<uint32_t, std::span<const pmix_info_t>>> &ranks,
                                             std::vector<uint8_t> buffer = {});

// A view over snapshot bytes it does not own (tests and tools; clients map it as job data).
class snapshot_view {
public:
    // Checks the header; every offset is checked when it is followed.
    static Result<snapshot_view> parse(std::span<const uint8_t> bytes);

    bool has(uint32_t rank) const { return _view.find(rank).ok(); }
    size_t size() const { return _view.size(); }
    // Decode every key of `rank`; PMIX_ERR_NOT_FOUND if the snapshot has none.
    Status rank_data(uint32_t rank, InfoArray *out) const;
    // Decode one key of `rank` into *out (empty on entry); PMIX_ERR_NOT_FOUND if absent.
    Status value(uint32_t rank, std::string_view key, pmix_value_t *out) const;

private:
    jobdata_view _view;
};

// --- The reference a reply names (shared/PROTOCOL.md, "Modex snapshot") ---------------------
//
// The body of a fence's or a `snapshot` request's reply: `str id`, then, if the id is not
// empty, `u32 count` (1..kMaxSnapshotSegments) and `count` times `u64 offset, u64 length`, the
// segments of the file oldest first. An empty id (and nothing after it) says that no snapshot
// could be made. The file's descriptor travels beside the frame, not in it.

inline constexpr size_t kMaxSnapshotIdLength = 256;
inline constexpr uint32_t kMaxSnapshotSegments = 4096;

// (offset, length) of one segment in the snapshot's file.
using snapshot_segment = std::pair<uint64_t, uint64_t>;

struct snapshot_ref {
    std::string id;                          // the file's ("modex.<n>"); "" = none could be made
    std::vector<snapshot_segment> segments;  // empty if and only if id is ""
};

// Fails (writing nothing) on a reference the decoder would refuse: an id too long or with a NUL,
// segments with an empty id or none with an id, more than kMaxSnapshotSegments, an empty
// segment, one whose end overflows, or one that starts before the end of the one before.
Status encode_snapshot_ref(Writer &w, std::string_view id, std::span<const snapshot_segment> segments);
Status encode(Writer &w, const snapshot_ref &m);
// Checks what the encoder checks; *m is set only on success. The caller checks that the body
// ends there (decode_payload).
Status decode(Reader &r, snapshot_ref *m);

}  // namespace pmixcpp::wire
