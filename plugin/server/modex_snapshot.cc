#include "modex_snapshot.h"

#include "../common/step_env.h"
#include "log.h"
#include "wire/snapshot.h"

namespace pmixcpp::server {

Result<std::string> modex_snapshot_writer::write(const kv_store &kvs) {
    if (!_dirs) return Status(PMIX_ERR_BAD_PARAM, "modex snapshot: the step has no directory");
    if (!_last_path.empty() && kvs.generation() == _generation) return _last_path;
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
    auto bytes = wire::encode_snapshot(ranks);
    if (!bytes.ok()) return bytes.status();

    const safe_fs::dir &root = _dirs->root;
    const uint64_t seq = ++_seq;
    Status st = root.write_new_file(name_of(seq), bytes.value(), 0400, _uid, _gid);
    if (!st.ok()) return st.with_context("modex snapshot");
    _generation = kvs.generation();
    _last_path = root.path() + "/" + name_of(seq);
    if (seq > 2) {
        if (Status old = root.remove(name_of(seq - 2)); !old.ok())
            PMIXCPP_LOG_WARNING("old modex snapshot left: %s", old.message().c_str());
    }
    return _last_path;
}

}  // namespace pmixcpp::server
