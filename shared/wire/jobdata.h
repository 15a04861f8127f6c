// Job-data file (PROTOCOL.md "Job data in shared memory"): the namespace's job, node and process
// data that the server writes once per step and every client maps read-only. Version 2 is
// indexed so that a client looks a value up in place: PMIx_Init and a Get touch a few pages, never
// every rank's data, and nothing is decoded that nobody asked for.
//
//   header   u32 magic "PXJD", u32 version 2, u64 file length, u32 nentries, u32 reserved (0)
//   index    nentries x (u32 rank, u32 nkeys, u64 key table offset), sorted by rank, ranks distinct
//            (PMIX_RANK_WILDCARD = the job level sorts last; rank r of a dense job sits at slot r)
//   per entry, its key table: nkeys x (u32 key offset, u32 key length, u32 value offset,
//            u32 value length), sorted by key (bytewise), keys distinct
//   blobs    key bytes (no NUL); values encoded with codec.h (encode_value)
// All integers little-endian, offsets from the start of the file (a file stays below 4 GiB).
//
// The reader trusts nothing: the file is written by root for the job's user, but a client must
// not crash on a corrupt one. Every offset and length is checked against the file before it is
// followed, a value decodes within its own bytes, and a wrong key order only makes a lookup miss.
#pragma once

#include <pmix_common.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "status.h"
#include "value.h"

namespace pmixcpp::wire {

// Per rank (PMIX_RANK_WILDCARD = job level) its infos.
struct jobdata_entry {
    uint32_t rank = PMIX_RANK_WILDCARD;
    InfoArray infos;
};
inline constexpr uint32_t kJobdataMagic = 0x444a5850;  // "PXJD" little-endian
inline constexpr uint32_t kJobdataVersion = 2;
inline constexpr size_t kJobdataHeaderSize = 24;
inline constexpr size_t kJobdataIndexEntrySize = 16;
inline constexpr size_t kJobdataKeyEntrySize = 16;

// Encode the entries (ranks distinct, keys distinct within an entry; order does not matter).
Result<std::vector<uint8_t>> encode_jobdata(const std::vector<jobdata_entry> &entries);
// The same from (rank, infos) pairs whose infos the caller keeps (the modex snapshot).
Result<std::vector<uint8_t>> encode_jobdata(const std::vector<std::pair<uint32_t, const InfoArray *>> &entries);
// The same from borrowed arrays (the values are only read), written into `buffer` (its contents
// are replaced; a buffer kept from the last call saves growing and touching new memory again).
Result<std::vector<uint8_t>> encode_jobdata(const std::vector<std::pair<uint32_t, std::span<const pmix_info_t>>> &entries,
                                            std::vector<uint8_t> buffer = {});
// Decode the whole file into entries (tests, tools; clients use jobdata_view).
Status decode_jobdata(std::span<const uint8_t> bytes, std::vector<jobdata_entry> *entries);

// A view over job-data bytes it does not own. parse() checks the header and that the index lies
// inside the file (it does not read the index); everything else is checked when it is used.
class jobdata_view {
public:
    static Result<jobdata_view> parse(std::span<const uint8_t> bytes);

    // One entry's key table, checked to lie inside the file.
    struct entry {
        uint32_t rank = 0;
        uint32_t nkeys = 0;
        uint64_t table = 0;
    };
    size_t size() const { return _count; }
    // The entry of `rank`: PMIX_ERR_NOT_FOUND if the file has none, PMIX_ERR_UNPACK_FAILURE if
    // what the index says does not fit the file.
    Result<entry> find(uint32_t rank) const;
    // The i-th entry of the index (i < size()).
    Result<entry> at(size_t i) const;
    // Decode `key` of `e` into *out (empty on entry): PMIX_ERR_NOT_FOUND if absent.
    Status value(const entry &e, std::string_view key, pmix_value_t *out) const;
    // The i-th key of `e` (i < e.nkeys).
    Result<std::string_view> key_at(const entry &e, uint32_t i) const;

    // The i-th slot of `e`'s key table (i < e.nkeys), checked to lie inside the file.
    struct key_slot {
        std::string_view key;
        uint32_t value_offset = 0;
        uint32_t value_length = 0;
    };
    Result<key_slot> slot(const entry &e, uint32_t i) const;

private:
    std::span<const uint8_t> _bytes;
    uint32_t _count = 0;
};

}  // namespace pmixcpp::wire
