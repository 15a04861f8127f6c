#include "fabric_request.h"

#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <map>

#include "../sched/fabric_wire.h"
#include "alloc_agent.h"
#include "log.h"
#include "wire/messages.h"

namespace pmixcpp::fabric {

Result<std::vector<uint8_t>> encode_agent_request(const fabric_request &r) {
    wire::Writer w;
    w.put_u32(kFabricMagic);
    PMIXCPP_RETURN_IF_ERROR(encode_client_request(w, r));
    return w.data();
}

bool is_fabric_body(std::span<const uint8_t> body) {
    wire::Reader rd(body);
    uint32_t magic = 0;
    return rd.get_u32(&magic).ok() && magic == kFabricMagic;
}

Status decode_agent_request(std::span<const uint8_t> body, fabric_request *r) {
    wire::Reader rd(body);
    uint32_t magic = 0;
    PMIXCPP_RETURN_IF_ERROR(rd.get_u32(&magic));
    if (magic != kFabricMagic) return Status(PMIX_ERR_UNPACK_FAILURE, "not a fabric request");
    return decode_client_request(body.subspan(4), r);
}

std::vector<uint32_t> node_groups(const std::vector<sched::switch_record> &records,
                                  const std::vector<std::string> &step_nodes) {
    if (records.empty() || step_nodes.empty()) return {};
    auto tree = sched::switch_tree::build(records);
    if (!tree.ok()) return {};
    std::map<std::string, uint32_t> ids;
    std::vector<uint32_t> out;
    uint32_t next = 0;
    for (const auto &n : step_nodes) {
        std::string leaf = tree->leaf_of(n);
        if (leaf.empty()) leaf = "\n" + n;  // not in the tree: its own group
        auto [it, fresh] = ids.emplace(leaf, next);
        if (fresh) ++next;
        out.push_back(it->second);
    }
    if (next < 2) return {};
    return out;
}

std::string encode_node_groups(const std::vector<uint32_t> &groups) {
    std::string out;
    for (size_t i = 0; i < groups.size();) {
        size_t j = i;
        while (j < groups.size() && groups[j] == groups[i]) ++j;
        if (!out.empty()) out += ',';
        out += std::to_string(groups[i]);
        if (j - i > 1) out += '*' + std::to_string(j - i);
        i = j;
    }
    return out;
}

Result<std::vector<uint32_t>> decode_node_groups(const std::string &text, size_t nnodes) {
    std::vector<uint32_t> out;
    auto bad = [&text](const std::string &why) {
        return Status(PMIX_ERR_BAD_PARAM, std::string(kNodeGroupsEnv) + "='" + text.substr(0, 64) + "': " + why);
    };
    size_t pos = 0;
    while (pos < text.size()) {
        size_t end = text.find(',', pos);
        if (end == std::string::npos) end = text.size();
        std::string item = text.substr(pos, end - pos);
        char *e = nullptr;
        unsigned long g = strtoul(item.c_str(), &e, 10);
        unsigned long count = 1;
        if (e == item.c_str() || g > UINT32_MAX) return bad("bad group");
        if (*e == '*') {
            const char *c = e + 1;
            count = strtoul(c, &e, 10);
            if (e == c || count == 0) return bad("bad count");
        }
        if (*e != '\0') return bad("bad item '" + item + "'");
        if (count > nnodes - std::min(nnodes, out.size())) return bad("more groups than nodes");
        out.insert(out.end(), count, static_cast<uint32_t>(g));
        pos = end + 1;
    }
    if (out.size() != nnodes)
        return bad(std::to_string(out.size()) + " groups for " + std::to_string(nnodes) + " nodes");
    return out;
}

fabric_service::~fabric_service() {
    std::vector<std::thread> threads;
    {
        std::lock_guard<std::mutex> g(_threads_mutex);
        threads.swap(_threads);
    }
    for (auto &t : threads)
        if (t.joinable()) t.join();
}

Result<std::vector<sched::switch_record>> fabric_service::records(bool reload) {
    std::lock_guard<std::mutex> g(_mutex);
    if (!_loaded || reload) {
        auto r = _load ? _load() : Result<std::vector<sched::switch_record>>(std::vector<sched::switch_record>{});
        if (!r.ok()) return r.status();
        _records = std::move(r.value());
        _loaded = true;
    }
    return _records;
}

session::agent_reply fabric_service::handle(const fabric_request &r) {
    session::agent_reply rep;
    auto fail = [&rep](const Status &st) {
        rep.status = st.code() == PMIX_SUCCESS ? PMIX_ERROR : st.code();
        rep.message = st.message();
        return rep;
    };
    std::string plane = r.plane.empty() ? "default" : r.plane;
    if (plane != "default") return fail(Status(PMIX_ERR_NOT_FOUND, "no network plane '" + plane + "' (only 'default')"));
    auto recs = records(r.op == fabric_op::update);
    if (!recs.ok()) return fail(recs.status().with_context("switch topology"));
    if (recs->empty())
        return fail(Status(PMIX_ERR_NOT_AVAILABLE, "Slurm reports no switch topology (TopologyPlugin=topology/tree)"));
    auto tree = sched::switch_tree::build(recs.value());
    if (!tree.ok()) return fail(tree.status());
    sched::cost_matrix m = sched::build_cost_matrix(tree.value(), {});
    auto results = sched::matrix_to_results(m, plane);
    if (!results.ok()) return fail(results.status());
    wire::info_reply reply;
    reply.results = std::move(results.value());
    wire::Writer w;
    if (Status st = wire::encode(w, reply); !st.ok()) return fail(st);
    rep.body = w.data();
    return rep;
}

void fabric_service::submit(int fd, std::vector<uint8_t> body) {
    std::lock_guard<std::mutex> g(_threads_mutex);
    try {
        _threads.emplace_back([this, fd, body = std::move(body)] {
            fabric_request req;
            session::agent_reply rep;
            if (Status st = decode_agent_request(body, &req); !st.ok()) {
                rep.status = PMIX_ERR_UNPACK_FAILURE;
                rep.message = "malformed fabric request: " + st.message();
            } else {
                rep = handle(req);
            }
            auto bytes = session::encode_reply(rep);
            if (!bytes.ok() || !send_alloc_reply_and_close(fd, bytes.value()).ok()) close(fd);
        });
    } catch (const std::exception &) {
        close(fd);
    }
}

}  // namespace pmixcpp::fabric
