#include "plugin_config.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <functional>

#include "signals.h"

namespace pmixcpp {

const char *to_string(fence_algo a) {
    switch (a) {
    case fence_algo::automatic: return "auto";
    case fence_algo::tree: return "tree";
    case fence_algo::ring: return "ring";
    case fence_algo::direct: return "direct";
    }
    return "?";
}

const char *to_string(wireup_kind w) {
    switch (w) {
    case wireup_kind::automatic: return "auto";
    case wireup_kind::srun: return "srun";
    case wireup_kind::directory: return "directory";
    }
    return "?";
}

const char *to_string(transport_kind t) { return t == transport_kind::ucx ? "ucx" : "tcp"; }

const char *to_string(client_lib_mode m) {
    switch (m) {
    case client_lib_mode::ours: return "ours";
    case client_lib_mode::native: return "native";
    case client_lib_mode::both: return "both";
    }
    return "?";
}

namespace {

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
}

Status bad(const std::string &key, const std::string &value, const std::string &expected) {
    return Status(PMIX_ERR_BAD_PARAM, key + "=" + value + " is invalid: expected " + expected);
}

Status parse_uint(const std::string &key, const std::string &value, uint32_t lo, uint32_t hi, uint32_t &out) {
    uint32_t v = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (value.empty() || ec != std::errc() || end != value.data() + value.size() || v < lo || v > hi)
        return bad(key, value, "an integer from " + std::to_string(lo) + " to " + std::to_string(hi));
    out = v;
    return Status::success();
}

Status parse_bool(const std::string &key, const std::string &value, bool &out) {
    std::string v = lower(value);
    if (v == "yes" || v == "true" || v == "1") { out = true; return Status::success(); }
    if (v == "no" || v == "false" || v == "0") { out = false; return Status::success(); }
    return bad(key, value, "yes or no");
}

Status parse_word(const std::string &key, const std::string &value, std::string &out) {
    for (unsigned char c : value)
        if (std::isspace(c) || c == ';' || c == '\'' || c == '"')
            return bad(key, value, "a single word without spaces or quotes");
    out = value;
    return Status::success();
}

using setter = std::function<Status(plugin_config &, const std::string &, const std::string &)>;

struct key_def {
    const char *name;
    setter set;
    std::function<std::string(const plugin_config &)> raw;  // the value as mpi.conf spells it
    const char *unset_text = "";                              // shown when raw is empty
    // Steers what root does on the nodes (a path slurmstepd creates files in, what root's
    // transport opens): only the administrator's mpi.conf may set it; a user's SLURM_PMIXCPP_*
    // override is refused. The text says why, for the refusal.
    const char *admin_only = nullptr;
};

constexpr const char *kRootFiles = "decides where root creates files on the nodes";
constexpr const char *kRootTransport = "decides what root's UCX transport opens on the nodes";

const std::vector<key_def> &key_defs() {
    static const std::vector<key_def> defs = {
        {"PMIxCppDebug",
         [](plugin_config &c, const std::string &k, const std::string &v) { return parse_uint(k, v, 0, 5, c.debug); },
         [](const plugin_config &c) { return std::to_string(c.debug); }},
        {"PMIxCppTimeout",
         [](plugin_config &c, const std::string &k, const std::string &v) {
             return parse_uint(k, v, 1, 86400, c.timeout_sec);
         },
         [](const plugin_config &c) { return std::to_string(c.timeout_sec); }},
        {"PMIxCppTmpDirBase",
         [](plugin_config &c, const std::string &k, const std::string &v) {
             if (v.empty() || v[0] != '/') return bad(k, v, "an absolute directory path");
             return parse_word(k, v, c.tmpdir_base);
         },
         [](const plugin_config &c) { return c.tmpdir_base; }, "(the node's TmpFS)", kRootFiles},
        {"PMIxCppTransport",
         [](plugin_config &c, const std::string &k, const std::string &v) -> Status {
             std::string l = lower(v);
             if (l == "ucx") c.transport = transport_kind::ucx;
             else if (l == "tcp") c.transport = transport_kind::tcp;
             else return bad(k, v, "ucx or tcp");
             return Status::success();
         },
         [](const plugin_config &c) { return std::string(to_string(c.transport)); }},
        {"PMIxCppWireup",
         [](plugin_config &c, const std::string &k, const std::string &v) -> Status {
             std::string l = lower(v);
             if (l == "auto") c.wireup = wireup_kind::automatic;
             else if (l == "srun") c.wireup = wireup_kind::srun;
             else if (l == "directory") c.wireup = wireup_kind::directory;
             else return bad(k, v, "auto, srun or directory");
             return Status::success();
         },
         [](const plugin_config &c) { return std::string(to_string(c.wireup)); }},
        {"PMIxCppDirectoryNodes",
         [](plugin_config &c, const std::string &k, const std::string &v) {
             return parse_uint(k, v, 2, 1u << 24, c.directory_nodes);
         },
         [](const plugin_config &c) { return std::to_string(c.directory_nodes); }},
        {"PMIxCppUcxTls",
         [](plugin_config &c, const std::string &k, const std::string &v) { return parse_word(k, v, c.ucx_tls); },
         [](const plugin_config &c) { return c.ucx_tls; }, "(UCX default)", kRootTransport},
        {"PMIxCppUcxDevices",
         [](plugin_config &c, const std::string &k, const std::string &v) { return parse_word(k, v, c.ucx_devices); },
         [](const plugin_config &c) { return c.ucx_devices; }, "(UCX default)", kRootTransport},
        {"PMIxCppFence",
         [](plugin_config &c, const std::string &k, const std::string &v) -> Status {
             std::string l = lower(v);
             if (l == "auto") c.fence = fence_algo::automatic;
             else if (l == "tree") c.fence = fence_algo::tree;
             else if (l == "ring") c.fence = fence_algo::ring;
             else if (l == "direct") c.fence = fence_algo::direct;
             else return bad(k, v, "auto, tree, ring or direct");
             return Status::success();
         },
         [](const plugin_config &c) { return std::string(to_string(c.fence)); }},
        {"PMIxCppTreeWidth",
         [](plugin_config &c, const std::string &k, const std::string &v) -> Status {
             if (lower(v) == "auto") {
                 c.tree_width = 0;
                 return Status::success();
             }
             uint32_t w = 0;
             if (!parse_uint(k, v, 2, 64, w).ok()) return bad(k, v, "auto or an integer from 2 to 64");
             c.tree_width = w;
             return Status::success();
         },
         [](const plugin_config &c) { return c.tree_width == 0 ? std::string("auto") : std::to_string(c.tree_width); }},
        {"PMIxCppTreeTopology",
         [](plugin_config &c, const std::string &k, const std::string &v) { return parse_bool(k, v, c.tree_topology); },
         [](const plugin_config &c) { return std::string(c.tree_topology ? "yes" : "no"); }},
        {"PMIxCppFabricPoll",
         [](plugin_config &c, const std::string &k, const std::string &v) {
             return parse_uint(k, v, 0, 86400, c.fabric_poll);
         },
         [](const plugin_config &c) { return std::to_string(c.fabric_poll); }},
        {"PMIxCppRingThreshold",
         [](plugin_config &c, const std::string &k, const std::string &v) {
             return parse_uint(k, v, 0, 1u << 30, c.ring_threshold);
         },
         [](const plugin_config &c) { return std::to_string(c.ring_threshold); }},
        {"PMIxCppEagerConnect",
         [](plugin_config &c, const std::string &k, const std::string &v) { return parse_bool(k, v, c.eager_connect); },
         [](const plugin_config &c) { return std::string(c.eager_connect ? "yes" : "no"); }},
        {"PMIxCppDmodexNode",
         [](plugin_config &c, const std::string &k, const std::string &v) { return parse_bool(k, v, c.dmodex_node); },
         [](const plugin_config &c) { return std::string(c.dmodex_node ? "yes" : "no"); }},
        {"PMIxCppNodeConnections",
         [](plugin_config &c, const std::string &k, const std::string &v) {
             return parse_uint(k, v, 0, 1u << 20, c.node_connections);
         },
         [](const plugin_config &c) { return std::to_string(c.node_connections); }},
        {"PMIxCppClientLib",
         [](plugin_config &c, const std::string &k, const std::string &v) -> Status {
             // yes/no: the boolean of earlier releases (yes put our library first: now both).
             std::string l = lower(v);
             if (l == "ours") c.client_lib = client_lib_mode::ours;
             else if (l == "native") c.client_lib = client_lib_mode::native;
             else if (l == "both") c.client_lib = client_lib_mode::both;
             else if (bool b = false; parse_bool(k, v, b).ok()) c.client_lib = b ? client_lib_mode::both : client_lib_mode::native;
             else return bad(k, v, "ours, native or both (yes = both, no = native)");
             return Status::success();
         },
         [](const plugin_config &c) { return std::string(to_string(c.client_lib)); }},
        {"PMIxCppTimeLimitAlert",
         [](plugin_config &c, const std::string &k, const std::string &v) {
             return parse_uint(k, v, 0, 86400, c.time_limit_alert);
         },
         [](const plugin_config &c) { return std::to_string(c.time_limit_alert); }},
        {"PMIxCppSignalEvents",
         [](plugin_config &c, const std::string &k, const std::string &v) -> Status {
             auto sigs = parse_signal_list(v);
             if (!sigs.ok()) return bad(k, v, "a comma-separated list of signal names or none: " + sigs.status().message());
             std::string canon;
             for (int s : sigs.value()) canon += (canon.empty() ? "" : ",") + std::string(signal_short_name(s));
             c.signal_events = canon.empty() ? "none" : canon;
             return Status::success();
         },
         [](const plugin_config &c) { return c.signal_events; }},
        {"PMIxCppProcTermEvents",
         [](plugin_config &c, const std::string &k, const std::string &v) -> Status {
             std::string l = lower(v);
             if (l == "all") c.proc_term_all = true;
             else if (l == "abnormal") c.proc_term_all = false;
             else return bad(k, v, "abnormal or all");
             return Status::success();
         },
         [](const plugin_config &c) { return std::string(c.proc_term_all ? "all" : "abnormal"); }},
        {"PMIxCppAllocTimeout",
         [](plugin_config &c, const std::string &k, const std::string &v) {
             return parse_uint(k, v, 0, 7 * 86400, c.alloc_timeout);
         },
         [](const plugin_config &c) { return std::to_string(c.alloc_timeout); }},
        {"PMIxCppOmpiVaderDir",
         [](plugin_config &c, const std::string &k, const std::string &v) {
             return parse_bool(k, v, c.ompi_vader_dir);
         },
         [](const plugin_config &c) { return std::string(c.ompi_vader_dir ? "yes" : "no"); }},
    };
    return defs;
}

}  // namespace

