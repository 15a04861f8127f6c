// The messages of the directory route (plugin/net/directory.h): how the node servers of a step
// learn each other's transport addresses through slurmd's forward-data RPC, with no table from
// srun. Each carries the sender's signed node record (plugin/net/identity.h), which the receiver
// checks exactly as a record of srun's table.
//   u32 magic "PXDR", u8 version 1, u8 kind (1 tell, 2 ask), u32 sender node, u32 nodes of the
//   step, str record (1 .. kMaxDirectoryRecord bytes), nothing after it
// tell: here is my record; ask: send me yours (and here is mine, so the answer is also a learn).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "status.h"

namespace pmixcpp::wire {

inline constexpr uint32_t kDirectoryMagic = 0x50584452;  // "PXDR"
inline constexpr uint8_t kDirectoryVersion = 1;
// A munge credential around a node record with a UCX worker address (hex) fits.
inline constexpr size_t kMaxDirectoryRecord = 16384;

enum class directory_kind : uint8_t { tell = 1, ask = 2 };

struct directory_message {
    directory_kind kind = directory_kind::tell;
    uint32_t from_node = 0;
    uint32_t nnodes = 0;
    std::string record;
    bool operator==(const directory_message &) const = default;
};

Result<std::vector<uint8_t>> encode_directory_message(const directory_message &m);
// Strict: the magic, the version, a known kind, from_node < nnodes, a record of 1 ..
// kMaxDirectoryRecord bytes and no byte after it.
Status decode_directory_message(std::span<const uint8_t> bytes, directory_message *out);

const char *to_string(directory_kind k);

}  // namespace pmixcpp::wire
