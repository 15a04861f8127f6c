// Node-to-node message bodies; the formats are in node_messages.h next to the structs.
#include "wire/node_messages.h"

namespace pmixcpp::wire {

namespace {

Status bad(const std::string &what) { return Status(PMIX_ERR_UNPACK_FAILURE, what); }

constexpr size_t kMaxReason = 4096;
constexpr size_t kMaxMessage = 1u << 16;
constexpr size_t kMaxNodeName = 4096;

Status decode_rank_data(Reader &r, uint32_t ntasks, std::vector<rank_data_entry> *out) {
    uint32_t n = 0;
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&n), "rank data");
    // an entry takes at least 8 bytes (rank + info count)
    PMIXCPP_RETURN_IF_ERROR(r.take_count(n, 8, sizeof(rank_data_entry), "rank data", ntasks));
    std::vector<rank_data_entry> entries(n);
    for (auto &e : entries) {
        PMIXCPP_RETURN_IF_ERROR(r.get_u32(&e.rank), "rank data");
        if (e.rank >= ntasks) return bad("rank data: rank " + std::to_string(e.rank) + " beyond the step's " +
                                         std::to_string(ntasks) + " tasks");
        PMIXCPP_RETURN_IF_ERROR(decode_info_array(r, &e.infos),
                                "rank data of rank " + std::to_string(e.rank));
    }
    *out = std::move(entries);
    return Status::success();
}

}  // namespace

Status encode_rank_data(Writer &w, const std::vector<rank_data_entry> &entries) {
    if (entries.size() > kMaxElementCount) return Status(PMIX_ERR_PACK_FAILURE, "rank data: too many ranks");
    w.put_u32(static_cast<uint32_t>(entries.size()));
    for (const auto &e : entries) {
        w.put_u32(e.rank);
        PMIXCPP_RETURN_IF_ERROR(encode_info_array(w, e.infos.data(), e.infos.size()));
    }
    return Status::success();
}

Status decode_rank_data(std::span<const uint8_t> bytes, uint32_t ntasks, std::vector<rank_data_entry> *out) {
    Reader r(bytes);
    PMIXCPP_RETURN_IF_ERROR(decode_rank_data(r, ntasks, out));
    return r.expect_end().with_context("rank data");
}

// --- direct modex ----------------------------------------------------------------------------

Status encode(Writer &w, const dmodex_request &m) {
    w.put_u32(m.id);
    w.put_u32(m.target);
    PMIXCPP_RETURN_IF_ERROR(w.put_string(m.key));
    if (m.more.empty()) return Status::success();
    if (m.more.size() >= kMaxDmodexBatch) return Status(PMIX_ERR_PACK_FAILURE, "dmodex request: batch too large");
    w.put_u32(static_cast<uint32_t>(m.more.size()));
    for (const auto &it : m.more) {
        w.put_u32(it.target);
        PMIXCPP_RETURN_IF_ERROR(w.put_string(it.key));
    }
    return Status::success();
}

Status decode(std::span<const uint8_t> body, dmodex_request *m) {
    Reader r(body);
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&m->id));
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&m->target));
    PMIXCPP_RETURN_IF_ERROR(r.get_string(&m->key, PMIX_MAX_KEYLEN), "dmodex key");
    m->more.clear();
    if (r.at_end()) return Status::success();
    uint32_t n = 0;
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&n), "dmodex batch");
    if (n == 0) return bad("dmodex batch of no more ranks");
    // an item takes at least 8 bytes (rank + key length)
    PMIXCPP_RETURN_IF_ERROR(r.take_count(n, 8, sizeof(dmodex_item), "dmodex batch", kMaxDmodexBatch - 1));
    m->more.resize(n);
    for (auto &it : m->more) {
        PMIXCPP_RETURN_IF_ERROR(r.get_u32(&it.target), "dmodex batch");
        PMIXCPP_RETURN_IF_ERROR(r.get_string(&it.key, PMIX_MAX_KEYLEN), "dmodex batch key");
    }
    return r.expect_end();
}

Status encode_head(Writer &w, const dmodex_reply &m) {
    w.put_u32(m.id);
    w.put_u32(m.target);
    w.put_i32(m.status);
    return w.put_string(m.message.substr(0, kMaxMessage));
}