const std::vector<std::string> &config_keys() {
    static const std::vector<std::string> keys = [] {
        std::vector<std::string> k;
        for (const auto &d : key_defs()) k.emplace_back(d.name);
        return k;
    }();
    return keys;
}

std::string env_override_name(const std::string &key) {
    std::string suffix = key.substr(std::string("PMIxCpp").size());
    std::transform(suffix.begin(), suffix.end(), suffix.begin(), [](unsigned char c) { return std::toupper(c); });
    return "SLURM_PMIXCPP_" + suffix;
}

Status plugin_config::set(const std::string &key, const std::string &value) {
    for (const auto &d : key_defs()) {
        if (lower(d.name) != lower(key)) continue;
        plugin_config copy = *this;  // no side effect on failure
        PMIXCPP_RETURN_IF_ERROR(d.set(copy, d.name, value), "mpi.conf");
        *this = std::move(copy);
        return Status::success();
    }
    return Status(PMIX_ERR_BAD_PARAM, "mpi.conf: unknown key " + key);
}

bool wants_directory_route(const plugin_config &c, size_t nodes) {
    if (c.wireup == wireup_kind::directory) return true;
    return c.wireup == wireup_kind::automatic && nodes >= c.directory_nodes;
}

bool admin_only_key(const std::string &key) {
    for (const auto &d : key_defs())
        if (lower(d.name) == lower(key)) return d.admin_only != nullptr;
    return false;
}

