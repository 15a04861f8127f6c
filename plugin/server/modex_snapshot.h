// Makes the modex snapshot of shared/PROTOCOL.md, asked for by a client after a collecting fence:
// every rank's committed data as this node's processes may see it, in the job-data format
// (shared/wire/snapshot.h), in a sealed memory file (memfd) that the server passes to its clients
// as a descriptor and they map read-only. No file in any directory, nothing on disk. No sockets.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kvs.h"
#include "status.h"
#include "../common/safe_fs.h"

namespace pmixcpp::server {

// One snapshot: its id (never reused for other contents) and its sealed memory file.
struct modex_snapshot {
    std::string id;
    std::shared_ptr<const safe_fs::unique_fd> fd;
    size_t bytes = 0;
};

class modex_snapshot_writer {
public:
    // `node_of[rank]` is the node index of each rank; `node_id` is this node's.
    modex_snapshot_writer(std::vector<uint32_t> node_of, uint32_t node_id)
        : _node_of(std::move(node_of)), _node_id(node_id) {}

    // A new snapshot of `kvs`: a memory file sealed against writing, growing and shrinking, so
    // what a client maps never changes under it. Nothing changed in `kvs` since the last snapshot
    // (a fence that collected nothing new): that snapshot again, nothing made. The writer keeps
    // only the last one; a client keeps its mapping as long as it likes.
    Result<modex_snapshot> write(const kv_store &kvs);
    // The last snapshot if `kvs` has not changed since (no work); nullptr otherwise.
    const modex_snapshot *current(const kv_store &kvs) const {
        return _last.fd && kvs.generation() == _generation ? &_last : nullptr;
    }

private:
    std::vector<uint32_t> _node_of;
    uint32_t _node_id;
    uint64_t _seq = 0;
    uint64_t _generation = 0;  // of the kv_store in the last snapshot
    modex_snapshot _last;      // that snapshot (no fd: none yet)
    static constexpr size_t kKeptBufferBytes = 16u << 20;
    std::vector<uint8_t> _buffer;  // the last encoding's, reused
};

}  // namespace pmixcpp::server
