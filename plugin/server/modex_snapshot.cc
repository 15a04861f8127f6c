#include "modex_snapshot.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

#include "log.h"
#include "wire/snapshot.h"

namespace pmixcpp::server {

namespace {
constexpr unsigned kSeals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL;

Status sys_error(const std::string &what) { return Status(PMIX_ERR_NOMEM, "modex snapshot: " + what + ": " + strerror(errno)); }
}  // namespace

Result<modex_snapshot> modex_snapshot_writer::write(const kv_store &kvs) {
    if (const modex_snapshot *same = current(kvs)) return *same;
    // Encoded straight from the store (borrowed views, no copy of the values).
    std::vector<std::vector<pmix_info_t>> views;
    std::vector<std::pair<uint32_t, std::span<const pmix_info_t>>> ranks;
    views.reserve(_node_of.size());
    for (uint32_t rank = 0; rank < _node_of.size(); ++rank) {
        if (!kvs.has_committed(rank)) continue;
        relation rel = _node_of[rank] == _node_id ? relation::same_node : relation::other_node;
        views.push_back(kvs.visible_view(rank, rel, /*with_job_data=*/false));
        ranks.emplace_back(rank, views.back());
    }
    auto bytes = wire::encode_snapshot(ranks, std::move(_buffer));
    if (!bytes.ok()) return bytes.status();

    const uint64_t seq = ++_seq;
    std::string name = "pmixcpp-modex." + std::to_string(seq);
    safe_fs::unique_fd fd(memfd_create(name.c_str(), MFD_CLOEXEC | MFD_ALLOW_SEALING));
    if (fd.get() < 0) return sys_error("memfd_create");
    const std::vector<uint8_t> &b = bytes.value();
    PMIXCPP_RETURN_IF_ERROR(safe_fs::write_all(fd.get(), b, name).with_context("modex snapshot"));
    if (fcntl(fd.get(), F_ADD_SEALS, kSeals) != 0) return sys_error("seal");
    _generation = kvs.generation();
    _last.id = "modex." + std::to_string(seq);
    _last.fd = std::make_shared<const safe_fs::unique_fd>(std::move(fd));
    _last.bytes = b.size();
    // The encoding buffer is kept for the next snapshot (its memory is already in place), up to a
    // bound.
    if (b.capacity() <= kKeptBufferBytes) _buffer = std::move(bytes.value());
    return _last;
}

}  // namespace pmixcpp::server
