#include "coll_message.h"

#include "wire/codec.h"

namespace pmixcpp::coll {

std::string to_string(const coll_key &k) {
    char buf[64];
    snprintf(buf, sizeof(buf), "%016llx#%u", static_cast<unsigned long long>(k.signature), k.seq);
    return buf;
}

const char *to_string(msg_kind k) {
    switch (k) {
    case msg_kind::tree_up: return "tree fan-in";
    case msg_kind::tree_down: return "tree fan-out";
    case msg_kind::ring: return "ring";
    case msg_kind::direct: return "direct";
    case msg_kind::dissemination: return "dissemination";
    }
    return "unknown";
}

std::vector<uint8_t> encode(const coll_message &m) {
    wire::Writer w;
    w.put_u8(static_cast<uint8_t>(m.kind));
    w.put_u64(m.key.signature);
    w.put_u32(m.key.seq);
    w.put_u32(static_cast<uint32_t>(m.blobs.size()));
    for (const auto &b : m.blobs) {
        w.put_u32(b.node);
        (void)w.put_bytes(b.data.data(), b.data.size());  // a node's blob: far below 4 GiB, never null with a size
    }
    if (m.kind == msg_kind::dissemination) w.put_u8(m.round);
    return w.take();
}

Status decode(std::span<const uint8_t> bytes, uint32_t nnodes, coll_message *out) {
    wire::Reader r(bytes);
    uint8_t kind = 0;
    uint32_t n = 0;
    coll_message m;
    PMIXCPP_RETURN_IF_ERROR(r.get_u8(&kind));
    if (kind < 1 || kind > 5) return Status(PMIX_ERR_BAD_PARAM, "unknown collective message kind " + std::to_string(kind));
    m.kind = static_cast<msg_kind>(kind);
    PMIXCPP_RETURN_IF_ERROR(r.get_u64(&m.key.signature));
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&m.key.seq));
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&n));
    if (n > nnodes) return Status(PMIX_ERR_BAD_PARAM, "collective message with " + std::to_string(n) + " blobs");
    if ((m.kind == msg_kind::ring || m.kind == msg_kind::direct) && n != 1)
        return Status(PMIX_ERR_BAD_PARAM, std::string(to_string(m.kind)) + " message without exactly one blob");
    if (m.kind == msg_kind::dissemination) {  // a barrier: no data, a round the step's size allows
        if (n != 0) return Status(PMIX_ERR_BAD_PARAM, "dissemination message with " + std::to_string(n) + " blobs");
        PMIXCPP_RETURN_IF_ERROR(r.get_u8(&m.round));
        if (m.round >= dissemination_rounds(nnodes))
            return Status(PMIX_ERR_BAD_PARAM, "dissemination round " + std::to_string(m.round) + " beyond " +
                                                  std::to_string(nnodes) + " nodes' " +
                                                  std::to_string(dissemination_rounds(nnodes)));
        PMIXCPP_RETURN_IF_ERROR(r.expect_end());
        *out = std::move(m);
        return Status::success();
    }
    // a blob takes at least 8 bytes (origin node + length); the node bitmap is charged too
    PMIXCPP_RETURN_IF_ERROR(r.take_count(n, 8, sizeof(node_blob), "collective blobs"));
    PMIXCPP_RETURN_IF_ERROR(r.charge(nnodes / 8 + 1, "collective origin set"));
    m.blobs.resize(n);
    std::vector<bool> seen(nnodes, false);
    for (auto &b : m.blobs) {
        std::span<const uint8_t> data;
        PMIXCPP_RETURN_IF_ERROR(r.get_u32(&b.node));
        if (b.node >= nnodes || seen[b.node])
            return Status(PMIX_ERR_BAD_PARAM, "collective message with bad origin node " + std::to_string(b.node));
        seen[b.node] = true;
        PMIXCPP_RETURN_IF_ERROR(r.get_bytes(&data));
        b.data.assign(data.begin(), data.end());
    }
    PMIXCPP_RETURN_IF_ERROR(r.expect_end());
    *out = std::move(m);
    return Status::success();
}

uint64_t signature_of(const std::vector<uint32_t> &ranks) {
    uint64_t h = 1469598103934665603ull;
    auto mix = [&](uint32_t v) {
        for (int i = 0; i < 4; ++i) {
            h ^= (v >> (8 * i)) & 0xff;
            h *= 1099511628211ull;
        }
    };
    mix(static_cast<uint32_t>(ranks.size()));
    for (uint32_t r : ranks) mix(r);
    return h;
}

}  // namespace pmixcpp::coll
