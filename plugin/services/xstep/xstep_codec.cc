#include "xstep_codec.h"

#include "log.h"
#include "wire/codec.h"
#include "wire/frame.h"

namespace pmixcpp::xstep {

const char *to_string(op o) {
    switch (o) {
    case op::get: return "get";
    case op::event: return "event";
    case op::jobctl: return "job control";
    case op::inbox: return "inbox";
    case op::answer: return "answer";
    }
    return "unknown";
}

// --- messages -----------------------------------------------------------------------------

Result<std::vector<uint8_t>> encode(const message &m) {
    wire::Writer w;
    w.put_u32(kMagic);
    w.put_u8(static_cast<uint8_t>(m.what));
    switch (m.what) {
    case op::get:
        PMIXCPP_RETURN_IF_ERROR(w.put_string(m.nspace));
        w.put_u32(m.rank);
        PMIXCPP_RETURN_IF_ERROR(w.put_string(m.key));
        PMIXCPP_RETURN_IF_ERROR(w.put_string(m.from_nspace));
        PMIXCPP_RETURN_IF_ERROR(w.put_string(m.from_node));
        w.put_u32(m.timeout_ms);
        break;
    case op::event:
        w.put_u32(static_cast<uint32_t>(m.nspaces.size()));
        for (const auto &n : m.nspaces) PMIXCPP_RETURN_IF_ERROR(w.put_string(n));
        PMIXCPP_RETURN_IF_ERROR(w.put_bytes(m.payload.data(), m.payload.size()));
        break;
    case op::inbox: w.put_u32(m.node); break;
    case op::jobctl:
        PMIXCPP_RETURN_IF_ERROR(w.put_string(m.nspace));
        w.put_i32(m.signal);
        w.put_u8(m.terminate ? 1 : 0);
        w.put_u32(static_cast<uint32_t>(m.ranks.size()));
        for (uint32_t r : m.ranks) w.put_u32(r);
        break;
    case op::answer:
        w.put_u64(m.id);
        w.put_i32(m.status);
        PMIXCPP_RETURN_IF_ERROR(w.put_string(m.text));
        PMIXCPP_RETURN_IF_ERROR(w.put_bytes(m.payload.data(), m.payload.size()));
        break;
    default: return Status(PMIX_ERR_BAD_PARAM, "cross-step message: unknown operation");
    }
    return w.data();
}

bool is_xstep_body(std::span<const uint8_t> body) {
    wire::Reader r(body.data(), body.size());
    uint32_t magic = 0;
    return r.get_u32(&magic).ok() && magic == kMagic;
}

Status decode(std::span<const uint8_t> body, message *m) {
    wire::Reader r(body.data(), body.size());
    uint32_t magic = 0;
    uint8_t what = 0;
    std::span<const uint8_t> bytes;
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&magic));
    if (magic != kMagic) return Status(PMIX_ERR_UNPACK_FAILURE, "not a cross-step message");
    PMIXCPP_RETURN_IF_ERROR(r.get_u8(&what));
    m->what = static_cast<op>(what);
    switch (m->what) {
    case op::get:
        PMIXCPP_RETURN_IF_ERROR(r.get_string(&m->nspace, PMIX_MAX_NSLEN));
        PMIXCPP_RETURN_IF_ERROR(r.get_u32(&m->rank));
        PMIXCPP_RETURN_IF_ERROR(r.get_string(&m->key, PMIX_MAX_KEYLEN));
        PMIXCPP_RETURN_IF_ERROR(r.get_string(&m->from_nspace, PMIX_MAX_NSLEN));
        PMIXCPP_RETURN_IF_ERROR(r.get_string(&m->from_node, 4096));
        PMIXCPP_RETURN_IF_ERROR(r.get_u32(&m->timeout_ms));
        if (m->nspace.empty()) return Status(PMIX_ERR_BAD_PARAM, "cross-step get without a namespace");
        break;
    case op::event: {
        uint32_t n = 0;
        PMIXCPP_RETURN_IF_ERROR(r.get_u32(&n));
        PMIXCPP_RETURN_IF_ERROR(r.take_count(n, 4, sizeof(std::string), "cross-step event namespaces", 1024));
        m->nspaces.resize(n);
        for (auto &s : m->nspaces) PMIXCPP_RETURN_IF_ERROR(r.get_string(&s, PMIX_MAX_NSLEN));
        PMIXCPP_RETURN_IF_ERROR(r.get_bytes(&bytes));
        m->payload.assign(bytes.begin(), bytes.end());
        break;
    }
    case op::inbox: PMIXCPP_RETURN_IF_ERROR(r.get_u32(&m->node)); break;
    case op::jobctl: {
        uint8_t term = 0;
        uint32_t n = 0;
        PMIXCPP_RETURN_IF_ERROR(r.get_string(&m->nspace, PMIX_MAX_NSLEN));
        PMIXCPP_RETURN_IF_ERROR(r.get_i32(&m->signal));
        PMIXCPP_RETURN_IF_ERROR(r.get_u8(&term));
        PMIXCPP_RETURN_IF_ERROR(r.get_u32(&n));
        if (m->nspace.empty()) return Status(PMIX_ERR_BAD_PARAM, "cross-step job control without a namespace");
        if (m->signal <= 0 || m->signal >= 65) return Status(PMIX_ERR_BAD_PARAM, "cross-step job control: bad signal");
        if (term > 1) return Status(PMIX_ERR_BAD_PARAM, "cross-step job control: bad terminate flag");
        PMIXCPP_RETURN_IF_ERROR(r.take_count(n, 4, sizeof(uint32_t), "cross-step job control ranks"));
        m->terminate = term == 1;
        m->ranks.resize(n);
        for (auto &x : m->ranks) PMIXCPP_RETURN_IF_ERROR(r.get_u32(&x));
        break;
    }
    case op::answer:
        PMIXCPP_RETURN_IF_ERROR(r.get_u64(&m->id));
        PMIXCPP_RETURN_IF_ERROR(r.get_i32(&m->status));
        PMIXCPP_RETURN_IF_ERROR(r.get_string(&m->text, 64 * 1024));
        PMIXCPP_RETURN_IF_ERROR(r.get_bytes(&bytes));
        m->payload.assign(bytes.begin(), bytes.end());
        break;
    default: return Status(PMIX_ERR_BAD_PARAM, "cross-step message: unknown operation " + std::to_string(what));
    }
    return r.expect_end();
}

Result<std::vector<uint8_t>> encode_items(const std::vector<inbox_item> &items) {
    wire::Writer w;
    w.put_u32(static_cast<uint32_t>(items.size()));
    for (const auto &i : items) {
        w.put_u64(i.id);
        PMIXCPP_RETURN_IF_ERROR(w.put_bytes(i.body.data(), i.body.size()));
    }
    return w.data();
}

Status decode_items(std::span<const uint8_t> body, std::vector<inbox_item> *items) {
    wire::Reader r(body.data(), body.size());
    uint32_t n = 0;
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&n));
    // an item takes at least 12 bytes (id + body length)
    PMIXCPP_RETURN_IF_ERROR(r.take_count(n, 12, sizeof(inbox_item), "inbox items", kMaxQueued));
    items->resize(n);
    for (auto &i : *items) {
        std::span<const uint8_t> b;
        PMIXCPP_RETURN_IF_ERROR(r.get_u64(&i.id));
        PMIXCPP_RETURN_IF_ERROR(r.get_bytes(&b));
        i.body.assign(b.begin(), b.end());
    }
    return r.expect_end();
}

}  // namespace pmixcpp::xstep
