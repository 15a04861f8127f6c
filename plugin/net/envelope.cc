#include "envelope.h"

#include "wire/codec.h"
#include "wire/frame.h"

namespace pmixcpp::net {

const char *channel_name(const channel_names *above, channel_id id) {
    if (id == kLinkChannel) return "link";
    const char *name = above ? above->name_of(id) : nullptr;
    return name ? name : "unknown";
}

Result<std::vector<uint8_t>> encode_node_frame(const step_identity &id, uint32_t src_node, channel_id chan,
                                               std::span<const uint8_t> body) {
    wire::Writer w;
    w.put_u8(kEnvelopeVersion);
    PMIXCPP_RETURN_IF_ERROR(w.put_string(id.nspace));
    w.put_u32(src_node);
    w.put_u16(chan);
    PMIXCPP_RETURN_IF_ERROR(w.put_bytes(body.data(), body.size()));
    return wire::encode_frame(kNodeFrameType, 0, 0, w.data(), kMaxNodePayload);
}

Status decode_node_payload(std::span<const uint8_t> payload, const step_identity &id, uint32_t nnodes,
                           const channel_names *above, envelope *out) {
    wire::Reader r(payload);
    std::string nspace;
    uint8_t version = 0;
    uint32_t src = 0;
    uint16_t chan = 0;
    std::span<const uint8_t> body;
    PMIXCPP_RETURN_IF_ERROR(r.get_u8(&version));
    if (version != kEnvelopeVersion)
        return Status(PMIX_ERR_NOT_SUPPORTED, "node envelope version " + std::to_string(version) + " (this side speaks " +
                                                  std::to_string(kEnvelopeVersion) + ")");
    PMIXCPP_RETURN_IF_ERROR(r.get_string(&nspace, 256));
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&src));
    PMIXCPP_RETURN_IF_ERROR(r.get_u16(&chan));
    PMIXCPP_RETURN_IF_ERROR(r.get_bytes(&body));
    PMIXCPP_RETURN_IF_ERROR(r.expect_end());
    if (nspace != id.nspace) return Status(PMIX_ERR_NO_PERMISSIONS, "message for another step (" + nspace + ")");
    if (src >= nnodes) return Status(PMIX_ERR_BAD_PARAM, "source node " + std::to_string(src) + " out of range");
    if (chan != kLinkChannel && !(above && above->name_of(chan)))
        return Status(PMIX_ERR_BAD_PARAM, "unknown channel " + std::to_string(chan));
    out->src_node = src;
    out->chan = chan;
    out->body.assign(body.begin(), body.end());
    return Status::success();
}

Status decode_node_frame(std::span<const uint8_t> frame, const step_identity &id, uint32_t nnodes,
                         const channel_names *above, envelope *out) {
    if (frame.size() < wire::kFrameHeaderSize) return Status(PMIX_ERR_BAD_PARAM, "short frame");
    wire::FrameHeader h;
    PMIXCPP_RETURN_IF_ERROR(wire::decode_frame_header(frame.first(wire::kFrameHeaderSize), &h, kMaxNodePayload));
    if (h.type != kNodeFrameType) return Status(PMIX_ERR_BAD_PARAM, "not a node frame (type " + std::to_string(h.type) + ")");
    if (frame.size() - wire::kFrameHeaderSize != h.length)
        return Status(PMIX_ERR_BAD_PARAM, "frame length does not match its header");
    return decode_node_payload(frame.subspan(wire::kFrameHeaderSize), id, nnodes, above, out);
}

}  // namespace pmixcpp::net
