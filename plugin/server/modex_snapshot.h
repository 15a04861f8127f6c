// Writes the modex snapshot of shared/PROTOCOL.md, asked for by a client after a collecting fence:
// every rank's committed data as this node's processes may see it, in one
// read-only file the clients map (shared/wire/snapshot.h). No sockets; file I/O
// only.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kvs.h"
#include "status.h"
#include "../common/step_info.h"

namespace pmixcpp::server {

class modex_snapshot_writer {
public:
    // `node_of[rank]` is the node index of each rank; `node_id` is this node's.
    // The snapshots go into the root-owned step root of `dirs` (step_env.h), owned by uid:gid, 0400.
    modex_snapshot_writer(std::shared_ptr<const step_dirs> dirs, uid_t uid, gid_t gid, std::vector<uint32_t> node_of,
                          uint32_t node_id)
        : _dirs(std::move(dirs)), _uid(uid), _gid(gid), _node_of(std::move(node_of)), _node_id(node_id) {}

    // Write a new snapshot of `kvs` and return its path; the one before the previous is removed
    // (clients keep their mapping of an unlinked file). Nothing changed in `kvs` since the last
    // snapshot (a fence that collected nothing new): that snapshot's path, nothing written.
    Result<std::string> write(const kv_store &kvs);

private:
    static std::string name_of(uint64_t seq) { return "modex." + std::to_string(seq); }

    std::shared_ptr<const step_dirs> _dirs;
    uid_t _uid;
    gid_t _gid;
    std::vector<uint32_t> _node_of;
    uint32_t _node_id;
    uint64_t _seq = 0;
    uint64_t _generation = 0;  // of the kv_store in the last snapshot written
    std::string _last_path;    // that snapshot ("": none yet)
};

}  // namespace pmixcpp::server