Status decode(std::span<const uint8_t> body, uint32_t ntasks, dmodex_reply *m) {
    Reader r(body);
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&m->id));
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&m->target));
    PMIXCPP_RETURN_IF_ERROR(r.get_i32(&m->status));
    PMIXCPP_RETURN_IF_ERROR(r.get_string(&m->message, kMaxMessage), "dmodex reply message");
    m->data.clear();
    if (m->status == PMIX_SUCCESS && !r.at_end())
        PMIXCPP_RETURN_IF_ERROR(decode_rank_data(r, ntasks, &m->data), "dmodex reply");
    return r.expect_end();
}

// --- lost nodes ------------------------------------------------------------------------------

namespace {
Status check_node_down(const node_down_message &m, uint32_t nodes) {
    if (m.node >= nodes || m.origin >= nodes)
        return bad("node-down: node " + std::to_string(m.node) + " noticed by node " + std::to_string(m.origin) +
                   " in a step of " + std::to_string(nodes) + " nodes");
    if (m.origin == m.node) return bad("node-down: node " + std::to_string(m.node) + " noticed its own loss");
    if (m.width < kMinNodeDownWidth || m.width > kMaxNodeDownWidth)
        return bad("node-down: tree width " + std::to_string(m.width) + " outside " +
                   std::to_string(kMinNodeDownWidth) + ".." + std::to_string(kMaxNodeDownWidth));
    return Status::success();
}
}  // namespace

Status encode(Writer &w, const node_down_message &m) {
    PMIXCPP_RETURN_IF_ERROR(check_node_down(m, UINT32_MAX));
    w.put_u32(m.node);
    w.put_u32(m.origin);
    w.put_u8(uint8_t(m.width));
    return w.put_string(m.why.substr(0, kMaxReason));
}

Status decode(std::span<const uint8_t> body, uint32_t nodes, node_down_message *m) {
    Reader r(body);
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&m->node));
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&m->origin));
    uint8_t width = 0;
    PMIXCPP_RETURN_IF_ERROR(r.get_u8(&width));
    m->width = width;
    PMIXCPP_RETURN_IF_ERROR(check_node_down(*m, nodes));
    PMIXCPP_RETURN_IF_ERROR(r.get_string(&m->why, kMaxReason), "node-down reason");
    return r.expect_end();
}

Status encode(Writer &w, const spawn_psets_message &m) {
    if (m.child.empty() || m.child.size() > PMIX_MAX_NSLEN) return bad("spawn sets: namespace empty or too long");
    PMIXCPP_RETURN_IF_ERROR(w.put_string(m.child));
    w.put_u32(m.child_size);
    return Status::success();
}

Status decode(std::span<const uint8_t> body, uint32_t max_size, spawn_psets_message *m) {
    Reader r(body);
    PMIXCPP_RETURN_IF_ERROR(r.get_string(&m->child, PMIX_MAX_NSLEN), "spawn sets namespace");
    if (m->child.empty()) return bad("spawn sets: empty namespace");
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&m->child_size));
    if (m->child_size > max_size) return bad("spawn sets: " + std::to_string(m->child_size) + " children");
    return r.expect_end();
}

Status encode(Writer &w, probe_kind m) {
    w.put_u8(static_cast<uint8_t>(m));
    return Status::success();
}

Status decode(std::span<const uint8_t> body, probe_kind *m) {
    if (body.size() != 1 || (body[0] != 1 && body[0] != 2)) return bad("probe: not one byte 1 or 2");
    *m = static_cast<probe_kind>(body[0]);
    return Status::success();
}

Status encode(Writer &w, link_kind m) {
    w.put_u8(static_cast<uint8_t>(m));
    return Status::success();
}

Status decode(std::span<const uint8_t> body, link_kind *m) {
    if (body.size() != 1 || body[0] < 1 || body[0] > 3) return bad("link: not one byte 1, 2 or 3");
    *m = static_cast<link_kind>(body[0]);
    return Status::success();
}

Status encode(Writer &w, const node_query_message &m) {
    w.put_u8(m.kind);
    w.put_u32(m.node);
    if (m.kind == 2) w.put_u8(m.said_goodbye ? 1 : 0);
    return Status::success();
}

