#include "agent_proto.h"

#include "wire/codec.h"
#include "wire/frame.h"

namespace pmixcpp::agent {

const char *service_name(const service_names *above, service_id id) {
    if (id == kReport) return "report";
    if (id == kRendezvous) return "rendezvous";
    const char *name = above && id >= kFirstServiceAbove && id <= kMaxServiceId ? above->name_of(id) : nullptr;
    return name ? name : "unknown";
}

bool is_service(const service_names *above, uint16_t frame_type) {
    if (frame_type == kReport || frame_type == kRendezvous) return true;
    return above && frame_type >= kFirstServiceAbove && frame_type <= kMaxServiceId && above->name_of(frame_type) != nullptr;
}

Result<std::vector<uint8_t>> encode_reply(const reply &r) {
    wire::Writer w;
    w.put_i32(r.status);
    PMIXCPP_RETURN_IF_ERROR(w.put_string(r.message));
    PMIXCPP_RETURN_IF_ERROR(w.put_bytes(r.body.data(), r.body.size()));
    return w.take();
}

Status decode_reply(std::span<const uint8_t> bytes, reply *out) {
    wire::Reader r(bytes.data(), bytes.size());
    std::span<const uint8_t> b;
    PMIXCPP_RETURN_IF_ERROR(r.get_i32(&out->status));
    PMIXCPP_RETURN_IF_ERROR(r.get_string(&out->message, 64 * 1024));
    PMIXCPP_RETURN_IF_ERROR(r.get_bytes(&b));
    out->body.assign(b.begin(), b.end());
    return r.expect_end();
}

Result<std::vector<uint8_t>> request_frame(service_id s, std::span<const uint8_t> body, uint32_t id) {
    return wire::encode_frame(s, 0, id, body, kMaxPayload);
}

Result<std::vector<uint8_t>> reply_frame(const reply &r, uint32_t id) {
    PMIXCPP_ASSIGN_OR_RETURN(auto bytes, encode_reply(r));
    return wire::encode_frame(kReplyFrame, 0, id, bytes, kMaxPayload);
}

Result<std::vector<uint8_t>> reply_frame_of(std::span<const uint8_t> encoded_reply, uint32_t id) {
    return wire::encode_frame(kReplyFrame, 0, id, encoded_reply, kMaxPayload);
}

Result<std::vector<uint8_t>> encode_report(const report &rep) {
    wire::Writer w;
    w.put_u16(static_cast<uint16_t>(rep.what));
    w.put_i32(rep.status);
    PMIXCPP_RETURN_IF_ERROR(w.put_string(rep.node));
    PMIXCPP_RETURN_IF_ERROR(w.put_string(rep.message.substr(0, kMaxReport / 2)));
    return w.take();
}

Status decode_report(std::span<const uint8_t> body, report *rep) {
    if (body.size() > kMaxReport) return Status(PMIX_ERR_BAD_PARAM, "report too long");
    wire::Reader r(body.data(), body.size());
    uint16_t what = 0;
    PMIXCPP_RETURN_IF_ERROR(r.get_u16(&what));
    PMIXCPP_RETURN_IF_ERROR(r.get_i32(&rep->status));
    PMIXCPP_RETURN_IF_ERROR(r.get_string(&rep->node, 256));
    PMIXCPP_RETURN_IF_ERROR(r.get_string(&rep->message, kMaxReport));
    PMIXCPP_RETURN_IF_ERROR(r.expect_end());
    if (what < 1 || what > 3) return Status(PMIX_ERR_BAD_PARAM, "unknown report kind " + std::to_string(what));
    rep->what = static_cast<report::kind>(what);
    if (rep->status == 0) rep->status = 1;
    return Status::success();
}

Result<std::vector<uint8_t>> encode_rendezvous(const rendezvous_request &rq) {
    wire::Writer w;
    w.put_u32(rq.node);
    w.put_u32(rq.nnodes);
    PMIXCPP_RETURN_IF_ERROR(w.put_string(rq.address));
    return w.take();
}

Status decode_rendezvous(std::span<const uint8_t> body, rendezvous_request *rq) {
    wire::Reader r(body.data(), body.size());
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&rq->node));
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&rq->nnodes));
    PMIXCPP_RETURN_IF_ERROR(r.get_string(&rq->address, kMaxAddress));
    PMIXCPP_RETURN_IF_ERROR(r.expect_end());
    if (rq->nnodes == 0 || rq->node >= rq->nnodes)
        return Status(PMIX_ERR_BAD_PARAM, "node " + std::to_string(rq->node) + " of " + std::to_string(rq->nnodes));
    return Status::success();
}

Result<std::vector<uint8_t>> encode_table(const std::vector<std::string> &addresses) {
    wire::Writer w;
    w.put_u32(static_cast<uint32_t>(addresses.size()));
    for (const auto &a : addresses) PMIXCPP_RETURN_IF_ERROR(w.put_string(a));
    return w.take();
}

Status decode_table(std::span<const uint8_t> body, uint32_t expected, std::vector<std::string> *addresses) {
    wire::Reader r(body.data(), body.size());
    uint32_t count = 0;
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&count));
    if (count != expected) return Status(PMIX_ERR_BAD_PARAM, "rendezvous: unexpected answer from the srun agent");
    if (count > r.remaining() / 4) return Status(PMIX_ERR_UNPACK_FAILURE, "rendezvous: table shorter than its count");
    addresses->clear();
    addresses->reserve(count);
    for (uint32_t i = 0; i < count; ++i) {
        std::string a;
        PMIXCPP_RETURN_IF_ERROR(r.get_string(&a, kMaxAddress));
        addresses->push_back(std::move(a));
    }
    return r.expect_end();
}

}  // namespace pmixcpp::agent
