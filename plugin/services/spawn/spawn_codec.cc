#include "spawn_codec.h"

#include <algorithm>

#include "log.h"
#include "value.h"

namespace pmixcpp::spawn {

// ------------------------------------------------------------------------------------------
// Messages: u32 magic, str parent nspace, u32 parent rank, spawn_request | i32 status, str message, str nspace

Result<std::vector<uint8_t>> encode_request(const agent_spawn_request &r) {
    wire::Writer w;
    w.put_u32(kSpawnMagic);
    PMIXCPP_RETURN_IF_ERROR(w.put_string(r.parent_nspace));
    w.put_u32(r.parent_rank);
    PMIXCPP_RETURN_IF_ERROR(wire::encode(w, r.request));
    return w.data();
}

Result<std::vector<uint8_t>> encode_watch(const std::string &child_nspace) {
    wire::Writer w;
    w.put_u32(kWatchMagic);
    PMIXCPP_RETURN_IF_ERROR(w.put_string(child_nspace));
    return w.data();
}

bool is_watch_body(std::span<const uint8_t> body) {
    wire::Reader r(body.data(), body.size());
    uint32_t magic = 0;
    return r.get_u32(&magic).ok() && magic == kWatchMagic;
}

bool is_spawn_body(std::span<const uint8_t> body) {
    wire::Reader r(body.data(), body.size());
    uint32_t magic = 0;
    return r.get_u32(&magic).ok() && magic == kSpawnMagic;
}

Status decode_request(std::span<const uint8_t> body, agent_spawn_request *out) {
    wire::Reader r(body.data(), body.size());
    uint32_t magic = 0;
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&magic));
    if (magic != kSpawnMagic) return Status(PMIX_ERR_UNPACK_FAILURE, "not a spawn request");
    PMIXCPP_RETURN_IF_ERROR(r.get_string(&out->parent_nspace, PMIX_MAX_NSLEN));
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&out->parent_rank));
    PMIXCPP_RETURN_IF_ERROR(wire::decode(r, &out->request));
    return r.expect_end();
}

agent::reply to_reply(const agent_spawn_reply &r) {
    return agent::reply{r.status, r.message, std::vector<uint8_t>(r.nspace.begin(), r.nspace.end())};
}

Status from_reply(const agent::reply &in, agent_spawn_reply *out) {
    if (in.body.size() > PMIX_MAX_NSLEN || std::find(in.body.begin(), in.body.end(), 0) != in.body.end())
        return Status(PMIX_ERR_BAD_PARAM, "spawn reply: bad namespace");
    out->status = in.status;
    out->message = in.message;
    out->nspace.assign(in.body.begin(), in.body.end());
    return Status::success();
}

}  // namespace pmixcpp::spawn