Status decode(std::span<const uint8_t> body, node_query_message *m) {
    Reader r(body);
    uint8_t yes = 0;
    PMIXCPP_RETURN_IF_ERROR(r.get_u8(&m->kind));
    if (m->kind != 1 && m->kind != 2) return bad("node query of kind " + std::to_string(m->kind));
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&m->node));
    if (m->kind == 2) {
        PMIXCPP_RETURN_IF_ERROR(r.get_u8(&yes));
        if (yes > 1) return bad("node query answer " + std::to_string(yes));
    }
    m->said_goodbye = yes == 1;
    return r.expect_end();
}

// --- publish / lookup forwarded to node 0 ----------------------------------------------------

Status encode(Writer &w, const pubsub_forward &m) {
    w.put_u8(m.type);
    w.put_u64(m.conn);
    w.put_u32(m.request_id);
    w.put_u32(m.rank);
    return w.put_bytes(m.payload.data(), m.payload.size());
}

Status decode(std::span<const uint8_t> body, pubsub_forward *m) {
    Reader r(body);
    std::span<const uint8_t> payload;
    PMIXCPP_RETURN_IF_ERROR(r.get_u8(&m->type));
    PMIXCPP_RETURN_IF_ERROR(r.get_u64(&m->conn));
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&m->request_id));
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&m->rank));
    PMIXCPP_RETURN_IF_ERROR(r.get_bytes(&payload), "pubsub request");
    PMIXCPP_RETURN_IF_ERROR(r.expect_end());
    m->payload.assign(payload.begin(), payload.end());
    return Status::success();
}

Status encode(Writer &w, const pubsub_answer &m) {
    w.put_u64(m.conn);
    w.put_u32(m.request_id);
    w.put_i32(m.status);
    PMIXCPP_RETURN_IF_ERROR(w.put_string(m.message.substr(0, kMaxMessage)));
    return w.put_bytes(m.body.data(), m.body.size());
}

Status decode(std::span<const uint8_t> body, pubsub_answer *m) {
    Reader r(body);
    std::span<const uint8_t> bytes;
    PMIXCPP_RETURN_IF_ERROR(r.get_u64(&m->conn));
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&m->request_id));
    PMIXCPP_RETURN_IF_ERROR(r.get_i32(&m->status));
    PMIXCPP_RETURN_IF_ERROR(r.get_string(&m->message, kMaxMessage), "pubsub reply message");
    PMIXCPP_RETURN_IF_ERROR(r.get_bytes(&bytes), "pubsub reply");
    PMIXCPP_RETURN_IF_ERROR(r.expect_end());
    m->body.assign(bytes.begin(), bytes.end());
    return Status::success();
}

// --- job control -----------------------------------------------------------------------------

Status encode(Writer &w, const job_control_forward &m) {
    w.put_i32(m.signal);
    w.put_u8(static_cast<uint8_t>((m.terminate ? 1 : 0) | (m.checkpoint ? 2 : 0)));
    w.put_u32(static_cast<uint32_t>(m.ranks.size()));
    for (uint32_t r : m.ranks) w.put_u32(r);
    return Status::success();
}

Status decode(std::span<const uint8_t> body, uint32_t ntasks, job_control_forward *m) {
    Reader r(body);
    uint8_t flags = 0;
    uint32_t n = 0;
    PMIXCPP_RETURN_IF_ERROR(r.get_i32(&m->signal));
    PMIXCPP_RETURN_IF_ERROR(r.get_u8(&flags));
    if (flags > 2) return bad("job control: bad flags " + std::to_string(flags));
    m->terminate = (flags & 1) != 0;
    m->checkpoint = (flags & 2) != 0;
    if (m->checkpoint ? m->signal != 0 : (m->signal <= 0 || m->signal >= 65))
        return bad("job control: bad signal " + std::to_string(m->signal));
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&n));
    PMIXCPP_RETURN_IF_ERROR(r.take_count(n, 4, sizeof(uint32_t), "job control ranks", ntasks));
    std::vector<uint32_t> ranks(n);
    for (auto &rank : ranks) {
        PMIXCPP_RETURN_IF_ERROR(r.get_u32(&rank));
        if (rank >= ntasks) return bad("job control: rank " + std::to_string(rank) + " beyond the step");
    }
    PMIXCPP_RETURN_IF_ERROR(r.expect_end());
    m->ranks = std::move(ranks);
    return Status::success();
}

// --- process table ---------------------------------------------------------------------------

Status encode(Writer &w, const proc_table_request &m) {
    w.put_u64(m.id);
    return Status::success();
}

