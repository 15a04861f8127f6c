#include "alloc_codec.h"

#include <cstdlib>
#include <cstring>

#include "hostlist.h"

namespace pmixcpp::alloc {

namespace {

constexpr size_t kMaxIdLength = 128;
constexpr uint64_t kMaxNodes = 1u << 20;
constexpr size_t kMaxKeys = 256;


bool required(const pmix_info_t &i) { return (i.flags & PMIX_INFO_REQD) != 0; }

Status bad(const std::string &key, const std::string &why) {
    return Status(PMIX_ERR_BAD_PARAM, key + ": " + why);
}

Result<std::string> string_of(const pmix_info_t &i, size_t max_len) {
    const std::string key = key_of(i);
    if (i.value.type != PMIX_STRING || i.value.data.string == nullptr) return bad(key, "must be a string");
    std::string s = i.value.data.string;
    if (s.empty()) return bad(key, "must not be empty");
    if (s.size() > max_len) return bad(key, "longer than " + std::to_string(max_len) + " characters");
    for (char c : s)
        if (c <= ' ' || c > '~') return bad(key, "holds a blank or non-printable character");
    return s;
}

template <typename T>
Result<T> positive_of(const pmix_info_t &i, uint64_t max) {
    const std::string key = key_of(i);
    switch (i.value.type) {
    case PMIX_STRING: case PMIX_BOOL: case PMIX_UNDEF: case PMIX_BYTE_OBJECT: case PMIX_DATA_ARRAY:
        return bad(key, "must be a number");
    default: break;
    }
    auto v = value_to_number<int64_t>(i.value);
    if (!v.ok()) {
        auto d = value_to_number<double>(i.value);
        if (!d.ok()) return bad(key, "must be a number");
        if (d.value() <= 0 || d.value() > static_cast<double>(max)) return bad(key, "out of range");
        return static_cast<T>(d.value() + 0.999999);  // round a fraction up
    }
    if (v.value() <= 0) return bad(key, "must be greater than 0");
    if (static_cast<uint64_t>(v.value()) > max) return bad(key, "larger than " + std::to_string(max));
    return static_cast<T>(v.value());
}

bool valid_node_list(const std::string &s) { return hostlist::expand(s).ok(); }

}  // namespace

const char *to_string(directive d) {
    switch (d) {
    case directive::new_allocation: return "NEW";
    case directive::extend: return "EXTEND";
    case directive::release: return "RELEASE";
    case directive::reacquire: return "REACQUIRE";
    case directive::cancel: return "CANCEL";
    }
    return "UNKNOWN";
}

Result<spec> parse_spec(uint8_t dir, const pmix_info_t *infos, size_t ninfos) {
    spec s;
    switch (dir) {
    case PMIX_ALLOC_NEW: case PMIX_ALLOC_EXTEND: case PMIX_ALLOC_RELEASE: case PMIX_ALLOC_REAQUIRE:
    case PMIX_ALLOC_REQ_CANCEL:
        s.dir = static_cast<directive>(dir);
        break;
    case PMIX_ALLOC_EXTERNAL:
        return Status(PMIX_ERR_NOT_SUPPORTED, "PMIX_ALLOC_EXTERNAL directives are not supported");
    default: return Status(PMIX_ERR_BAD_PARAM, "unknown allocation directive " + std::to_string(dir));
    }
    if (ninfos > 0 && infos == nullptr) return Status(PMIX_ERR_BAD_PARAM, "infos missing");
    for (size_t k = 0; k < ninfos; ++k) {
        const pmix_info_t &i = infos[k];
        const std::string key = key_of(i);
        if (key == PMIX_ALLOC_REQ_ID) {
            auto v = string_of(i, kMaxIdLength);
            PMIXCPP_RETURN_IF_ERROR(v);
            s.request_id = v.value();
        } else if (key == PMIX_ALLOC_ID) {
            auto v = string_of(i, kMaxIdLength);
            PMIXCPP_RETURN_IF_ERROR(v);
            s.alloc_id = v.value();
        } else if (key == PMIX_ALLOC_NUM_NODES) {
            auto v = positive_of<uint64_t>(i, kMaxNodes);
            PMIXCPP_RETURN_IF_ERROR(v);
            s.num_nodes = v.value();
        } else if (key == PMIX_ALLOC_NODE_LIST) {
            auto v = string_of(i, 1u << 16);
            PMIXCPP_RETURN_IF_ERROR(v);
            if (!valid_node_list(v.value())) return bad(key, "not a host list: " + v.value());
            s.node_list = v.value();
        } else if (key == PMIX_ALLOC_NUM_CPUS) {
            auto v = positive_of<uint64_t>(i, 1u << 30);
            PMIXCPP_RETURN_IF_ERROR(v);
            s.num_cpus = v.value();
        } else if (key == PMIX_ALLOC_MEM_SIZE) {
            auto v = positive_of<uint64_t>(i, uint64_t(1) << 40);
            PMIXCPP_RETURN_IF_ERROR(v);
            s.mem_mb = v.value();
        } else if (key == PMIX_ALLOC_TIME) {
            auto v = positive_of<uint32_t>(i, UINT32_MAX);
            PMIXCPP_RETURN_IF_ERROR(v);
            s.time_sec = v.value();
        } else if (key == PMIX_ALLOC_QUEUE) {
            PMIXCPP_ASSIGN_OR_RETURN(auto v, string_of(i, 256));
            s.queue = v;
        } else if (key.rfind("pmix.alloc.", 0) == 0) {
            // CPU lists, fabric/network requests and anything else we cannot express to Slurm.
            if (required(i))
                return Status(PMIX_ERR_NOT_SUPPORTED, key + " is required but cannot be honoured through Slurm");
            s.ignored.push_back(key);
        }
    }

    // What each directive needs.
    switch (s.dir) {
    case directive::new_allocation:
        if (!s.num_nodes && s.node_list.empty() && !s.num_cpus) s.num_nodes = 1;
        break;
    case directive::extend:
        if (!s.wants_resources() && !s.time_sec)
            return Status(PMIX_ERR_BAD_PARAM, "EXTEND needs nodes, a node list, CPUs or PMIX_ALLOC_TIME");
        if (!s.queue.empty()) return Status(PMIX_ERR_BAD_PARAM, "EXTEND grows the job in its own partition");
        break;
    case directive::release:
        if (!s.num_nodes && s.node_list.empty() && s.alloc_id.empty())
            return Status(PMIX_ERR_BAD_PARAM, "RELEASE needs PMIX_ALLOC_NUM_NODES, PMIX_ALLOC_NODE_LIST or PMIX_ALLOC_ID");
        if (s.num_cpus) return Status(PMIX_ERR_BAD_PARAM, "RELEASE gives back whole nodes, not CPUs");
        break;
    case directive::reacquire:
        if (s.wants_resources())
            return Status(PMIX_ERR_BAD_PARAM, "REACQUIRE takes back what a RELEASE lent; name it with PMIX_ALLOC_ID");
        break;
    case directive::cancel:
        if (s.wants_resources() || s.time_sec)
            return Status(PMIX_ERR_BAD_PARAM, "CANCEL takes PMIX_ALLOC_ID or PMIX_ALLOC_REQ_ID, no resources");
        break;
    }
    return s;
}

std::string describe(const spec &s) {
    std::string d = to_string(s.dir);
    if (!s.request_id.empty()) d += " reqid=" + s.request_id;
    if (!s.alloc_id.empty()) d += " id=" + s.alloc_id;
    if (s.num_nodes) d += " nodes=" + std::to_string(*s.num_nodes);
    if (!s.node_list.empty()) d += " nodelist=" + s.node_list;
    if (s.num_cpus) d += " cpus=" + std::to_string(*s.num_cpus);
    if (s.mem_mb) d += " mem=" + std::to_string(*s.mem_mb) + "M";
    if (s.time_sec) d += " time=" + std::to_string(*s.time_sec) + "s";
    if (!s.queue.empty()) d += " partition=" + s.queue;
    return d;
}

// --- agent messages -------------------------------------------------------------------------

Status encode(wire::Writer &w, const agent_request &m) {
    w.put_u8(static_cast<uint8_t>(m.op));
    PMIXCPP_RETURN_IF_ERROR(w.put_string(m.nspace));
    w.put_u32(m.rank);
    PMIXCPP_RETURN_IF_ERROR(w.put_string(m.node));
    w.put_u8(m.directive);
    w.put_u32(static_cast<uint32_t>(m.keys.size()));
    for (const auto &k : m.keys) PMIXCPP_RETURN_IF_ERROR(w.put_string(k));
    return wire::encode_info_array(w, m.infos.data(), m.infos.size());
}

Status decode(wire::Reader &r, agent_request *m) {
    uint8_t op = 0;
    PMIXCPP_RETURN_IF_ERROR(r.get_u8(&op));
    if (op != static_cast<uint8_t>(agent_op::allocate) && op != static_cast<uint8_t>(agent_op::query))
        return Status(PMIX_ERR_UNPACK_FAILURE, "agent request: unknown operation " + std::to_string(op));
    m->op = static_cast<agent_op>(op);
    PMIXCPP_RETURN_IF_ERROR(r.get_string(&m->nspace, PMIX_MAX_NSLEN), "agent request nspace");
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&m->rank));
    PMIXCPP_RETURN_IF_ERROR(r.get_string(&m->node, 256), "agent request node");
    PMIXCPP_RETURN_IF_ERROR(r.get_u8(&m->directive));
    uint32_t n = 0;
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&n));
    PMIXCPP_RETURN_IF_ERROR(r.take_count(n, 4, sizeof(std::string), "agent request keys", kMaxKeys));
    std::vector<std::string> keys(n);
    for (auto &k : keys) PMIXCPP_RETURN_IF_ERROR(r.get_string(&k, PMIX_MAX_KEYLEN), "agent request key");
    m->keys = std::move(keys);
    return wire::decode_info_array(r, &m->infos).with_context("agent request infos");
}

