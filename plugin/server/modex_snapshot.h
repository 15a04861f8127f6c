// Makes the modex snapshot of shared/PROTOCOL.md with every fence: every rank's
// committed data as this node's processes may see it, in the job-data format
// (shared/wire/snapshot.h), in a memory file (memfd) that the server passes to its clients as a
// descriptor and they map read-only. No file in any directory, nothing on disk. No sockets.
//
// The file is a log: each fence appends a segment with only what changed since the one before
// (O(new data) a fence), and a client looks a key up in the segments newest first. The server
// writes through the one writable mapping, made before the file was sealed against any other
// (F_SEAL_FUTURE_WRITE): a client can neither write nor map it writable, nor grow or shrink it,
// and the server never writes where it has told a client there is a segment. When the file is
// full or holds many segments, the next snapshot is written whole into a new file.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kvs.h"
#include "status.h"
#include "wire/snapshot.h"
#include "../common/safe_fs.h"

namespace pmixcpp::server {

// One state of the snapshot: the memory file and the segments of it that hold it, oldest first
// (a later segment's key replaces an earlier one's).
struct modex_snapshot {
    std::string id;  // the file's; never reused for another file
    std::shared_ptr<const safe_fs::unique_fd> fd;
    std::vector<wire::snapshot_segment> segments;  // (offset, length)
};

class modex_snapshot_writer {
public:
    // `node_of[rank]` is the node index of each rank; `node_id` is this node's.
    modex_snapshot_writer(std::vector<uint32_t> node_of, uint32_t node_id)
        : _node_of(std::move(node_of)), _node_id(node_id) {}
    ~modex_snapshot_writer();
    modex_snapshot_writer(const modex_snapshot_writer &) = delete;
    modex_snapshot_writer &operator=(const modex_snapshot_writer &) = delete;

    // The snapshot of `kvs` now: a segment with what changed since the last one appended (or,
    // every kMaxSegments, when the file is full, or after data was forgotten, a new file with
    // the whole). Nothing changed (a fence that collected nothing new): the last one again,
    // nothing made.
    Result<modex_snapshot> write(const kv_store &kvs);
    // The last snapshot if `kvs` has not changed since (no work); nullptr otherwise.
    const modex_snapshot *current(const kv_store &kvs) const {
        return _last.fd && kvs.generation() == _generation ? &_last : nullptr;
    }

    static constexpr size_t kMaxSegments = 16;

private:
    // The encoding of what `kvs` holds for this node, committed after `since` (0: all);
    // *hidden: a change this node cannot see (then only a whole snapshot is right).
    Result<std::vector<uint8_t>> encode(const kv_store &kvs, uint64_t since, bool *empty, bool *hidden);
    Status new_file(size_t first_segment);
    void unmap();

    std::vector<uint32_t> _node_of;
    uint32_t _node_id;
    uint64_t _seq = 0;
    uint64_t _generation = 0;  // of the kv_store in the last snapshot
    modex_snapshot _last;      // that snapshot (no fd: none yet)
    uint8_t *_map = nullptr;   // _last's file, writable (the server's only)
    size_t _capacity = 0;      // its size
    size_t _used = 0;          // bytes of it written (segment ends, aligned)
    static constexpr size_t kKeptBufferBytes = 16u << 20;
    std::vector<uint8_t> _buffer;  // the last encoding's, reused
};

}  // namespace pmixcpp::server
