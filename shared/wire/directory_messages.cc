// The directory route's messages; the format is in directory_messages.h.
#include "wire/directory_messages.h"

#include "wire/codec.h"

namespace pmixcpp::wire {

namespace {
Status bad(const std::string &what) { return Status(PMIX_ERR_UNPACK_FAILURE, "directory message: " + what); }
}  // namespace

const char *to_string(directory_kind k) {
    switch (k) {
    case directory_kind::tell: return "tell";
    case directory_kind::ask: return "ask";
    }
    return "?";
}

Result<std::vector<uint8_t>> encode_directory_message(const directory_message &m) {
    if (m.kind != directory_kind::tell && m.kind != directory_kind::ask)
        return Status(PMIX_ERR_BAD_PARAM, "directory message of unknown kind");
    if (m.record.empty() || m.record.size() > kMaxDirectoryRecord)
        return Status(PMIX_ERR_BAD_PARAM, "directory message: record of " + std::to_string(m.record.size()) + " bytes");
    if (m.from_node >= m.nnodes) return Status(PMIX_ERR_BAD_PARAM, "directory message: sender beyond the step");
    Writer w;
    w.reserve(18 + m.record.size());
    w.put_u32(kDirectoryMagic);
    w.put_u8(kDirectoryVersion);
    w.put_u8(static_cast<uint8_t>(m.kind));
    w.put_u32(m.from_node);
    w.put_u32(m.nnodes);
    PMIXCPP_RETURN_IF_ERROR(w.put_string(m.record));
    return w.take();
}

Status decode_directory_message(std::span<const uint8_t> bytes, directory_message *out) {
    Reader r(bytes);
    uint32_t magic = 0;
    uint8_t version = 0, kind = 0;
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&magic), "directory message");
    if (magic != kDirectoryMagic) return bad("bad magic");
    PMIXCPP_RETURN_IF_ERROR(r.get_u8(&version), "directory message");
    if (version != kDirectoryVersion) return bad("version " + std::to_string(version));
    PMIXCPP_RETURN_IF_ERROR(r.get_u8(&kind), "directory message");
    if (kind != static_cast<uint8_t>(directory_kind::tell) && kind != static_cast<uint8_t>(directory_kind::ask))
        return bad("kind " + std::to_string(kind));
    directory_message m;
    m.kind = static_cast<directory_kind>(kind);
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&m.from_node), "directory message");
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&m.nnodes), "directory message");
    if (m.from_node >= m.nnodes) return bad("sender " + std::to_string(m.from_node) + " of " + std::to_string(m.nnodes) + " nodes");
    PMIXCPP_RETURN_IF_ERROR(r.get_string(&m.record, kMaxDirectoryRecord), "directory message record");
    if (m.record.empty()) return bad("empty record");
    PMIXCPP_RETURN_IF_ERROR(r.expect_end(), "directory message");
    *out = std::move(m);
    return Status::success();
}

}  // namespace pmixcpp::wire