Status encode(wire::Writer &w, const agent_reply &m) {
    w.put_i32(m.status);
    PMIXCPP_RETURN_IF_ERROR(w.put_string(m.message.substr(0, 1u << 16)));
    return wire::encode_info_array(w, m.results.data(), m.results.size());
}

Status decode(wire::Reader &r, agent_reply *m) {
    PMIXCPP_RETURN_IF_ERROR(r.get_i32(&m->status));
    PMIXCPP_RETURN_IF_ERROR(r.get_string(&m->message, 1u << 17), "agent reply message");
    return wire::decode_info_array(r, &m->results).with_context("agent reply results");
}

Result<std::vector<uint8_t>> encode_request(const agent_request &m) {
    wire::Writer w;
    PMIXCPP_RETURN_IF_ERROR(encode(w, m));
    return w.take();
}

Result<std::vector<uint8_t>> encode_reply(const agent_reply &m) {
    wire::Writer w;
    PMIXCPP_RETURN_IF_ERROR(encode(w, m));
    return w.take();
}

// --- info_builder ---------------------------------------------------------------------------

info_builder::~info_builder() {
    for (auto &i : _infos) info_destruct(&i);
}

info_builder &info_builder::add(const char *key, const void *data, pmix_data_type_t type) {
    pmix_info_t i{};
    strncpy(i.key, key, PMIX_MAX_KEYLEN);
    if (value_load(&i.value, data, type).ok()) _infos.push_back(i);
    return *this;
}

