#include "modex_snapshot.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "wire/snapshot.h"

namespace pmixcpp::server {

Result<std::string> modex_snapshot_writer::write(const kv_store &kvs) {
    std::vector<InfoArray> data;
    std::vector<std::pair<uint32_t, const InfoArray *>> ranks;
    data.reserve(_node_of.size());
    for (uint32_t rank = 0; rank < _node_of.size(); ++rank) {
        if (!kvs.has_committed(rank)) continue;
        relation rel = _node_of[rank] == _node_id ? relation::same_node : relation::other_node;
        auto d = kvs.visible_data(rank, rel, /*with_job_data=*/false);
        if (!d.ok()) return d.status().with_context("modex snapshot of rank " + std::to_string(rank));
        data.push_back(std::move(d.value()));
        ranks.emplace_back(rank, nullptr);
    }
    for (size_t i = 0; i < ranks.size(); ++i) ranks[i].second = &data[i];
    auto bytes = wire::encode_snapshot(ranks);
    if (!bytes.ok()) return bytes.status();

    const uint64_t seq = ++_seq;
    const std::string path = path_of(seq), tmp = path + ".tmp";
    int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0444);
    if (fd < 0) return Status(PMIX_ERROR, "modex snapshot: open " + tmp + ": " + std::strerror(errno));
    const auto &b = bytes.value();
    size_t off = 0;
    while (off < b.size()) {
        ssize_t n = ::write(fd, b.data() + off, b.size() - off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            int err = errno;
            close(fd);
            unlink(tmp.c_str());
            return Status(PMIX_ERROR, "modex snapshot: write " + tmp + ": " + std::strerror(err));
        }
        off += static_cast<size_t>(n);
    }
    if (fchown(fd, _uid, _gid) != 0 || close(fd) != 0 || rename(tmp.c_str(), path.c_str()) != 0) {
        int err = errno;
        unlink(tmp.c_str());
        return Status(PMIX_ERROR, "modex snapshot: finish " + path + ": " + std::strerror(err));
    }
    if (seq > 2) unlink(path_of(seq - 2).c_str());
    return path;
}

}  // namespace pmixcpp::server
