#include "modex_snapshot.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

#include "log.h"
#include "wire/snapshot.h"
#include "sys.h"

namespace pmixcpp::server {

namespace {
// F_SEAL_FUTURE_WRITE: no write() and no new writable mapping, while the server's own mapping,
// made before, stays writable.
constexpr unsigned kSeals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE | F_SEAL_SEAL;
constexpr size_t kSegmentAlign = 64;
constexpr size_t kMinCapacity = 1u << 20;

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

Status snapshot_error(const std::string &what) { return pmixcpp::sys_error("modex snapshot: " + what, errno, PMIX_ERR_NOMEM); }
}  // namespace

modex_snapshot_writer::~modex_snapshot_writer() { unmap(); }

void modex_snapshot_writer::unmap() {
    if (_map != nullptr) munmap(_map, _capacity);
    _map = nullptr;
    _capacity = _used = 0;
}

Result<std::vector<uint8_t>> modex_snapshot_writer::encode(const kv_store &kvs, uint64_t since, bool *empty,
                                                           bool *hidden) {
    // Encoded straight from the store (borrowed views, no copy of the values).
    std::vector<std::vector<pmix_info_t>> views;
    std::vector<std::pair<uint32_t, std::span<const pmix_info_t>>> ranks;
    views.reserve(_node_of.size());
    for (uint32_t rank = 0; rank < _node_of.size(); ++rank) {
        if (!kvs.has_committed(rank)) continue;
        relation rel = _node_of[rank] == _node_id ? relation::same_node : relation::other_node;
        auto view = kvs.visible_view(rank, rel, /*with_job_data=*/false, since, hidden);
        if (since > 0 && view.empty()) continue;
        views.push_back(std::move(view));
        ranks.emplace_back(rank, views.back());
    }
    *empty = ranks.empty();
    return wire::encode_snapshot(ranks, std::move(_buffer));
}

// A new memory file for a snapshot whose first segment has `first_segment` bytes, with room for
// later ones: sized once (its pages are allocated only where written), mapped writable by the
// server, then sealed.
Status modex_snapshot_writer::new_file(size_t first_segment) {
    unmap();
    const size_t capacity = round_up(std::max(kMinCapacity, 4 * first_segment), 1u << 16);
    const uint64_t seq = ++_seq;
    std::string name = "pmixcpp-modex." + std::to_string(seq);
    safe_fs::unique_fd fd(memfd_create(name.c_str(), MFD_CLOEXEC | MFD_ALLOW_SEALING));
    if (fd.get() < 0) return snapshot_error("memfd_create");
    if (ftruncate(fd.get(), static_cast<off_t>(capacity)) != 0) return snapshot_error("size");
    void *map = mmap(nullptr, capacity, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
    if (map == MAP_FAILED) return snapshot_error("map");
    if (fcntl(fd.get(), F_ADD_SEALS, kSeals) != 0) {
        Status st = snapshot_error("seal");
        munmap(map, capacity);
        return st;
    }
    _map = static_cast<uint8_t *>(map);
    _capacity = capacity;
    _used = 0;
    _last.id = "modex." + std::to_string(seq);
    _last.fd = std::make_shared<const safe_fs::unique_fd>(std::move(fd));
    _last.segments.clear();
    return Status::success();
}

Result<modex_snapshot> modex_snapshot_writer::write(const kv_store &kvs) {
    if (const modex_snapshot *same = current(kvs)) return *same;
    // A segment of what changed, unless a whole one is due: no file yet, many segments, or data
    // dropped or hidden since (a segment only adds and replaces keys).
    bool whole = _map == nullptr || _last.segments.size() >= kMaxSegments || kvs.forgotten() > _generation;
    bool empty = false, hidden = false;
    auto bytes = encode(kvs, whole ? 0 : _generation, &empty, &hidden);
    PMIXCPP_RETURN_IF_ERROR(bytes);
    if (!whole && (hidden || round_up(_used, kSegmentAlign) + bytes->size() > _capacity)) {
        whole = true;
        _buffer = std::move(bytes.value());
        bytes = encode(kvs, 0, &empty, &hidden);
        PMIXCPP_RETURN_IF_ERROR(bytes);
    }
    const std::vector<uint8_t> &b = bytes.value();
    if (!whole && empty) {
        // Nothing this node sees changed (job data, or keys of a scope it does not see).
        _generation = kvs.generation();
        _buffer = std::move(bytes.value());
        return _last;
    }
    if (whole) PMIXCPP_RETURN_IF_ERROR(new_file(b.size()));
    const size_t offset = round_up(_used, kSegmentAlign);
    memcpy(_map + offset, b.data(), b.size());
    _used = offset + b.size();
    _last.segments.emplace_back(offset, b.size());
    _generation = kvs.generation();
    // The encoding buffer is kept for the next snapshot (its memory is already in place), up to a
    // bound.
    if (b.capacity() <= kKeptBufferBytes) _buffer = std::move(bytes.value());
    return _last;
}

}  // namespace pmixcpp::server