Status plugin_config::apply_env_overrides(const std::vector<std::string> &env) {
    plugin_config copy = *this;
    for (const auto &d : key_defs()) {
        const std::string var = env_override_name(d.name) + "=";
        for (const auto &entry : env) {
            if (entry.compare(0, var.size(), var) != 0) continue;
            if (d.admin_only)
                return Status(PMIX_ERR_NO_PERMISSIONS,
                              "environment " + env_override_name(d.name) + " refused: " + d.name + " " +
                                  d.admin_only + ", so only the administrator's mpi.conf may set it");
            PMIXCPP_RETURN_IF_ERROR(
                d.set(copy, d.name, entry.substr(var.size())),
                "environment " + env_override_name(d.name) + " (overrides " + d.name + ")");
            // A user may narrow the client libraries the administrator allows, never widen them.
            if (std::string(d.name) == "PMIxCppClientLib" && !includes(client_lib, copy.client_lib))
                return Status(PMIX_ERR_NO_PERMISSIONS, "environment " + env_override_name(d.name) + "=" +
                                                           to_string(copy.client_lib) + " refused: mpi.conf's " +
                                                           d.name + "=" + to_string(client_lib) +
                                                           ", which a job may narrow but not widen");
        }
    }
    *this = std::move(copy);
    return Status::success();
}

std::vector<std::pair<std::string, std::string>> plugin_config::printable() const {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto &d : key_defs()) {
        std::string v = d.raw(*this);
        out.emplace_back(d.name, v.empty() ? std::string(d.unset_text) : v);
    }
    return out;
}

std::vector<std::pair<std::string, std::string>> plugin_config::non_default() const {
    const plugin_config defaults;
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto &d : key_defs()) {
        std::string v = d.raw(*this);
        if (v != d.raw(defaults)) out.emplace_back(d.name, v);
    }
    return out;
}

}  // namespace pmixcpp