info_builder &info_builder::add_string(const char *key, const std::string &value) {
    return add(key, value.c_str(), PMIX_STRING);
}
info_builder &info_builder::add_u32(const char *key, uint32_t value) { return add(key, &value, PMIX_UINT32); }
info_builder &info_builder::add_u64(const char *key, uint64_t value) { return add(key, &value, PMIX_UINT64); }
info_builder &info_builder::add_size(const char *key, size_t value) { return add(key, &value, PMIX_SIZE); }
info_builder &info_builder::add_status(const char *key, pmix_status_t value) { return add(key, &value, PMIX_STATUS); }
info_builder &info_builder::add_bool(const char *key, bool value) { return add(key, &value, PMIX_BOOL); }

info_builder &info_builder::add_value(const char *key, const pmix_value_t &value) {
    pmix_info_t i{};
    strncpy(i.key, key, PMIX_MAX_KEYLEN);
    if (value_xfer(&i.value, &value).ok()) _infos.push_back(i);
    return *this;
}

InfoArray info_builder::take() {
    size_t n = _infos.size();
    auto *out = static_cast<pmix_info_t *>(calloc(n ? n : 1, sizeof(pmix_info_t)));
    if (out == nullptr) return InfoArray();
    for (size_t k = 0; k < n; ++k) out[k] = _infos[k];  // ownership moves
    _infos.clear();
    return InfoArray(out, n);
}


std::optional<std::string> info_string(const InfoArray &a, const char *key) {
    const pmix_info_t *i = find_info(a, key);
    if (i == nullptr || i->value.type != PMIX_STRING || i->value.data.string == nullptr) return std::nullopt;
    return std::string(i->value.data.string);
}

}  // namespace pmixcpp::alloc