Status decode(std::span<const uint8_t> body, proc_table_request *m) {
    Reader r(body);
    PMIXCPP_RETURN_IF_ERROR(r.get_u64(&m->id));
    if (m->id == 0) return bad("process table request: id 0");
    return r.expect_end();
}

Status encode(Writer &w, const proc_table_reply &m) {
    w.put_u64(m.id);
    w.put_u32(static_cast<uint32_t>(m.rows.size()));
    for (const auto &p : m.rows) {
        w.put_u32(p.rank);
        w.put_i32(p.pid);
        w.put_u8(p.state);
        w.put_i32(p.exit_code);
        PMIXCPP_RETURN_IF_ERROR(w.put_string(p.executable.size() <= kMaxExecutableLen ? p.executable : std::string()));
    }
    return Status::success();
}

Status decode(std::span<const uint8_t> body, uint32_t max_rows, proc_table_reply *m) {
    Reader r(body);
    uint32_t n = 0;
    PMIXCPP_RETURN_IF_ERROR(r.get_u64(&m->id));
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&n));
    // 17 bytes at least per row (an empty executable)
    PMIXCPP_RETURN_IF_ERROR(r.take_count(n, 17, sizeof(proc_row), "process table rows", max_rows));
    std::vector<proc_row> rows(n);
    for (auto &p : rows) {
        PMIXCPP_RETURN_IF_ERROR(r.get_u32(&p.rank));
        PMIXCPP_RETURN_IF_ERROR(r.get_i32(&p.pid));
        PMIXCPP_RETURN_IF_ERROR(r.get_u8(&p.state));
        PMIXCPP_RETURN_IF_ERROR(r.get_i32(&p.exit_code));
        PMIXCPP_RETURN_IF_ERROR(r.get_string(&p.executable, kMaxExecutableLen));
        if (p.pid < 0) return bad("process table: negative pid");
    }
    PMIXCPP_RETURN_IF_ERROR(r.expect_end());
    m->rows = std::move(rows);
    return Status::success();
}

// --- connect contribution --------------------------------------------------------------------

Status encode(Writer &w, const connect_contribution &m) {
    PMIXCPP_RETURN_IF_ERROR(w.put_string(m.node));
    PMIXCPP_RETURN_IF_ERROR(encode_info_array(w, m.job.data(), m.job.size()));
    if (m.ranks.size() > kMaxElementCount) return Status(PMIX_ERR_PACK_FAILURE, "connect contribution: too many ranks");
    w.put_u32(static_cast<uint32_t>(m.ranks.size()));
    for (const auto &e : m.ranks) {
        w.put_u32(e.rank);
        PMIXCPP_RETURN_IF_ERROR(encode_info_array(w, e.same_node.data(), e.same_node.size()));
        PMIXCPP_RETURN_IF_ERROR(encode_info_array(w, e.other_node.data(), e.other_node.size()));
    }
    return Status::success();
}

Status decode(std::span<const uint8_t> body, connect_contribution *m) {
    Reader r(body);
    uint32_t n = 0;
    PMIXCPP_RETURN_IF_ERROR(r.get_string(&m->node, kMaxNodeName), "connect contribution node");
    PMIXCPP_RETURN_IF_ERROR(decode_info_array(r, &m->job), "connect contribution job data");
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&n));
    // a rank takes at least 12 bytes (rank + two info counts)
    PMIXCPP_RETURN_IF_ERROR(r.take_count(n, 12, sizeof(connect_rank_data), "connect contribution ranks"));
    std::vector<connect_rank_data> ranks(n);
    for (auto &e : ranks) {
        PMIXCPP_RETURN_IF_ERROR(r.get_u32(&e.rank));
        if (e.rank == PMIX_RANK_WILDCARD || e.rank == PMIX_RANK_UNDEF)
            return bad("connect contribution names rank " + std::to_string(e.rank));
        PMIXCPP_RETURN_IF_ERROR(decode_info_array(r, &e.same_node), "connect contribution");
        PMIXCPP_RETURN_IF_ERROR(decode_info_array(r, &e.other_node), "connect contribution");
    }
    PMIXCPP_RETURN_IF_ERROR(r.expect_end());
    m->ranks = std::move(ranks);
    return Status::success();
}

}  // namespace pmixcpp::wire
