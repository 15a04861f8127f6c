#include "proc_table.h"

#include <unistd.h>

#include <algorithm>
#include <climits>

#include "log.h"

namespace pmixcpp::server {

std::string executable_of(pid_t pid) {
    if (pid <= 0) return {};
    char buf[PATH_MAX];
    std::string link = "/proc/" + std::to_string(pid) + "/exe";
    ssize_t n = readlink(link.c_str(), buf, sizeof(buf) - 1);
    if (n <= 0) return {};
    return std::string(buf, static_cast<size_t>(n));
}

std::vector<uint8_t> encode_proc_request(uint64_t id) {
    wire::Writer w;
    (void)wire::encode(w, wire::proc_table_request{id});
    return w.take();
}

Status decode_proc_request(std::span<const uint8_t> body, uint64_t *id) {
    wire::proc_table_request m;
    PMIXCPP_RETURN_IF_ERROR(wire::decode(body, &m));
    *id = m.id;
    return Status::success();
}

std::vector<uint8_t> encode_proc_reply(uint64_t id, const std::vector<proc_row> &rows) {
    wire::Writer w;
    wire::proc_table_reply m;
    m.id = id;
    m.rows = rows;
    (void)wire::encode(w, m);
    return w.take();
}

Status decode_proc_reply(std::span<const uint8_t> body, const std::vector<uint32_t> &allowed, uint64_t *id,
                         std::vector<proc_row> *rows) {
    wire::proc_table_reply m;
    PMIXCPP_RETURN_IF_ERROR(wire::decode(body, static_cast<uint32_t>(allowed.size()), &m));
    std::vector<bool> seen(allowed.size(), false);
    for (const auto &p : m.rows) {
        auto it = std::find(allowed.begin(), allowed.end(), p.rank);
        if (it == allowed.end())
            return Status(PMIX_ERR_BAD_PARAM, "rank " + std::to_string(p.rank) + " is not a rank of that node");
        size_t k = static_cast<size_t>(it - allowed.begin());
        if (seen[k]) return Status(PMIX_ERR_BAD_PARAM, "rank " + std::to_string(p.rank) + " twice");
        seen[k] = true;
    }
    *id = m.id;
    *rows = std::move(m.rows);
    return Status::success();
}

proc_table_engine::proc_table_engine(uint32_t self, std::vector<std::vector<uint32_t>> node_ranks,
                                     std::vector<std::string> node_names, proc_table_ops ops)
    : _self(self), _node_ranks(std::move(node_ranks)), _node_names(std::move(node_names)), _ops(std::move(ops)) {
    for (const auto &r : _node_ranks)
        for (uint32_t x : r) _ntasks = std::max(_ntasks, x + 1);
}

std::string proc_table_engine::name(uint32_t node) const {
    return "node " + (node < _node_names.size() ? _node_names[node] : std::to_string(node));
}

proc_row proc_table_engine::absent_row(uint32_t rank, uint8_t state) const {
    proc_row p;
    p.rank = rank;
    p.state = state;
    return p;
}

void proc_table_engine::gather(std::chrono::milliseconds timeout, done_fn done, clock::time_point now) {
    if (!_pending.empty()) {
        // Joins the gather under way; this node's rows are taken again, as they are now: a rank
        // that connected (or exec'd) since the gather began is shown as it is to the asker.
        pending_gather &g = _pending.rbegin()->second;
        g.done.push_back(std::move(done));
        if (_ops.local_rows) g.have[_self] = _ops.local_rows();
        return;
    }
    const uint64_t id = _next_id++;
    pending_gather g;
    g.deadline = now + timeout;
    g.timeout_ms = timeout.count();
    g.done.push_back(std::move(done));
    g.have[_self] = _ops.local_rows ? _ops.local_rows() : std::vector<proc_row>();
    std::vector<uint32_t> ask;
    for (uint32_t n = 0; n < _node_ranks.size(); ++n) {
        if (n == _self || _node_ranks[n].empty()) continue;
        if (auto f = _final.find(n); f != _final.end()) {
            g.have[n] = f->second;
        } else if (_ops.lost && _ops.lost(n)) {
            g.silent += (g.silent.empty() ? "" : "; ") + name(n) + " is lost";
            for (uint32_t r : _node_ranks[n]) g.have[n].push_back(absent_row(r, PMIX_PROC_STATE_COMM_FAILED));
        } else if (_ops.gone && _ops.gone(n)) {
            g.silent += (g.silent.empty() ? "" : "; ") + name(n) +
                        " has ended without its final rows";
            for (uint32_t r : _node_ranks[n]) g.have[n].push_back(absent_row(r, PMIX_PROC_STATE_UNDEF));
        } else {
            ask.push_back(n);
        }
    }
    g.waiting = ask;
    _pending.emplace(id, std::move(g));
    if (ask.empty()) return finish(id, "");
    auto body = encode_proc_request(id);
    for (uint32_t n : ask) _ops.send(n, node_channel::proc_table_request, body);
}

Status proc_table_engine::add_channels(node_channels &table) {
    PMIXCPP_RETURN_IF_ERROR(table.add(node_channel::proc_table_request, "process table request",
                                      [this](uint32_t from, std::span<const uint8_t> body) { on_request(from, body); }));
    return table.add(node_channel::proc_table_reply, "process table reply",
                     [this](uint32_t from, std::span<const uint8_t> body) { on_reply(from, body); });
}

void proc_table_engine::on_request(uint32_t from, std::span<const uint8_t> body) {
    uint64_t id = 0;
    if (Status st = decode_proc_request(body, &id); !st.ok() || id == 0) {
        PMIXCPP_LOG_ERROR("proc table request from node %u dropped: %s", from,
                          st.ok() ? "id 0" : st.message().c_str());
        return;
    }
    _ops.send(from, node_channel::proc_table_reply, encode_proc_reply(id, _ops.local_rows()));
}

void proc_table_engine::on_reply(uint32_t from, std::span<const uint8_t> body) {
    if (from >= _node_ranks.size() || from == _self) return;
    uint64_t id = 0;
    std::vector<proc_row> rows;
    if (Status st = decode_proc_reply(body, _node_ranks[from], &id, &rows); !st.ok()) {
        PMIXCPP_LOG_ERROR("proc table reply from node %u dropped: %s", from, st.message().c_str());
        return;
    }
    if (id == 0) {  // the node's final rows
        _final[from] = rows;
        for (auto &[gid, g] : _pending) {
            if (std::erase(g.waiting, from) > 0) g.have[from] = rows;
        }
    } else if (auto it = _pending.find(id); it != _pending.end()) {
        if (std::erase(it->second.waiting, from) > 0) it->second.have[from] = std::move(rows);
    }
    std::vector<uint64_t> complete;
    for (const auto &[gid, g] : _pending)
        if (g.waiting.empty()) complete.push_back(gid);
    for (uint64_t gid : complete) finish(gid, "");
}

void proc_table_engine::node_lost(uint32_t node) {
    std::vector<uint64_t> complete;
    for (auto &[gid, g] : _pending) {
        if (std::erase(g.waiting, node) == 0) continue;
        g.silent += (g.silent.empty() ? "" : "; ") + name(node) + " was lost";
        if (node < _node_ranks.size())
            for (uint32_t r : _node_ranks[node]) g.have[node].push_back(absent_row(r, PMIX_PROC_STATE_COMM_FAILED));
        if (g.waiting.empty()) complete.push_back(gid);
    }
    for (uint64_t gid : complete) finish(gid, "");
}

void proc_table_engine::send_final() {
    if (!_ops.local_rows) return;
    auto body = encode_proc_reply(0, _ops.local_rows());
    for (uint32_t n = 0; n < _node_ranks.size(); ++n)
        if (n != _self && !(_ops.lost && _ops.lost(n)) && !(_ops.gone && _ops.gone(n)) &&
            (!_ops.final_rows_to || _ops.final_rows_to(n)))
            _ops.send(n, node_channel::proc_table_reply, body);
}

std::optional<proc_table_engine::clock::time_point> proc_table_engine::next_deadline() const {
    std::optional<clock::time_point> next;
    for (const auto &[id, g] : _pending)
        if (!next || g.deadline < *next) next = g.deadline;
    return next;
}

void proc_table_engine::expire(clock::time_point now) {
    std::vector<uint64_t> due;
    for (const auto &[id, g] : _pending)
        if (g.deadline <= now) due.push_back(id);
    for (uint64_t id : due) {
        auto it = _pending.find(id);
        finish(id, "no answer within " + std::to_string(it->second.timeout_ms) + " ms");
    }
}

void proc_table_engine::finish(uint64_t id, const std::string &why_waiting) {
    auto it = _pending.find(id);
    if (it == _pending.end()) return;
    pending_gather g = std::move(it->second);
    _pending.erase(it);
    for (uint32_t n : g.waiting) {
        g.silent += (g.silent.empty() ? "" : "; ") + name(n) + ": " + why_waiting;
        for (uint32_t r : _node_ranks[n]) g.have[n].push_back(absent_row(r, PMIX_PROC_STATE_COMM_FAILED));
    }
    result res;
    res.rows.resize(_ntasks);
    for (uint32_t r = 0; r < _ntasks; ++r) res.rows[r] = absent_row(r, PMIX_PROC_STATE_UNDEF);
    for (auto &[node, rows] : g.have)
        for (auto &p : rows)
            if (p.rank < _ntasks) res.rows[p.rank] = std::move(p);
    res.silent = std::move(g.silent);
    for (auto &d : g.done)
        if (d) d(res);
}

}  // namespace pmixcpp::server
