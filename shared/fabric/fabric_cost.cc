#include "fabric_cost.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <set>
#include <sstream>

#include "hostlist.h"

namespace pmixcpp::sched {

namespace {

std::string trim(const std::string &s) {
    size_t b = s.find_first_not_of(" \t\r");
    if (b == std::string::npos) return "";
    size_t e = s.find_last_not_of(" \t\r");
    return s.substr(b, e - b + 1);
}

bool iequals(const std::string &a, const char *b) {
    if (a.size() != strlen(b)) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (tolower(static_cast<unsigned char>(a[i])) != tolower(static_cast<unsigned char>(b[i]))) return false;
    return true;
}

}  // namespace

Result<std::vector<switch_record>> parse_topology_conf(const std::string &text) {
    std::vector<switch_record> out;
    std::istringstream in(text);
    std::string line;
    int lineno = 0;
    while (std::getline(in, line)) {
        ++lineno;
        if (size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
        line = trim(line);
        if (line.empty()) continue;
        switch_record rec;
        std::istringstream words(line);
        std::string word;
        while (words >> word) {
            size_t eq = word.find('=');
            if (eq == std::string::npos || eq == 0 || eq + 1 == word.size())
                return Status(PMIX_ERR_BAD_PARAM, "topology line " + std::to_string(lineno) + ": bad item '" + word + "'");
            std::string key = word.substr(0, eq), value = word.substr(eq + 1);
            if (iequals(key, "SwitchName")) {
                rec.name = value;
            } else if (iequals(key, "Switches")) {
                rec.switches = value;
            } else if (iequals(key, "Nodes")) {
                rec.nodes = value;
            } else if (iequals(key, "LinkSpeed")) {
                char *end = nullptr;
                unsigned long v = strtoul(value.c_str(), &end, 10);
                if (end == value.c_str() || *end != '\0' || v > UINT32_MAX)
                    return Status(PMIX_ERR_BAD_PARAM, "topology line " + std::to_string(lineno) + ": bad LinkSpeed '" + value + "'");
                rec.link_speed = static_cast<uint32_t>(v);
            } else {
                return Status(PMIX_ERR_BAD_PARAM, "topology line " + std::to_string(lineno) + ": unknown key '" + key + "'");
            }
        }
        if (rec.name.empty())
            return Status(PMIX_ERR_BAD_PARAM, "topology line " + std::to_string(lineno) + ": no SwitchName");
        out.push_back(std::move(rec));
    }
    // Levels: leaves 0, others one above their highest child.
    std::map<std::string, size_t> index;
    for (size_t i = 0; i < out.size(); ++i) index[out[i].name] = i;
    std::vector<int> level(out.size(), -1);
    std::function<Status(size_t, int)> compute = [&](size_t i, int depth) -> Status {
        if (level[i] >= 0) return Status::success();
        if (depth > static_cast<int>(out.size()))
            return Status(PMIX_ERR_BAD_PARAM, "topology: switch loop at " + out[i].name);
        int lvl = 0;
        if (!out[i].switches.empty()) {
            PMIXCPP_ASSIGN_OR_RETURN(auto kids, hostlist::expand(out[i].switches));
            for (const auto &k : kids) {
                auto it = index.find(k);
                if (it == index.end())
                    return Status(PMIX_ERR_BAD_PARAM, "topology: switch " + out[i].name + " lists unknown switch " + k);
                PMIXCPP_RETURN_IF_ERROR(compute(it->second, depth + 1));
                lvl = std::max(lvl, level[it->second] + 1);
            }
        }
        level[i] = out[i].nodes.empty() ? lvl : 0;
        return Status::success();
    };
    for (size_t i = 0; i < out.size(); ++i) {
        PMIXCPP_RETURN_IF_ERROR(compute(i, 0));
        out[i].level = static_cast<uint16_t>(level[i]);
    }
    return out;
}

Result<std::vector<std::string>> parse_slurm_conf_nodes(const std::string &text) {
    std::vector<std::string> out;
    std::set<std::string> seen;
    std::istringstream in(text);
    std::string raw, line;
    int lineno = 0, first = 0;
    while (std::getline(in, raw)) {
        ++lineno;
        if (line.empty()) first = lineno;
        if (size_t hash = raw.find('#'); hash != std::string::npos) raw.resize(hash);
        std::string t = trim(raw);
        if (!t.empty() && t.back() == '\\') {  // continues on the next line
            t.pop_back();
            line += t + " ";
            continue;
        }
        line += t;
        std::string whole = std::move(line);
        line.clear();
        std::istringstream words(whole);
        std::string word;
        while (words >> word) {
            size_t eq = word.find('=');
            if (eq == std::string::npos || !iequals(word.substr(0, eq), "NodeName")) continue;
            std::string value = word.substr(eq + 1);
            if (value.empty() || iequals(value, "DEFAULT")) continue;
            auto names = hostlist::expand(value);
            if (!names.ok())
                return Status(PMIX_ERR_BAD_PARAM, "slurm.conf line " + std::to_string(first) + ": NodeName=" + value +
                                                      ": " + names.status().message());
            for (auto &n : names.value())
                if (seen.insert(n).second) out.push_back(std::move(n));
        }
    }
    return out;
}

std::vector<switch_record> flat_topology(const std::vector<std::string> &nodes) {
    if (nodes.empty()) return {};
    switch_record leaf;
    leaf.name = kFlatSwitchName;
    leaf.level = 0;
    leaf.nodes = hostlist::compress(nodes);
    return {leaf};
}

Result<switch_tree> switch_tree::build(const std::vector<switch_record> &records) {
    switch_tree t;
    std::map<std::string, size_t> index;
    for (size_t i = 0; i < records.size(); ++i) {
        if (!index.emplace(records[i].name, i).second)
            return Status(PMIX_ERR_BAD_PARAM, "topology: switch " + records[i].name + " listed twice");
        t._switch_names.push_back(records[i].name);
    }
    uint32_t fastest = 0;
    for (const auto &r : records) fastest = std::max(fastest, r.link_speed);
    for (const auto &r : records) {
        uint32_t w = 1;
        if (r.link_speed > 0 && fastest > 0)
            w = std::max<uint32_t>(1, static_cast<uint32_t>(std::lround(double(fastest) / r.link_speed)));
        t._weight.push_back(w);
    }
    // Parents of each switch.
    std::vector<std::vector<size_t>> parents(records.size());
    for (size_t i = 0; i < records.size(); ++i) {
        if (records[i].switches.empty()) continue;
        auto kids = hostlist::expand(records[i].switches);
        if (!kids.ok()) return Status(PMIX_ERR_BAD_PARAM, "topology: switch " + records[i].name + ": " + kids.status().message());
        for (const auto &k : kids.value()) {
            auto it = index.find(k);
            if (it == index.end())
                return Status(PMIX_ERR_BAD_PARAM, "topology: switch " + records[i].name + " lists unknown switch " + k);
            if (it->second == i) return Status(PMIX_ERR_BAD_PARAM, "topology: switch " + k + " is its own child");
            parents[it->second].push_back(i);
        }
    }
    // Ancestors with the cheapest way up (a DAG in general; depth bounded by the switch count).
    t._up.assign(records.size(), {});
    for (size_t s = 0; s < records.size(); ++s) {
        auto &up = t._up[s];
        up[s] = 0;
        std::vector<size_t> frontier{s};
        for (size_t round = 0; !frontier.empty(); ++round) {
            if (round > records.size())
                return Status(PMIX_ERR_BAD_PARAM, "topology: switch loop above " + records[s].name);
            std::vector<size_t> next;
            for (size_t c : frontier)
                for (size_t p : parents[c]) {
                    if (p == s) return Status(PMIX_ERR_BAD_PARAM, "topology: switch loop through " + records[s].name);
                    uint32_t cost = up[c] + t._weight[p];
                    auto it = up.find(p);
                    if (it == up.end() || cost < it->second) {
                        up[p] = cost;
                        next.push_back(p);
                    }
                }
            frontier.swap(next);
        }
    }
    // Slurm reports under an upper switch every node below it: a node hangs off the switches that
    // list it while none of their child switches does.
    std::vector<std::vector<std::string>> node_lists(records.size());
    std::vector<std::set<std::string>> node_sets(records.size());
    for (size_t i = 0; i < records.size(); ++i) {
        if (records[i].nodes.empty()) continue;
        auto nodes = hostlist::expand(records[i].nodes);
        if (!nodes.ok()) return Status(PMIX_ERR_BAD_PARAM, "topology: switch " + records[i].name + ": " + nodes.status().message());
        node_lists[i] = nodes.value();
        node_sets[i].insert(node_lists[i].begin(), node_lists[i].end());
    }
    std::vector<std::vector<size_t>> children(records.size());
    for (size_t c = 0; c < records.size(); ++c)
        for (size_t p : parents[c]) children[p].push_back(c);
    for (size_t i = 0; i < records.size(); ++i) {
        for (const auto &n : node_lists[i]) {
            bool below = false;
            for (size_t c : children[i]) below = below || node_sets[c].count(n) > 0;
            if (below) continue;
            auto &leaves = t._leaves_of_node[n];
            if (leaves.empty()) t._nodes.push_back(n);
            if (std::find(leaves.begin(), leaves.end(), i) == leaves.end()) leaves.push_back(i);
        }
    }
    return t;
}

std::string switch_tree::leaf_of(const std::string &node) const {
    auto it = _leaves_of_node.find(node);
    return it == _leaves_of_node.end() ? std::string() : _switch_names[it->second.front()];
}

uint16_t switch_tree::node_cost(const std::string &a, const std::string &b) const {
    if (a == b) return 0;
    auto ia = _leaves_of_node.find(a), ib = _leaves_of_node.find(b);
    if (ia == _leaves_of_node.end() || ib == _leaves_of_node.end()) return kCostUnreachable;
    uint64_t best = UINT64_MAX;
    for (size_t la : ia->second)
        for (size_t lb : ib->second)
            for (const auto &[anc, up_a] : _up[la]) {
                auto jt = _up[lb].find(anc);
                if (jt == _up[lb].end()) continue;
                uint64_t c = uint64_t(_weight[la]) + up_a + jt->second + _weight[lb];
                best = std::min(best, c);
            }
    if (best == UINT64_MAX) return kCostUnreachable;
    return static_cast<uint16_t>(std::min<uint64_t>(best, kCostMax));
}

cost_matrix build_cost_matrix(const switch_tree &tree,
                              const std::map<std::string, std::vector<nic>> &nics_by_node) {
    cost_matrix m;
    for (const auto &node : tree.nodes()) {
        std::string leaf = tree.leaf_of(node);
        auto it = nics_by_node.find(node);
        if (it == nics_by_node.end() || it->second.empty()) {
            m.vertices.push_back({node, "", "", leaf});
            continue;
        }
        for (const auto &n : it->second) m.vertices.push_back({node, n.name, n.address, leaf});
    }
    size_t n = m.vertices.size();
    m.cost.assign(n * n, 0);
    for (size_t i = 0; i < n; ++i)
        for (size_t j = 0; j < n; ++j)
            m.cost[i * n + j] = tree.node_cost(m.vertices[i].node, m.vertices[j].node);
    return m;
}

}  // namespace pmixcpp::sched
