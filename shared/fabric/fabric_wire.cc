#include "fabric_wire.h"

#include <cstdlib>
#include <cstring>
#include <sstream>

namespace pmixcpp::sched {

namespace {


Status load(pmix_info_t *info, const char *key, const void *data, pmix_data_type_t type) {
    memset(info->key, 0, sizeof info->key);
    strncpy(info->key, key, PMIX_MAX_KEYLEN);
    return value_load(&info->value, data, type);
}

std::vector<std::string> split(const std::string &s) {
    std::vector<std::string> out;
    if (s.empty()) return out;
    std::stringstream in(s);
    std::string item;
    while (std::getline(in, item, ',')) out.push_back(item);
    if (s.back() == ',') out.emplace_back();
    return out;
}

std::string join(const cost_matrix &m, bool leaves) {
    std::string out;
    for (size_t i = 0; i < m.size(); ++i) {
        if (i) out += ',';
        out += leaves ? m.vertices[i].leaf : m.vertices[i].node;
    }
    return out;
}

}  // namespace

Status encode_client_request(wire::Writer &w, const fabric_request &r) {
    w.put_u8(static_cast<uint8_t>(r.op));
    return w.put_string(r.plane);
}

Status decode_client_request(std::span<const uint8_t> payload, fabric_request *r) {
    wire::Reader rd(payload);
    uint8_t op = 0;
    PMIXCPP_RETURN_IF_ERROR(rd.get_u8(&op));
    if (op != static_cast<uint8_t>(fabric_op::registration) && op != static_cast<uint8_t>(fabric_op::update))
        return Status(PMIX_ERR_BAD_PARAM, "unknown fabric operation " + std::to_string(op));
    r->op = static_cast<fabric_op>(op);
    PMIXCPP_RETURN_IF_ERROR(rd.get_string(&r->plane, 256));
    return rd.expect_end();
}

Result<InfoArray> matrix_to_results(const cost_matrix &m, const std::string &plane) {
    size_t n = m.size();
    if (n > kFabricMaxVertices)
        return Status(PMIX_ERR_OUT_OF_RESOURCE, "fabric of " + std::to_string(n) + " vertices (at most " +
                                                    std::to_string(kFabricMaxVertices) + ")");
    auto *info = static_cast<pmix_info_t *>(calloc(5, sizeof(pmix_info_t)));
    if (info == nullptr) return Status(PMIX_ERR_NOMEM, "out of memory");
    InfoArray out(info, 5);
    std::string nodes = join(m, false), leaves = join(m, true);
    std::vector<uint8_t> bytes(n * n * 2);
    for (size_t k = 0; k < n * n; ++k) {
        bytes[2 * k] = static_cast<uint8_t>(m.cost[k] & 0xff);
        bytes[2 * k + 1] = static_cast<uint8_t>(m.cost[k] >> 8);
    }
    pmix_byte_object_t bo{reinterpret_cast<char *>(bytes.data()), bytes.size()};
    PMIXCPP_RETURN_IF_ERROR(load(&info[0], PMIX_FABRIC_PLANE, plane.c_str(), PMIX_STRING));
    PMIXCPP_RETURN_IF_ERROR(load(&info[1], PMIX_FABRIC_NUM_VERTICES, &n, PMIX_SIZE));
    PMIXCPP_RETURN_IF_ERROR(load(&info[2], PMIXCPP_FABRIC_NODES, nodes.c_str(), PMIX_STRING));
    PMIXCPP_RETURN_IF_ERROR(load(&info[3], PMIXCPP_FABRIC_LEAVES, leaves.c_str(), PMIX_STRING));
    PMIXCPP_RETURN_IF_ERROR(load(&info[4], PMIXCPP_FABRIC_COSTS, &bo, PMIX_BYTE_OBJECT));
    return out;
}

Status matrix_from_results(const pmix_info_t *info, size_t n, cost_matrix *m, std::string *plane) {
    auto bad = [](const std::string &what) { return Status(PMIX_ERR_UNPACK_FAILURE, "fabric results: " + what); };
    const pmix_info_t *p = find_info(info, n, PMIX_FABRIC_PLANE);
    const pmix_info_t *nv = find_info(info, n, PMIX_FABRIC_NUM_VERTICES);
    const pmix_info_t *nodes = find_info(info, n, PMIXCPP_FABRIC_NODES);
    const pmix_info_t *leaves = find_info(info, n, PMIXCPP_FABRIC_LEAVES);
    const pmix_info_t *costs = find_info(info, n, PMIXCPP_FABRIC_COSTS);
    if (!p || p->value.type != PMIX_STRING || !p->value.data.string) return bad("no plane");
    if (!nv || nv->value.type != PMIX_SIZE) return bad("no vertex count");
    if (!nodes || nodes->value.type != PMIX_STRING) return bad("no node list");
    if (!leaves || leaves->value.type != PMIX_STRING) return bad("no switch list");
    if (!costs || costs->value.type != PMIX_BYTE_OBJECT) return bad("no costs");
    size_t nverts = nv->value.data.size;
    if (nverts > kFabricMaxVertices) return bad(std::to_string(nverts) + " vertices");
    auto node_names = split(nodes->value.data.string ? nodes->value.data.string : "");
    auto leaf_names = split(leaves->value.data.string ? leaves->value.data.string : "");
    if (node_names.size() != nverts || leaf_names.size() != nverts)
        return bad("vertex lists do not match the vertex count");
    const pmix_byte_object_t &bo = costs->value.data.bo;
    if (bo.size != nverts * nverts * 2 || (bo.size > 0 && bo.bytes == nullptr))
        return bad("cost bytes do not match the vertex count");
    cost_matrix out;
    out.vertices.resize(nverts);
    for (size_t i = 0; i < nverts; ++i) {
        out.vertices[i].node = node_names[i];
        out.vertices[i].leaf = leaf_names[i];
    }
    out.cost.resize(nverts * nverts);
    const auto *b = reinterpret_cast<const uint8_t *>(bo.bytes);
    for (size_t k = 0; k < out.cost.size(); ++k) out.cost[k] = static_cast<uint16_t>(b[2 * k] | (b[2 * k + 1] << 8));
    *m = std::move(out);
    *plane = p->value.data.string;
    return Status::success();
}

}  // namespace pmixcpp::sched
