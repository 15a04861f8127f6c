// Messages of the fence collectives between node servers (the body of a `coll` envelope).
//   u8 kind, u64 signature, u32 sequence, u32 nblobs, nblobs x (u32 origin node, bytes data)
// kind: 1 tree fan-in, 2 tree fan-out, 3 ring, 4 direct (exactly one blob, the sender's own),
// 5 dissemination barrier (no blobs; then u8 round, below dissemination_rounds(nodes of the step)).
// A fence is known on every node by its key: the signature of its participant set and the
// sequence number of that set's instance (the k-th fence over one set on every node).
#pragma once

#include <compare>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "status.h"

namespace pmixcpp::coll {

using blob = std::vector<uint8_t>;

struct node_blob {
    uint32_t node = 0;  // step node id the data comes from
    blob data;
};

struct coll_key {
    uint64_t signature = 0;
    uint32_t seq = 0;
    auto operator<=>(const coll_key &) const = default;
};
std::string to_string(const coll_key &k);

enum class msg_kind : uint8_t { tree_up = 1, tree_down = 2, ring = 3, direct = 4, dissemination = 5 };
const char *to_string(msg_kind k);

struct coll_message {
    msg_kind kind = msg_kind::tree_up;
    coll_key key;
    std::vector<node_blob> blobs;
    uint8_t round = 0;  // dissemination only: the barrier's round
};

// The rounds of a dissemination barrier over m nodes: ceil(log2 m) (0 for one node).
inline uint32_t dissemination_rounds(uint64_t m) {
    uint32_t r = 0;
    while ((uint64_t(1) << r) < m) ++r;
    return r;
}

std::vector<uint8_t> encode(const coll_message &m);
// Validates kind, counts and lengths; `nnodes` bounds the origin node ids.
Status decode(std::span<const uint8_t> bytes, uint32_t nnodes, coll_message *out);

// 64-bit FNV-1a over a sorted rank list: the signature of a participant set.
uint64_t signature_of(const std::vector<uint32_t> &ranks);

}  // namespace pmixcpp::coll
