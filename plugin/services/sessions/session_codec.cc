#include "session_codec.h"

#include "log.h"
#include "value.h"
#include "wire/codec.h"

namespace pmixcpp::session {

Result<std::vector<uint8_t>> encode_request(const agent_request &r) {
    wire::Writer w;
    w.put_u32(kSessionMagic);
    w.put_u8(r.type);
    PMIXCPP_RETURN_IF_ERROR(w.put_string(r.nspace));
    w.put_u32(r.rank);
    PMIXCPP_RETURN_IF_ERROR(w.put_bytes(r.payload.data(), r.payload.size()));
    return w.data();
}
bool is_session_body(std::span<const uint8_t> body) {
    wire::Reader r(body.data(), body.size());
    uint32_t magic = 0;
    return r.get_u32(&magic).ok() && magic == kSessionMagic;
}
Status decode_request(std::span<const uint8_t> body, agent_request *out) {
    wire::Reader r(body.data(), body.size());
    uint32_t magic = 0;
    std::span<const uint8_t> payload;
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&magic));
    if (magic != kSessionMagic) return Status(PMIX_ERR_UNPACK_FAILURE, "not a session request");
    PMIXCPP_RETURN_IF_ERROR(r.get_u8(&out->type));
    PMIXCPP_RETURN_IF_ERROR(r.get_string(&out->nspace, PMIX_MAX_NSLEN));
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&out->rank));
    PMIXCPP_RETURN_IF_ERROR(r.get_bytes(&payload));
    out->payload.assign(payload.begin(), payload.end());
    return r.expect_end();
}
// --- rendezvous messages ------------------------------------------------------------------

Result<std::vector<uint8_t>> encode(const rendezvous_request &r) {
    wire::Writer w;
    w.put_u32(kConnectMagic);
    PMIXCPP_RETURN_IF_ERROR(w.put_string(r.key));
    PMIXCPP_RETURN_IF_ERROR(w.put_string(r.nspace));
    w.put_u32(r.node);
    w.put_u32(r.nodes);
    w.put_u32(static_cast<uint32_t>(r.nspaces.size()));
    for (const auto &n : r.nspaces) PMIXCPP_RETURN_IF_ERROR(w.put_string(n));
    w.put_u32(r.timeout_ms);
    PMIXCPP_RETURN_IF_ERROR(w.put_bytes(r.contribution.data(), r.contribution.size()));
    return w.data();
}

bool is_rendezvous_body(std::span<const uint8_t> body) {
    wire::Reader r(body.data(), body.size());
    uint32_t magic = 0;
    return r.get_u32(&magic).ok() && magic == kConnectMagic;
}

Status decode(std::span<const uint8_t> body, rendezvous_request *out) {
    wire::Reader r(body.data(), body.size());
    uint32_t magic = 0, n = 0;
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&magic));
    if (magic != kConnectMagic) return Status(PMIX_ERR_UNPACK_FAILURE, "not a connect rendezvous request");
    PMIXCPP_RETURN_IF_ERROR(r.get_string(&out->key, 256));
    PMIXCPP_RETURN_IF_ERROR(r.get_string(&out->nspace, PMIX_MAX_NSLEN));
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&out->node));
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&out->nodes));
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&n));
    if (n == 0) return Status(PMIX_ERR_BAD_PARAM, "connect rendezvous: no namespace");
    PMIXCPP_RETURN_IF_ERROR(r.take_count(n, 4, sizeof(std::string), "connect rendezvous namespaces", 1024));
    out->nspaces.resize(n);
    for (auto &s : out->nspaces) PMIXCPP_RETURN_IF_ERROR(r.get_string(&s, PMIX_MAX_NSLEN));
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&out->timeout_ms));
    std::span<const uint8_t> c;
    PMIXCPP_RETURN_IF_ERROR(r.get_bytes(&c));
    out->contribution.assign(c.begin(), c.end());
    if (out->nodes == 0 || out->node >= 65536 || out->nodes > 65536)
        return Status(PMIX_ERR_BAD_PARAM, "connect rendezvous: bad node numbers");
    return r.expect_end();
}

Result<std::vector<uint8_t>> encode_pieces(const std::vector<rendezvous_piece> &p) {
    wire::Writer w;
    w.put_u32(static_cast<uint32_t>(p.size()));
    for (const auto &x : p) {
        PMIXCPP_RETURN_IF_ERROR(w.put_string(x.nspace));
        w.put_u32(x.node);
        PMIXCPP_RETURN_IF_ERROR(w.put_bytes(x.contribution.data(), x.contribution.size()));
    }
    return w.data();
}

Status decode_pieces(std::span<const uint8_t> body, std::vector<rendezvous_piece> *out) {
    wire::Reader r(body.data(), body.size());
    uint32_t n = 0;
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&n));
    // a piece takes at least 12 bytes (namespace length, node, contribution length)
    PMIXCPP_RETURN_IF_ERROR(r.take_count(n, 12, sizeof(rendezvous_piece), "connect pieces"));
    out->resize(n);
    for (auto &x : *out) {
        std::span<const uint8_t> c;
        PMIXCPP_RETURN_IF_ERROR(r.get_string(&x.nspace, PMIX_MAX_NSLEN));
        PMIXCPP_RETURN_IF_ERROR(r.get_u32(&x.node));
        PMIXCPP_RETURN_IF_ERROR(r.get_bytes(&c));
        x.contribution.assign(c.begin(), c.end());
    }
    return r.expect_end();
}

}  // namespace pmixcpp::session
